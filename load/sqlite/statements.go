package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

const (
	// sqlCardHashes compares a page's cards with the warehouse in one
	// query and one row: ?1 is the JSON array of the page's ids (see
	// storedCards), ?2 the account.
	sqlCardHashes = `SELECT coalesce(group_concat(
			CASE WHEN c.card_id IS NULL THEN 'n' WHEN c.removed_at IS NOT NULL THEN 'r' ELSE 'c' END || coalesce(hex(c.data_hash), ''),
			',' ORDER BY j.key), '')
		FROM json_each(?1) j LEFT JOIN card_state c ON c.account = ?2 AND c.card_id = j.value`
	// sqlCardGet re-reads, inside the write transaction, a stored card about
	// to be written. A row stored without a hash is compared by its data.
	// Every statement here takes the account as its last parameter.
	sqlCardGet = `SELECT data_hash, removed_at IS NOT NULL, CASE WHEN data_hash IS NULL THEN data = ?2 ELSE 0 END,
		(SELECT max(version) FROM card_versions WHERE account = ?3 AND card_id = ?1)
		FROM card_state WHERE account = ?3 AND card_id = ?1`
	sqlCardUpsert = `INSERT INTO card_state (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, data_hash, account,
			minor, amount_scale, amount_currency, amounts_rounded)
		VALUES (?1, ?2, ?3, ?3, ?3, NULL, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
		ON CONFLICT (account, card_id) DO UPDATE SET
			data = excluded.data,
			data_hash = excluded.data_hash,
			minor = excluded.minor,
			amount_scale = excluded.amount_scale,
			amount_currency = excluded.amount_currency,
			amounts_rounded = excluded.amounts_rounded,
			updated_at = CASE WHEN card_state.data IS NOT excluded.data THEN excluded.updated_at ELSE card_state.updated_at END,
			removed_at = NULL,
			last_seen_at = excluded.last_seen_at,
			last_seen_run = excluded.last_seen_run`
	sqlCardRehash    = `UPDATE card_state SET data_hash = ?2 WHERE account = ?3 AND card_id = ?1`
	sqlVersionClose  = `UPDATE card_versions SET valid_to = ? WHERE card_id = ? AND valid_to IS NULL AND account = ?`
	sqlVersionInsert = `INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data, account)
		VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`
	// sqlSeenInsert adds a page's seen ids; a page committed again in the
	// same walk (rows affected 0) gets sqlSeenUpdate instead.
	// ?5 is walk_seen.hashes (walk.SeenHashes).
	sqlSeenInsert = `INSERT INTO walk_seen (walk_id, page, run_id, ids, hashes) VALUES (?1, ?2, ?3, ?4, ?5)
		ON CONFLICT (walk_id, page) DO NOTHING`
	sqlSeenUpdate = `UPDATE walk_seen SET run_id = ?3, ids = ?4, hashes = ?5 WHERE walk_id = ?1 AND page = ?2`
	// sqlWalkUpdate brings the open walk's running summary up to date once
	// per batch: ?5 is how many of the batch's pages are new to the walk,
	// ?9 and ?10 the batch's page anomaly and its pages (AppendPagesSQL).
	sqlWalkUpdate = `UPDATE sync_walks SET
			last_total = ?2,
			pages = pages + ?5,
			last_page = max(last_page, ?3),
			runs = runs + (last_run IS NOT ?4),
			last_run = ?4,
			total_changed = max(total_changed, ?6),
			min_total = min(coalesce(min_total, ?7), ?7),
			max_total = max(coalesce(max_total, ?8), ?8),
			inconsistent_reason = coalesce(inconsistent_reason, ?9),
			inconsistent_pages = CASE WHEN ?10 IS NULL THEN inconsistent_pages WHEN inconsistent_pages IS NULL THEN ?10
				ELSE substr(inconsistent_pages, 1, length(inconsistent_pages) - 1) || ',' || substr(?10, 2) END
		WHERE walk_id = ?1 AND finished_at IS NULL`
	sqlAudit = `INSERT INTO run_pages (run_id, stream, page, walk_id, fetched_at, committed_at,
				items, total_items, total_pages, duration_ms, body_sha256, cards_new, cards_changed, cards_unchanged)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, stream, page) DO UPDATE SET
				walk_id = excluded.walk_id, fetched_at = excluded.fetched_at, committed_at = excluded.committed_at,
				items = excluded.items, total_items = excluded.total_items, total_pages = excluded.total_pages,
				duration_ms = excluded.duration_ms, body_sha256 = excluded.body_sha256, cards_new = excluded.cards_new,
				cards_changed = excluded.cards_changed, cards_unchanged = excluded.cards_unchanged`
	sqlCheckpoint = `INSERT INTO sync_checkpoints (stream, run_id, next_page, total_pages, total_items, updated_at, account)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (account, stream) DO UPDATE SET run_id = excluded.run_id, next_page = excluded.next_page,
				total_pages = excluded.total_pages, total_items = excluded.total_items, updated_at = excluded.updated_at`
	sqlRunCount = `UPDATE sync_runs SET
				pages = pages + ?, cards_seen = cards_seen + ?, cards_new = cards_new + ?,
				cards_changed = cards_changed + ?, cards_returned = cards_returned + ?, cards_unchanged = cards_unchanged + ?,
				cards_rejected = cards_rejected + ?, secrets_redacted = secrets_redacted + ?,
				card_numbers_masked = card_numbers_masked + ?, codes_dropped = codes_dropped + ?,
				track_data_dropped = track_data_dropped + ?, fields_dropped = fields_dropped + ?,
				requests = requests + ?, retries = retries + ?, rate_limited = rate_limited + ?,
				auth_requests = auth_requests + ?, heartbeat_at = ?
			WHERE run_id = ? AND account = ?`
)

// pageStatements are the statements a commit runs for every page and
// card. They are prepared once when the writer opens: parsing them again
// for every page cost about a sixth of CommitPage's CPU. Inside a
// transaction, tx.StmtContext reuses them on the one writer connection.
type pageStatements struct {
	cardHashes, cardGet, cardUpsert, cardRehash, versionClose, versionInsert *sql.Stmt
	seenInsert, seenUpdate, walkUpdate, audit, checkpoint, runCount          *sql.Stmt

	// newCards[n-1] and newVersions[n-1] insert n new cards and their
	// first versions in one statement each, prepared when first needed
	// (outside any transaction: the writer has one connection).
	mu                    sync.Mutex
	newCards, newVersions [maxNewRows]*sql.Stmt
}

// maxNewRows bounds the rows of one multi-row insert of new cards (a page
// holds 15); a bigger page takes several.
const maxNewRows = 32

func (ps *pageStatements) all() []**sql.Stmt {
	return []**sql.Stmt{&ps.cardHashes, &ps.cardGet, &ps.cardUpsert, &ps.cardRehash, &ps.versionClose, &ps.versionInsert,
		&ps.seenInsert, &ps.seenUpdate, &ps.walkUpdate, &ps.audit, &ps.checkpoint, &ps.runCount}
}

func preparePageStatements(ctx context.Context, db *sql.DB) (*pageStatements, error) {
	ps := &pageStatements{}
	text := []string{sqlCardHashes, sqlCardGet, sqlCardUpsert, sqlCardRehash, sqlVersionClose, sqlVersionInsert,
		sqlSeenInsert, sqlSeenUpdate, sqlWalkUpdate, sqlAudit, sqlCheckpoint, sqlRunCount}
	for i, dst := range ps.all() {
		st, err := db.PrepareContext(ctx, text[i])
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*dst = st
	}
	return ps, nil
}

func (ps *pageStatements) close() {
	if ps == nil {
		return
	}
	for _, st := range ps.all() {
		if *st != nil {
			(*st).Close()
		}
	}
	for _, sts := range [][maxNewRows]*sql.Stmt{ps.newCards, ps.newVersions} {
		for _, st := range sts {
			if st != nil {
				st.Close()
			}
		}
	}
}

// newCardArgs is how many arguments insertNew's statements take per card:
// id, hash, data, then minor, amount_scale, amount_currency and
// amounts_rounded, which versions does not read.
const newCardArgs = 7

// insertNew returns the statements that insert n (1..maxNewRows) new cards
// and their first versions. Both take ?1 the time, ?2 the run, ?3 the
// account, then id, hash, data, minor (card_state.minor), amount_scale,
// amount_currency and amounts_rounded for each card (cards); versions
// reads none of the last four, so its arguments stop at the last card's
// data.
func (ps *pageStatements) insertNew(ctx context.Context, db *sql.DB, n int) (cards, versions *sql.Stmt, err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.newCards[n-1] == nil {
		var c, v strings.Builder
		c.WriteString(`INSERT INTO card_state (card_id, data_hash, data, minor, amount_scale, amount_currency, amounts_rounded,
			first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, account) VALUES `)
		v.WriteString(`INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data, account) VALUES `)
		for i := range n {
			arg := func(k int) string { return "?" + strconv.Itoa(4+k+newCardArgs*i) }
			id, hash, data := arg(0), arg(1), arg(2)
			if i > 0 {
				c.WriteString(", ")
				v.WriteString(", ")
			}
			c.WriteString("(" + id + ", " + hash + ", " + data + ", " + arg(3) + ", " + arg(4) + ", " + arg(5) + ", " + arg(6) + ", ?1, ?1, ?1, NULL, ?2, ?2, ?3)")
			v.WriteString("(" + id + ", 1, ?1, NULL, ?2, 'new', " + data + ", ?3)")
		}
		if ps.newCards[n-1], err = db.PrepareContext(ctx, c.String()); err != nil {
			return nil, nil, fmt.Errorf("prepare: %w", err)
		}
		if ps.newVersions[n-1], err = db.PrepareContext(ctx, v.String()); err != nil {
			ps.newCards[n-1].Close()
			ps.newCards[n-1] = nil
			return nil, nil, fmt.Errorf("prepare: %w", err)
		}
	}
	return ps.newCards[n-1], ps.newVersions[n-1], nil
}
