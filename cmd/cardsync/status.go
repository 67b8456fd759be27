package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/worker"
)

const statusUsage = `
Usage: cardsync status [flags]

Says whether the sync is healthy and why: the last run that ended succeeded
and the last success is younger than three scheduled runs ([schedule] cron
in the config), and no run is marked running by a process that died. It
then shows the schedule (and whether a run is overdue), the checkpoint, row
counts, the last account snapshot, held removals, rejected items and the
last runs with their full errors. It opens the warehouse read-only, needs
no password and makes no API request. -json prints the same as a JSON
document (schema_version 1; fields described in the README).

With [[accounts]] in the config it shows every account (healthy only if
every account is), or the one -account NAME names.

With [warehouse] url (PostgreSQL) it reads the database (with the
warehouse password, never the API's) and shows who holds each account's
lease; any host with the config can run it.

Exit codes: 0 healthy, 1 unhealthy (the first line says why), 6 the
warehouse cannot be read, 2 a bad flag or config.

Examples:
  cardsync status -config /etc/cardsync/config.toml
  cardsync status -db ./cardsync-demo.db -json | jq .healthy
  cardsync status -config /etc/cardsync/config.toml -account acme
`

// errUnhealthy makes status exit 1; the reason is already printed.
var errUnhealthy = &silentError{code: exitFailure, msg: "unhealthy"}

// silentError carries an exit code for a condition the command has already
// reported on stdout.
type silentError struct {
	code int
	msg  string
}

func (e *silentError) Error() string { return e.msg }

func (m *Main) runStatus(ctx context.Context, args []string) error {
	flags := m.newFlagSet("status", statusUsage)
	var cf commonFlags
	cf.register(flags)
	asJSON := flags.Bool("json", false, "print JSON (schema_version 1)")
	account := flags.String("account", "", "show only this [[accounts]] name (default: every account)")
	s, accounts, err := m.parseAccounts(flags, args, &cf, account, false)
	if err != nil {
		return err
	}
	now := time.Now()
	rep := statusReport{SchemaVersion: StatusSchemaVersion, GeneratedAt: rfc(now), Healthy: true}
	for _, a := range accounts {
		st, err := accountStatusOf(ctx, s, a.Name, now)
		if err != nil {
			if manyAccounts(s) {
				err = fmt.Errorf("account %s: %w", a.Name, err)
			}
			return err
		}
		rep.Accounts = append(rep.Accounts, st)
		rep.Healthy = rep.Healthy && st.Healthy
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printStatus(m.Stdout, rep, manyAccounts(s))
	}
	if !rep.Healthy {
		return errUnhealthy
	}
	return nil
}

// accountStatusOf reads and judges one account of the warehouse.
func accountStatusOf(ctx context.Context, s config.Settings, account string, now time.Time) (accountStatus, error) {
	var wh interface {
		Summary(context.Context) (load.Summary, error)
		Close() error
	}
	var pg *postgres.Warehouse
	var err error
	if s.WarehouseURL != "" {
		pg, err = openPostgres(ctx, s, account)
		wh = pg
	} else {
		wh, err = openForReading(ctx, s.DBPath, account)
	}
	if err != nil {
		return accountStatus{}, err
	}
	defer wh.Close()
	sum, err := wh.Summary(ctx)
	if err != nil {
		return accountStatus{}, err
	}
	sched := inLocation{s.Schedule, s.Location}
	if pg != nil {
		// With PostgreSQL, the account's lease says whether (and where) a
		// run is live: a live lease stands for a live writer (its PID is on
		// another host), so runs marked running are not dead while it
		// lasts.
		lease, err := accountLease(ctx, pg, account)
		if err != nil {
			return accountStatus{}, err
		}
		holder := 0
		if lease != nil && !lease.Expired {
			holder = -1
		}
		st := newAccountStatus(sum, worker.Assess(sum, sched, now, holder, s.RunTimeout), s, 0, now)
		st.Lease = lease
		return st, nil
	}
	// The account's run lock says whether its run is live; a holder whose
	// PID is unknown (-1), or the one account of an older cardsync (its
	// lock is on the whole file), is found by the file's lock.
	holder, _ := sqlite.AccountLockHolder(s.DBPath, account)
	if holder < 0 || holder == 0 && !manyAccounts(s) {
		holder, _ = sqlite.LockHolder(s.DBPath)
	}
	h := worker.Assess(sum, sched, now, holder, s.RunTimeout)
	st := newAccountStatus(sum, h, s, holder, now)
	kept, err := sqlite.ListBeforeRestore(s.DBPath)
	if err != nil {
		return accountStatus{}, err
	}
	for _, k := range kept {
		var at *string
		if !k.ReplacedAt.IsZero() {
			at = strPtr(rfc(k.ReplacedAt))
		}
		st.Warehouse.BeforeRestore = append(st.Warehouse.BeforeRestore, beforeRestoreStatus{Path: k.Path, ReplacedAt: at, Bytes: k.Bytes})
	}
	return st, nil
}

// inLocation reads a cron schedule in the configured time zone, as the
// daemon's scheduler does.
type inLocation struct {
	s   cron.Schedule
	loc *time.Location
}

func (l inLocation) Next(t time.Time) time.Time { return l.s.Next(t.In(l.loc)) }

// statusReport is `status -json`. Every field is always present; times are
// RFC 3339 UTC strings, null for "never". The accounts list has one entry
// per synced account ("default" for the [api] table).
type statusReport struct {
	SchemaVersion int             `json:"schema_version"`
	GeneratedAt   string          `json:"generated_at"`
	Healthy       bool            `json:"healthy"`
	Accounts      []accountStatus `json:"accounts"`
}

// StatusSchemaVersion is the version of `status -json`'s document. Fields
// are only ever added within a version.
const StatusSchemaVersion = 1

type accountStatus struct {
	Account         string           `json:"account"`
	Healthy         bool             `json:"healthy"`
	Problems        []string         `json:"problems"`
	Warnings        []string         `json:"warnings"`
	Warehouse       warehouseStatus  `json:"warehouse"`
	Schedule        scheduleStatus   `json:"schedule"`
	LastSuccess     successStatus    `json:"last_success"`
	FailuresInARow  int              `json:"failures_in_a_row"`
	Writer          writerStatus     `json:"writer"`
	Checkpoint      checkpointStatus `json:"checkpoint"`
	LastWalk        walkStatus       `json:"last_walk"`
	Cards           cardsStatus      `json:"cards"`
	AccountSnapshot snapshotStatus   `json:"account_snapshot"`
	RejectedItems   rejectedStatus   `json:"rejected_items"`
	RemovalsHeld    int64            `json:"removals_held"`
	Runs            []runStatus      `json:"runs"`
	// Lease is the account's lease with a PostgreSQL warehouse: who syncs
	// it (null with SQLite, or before any replica took it).
	Lease *leaseStatus `json:"lease"`
}

type warehouseStatus struct {
	Path          string `json:"path"`
	SchemaVersion int    `json:"schema_version"`
	DatabaseBytes int64  `json:"database_bytes"`
	WALBytes      int64  `json:"wal_bytes"`
	// CardsFlatStale is true while a PostgreSQL warehouse's cards_flat
	// lags behind card_fields (load.Summary.CardsFlatStale).
	CardsFlatStale bool `json:"cards_flat_stale"`
	// BeforeRestore lists the warehouses restore replaced and kept beside
	// this one, newest first (empty with PostgreSQL).
	BeforeRestore []beforeRestoreStatus `json:"before_restore"`
}

// beforeRestoreStatus is one warehouse kept by a restore.
type beforeRestoreStatus struct {
	Path       string  `json:"path"`
	ReplacedAt *string `json:"replaced_at"`
	Bytes      int64   `json:"bytes"`
}

type scheduleStatus struct {
	Cron       string  `json:"cron"`
	Timezone   string  `json:"timezone"`
	NextDueAt  *string `json:"next_due_at"`
	Overdue    bool    `json:"overdue"`
	StaleAfter *string `json:"stale_after"`
}

type successStatus struct {
	RunID      *int64  `json:"run_id"`
	FinishedAt *string `json:"finished_at"`
	AgeSeconds *int64  `json:"age_seconds"`
}

type writerStatus struct {
	// PID holds the warehouse lock (a run in progress), or null.
	PID      *int    `json:"pid"`
	DeadRuns []int64 `json:"dead_runs"`
}

type checkpointStatus struct {
	InProgress bool    `json:"in_progress"`
	NextPage   int     `json:"next_page"`
	TotalPages int     `json:"total_pages"`
	RunID      *int64  `json:"run_id"`
	UpdatedAt  *string `json:"updated_at"`
}

type walkStatus struct {
	Consistent *bool   `json:"consistent"`
	FinishedAt *string `json:"finished_at"`
	// Reason and Pages say why an inconsistent walk was so (sync_walks).
	Reason *string `json:"inconsistent_reason"`
	Pages  []int   `json:"inconsistent_pages"`
	// InconsistentInARow counts the inconsistent walks among the last two.
	InconsistentInARow int `json:"inconsistent_in_a_row"`
}

type cardsStatus struct {
	Total           int64 `json:"total"`
	Current         int64 `json:"current"`
	Removed         int64 `json:"removed"`
	PendingRemovals int64 `json:"pending_removals"`
	Versions        int64 `json:"versions"`
}

type snapshotStatus struct {
	Count      int64   `json:"count"`
	LastAt     *string `json:"last_at"`
	AgeSeconds *int64  `json:"age_seconds"`
}

type rejectedStatus struct {
	Distinct int64 `json:"distinct"`
	LastRun  int64 `json:"last_run"`
}

type runStatus struct {
	RunID        int64   `json:"run_id"`
	Trigger      string  `json:"trigger"`
	Status       string  `json:"status"`
	StartedAt    string  `json:"started_at"`
	FinishedAt   *string `json:"finished_at"`
	HeartbeatAt  string  `json:"heartbeat_at"`
	DurationSecs *int64  `json:"duration_seconds"`
	load.RunCounts
	WalkConsistent *bool   `json:"walk_consistent"`
	Error          *string `json:"error"`
	AccountError   *string `json:"account_error"`
	Version        string  `json:"version"`
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func rfcPtr(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := rfc(*t)
	return &s
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// newAccountStatus is one account's entry of the report.
func newAccountStatus(sum load.Summary, h worker.Health, s config.Settings, holder int, now time.Time) accountStatus {
	a := accountStatus{
		Account:  sum.Account,
		Healthy:  h.Healthy,
		Problems: append([]string{}, h.Problems...),
		Warnings: append([]string{}, h.Warnings...),
		Warehouse: warehouseStatus{Path: sum.Path, SchemaVersion: sum.SchemaVersion,
			DatabaseBytes: sum.DatabaseBytes, WALBytes: sum.WALBytes, CardsFlatStale: sum.CardsFlatStale, BeforeRestore: []beforeRestoreStatus{}},
		Schedule: scheduleStatus{Cron: s.CronSpec, Timezone: s.Location.String(), Overdue: h.Overdue,
			NextDueAt: rfcPtr(&h.NextDue), StaleAfter: rfcPtr(&h.StaleAfter)},
		FailuresInARow: sum.FailuresInARow,
		Writer:         writerStatus{DeadRuns: append([]int64{}, h.DeadRuns...)},
		Checkpoint: checkpointStatus{InProgress: sum.Checkpoint.InProgress, NextPage: sum.Checkpoint.NextPage,
			TotalPages: sum.Checkpoint.TotalPages, UpdatedAt: rfcPtr(&sum.Checkpoint.UpdatedAt)},
		LastWalk: lastWalkStatus(sum),
		Cards: cardsStatus{Total: sum.Cards, Current: sum.CurrentCards, Removed: sum.RemovedCards,
			PendingRemovals: sum.PendingRemovals, Versions: sum.CardVersions},
		AccountSnapshot: snapshotStatus{Count: sum.Snapshots, LastAt: rfcPtr(sum.LastSnapshotAt)},
		RejectedItems:   rejectedStatus{Distinct: sum.RejectedCards, LastRun: sum.LastRunRejected},
		RemovalsHeld:    sum.RemovalsHeld,
		Runs:            []runStatus{},
	}
	if holder > 0 {
		a.Writer.PID = &holder
	}
	if sum.Checkpoint.RunID != 0 {
		id := sum.Checkpoint.RunID
		a.Checkpoint.RunID = &id
	}
	if sum.LastSuccessAt != nil {
		id, age := sum.LastSuccessRun, int64(now.Sub(*sum.LastSuccessAt).Seconds())
		a.LastSuccess = successStatus{RunID: &id, FinishedAt: rfcPtr(sum.LastSuccessAt), AgeSeconds: &age}
	}
	if sum.LastSnapshotAt != nil {
		age := int64(now.Sub(*sum.LastSnapshotAt).Seconds())
		a.AccountSnapshot.AgeSeconds = &age
	}
	for _, r := range sum.Runs {
		rs := runStatus{RunID: r.ID, Trigger: r.Trigger, Status: r.Status, StartedAt: rfc(r.StartedAt),
			FinishedAt: rfcPtr(r.FinishedAt), HeartbeatAt: rfc(r.HeartbeatAt), RunCounts: r.RunCounts,
			WalkConsistent: r.WalkConsistent, Error: strPtr(r.Error), AccountError: strPtr(r.AccountError), Version: r.Version}
		if r.FinishedAt != nil {
			d := int64(r.FinishedAt.Sub(r.StartedAt).Seconds())
			rs.DurationSecs = &d
		}
		for _, dead := range h.DeadRuns {
			if dead == r.ID {
				rs.Status = "dead"
			}
		}
		a.Runs = append(a.Runs, rs)
	}
	return a
}

// statusOneLine is the short form used by check.
func statusOneLine(st load.Summary) string {
	fresh := "no successful run yet"
	if st.LastSuccessAt != nil {
		fresh = "last success " + ago(time.Since(*st.LastSuccessAt))
	}
	return fmt.Sprintf("schema v%d, %d cards (%d current), %d snapshots, %s", st.SchemaVersion, st.Cards, st.CurrentCards, st.Snapshots, fresh)
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1f h ago", d.Hours())
	}
	return fmt.Sprintf("%.1f days ago", d.Hours()/24)
}

// printStatus prints the report for people. The first line says healthy
// or why not; with several accounts (many), each account's part starts
// with its name and the first line is the overall verdict.
func printStatus(w io.Writer, rep statusReport, many bool) {
	if many {
		var bad []string
		for _, a := range rep.Accounts {
			if !a.Healthy {
				bad = append(bad, a.Account)
			}
		}
		if len(bad) == 0 {
			fmt.Fprintf(w, "healthy: %s\n", plural(len(rep.Accounts), "account"))
		} else {
			fmt.Fprintf(w, "UNHEALTHY: account %s\n", strings.Join(bad, ", "))
		}
	}
	for i, a := range rep.Accounts {
		if many {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "\n== account %s ==\n", a.Account)
		}
		if a.Healthy {
			line := "healthy"
			if ls := a.LastSuccess; ls.RunID != nil {
				line += fmt.Sprintf(": last success %s (run %d)", ago(time.Duration(*ls.AgeSeconds)*time.Second), *ls.RunID)
			}
			fmt.Fprintln(w, line)
		} else {
			fmt.Fprintf(w, "UNHEALTHY: %s\n", a.Problems[0])
			for _, p := range a.Problems[1:] {
				fmt.Fprintf(w, "           %s\n", p)
			}
		}
		for _, warn := range a.Warnings {
			fmt.Fprintf(w, "warning    %s\n", warn)
		}
		fmt.Fprintf(w, "\nwarehouse  %s (schema v%d, %s, WAL %s)\n", a.Warehouse.Path, a.Warehouse.SchemaVersion,
			bytesText(a.Warehouse.DatabaseBytes), bytesText(a.Warehouse.WALBytes))
		if a.Warehouse.CardsFlatStale {
			fmt.Fprintln(w, "cards_flat stale: the view lags behind card_fields and could not be re-created (a view built on it blocks the DROP? see the log's warning); cards and checkpoints sync as usual")
		}
		for _, k := range a.Warehouse.BeforeRestore {
			when := "by an older cardsync"
			if k.ReplacedAt != nil {
				when = "at " + *k.ReplacedAt
			}
			fmt.Fprintf(w, "kept       %s (%s, replaced by a restore %s; remove it by hand when not needed)\n", k.Path, bytesText(k.Bytes), when)
		}
		sched := fmt.Sprintf("schedule   %q in %s", a.Schedule.Cron, a.Schedule.Timezone)
		if a.Schedule.NextDueAt != nil {
			sched += "; next run due " + *a.Schedule.NextDueAt
		}
		if a.Schedule.Overdue {
			sched += " (OVERDUE)"
		}
		fmt.Fprintln(w, sched)
		if ls := a.LastSuccess; ls.RunID != nil {
			fmt.Fprintf(w, "freshness  last success %s (run %d, %s)\n", ago(time.Duration(*ls.AgeSeconds)*time.Second), *ls.RunID, *ls.FinishedAt)
		} else {
			fmt.Fprintln(w, "freshness  no successful run yet")
		}
		if a.FailuresInARow > 0 {
			fmt.Fprintf(w, "failures   %d in a row since the last success\n", a.FailuresInARow)
		}
		if a.Writer.PID != nil {
			fmt.Fprintf(w, "writer     process %d holds the warehouse (a run is in progress)\n", *a.Writer.PID)
		}
		switch l := a.Lease; {
		case l == nil:
		case l.Expired:
			fmt.Fprintf(w, "lease      free (last held by %s, fencing token %d, expired %s)\n", l.Holder, l.FencingToken, l.ExpiresAt)
		default:
			fmt.Fprintf(w, "lease      held by %s (fencing token %d) until %s\n", l.Holder, l.FencingToken, l.ExpiresAt)
		}
		switch {
		case a.LastWalk.Consistent == nil:
			fmt.Fprintln(w, "last walk  none finished yet")
		case *a.LastWalk.Consistent:
			fmt.Fprintln(w, "last walk  complete and consistent")
		default:
			fmt.Fprintf(w, "last walk  INCONSISTENT (%s, %d in a row): no removals were marked\n",
				inconsistentText(a.LastWalk), a.LastWalk.InconsistentInARow)
		}
		cp := a.Checkpoint
		if cp.InProgress && cp.RunID != nil {
			fmt.Fprintf(w, "checkpoint walk in progress: next page %d of %d (run %d); the next run resumes there\n", cp.NextPage, cp.TotalPages, *cp.RunID)
		} else {
			fmt.Fprintln(w, "checkpoint no walk in progress; the next run starts at page 1")
		}
		c := a.Cards
		fmt.Fprintf(w, "cards      %d (%d current, %d removed, %d pending removal), %d versions\n", c.Total, c.Current, c.Removed, c.PendingRemovals, c.Versions)
		if c.PendingRemovals > 0 && a.RemovalsHeld == 0 {
			n := int(c.PendingRemovals)
			fmt.Fprintf(w, "pending    %s missing from the last walk; removed if the next walk misses %s too\n", plural(n, "card"), them(n))
		}
		if a.RemovalsHeld > 0 {
			fmt.Fprintf(w, "HELD       mass removal held: the last walk missed %s, none marked removed; if they are gone: cardsync backfill -confirm-removals\n",
				plural(int(a.RemovalsHeld), "live card"))
		}
		if a.RejectedItems.Distinct > 0 {
			fmt.Fprintf(w, "rejected   %d distinct items in rejected_cards (%d in the last run); see SELECT * FROM rejected_cards\n", a.RejectedItems.Distinct, a.RejectedItems.LastRun)
		}
		if a.AccountSnapshot.LastAt != nil {
			fmt.Fprintf(w, "account    %d snapshots, the last %s (%s)\n", a.AccountSnapshot.Count, ago(time.Duration(*a.AccountSnapshot.AgeSeconds)*time.Second), *a.AccountSnapshot.LastAt)
		} else {
			fmt.Fprintln(w, "account    no snapshot yet")
		}
		if len(a.Runs) == 0 {
			continue
		}
		fmt.Fprintln(w, "\nRUN  TRIGGER   STATUS       STARTED               DURATION  PAGES  CARDS  NEW  CHANGED  RETURNED  REMOVED  REJ  HELD  REQ  429")
		for _, r := range a.Runs {
			dur := "-"
			if r.DurationSecs != nil {
				dur = (time.Duration(*r.DurationSecs) * time.Second).String()
			}
			fmt.Fprintf(w, "%-4d %-9s %-12s %-21s %-9s %5d %6d %4d %8d %9d %8d %4d %5d %4d %4d\n", r.RunID, r.Trigger, r.Status,
				r.StartedAt, dur, r.Pages, r.CardsSeen, r.CardsNew, r.CardsChanged, r.CardsReturned, r.CardsRemoved,
				r.CardsRejected, r.RemovalsHeld, r.Requests, r.RateLimited)
		}
		// Errors in full, never cut: the cause is usually at the end.
		for _, r := range a.Runs {
			if r.Error != nil {
				fmt.Fprintf(w, "run %d %s: %s\n", r.RunID, r.Status, strings.ReplaceAll(*r.Error, "\n", " "))
			}
			if r.AccountError != nil {
				fmt.Fprintf(w, "run %d took no account snapshot: %s\n", r.RunID, *r.AccountError)
			}
			if r.SecretsRedacted > 0 {
				fmt.Fprintf(w, "run %d found the API password or a token in %d values or keys of the data; stored as [REDACTED]\n", r.RunID, r.SecretsRedacted)
			}
		}
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// lastWalkStatus is the report's last walk: its outcome and, when
// inconsistent, why, on which pages and how many in a row.
func lastWalkStatus(sum load.Summary) walkStatus {
	ws := walkStatus{Consistent: sum.LastWalkConsistent, FinishedAt: rfcPtr(sum.LastWalkAt), Pages: []int{}}
	for i, o := range sum.RecentWalks {
		if o.Consistent() {
			break
		}
		if i == 0 {
			ws.Reason = strPtr(o.Reason)
			ws.Pages = append(ws.Pages, o.Pages...)
		}
		ws.InconsistentInARow++
	}
	return ws
}

// inconsistentText names an inconsistent walk's reason and pages.
func inconsistentText(ws walkStatus) string {
	reason := "reason not recorded"
	if ws.Reason != nil {
		reason = *ws.Reason
	}
	if len(ws.Pages) == 0 {
		return reason
	}
	return reason + " on " + worker.PagesText(ws.Pages)
}
