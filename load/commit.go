package load

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Page is one fetched page of a stream, committed by a WalkWriter (or
// CommitPage) in one transaction with the pages buffered before it.
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
	// Counters since the previous page, added to the run's totals.
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

// PageResult says what became of one page: how its cards compare with the
// warehouse, and what the call that returned it committed. Returned cards
// (listed again after being marked removed) count as Changed.
type PageResult struct {
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	// Rejected counts the items stored in rejected_cards: those handed in
	// with the page and the cards the warehouse could not store (nested
	// deeper than SQLite's JSON allows, not UTF-8, an id used twice).
	Rejected int `json:"rejected"`
	// Rejections are those items, with Data nil.
	Rejections []Rejection `json:"-"`
	// Committed is what the call made durable: this page together with
	// the pages buffered before it, or nothing (Pages 0) when the page was
	// buffered because it changes nothing.
	Committed Batch `json:"committed"`
}

// Batch is what one commit made durable: consecutive pages, committed in
// one transaction together with the checkpoint that follows them.
type Batch struct {
	Pages     int `json:"pages"`
	FirstPage int `json:"first_page"`
	LastPage  int `json:"last_page"`
	// TotalPages and TotalItems are what the last page reported.
	TotalPages int `json:"total_pages"`
	TotalItems int `json:"total_items"`
	// Cards counts the cards stored or compared (rejected items excluded).
	Cards     int `json:"cards"`
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Rejected  int `json:"rejected"`
}

func (b *Batch) add(p *preparedPage) {
	if b.Pages == 0 {
		b.FirstPage = p.number
	}
	b.Pages++
	b.LastPage = p.number
	b.TotalPages, b.TotalItems = p.totalPages, p.totalItems
	b.Cards += p.cards
	b.New += p.res.New
	b.Changed += p.res.Changed
	b.Unchanged += p.res.Unchanged
	b.Rejected += p.res.Rejected
}

const (
	// sqlCardHashes compares a page's cards with the warehouse in one
	// query: ?1 is the JSON array of the page's ids.
	sqlCardHashes = `SELECT card_id, data_hash, removed_at IS NOT NULL FROM card_state
		WHERE card_id IN (SELECT value FROM json_each(?1))`
	// sqlCardGet re-reads, inside the write transaction, a card about to be
	// written. A row stored without a hash is compared by its data.
	sqlCardGet = `SELECT data_hash, removed_at IS NOT NULL, CASE WHEN data_hash IS NULL THEN data = ?2 ELSE 0 END,
		(SELECT max(version) FROM card_versions WHERE card_id = ?1)
		FROM card_state WHERE card_id = ?1`
	sqlCardUpsert = `INSERT INTO card_state (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, data_hash)
		VALUES (?1, ?2, ?3, ?3, ?3, NULL, ?4, ?4, ?5)
		ON CONFLICT (card_id) DO UPDATE SET
			data = excluded.data,
			data_hash = excluded.data_hash,
			updated_at = CASE WHEN card_state.data IS NOT excluded.data THEN excluded.updated_at ELSE card_state.updated_at END,
			removed_at = NULL,
			last_seen_at = excluded.last_seen_at,
			last_seen_run = excluded.last_seen_run`
	sqlCardRehash    = `UPDATE card_state SET data_hash = ?2 WHERE card_id = ?1`
	sqlVersionClose  = `UPDATE card_versions SET valid_to = ? WHERE card_id = ? AND valid_to IS NULL`
	sqlVersionInsert = `INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data)
		VALUES (?, ?, ?, NULL, ?, ?, ?)`
	sqlSeen = `INSERT INTO walk_seen (walk_id, page, run_id, ids) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (walk_id, page) DO UPDATE SET run_id = excluded.run_id, ids = excluded.ids`
	sqlWalkUpdate = `UPDATE sync_walks SET
			last_total = ?2,
			pages = (SELECT count(*) FROM walk_seen WHERE walk_id = ?1),
			last_page = max(last_page, ?3),
			runs = runs + (last_run IS NOT ?4),
			last_run = ?4,
			total_changed = max(total_changed, ?5)
		WHERE walk_id = ?1`
	sqlAudit = `INSERT INTO run_pages (run_id, stream, page, walk_id, fetched_at, committed_at,
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
				pages = pages + ?, cards_seen = cards_seen + ?, cards_new = cards_new + ?,
				cards_changed = cards_changed + ?, cards_unchanged = cards_unchanged + ?,
				cards_rejected = cards_rejected + ?,
				requests = requests + ?, retries = retries + ?, rate_limited = rate_limited + ?,
				auth_requests = auth_requests + ?, heartbeat_at = ?
			WHERE run_id = ?`
)

// pageStatements are the statements a commit runs for every page and
// card. They are prepared once when the writer opens: parsing them again
// for every page cost about a sixth of CommitPage's CPU. Inside a
// transaction, tx.StmtContext reuses them on the one writer connection.
type pageStatements struct {
	cardHashes, cardGet, cardUpsert, cardRehash, versionClose, versionInsert, seen *sql.Stmt
	walkUpdate, audit, checkpoint, runCount                                        *sql.Stmt
}

func (ps *pageStatements) all() []**sql.Stmt {
	return []**sql.Stmt{&ps.cardHashes, &ps.cardGet, &ps.cardUpsert, &ps.cardRehash, &ps.versionClose, &ps.versionInsert,
		&ps.seen, &ps.walkUpdate, &ps.audit, &ps.checkpoint, &ps.runCount}
}

func preparePageStatements(ctx context.Context, db *sql.DB) (*pageStatements, error) {
	ps := &pageStatements{}
	text := []string{sqlCardHashes, sqlCardGet, sqlCardUpsert, sqlCardRehash, sqlVersionClose, sqlVersionInsert,
		sqlSeen, sqlWalkUpdate, sqlAudit, sqlCheckpoint, sqlRunCount}
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
}

// CommitPage stores one page now, in one transaction: card writes
// (unchanged cards cost a hash compare, not a write), versions for new,
// changed and returned cards, rejected items in rejected_cards, the page's
// seen ids (rejected items included), new top-level fields (regenerating
// cards_flat), a run_pages audit row when the page changed something, the
// checkpoint (next page = Number+1) and the run's counters. A card the
// warehouse cannot store is quarantined, never an error: the rest of its
// page commits. On error nothing is stored. Committing the same page twice
// reports its cards unchanged the second time. A walk uses a WalkWriter,
// which commits pages that change nothing in batches.
func (w *Warehouse) CommitPage(ctx context.Context, runID int64, p Page) (PageResult, error) {
	pp, err := w.preparePage(ctx, p)
	if err != nil {
		return PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	b, err := w.commitBatch(ctx, runID, streamOf(p.Stream), []*preparedPage{pp})
	if err != nil {
		return PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	res := pp.res
	res.Committed = b
	return res, nil
}

// preparedPage is a page redacted and compared with the warehouse, ready to
// commit. A page that changes nothing keeps only its ids and counters.
type preparedPage struct {
	number, totalPages, totalItems int
	fetchedAt                      time.Time
	duration                       time.Duration
	bodySHA256                     string
	requests, retries, limited     int64
	authRequests                   int64
	// items is how many items the page held (cards and rejected).
	items int
	// cards counts the cards stored or compared (sync_runs.cards_seen).
	cards int
	// ids is the JSON array of the ids the page listed, rejected items
	// included (walk_seen.ids).
	ids string
	// writes are the cards to store: new, changed or returned.
	writes []cardWrite
	// rejected are the items to quarantine, Data included.
	rejected []Rejection
	fields   fieldSet
	res      PageResult
}

// changes says whether committing the page writes more than bookkeeping.
func (p *preparedPage) changes() bool { return len(p.writes) > 0 || len(p.rejected) > 0 }

// cardWrite is a card to store and why.
type cardWrite struct {
	id     string
	data   string // redacted, canonical JSON
	hash   []byte
	change string // new, changed, returned (as classified before the write)
}

// hashLen is how many bytes of SHA-256 card_state.data_hash keeps: 128 bits
// tell two versions of a card apart with no practical chance of a collision.
const hashLen = 16

func dataHash(data []byte) []byte {
	sum := sha256.Sum256(data)
	return sum[:hashLen:hashLen]
}

// preparePage redacts the page's cards (pure, outside any transaction),
// sets aside what cannot be stored, and compares the cards with the
// warehouse in one query.
func (w *Warehouse) preparePage(ctx context.Context, p Page) (*preparedPage, error) {
	if p.Number < 1 {
		return nil, fmt.Errorf("page numbers start at 1, got %d", p.Number)
	}
	pp := &preparedPage{
		number: p.Number, totalPages: p.TotalPages, totalItems: p.TotalItems,
		fetchedAt: orNow(p.FetchedAt, w.now), duration: p.Duration, bodySHA256: p.BodySHA256,
		requests: p.Requests, retries: p.Retries, limited: p.RateLimited, authRequests: p.AuthRequests,
		items: len(p.Cards) + len(p.Rejected),
	}
	type redacted struct {
		id   string
		data []byte
		hash []byte
	}
	cards := make([]redacted, 0, len(p.Cards))
	ids := make([]string, 0, pp.items)
	rejected := append([]Rejection(nil), p.Rejected...)
	first := make(map[string]int, len(p.Cards))
	for i, c := range p.Cards {
		if c.ID == "" {
			rejected = append(rejected, Rejection{Index: i, Reason: "empty card id", Data: c.Data})
			continue
		}
		if j, dup := first[c.ID]; dup {
			rejected = append(rejected, Rejection{Index: i, CardID: c.ID, Reason: fmt.Sprintf("card id already used by data[%d] on this page", j), Data: c.Data})
			continue
		}
		first[c.ID] = i
		data, fields, err := w.redactCard(c.Data)
		if err != nil {
			rejected = append(rejected, Rejection{Index: i, CardID: c.ID, Reason: "cannot be stored: " + err.Error(), Data: c.Data})
			continue
		}
		for _, f := range fields {
			pp.fields.add(f.name, f.typ)
		}
		cards = append(cards, redacted{id: c.ID, data: data, hash: dataHash(data)})
		ids = append(ids, c.ID)
	}
	for _, r := range rejected {
		// A rejected item counts as listed: by its id when it has one, else
		// by its place, so that the walk's distinct count still adds up to
		// the API's total.
		id := r.CardID
		if id == "" {
			id = anonymousID(p.Number, r.Index)
		}
		ids = append(ids, id)
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("page ids: %w", err)
	}
	pp.ids = string(b)
	pp.cards = len(cards)
	pp.rejected = rejected
	pp.res.Rejected = len(rejected)
	for _, r := range rejected {
		r.Data = nil
		pp.res.Rejections = append(pp.res.Rejections, r)
	}
	if len(cards) == 0 {
		return pp, nil
	}

	type stored struct {
		hash    []byte
		removed bool
	}
	have := make(map[string]stored, len(cards))
	rows, err := w.page.cardHashes.QueryContext(ctx, pp.ids)
	if err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	for rows.Next() {
		var id string
		var s stored
		if err := rows.Scan(&id, &s.hash, &s.removed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("compare cards: %w", err)
		}
		have[id] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	for _, c := range cards {
		s, ok := have[c.id]
		change := ""
		switch {
		case !ok:
			change = "new"
			pp.res.New++
		case s.removed:
			change = "returned"
			pp.res.Changed++
		case string(s.hash) != string(c.hash):
			change = "changed"
			pp.res.Changed++
		default:
			pp.res.Unchanged++
		}
		if change != "" {
			pp.writes = append(pp.writes, cardWrite{id: c.id, data: string(c.data), hash: c.hash, change: change})
		}
	}
	return pp, nil
}

// commitBatch commits pages (in the order given) in one transaction: the
// cards they write, their seen ids, the walk's running summary, the
// checkpoint after the last of them and the run's counters, once.
func (w *Warehouse) commitBatch(ctx context.Context, runID int64, stream string, pages []*preparedPage) (Batch, error) {
	var batch Batch
	if len(pages) == 0 {
		return batch, nil
	}
	err := w.write(ctx, func(tx *sql.Tx) error {
		batch = Batch{}
		now := w.stamp()
		last := pages[len(pages)-1]
		walkID, firstTotal, err := openWalkTotal(ctx, tx, stream)
		if err != nil {
			return err
		}
		if walkID == 0 {
			firstTotal = pages[0].totalItems
			r, err := tx.ExecContext(ctx, `INSERT INTO sync_walks (stream, started_at, started_run, first_total, last_total)
				VALUES (?, ?, ?, ?, ?)`, stream, now, runID, firstTotal, firstTotal)
			if err != nil {
				return fmt.Errorf("start walk: %w", err)
			}
			if walkID, err = r.LastInsertId(); err != nil {
				return err
			}
		}
		seen := tx.StmtContext(ctx, w.page.seen)
		var fields fieldSet
		totalChanged, maxPage := false, 0
		var requests, retries, limited, auth int64
		for _, p := range pages {
			if p.changes() {
				if err := w.writePage(ctx, tx, runID, stream, walkID, p, now); err != nil {
					return err
				}
			}
			if _, err := seen.ExecContext(ctx, walkID, p.number, runID, p.ids); err != nil {
				return fmt.Errorf("page %d: seen ids: %w", p.number, err)
			}
			fields.merge(&p.fields)
			totalChanged = totalChanged || p.totalItems != firstTotal
			maxPage = max(maxPage, p.number)
			requests += p.requests
			retries += p.retries
			limited += p.limited
			auth += p.authRequests
			batch.add(p)
		}
		if err := w.recordFields(ctx, tx, runID, now, fields.order, fields.types); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, w.page.walkUpdate).ExecContext(ctx,
			walkID, last.totalItems, maxPage, runID, boolInt(totalChanged)); err != nil {
			return fmt.Errorf("update walk: %w", err)
		}
		if _, err := tx.StmtContext(ctx, w.page.checkpoint).ExecContext(ctx,
			stream, runID, last.number+1, last.totalPages, last.totalItems, now); err != nil {
			return fmt.Errorf("advance checkpoint: %w", err)
		}
		r, err := tx.StmtContext(ctx, w.page.runCount).ExecContext(ctx,
			batch.Pages, batch.Cards, batch.New, batch.Changed, batch.Unchanged, batch.Rejected,
			requests, retries, limited, auth, now, runID)
		if err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return fmt.Errorf("run %d does not exist", runID)
		}
		return nil
	})
	if err != nil {
		return Batch{}, err
	}
	return batch, nil
}

// writePage stores a page's new, changed and returned cards with their
// versions, quarantines its rejected items and writes its audit row. A card
// found unchanged after all (stored before data_hash existed) only gets its
// hash; the page's counts follow.
func (w *Warehouse) writePage(ctx context.Context, tx *sql.Tx, runID int64, stream string, walkID int64, p *preparedPage, now string) error {
	get, upsert := tx.StmtContext(ctx, w.page.cardGet), tx.StmtContext(ctx, w.page.cardUpsert)
	vclose, vinsert := tx.StmtContext(ctx, w.page.versionClose), tx.StmtContext(ctx, w.page.versionInsert)
	res := &p.res
	for _, c := range p.writes {
		var hash []byte
		var removed, sameData bool
		var version sql.NullInt64
		err := get.QueryRowContext(ctx, c.id, c.data).Scan(&hash, &removed, &sameData, &version)
		exists := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("card %s: read: %w", c.id, err)
		}
		change := ""
		switch {
		case !exists:
			change = "new"
		case removed:
			change = "returned"
		case hash == nil && sameData:
			if _, err := tx.StmtContext(ctx, w.page.cardRehash).ExecContext(ctx, c.id, c.hash); err != nil {
				return fmt.Errorf("card %s: hash: %w", c.id, err)
			}
		case string(hash) != string(c.hash):
			change = "changed"
		}
		if change != c.change {
			// Counted as c.change when the page was compared; the write
			// transaction has the last word.
			res.count(c.change, -1)
			res.count(change, +1)
		}
		if change == "" {
			continue
		}
		if _, err := upsert.ExecContext(ctx, c.id, c.data, now, runID, c.hash); err != nil {
			return fmt.Errorf("card %s: upsert: %w", c.id, err)
		}
		if exists {
			if _, err := vclose.ExecContext(ctx, now, c.id); err != nil {
				return fmt.Errorf("card %s: close version: %w", c.id, err)
			}
		}
		if _, err := vinsert.ExecContext(ctx, c.id, version.Int64+1, now, runID, change, c.data); err != nil {
			return fmt.Errorf("card %s: version: %w", c.id, err)
		}
	}
	for _, r := range p.rejected {
		if err := w.quarantine(ctx, tx, runID, p.number, r, now); err != nil {
			return err
		}
	}
	if _, err := tx.StmtContext(ctx, w.page.audit).ExecContext(ctx,
		runID, stream, p.number, walkID, formatTime(p.fetchedAt), now,
		p.items, p.totalItems, p.totalPages, p.duration.Milliseconds(), p.bodySHA256,
		res.New, res.Changed, res.Unchanged); err != nil {
		return fmt.Errorf("audit page: %w", err)
	}
	return nil
}

// count adds d to the counter of a change ("" is unchanged).
func (r *PageResult) count(change string, d int) {
	switch change {
	case "new":
		r.New += d
	case "changed", "returned":
		r.Changed += d
	default:
		r.Unchanged += d
	}
}

// fieldSet collects top-level fields and their JSON types in order of first
// appearance.
type fieldSet struct {
	order []string
	types map[string]map[string]bool
}

func (s *fieldSet) add(name, typ string) {
	if s.types == nil {
		s.types = map[string]map[string]bool{}
	}
	t := s.types[name]
	if t == nil {
		t = map[string]bool{}
		s.types[name] = t
		s.order = append(s.order, name)
	}
	t[typ] = true
}

func (s *fieldSet) merge(o *fieldSet) {
	for _, name := range o.order {
		for typ := range o.types[name] {
			s.add(name, typ)
		}
	}
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
