package schema

//go:generate go run ./gendocs -root ..

// Kind says whether an object is a table or a view.
type Kind string

// The kinds of schema objects.
const (
	KindTable Kind = "table"
	KindView  Kind = "view"
)

// Units of Column.Unit. They are words for people (column_docs, the
// README); PintUnit gives the Pint name Datasette understands, when there
// is one.
const (
	UnitCents        = "cents"
	UnitCurrency     = "currency units"
	UnitSeconds      = "seconds"
	UnitMilliseconds = "milliseconds"
	UnitBytes        = "bytes"
)

// PintUnit returns the Pint unit name of a Column.Unit (Datasette's
// metadata "units"), or "" when Pint has none (money has no Pint unit).
func PintUnit(unit string) string {
	switch unit {
	case UnitSeconds:
		return "second"
	case UnitMilliseconds:
		return "millisecond"
	case UnitBytes:
		return "byte"
	}
	return ""
}

// Object documents one table or view of the warehouse.
type Object struct {
	Name string
	Kind Kind
	// RowPer completes "one row per ...".
	RowPer string
	// Description says what the object is for.
	Description string
	// Internal objects are not for analysts: their columns are not
	// documented, Datasette hides them, and column_docs has no rows for them.
	Internal bool
	// Generated, when set, says what further columns the object has beyond
	// Columns (cards_flat: one per card field, listed in card_fields).
	Generated string
	Columns   []Column
}

// Column documents one column of a public object.
type Column struct {
	Name        string
	Description string
	// Unit is one of the Unit constants, or "" (text, times, identifiers,
	// counts, flags).
	Unit string
	// Example is a typical value as SQL shows it ("" when none helps).
	Example string
}

func col(name, description, unit, example string) Column {
	return Column{Name: name, Description: description, Unit: unit, Example: example}
}

// Time column descriptions share this suffix.
const utc = " (UTC text YYYY-MM-DDTHH:MM:SSZ)"

// Objects returns the documentation of every table and view of the
// warehouse at the latest schema version, public ones first, in the order
// the README lists them. It is the one source of column_docs, the README's
// schema section and datasette/metadata.json; a test compares it with the
// migrated schema. Each call returns a new slice.
func Objects() []Object {
	const t = "2025-03-01T12:00:00Z"
	objects := []Object{
		{Name: "cards", Kind: KindView, RowPer: "card ever seen (never deleted)",
			Description: "Every card the API ever listed, with its latest redacted JSON. A view over the internal table card_state since schema 3, with the columns of the former table.",
			Columns: []Column{
				col("card_id", "The API's card id, as text (integers and strings alike).", "", "1003"),
				col("data", "The card's latest JSON after redaction (card numbers masked to first 6 + last 4 digits, cvv/pin fields dropped), canonical.", "", `{"id":1003,"status":"active",…}`),
				col("first_seen_at", "When the card was first stored"+utc+".", "", t),
				col("last_seen_at", "When the last complete walk that listed the card finished"+utc+"; see the README.", "", t),
				col("updated_at", "When data last changed"+utc+".", "", t),
				col("removed_at", "When the card was marked removed (missed by two consecutive complete, consistent walks); NULL while listed"+utc+".", "", ""),
				col("first_seen_run", "sync_runs.run_id of the run that first stored the card.", "", "1"),
				col("last_seen_run", "sync_runs.run_id of the last complete walk's run that listed the card.", "", "12"),
			}},
		{Name: "card_versions", Kind: KindTable, RowPer: "card content change",
			Description: "Card history: a row when a card first appears, its content changes, it is marked removed or it comes back. The current row has valid_to NULL.",
			Columns: []Column{
				col("card_id", "The card (cards.card_id).", "", "1003"),
				col("version", "1 for the first row of a card, then 2, 3, …", "", "2"),
				col("valid_from", "When this version was stored"+utc+".", "", t),
				col("valid_to", "When the next version replaced it; NULL for the current version"+utc+".", "", ""),
				col("run_id", "The run that stored this version (sync_runs.run_id).", "", "3"),
				col("change", "Why the row exists: new, changed, removed or returned.", "", "changed"),
				col("data", "The card's redacted JSON as of this version.", "", `{"id":1003,"status":"frozen",…}`),
			}},
		{Name: "card_fields", Kind: KindTable, RowPer: "top-level card field ever seen",
			Description: "Every top-level field the API has sent in a card, with the JSON types seen; each is a column of cards_flat.",
			Columns: []Column{
				col("name", "The field name as sent (after masking card numbers in it).", "", "status"),
				col("json_types", "The JSON types seen, comma-separated and sorted (array, boolean, null, number, object, string).", "", "null,string"),
				col("first_run", "The run that first saw the field.", "", "1"),
				col("last_run", "The last run that stored a card with the field.", "", "12"),
				col("first_seen_at", "When the field was first seen"+utc+".", "", t),
				col("column_name", "The field's column in cards_flat (unique case-insensitively; a clash gets a _2 suffix).", "", "status"),
				col("in_flat_view", "1 when the field is a column of cards_flat; 0 once the view holds its 1,900 fields (the field stays in data).", "", "1"),
			}},
		{Name: "account_snapshots", Kind: KindTable, RowPer: "account read",
			Description: "The account (/account) as read at the start of each run. Amounts are integer minor units (cents), exact; account_balances shows them as decimal text.",
			Columns: []Column{
				col("snapshot_id", "Identifies the snapshot.", "", "41"),
				col("run_id", "The run that read the account.", "", "41"),
				col("taken_at", "When the account was read"+utc+".", "", t),
				col("name", "The account's name as the API sent it.", "", "Acme Ltd"),
				col("email", "The account's email as the API sent it.", "", "admin@example.com"),
				col("timezone", "The account's time zone as the API sent it.", "", "UTC"),
				col("transfer_amount_minor", "transfer_amount in cents; NULL when the API sent null.", UnitCents, "1250000"),
				col("reach_amount_minor", "reach_amount in cents; NULL when the API sent null.", UnitCents, "500000"),
				col("authorizations_minor", "authorizations (amount held by pending authorizations) in cents; NULL when the API sent null.", UnitCents, "12345"),
				col("balance_minor", "balance in cents; NULL when the API sent null.", UnitCents, "3133707"),
				col("cards_balance_minor", "cards_balance (money loaded on cards) in cents; NULL when the API sent null.", UnitCents, "9876540"),
				col("available_recharge_balance_minor", "available_recharge_balance in cents; NULL when the API sent null.", UnitCents, "30"),
				col("available_to_apply_card_count", "How many more cards the account may apply for.", "", "20"),
				col("applied_card_count", "How many cards the account has applied for.", "", "300"),
				col("raw", "The account JSON as received, redacted (it keeps the exact text of rounded amounts).", "", `{"balance":"31337.07",…}`),
				col("amounts_rounded", "1 when an amount had more decimals than api.amount_scale (float noise such as 1234.5600000000002) and was rounded half to even; raw keeps the exact text.", "", "0"),
			}},
		{Name: "sync_runs", Kind: KindTable, RowPer: "run",
			Description: "Every sync run (scheduled, backfill or demo): its outcome, counters and errors.",
			Columns: []Column{
				col("run_id", "Identifies the run; runs are numbered in start order.", "", "12"),
				col("trigger", "What started the run: schedule, backfill or demo.", "", "schedule"),
				col("started_at", "When the run started"+utc+".", "", t),
				col("finished_at", "When the run ended; NULL while running"+utc+".", "", t),
				col("heartbeat_at", "The run's last sign of life"+utc+".", "", t),
				col("status", "running, succeeded, failed, interrupted (SIGTERM, Ctrl-C) or abandoned (its process died).", "", "succeeded"),
				col("pages", "Card pages committed by the run.", "", "20"),
				col("cards_seen", "Cards listed on those pages.", "", "300"),
				col("cards_new", "Cards stored for the first time.", "", "1"),
				col("cards_changed", "Cards whose content changed.", "", "1"),
				col("cards_unchanged", "Cards listed with the content already stored.", "", "298"),
				col("cards_removed", "Cards the run marked removed.", "", "0"),
				col("requests", "HTTP requests the run made, token requests included.", "", "22"),
				col("retries", "Requests retried (429, 5xx, network errors).", "", "0"),
				col("rate_limited", "429 Too Many Requests answers received.", "", "0"),
				col("auth_requests", "Token requests.", "", "1"),
				col("walk_consistent", "1 when the walk that ended in this run was consistent (counts and ids agreed), 0 when not, NULL when no walk ended.", "", "1"),
				col("error", "The full error of a failed run (secrets scrubbed, card numbers masked); NULL otherwise.", "", ""),
				col("version", "The cardsync version that ran.", "", "v1.4.0"),
				col("cards_rejected", "Items of this run's pages set aside in rejected_cards.", "", "0"),
				col("removals_held", "Cards the mass-removal guard kept from removal (see warehouse.max_removed_fraction).", "", "0"),
				col("account_error", "Why the run took no account snapshot; NULL when it took one.", "", ""),
			}},
		{Name: "sync_checkpoints", Kind: KindTable, RowPer: "stream (cards)",
			Description: "Where the next run resumes each stream: the page after the last committed one.",
			Columns: []Column{
				col("stream", "The stream: cards.", "", "cards"),
				col("run_id", "The run that last moved the checkpoint.", "", "12"),
				col("next_page", "The page the next run requests first; 1 = the start of a walk.", "", "1"),
				col("total_pages", "total_pages the last page reported.", "", "20"),
				col("total_items", "total (items) the last page reported.", "", "300"),
				col("updated_at", "When the checkpoint last moved"+utc+".", "", t),
			}},
		{Name: "sync_walks", Kind: KindTable, RowPer: "walk of all pages (may span resumed runs); consecutive identical complete walks that wrote no card share one row",
			Description: "Each walk of the card list with its counts and outcome; removals are judged per walk.",
			Columns: []Column{
				col("walk_id", "Identifies the walk.", "", "4"),
				col("stream", "The stream walked: cards.", "", "cards"),
				col("started_at", "When the walk's first page was committed"+utc+".", "", t),
				col("started_run", "The run that started the walk.", "", "10"),
				col("finished_at", "When the walk ended; NULL while open"+utc+".", "", t),
				col("finished_run", "The run that ended it.", "", "12"),
				col("first_total", "The total the walk's first page reported.", "", "300"),
				col("last_total", "The total its latest page reported.", "", "300"),
				col("pages", "Distinct pages committed.", "", "20"),
				col("distinct_ids", "Distinct card ids listed.", "", "300"),
				col("duplicate_ids", "Ids listed on more than one page.", "", "0"),
				col("removed", "Cards the walk confirmed removed.", "", "0"),
				col("outcome", "complete, inconsistent or reset (abandoned by -restart); NULL while open.", "", "complete"),
				col("pending_removals", "Cards awaiting confirmation of their removal when the walk closed.", "", "0"),
				col("last_page", "The highest page committed.", "", "20"),
				col("runs", "Runs that committed pages to the walk.", "", "1"),
				col("last_run", "The latest of them.", "", "12"),
				col("total_changed", "1 when a page reported another total than the first.", "", "0"),
				col("walks", "How many consecutive identical walks the row stands for (quiet walks are folded into the row before them).", "", "1"),
				col("min_total", "The smallest total any page reported.", "", "300"),
				col("max_total", "The largest total any page reported.", "", "300"),
			}},
		{Name: "rejected_cards", Kind: KindTable, RowPer: "item that could not be stored as a card (repeats update the row)",
			Description: "Card items set aside while the rest of their page was stored: no usable id, not an object, nested too deep, not UTF-8, an id used twice on a page.",
			Columns: []Column{
				col("rejected_id", "Identifies the rejection.", "", "1"),
				col("run_id", "The run that first set the item aside.", "", "3"),
				col("page", "The page it was on (the latest time).", "", "4"),
				col("card_id", "The item's id when one could be read; NULL otherwise.", "", ""),
				col("reason", "Why the item could not be stored.", "", "empty card id"),
				col("data", "The item after redaction, at most 64 KiB.", "", `{"id":"","status":"active"}`),
				col("rejected_at", "When it was first set aside"+utc+".", "", t),
				col("last_run_id", "The last run that set it aside.", "", "12"),
				col("last_rejected_at", "When it was last set aside"+utc+".", "", t),
				col("times", "How many times it was set aside.", "", "9"),
				col("data_sha256", "SHA-256 of data (hex): repeats of the same item update this row.", "", "9f86d0…"),
			}},
		{Name: "removal_pending", Kind: KindTable, RowPer: "current card the last complete, consistent walk did not list",
			Description: "Cards missed by one complete, consistent walk: marked removed if the next one misses them too, cleared by any walk that lists them.",
			Columns: []Column{
				col("card_id", "The card (cards.card_id).", "", "1010"),
				col("walk_id", "The walk that missed it (sync_walks.walk_id).", "", "5"),
				col("missed_at", "When that walk missed it"+utc+".", "", t),
			}},
		{Name: "run_pages", Kind: KindTable, RowPer: "committed page that changed something",
			Description: "Audit of pages that stored new, changed or returned cards or set items aside (a page of unchanged cards gets no row). Pruned after warehouse.page_audit_retention (default 90 days).",
			Columns: []Column{
				col("run_id", "The run that committed the page.", "", "12"),
				col("stream", "The stream: cards.", "", "cards"),
				col("page", "The page number.", "", "3"),
				col("walk_id", "The walk the page belongs to.", "", "5"),
				col("fetched_at", "When the page was fetched"+utc+".", "", t),
				col("committed_at", "When it was committed"+utc+".", "", t),
				col("items", "Items on the page.", "", "15"),
				col("total_items", "The total the page reported.", "", "300"),
				col("total_pages", "total_pages the page reported.", "", "20"),
				col("duration_ms", "How long the page request took.", UnitMilliseconds, "120"),
				col("body_sha256", "SHA-256 of the response body (hex).", "", "e3b0c4…"),
				col("cards_new", "New cards on the page.", "", "1"),
				col("cards_changed", "Changed cards on the page.", "", "0"),
				col("cards_unchanged", "Unchanged cards on the page.", "", "14"),
			}},
		{Name: "column_docs", Kind: KindTable, RowPer: "column of a public table or view",
			Description: "What each public column means, filled from cardsync's own documentation on every migration and open: SELECT * FROM column_docs WHERE table_name = 'sync_runs'.",
			Columns: []Column{
				col("table_name", "The table or view.", "", "sync_runs"),
				col("column_name", "The column.", "", "rate_limited"),
				col("description", "What it means.", "", "429 Too Many Requests answers received."),
				col("unit", "Its unit (cents, currency units, seconds, milliseconds, bytes); NULL when it has none.", "", "cents"),
			}},
		{Name: "cards_current", Kind: KindView, RowPer: "card the API currently lists",
			Description: "cards rows with removed_at NULL.",
			Columns: []Column{
				col("card_id", "The API's card id, as text.", "", "1003"),
				col("data", "The card's latest redacted JSON.", "", `{"id":1003,…}`),
				col("first_seen_at", "When the card was first stored"+utc+".", "", t),
				col("last_seen_at", "When the last complete walk that listed it finished"+utc+".", "", t),
				col("updated_at", "When data last changed"+utc+".", "", t),
				col("first_seen_run", "The run that first stored it.", "", "1"),
				col("last_seen_run", "The last complete walk's run that listed it.", "", "12"),
			}},
		{Name: "cards_flat", Kind: KindView, RowPer: "card ever seen",
			Description: "One column per known top-level card field, up to 1,900 (nested objects and arrays as JSON text), regenerated when a new field appears.",
			Generated:   "one column per top-level card field, named by card_fields.column_name (the API's fields are whatever it sends; see card_fields)",
			Columns: []Column{
				col("card_id", "The API's card id, as text.", "", "1003"),
				col("removed_at", "When the card was marked removed; NULL while listed"+utc+".", "", ""),
			}},
		{Name: "account_balances", Kind: KindView, RowPer: "account snapshot",
			Description: "account_snapshots with each amount under its API name as exact decimal text ('98765.40', '-0.07'; NULL when the API sent null).",
			Columns: []Column{
				col("snapshot_id", "account_snapshots.snapshot_id.", "", "41"),
				col("run_id", "The run that read the account.", "", "41"),
				col("taken_at", "When the account was read"+utc+".", "", t),
				col("name", "The account's name.", "", "Acme Ltd"),
				col("email", "The account's email.", "", "admin@example.com"),
				col("timezone", "The account's time zone.", "", "UTC"),
				col("transfer_amount", "transfer_amount as exact decimal text.", UnitCurrency, "12500.00"),
				col("reach_amount", "reach_amount as exact decimal text.", UnitCurrency, "5000.00"),
				col("authorizations", "authorizations as exact decimal text.", UnitCurrency, "123.45"),
				col("balance", "balance as exact decimal text.", UnitCurrency, "31337.07"),
				col("cards_balance", "cards_balance as exact decimal text.", UnitCurrency, "98765.40"),
				col("available_recharge_balance", "available_recharge_balance as exact decimal text.", UnitCurrency, "0.30"),
				col("available_to_apply_card_count", "How many more cards the account may apply for.", "", "20"),
				col("applied_card_count", "How many cards the account has applied for.", "", "300"),
			}},
		{Name: "account_balance_changes", Kind: KindView, RowPer: "snapshot and amount that differs from the previous snapshot",
			Description: "How each amount moved between consecutive snapshots, exact (old_value NULL on the first snapshot).",
			Columns: []Column{
				col("snapshot_id", "The snapshot with the new value.", "", "42"),
				col("run_id", "Its run.", "", "42"),
				col("taken_at", "When it was taken"+utc+".", "", t),
				col("previous_snapshot_id", "The snapshot before it; NULL for the first.", "", "41"),
				col("previous_taken_at", "When that one was taken"+utc+".", "", t),
				col("amount", "Which amount moved: transfer_amount, reach_amount, authorizations, balance, cards_balance or available_recharge_balance.", "", "balance"),
				col("old_minor", "The previous value in cents.", UnitCents, "3133707"),
				col("new_minor", "The new value in cents.", UnitCents, "3134707"),
				col("change_minor", "new_minor - old_minor; NULL when either is NULL.", UnitCents, "1000"),
				col("old_value", "The previous value as exact decimal text.", UnitCurrency, "31337.07"),
				col("new_value", "The new value as exact decimal text.", UnitCurrency, "31347.07"),
				col("change", "The change as exact decimal text.", UnitCurrency, "10.00"),
			}},
		{Name: "sync_health", Kind: KindView, RowPer: "account (a single row, 'default', for a warehouse of one account)",
			Description: "Is the sync of each account healthy? Ages are measured against the reader's clock.",
			Columns: []Column{
				col("last_success_run", "The last run that succeeded.", "", "12"),
				col("last_success_at", "When it finished"+utc+".", "", t),
				col("last_success_age_seconds", "How long ago that was.", UnitSeconds, "420"),
				col("failures_in_a_row", "Failed and abandoned runs since the last success (an interrupted run is not a failure).", "", "0"),
				col("last_run", "The latest run.", "", "12"),
				col("last_status", "Its status.", "", "succeeded"),
				col("last_started_at", "When it started"+utc+".", "", t),
				col("running", "Runs marked running.", "", "0"),
				col("last_walk_consistent", "1 when the last finished walk was consistent, 0 when not, NULL before any.", "", "1"),
				col("current_cards", "Cards the API currently lists.", "", "300"),
				col("pending_removals", "Cards awaiting confirmation of their removal.", "", "0"),
				col("last_snapshot_at", "When the latest account snapshot was taken"+utc+".", "", t),
				col("last_snapshot_age_seconds", "How long ago that was.", UnitSeconds, "420"),
				col("last_account_error", "Why the latest run took no account snapshot; NULL when it took one.", "", ""),
				col("last_cards_rejected", "Items the latest run set aside.", "", "0"),
				col("last_removals_held", "Cards the latest run's guard held back.", "", "0"),
			}},
		{Name: "card_state", Kind: KindTable, Internal: true, RowPer: "card ever seen",
			Description: "The table behind the cards view: the same columns plus data_hash. Query cards."},
		{Name: "walk_seen", Kind: KindTable, Internal: true, RowPer: "page committed by the open walk",
			Description: "Scratch: the ids each page of the open walk listed; emptied when the walk ends."},
	}
	for i := range objects {
		if what, ok := accountColumns[objects[i].Name]; ok {
			text := "The API account " + what + " belongs to (schema 5): 'default' for a single account (the config's [api] table) " +
				"and for every row stored before; otherwise the name of its [[accounts]] table."
			if what == "the card" {
				text += " A card id is unique within its account."
			}
			objects[i].Columns = append(objects[i].Columns, col("account", text, "", "default"))
		}
	}
	return objects
}

// accountColumns names the public objects whose last column is account,
// with what belongs to it.
var accountColumns = map[string]string{
	"cards":                   "the card",
	"cards_current":           "the card",
	"cards_flat":              "the card",
	"card_versions":           "the card",
	"removal_pending":         "the card",
	"account_snapshots":       "the snapshot",
	"account_balances":        "the snapshot",
	"account_balance_changes": "the snapshot",
	"sync_runs":               "the run",
	"sync_checkpoints":        "the checkpoint",
	"sync_walks":              "the walk",
	"rejected_cards":          "the rejected item",
	"sync_health":             "the row",
}
