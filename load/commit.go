package load

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Page is one fetched page of a stream, committed by CommitPage in one
// transaction.
type Page struct {
	Stream     string // default StreamCards
	Number     int    // 1-based page number
	TotalPages int    // meta.pagination.total_pages reported on this page
	TotalItems int    // meta.pagination.total reported on this page
	Cards      []Card
	FetchedAt  time.Time
	Duration   time.Duration
	BodySHA256 string // hex
	// Counters since the previous commit, added to the run's totals.
	Requests, Retries, RateLimited, AuthRequests int64
}

// Card is one card as received: its id as text and its raw JSON. Load
// redacts Data before storing anything.
type Card struct {
	ID   string
	Data []byte
}

// PageResult counts what CommitPage did with a page's cards. Returned cards
// (listed again after being marked removed) count as Changed.
type PageResult struct {
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// Checkpoint is where the next run resumes a stream.
type Checkpoint struct {
	Stream     string    `json:"stream"`
	RunID      int64     `json:"run_id"`    // run that last moved it
	NextPage   int       `json:"next_page"` // 0 or 1: start of a walk
	TotalPages int       `json:"total_pages"`
	TotalItems int       `json:"total_items"`
	UpdatedAt  time.Time `json:"updated_at"`
	InProgress bool      `json:"in_progress"` // a walk has committed pages and not finished
}

// WalkSummary describes the open walk of a stream over every attempt (run)
// that committed pages to it.
type WalkSummary struct {
	WalkID       int64     `json:"walk_id"` // 0: no walk in progress
	StartedAt    time.Time `json:"started_at"`
	StartedRun   int64     `json:"started_run"`
	Runs         int       `json:"runs"`          // distinct runs that committed pages
	Pages        int       `json:"pages"`         // distinct page numbers committed
	LastPage     int       `json:"last_page"`     // highest page number committed
	TotalPages   int       `json:"total_pages"`   // last total_pages reported
	DistinctIDs  int       `json:"distinct_ids"`  // distinct card ids seen
	DuplicateIDs int       `json:"duplicate_ids"` // ids seen on more than one page
	FirstTotal   int       `json:"first_total"`   // total reported by the walk's first page
	LastTotal    int       `json:"last_total"`    // total reported by its latest page
	TotalChanged bool      `json:"total_changed"` // some page reported a different total
}

func streamOf(s string) string {
	if s == "" {
		return StreamCards
	}
	return s
}

// Checkpoint returns where the next run resumes stream. A stream never
// walked has NextPage 1.
func (w *Warehouse) Checkpoint(ctx context.Context, stream string) (Checkpoint, error) {
	stream = streamOf(stream)
	cp := Checkpoint{Stream: stream, NextPage: 1}
	var runID sql.NullInt64
	var updated string
	err := w.db.QueryRowContext(ctx, `SELECT run_id, next_page, total_pages, total_items, updated_at,
			EXISTS (SELECT 1 FROM sync_walks WHERE stream = ?1 AND finished_at IS NULL)
		FROM sync_checkpoints WHERE stream = ?1`, stream).
		Scan(&runID, &cp.NextPage, &cp.TotalPages, &cp.TotalItems, &updated, &cp.InProgress)
	if errors.Is(err, sql.ErrNoRows) {
		return cp, nil
	}
	if err != nil {
		return cp, fmt.Errorf("read checkpoint %s: %w", stream, err)
	}
	cp.RunID = runID.Int64
	cp.UpdatedAt = parseTime(updated)
	return cp, nil
}

// ResetCheckpoint abandons the open walk of stream (no removals are marked)
// so the next run starts at page 1.
func (w *Warehouse) ResetCheckpoint(ctx context.Context, stream string) error {
	stream = streamOf(stream)
	err := w.write(ctx, func(tx *sql.Tx) error {
		now := w.stamp()
		walkID, err := openWalk(ctx, tx, stream)
		if err != nil {
			return err
		}
		if walkID != 0 {
			if _, err := closeWalk(ctx, tx, walkID, 0, "reset", false, now); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE sync_checkpoints SET next_page = 1, updated_at = ? WHERE stream = ?`, now, stream)
		return err
	})
	if err != nil {
		return fmt.Errorf("reset checkpoint %s: %w", stream, err)
	}
	return nil
}

func openWalk(ctx context.Context, tx *sql.Tx, stream string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT walk_id FROM sync_walks WHERE stream = ? AND finished_at IS NULL`, stream).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find open walk: %w", err)
	}
	return id, nil
}

const (
	sqlCardGet = `SELECT data, removed_at IS NOT NULL,
		(SELECT max(version) FROM card_versions WHERE card_id = ?1)
		FROM cards WHERE card_id = ?1`
	// The WHERE clause keeps unchanged rows untouched (no write at all).
	sqlCardUpsert = `INSERT INTO cards (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run)
		VALUES (?1, ?2, ?3, ?3, ?3, NULL, ?4, ?4)
		ON CONFLICT (card_id) DO UPDATE SET
			data = excluded.data,
			updated_at = CASE WHEN cards.data IS NOT excluded.data THEN excluded.updated_at ELSE cards.updated_at END,
			removed_at = NULL,
			last_seen_at = excluded.last_seen_at,
			last_seen_run = excluded.last_seen_run
		WHERE cards.data IS NOT excluded.data OR cards.removed_at IS NOT NULL`
	sqlVersionClose  = `UPDATE card_versions SET valid_to = ? WHERE card_id = ? AND valid_to IS NULL`
	sqlVersionInsert = `INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data)
		VALUES (?, ?, ?, NULL, ?, ?, ?)`
	sqlSeen = `INSERT INTO walk_seen (walk_id, card_id, page, run_id, seen_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`
	sqlWalkTotal = `UPDATE sync_walks SET last_total = ? WHERE walk_id = ? AND last_total IS NOT ?`
	sqlAudit     = `INSERT INTO run_pages (run_id, stream, page, walk_id, fetched_at, committed_at,
				items, total_items, total_pages, duration_ms, body_sha256, cards_new, cards_changed, cards_unchanged)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, stream, page) DO UPDATE SET
				walk_id = excluded.walk_id, fetched_at = excluded.fetched_at, committed_at = excluded.committed_at,
				items = excluded.items, total_items = excluded.total_items, total_pages = excluded.total_pages,
				duration_ms = excluded.duration_ms, body_sha256 = excluded.body_sha256, cards_new = excluded.cards_new,
				cards_changed = excluded.cards_changed, cards_unchanged = excluded.cards_unchanged`
	sqlCheckpoint = `INSERT INTO sync_checkpoints (stream, run_id, next_page, total_pages, total_items, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (stream) DO UPDATE SET run_id = excluded.run_id, next_page = excluded.next_page,
				total_pages = excluded.total_pages, total_items = excluded.total_items, updated_at = excluded.updated_at`
	sqlRunCount = `UPDATE sync_runs SET
				pages = pages + 1, cards_seen = cards_seen + ?, cards_new = cards_new + ?,
				cards_changed = cards_changed + ?, cards_unchanged = cards_unchanged + ?,
				requests = requests + ?, retries = retries + ?, rate_limited = rate_limited + ?,
				auth_requests = auth_requests + ?, heartbeat_at = ?
			WHERE run_id = ?`
)

// pageStatements are the statements CommitPage runs for every page and
// card. They are prepared once when the writer opens: parsing them again
// for every page cost about a sixth of CommitPage's CPU. Inside a
// transaction, tx.StmtContext reuses them on the one writer connection.
type pageStatements struct {
	cardGet, cardUpsert, versionClose, versionInsert, seen *sql.Stmt
	walkTotal, audit, checkpoint, runCount                 *sql.Stmt
}

func preparePageStatements(ctx context.Context, db *sql.DB) (*pageStatements, error) {
	ps := &pageStatements{}
	for _, s := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&ps.cardGet, sqlCardGet}, {&ps.cardUpsert, sqlCardUpsert}, {&ps.versionClose, sqlVersionClose},
		{&ps.versionInsert, sqlVersionInsert}, {&ps.seen, sqlSeen}, {&ps.walkTotal, sqlWalkTotal},
		{&ps.audit, sqlAudit}, {&ps.checkpoint, sqlCheckpoint}, {&ps.runCount, sqlRunCount},
	} {
		st, err := db.PrepareContext(ctx, s.sql)
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*s.dst = st
	}
	return ps, nil
}

func (ps *pageStatements) close() {
	if ps == nil {
		return
	}
	for _, st := range []*sql.Stmt{ps.cardGet, ps.cardUpsert, ps.versionClose, ps.versionInsert, ps.seen,
		ps.walkTotal, ps.audit, ps.checkpoint, ps.runCount} {
		if st != nil {
			st.Close()
		}
	}
}

// CommitPage stores one page in one transaction: card upserts (unchanged
// cards are not rewritten), versions for new, changed and returned cards,
// the walk's seen ids, new top-level fields (regenerating cards_flat), the
// run_pages audit row, the checkpoint (next page = Number+1) and the run's
// counters. On error nothing is stored. Committing the same page twice
// reports its cards unchanged the second time.
func (w *Warehouse) CommitPage(ctx context.Context, runID int64, p Page) (PageResult, error) {
	var res PageResult
	stream := streamOf(p.Stream)
	if p.Number < 1 {
		return res, fmt.Errorf("commit page %d: page numbers start at 1", p.Number)
	}
	err := w.write(ctx, func(tx *sql.Tx) error {
		res = PageResult{}
		now := w.stamp()
		walkID, err := openWalk(ctx, tx, stream)
		if err != nil {
			return err
		}
		if walkID == 0 {
			r, err := tx.ExecContext(ctx, `INSERT INTO sync_walks (stream, started_at, started_run, first_total, last_total)
				VALUES (?, ?, ?, ?, ?)`, stream, now, runID, p.TotalItems, p.TotalItems)
			if err != nil {
				return fmt.Errorf("start walk: %w", err)
			}
			if walkID, err = r.LastInsertId(); err != nil {
				return err
			}
		} else if _, err := tx.StmtContext(ctx, w.page.walkTotal).ExecContext(ctx, p.TotalItems, walkID, p.TotalItems); err != nil {
			return fmt.Errorf("update walk: %w", err)
		}

		// Statements bound to the transaction are closed with it.
		get, upsert := tx.StmtContext(ctx, w.page.cardGet), tx.StmtContext(ctx, w.page.cardUpsert)
		vclose, vinsert := tx.StmtContext(ctx, w.page.versionClose), tx.StmtContext(ctx, w.page.versionInsert)
		seen := tx.StmtContext(ctx, w.page.seen)

		fields := map[string]map[string]bool{}
		var order []string
		for i, c := range p.Cards {
			if c.ID == "" {
				return fmt.Errorf("card %d on page %d: %w: empty id", i, p.Number, ErrBadData)
			}
			data, top, err := w.redact.Redact(c.Data)
			if err != nil {
				return fmt.Errorf("card %s: %w: %w", c.ID, ErrBadData, err)
			}
			for _, f := range top {
				if fields[f.name] == nil {
					fields[f.name] = map[string]bool{}
					order = append(order, f.name)
				}
				fields[f.name][f.typ] = true
			}
			var old sql.NullString
			var removed bool
			var version sql.NullInt64
			err = get.QueryRowContext(ctx, c.ID).Scan(&old, &removed, &version)
			exists := err == nil
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("card %s: read: %w", c.ID, err)
			}
			change := ""
			switch {
			case !exists:
				change = "new"
				res.New++
			case removed:
				change = "returned"
				res.Changed++
			case old.String != string(data):
				change = "changed"
				res.Changed++
			default:
				res.Unchanged++
			}
			if change != "" {
				if _, err := upsert.ExecContext(ctx, c.ID, string(data), now, runID); err != nil {
					return fmt.Errorf("card %s: upsert: %w", c.ID, err)
				}
				if exists {
					if _, err := vclose.ExecContext(ctx, now, c.ID); err != nil {
						return fmt.Errorf("card %s: close version: %w", c.ID, err)
					}
				}
				if _, err := vinsert.ExecContext(ctx, c.ID, version.Int64+1, now, runID, change, string(data)); err != nil {
					return fmt.Errorf("card %s: version: %w", c.ID, err)
				}
			}
			if _, err := seen.ExecContext(ctx, walkID, c.ID, p.Number, runID, now); err != nil {
				return fmt.Errorf("card %s: seen: %w", c.ID, err)
			}
		}
		if err := w.recordFields(ctx, tx, runID, now, order, fields); err != nil {
			return err
		}

		if _, err := tx.StmtContext(ctx, w.page.audit).ExecContext(ctx,
			runID, stream, p.Number, walkID, formatTime(orNow(p.FetchedAt, w.now)), now,
			len(p.Cards), p.TotalItems, p.TotalPages, p.Duration.Milliseconds(), p.BodySHA256,
			res.New, res.Changed, res.Unchanged); err != nil {
			return fmt.Errorf("audit page: %w", err)
		}
		if _, err := tx.StmtContext(ctx, w.page.checkpoint).ExecContext(ctx,
			stream, runID, p.Number+1, p.TotalPages, p.TotalItems, now); err != nil {
			return fmt.Errorf("advance checkpoint: %w", err)
		}
		r, err := tx.StmtContext(ctx, w.page.runCount).ExecContext(ctx,
			len(p.Cards), res.New, res.Changed, res.Unchanged,
			p.Requests, p.Retries, p.RateLimited, p.AuthRequests, now, runID)
		if err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return fmt.Errorf("run %d does not exist", runID)
		}
		return nil
	})
	if err != nil {
		return PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	return res, nil
}

func orNow(t time.Time, now func() time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t
}

// recordFields updates card_fields with the page's top-level fields and
// regenerates cards_flat when a new one appears.
func (w *Warehouse) recordFields(ctx context.Context, tx *sql.Tx, runID int64, now string, order []string, seen map[string]map[string]bool) error {
	if len(order) == 0 {
		return nil
	}
	type known struct {
		types   string
		lastRun int64
	}
	have := map[string]known{}
	rows, err := tx.QueryContext(ctx, `SELECT name, json_types, last_run FROM card_fields`)
	if err != nil {
		return fmt.Errorf("read fields: %w", err)
	}
	for rows.Next() {
		var name string
		var k known
		if err := rows.Scan(&name, &k.types, &k.lastRun); err != nil {
			rows.Close()
			return fmt.Errorf("read fields: %w", err)
		}
		have[name] = k
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read fields: %w", err)
	}
	added := false
	for _, name := range order {
		k, ok := have[name]
		types := map[string]bool{}
		for t := range seen[name] {
			types[t] = true
		}
		if ok {
			for t := range strings.SplitSeq(k.types, ",") {
				types[t] = true
			}
		}
		list := make([]string, 0, len(types))
		for t := range types {
			list = append(list, t)
		}
		slices.Sort(list)
		joined := strings.Join(list, ",")
		switch {
		case !ok:
			added = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at)
				VALUES (?, ?, ?, ?, ?)`, name, joined, runID, runID, now); err != nil {
				return fmt.Errorf("add field %q: %w", name, err)
			}
		case joined != k.types || k.lastRun != runID:
			if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET json_types = ?, last_run = ? WHERE name = ?`,
				joined, runID, name); err != nil {
				return fmt.Errorf("update field %q: %w", name, err)
			}
		}
	}
	if added {
		return regenerateFlat(ctx, tx)
	}
	return nil
}

// regenerateFlat recreates the cards_flat view with one column per known
// field, in the order fields first appeared.
func regenerateFlat(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM card_fields ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("regenerate cards_flat: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP VIEW IF EXISTS cards_flat"); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, flatViewSQL(names)); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	return nil
}

// flatViewSQL builds CREATE VIEW cards_flat. Field names come from the API,
// so they are quoted as identifiers and as string literals; a name that
// collides (case-insensitively) with card_id, removed_at or an earlier
// column gets a suffix.
func flatViewSQL(names []string) string {
	used := map[string]bool{"card_id": true, "removed_at": true}
	var b strings.Builder
	b.WriteString("CREATE VIEW cards_flat AS\nSELECT card_id")
	for _, n := range names {
		alias := n
		for i := 2; used[strings.ToLower(alias)]; i++ {
			alias = n + "_" + strconv.Itoa(i)
		}
		used[strings.ToLower(alias)] = true
		b.WriteString(",\n    ")
		if strings.ContainsAny(n, "\"\\") || strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 }) {
			// A JSON path label cannot hold a double quote: look the key up.
			b.WriteString("(SELECT value FROM json_each(cards.data) WHERE key = " + quoteLiteral(n) + ")")
		} else {
			b.WriteString("json_extract(data, " + quoteLiteral(`$."`+n+`"`) + ")")
		}
		b.WriteString(" AS " + quoteIdent(alias))
	}
	b.WriteString(",\n    removed_at\nFROM cards")
	return b.String()
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// WalkSummary reports on the open walk of stream (zero WalkSummary when none).
func (w *Warehouse) WalkSummary(ctx context.Context, stream string) (WalkSummary, error) {
	stream = streamOf(stream)
	var s WalkSummary
	var started string
	err := w.db.QueryRowContext(ctx, `SELECT walk_id, started_at, started_run, first_total, last_total
		FROM sync_walks WHERE stream = ? AND finished_at IS NULL`, stream).
		Scan(&s.WalkID, &started, &s.StartedRun, &s.FirstTotal, &s.LastTotal)
	if errors.Is(err, sql.ErrNoRows) {
		return WalkSummary{}, nil
	}
	if err != nil {
		return s, fmt.Errorf("walk summary %s: %w", stream, err)
	}
	s.StartedAt = parseTime(started)
	var changed int
	err = w.db.QueryRowContext(ctx, `SELECT
			(SELECT count(DISTINCT card_id) FROM walk_seen WHERE walk_id = ?1),
			(SELECT count(*) FROM (SELECT card_id FROM walk_seen WHERE walk_id = ?1 GROUP BY card_id HAVING count(DISTINCT page) > 1)),
			(SELECT count(DISTINCT page) FROM run_pages WHERE walk_id = ?1),
			(SELECT coalesce(max(page), 0) FROM run_pages WHERE walk_id = ?1),
			(SELECT count(DISTINCT run_id) FROM run_pages WHERE walk_id = ?1),
			(SELECT count(*) FROM run_pages WHERE walk_id = ?1 AND total_items IS NOT ?2),
			coalesce((SELECT total_pages FROM sync_checkpoints WHERE stream = ?3), 0)`,
		s.WalkID, s.FirstTotal, stream).
		Scan(&s.DistinctIDs, &s.DuplicateIDs, &s.Pages, &s.LastPage, &s.Runs, &changed, &s.TotalPages)
	if err != nil {
		return s, fmt.Errorf("walk summary %s: %w", stream, err)
	}
	s.TotalChanged = changed > 0 || s.LastTotal != s.FirstTotal
	return s, nil
}

// FinishWalk closes the open walk of stream and returns how many cards it
// confirmed removed.
//
// One walk missing a card is not proof that it is gone: with offset
// pagination a card removed before the cursor while another is added after
// it shifts a listed card out of the pages read, and no count notices. So
// removal takes two consecutive complete walks. When consistent (the caller
// saw every page and the ids add up), a current card that no attempt of the
// walk saw is either confirmed — it was already in removal_pending from an
// earlier consistent walk: it gets removed_at and a closing "removed"
// version and leaves removal_pending — or becomes pending (a removal_pending
// row, nothing else changes). Whatever the outcome, every card the walk saw
// leaves removal_pending, and an inconsistent walk adds and removes nothing.
// last_seen_at/last_seen_run of the cards seen are brought up to date and
// the checkpoint goes back to page 1. With no walk open it only resets the
// checkpoint.
func (w *Warehouse) FinishWalk(ctx context.Context, runID int64, stream string, consistent bool) (int, error) {
	stream = streamOf(stream)
	var removed int
	err := w.write(ctx, func(tx *sql.Tx) error {
		now := w.stamp()
		walkID, err := openWalk(ctx, tx, stream)
		if err != nil {
			return err
		}
		if walkID != 0 {
			outcome := "inconsistent"
			if consistent {
				outcome = "complete"
			}
			if removed, err = closeWalk(ctx, tx, walkID, runID, outcome, consistent, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sync_runs SET cards_removed = cards_removed + ?, walk_consistent = ? WHERE run_id = ?`,
			removed, boolInt(consistent), runID); err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sync_checkpoints (stream, run_id, next_page, updated_at) VALUES (?, ?, 1, ?)
			ON CONFLICT (stream) DO UPDATE SET next_page = 1, run_id = excluded.run_id, updated_at = excluded.updated_at`,
			stream, runID, now); err != nil {
			return fmt.Errorf("reset checkpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("finish walk %s: %w", stream, err)
	}
	return removed, nil
}

// PendingRemovals returns how many cards are awaiting removal confirmation:
// the last complete, consistent walk did not list them, and the next one
// marks them removed if it misses them too.
func (w *Warehouse) PendingRemovals(ctx context.Context) (int, error) {
	var n int
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM removal_pending`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending removals: %w", err)
	}
	return n, nil
}

// closeWalk records the walk's counts, stamps last_seen_* of the cards it
// saw, clears them from removal_pending, applies two-walk removal when
// consistent, and empties its walk_seen rows.
func closeWalk(ctx context.Context, tx *sql.Tx, walkID, runID int64, outcome string, consistent bool, now string) (int, error) {
	// last_seen_* are kept out of the per-page upsert so that unchanged cards
	// are never rewritten; one set-based update per walk brings them up to date.
	if _, err := tx.ExecContext(ctx, `UPDATE cards SET last_seen_at = s.seen_at, last_seen_run = s.run_id
		FROM (SELECT card_id, max(seen_at) AS seen_at, max(run_id) AS run_id FROM walk_seen WHERE walk_id = ? GROUP BY card_id) AS s
		WHERE cards.card_id = s.card_id AND (cards.last_seen_at < s.seen_at OR cards.last_seen_run < s.run_id)`, walkID); err != nil {
		return 0, fmt.Errorf("stamp last seen: %w", err)
	}
	// Listed again, by any walk (even an inconsistent or reset one): alive.
	if _, err := tx.ExecContext(ctx, `DELETE FROM removal_pending
		WHERE card_id IN (SELECT card_id FROM walk_seen WHERE walk_id = ?)`, walkID); err != nil {
		return 0, fmt.Errorf("clear pending removals of seen cards: %w", err)
	}
	removed := 0
	if consistent {
		// Current cards this walk did not see, and among them the ones an
		// earlier consistent walk missed too.
		const missed = `SELECT card_id FROM cards WHERE removed_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM walk_seen s WHERE s.walk_id = ?1 AND s.card_id = cards.card_id)`
		const gone = missed + ` AND EXISTS (SELECT 1 FROM removal_pending p WHERE p.card_id = cards.card_id AND p.walk_id < ?1)`
		if _, err := tx.ExecContext(ctx, `UPDATE card_versions SET valid_to = ?2
			WHERE valid_to IS NULL AND card_id IN (`+gone+`)`, walkID, now); err != nil {
			return 0, fmt.Errorf("close versions of removed cards: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data)
			SELECT c.card_id, (SELECT max(version) FROM card_versions v WHERE v.card_id = c.card_id) + 1, ?2, NULL, ?3, 'removed', c.data
			FROM cards c WHERE c.card_id IN (`+gone+`)`, walkID, now, runID); err != nil {
			return 0, fmt.Errorf("version removed cards: %w", err)
		}
		r, err := tx.ExecContext(ctx, `UPDATE cards SET removed_at = ?2 WHERE card_id IN (`+gone+`)`, walkID, now)
		if err != nil {
			return 0, fmt.Errorf("mark removed cards: %w", err)
		}
		n, _ := r.RowsAffected()
		removed = int(n)
		// Confirmed removals leave the pending list (their removed_at is set,
		// so they are no longer in missed); the other misses join it.
		if _, err := tx.ExecContext(ctx, `DELETE FROM removal_pending WHERE EXISTS
			(SELECT 1 FROM cards c WHERE c.card_id = removal_pending.card_id AND c.removed_at IS NOT NULL)`); err != nil {
			return 0, fmt.Errorf("clear confirmed removals: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO removal_pending (card_id, walk_id, missed_at)
			SELECT card_id, ?1, ?2 FROM (`+missed+`) WHERE true
			ON CONFLICT (card_id) DO NOTHING`, walkID, now); err != nil {
			return 0, fmt.Errorf("record pending removals: %w", err)
		}
	}
	var finishedRun any
	if runID != 0 {
		finishedRun = runID
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sync_walks SET finished_at = ?2, finished_run = ?3, outcome = ?4, removed = ?5,
			pages = (SELECT count(DISTINCT page) FROM run_pages WHERE walk_id = ?1),
			distinct_ids = (SELECT count(DISTINCT card_id) FROM walk_seen WHERE walk_id = ?1),
			duplicate_ids = (SELECT count(*) FROM (SELECT card_id FROM walk_seen WHERE walk_id = ?1 GROUP BY card_id HAVING count(DISTINCT page) > 1)),
			pending_removals = (SELECT count(*) FROM removal_pending)
		WHERE walk_id = ?1`, walkID, now, finishedRun, outcome, removed); err != nil {
		return 0, fmt.Errorf("close walk: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM walk_seen WHERE walk_id = ?`, walkID); err != nil {
		return 0, fmt.Errorf("clear walk: %w", err)
	}
	return removed, nil
}
