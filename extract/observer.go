package extract

import "net/http"

// Endpoints a request is observed under: the three resources of the API.
// They are the only values Observer.Request receives as endpoint, so a
// metric labelled with them stays bounded.
const (
	EndpointToken   = "token"
	EndpointAccount = "account"
	EndpointCards   = "cards"
)

// Observer is told about every exchange the client has with the API, at the
// moments Stats counts them. The client calls it synchronously from the
// goroutine making the request, so an implementation must be quick and safe
// for concurrent use. It receives no URL, body, header or card id: only what
// a bounded metric label may carry.
type Observer interface {
	// Request is called after each attempt with its endpoint (EndpointToken,
	// EndpointAccount or EndpointCards) and the HTTP status of the answer, or
	// 0 when no answer came (a network error, a timeout, a cancelled
	// attempt).
	Request(endpoint string, status int)
	// Retry is called before the client waits to repeat an attempt on
	// endpoint (a 429, a 5xx, a network error, a truncated body).
	Retry(endpoint string)
	// RateLimited is called for every 429 answer that is retried or gives up
	// the request.
	RateLimited(endpoint string)
	// TokenRequest is called for every token request sent.
	TokenRequest()
}

// StatusClass names the class of an HTTP status for a metric label:
// "2xx", "3xx", "4xx", "5xx", with "401" and "429" apart because each means
// something of its own here (credentials, pacing), and "network" for 0 (no
// answer). Any other value is "other".
func StatusClass(status int) string {
	switch {
	case status == 0:
		return "network"
	case status == http.StatusUnauthorized:
		return "401"
	case status == http.StatusTooManyRequests:
		return "429"
	case status >= 200 && status < 300:
		return "2xx"
	case status >= 300 && status < 400:
		return "3xx"
	case status >= 400 && status < 500:
		return "4xx"
	case status >= 500 && status < 600:
		return "5xx"
	}
	return "other"
}

// StatusClasses lists every value StatusClass returns, for metrics that
// create each label value at start-up.
func StatusClasses() []string {
	return []string{"2xx", "3xx", "401", "4xx", "429", "5xx", "network", "other"}
}

// Endpoints lists every endpoint Observer.Request receives.
func Endpoints() []string { return []string{EndpointToken, EndpointAccount, EndpointCards} }

// noObserver is the Observer of a client configured without one.
type noObserver struct{}

func (noObserver) Request(string, int) {}
func (noObserver) Retry(string)        {}
func (noObserver) RateLimited(string)  {}
func (noObserver) TokenRequest()       {}
