package metrics

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

// healthState is what /healthz judges; guarded by Metrics.mu.
type healthState struct {
	started time.Time     // when New ran: the start-up grace counts from it
	within  time.Duration // [metrics] healthy_within
	// accounts holds each account's state; order lists the accounts as
	// configured (then any created later).
	accounts map[string]*accountHealth
	order    []string
}

// accountHealth is one account's part of healthState.
type accountHealth struct {
	lastSuccess   time.Time // zero: none known
	lastRunAt     time.Time // zero: none known
	lastRunStatus string
	// lastRunMark is cardsync_last_run_timestamp_seconds's time, which
	// never moves back.
	lastRunMark time.Time
	// walks are the account's last judged walks, newest first (at most
	// load.SummaryWalks).
	walks []load.WalkOutcome
	// unreadSince is when reading the account's facts from the warehouse
	// started failing (zero: the last read worked): the facts above are
	// the last known ones.
	unreadSince time.Time
}

// The states of an account's verdict, and the word that starts the
// /healthz body.
const (
	stateOK        = "ok"
	stateStarting  = "starting"
	stateUnhealthy = "unhealthy"
)

// verdict is how one account stands: its state and a line of detail.
type verdict struct {
	account, state, detail string
}

// look is what an unhealthy body ends with: where to look next, status
// as cl prints it (of the one account unhealthy, when named).
func look(cl worker.CommandLine) string {
	return "see `" + cl.AccountCommand("status") + "` and `journalctl -u cardsync -p err`"
}

// Health judges the daemon at the clock's now, as /healthz answers:
// healthy only while every account is. An account is healthy while its
// last successful run is younger than healthy_within, and, before any
// success, for healthy_within after start-up (so a restarted daemon has
// healthy_within to bring a stale warehouse up to date). The reason is one
// line of text for people, with no secret and no upstream text in it; with
// several accounts it has a part per account, the unhealthy ones first,
// each starting "account NAME STATE:".
func (m *Metrics) Health() (healthy bool, reason string) {
	now := m.opts.Now()
	m.mu.Lock()
	started, within := m.health.started, m.health.within
	order := slices.Clone(m.health.order)
	states := make([]accountHealth, len(order))
	for i, a := range order {
		states[i] = *m.health.accounts[a]
	}
	m.mu.Unlock()

	verdicts := make([]verdict, len(order))
	for i, a := range order {
		verdicts[i] = judge(a, states[i], now, started, within)
	}
	if len(order) == 1 && order[0] == load.DefaultAccount {
		// One account: the line it has always been.
		v := verdicts[0]
		if v.state == stateUnhealthy {
			return false, v.state + ": " + v.detail + "; " + look(m.opts.Commands)
		}
		return true, v.state + ": " + v.detail
	}
	// Unhealthy accounts first, then starting ones, each in the config's order.
	rank := map[string]int{stateUnhealthy: 0, stateStarting: 1, stateOK: 2}
	slices.SortStableFunc(verdicts, func(a, b verdict) int { return rank[a.state] - rank[b.state] })
	overall := verdicts[0].state
	parts := make([]string, len(verdicts))
	var unhealthy []string
	for i, v := range verdicts {
		parts[i] = "account " + v.account + " " + v.state + ": " + v.detail
		if v.state == stateUnhealthy {
			unhealthy = append(unhealthy, v.account)
		}
	}
	reason = overall + ": " + strings.Join(parts, " | ")
	if len(unhealthy) == 0 {
		return true, reason
	}
	cl := m.opts.Commands.ForAccount("")
	if len(unhealthy) == 1 {
		cl = cl.ForAccount(unhealthy[0])
	}
	return false, reason + "; " + look(cl)
}

// judge gives one account's verdict at now.
func judge(account string, h accountHealth, now, started time.Time, within time.Duration) verdict {
	round := func(d time.Duration) string { return d.Round(time.Second).String() }
	last := ""
	if !h.lastRunAt.IsZero() && h.lastRunStatus != "" {
		last = fmt.Sprintf("; the last run ended %s %s ago", h.lastRunStatus, round(now.Sub(h.lastRunAt)))
	}
	v := verdict{account: account}
	up := now.Sub(started)
	switch {
	case !h.lastSuccess.IsZero() && now.Sub(h.lastSuccess) <= within:
		v.state = stateOK
		v.detail = fmt.Sprintf("the last successful run ended %s ago (healthy_within %s)", round(now.Sub(h.lastSuccess)), round(within))
	case !h.lastSuccess.IsZero() && up <= within:
		v.state = stateStarting
		v.detail = fmt.Sprintf("the last successful run ended %s ago; started %s ago, healthy for healthy_within %s after start-up",
			round(now.Sub(h.lastSuccess)), round(up), round(within))
	case !h.lastSuccess.IsZero():
		v.state = stateUnhealthy
		v.detail = fmt.Sprintf("the last successful run ended %s ago, more than healthy_within %s", round(now.Sub(h.lastSuccess)), round(within))
	case up <= within:
		v.state = stateStarting
		v.detail = fmt.Sprintf("no successful run yet; started %s ago, healthy for healthy_within %s after start-up", round(up), round(within))
	default:
		v.state = stateUnhealthy
		v.detail = fmt.Sprintf("no successful run in the %s since start-up (healthy_within %s)", round(up), round(within))
	}
	v.detail += last
	if !h.unreadSince.IsZero() {
		v.detail += fmt.Sprintf("; the warehouse could not be read for %s (these are the last facts read)", round(now.Sub(h.unreadSince)))
	}
	// Two inconsistent walks in a row: pages came back wrong (or the list
	// moved) twice, and cards may be stale however recent the success.
	if w := h.walks; len(w) >= 2 && !w[0].Consistent() && !w[1].Consistent() {
		v.state = stateUnhealthy
		v.detail = fmt.Sprintf("the last two walks were inconsistent (%s; %s); ", walkText(w[0]), walkText(w[1])) + v.detail
	}
	return v
}

// walkText names an inconsistent walk's reason and pages: a bounded reason
// and page numbers, never upstream text.
func walkText(o load.WalkOutcome) string {
	reason := cmp.Or(o.Reason, "reason not recorded")
	if len(o.Pages) == 0 {
		return reason
	}
	return reason + " on " + worker.PagesText(o.Pages)
}

// setUnread records when reading account's facts from the warehouse
// started failing (the zero time: it works again).
func (m *Metrics) setUnread(account string, since time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.accountHealth(account).unreadSince = since
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

// applyLastRun sets account's last run from the warehouse's newest finished
// run (status, ended at t). The caller holds m.mu. The warehouse's facts
// win for /healthz over what this replica saw of its own run (a replica
// whose run was fenced off saw it fail; the warehouse has it abandoned and
// the next holder's run after it); a time in the second this replica saw
// its run end is that run's (the warehouse stamps whole seconds). The
// gauge never moves back.
func (m *Metrics) applyLastRun(account string, h *accountHealth, status string, t time.Time) {
	if !t.Truncate(time.Second).Equal(h.lastRunAt.Truncate(time.Second)) {
		h.lastRunAt = t
	}
	h.lastRunStatus = status
	if t.After(h.lastRunMark.Truncate(time.Second)) {
		h.lastRunMark = t
		m.lastRun.WithLabelValues(account).Set(unixSeconds(t))
	}
}

// inARow counts the inconsistent walks that start walks (newest first).
func inARow(walks []load.WalkOutcome) int {
	n := 0
	for n < len(walks) && !walks[n].Consistent() {
		n++
	}
	return n
}
