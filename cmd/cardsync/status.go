package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

const statusUsage = `
Usage: cardsync status [flags]

Shows the warehouse's recent runs, the card checkpoint, row counts (with
the cards missing from the last walk, which are marked removed only if the
next walk misses them too), freshness ("last success 12m ago"), failures in
a row and the consistency of the last walk. It opens the warehouse read-only, needs no password and
makes no API request. -json prints the same for scripts and monitoring.

Examples:
  cardsync status -config /etc/cardsync/config.toml
  cardsync status -db ./cardsync-demo.db -json | jq .last_success_at
`

func (m *Main) runStatus(ctx context.Context, args []string) error {
	flags := m.newFlagSet("status", statusUsage)
	var cf commonFlags
	cf.register(flags)
	asJSON := flags.Bool("json", false, "print JSON")
	if err := parse(flags, args); err != nil {
		return err
	}
	s, err := m.settings(cf, false)
	if err != nil {
		return err
	}
	if _, err := os.Stat(s.DBPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s does not exist (no sync has run yet)", worker.ErrWarehouse, s.DBPath)
	}
	wh, err := load.OpenReadOnly(ctx, s.DBPath)
	if err != nil {
		return fmt.Errorf("%w: open %s read-only: %w", worker.ErrWarehouse, s.DBPath, err)
	}
	defer wh.Close()
	st, err := wh.Status(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", worker.ErrWarehouse, err)
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	printStatus(m.Stdout, st, time.Now())
	return nil
}

// statusOneLine is the short form used by check.
func statusOneLine(st load.Status) string {
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

func printStatus(w io.Writer, st load.Status, now time.Time) {
	fmt.Fprintf(w, "warehouse  %s (schema v%d, %s, WAL %s)\n", st.Path, st.SchemaVersion, bytesText(st.DatabaseBytes), bytesText(st.WALBytes))
	if st.LastSuccessAt != nil {
		fmt.Fprintf(w, "freshness  last success %s (run %d, %s)\n", ago(now.Sub(*st.LastSuccessAt)), st.LastSuccessRun, st.LastSuccessAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "freshness  no successful run yet")
	}
	if st.FailuresInARow > 0 {
		fmt.Fprintf(w, "failures   %d in a row since the last success\n", st.FailuresInARow)
	}
	switch {
	case st.LastWalkConsistent == nil:
		fmt.Fprintln(w, "last walk  none finished yet")
	case *st.LastWalkConsistent:
		fmt.Fprintln(w, "last walk  complete and consistent")
	default:
		fmt.Fprintln(w, "last walk  INCONSISTENT: cards changed upstream during the walk; no removals were marked")
	}
	cp := st.Checkpoint
	if cp.InProgress {
		fmt.Fprintf(w, "checkpoint walk in progress: next page %d of %d (run %d); the next run resumes there\n", cp.NextPage, cp.TotalPages, cp.RunID)
	} else {
		fmt.Fprintln(w, "checkpoint no walk in progress; the next run starts at page 1")
	}
	fmt.Fprintf(w, "cards      %d (%d current, %d removed, %d pending), %d versions, %d account snapshots\n",
		st.Cards, st.CurrentCards, st.RemovedCards, st.PendingRemovals, st.CardVersions, st.Snapshots)
	if st.PendingRemovals > 0 {
		n := int(st.PendingRemovals)
		fmt.Fprintf(w, "pending    %s missing from the last walk; removed if the next walk misses %s too\n", plural(n, "card"), them(n))
	}
	if st.RemovalsHeld > 0 {
		fmt.Fprintf(w, "HELD       mass removal held: the last walk missed %s, none marked removed; if they are gone: cardsync backfill -confirm-removals\n",
			plural(int(st.RemovalsHeld), "live card"))
	}
	if st.RejectedCards > 0 {
		fmt.Fprintf(w, "rejected   %d distinct items in rejected_cards (%d in the last run); see SELECT * FROM rejected_cards\n", st.RejectedCards, st.LastRunRejected)
	}
	if st.LastSnapshotAt != nil {
		fmt.Fprintf(w, "account    last snapshot %s (%s)\n", ago(now.Sub(*st.LastSnapshotAt)), st.LastSnapshotAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "account    no snapshot yet")
	}
	if len(st.Runs) > 0 && st.Runs[0].AccountError != "" {
		fmt.Fprintf(w, "           the last run took no snapshot: %s\n", st.Runs[0].AccountError)
	}
	if st.Running > 0 {
		fmt.Fprintf(w, "running    %d run(s) marked running\n", st.Running)
	}
	if len(st.Runs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRUN  TRIGGER   STATUS       STARTED               DURATION  PAGES  CARDS  NEW  CHANGED  REMOVED  REJ  HELD  REQ  429  ERROR")
	for _, r := range st.Runs {
		dur := "-"
		if r.FinishedAt != nil {
			dur = r.FinishedAt.Sub(r.StartedAt).Round(time.Second).String()
		}
		errText := r.Error
		if len(errText) > 60 {
			errText = errText[:57] + "..."
		}
		fmt.Fprintf(w, "%-4d %-9s %-12s %-21s %-9s %5d %6d %4d %8d %8d %4d %5d %4d %4d  %s\n", r.ID, r.Trigger, r.Status,
			r.StartedAt.UTC().Format(time.RFC3339), dur, r.Pages, r.CardsSeen, r.CardsNew, r.CardsChanged, r.CardsRemoved,
			r.CardsRejected, r.RemovalsHeld, r.Requests, r.RateLimited, strings.ReplaceAll(errText, "\n", " "))
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
