package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// One attempt of a request: the response read within its deadline, error bodies, retry hints.

// attempt sends r once and reads the whole body within the attempt's deadline.
func (c *Client) attempt(ctx context.Context, r *request, tok Secret) outcome {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := c.newRequest(actx, r, tok)
	if err != nil {
		return outcome{err: err}
	}
	if c.gate != nil {
		if err := c.gate(); err != nil {
			return outcome{err: err}
		}
	}
	c.countRequest(r)
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.cfg.Observer.Request(r.endpoint, 0)
		if ctx.Err() != nil {
			return outcome{err: ctx.Err()}
		}
		// An HTTPS request answered in plain HTTP (api.base_url names an
		// HTTP port) gets the same answer every time: no retry.
		return outcome{err: unavailable(networkError(err, actx, c.cfg.Timeout)), retry: !errors.Is(err, http.ErrSchemeMismatch)}
	}
	defer resp.Body.Close()
	c.cfg.Observer.Request(r.endpoint, resp.StatusCode)
	raw, err := readLimited(resp.Body, c.cfg.MaxBodyBytes)
	o := outcome{status: resp.StatusCode, bytes: len(raw), duration: time.Since(start)}
	if err != nil {
		return c.readFailed(ctx, actx, resp, err, o)
	}
	return c.answered(r, resp, raw, tok, o)
}

// newRequest builds the HTTP request for r, bound to the attempt's context,
// with its headers and, when r needs one, the bearer token.
func (c *Client) newRequest(actx context.Context, r *request, tok Secret) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(actx, r.method, r.url, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token {
		req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	}
	return req, nil
}

// countRequest counts a request about to be sent, and a token request apart.
func (c *Client) countRequest(r *request) {
	c.stats.requests.Add(1)
	if r.pacer == c.authP {
		c.stats.authRequests.Add(1)
		c.cfg.Observer.TokenRequest()
	}
}

// readFailed completes o for a body that could not be read whole: the
// caller's context ended, the body was over the limit, cut short, or the
// connection failed.
func (c *Client) readFailed(ctx, actx context.Context, resp *http.Response, err error, o outcome) outcome {
	var pe *ProtocolError
	switch {
	case ctx.Err() != nil:
		o.err = ctx.Err()
	case errors.As(err, &pe):
		pe.StatusCode = resp.StatusCode
		o.err = pe
		// A huge error page from a proxy in trouble is still trouble
		// upstream: retry it like any other 5xx or 429.
		if s := resp.StatusCode; s >= 500 || s == http.StatusTooManyRequests || s == http.StatusRequestTimeout {
			pe.Transient = true
			o.err, o.retry = unavailable(pe), true
			if o.rateLimited = s == http.StatusTooManyRequests; o.rateLimited {
				o.err = rateLimited(pe)
			}
			o.hint = c.retryHint(resp.Header, s == http.StatusTooManyRequests)
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The connection closed before the body announced was all
		// there: a truncated body, retried.
		o.err, o.retry = unavailable(&ProtocolError{StatusCode: resp.StatusCode, Reason: "truncated body",
			Transient: true, Truncated: true, Err: err}), true
	default:
		o.err, o.retry = unavailable(fmt.Errorf("read body (status %d): %w", resp.StatusCode, networkError(err, actx, c.cfg.Timeout))), true
	}
	return o
}

// answered completes o for a body read whole, by the response's status.
func (c *Client) answered(r *request, resp *http.Response, raw []byte, tok Secret, o outcome) outcome {
	ct := resp.Header.Get("Content-Type")
	switch s := resp.StatusCode; {
	case s == http.StatusNoContent:
		// A 204 is a deliberate answer, not a fault in transit: retrying
		// it gets the same nothing.
		o.err = &ProtocolError{StatusCode: s, Reason: "the server answered with no body where JSON was expected", Err: ErrNoContent}
	case s >= 200 && s < 300:
		o = c.decoded(r, s, ct, raw, o)
	case s == http.StatusUnauthorized:
		o.err, o.unauthorized = c.errorBody(s, ct, raw, tok), true
	case s == http.StatusUnprocessableEntity && r.endpoint == EndpointToken:
		// Laravel answers a sign-in it refuses by validation (a wrong
		// password as "These credentials do not match our records.", an
		// empty email) with 422: the credentials, not the request, are
		// at fault.
		o.err, o.unauthorized = c.errorBody(s, ct, raw, tok), true
	case s == http.StatusTooManyRequests:
		o.err, o.retry, o.rateLimited = rateLimited(c.errorBody(s, ct, raw, tok)), true, true
		o.hint = c.retryHint(resp.Header, true)
	case s == http.StatusRequestTimeout || s >= 500:
		if len(raw) > 0 && !isJSON(raw) {
			o.err = unavailable(&ProtocolError{StatusCode: s, ContentType: c.upstreamText(ct, 64), Reason: "error page is not JSON", Transient: true})
		} else {
			o.err = unavailable(c.errorBody(s, ct, raw, tok))
		}
		o.retry = true
		o.hint = c.retryHint(resp.Header, false)
	case s >= 300 && s < 400:
		o.err = c.redirected(resp, s)
	default:
		se := c.errorBody(s, ct, raw, tok)
		se.Method, se.URL = r.method, withoutQuery(r.url)
		o.err = se
	}
	return o
}

// withoutQuery is raw without its query and fragment.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// decoded decodes a 2xx body into r and completes o with the error, if
// any. JSON is read whatever the Content-Type says (PHP code that echoes
// json_encode output goes out as text/html or text/plain); only a body that
// does not parse is refused, naming the type.
func (c *Client) decoded(r *request, s int, ct string, raw []byte, o outcome) outcome {
	err := r.decode(s, raw)
	if err == nil {
		return o
	}
	var pe *ProtocolError
	if errors.As(err, &pe) {
		pe.StatusCode = s
		if !isJSONMediaType(ct) && !isJSON(raw) {
			// Not a JSON document at all: not retried, whatever
			// the decoder thought of where it ended.
			label := c.upstreamText(ct, 64)
			if label == "" {
				label = "none"
			}
			o.err = &ProtocolError{StatusCode: s, ContentType: label, Reason: "response is not JSON (Content-Type " + label + ")", Err: err}
			return o
		}
		if pe.Transient {
			o.err, o.retry = unavailable(err), true
			return o
		}
	}
	o.err = err
	return o
}

// redirected is the error for a 3xx: where it points, the path only when
// it stays on the API's origin.
func (c *Client) redirected(resp *http.Response, s int) *RedirectError {
	re := &RedirectError{StatusCode: s}
	if loc, err := resp.Location(); err == nil {
		re.Foreign = !sameOrigin(loc, c.base) || loc.User != nil
		re.Location = c.upstreamText(loc.Redacted(), 120)
		if !re.Foreign {
			re.Location = c.upstreamText(loc.Path, 120)
		}
	}
	return re
}

// errorBody decodes an error body. Its text is scrubbed of the password,
// the tokens and any Bearer value before it is cut or cleaned: a server
// that echoes the request must not carry a secret, or a piece of one, into
// errors, logs or sync_runs.error.
func (c *Client) errorBody(status int, ct string, raw []byte, _ Secret) *StatusError {
	return decodeErrorBody(status, ct, raw, c.scrub)
}

// upstreamText makes text the server wrote fit for an error: scrubbed first,
// then control characters replaced and the length bounded.
func (c *Client) upstreamText(s string, n int) string { return truncate(sanitize(c.scrub(s)), n) }

// isJSON reports whether body (a leading BOM skipped) is one JSON value, at
// any depth.
func isJSON(body []byte) bool {
	_, err := scanDocument(trimBOM(body))
	return err == nil
}

// networkError turns a transport error into a short, secret-free message.
func networkError(err error, actx context.Context, timeout time.Duration) error {
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("attempt timed out after %s: %w", timeout, err)
	}
	return err
}

// readLimited reads at most limit bytes; a longer body is a *ProtocolError
// naming the limit.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &ProtocolError{Reason: fmt.Sprintf("response body exceeds the limit of %d bytes", limit)}
	}
	return b, nil
}

// retryHint reads Retry-After (delta-seconds or HTTP-date) and, on a 429,
// X-RateLimit-Reset (unix seconds).
func (c *Client) retryHint(h http.Header, rateLimited bool) time.Duration {
	now := c.clk.Now()
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			return clampHint(time.Duration(n) * time.Second)
		}
		if t, err := http.ParseTime(v); err == nil {
			return clampHint(t.Sub(now))
		}
	}
	if rateLimited {
		if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				return clampHint(time.Unix(n, 0).Sub(now))
			}
		}
	}
	return 0
}

func clampHint(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	if d > 24*time.Hour {
		return 24 * time.Hour
	}
	return d
}
