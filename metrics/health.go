package metrics

import (
	"fmt"
	"net/http"
	"time"
)

// healthState is what /healthz judges; guarded by Metrics.mu.
type healthState struct {
	started       time.Time     // when New ran: the start-up grace counts from it
	within        time.Duration // [metrics] healthy_within
	lastSuccess   time.Time     // zero: none known
	lastRunAt     time.Time     // zero: none known
	lastRunStatus string
}

// Health judges the daemon at the clock's now, as /healthz answers: healthy
// while the last successful run is younger than healthy_within, and, before
// any success, for healthy_within after start-up (so a restarted daemon has
// healthy_within to bring a stale warehouse up to date). The reason is one
// line of text for people, with no secret and no upstream text in it.
func (m *Metrics) Health() (healthy bool, reason string) {
	now := m.opts.Now()
	m.mu.Lock()
	h := m.health
	m.mu.Unlock()
	round := func(d time.Duration) string { return d.Round(time.Second).String() }
	last := ""
	if !h.lastRunAt.IsZero() && h.lastRunStatus != "" {
		last = fmt.Sprintf("; the last run ended %s %s ago", h.lastRunStatus, round(now.Sub(h.lastRunAt)))
	}
	const look = "; see `cardsync status` and `journalctl -u cardsync -p err`"
	if !h.lastSuccess.IsZero() {
		age := now.Sub(h.lastSuccess)
		if age <= h.within {
			return true, fmt.Sprintf("ok: the last successful run ended %s ago (healthy_within %s)%s", round(age), round(h.within), last)
		}
		if up := now.Sub(h.started); up <= h.within {
			return true, fmt.Sprintf("starting: the last successful run ended %s ago; started %s ago, healthy for healthy_within %s after start-up%s",
				round(age), round(up), round(h.within), last)
		}
		return false, fmt.Sprintf("unhealthy: the last successful run ended %s ago, more than healthy_within %s%s%s", round(age), round(h.within), last, look)
	}
	if up := now.Sub(h.started); up <= h.within {
		return true, fmt.Sprintf("starting: no successful run yet; started %s ago, healthy for healthy_within %s after start-up%s", round(up), round(h.within), last)
	}
	return false, fmt.Sprintf("unhealthy: no successful run in the %s since start-up (healthy_within %s)%s%s", round(now.Sub(h.started)), round(h.within), last, look)
}

// serveHealth answers /healthz: 200 or 503 with Health's reason as text.
func (m *Metrics) serveHealth(w http.ResponseWriter, _ *http.Request) {
	ok, reason := m.Health()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = fmt.Fprintln(w, reason)
}
