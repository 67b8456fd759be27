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
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/worker"
)

const statusUsage = `
Usage: cardsync status [flags]

Says whether the sync is healthy and why: the last run that ended succeeded
and the last success is younger than three scheduled runs ([schedule] cron
in the config), and no run is marked running by a process that died. With
no config file, no CARDSYNC_SCHEDULE_CRON and no run by serve (a demo's
warehouse) there is no schedule: none is shown and freshness is not judged.
It then shows the schedule (and whether a run is overdue), the checkpoint, row
counts, the last account snapshot, held removals, rejected items and the
last runs with their full errors. It opens the warehouse read-only, needs
no password and makes no API request. -json prints the same as a JSON
document (schema_version 1; fields described in docs/operating.md).

With [[accounts]] in the config it shows every account (healthy only if
every account is), or the one -account NAME names.

With [warehouse] url (PostgreSQL) it reads the database (with the
warehouse password, never the API's) and shows who holds each account's
lease; any host with the config can run it.

Exit codes: 0 healthy, 1 unhealthy (the first line says why), 6 the
warehouse cannot be read, 2 a bad flag or config, 130 interrupted.

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
	many := s.NamedAccounts()
	var sts []worker.AccountStatus
	for _, a := range accounts {
		st, err := accountStatusOf(ctx, s, a.Name, now, accountCommandLine(s, m.commandLine(cf), a.Name))
		if err != nil {
			err = fixer{command: "status", s: s, account: a, cl: m.commandLine(cf)}.withFix(err)
			if many {
				err = fmt.Errorf("account %s: %w", a.Name, err)
			}
			return err
		}
		sts = append(sts, st)
	}
	rep := worker.NewStatusReport(now, sts)
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printStatus(m.Stdout, rep, many, m.commandLine(cf))
	}
	if !rep.Healthy {
		return errUnhealthy
	}
	return nil
}

// accountStatusOf opens account of the warehouse read-only and returns its
// judged status.
func accountStatusOf(ctx context.Context, s config.Settings, account string, now time.Time, cl worker.CommandLine) (worker.AccountStatus, error) {
	facts, err := statusFacts(ctx, s, account)
	if err != nil {
		return worker.AccountStatus{}, err
	}
	set := worker.StatusSettings{RunTimeout: s.RunTimeout, Commands: cl}
	if onSchedule(s, facts.Summary.Runs) {
		set.Cron, set.Timezone, set.Schedule = s.CronSpec, s.Location.String(), inLocation{s.Schedule, s.Location}
	}
	return worker.NewAccountStatus(facts, set, now), nil
}

// onSchedule reports whether the account is synced on the settings'
// schedule, so that status judges it by that schedule: the configuration
// names one (config.Settings.ScheduleSet), or serve ran one of its recent
// runs (serve with no [schedule] cron runs on the default). A warehouse of
// demo runs, or one named by -db alone and synced by hand, has none:
// status then shows no schedule and judges no freshness or overdue run.
func onSchedule(s config.Settings, runs []load.Run) bool {
	if s.ScheduleSet {
		return true
	}
	for _, r := range runs {
		if r.Trigger == worker.TriggerSchedule {
			return true
		}
	}
	return false
}

// statusFacts reads what status judges of account, from the PostgreSQL
// database or the SQLite file of the settings.
func statusFacts(ctx context.Context, s config.Settings, account string) (worker.StatusFacts, error) {
	wh, err := openForReading(ctx, s, account)
	if err != nil {
		return worker.StatusFacts{}, err
	}
	defer wh.Close()
	facts, err := worker.ReadStatusFacts(ctx, wh, account, !s.NamedAccounts())
	if err != nil {
		return facts, err
	}
	facts.OutdatedBackups = outdatedBackups(ctx, s)
	return facts, nil
}

// outdatedBackups lists the backups of the settings' SQLite warehouse
// that predate the current data rules (none with PostgreSQL). A backup
// that cannot be read is listed too: what it holds is not known.
func outdatedBackups(ctx context.Context, s config.Settings) []string {
	if s.WarehouseURL != "" {
		return nil
	}
	dir, _ := backupTarget(s, "", 0)
	if dir == "" {
		dir = dialect.DefaultBackupDir(s.DBPath)
	}
	files, err := dialect.ListBackups(dir, s.DBPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		if v, err := dialect.BackupRulesVersion(ctx, f); err != nil || v < redact.RulesVersion {
			out = append(out, f)
		}
	}
	return out
}

// inLocation reads a cron schedule in the configured time zone, as the
// daemon's scheduler does.
type inLocation struct {
	s   cron.Schedule
	loc *time.Location
}

func (l inLocation) Next(t time.Time) time.Time { return l.s.Next(t.In(l.loc)) }

// statusOneLine is the short form used by check.
func statusOneLine(st load.Summary) string {
	fresh := "no successful run yet"
	if st.LastSuccessAt != nil {
		fresh = "last success " + ago(time.Since(*st.LastSuccessAt))
	}
	return fmt.Sprintf("schema v%d, %s (%d current), %s, %s", st.SchemaVersion, english.Count(st.Cards, "card"), st.CurrentCards,
		english.Count(st.Snapshots, "snapshot"), fresh)
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
func printStatus(w io.Writer, rep worker.StatusReport, many bool, cl worker.CommandLine) {
	if many {
		printVerdict(w, rep)
	}
	for i, a := range rep.Accounts {
		if many {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "\n== account %s ==\n", a.Account)
		}
		if many {
			printAccount(w, a, cl.ForAccount(a.Account))
		} else {
			printAccount(w, a, cl)
		}
	}
}

// printVerdict is the first line with several accounts: healthy, or which
// accounts are not.
func printVerdict(w io.Writer, rep worker.StatusReport) {
	var bad []string
	for _, a := range rep.Accounts {
		if !a.Healthy {
			bad = append(bad, a.Account)
		}
	}
	if len(bad) == 0 {
		fmt.Fprintf(w, "healthy: %s\n", english.Count(len(rep.Accounts), "account"))
	} else {
		fmt.Fprintf(w, "UNHEALTHY: account %s\n", strings.Join(bad, ", "))
	}
}

// printAccount prints one account's part of the report.
func printAccount(w io.Writer, a worker.AccountStatus, cl worker.CommandLine) {
	printHealth(w, a)
	printWarehouse(w, a.Warehouse)
	printSchedule(w, a)
	printWriter(w, a)
	printWalk(w, a)
	printCards(w, a, cl)
	printRuns(w, a.Runs)
}

// printHealth says healthy (with the last success) or why not, then the
// warnings.
func printHealth(w io.Writer, a worker.AccountStatus) {
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
}

// printWarehouse names the warehouse, its schema version and sizes (the
// WAL only where there is one), a stale cards_flat and the warehouses
// restore kept.
func printWarehouse(w io.Writer, wh worker.WarehouseStatus) {
	size := bytesText(wh.DatabaseBytes)
	if wh.WAL {
		size += ", WAL " + bytesText(wh.WALBytes)
	}
	if wh.Schema != "" {
		fmt.Fprintf(w, "\nwarehouse  %s in schema %s (schema v%d, %s)\n", wh.Path, wh.Schema, wh.SchemaVersion, size)
	} else {
		fmt.Fprintf(w, "\nwarehouse  %s (schema v%d, %s)\n", wh.Path, wh.SchemaVersion, size)
	}
	if wh.RulesVersion > 0 {
		fmt.Fprintf(w, "rules      data rules version %d (this cardsync's: %d)\n", wh.RulesVersion, wh.CurrentRulesVersion)
	}
	for _, warn := range wh.RulesWarnings {
		fmt.Fprintf(w, "warning    %s\n", warn)
	}
	if wh.CardsFlatStale {
		fmt.Fprintln(w, "cards_flat stale: the view lags behind card_fields and could not be re-created (a view built on it blocks the DROP? see the log's warning); cards and checkpoints sync as usual")
	}
	for _, k := range wh.BeforeRestore {
		when := "by an older cardsync"
		if k.ReplacedAt != nil {
			when = "at " + *k.ReplacedAt
		}
		fmt.Fprintf(w, "kept       %s (%s, replaced by a restore %s; remove it by hand when not needed)\n", k.Path, bytesText(k.Bytes), when)
	}
}

// printSchedule prints the schedule, freshness and failures in a row.
func printSchedule(w io.Writer, a worker.AccountStatus) {
	sched := fmt.Sprintf("schedule   %q in %s", a.Schedule.Cron, a.Schedule.Timezone)
	if a.Schedule.Cron == "" {
		sched = "schedule   none (no configuration names one and serve has not run here; freshness is not judged)"
	}
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
}

// printWriter says which process (SQLite) or replica (the PostgreSQL
// lease) syncs the account.
func printWriter(w io.Writer, a worker.AccountStatus) {
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
}

// printWalk prints the last walk and the checkpoint.
func printWalk(w io.Writer, a worker.AccountStatus) {
	switch {
	case a.LastWalk.Consistent == nil:
		fmt.Fprintln(w, "last walk  none finished yet")
	case *a.LastWalk.Consistent:
		fmt.Fprintln(w, "last walk  complete and consistent")
	default:
		fmt.Fprintf(w, "last walk  INCONSISTENT (%s, %d in a row): no removals were marked\n",
			a.LastWalk.InconsistentText(), a.LastWalk.InconsistentInARow)
	}
	cp := a.Checkpoint
	if cp.InProgress && cp.RunID != nil {
		fmt.Fprintf(w, "checkpoint walk in progress: next page %d of %d (run %d); the next run resumes there\n", cp.NextPage, cp.TotalPages, *cp.RunID)
	} else {
		fmt.Fprintln(w, "checkpoint no walk in progress; the next run starts at page 1")
	}
}

// printCards prints the card counts, pending and held removals, rejected
// items and the account snapshots.
func printCards(w io.Writer, a worker.AccountStatus, cl worker.CommandLine) {
	c := a.Cards
	fmt.Fprintf(w, "cards      %d (%d current, %d removed, %d pending removal), %s\n", c.Total, c.Current, c.Removed, c.PendingRemovals, english.Count(c.Versions, "version"))
	if c.PendingRemovals > 0 && a.RemovalsHeld == 0 {
		n := c.PendingRemovals
		fmt.Fprintf(w, "pending    %s missing from the last walk; removed if the next walk misses %s too\n", english.Count(n, "card"), english.Them(n))
	}
	if a.RemovalsHeld > 0 {
		fmt.Fprintf(w, "HELD       mass removal held: the last walk missed %s, none marked removed; if %s gone: %s\n",
			english.Count(a.RemovalsHeld, "live card"), english.TheyAre(a.RemovalsHeld), cl.AccountCommand("backfill", "-confirm-removals"))
	}
	if a.RejectedItems.Distinct > 0 {
		fmt.Fprintf(w, "rejected   %s in rejected_cards (%d in the last run); see SELECT * FROM rejected_cards\n",
			english.Count(a.RejectedItems.Distinct, "distinct item"), a.RejectedItems.LastRun)
	}
	if a.AccountSnapshot.LastAt != nil {
		fmt.Fprintf(w, "account    %s, the last %s (%s)\n", english.Count(a.AccountSnapshot.Count, "snapshot"), ago(time.Duration(*a.AccountSnapshot.AgeSeconds)*time.Second), *a.AccountSnapshot.LastAt)
	} else {
		fmt.Fprintln(w, "account    no snapshot yet")
	}
}

// printRuns prints the table of the last runs, then their errors in full,
// never cut: the cause is usually at the end.
func printRuns(w io.Writer, runs []worker.RunStatus) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRUN  TRIGGER   STATUS       STARTED               DURATION  PAGES  CARDS  NEW  CHANGED  RETURNED  REMOVED  REJ  HELD  REQ  429")
	for _, r := range runs {
		dur := "-"
		switch {
		case r.DurationMS != nil:
			dur = (time.Duration(*r.DurationMS) * time.Millisecond).String()
		case r.DurationSecs != nil:
			dur = (time.Duration(*r.DurationSecs) * time.Second).String()
		}
		fmt.Fprintf(w, "%-4d %-9s %-12s %-21s %-9s %5d %6d %4d %8d %9d %8d %4d %5d %4d %4d\n", r.RunID, r.Trigger, r.Status,
			r.StartedAt, dur, r.Pages, r.CardsSeen, r.CardsNew, r.CardsChanged, r.CardsReturned, r.CardsRemoved,
			r.CardsRejected, r.RemovalsHeld, r.Requests, r.RateLimited)
	}
	for _, r := range runs {
		if r.Error != nil {
			fmt.Fprintf(w, "run %d %s: %s\n", r.RunID, r.Status, strings.ReplaceAll(*r.Error, "\n", " "))
		}
		if r.AccountError != nil {
			fmt.Fprintf(w, "run %d took no account snapshot: %s\n", r.RunID, *r.AccountError)
		}
		if r.SecretsRedacted > 0 {
			fmt.Fprintf(w, "run %d found the API password or a token in %s of the data; stored as [REDACTED]\n", r.RunID,
				english.Count(r.SecretsRedacted, "value or key"))
		}
		if r.CardNumbersMasked > 0 || r.CodesDropped > 0 || r.TrackDataDropped > 0 {
			fmt.Fprintf(w, "run %d masked %s, dropped %s and %s\n", r.RunID, english.Count(r.CardNumbersMasked, "card number"),
				english.Count(r.CodesDropped, "security code or PIN"), english.Count(r.TrackDataDropped, "track or EMV card tag"))
		}
		if r.FieldsDropped > 0 {
			fmt.Fprintf(w, "run %d left out %s [cards] keep_fields does not name\n", r.RunID, english.Count(r.FieldsDropped, "card field"))
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
