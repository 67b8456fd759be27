package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// RestoreOptions are Restore's choices.
type RestoreOptions struct {
	// Force restores the file even when the current warehouse holds
	// history the file lacks, or when the two are not shown to be the
	// same warehouse; the replaced warehouse is kept all the same.
	Force bool
	// Now names the file the replaced warehouse is kept in (default
	// time.Now).
	Now time.Time
	// Wait is how long Restore waits, once the file passed its checks,
	// for a sync that holds the writer lock (a run in progress) to end
	// (WaitLock); 0 does not wait: the *load.LockedError comes at once.
	// Either way nothing is changed while a sync holds the lock, and the
	// comparison is made with the warehouse as the run left it.
	Wait time.Duration
	// Waiting, when set, is told while Restore waits for the writer lock:
	// see WaitLock.
	Waiting func(held *load.LockedError, waited time.Duration)
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	// BeforeRestore is where the replaced warehouse is kept: ""
	// when there was none (a missing or empty file).
	BeforeRestore string
	// Comparison is the current warehouse against the file restored.
	Comparison RestoreComparison
}

// History is what a warehouse file holds that the API cannot give again:
// its runs, account snapshots (balance history) and card versions, over
// every account of the file.
type History struct {
	// ID is the warehouse's identity ("" when the file has none).
	ID string
	// Runs, AccountSnapshots and CardVersions count the rows of
	// sync_runs, account_snapshots and card_versions.
	Runs, AccountSnapshots, CardVersions int64
	// LastRunID is the newest run (0: none) and LastRunStarted when it
	// started (UTC text YYYY-MM-DDTHH:MM:SSZ).
	LastRunID      int64
	LastRunStarted string
}

// String says what the history holds, on one line.
func (h History) String() string {
	id := h.ID
	if id == "" {
		id = "none"
	}
	last := "no run"
	if h.LastRunID > 0 {
		last = fmt.Sprintf("newest run %d started %s", h.LastRunID, h.LastRunStarted)
	}
	return fmt.Sprintf("%s, %s, %s, %s (identity %s)", english.Count(h.Runs, "run"),
		english.Count(h.AccountSnapshots, "account snapshot"), english.Count(h.CardVersions, "card version"), last, id)
}

// RestoreComparison is the current warehouse against a file that would
// replace it.
type RestoreComparison struct {
	// Present is false when there is no current warehouse to compare (a
	// missing or empty file): nothing is discarded.
	Present bool
	// Current and File are the two histories.
	Current, File History
	// LostRuns, LostAccountSnapshots and LostCardVersions are the rows
	// of the current warehouse the file lacks (by run_id, snapshot_id and
	// card_id/version/run_id), which a restore discards. When the two are
	// different warehouses, every row of the current one counts.
	LostRuns, LostAccountSnapshots, LostCardVersions int64
}

// LostText names the history a restore discards, for people: "2 runs,
// 1 account snapshot and 30 card versions".
func (c RestoreComparison) LostText() string {
	return english.Count(c.LostRuns, "run") + ", " + english.Count(c.LostAccountSnapshots, "account snapshot") +
		" and " + english.Count(c.LostCardVersions, "card version")
}

// Discards reports whether restoring the file discards history.
func (c RestoreComparison) Discards() bool {
	return c.LostRuns+c.LostAccountSnapshots+c.LostCardVersions > 0
}

// ErrRestoreRefused is wrapped by a *RestoreRefusedError: Restore without
// Force would have discarded history or replaced another warehouse, and
// changed nothing.
var ErrRestoreRefused = errors.New("restore refused")

// RestoreRefusedError is Restore's refusal to replace a warehouse without
// Force: Reasons says why (history the file lacks, different or unknown
// identities, a current warehouse that cannot be read), Comparison what
// each side holds. Restore changed nothing.
type RestoreRefusedError struct {
	Warehouse, File string
	Comparison      RestoreComparison
	Reasons         []string
}

// Error implements error.
func (e *RestoreRefusedError) Error() string {
	return fmt.Sprintf("%s: %s over %s: %s (warehouse: %s; file: %s); -force restores it anyway, keeping the replaced warehouse",
		ErrRestoreRefused, e.File, e.Warehouse, strings.Join(e.Reasons, "; "), e.Comparison.Current, e.Comparison.File)
}

// Unwrap makes errors.Is find ErrRestoreRefused and ErrWarehouse (the
// command exits 6).
func (e *RestoreRefusedError) Unwrap() []error { return []error{ErrRestoreRefused, load.ErrWarehouse} }

// compareForRestore compares the warehouse at current with the database
// file at file (the checked copy Restore would put in its place) and
// returns why Restore must not replace one with the other without Force
// (none: it may).
func compareForRestore(ctx context.Context, current, file string) (RestoreComparison, []string) {
	var c RestoreComparison
	if fi, err := os.Stat(current); errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return c, nil
	}
	c.Present = true
	db, err := openPlain(file)
	if err != nil {
		return c, []string{fmt.Sprintf("the file cannot be compared with the warehouse: %v", err)}
	}
	defer db.Close()
	if c.File, err = historyOf(ctx, db, "main"); err != nil {
		return c, []string{fmt.Sprintf("the file's history cannot be read: %v", err)}
	}
	if _, err := db.ExecContext(ctx, "ATTACH DATABASE ? AS cur", dsn(current, []string{"mode=ro"})); err != nil {
		return c, []string{fmt.Sprintf("the warehouse's history cannot be read, so what the restore would discard is unknown: %v", err)}
	}
	if c.Current, err = historyOf(ctx, db, "cur"); err != nil {
		return c, []string{fmt.Sprintf("the warehouse's history cannot be read, so what the restore would discard is unknown: %v", err)}
	}
	var reasons []string
	switch {
	case c.Current.ID != "" && c.File.ID != "" && c.Current.ID != c.File.ID:
		reasons = append(reasons, fmt.Sprintf("the file is a backup of another warehouse (identity %s; this warehouse's is %s)", c.File.ID, c.Current.ID))
		c.LostRuns, c.LostAccountSnapshots, c.LostCardVersions = c.Current.Runs, c.Current.AccountSnapshots, c.Current.CardVersions
	case c.Current.ID == "" || c.File.ID == "":
		reasons = append(reasons, fmt.Sprintf("cannot tell whether the file is a backup of this warehouse: %s (written by a cardsync before warehouse identities)", noIdentity(c)))
	}
	if c.Current.ID == c.File.ID || c.Current.ID == "" || c.File.ID == "" {
		// One warehouse (or perhaps one): rows are matched by their keys.
		for _, q := range []struct {
			n   *int64
			sql string
		}{
			{&c.LostRuns, `SELECT count(*) FROM cur.sync_runs c WHERE NOT EXISTS (SELECT 1 FROM main.sync_runs f WHERE f.run_id = c.run_id)`},
			{&c.LostAccountSnapshots, `SELECT count(*) FROM cur.account_snapshots c WHERE NOT EXISTS (SELECT 1 FROM main.account_snapshots f WHERE f.snapshot_id = c.snapshot_id)`},
			{&c.LostCardVersions, `SELECT count(*) FROM (SELECT card_id, version, run_id FROM cur.card_versions EXCEPT SELECT card_id, version, run_id FROM main.card_versions)`},
		} {
			if err := db.QueryRowContext(ctx, q.sql).Scan(q.n); err != nil {
				return c, append(reasons, fmt.Sprintf("what the restore would discard cannot be counted: %v", err))
			}
		}
	}
	if c.Discards() {
		reasons = append(reasons, fmt.Sprintf("it would discard %s the warehouse holds and the file lacks", c.LostText()))
	}
	return c, reasons
}

// noIdentity names the side(s) of c without an identity.
func noIdentity(c RestoreComparison) string {
	switch {
	case c.Current.ID == "" && c.File.ID == "":
		return "neither the warehouse nor the file has a warehouse identity"
	case c.Current.ID == "":
		return "the warehouse has no warehouse identity"
	}
	return "the file has no warehouse identity"
}

// historyOf reads the history of the database schema (main, or an
// attached one) through db.
func historyOf(ctx context.Context, db *sql.DB, schema string) (History, error) {
	var h History
	id, err := identityOf(ctx, db, schema)
	if err != nil && !errors.Is(err, ErrNoIdentity) {
		return h, err
	}
	h.ID = id
	err = db.QueryRowContext(ctx, fmt.Sprintf(`SELECT
		(SELECT count(*) FROM %[1]s.sync_runs),
		(SELECT count(*) FROM %[1]s.account_snapshots),
		(SELECT count(*) FROM %[1]s.card_versions),
		coalesce((SELECT max(run_id) FROM %[1]s.sync_runs), 0),
		coalesce((SELECT started_at FROM %[1]s.sync_runs ORDER BY run_id DESC LIMIT 1), '')`, schema)).
		Scan(&h.Runs, &h.AccountSnapshots, &h.CardVersions, &h.LastRunID, &h.LastRunStarted)
	if err != nil {
		return h, err
	}
	return h, nil
}

// BeforeRestoreFile is load.BeforeRestoreFile.
type BeforeRestoreFile = load.BeforeRestoreFile

// ListBeforeRestore returns the warehouses Restore replaced and kept beside
// the warehouse at warehousePath (<warehouse>.before-restore-*, and the
// <warehouse>.before-restore of an older cardsync), newest first. They are
// never removed by cardsync: delete them by hand once they are not needed.
func ListBeforeRestore(warehousePath string) (_ []BeforeRestoreFile, err error) {
	defer classify(&err)
	dir, base := filepath.Split(warehousePath)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list kept warehouses: %w", err)
	}
	name := regexp.MustCompile(`^` + regexp.QuoteMeta(base+BeforeRestoreSuffix) + `(?:-(\d{8}T\d{6}Z)(?:-([1-9]\d{0,3}))?)?$`)
	type kept struct {
		f BeforeRestoreFile
		n int
	}
	var out []kept
	for _, e := range entries {
		m := name.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		k := kept{f: BeforeRestoreFile{Path: filepath.Join(dir, e.Name())}, n: 1}
		if m[1] != "" {
			k.f.ReplacedAt, _ = time.Parse(backupTimeFormat, m[1])
		}
		if m[2] != "" {
			k.n, _ = strconv.Atoi(m[2])
		}
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(k.f.Path + suffix); err == nil {
				k.f.Bytes += fi.Size()
			}
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b kept) int {
		if c := b.f.ReplacedAt.Compare(a.f.ReplacedAt); c != 0 {
			return c
		}
		return b.n - a.n
	})
	files := make([]BeforeRestoreFile, len(out))
	for i, k := range out {
		files[i] = k.f
	}
	return files, nil
}

// BeforeRestore is ListBeforeRestore of the warehouse's file.
func (w *Warehouse) BeforeRestore() ([]load.BeforeRestoreFile, error) {
	return ListBeforeRestore(w.path)
}

// WriterPID is the PID of the process syncing the
// warehouse's account (0: none, -1: one whose PID is unknown). The
// account's run lock says so; a holder whose PID is unknown, or the sole
// account of an older cardsync (its lock is on the whole file), is found
// by the file's lock. A lock that cannot be read counts as none.
func (w *Warehouse) WriterPID(sole bool) int {
	holder, _ := AccountLockHolder(w.path, w.account)
	if holder < 0 || holder == 0 && sole {
		holder, _ = LockHolder(w.path)
	}
	return holder
}

// WriterFacts implements load.Reader: the account's writer (WriterPID)
// and the warehouses restore kept beside the file.
func (w *Warehouse) WriterFacts(_ context.Context, sole bool) (load.WriterFacts, error) {
	kept, err := w.BeforeRestore()
	if err != nil {
		return load.WriterFacts{}, fmt.Errorf("list kept warehouses: %w", err)
	}
	return load.WriterFacts{WriterPID: w.WriterPID(sole), BeforeRestore: kept}, nil
}
