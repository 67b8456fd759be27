package sim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
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

// Cards returns copies of all cards in the order they are served.
func (s *Server) Cards() []Card {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Card, len(s.cards))
	for i, c := range s.cards {
		out[i] = c.clone()
	}
	return out
}

// Account returns a copy of the account as it is served.
func (s *Server) Account() Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.account.clone()
}

// SetAccount replaces the account. Balance and AvailableRechargeBalance are
// served verbatim as JSON numbers.
func (s *Server) SetAccount(a Account) {
	a = a.clone()
	s.mu.Lock()
	s.account = a
	s.mu.Unlock()
}

// AddCard appends a new card (the next generated one, with a higher id and
// created_at from Now) and returns a copy.
func (s *Server) AddCard() Card {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.newCardLocked(s.now())
	s.cards = append(s.cards, c)
	return c.clone()
}

// RemoveCard removes the card with this id and reports whether it existed.
func (s *Server) RemoveCard(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.indexLocked(id)
	if i < 0 {
		return false
	}
	s.cards = slices.Delete(s.cards, i, i+1)
	return true
}

// UpdateCard changes the card's balance (+12.34), cycles its status
// (active → frozen → active, others → active) and sets updated_at to Now
// (at least one second after the previous value). It reports whether the
// card exists.
func (s *Server) UpdateCard(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.indexLocked(id)
	if i < 0 {
		return false
	}
	c := s.cards[i].clone()
	s.updates++
	if c.Odd != "" {
		c.oddRev++
		c.raw = []byte(c.oddJSON(c.oddRev))
		s.cards[i] = c
		return true
	}
	c.balance += 1234
	c.Balance = formatMinor(c.balance)
	if c.Status == "active" {
		c.Status = "frozen"
	} else {
		c.Status = "active"
	}
	t := s.now().UTC().Truncate(time.Second)
	if !t.After(c.UpdatedAt) {
		t = c.UpdatedAt.Add(time.Second)
	}
	c.UpdatedAt = t
	c.render(s.opts)
	s.cards[i] = c
	return true
}

func (s *Server) indexLocked(id string) int {
	if id == "" {
		return -1 // odd items without a usable id cannot be addressed
	}
	for i := range s.cards {
		if s.cards[i].ID == id {
			return i
		}
	}
	return -1
}

// OnPageServed sets a hook that runs after the body of /cards page N has
// been built and before it is sent, outside the server lock: changes it
// makes (AddCard, RemoveCard, ...) are invisible in page N and visible to
// every request the client sends after receiving page N. nil removes it.
func (s *Server) OnPageServed(fn func(page int)) {
	s.mu.Lock()
	s.hook = fn
	s.mu.Unlock()
}

// RevokeTokens invalidates every issued token.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	clear(s.tokens)
	s.mu.Unlock()
}

// InjectFault adds a fault. Faults apply in the order they were added.
func (s *Server) InjectFault(f Fault) {
	f.Pages = slices.Clone(f.Pages)
	s.mu.Lock()
	s.faults = append(s.faults, &faultState{f: f})
	s.mu.Unlock()
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// LimiterStats describe one rate limiter.
type LimiterStats struct {
	// Limit and Window are the configured limit.
	Limit  int
	Window time.Duration
	// Accepted and Rejected count requests the limiter let through or
	// answered with 429.
	Accepted, Rejected int64
	// MaxInWindow is the largest number of accepted requests in any
	// (sliding) window of length Window; it is at most Limit with a sliding
	// limiter, and with a fixed one unless the client bursts at window edges.
	MaxInWindow int
	// MaxSeenInWindow is the same over every request that reached the
	// limiter, accepted or not: how hard the client pushed.
	MaxSeenInWindow int
}

// Stats are counters for assertions.
type Stats struct {
	// Requests counts every request by endpoint: "token", "account",
	// "cards", "other" (unknown paths).
	Requests map[string]int64
	// PageRequests counts /cards requests by requested page number (0 for
	// an invalid page).
	PageRequests map[int]int64
	// TokenRequests counts requests to the token endpoint.
	TokenRequests int64
	// TokensIssued counts successful token responses.
	TokensIssued int64
	// Unauthorized counts 401 replies.
	Unauthorized int64
	// RateLimited counts every 429 reply, from the limiters and from faults.
	RateLimited int64
	// Faults counts injected faults that were applied.
	Faults int64
	// Auth and General describe the token-endpoint and general limiters.
	Auth, General LimiterStats
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		Requests:      make(map[string]int64, len(s.st.requests)),
		PageRequests:  make(map[int]int64, len(s.st.pages)),
		TokenRequests: s.st.requests[EndpointToken],
		TokensIssued:  s.st.tokensIssued,
		Unauthorized:  s.st.unauthorized,
		RateLimited:   s.st.rateLimited,
		Faults:        s.st.faults,
		Auth:          s.authLim.stats(),
		General:       s.genLim.stats(),
	}
	for k, v := range s.st.requests {
		st.Requests[k] = v
	}
	for k, v := range s.st.pages {
		st.PageRequests[k] = v
	}
	return st
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

	for _, f := range pre {
		s.log.Debug("sim fault", "fault", f.String(), "path", r.URL.Path, "page", page)
		switch f.Kind {
		case FaultLatency:
			if !wait(r, f.Latency) {
				return
			}
		case FaultStatus:
			st := f.Status
			if st == 0 {
				st = http.StatusServiceUnavailable
			}
			setRetryAfter(w, f.RetryAfter)
			writeJSON(w, st, []byte(`{"message":"`+http.StatusText(st)+`","status_code":`+strconv.Itoa(st)+`}`))
			return
		case FaultHTML:
			st := f.Status
			if st == 0 {
				st = http.StatusBadGateway
			}
			setRetryAfter(w, f.RetryAfter)
			h := w.Header()
			h.Set("Content-Type", "text/html")
			w.WriteHeader(st)
			_, _ = w.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(bodyHTML502, "%d", strconv.Itoa(st)), "%s", http.StatusText(st))))
			return
		case FaultReset:
			dropConn(w, true)
			return
		case FaultRateLimit:
			s.mu.Lock()
			s.st.rateLimited++
			s.mu.Unlock()
			setRetryAfter(w, f.RetryAfter)
			writeJSON(w, http.StatusTooManyRequests, bodyRateLimited)
			return
		case FaultRevoke:
			s.RevokeTokens()
		}
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
		s.mu.Lock()
		if s.accountReads++; s.opts.AccountDrift && s.accountReads > 1 {
			driftAccount(&s.account, s.opts.Seed, s.accountReads)
		}
		body := appendAccountJSON(make([]byte, 0, 512), s.account, s.opts.PHPEscaping)
		bf := s.bodyFaultsLocked(endpoint, 0)
		s.mu.Unlock()
		s.writeOK(w, r, http.StatusOK, body, bf)
	case EndpointCards:
		if pageErr != "" {
			writeJSON(w, http.StatusUnprocessableEntity, validationBody([][2]string{{"page", pageErr}}, s.opts.PHPEscaping))
			return
		}
		s.serveCards(w, r, page)
	}
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

type bodyFaults struct {
	truncate  bool
	trickle   *Fault
	oversize  int
	foreign   string
	loopTo    int
	linksArr  bool
	totalDiff int
	any       bool
}

func (s *Server) bodyFaultsLocked(endpoint string, page int) bodyFaults {
	var bf bodyFaults
	for _, fs := range s.faults {
		if fs.f.Kind.preFault() {
			continue
		}
		if endpoint != EndpointCards {
			switch fs.f.Kind {
			case FaultForeignNext, FaultLoopNext, FaultLinksArray, FaultTotalChange:
				continue
			}
		}
		if !fs.take(endpoint, page, s.faultRNG) {
			continue
		}
		s.st.faults++
		bf.any = true
		f := fs.f
		switch f.Kind {
		case FaultTruncate:
			bf.truncate = true
		case FaultTrickle:
			bf.trickle = &f
		case FaultOversize:
			bf.oversize = f.PadBytes
			if bf.oversize == 0 {
				bf.oversize = 8 << 20
			}
		case FaultForeignNext:
			bf.foreign = f.URL
		case FaultLoopNext:
			bf.loopTo = max(f.LoopTo, 1)
		case FaultLinksArray:
			bf.linksArr = true
		case FaultTotalChange:
			bf.totalDiff = f.TotalDelta
			if bf.totalDiff == 0 {
				bf.totalDiff = 7
			}
		}
	}
	return bf
}

func (s *Server) serveCards(w http.ResponseWriter, r *http.Request, page int) {
	ps := s.opts.PageSize
	s.mu.Lock()
	total := len(s.cards)
	lo := total
	if page-1 <= total/ps { // avoids overflow on huge page numbers
		lo = min((page-1)*ps, total)
	}
	hi := min(lo+ps, total)
	items := make([][]byte, 0, hi-lo)
	size := 0
	for _, c := range s.cards[lo:hi] {
		items = append(items, c.raw) // raw slices are never modified in place
		size += len(c.raw) + 1
	}
	bf := s.bodyFaultsLocked(EndpointCards, page)
	hook := s.hook
	s.mu.Unlock()

	servedTotal := total + bf.totalDiff
	if servedTotal < 0 {
		servedTotal = 0
	}
	totalPages := max((servedTotal+ps-1)/ps, 1)
	php := s.opts.PHPEscaping

	b := make([]byte, 0, size+256)
	b = append(b, `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"meta":{"pagination":{"total":`...)
	b = strconv.AppendInt(b, int64(servedTotal), 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(len(items)), 10)
	b = append(b, `,"per_page":`...)
	b = strconv.AppendInt(b, int64(ps), 10)
	b = append(b, `,"current_page":`...)
	b = strconv.AppendInt(b, int64(page), 10)
	b = append(b, `,"total_pages":`...)
	b = strconv.AppendInt(b, int64(totalPages), 10)
	b = append(b, `,"links":`...)
	prev := s.opts.PreviousLinks && page > 1
	next := page < totalPages
	switch {
	case !prev && !next && bf.linksArr:
		b = append(b, "[]"...)
	case !prev && !next:
		b = append(b, "{}"...)
	default:
		b = append(b, '{')
		if prev {
			b = append(b, `"previous":`...)
			b = appendString(b, s.pageURL(r, "", page-1), php)
		}
		if next {
			if prev {
				b = append(b, ',')
			}
			target := page + 1
			if bf.loopTo > 0 {
				target = bf.loopTo
			}
			b = append(b, `"next":`...)
			b = appendString(b, s.pageURL(r, bf.foreign, target), php)
		}
		b = append(b, '}')
	}
	b = append(b, "}}}"...)

	if hook != nil {
		hook(page)
	}
	s.writeOK(w, r, http.StatusOK, b, bf)
}

// appendPadding adds ,"padding":"xxx..." of n bytes before the final brace.
func appendPadding(b []byte, n int) []byte {
	b = append(b, `,"padding":"`...)
	for range n {
		b = append(b, 'x')
	}
	return append(b, '"')
}

// pageURL is the absolute URL of the same path and query with page set.
func (s *Server) pageURL(r *http.Request, base string, page int) string {
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(page))
	path := r.URL.Path
	if base == "" {
		base = s.opts.BaseURL
	} else if u, err := url.Parse(base); err == nil && u.Path != "" && u.Path != "/" {
		path = u.Path
		base = strings.TrimSuffix(u.Scheme+"://"+u.Host, "/")
	} else {
		base = strings.TrimRight(base, "/")
	}
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + path + "?" + q.Encode()
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request, now time.Time) {
	email, password, errBody := s.credentials(r)
	if errBody != nil {
		writeJSON(w, errBody.status, errBody.body)
		return
	}
	var missing [][2]string
	if strings.TrimSpace(email) == "" {
		missing = append(missing, [2]string{"email", "The email field is required."})
	}
	if strings.TrimSpace(password) == "" {
		missing = append(missing, [2]string{"password", "The password field is required."})
	}
	if len(missing) > 0 {
		writeJSON(w, http.StatusUnprocessableEntity, validationBody(missing, s.opts.PHPEscaping))
		return
	}
	if email != s.opts.Email || password != s.opts.Password {
		s.mu.Lock()
		s.st.unauthorized++
		s.mu.Unlock()
		writeJSON(w, http.StatusUnauthorized, bodyUnauthenticated)
		return
	}
	exp := now.Add(s.opts.TokenTTL)
	tok := newToken(now, exp)
	s.mu.Lock()
	for t, e := range s.tokens { // keep the map small
		if !now.Before(e) {
			delete(s.tokens, t)
		}
	}
	s.tokens[tok] = exp
	s.st.tokensIssued++
	bf := s.bodyFaultsLocked(EndpointToken, 0)
	s.mu.Unlock()

	ttl := strconv.FormatInt(int64(s.opts.TokenTTL/time.Second), 10)
	var body string
	switch s.opts.TokenShape {
	case TokenShapeToken:
		body = `{"token":"` + tok + `"}`
	case TokenShapeDataAccessToken:
		body = `{"data":{"access_token":"` + tok + `","token_type":"bearer","expires_in":` + ttl + `}}`
	case TokenShapeDataToken:
		body = `{"data":{"token":"` + tok + `"}}`
	default:
		body = `{"access_token":"` + tok + `","token_type":"bearer","expires_in":` + ttl + `}`
	}
	s.writeOK(w, r, s.opts.TokenStatus, []byte(body), bf)
}

type errReply struct {
	status int
	body   []byte
}

// credentials reads email and password from a form or JSON body.
func (s *Server) credentials(r *http.Request) (email, password string, e *errReply) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
		if ct == "multipart/form-data" {
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				return "", "", &errReply{http.StatusBadRequest, []byte(`{"message":"Problems parsing form data","status_code":400}`)}
			}
		} else if err := r.ParseForm(); err != nil {
			return "", "", &errReply{http.StatusBadRequest, []byte(`{"message":"Problems parsing form data","status_code":400}`)}
		}
		return r.PostForm.Get("email"), r.PostForm.Get("password"), nil
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return "", "", &errReply{http.StatusBadRequest, bodyBadJSON}
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return "", "", nil // no input: every field is missing
	}
	if !json.Valid(raw) {
		return "", "", &errReply{http.StatusBadRequest, bodyBadJSON}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", "", &errReply{http.StatusBadRequest, bodyNotObject}
	}
	field := func(name string) (string, *errReply) {
		v, ok := obj[name]
		if !ok || string(v) == "null" {
			return "", nil
		}
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return "", &errReply{http.StatusBadRequest, []byte(`{"message":"Invalid type for field ` + name + `: expected a string","errors":{"` + name + `":["The ` + name + ` must be a string."]},"status_code":400}`)}
		}
		return str, nil
	}
	if email, e = field("email"); e != nil {
		return "", "", e
	}
	if password, e = field("password"); e != nil {
		return "", "", e
	}
	return email, password, nil
}

// validationBody renders Laravel's 422 body for the given field messages.
func validationBody(fields [][2]string, php bool) []byte {
	b := []byte(`{"message":"The given data was invalid.","errors":{`)
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f[0], php)
		b = append(b, ":["...)
		b = appendString(b, f[1], php)
		b = append(b, ']')
	}
	return append(b, `},"status_code":422}`...)
}

// newToken returns a random JWT-shaped token whose exp claim is exp.
func newToken(now, exp time.Time) string {
	var rnd [32]byte
	_, _ = rand.Read(rnd[:])
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"typ":"JWT","alg":"HS256"}`))
	claims := enc.EncodeToString([]byte(`{"sub":"1","iat":` + strconv.FormatInt(now.Unix(), 10) +
		`,"exp":` + strconv.FormatInt(exp.Unix(), 10) + `,"jti":"` + hex.EncodeToString(rnd[:8]) + `"}`))
	return head + "." + claims + "." + enc.EncodeToString(rnd[8:])
}

func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(d), 10))
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeOK writes a successful JSON reply, applying body faults.
func (s *Server) writeOK(w http.ResponseWriter, r *http.Request, status int, body []byte, bf bodyFaults) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	if bf.oversize > 0 && len(body) > 0 && body[len(body)-1] == '}' {
		padded := make([]byte, 0, len(body)+bf.oversize+16)
		padded = appendPadding(append(padded, body[:len(body)-1]...), bf.oversize)
		body = append(padded, '}')
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if bf.any {
		s.log.Debug("sim fault", "path", r.URL.Path, "truncate", bf.truncate, "trickle", bf.trickle != nil,
			"oversize", bf.oversize, "foreign", bf.foreign, "loop_to", bf.loopTo, "links_array", bf.linksArr, "total_delta", bf.totalDiff)
	}
	switch {
	case bf.truncate:
		w.WriteHeader(status)
		_, _ = w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		dropConn(w, false)
	case bf.trickle != nil:
		chunk, delay := bf.trickle.Chunk, bf.trickle.Latency
		if chunk <= 0 {
			chunk = 64
		}
		if delay <= 0 {
			delay = 50 * time.Millisecond
		}
		w.WriteHeader(status)
		rc := http.NewResponseController(w)
		for len(body) > 0 {
			n := min(chunk, len(body))
			if _, err := w.Write(body[:n]); err != nil {
				return
			}
			body = body[n:]
			if rc.Flush() != nil {
				return
			}
			if len(body) > 0 && !wait(r, delay) {
				return
			}
		}
	default:
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// wait sleeps for d unless the client goes away first; it reports whether
// the full wait elapsed.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// dropConn closes the connection under the handler: with reset, abruptly
// with a TCP RST (SO_LINGER 0); otherwise with a FIN after what was written.
func dropConn(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
