package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// tokenFields is the detection order of the token in the token response.
var tokenFields = []string{"access_token", "token", "accessToken", "data.access_token", "data.token"}

const (
	defaultTokenTTL = 24 * time.Hour
	refreshMargin   = 5 * time.Minute
	// MinTokenTTL is the shortest token lifetime cardsync believes: a
	// shorter expires_in (0.000001, a clock skewed expires_at) is raised to
	// it, with a warning once, so a bogus lifetime cannot make every request
	// fetch a token and slow the walk to the token endpoint's 10 a minute.
	// A token that really expires sooner is refreshed on its first 401.
	MinTokenTTL = time.Minute
)

// authState caches the bearer token. sem (capacity 1) serialises refreshes
// and, unlike a mutex, lets a waiting caller give up when its ctx ends; a
// caller that waited for someone else's refresh uses its result.
type authState struct {
	sem       chan struct{}
	warnedTTL bool // a short lifetime was logged (once per client)
	tok       Secret
	refreshAt time.Time // on Config.Now's clock (monotonic when time.Now)
	expiresAt time.Time
}

func newAuthState() *authState { return &authState{sem: make(chan struct{}, 1)} }

// Authenticate makes sure a valid token is in hand: it sends a token request
// only when there is none or it is within the refresh margin of expiry.
// Wrong credentials give an error wrapping ErrUnauthenticated.
func (c *Client) Authenticate(ctx context.Context) error {
	_, err := c.bearer(ctx, "")
	return err
}

// bearer returns the cached token, refreshing it when it is missing, near
// expiry, or equal to stale (a token the server just rejected).
func (c *Client) bearer(ctx context.Context, stale Secret) (Secret, error) {
	a := c.auth
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-a.sem }()
	if a.tok != "" && a.tok != stale && c.clk.Now().Before(a.refreshAt) {
		return a.tok, nil
	}
	reason := "no token"
	switch {
	case a.tok != "" && a.tok == stale:
		reason = "token rejected"
	case a.tok != "":
		reason = "token near expiry"
	}
	tok, ttl, err := c.fetchToken(ctx)
	if err != nil {
		return "", err
	}
	if ttl < MinTokenTTL {
		if !a.warnedTTL {
			a.warnedTTL = true
			c.log.Warn("token lifetime too short; using the minimum instead (a token that expires sooner is refreshed on its first 401)",
				"sent_ttl", ttl, "ttl", MinTokenTTL)
		}
		ttl = MinTokenTTL
	}
	now := c.clk.Now()
	margin := refreshMargin
	if ttl/5 < margin {
		margin = ttl / 5
	}
	a.tok, a.expiresAt, a.refreshAt = tok, now.Add(ttl), now.Add(ttl-margin)
	c.cfg.Secrets.Add(tok.Reveal())
	c.log.Info("token obtained", "reason", reason, "ttl", ttl)
	return tok, nil
}

// fetchToken posts the credentials and finds the token and its lifetime.
func (c *Client) fetchToken(ctx context.Context) (Secret, time.Duration, error) {
	body, err := json.Marshal(map[string]string{"email": c.cfg.Email, "password": c.cfg.Password.Reveal()})
	if err != nil {
		return "", 0, fmt.Errorf("authenticate: %w", err)
	}
	var (
		tok Secret
		ttl time.Duration
	)
	_, err = c.do(ctx, &request{
		op:       "authenticate",
		endpoint: EndpointToken,

		method: http.MethodPost,
		url:    c.endpoint("auth/access-token", nil),
		body:   body,
		pacer:  c.authP,
		decode: func(status int, b []byte) error {
			if status != http.StatusOK && status != http.StatusCreated {
				return &ProtocolError{Reason: "token endpoint answered " + strconv.Itoa(status) + ", want 200 or 201"}
			}
			var err error
			tok, ttl, err = c.parseToken(b)
			return err
		},
	})
	return tok, ttl, err
}

// parseToken finds the token (Config.TokenField or the detection order) and
// its lifetime (expires_in, expires_at, else 24h) next to it or at the top.
// Errors name keys, never values.
func (c *Client) parseToken(b []byte) (Secret, time.Duration, error) {
	b, spans, err := topMembers(b, "token response")
	if err != nil {
		return "", 0, err
	}
	top := rawMembers(b, spans)
	paths := tokenFields
	if c.cfg.TokenField != "" {
		paths = []string{c.cfg.TokenField}
	}
	for _, p := range paths {
		raw, parent, ok := lookup(top, p)
		if !ok || string(raw) == "null" {
			continue
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return "", 0, protoErr(p, "token is "+jsonKind(raw)+", not a string", nil)
		}
		if err := checkToken(s); err != nil {
			return "", 0, protoErr(p, "", err)
		}
		ttl := c.tokenTTL(parent)
		if ttl == 0 && parent != nil {
			ttl = c.tokenTTL(top)
		}
		if ttl == 0 {
			ttl = defaultTokenTTL
		}
		return Secret(s), ttl, nil
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, c.upstreamText(k, 40))
	}
	sort.Strings(keys)
	if len(keys) > 20 {
		keys = append(keys[:20], "…")
	}
	return "", 0, protoErr("", fmt.Sprintf("no token at %s; top-level keys: [%s]", strings.Join(paths, ", "), strings.Join(keys, " ")), nil)
}

// lookup follows a dotted path; it returns the value and the object that
// holds it.
func lookup(top map[string]json.RawMessage, path string) (json.RawMessage, map[string]json.RawMessage, bool) {
	obj := top
	parts := strings.Split(path, ".")
	for i, p := range parts {
		raw, ok := obj[p]
		if !ok {
			return nil, nil, false
		}
		if i == len(parts)-1 {
			return bytes.TrimSpace(raw), obj, true
		}
		raw = bytes.TrimSpace(raw)
		members, err := objectMembers(raw, span{0, len(raw)})
		if err != nil {
			return nil, nil, false
		}
		obj = rawMembers(raw, lastWins(members))
	}
	return nil, nil, false
}

// rawMembers turns the spans of an object's members into their values.
func rawMembers(b []byte, spans map[string]span) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(spans))
	for k, sp := range spans {
		m[k] = b[sp.start:sp.end]
	}
	return m
}

// checkToken keeps header injection and absurd values out.
func checkToken(s string) error {
	if s == "" {
		return fmt.Errorf("token is empty")
	}
	if len(s) > 16<<10 {
		return fmt.Errorf("token is longer than 16 KiB")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return fmt.Errorf("token has a character outside printable ASCII at byte %d", i)
		}
	}
	return nil
}

// tokenTTL reads expires_in (seconds: number or numeric string) or
// expires_at (RFC 3339, "+0000" offsets, or "YYYY-MM-DD HH:MM:SS" UTC).
// Zero means not given or unusable.
func (c *Client) tokenTTL(obj map[string]json.RawMessage) time.Duration {
	if raw, ok := obj["expires_in"]; ok {
		s := strings.Trim(string(bytes.TrimSpace(raw)), `"`)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n <= 366*24*3600 {
			return time.Duration(n) * time.Second
		}
		if d, err := time.ParseDuration(s + "s"); err == nil && d > 0 && d <= 366*24*time.Hour {
			return d
		}
	}
	if raw, ok := obj["expires_at"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05"} {
				if t, err := time.Parse(layout, s); err == nil {
					if d := t.Sub(c.clk.Now()); d > 0 {
						return d
					}
					return 0
				}
			}
		}
	}
	return 0
}
