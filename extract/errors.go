package extract

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cardsync/cardsync/internal/english"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrUnauthenticated: the credentials were rejected at the token endpoint,
	// or a data request was answered 401 again after one token refresh.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrUnavailable is wrapped by every error caused by upstream trouble:
	// network errors, timeouts, 5xx, 429 and truncated bodies, in particular
	// by the *WaitError that ends the retries.
	ErrUnavailable = errors.New("service unavailable")
	// ErrForeignOrigin: links.next or a redirect names another origin (or
	// carries userinfo). Nothing was sent there.
	ErrForeignOrigin = errors.New("link to a foreign origin refused")
	// ErrPaginationLoop: the walk ran past total_pages plus a slack (cards
	// added faster than they can be read, or a server that never ends).
	ErrPaginationLoop = errors.New("pagination loop")
	// ErrRateLimited is wrapped, with ErrUnavailable, by the error of a 429
	// answer.
	ErrRateLimited = errors.New("rate limited")
	// ErrNoContent is wrapped by the *ProtocolError of a 204 No Content
	// answer where a JSON body was expected. It is not retried.
	ErrNoContent = errors.New("204 No Content")
	// ErrRedirect is wrapped by every refused redirect (a *RedirectError):
	// cardsync follows none, to its own origin or elsewhere.
	ErrRedirect = errors.New("redirect refused")
)

// RedirectError is a 3xx answer. cardsync follows no redirect: the token
// must go only to the configured base URL, and a redirect on the same
// origin usually means a wrong api.base_url (a missing path prefix, http
// behind https) or a login page. It is ErrRedirect, and ErrForeignOrigin
// too when Foreign.
type RedirectError struct {
	// StatusCode is the 3xx status.
	StatusCode int
	// Location is where the server pointed (scrubbed and bounded: the path
	// on the same origin, the URL without userinfo elsewhere; empty when
	// there was no usable Location).
	Location string
	// Foreign is true when Location is on another origin or carries
	// userinfo.
	Foreign bool
}

func (e *RedirectError) Error() string {
	var where string
	switch {
	case e.Location == "":
		where = "without a usable Location"
	case e.Foreign:
		where = "to another origin, " + e.Location
	default:
		where = "to " + e.Location + " on the same origin (check api.base_url)"
	}
	return fmt.Sprintf("redirect refused: status %d %s; cardsync follows no redirect", e.StatusCode, where)
}

// Is reports ErrRedirect, and ErrForeignOrigin for a foreign redirect.
func (e *RedirectError) Is(target error) bool {
	return target == ErrRedirect || e.Foreign && target == ErrForeignOrigin
}

// rateLimitedError is a 429 answer: "rate limited (429): <message>". It is
// both ErrRateLimited and ErrUnavailable (exit code 5 when it outlasts
// api.max_wait).
type rateLimitedError struct{ err error }

func rateLimited(err error) error { return &rateLimitedError{err: err} }

func (e *rateLimitedError) Error() string { return "rate limited (429): " + e.err.Error() }

func (e *rateLimitedError) Unwrap() error { return e.err }

func (e *rateLimitedError) Is(target error) bool {
	return target == ErrRateLimited || target == ErrUnavailable
}

// StatusError is a permanent (never retried) HTTP error answer: a 4xx other
// than 401 at a data endpoint, 408 and 429, or a refused redirect.
type StatusError struct {
	StatusCode int
	// Method and URL are the request's (the URL without its query), when
	// known: a 404 there most likely means a wrong api.base_url path.
	Method, URL string
	// Message is the server's "message" (bounded, may be empty).
	Message string
	// Fields holds the per-field messages of a 422 ("errors").
	Fields map[string][]string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d", e.StatusCode)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(strings.Join(e.Fields[k], " "))
		}
		b.WriteString(")")
	}
	return b.String()
}

// WaitError ends the retries of one request when the next wait would take
// the time spent on it (pacing, backoff and attempts) past Config.MaxWait,
// or past the deadline of the request's context when that comes first
// (Deadline). Last is the error of the last attempt; it wraps
// ErrUnavailable when the cause was upstream trouble.
type WaitError struct {
	// Op names the request, e.g. "fetch cards page 7".
	Op string
	// Waited is the time already spent on this request.
	Waited time.Duration
	// Next is the wait that was refused (the backoff or what the server asked).
	Next time.Duration
	// Attempts is the number of attempts made.
	Attempts int
	// Last is the error of the last attempt.
	Last error
	// Unreachable is the configured base URL when no attempt got a
	// connection to it (refused, unknown host, no route): most likely a
	// wrong api.base_url or a network that does not reach it.
	Unreachable string
	// Deadline: the bound was the context's deadline (the command's own
	// limit, such as check's -timeout), which came before api.max_wait.
	Deadline bool
}

func (e *WaitError) Error() string {
	bound := "api.max_wait"
	if e.Deadline {
		bound = "the command's deadline"
	}
	if e.Unreachable != "" {
		return fmt.Sprintf("%s: cannot reach api.base_url %s (check the URL and the network): gave up after %s in %s (the next wait, %s, would pass %s): %v",
			e.Op, e.Unreachable, english.Count(e.Attempts, "attempt"), e.Waited.Round(time.Millisecond), e.Next.Round(time.Millisecond), bound, e.Last)
	}
	return fmt.Sprintf("%s: gave up after %s in %s (the next wait, %s, would pass %s): %v",
		e.Op, english.Count(e.Attempts, "attempt"), e.Waited.Round(time.Millisecond), e.Next.Round(time.Millisecond), bound, e.Last)
}

// Unwrap returns Last.
func (e *WaitError) Unwrap() error { return e.Last }

// ProtocolError is a response that breaks the protocol: not JSON, malformed
// or truncated JSON, trailing data, an oversized body, a missing or
// ill-typed field, an invalid amount. Field names the JSON path when known.
type ProtocolError struct {
	// StatusCode of the response (0 when not from a response).
	StatusCode int
	// ContentType of the response, when relevant.
	ContentType string
	// Field is the JSON path of the bad value, e.g. "account.balance".
	Field string
	// Reason says what is wrong.
	Reason string
	// Transient is true when a retry may help (HTML 5xx page, truncation).
	Transient bool
	// Truncated is true for a body that ended early.
	Truncated bool
	// Err is the underlying error, if any (e.g. wrapping money.ErrInvalid).
	Err error
}

func (e *ProtocolError) Error() string {
	var b strings.Builder
	b.WriteString("protocol error")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (status %d)", e.StatusCode)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		if e.Reason != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *ProtocolError) Unwrap() error { return e.Err }

func protoErr(field, reason string, err error) *ProtocolError {
	return &ProtocolError{Field: field, Reason: reason, Err: err}
}

// scrubbedError is an error whose text quotes upstream data: its text is
// scrubbed (the password, tokens, card numbers), its cause kept for
// errors.Is and errors.As.
type scrubbedError struct {
	text string
	err  error
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrubbed returns err with its text passed through scrub.
func scrubbed(err error, scrub func(string) string) error {
	return &scrubbedError{text: scrub(err.Error()), err: err}
}

// unavailable marks err as upstream trouble.
func unavailable(err error) error { return fmt.Errorf("%w: %w", ErrUnavailable, err) }
