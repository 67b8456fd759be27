package load

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
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
	// Rejected are the page's items the client could not read as cards;
	// they go to rejected_cards.
	Rejected   []Rejection
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

// Rejection is a page item that cannot be stored as a card.
type Rejection struct {
	// Index is the item's position in the page's data array.
	Index int
	// CardID is the card's id when one could be read, else "". A rejected
	// item with an id counts as listed by the walk, so the card it names is
	// never marked removed because of it.
	CardID string
	// Reason says why it was set aside.
	Reason string
	// Data is the item as received; it is redacted (and cut to
	// MaxRejectedBytes) before it is stored.
	Data []byte
}

// PageResult counts what CommitPage did with a page's cards. Returned cards
// (listed again after being marked removed) count as Changed.
type PageResult struct {
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	// Rejected counts the items stored in rejected_cards: those handed in
	// with the page and the cards the warehouse could not store (nested
	// deeper than SQLite's JSON allows, not UTF-8).
	Rejected int `json:"rejected"`
	// Rejections are those items, with Data nil.
	Rejections []Rejection `json:"-"`
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
				cards_rejected = cards_rejected + ?,
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
// rejected items in rejected_cards, the walk's seen ids (rejected items
// included), new top-level fields (regenerating cards_flat), the run_pages
// audit row, the checkpoint (next page = Number+1) and the run's counters.
// A card the warehouse cannot store is quarantined, never an error: the rest
// of its page commits. On error nothing is stored. Committing the same page
// twice reports its cards unchanged the second time.
func (w *Warehouse) CommitPage(ctx context.Context, runID int64, p Page) (PageResult, error) {
	var res PageResult
	stream := streamOf(p.Stream)
	if p.Number < 1 {
		return res, fmt.Errorf("commit page %d: page numbers start at 1", p.Number)
	}
	// Redaction is pure: do it before the write transaction.
	type prepared struct {
		id     string
		data   []byte
		fields []fieldSeen
	}
	cards := make([]prepared, 0, len(p.Cards))
	rejected := append([]Rejection(nil), p.Rejected...)
	for i, c := range p.Cards {
		if c.ID == "" {
			rejected = append(rejected, Rejection{Index: i, Reason: "empty card id", Data: c.Data})
			continue
		}
		data, fields, err := w.redactCard(c.Data)
		if err != nil {
			rejected = append(rejected, Rejection{Index: i, CardID: c.ID, Reason: "cannot be stored: " + err.Error(), Data: c.Data})
			continue
		}
		cards = append(cards, prepared{id: c.ID, data: data, fields: fields})
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
		for _, c := range cards {
			for _, f := range c.fields {
				if fields[f.name] == nil {
					fields[f.name] = map[string]bool{}
					order = append(order, f.name)
				}
				fields[f.name][f.typ] = true
			}
			var old sql.NullString
			var removed bool
			var version sql.NullInt64
			err = get.QueryRowContext(ctx, c.id).Scan(&old, &removed, &version)
			exists := err == nil
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("card %s: read: %w", c.id, err)
			}
			change := ""
			switch {
			case !exists:
				change = "new"
				res.New++
			case removed:
				change = "returned"
				res.Changed++
			case old.String != string(c.data):
				change = "changed"
				res.Changed++
			default:
				res.Unchanged++
			}
			if change != "" {
				if _, err := upsert.ExecContext(ctx, c.id, string(c.data), now, runID); err != nil {
					return fmt.Errorf("card %s: upsert: %w", c.id, err)
				}
				if exists {
					if _, err := vclose.ExecContext(ctx, now, c.id); err != nil {
						return fmt.Errorf("card %s: close version: %w", c.id, err)
					}
				}
				if _, err := vinsert.ExecContext(ctx, c.id, version.Int64+1, now, runID, change, string(c.data)); err != nil {
					return fmt.Errorf("card %s: version: %w", c.id, err)
				}
			}
			if _, err := seen.ExecContext(ctx, walkID, c.id, p.Number, runID, now); err != nil {
				return fmt.Errorf("card %s: seen: %w", c.id, err)
			}
		}
		for _, r := range rejected {
			if err := w.quarantine(ctx, tx, runID, p.Number, r, now); err != nil {
				return err
			}
			// A rejected item counts as listed: by its id when it has one,
			// else by its place, so that the walk's distinct count still
			// adds up to the API's total.
			id := r.CardID
			if id == "" {
				id = anonymousID(p.Number, r.Index)
			}
			if _, err := seen.ExecContext(ctx, walkID, id, p.Number, runID, now); err != nil {
				return fmt.Errorf("rejected item %d: seen: %w", r.Index, err)
			}
			r.Data = nil
			res.Rejections = append(res.Rejections, r)
		}
		res.Rejected = len(res.Rejections)
		if err := w.recordFields(ctx, tx, runID, now, order, fields); err != nil {
			return err
		}

		if _, err := tx.StmtContext(ctx, w.page.audit).ExecContext(ctx,
			runID, stream, p.Number, walkID, formatTime(orNow(p.FetchedAt, w.now)), now,
			len(p.Cards)+len(p.Rejected), p.TotalItems, p.TotalPages, p.Duration.Milliseconds(), p.BodySHA256,
			res.New, res.Changed, res.Unchanged); err != nil {
			return fmt.Errorf("audit page: %w", err)
		}
		if _, err := tx.StmtContext(ctx, w.page.checkpoint).ExecContext(ctx,
			stream, runID, p.Number+1, p.TotalPages, p.TotalItems, now); err != nil {
			return fmt.Errorf("advance checkpoint: %w", err)
		}
		r, err := tx.StmtContext(ctx, w.page.runCount).ExecContext(ctx,
			len(cards), res.New, res.Changed, res.Unchanged, len(rejected),
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

// anonymousID stands for a rejected item with no readable id in walk_seen.
// Card ids never hold control characters, so it cannot meet a real one.
func anonymousID(page, index int) string {
	return "\x00item " + strconv.Itoa(page) + ":" + strconv.Itoa(index)
}

func orNow(t time.Time, now func() time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t
}
