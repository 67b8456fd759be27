package load

import (
	"strconv"
	"time"

	"github.com/cardsync/cardsync/load/internal/hashform"
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
	// Anomaly, when not "", is why the walk cannot trust this page (one of
	// the page reasons of WalkReasons: the client's extract.Anomaly). The
	// commit records it and the page number on the open walk
	// (sync_walks.inconsistent_reason and inconsistent_pages), in the same
	// transaction as the page, so a resumed walk still knows.
	Anomaly string
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
// warehouse, and what the call that returned it committed. Changed counts
// content changes only; Returned counts the cards listed again after being
// marked removed (card_versions.change 'returned'), whatever their content.
type PageResult struct {
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Returned  int `json:"returned"`
	Unchanged int `json:"unchanged"`
	// Rejected counts the items stored in rejected_cards: those handed in
	// with the page and the cards the warehouse could not store (nested
	// deeper than SQLite's JSON allows, not UTF-8, an id used twice).
	Rejected int `json:"rejected"`
	// Secrets counts the strings, keys and numbers of the page's items in
	// which a secret was replaced (PageItems.Secrets).
	Secrets int `json:"secrets_redacted"`
	// RuleCounts are the page's other counters (PageItems.Counts).
	RuleCounts
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
	Returned  int `json:"returned"`
	Unchanged int `json:"unchanged"`
	Rejected  int `json:"rejected"`
	// Secrets is the sum of the pages' PageResult.Secrets.
	Secrets int `json:"secrets_redacted"`
	// RuleCounts are the sums of the pages' RuleCounts.
	RuleCounts
}

// dataHash is the change hash of data (hashform.Hash).
func dataHash(data []byte) []byte { return hashform.Hash(data) }

// anonymousID stands for a rejected item with no readable id in walk_seen.
// Card ids never hold control characters, so it cannot meet a real one.
func anonymousID(page, index int) string {
	return "\x00item " + strconv.Itoa(page) + ":" + strconv.Itoa(index)
}
