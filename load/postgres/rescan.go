package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardmove"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/redact"
)

// rulesVersion is migration 12's Go step: a warehouse holding no run and
// no card starts at the current rules version.
func rulesVersion(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, sqlshare.NewWarehouseRulesSQL("$1"), redact.RulesVersion)
	return err
}

// RulesState reads what the warehouse records of the rules that wrote it
// (load.RulesReader).
func (w *Warehouse) RulesState(ctx context.Context) (_ load.RulesState, err error) {
	defer classify(&err)
	var st load.RulesState
	var rv *int
	var phase, account, key *string
	var num *int64
	var at *time.Time
	err = w.pool.QueryRow(ctx, `SELECT rules_version, rescan_version, rescan_phase, rescan_account, rescan_key, rescan_num, rescanned_at
		FROM rules_state WHERE singleton = 1`).Scan(&st.Version, &rv, &phase, &account, &key, &num, &at)
	if err != nil {
		return st, fmt.Errorf("read rules version: %w", err)
	}
	if rv != nil {
		cp := &load.RescanCheckpoint{Version: *rv}
		if phase != nil {
			cp.Phase = *phase
		}
		if account != nil {
			cp.Account = *account
		}
		if key != nil {
			cp.Key.Text = *key
		}
		if num != nil {
			cp.Key.Num = *num
		}
		st.Rescan = cp
	}
	if at != nil {
		st.RescannedAt = at.UTC()
	}
	return st, nil
}

// RescanAccounts lists the accounts holding rows (load.Rescanner).
func (w *Warehouse) RescanAccounts(ctx context.Context) (_ []string, err error) {
	defer classify(&err)
	rows, err := w.pool.Query(ctx, `SELECT account FROM card_state UNION SELECT account FROM sync_runs
		UNION SELECT account FROM account_snapshots UNION SELECT account FROM rejected_cards ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// RescanBatch runs fn in one transaction that holds account's lease row
// FOR UPDATE (when the account has one): every write transaction of a run
// reads that row FOR SHARE, so a run's commit waits for the batch and the
// batch for a commit in flight, and the lease itself stays with its
// replica. The batch of what accounts share (account "") holds
// card_fields' lock; cards_flat is re-created after it when a field was
// removed (load.Rescanner).
func (w *Warehouse) RescanBatch(ctx context.Context, account string, fn func(load.RescanTx) error) (err error) {
	defer classify(&err)
	if w.readOnly {
		return load.ErrReadOnly
	}
	t := &pgRescanTx{}
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('idle_in_transaction_session_timeout', $1, true), set_config('lock_timeout', $2, true), set_config('search_path', $3, true)",
			millis(w.idleInTx), millis(LockTimeout), searchPath(w.schema)); err != nil {
			return fmt.Errorf("bound idle transactions: %w", err)
		}
		if account == "" {
			if err := advisoryLock(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (a run is recording fields)"); err != nil {
				return err
			}
		} else if _, err := tx.Exec(ctx, `SELECT 1 FROM sync_leases WHERE account = $1 FOR UPDATE`, account); err != nil {
			return waitedFor(err, "the account's lease row (a run's commit)", LockTimeout)
		}
		t.tx = tx
		return fn(t)
	})
	if err != nil {
		return err
	}
	if t.fieldsRemoved {
		if err := w.syncFlat(ctx); err != nil {
			// As after a run's commit: never a failure, the view is stale.
			w.log.Warn("rescan: cards_flat not re-created", "err", err)
		}
	}
	return nil
}

// FinishRescan sets rules_version to version and clears the checkpoint
// (load.Rescanner).
func (w *Warehouse) FinishRescan(ctx context.Context, version int) (err error) {
	defer classify(&err)
	if w.readOnly {
		return load.ErrReadOnly
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE rules_state SET rules_version = $1, rescan_version = NULL, rescan_phase = NULL,
			rescan_account = NULL, rescan_key = NULL, rescan_num = NULL, rescan_started_at = NULL, rescanned_at = $2
			WHERE singleton = 1 AND rescan_version = $1`, version, w.stamp())
		return err
	})
}

// pgRescanTx is load.RescanTx over a PostgreSQL transaction.
type pgRescanTx struct {
	tx            pgx.Tx
	fieldsRemoved bool
}

type pgRescanQuery struct {
	sel, upd        string
	texts           int
	textKey, numKey bool
	hashed          bool
}

// The selects take (account, key text, key number, limit); jsonb columns
// are read as text and written back from it, only when the value differs
// as jsonb (jsonb's text is not the canonical form the rules write: a card
// the rules leave as it was keeps its row and its hash).
var pgRescanQueries = map[string]pgRescanQuery{
	load.PhaseIDs: {
		sel: `SELECT card_id, 0::bigint, data::text FROM card_state
			WHERE account = $1 AND card_id > $2 AND $3::bigint IS NOT NULL ORDER BY card_id LIMIT $4`,
		texts: 1, textKey: true,
	},
	load.PhaseSeen: {
		sel: `SELECT DISTINCT u.id, 0::bigint FROM walk_seen s, unnest(s.ids) AS u(id)
			WHERE s.walk_id IN (SELECT walk_id FROM sync_walks WHERE account = $1) AND length(u.id) >= 12 AND u.id > $2
			AND $3::bigint IS NOT NULL ORDER BY 1 LIMIT $4`,
		textKey: true,
	},
	load.PhaseCards: {
		sel: `SELECT card_id, 0::bigint, data::text, minor::text, data_hash FROM card_state
			WHERE account = $1 AND card_id > $2 AND $3::bigint IS NOT NULL ORDER BY card_id LIMIT $4`,
		upd: `UPDATE card_state SET data = $1::jsonb, minor = $2::jsonb, data_hash = $3 WHERE account = $4 AND card_id = $5
			AND (data IS DISTINCT FROM $1::jsonb OR minor IS DISTINCT FROM $2::jsonb)`,
		texts: 2, textKey: true, hashed: true,
	},
	load.PhaseVersions: {
		sel: `SELECT card_id, version::bigint, data::text FROM card_versions
			WHERE account = $1 AND (card_id, version) > ($2, $3) ORDER BY card_id, version LIMIT $4`,
		upd: `UPDATE card_versions SET data = $1::jsonb WHERE account = $2 AND card_id = $3 AND version = $4
			AND data IS DISTINCT FROM $1::jsonb`,
		texts: 1, textKey: true, numKey: true,
	},
	load.PhaseSnapshots: {
		sel: `SELECT ''::text, snapshot_id::bigint, name, email, timezone, raw::text FROM account_snapshots
			WHERE account = $1 AND $2::text IS NOT NULL AND snapshot_id > $3 ORDER BY snapshot_id LIMIT $4`,
		upd:   `UPDATE account_snapshots SET name = $1, email = $2, timezone = $3, raw = $4 WHERE account = $5 AND snapshot_id = $6`,
		texts: 4, numKey: true,
	},
	load.PhaseRejected: {
		sel: `SELECT ''::text, rejected_id::bigint, card_id, reason, data, data_sha256 FROM rejected_cards
			WHERE account = $1 AND $2::text IS NOT NULL AND rejected_id > $3 ORDER BY rejected_id LIMIT $4`,
		upd:   `UPDATE rejected_cards SET card_id = $1, reason = $2, data = $3, data_sha256 = $4 WHERE account = $5 AND rejected_id = $6`,
		texts: 3, numKey: true, hashed: true,
	},
	load.PhaseRuns: {
		sel: `SELECT ''::text, run_id::bigint, error, account_error FROM sync_runs
			WHERE account = $1 AND $2::text IS NOT NULL AND run_id > $3 ORDER BY run_id LIMIT $4`,
		upd:   `UPDATE sync_runs SET error = $1, account_error = $2 WHERE account = $3 AND run_id = $4`,
		texts: 2, numKey: true,
	},
	load.PhaseFields: {
		sel: `SELECT name, 0::bigint, name FROM card_fields
			WHERE $1::text IS NOT NULL AND name > $2 AND $3::bigint IS NOT NULL ORDER BY name LIMIT $4`,
		texts: 1, textKey: true,
	},
}

// Rows reads a batch of phase's rows (load.RescanTx).
func (t *pgRescanTx) Rows(ctx context.Context, phase, account string, after load.RescanKey, limit int) ([]load.StoredRow, error) {
	q, ok := pgRescanQueries[phase]
	if !ok {
		return nil, fmt.Errorf("rescan: unknown phase %q", phase)
	}
	rows, err := t.tx.Query(ctx, q.sel, account, after.Text, after.Num, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []load.StoredRow
	for rows.Next() {
		r := load.StoredRow{Texts: make([]*string, q.texts)}
		dst := []any{&r.Key.Text, &r.Key.Num}
		for i := range r.Texts {
			dst = append(dst, &r.Texts[i])
		}
		var hash any
		if q.hashed {
			dst = append(dst, &hash)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		switch h := hash.(type) {
		case []byte:
			r.Hash = h
		case string:
			r.Hash = []byte(h)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Update stores a row's new texts (load.RescanTx).
func (t *pgRescanTx) Update(ctx context.Context, phase, account string, r load.StoredRow) (bool, error) {
	if phase == load.PhaseFields {
		if _, err := t.tx.Exec(ctx, `DELETE FROM card_fields WHERE name = $1`, r.Key.Text); err != nil {
			return false, err
		}
		t.fieldsRemoved = true
		return true, nil
	}
	q, ok := pgRescanQueries[phase]
	if !ok {
		return false, errors.New("rescan: unknown phase")
	}
	var args []any
	for _, s := range r.Texts {
		if s == nil {
			args = append(args, nil)
		} else {
			args = append(args, clean(*s))
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
	tag, err := t.tx.Exec(ctx, q.upd, args...)
	return err == nil && tag.RowsAffected() > 0, err
}

// The statements of a card's move (cardmove.Stmt), with $1 the
// account, $2 the old id and $3 the new one unless said otherwise.
const (
	pgMoveVersionsData = `UPDATE card_versions SET data = jsonb_set(data, '{id}', to_jsonb($3::text), false)
		WHERE account = $1 AND card_id = $2 AND jsonb_typeof(data) = 'object' AND data ? 'id'`
	pgMoveState = `INSERT INTO card_state (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at,
			first_seen_run, last_seen_run, data_hash, account, minor, amount_scale, amount_currency, amounts_rounded)
		SELECT $3, $4::jsonb, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, $5, account, minor,
			amount_scale, amount_currency, amounts_rounded
		FROM card_state WHERE account = $1 AND card_id = $2`
	pgMoveVersions = `UPDATE card_versions SET card_id = $3 WHERE account = $1 AND card_id = $2`
	pgMovePending  = `UPDATE removal_pending SET card_id = $3 WHERE account = $1 AND card_id = $2`
	pgMoveRejected = `UPDATE rejected_cards SET card_id = $3 WHERE account = $1 AND card_id = $2`
	pgMoveDelete   = `DELETE FROM card_state WHERE account = $1 AND card_id = $2`
	// The merge (cardmove.Move): pgMergeAside, pgMergeAfter and
	// pgMergeChange take the account, the new id and the old history's
	// last version; pgMergePending the account and the old id.
	pgMergeClose = `UPDATE card_versions SET valid_to = (SELECT min(valid_from) FROM card_versions WHERE account = $1 AND card_id = $3)
		WHERE account = $1 AND card_id = $2 AND valid_to IS NULL`
	pgMergeAside  = `UPDATE card_versions SET version = -version WHERE account = $1 AND card_id = $2`
	pgMergeAfter  = `UPDATE card_versions SET version = $3 - version WHERE account = $1 AND card_id = $2 AND version < 0`
	pgMergeChange = `UPDATE card_versions SET change = CASE WHEN (SELECT change FROM card_versions
			WHERE account = $1 AND card_id = $2 AND version = $3) = 'removed' THEN 'returned' ELSE 'changed' END
		WHERE account = $1 AND card_id = $2 AND version = $3 + 1 AND change = 'new'`
	pgMergeFirst = `UPDATE card_state SET first_seen_at = o.first_seen_at, first_seen_run = o.first_seen_run
		FROM (SELECT first_seen_at, first_seen_run FROM card_state WHERE account = $1 AND card_id = $2) AS o
		WHERE card_state.account = $1 AND card_state.card_id = $3 AND o.first_seen_at < card_state.first_seen_at`
	pgMergePending = `DELETE FROM removal_pending WHERE account = $1 AND card_id = $2`
	// The seen ids of the account's open walks: $2 the old ids, $3 the
	// new ones.
	pgMoveSeen = `UPDATE walk_seen s SET ids = (SELECT array_agg(coalesce(m.new, u.id) ORDER BY u.ord)
			FROM unnest(s.ids) WITH ORDINALITY AS u(id, ord) LEFT JOIN unnest($2::text[], $3::text[]) AS m(old, new) ON m.old = u.id)
		WHERE s.walk_id IN (SELECT walk_id FROM sync_walks WHERE account = $1) AND s.ids && $2::text[]`
)

// CardStored reports whether account's card_state holds id
// (load.CardMoveTx).
func (t *pgRescanTx) CardStored(ctx context.Context, account, id string) (bool, error) {
	var exists bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM card_state WHERE account = $1 AND card_id = $2)`, account, id).Scan(&exists)
	return exists, err
}

// LastVersion returns the last version of a card's history
// (load.CardMoveTx).
func (t *pgRescanTx) LastVersion(ctx context.Context, account, id string) (int64, error) {
	var last int64
	err := t.tx.QueryRow(ctx, `SELECT coalesce(max(version), 0)::bigint FROM card_versions WHERE account = $1 AND card_id = $2`,
		account, id).Scan(&last)
	return last, err
}

// ExecCardMove executes one statement of a card's move (load.CardMoveTx).
// A move deletes the old card_state row (cardmove.Delete): a
// rescan's role needs DELETE on card_state, which a sync's does not.
// pgCardMoveSQL is each card move statement's SQL (cardmove.Move.Args
// gives its arguments).
var pgCardMoveSQL = map[cardmove.Stmt]string{
	cardmove.VersionsData: pgMoveVersionsData,
	cardmove.State:        pgMoveState,
	cardmove.Versions:     pgMoveVersions,
	cardmove.Pending:      pgMovePending,
	cardmove.Delete:       pgMoveDelete,
	cardmove.Rejected:     pgMoveRejected,
	cardmove.MergeClose:   pgMergeClose,
	cardmove.MergeAside:   pgMergeAside,
	cardmove.MergeAfter:   pgMergeAfter,
	cardmove.MergeChange:  pgMergeChange,
	cardmove.MergeFirst:   pgMergeFirst,
	cardmove.MergePending: pgMergePending,
}

func (t *pgRescanTx) ExecCardMove(ctx context.Context, stmt cardmove.Stmt, account string, m cardmove.Move, last int64) error {
	if stmt == cardmove.State {
		m.Data = clean(m.Data) // what jsonb can hold, as a sync stores it
	}
	q, ok := pgCardMoveSQL[stmt]
	args, known := m.Args(stmt, account, last)
	if !ok || !known {
		return fmt.Errorf("unknown card move statement %d", stmt)
	}
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

// MoveSeen moves the seen ids of the account's open walks
// (load.CardMoveTx).
func (t *pgRescanTx) MoveSeen(ctx context.Context, account string, moves []cardmove.Move) error {
	olds := make([]string, 0, len(moves))
	news := make([]string, 0, len(moves))
	for _, m := range moves {
		olds, news = append(olds, m.Old), append(news, m.New)
	}
	_, err := t.tx.Exec(ctx, pgMoveSeen, account, olds, news)
	return err
}

// SaveCheckpoint stores where the rescan stands (load.RescanTx).
func (t *pgRescanTx) SaveCheckpoint(ctx context.Context, cp load.RescanCheckpoint) error {
	_, err := t.tx.Exec(ctx, `UPDATE rules_state SET rescan_version = $1, rescan_phase = $2, rescan_account = $3,
		rescan_key = $4, rescan_num = $5, rescan_started_at = coalesce(rescan_started_at, now()) WHERE singleton = 1`,
		cp.Version, cp.Phase, cp.Account, cp.Key.Text, cp.Key.Num)
	return err
}

var (
	_ load.Rescanner   = (*Warehouse)(nil)
	_ load.RulesReader = (*Warehouse)(nil)
)
