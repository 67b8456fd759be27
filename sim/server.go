package sim

import (
	"cmp"
	"html"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is the simulated Card Payment Service. It is an http.Handler and
// safe for concurrent use; its Go API changes the data between requests and
// reads the truth back.
type Server struct {
	opts Options
	now  func() time.Time
	log  *slog.Logger

	mu        sync.Mutex
	cards     []Card // sorted by Number, as served
	nextIndex int    // generator index of the next added card
	lastID    int64
	updates   int64
	account   Account
	tokens    map[string]time.Time // token → expiry
	authLim   limiter
	genLim    limiter
	faults    []*faultState
	faultRNG  *mrand.Rand
	hook      func(page int)
	st        counters
	// accountReads counts successful GET /account, for AccountDrift.
	accountReads int
}

type counters struct {
	requests     map[string]int64
	pages        map[int]int64
	unauthorized int64
	rateLimited  int64
	faults       int64
	tokensIssued int64
}

// New returns a Server with data generated from opts.Seed and opts.Cards.
func New(opts Options) *Server {
	o := opts.withDefaults()
	s := &Server{
		opts:     o,
		now:      o.Now,
		log:      o.Logger,
		tokens:   make(map[string]time.Time),
		authLim:  limiter{limit: o.AuthLimit, window: o.Window, sliding: o.Sliding},
		genLim:   limiter{limit: o.Limit, window: o.Window, sliding: o.Sliding},
		faultRNG: mrand.New(mrand.NewPCG(uint64(o.Seed), 0xFA17)),
		st:       counters{requests: make(map[string]int64), pages: make(map[int]int64)},
	}
	s.account = defaultAccount(o)
	s.lastID = 1000
	s.cards = make([]Card, 0, o.Cards)
	for range o.Cards {
		s.cards = append(s.cards, s.newCardLocked(time.Time{}))
	}
	if o.OddData {
		s.cards = mixOdd(s.cards)
	}
	for _, f := range o.Faults {
		s.InjectFault(f)
	}
	return s
}

func (s *Server) newCardLocked(created time.Time) Card {
	i := s.nextIndex
	s.nextIndex++
	s.lastID += nextGap(s.opts.Seed, i)
	c := generateCard(s.opts.Seed, i, s.lastID, created)
	c.render(s.opts)
	return c
}

// Fixed response bodies.
var (
	bodyUnauthenticated = []byte(`{"message":"Unauthenticated.","status_code":401}`)
	bodyNotFound        = []byte(`{"message":"Not Found","status_code":404}`)
	bodyMethod          = []byte(`{"message":"Method Not Allowed","status_code":405}`)
	bodyRateLimited     = []byte(`{"message":"You have exceeded your rate limit.","status_code":429}`)
	bodyBadJSON         = []byte(`{"message":"Problems parsing JSON"}`)
	bodyNotObject       = []byte(`{"message":"Body should be a JSON object","status_code":400}`)
	bodyHTML502         = `<html>
<head><title>%d %s</title></head>
<body>
<center><h1>%d %s</h1></center>
<hr><center>nginx</center>
</body>
</html>
`
)

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var endpoint, allow string
	switch r.URL.Path {
	case "/auth/access-token":
		endpoint, allow = EndpointToken, http.MethodPost
	case "/account":
		endpoint, allow = EndpointAccount, "GET, HEAD"
	case "/cards":
		endpoint, allow = EndpointCards, "GET, HEAD"
	default:
		s.mu.Lock()
		s.st.requests[EndpointOther]++
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, bodyNotFound)
		return
	}
	page, pageErr := 0, ""
	if endpoint == EndpointCards {
		page, pageErr = parsePage(r.URL.Query().Get("page"))
	}

	now := s.now()
	s.mu.Lock()
	s.st.requests[endpoint]++
	if endpoint == EndpointCards {
		s.st.pages[page]++
	}
	var pre []Fault
	for _, fs := range s.faults {
		if fs.f.Kind.preFault() && fs.take(endpoint, page, s.faultRNG) {
			pre = append(pre, fs.f)
			s.st.faults++
		}
	}
	s.mu.Unlock()

	if s.servePreFaults(w, r, pre, page) {
		return
	}

	if r.Method != http.MethodPost && endpoint == EndpointToken ||
		endpoint != EndpointToken && r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, bodyMethod)
		return
	}

	// Rate limit, then authentication (Dingo's throttle runs before auth).
	s.mu.Lock()
	lim := &s.genLim
	if endpoint == EndpointToken {
		lim = &s.authLim
	}
	ok, retry := lim.allow(now)
	if !ok {
		s.st.rateLimited++
		s.mu.Unlock()
		setRetryAfter(w, retry)
		writeJSON(w, http.StatusTooManyRequests, bodyRateLimited)
		return
	}
	if endpoint != EndpointToken {
		if !s.authorizedLocked(r, now) {
			s.st.unauthorized++
			s.mu.Unlock()
			writeJSON(w, http.StatusUnauthorized, bodyUnauthenticated)
			return
		}
	}
	s.mu.Unlock()

	switch endpoint {
	case EndpointToken:
		s.serveToken(w, r, now)
	case EndpointAccount:
		s.serveAccount(w, r)
	case EndpointCards:
		if pageErr != "" {
			writeJSON(w, http.StatusUnprocessableEntity, validationBody([][2]string{{"page", pageErr}}, s.opts.PHPEscaping))
			return
		}
		s.serveCards(w, r, page)
	}
}

// servePreFaults applies the faults that act before a request is judged
// (latency, a status, a reset, ...) and reports whether one of them
// answered it or the request ended.
func (s *Server) servePreFaults(w http.ResponseWriter, r *http.Request, pre []Fault, page int) bool {
	for _, f := range pre {
		s.log.Debug("sim fault", "fault", f.String(), "path", r.URL.Path, "page", page)
		switch f.Kind {
		case FaultLatency:
			if !wait(r, f.Latency) {
				return true
			}
		case FaultStatus:
			st := cmp.Or(f.Status, http.StatusServiceUnavailable)
			setRetryAfter(w, f.RetryAfter)
			writeJSON(w, st, []byte(`{"message":"`+http.StatusText(st)+`","status_code":`+strconv.Itoa(st)+`}`))
			return true
		case FaultHTML:
			st := cmp.Or(f.Status, http.StatusBadGateway)
			setRetryAfter(w, f.RetryAfter)
			h := w.Header()
			h.Set("Content-Type", "text/html")
			w.WriteHeader(st)
			_, _ = w.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(bodyHTML502, "%d", strconv.Itoa(st)), "%s", http.StatusText(st))))
			return true
		case FaultReset:
			dropConn(w, true)
			return true
		case FaultRateLimit:
			s.mu.Lock()
			s.st.rateLimited++
			s.mu.Unlock()
			setRetryAfter(w, f.RetryAfter)
			writeJSON(w, http.StatusTooManyRequests, bodyRateLimited)
			return true
		case FaultRevoke:
			s.RevokeTokens()
		case FaultNoContent:
			w.Header().Set("Cache-Control", "no-cache, private")
			w.WriteHeader(http.StatusNoContent)
			return true
		case FaultRedirect:
			loc := cmp.Or(f.URL, "/login")
			w.Header().Set("Location", loc)
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			w.WriteHeader(http.StatusFound)
			_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;url='` + html.EscapeString(loc) + `'" /><title>Redirecting</title></head></html>`))
			return true
		}
	}
	return false
}

// serveAccount answers GET /account.
func (s *Server) serveAccount(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.accountReads++; s.opts.AccountDrift && s.accountReads > 1 {
		driftAccount(&s.account, s.opts.Seed, s.accountReads)
	}
	bf := s.bodyFaultsLocked(EndpointAccount, 0)
	a := s.account
	if bf.secrets {
		a = secretAccount(a, s.opts.Password, bearer(r))
	}
	body := appendAccountJSON(make([]byte, 0, 512), a, s.opts.PHPEscaping)
	if bf.secrets {
		body = secretAccountNotes(body, bearer(r), s.opts.PHPEscaping)
	}
	s.mu.Unlock()
	s.writeOK(w, r, http.StatusOK, body, bf)
}

func (s *Server) authorizedLocked(r *http.Request, now time.Time) bool {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	exp, ok := s.tokens[strings.TrimSpace(tok)]
	return ok && now.Before(exp)
}

// parsePage returns the requested page, or a validation message.
func parsePage(v string) (int, string) {
	if v == "" {
		return 1, ""
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, "The page must be an integer."
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, "The page must be an integer."
	}
	if n < 1 {
		return 0, "The page must be at least 1."
	}
	return n, ""
}
