package metrics

import (
	"github.com/cardsync/cardsync/extract"
	"github.com/prometheus/client_golang/prometheus"
)

// ClientObserver returns the extract.Observer of account's API client (one
// of Options.Accounts; each account has a client and a token of its own):
// it counts requests, retries, 429s and token requests.
func (m *Metrics) ClientObserver(account string) extract.Observer {
	m.ensure(account)
	return clientObserver{
		requests:     m.requests.MustCurryWith(prometheus.Labels{"account": account}),
		retries:      m.retries.WithLabelValues(account),
		rateLimited:  m.rateLimited.WithLabelValues(account),
		authRequests: m.authRequests.WithLabelValues(account),
	}
}

// clientObserver holds one account's series.
type clientObserver struct {
	requests                           *prometheus.CounterVec // endpoint, code
	retries, rateLimited, authRequests prometheus.Counter
}

func (o clientObserver) Request(endpoint string, status int) {
	o.requests.WithLabelValues(endpoint, extract.StatusClass(status)).Inc()
}

func (o clientObserver) Retry(string) { o.retries.Inc() }

func (o clientObserver) RateLimited(string) { o.rateLimited.Inc() }

func (o clientObserver) TokenRequest() { o.authRequests.Inc() }
