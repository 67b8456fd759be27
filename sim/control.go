package sim

import (
	"slices"
	"time"
)

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
	return s.withCard(id, func(i int) { s.cards = slices.Delete(s.cards, i, i+1) })
}

// RestoreCard serves c again, as it was when Cards returned it (a card
// RemoveCard took away that comes back unchanged), before the first card
// with a higher Number. It reports false, changing nothing, when a card
// with c's id is served already.
func (s *Server) RestoreCard(c Card) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.indexLocked(c.ID) >= 0 {
		return false
	}
	i := slices.IndexFunc(s.cards, func(o Card) bool { return o.Number > c.Number })
	if i < 0 {
		i = len(s.cards)
	}
	s.cards = slices.Insert(s.cards, i, c.clone())
	return true
}

// UpdateCard changes the card's balance (+12.34), cycles its status
// (active → frozen → active, others → active) and sets updated_at to Now
// (at least one second after the previous value). It reports whether the
// card exists.
func (s *Server) UpdateCard(id string) bool {
	return s.withCard(id, func(i int) {
		c := s.cards[i].clone()
		s.updates++
		if c.Odd != "" {
			c.oddRev++
			c.raw = []byte(c.oddJSON(c.oddRev))
			s.cards[i] = c
			return
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
	})
}

// withCard calls fn with the index of the card with this id, under the
// lock, and reports whether the card exists.
func (s *Server) withCard(id string, fn func(i int)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.indexLocked(id)
	if i < 0 {
		return false
	}
	fn(i)
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
