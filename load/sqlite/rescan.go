package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardmove"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/redact"
)

// rulesVersionMigration is the schema version that adds rules_state.
const rulesVersionMigration = 16

// upgradeRulesVersion is migration 16's Go step: a warehouse holding no
// run and no card starts at the current rules version (a warehouse with
// rows stays at 1, the rules before versions were recorded).
func upgradeRulesVersion(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, sqlshare.NewWarehouseRulesSQL("?1"), redact.RulesVersion)
	return err
}

// RulesState reads what the warehouse records of the rules that wrote it
// (load.RulesReader).
func (w *Warehouse) RulesState(ctx context.Context) (_ load.RulesState, err error) {
	defer classify(&err)
	return readRulesState(ctx, w.db)
}

func readRulesState(ctx context.Context, q queryer) (load.RulesState, error) {
	var st load.RulesState
	var rv sql.NullInt64
	var phase, account, key, at sql.NullString
	var num sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT rules_version, rescan_version, rescan_phase, rescan_account, rescan_key, rescan_num, rescanned_at
		FROM rules_state WHERE singleton = 1`).Scan(&st.Version, &rv, &phase, &account, &key, &num, &at)
	if err != nil {
		return st, fmt.Errorf("read rules version: %w", err)
	}
	if rv.Valid {
		st.Rescan = &load.RescanCheckpoint{Version: int(rv.Int64), Phase: phase.String, Account: account.String,
			Key: load.RescanKey{Text: key.String, Num: num.Int64}}
	}
	if at.Valid {
		st.RescannedAt, _ = time.Parse(timeFormat, at.String)
	}
	return st, nil
}

// BackupRulesVersion reads the rules version of the backup (or any
// warehouse file) at path, read-only: 1 when the file predates
// rules_state (schema version below 16).
func BackupRulesVersion(ctx context.Context, path string) (_ int, err error) {
	defer classify(&err)
	db, err := openPlain(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if version < rulesVersionMigration {
		return 1, nil
	}
	st, err := readRulesState(ctx, db)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return st.Version, nil
}

// RescanAccounts lists the accounts holding rows (load.Rescanner).
func (w *Warehouse) RescanAccounts(ctx context.Context) (_ []string, err error) {
	defer classify(&err)
	var out []string
	err = eachRow(ctx, w.db, `SELECT account FROM card_state UNION SELECT account FROM sync_runs
		UNION SELECT account FROM account_snapshots UNION SELECT account FROM rejected_cards ORDER BY 1`, nil,
		func(scan func(...any) error) error {
			var a string
			if err := scan(&a); err != nil {
				return err
			}
			out = append(out, a)
			return nil
		})
	return out, err
}

// rescanLockWait is how often a rescan tries again an account's run lock
// a run holds.
const rescanLockWait = time.Second

// RescanBatch runs fn in one BEGIN IMMEDIATE transaction (the file's one
// writer) holding account's run lock, the lock a run holds, for the batch
// only: while a run of the account goes on, the batch waits for its end;
// a run starting during a batch is skipped (as beside any other sync) and
// its next tick runs. PRAGMA secure_delete is on, so the text a batch
// replaces is overwritten in the file, not left in free pages
// (load.Rescanner).
func (w *Warehouse) RescanBatch(ctx context.Context, account string, fn func(load.RescanTx) error) (err error) {
	defer classify(&err)
	if account != "" && !w.rescanUnlocked {
		lock, err := OpenAccountLock(w.path, w.opts.FileMode, account)
		if err != nil {
			return err
		}
		defer lock.Close()
		waited := false
		for {
			err := lock.Acquire()
			if err == nil {
				break
			}
			if !errors.Is(err, load.ErrLocked) {
				return err
			}
			if !waited {
				w.log.Info("rescan waits for the account's run to end", "account", account, "err", err)
				waited = true
			}
			t := time.NewTimer(rescanLockWait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		defer lock.Release()
	}
	return w.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "PRAGMA secure_delete = ON"); err != nil {
			return err
		}
		return fn(rescanTx{tx})
	})
}

// FinishRescan sets rules_version to version and clears the checkpoint
// (load.Rescanner).
func (w *Warehouse) FinishRescan(ctx context.Context, version int) (err error) {
	defer classify(&err)
	return w.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE rules_state SET rules_version = ?, rescan_version = NULL, rescan_phase = NULL,
			rescan_account = NULL, rescan_key = NULL, rescan_num = NULL, rescan_started_at = NULL, rescanned_at = ?
			WHERE singleton = 1 AND rescan_version = ?`, version, w.stamp(), version)
		return err
	})
}

// rescanTx is load.RescanTx over a SQLite transaction.
type rescanTx struct{ tx *sql.Tx }

// rescanQuery is a phase's statements: select (account, key, limit) and
// update (texts..., hash when hashed, then the key).
type rescanQuery struct {
	sel, upd string
	texts    int
	textKey  bool // the key's Text is a column
	numKey   bool // the key's Num is a column
	hashed   bool
}

var rescanQueries = map[string]rescanQuery{
	load.PhaseIDs: {
		sel:   `SELECT card_id, 0, data FROM card_state WHERE account = ?1 AND card_id > ?2 AND ?3 = ?3 ORDER BY card_id LIMIT ?4`,
		texts: 1, textKey: true,
	},
	load.PhaseSeen: {
		sel: `SELECT DISTINCT j.value, 0 FROM walk_seen s, json_each(s.ids) j
			WHERE s.walk_id IN (SELECT walk_id FROM sync_walks WHERE account = ?1) AND length(j.value) >= 12 AND j.value > ?2 AND ?3 = ?3
			ORDER BY 1 LIMIT ?4`,
		textKey: true,
	},
	load.PhaseCards: {
		sel:   `SELECT card_id, 0, data, minor, data_hash FROM card_state WHERE account = ?1 AND card_id > ?2 AND ?3 = ?3 ORDER BY card_id LIMIT ?4`,
		upd:   `UPDATE card_state SET data = ?1, minor = ?2, data_hash = ?3 WHERE account = ?4 AND card_id = ?5`,
		texts: 2, textKey: true, hashed: true,
	},
	load.PhaseVersions: {
		sel: `SELECT card_id, version, data FROM card_versions WHERE account = ?1 AND (card_id, version) > (?2, ?3)
			ORDER BY card_id, version LIMIT ?4`,
		upd:   `UPDATE card_versions SET data = ?1 WHERE account = ?2 AND card_id = ?3 AND version = ?4`,
		texts: 1, textKey: true, numKey: true,
	},
	load.PhaseSnapshots: {
		sel: `SELECT '', snapshot_id, name, email, timezone, raw FROM account_snapshots WHERE account = ?1 AND ?2 = ?2 AND snapshot_id > ?3
			ORDER BY snapshot_id LIMIT ?4`,
		upd:   `UPDATE account_snapshots SET name = ?1, email = ?2, timezone = ?3, raw = ?4 WHERE account = ?5 AND snapshot_id = ?6`,
		texts: 4, numKey: true,
	},
	load.PhaseRejected: {
		sel: `SELECT '', rejected_id, card_id, reason, data, data_sha256 FROM rejected_cards WHERE account = ?1 AND ?2 = ?2 AND rejected_id > ?3
			ORDER BY rejected_id LIMIT ?4`,
		upd:   `UPDATE rejected_cards SET card_id = ?1, reason = ?2, data = ?3, data_sha256 = ?4 WHERE account = ?5 AND rejected_id = ?6`,
		texts: 3, numKey: true, hashed: true,
	},
	load.PhaseRuns: {
		sel: `SELECT '', run_id, error, account_error FROM sync_runs WHERE account = ?1 AND ?2 = ?2 AND run_id > ?3
			ORDER BY run_id LIMIT ?4`,
		upd:   `UPDATE sync_runs SET error = ?1, account_error = ?2 WHERE account = ?3 AND run_id = ?4`,
		texts: 2, numKey: true,
	},
	load.PhaseFields: {
		sel:   `SELECT name, 0, name FROM card_fields WHERE ?1 = ?1 AND name > ?2 AND ?3 = ?3 ORDER BY name LIMIT ?4`,
		texts: 1, textKey: true,
	},
}

// Rows reads a batch of phase's rows (load.RescanTx).
func (t rescanTx) Rows(ctx context.Context, phase, account string, after load.RescanKey, limit int) ([]load.StoredRow, error) {
	q, ok := rescanQueries[phase]
	if !ok {
		return nil, fmt.Errorf("rescan: unknown phase %q", phase)
	}
	var out []load.StoredRow
	err := eachRow(ctx, t.tx, q.sel, []any{account, after.Text, after.Num, limit}, func(scan func(...any) error) error {
		r := load.StoredRow{Texts: make([]*string, q.texts)}
		dst := []any{&r.Key.Text, &r.Key.Num}
		texts := make([]sql.NullString, q.texts)
		for i := range texts {
			dst = append(dst, &texts[i])
		}
		var hash any
		if q.hashed {
			dst = append(dst, &hash)
		}
		if err := scan(dst...); err != nil {
			return err
		}
		for i, s := range texts {
			if s.Valid {
				r.Texts[i] = &s.String
			}
		}
		switch h := hash.(type) {
		case []byte:
			r.Hash = h
		case string:
			r.Hash = []byte(h)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// Update stores a row's new texts (load.RescanTx).
func (t rescanTx) Update(ctx context.Context, phase, account string, r load.StoredRow) (bool, error) {
	if phase == load.PhaseFields {
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM card_fields WHERE name = ?`, r.Key.Text); err != nil {
			return false, err
		}
		return true, regenerateFlat(ctx, t.tx)
	}
	q := rescanQueries[phase]
	var args []any
	for _, s := range r.Texts {
		if s == nil {
			args = append(args, nil)
		} else {
			args = append(args, *s)
		}
	}
	switch phase {
	case load.PhaseCards:
		if r.Texts[1] != nil && *r.Texts[1] == "" {
			args[1] = nil
		}
		args = append(args, r.Hash)
	case load.PhaseRejected:
		args = append(args, string(r.Hash))
	}
	args = append(args, account)
	if q.textKey {
		args = append(args, r.Key.Text)
	}
	if q.numKey {
		args = append(args, r.Key.Num)
	}
	_, err := t.tx.ExecContext(ctx, q.upd, args...)
	return err == nil, err
}

// The statements of a card's move (cardmove.Stmt), with ?1 the
// account, ?2 the old id and ?3 the new one unless said otherwise.
const (
	sqlMoveVersionsData = `UPDATE card_versions SET data = json_replace(data, '$.id', ?3)
		WHERE account = ?1 AND card_id = ?2 AND json_type(data, '$.id') IS NOT NULL`
	sqlMoveState = `INSERT INTO card_state (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at,
			first_seen_run, last_seen_run, data_hash, account, minor, amount_scale, amount_currency, amounts_rounded)
		SELECT ?3, ?4, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, ?5, account, minor,
			amount_scale, amount_currency, amounts_rounded
		FROM card_state WHERE account = ?1 AND card_id = ?2`
	sqlMoveVersions = `UPDATE card_versions SET card_id = ?3 WHERE account = ?1 AND card_id = ?2`
	sqlMovePending  = `UPDATE removal_pending SET card_id = ?3 WHERE account = ?1 AND card_id = ?2`
	sqlMoveRejected = `UPDATE rejected_cards SET card_id = ?3 WHERE account = ?1 AND card_id = ?2`
	sqlMoveDelete   = `DELETE FROM card_state WHERE account = ?1 AND card_id = ?2`
	// The merge (cardmove.Move): sqlMergeAside, sqlMergeAfter and
	// sqlMergeChange take the account, the new id and the old history's
	// last version; sqlMergePending the account and the old id.
	sqlMergeClose = `UPDATE card_versions SET valid_to = (SELECT min(valid_from) FROM card_versions WHERE account = ?1 AND card_id = ?3)
		WHERE account = ?1 AND card_id = ?2 AND valid_to IS NULL`
	sqlMergeAside  = `UPDATE card_versions SET version = -version WHERE account = ?1 AND card_id = ?2`
	sqlMergeAfter  = `UPDATE card_versions SET version = ?3 - version WHERE account = ?1 AND card_id = ?2 AND version < 0`
	sqlMergeChange = `UPDATE card_versions SET change = CASE WHEN (SELECT change FROM card_versions
			WHERE account = ?1 AND card_id = ?2 AND version = ?3) = 'removed' THEN 'returned' ELSE 'changed' END
		WHERE account = ?1 AND card_id = ?2 AND version = ?3 + 1 AND change = 'new'`
	sqlMergeFirst = `UPDATE card_state SET first_seen_at = o.first_seen_at, first_seen_run = o.first_seen_run
		FROM (SELECT first_seen_at, first_seen_run FROM card_state WHERE account = ?1 AND card_id = ?2) AS o
		WHERE card_state.account = ?1 AND card_state.card_id = ?3 AND o.first_seen_at < card_state.first_seen_at`
	sqlMergePending = `DELETE FROM removal_pending WHERE account = ?1 AND card_id = ?2`
	// The seen ids of the account's open walks, ?2 a JSON object from old
	// ids to new ones.
	sqlMoveSeen = `UPDATE walk_seen SET ids = (SELECT json_group_array(coalesce(m.value, j.value))
			FROM json_each(walk_seen.ids) j LEFT JOIN json_each(?2) m ON m.key = j.value)
		WHERE walk_id IN (SELECT walk_id FROM sync_walks WHERE account = ?1)
		  AND EXISTS (SELECT 1 FROM json_each(walk_seen.ids) j JOIN json_each(?2) m ON m.key = j.value)`
)

// CardStored reports whether account's card_state holds id
// (load.CardMoveTx).
func (t rescanTx) CardStored(ctx context.Context, account, id string) (bool, error) {
	var exists int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM card_state WHERE account = ?1 AND card_id = ?2`, account, id).Scan(&exists)
	return exists != 0, err
}

// LastVersion returns the last version of a card's history
// (load.CardMoveTx).
func (t rescanTx) LastVersion(ctx context.Context, account, id string) (int64, error) {
	var last int64
	err := t.tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM card_versions WHERE account = ?1 AND card_id = ?2`,
		account, id).Scan(&last)
	return last, err
}

// ExecCardMove executes one statement of a card's move (load.CardMoveTx).
// sqliteCardMoveSQL is each card move statement's SQL (cardmove.Move.Args
// gives its arguments).
var sqliteCardMoveSQL = map[cardmove.Stmt]string{
	cardmove.VersionsData: sqlMoveVersionsData,
	cardmove.State:        sqlMoveState,
	cardmove.Versions:     sqlMoveVersions,
	cardmove.Pending:      sqlMovePending,
	cardmove.Delete:       sqlMoveDelete,
	cardmove.Rejected:     sqlMoveRejected,
	cardmove.MergeClose:   sqlMergeClose,
	cardmove.MergeAside:   sqlMergeAside,
	cardmove.MergeAfter:   sqlMergeAfter,
	cardmove.MergeChange:  sqlMergeChange,
	cardmove.MergeFirst:   sqlMergeFirst,
	cardmove.MergePending: sqlMergePending,
}

func (t rescanTx) ExecCardMove(ctx context.Context, stmt cardmove.Stmt, account string, m cardmove.Move, last int64) error {
	q, ok := sqliteCardMoveSQL[stmt]
	args, known := m.Args(stmt, account, last)
	if !ok || !known {
		return fmt.Errorf("unknown card move statement %d", stmt)
	}
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

// MoveSeen moves the seen ids of the account's open walks
// (load.CardMoveTx).
func (t rescanTx) MoveSeen(ctx context.Context, account string, moves []cardmove.Move) error {
	seen := make(map[string]string, len(moves))
	for _, m := range moves {
		seen[m.Old] = m.New
	}
	ids, err := json.Marshal(seen)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, sqlMoveSeen, account, string(ids))
	return err
}

// SaveCheckpoint stores where the rescan stands (load.RescanTx).
func (t rescanTx) SaveCheckpoint(ctx context.Context, cp load.RescanCheckpoint) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE rules_state SET rescan_version = ?, rescan_phase = ?, rescan_account = ?,
		rescan_key = ?, rescan_num = ?, rescan_started_at = coalesce(rescan_started_at, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
		WHERE singleton = 1`, cp.Version, cp.Phase, cp.Account, cp.Key.Text, cp.Key.Num)
	return err
}

var (
	_ load.Rescanner   = (*Warehouse)(nil)
	_ load.RulesReader = (*Warehouse)(nil)
)

// RescanBackup applies the current rules (opts.Options, opts.Policy) to
// the backup file at path and puts the result in its place, keeping its
// name (so its place among the backups), its mode and its identity: the
// backup is copied beside itself, the copy opened (migrated to this
// binary's schema, which restore accepts) and rescanned, then written
// compact with VACUUM INTO (no free page keeps a replaced text), checked
// and renamed over the backup. A backup already at the current rules is
// left as it is (changed false).
func RescanBackup(ctx context.Context, path string, opts load.Options, ro load.RescanOptions) (res load.RescanResult, changed bool, err error) {
	defer classify(&err)
	version, err := BackupRulesVersion(ctx, path)
	if err != nil {
		return res, false, err
	}
	if version >= redact.RulesVersion {
		return res, false, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return res, false, err
	}
	mode := fi.Mode().Perm()
	dir := filepath.Dir(path)
	work, err := newTempPath(dir, ".cardsync-rescan-*")
	if err != nil {
		return res, false, err
	}
	defer removeTemps(dir, filepath.Base(work))
	if err := copyBackupFile(path, work, mode); err != nil {
		return res, false, err
	}
	opts.FileMode = mode
	w, err := Open(ctx, work, opts)
	if err != nil {
		return res, false, fmt.Errorf("open a copy of %s: %w", path, err)
	}
	w.rescanUnlocked = true
	res, err = load.Rescan(ctx, w, ro)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, false, fmt.Errorf("rescan %s: %w", path, err)
	}
	out, err := newTempPath(dir, ".cardsync-rescanned-*")
	if err != nil {
		return res, false, err
	}
	defer removeTemps(dir, filepath.Base(out))
	if err := os.Remove(out); err != nil {
		return res, false, err
	}
	if err := vacuumInto(ctx, work, out); err != nil {
		return res, false, err
	}
	if err := checkCopy(ctx, out); err != nil {
		return res, false, err
	}
	if err := finishFile(out, mode); err != nil {
		return res, false, err
	}
	if err := os.Rename(out, path); err != nil {
		return res, false, err
	}
	return res, true, nil
}

// copyBackupFile copies src to dst (which exists) with mode.
func copyBackupFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(mode); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
