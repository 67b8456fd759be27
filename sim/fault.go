package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// FaultKind is what an injected fault does.
type FaultKind int

// Fault kinds. The text name (FaultKind.String, ParseFault) is in brackets.
const (
	// FaultStatus answers Status (500, 502, 503, ...) with a JSON error
	// body, and a Retry-After header when RetryAfter > 0. [status]
	FaultStatus FaultKind = iota + 1
	// FaultHTML answers Status (default 502) with an nginx-style text/html page. [html]
	FaultHTML
	// FaultReset closes the connection with a TCP reset, without a response. [reset]
	FaultReset
	// FaultTruncate declares the full Content-Length of a successful reply
	// but sends only half the body, then closes the connection. [truncate]
	FaultTruncate
	// FaultLatency waits Latency before handling the request (the wait ends
	// early when the client goes away). [latency]
	FaultLatency
	// FaultTrickle sends a successful body in Chunk-byte pieces (default 64)
	// with Latency (default 50ms) between them, stopping when the client goes away. [trickle]
	FaultTrickle
	// FaultRateLimit answers 429 with the rate-limit body whatever the limiter
	// says (a 429 storm), with Retry-After when RetryAfter > 0. [ratelimit]
	FaultRateLimit
	// FaultRevoke revokes every token, then handles the request normally, so
	// an authenticated request gets 401. [revoke]
	FaultRevoke
	// FaultForeignNext points links.next at URL (another origin). [foreign]
	FaultForeignNext
	// FaultLoopNext points links.next back at page LoopTo (default 1). [loop]
	FaultLoopNext
	// FaultLinksArray renders links as [] when there is no link, as Fractal
	// before 0.18 did (pages with a next link keep the object). [links-array]
	FaultLinksArray
	// FaultTotalChange adds TotalDelta (default 7) to meta.pagination.total
	// and recomputes total_pages. [total]
	FaultTotalChange
	// FaultOversize adds a "padding" string of PadBytes (default 8 MiB) to a
	// successful body, which stays valid JSON. [oversize]
	FaultOversize

	// The envelope faults: replies a PHP server may send that carry the
	// same data in another wrapping.

	// FaultLinksShapes renders meta.pagination.links of a card page in the
	// shapes hand-written or older servers use, one after the other: next
	// as a number, next as {"href": URL}, links as a string, links as true,
	// links as an array of the URL. [links-shapes]
	FaultLinksShapes
	// FaultBOM puts a UTF-8 byte order mark before a successful body (a PHP
	// file saved "UTF-8 with BOM"). [bom]
	FaultBOM
	// FaultContentType sends a successful JSON body as "text/plain;
	// charset=UTF-8" and without a Content-Type, one after the other.
	// [content-type]
	FaultContentType
	// FaultDeepMeta adds a "debug" member to meta of a card page, before
	// pagination: an array nested Depth levels (default 100,000). [deep-meta]
	FaultDeepMeta
	// FaultNoContent answers 204 No Content without a body. [no-content]
	FaultNoContent
	// FaultRedirect answers 302 Found with Location URL (default: /login on
	// the same origin, as Laravel does for a guest). [redirect]
	FaultRedirect

	// Walk faults: a card list that moves or lies under a walk. Without
	// Pages they act on the pages named in each one's comment; Times 1 makes
	// one answer wrong (a refetch gets the right one), 0 every answer.

	// FaultEmptyPage serves a card page with no items while total and
	// total_pages stay unchanged (page 2 without Pages). [empty-page]
	FaultEmptyPage
	// FaultShrinkingTotal reports total_pages less by Shrink (default 1,
	// never below 1) and serves the same items (every page but page 1
	// without Pages). [shrinking-total]
	FaultShrinkingTotal
	// FaultRepeatedPage serves page 1's items on a card page, with that
	// page's own pagination (every page without Pages). [repeated-page]
	FaultRepeatedPage
	// FaultPhantomPages reports total_pages as Claim (default 2000) while
	// total and the items stay as they are: pages past the real ones are
	// served empty (every page without Pages). [phantom-pages]
	FaultPhantomPages
	// FaultFloatPagination writes every number of meta.pagination as a
	// PHP float, 2.0 for 2 (ceil() without a cast), the same values
	// (every page without Pages). [float-pagination]
	FaultFloatPagination
	// FaultFractionalPages reports total_pages as total / per_page without
	// ceil() (2.533333333333333; 2.0 when it divides), as PHP's json_encode
	// writes the float (every page without Pages). [fractional-pages]
	FaultFractionalPages

	// FaultShuffleMembers serves every card of a /cards page with the
	// members of each of its objects in another order, drawn by the seeded
	// generator (members with the same key keep their order, so a card
	// means what it meant), as two servers behind a balancer may.
	// [shuffle-members]
	FaultShuffleMembers
	// FaultSecretsInData puts the login password and the request's bearer
	// token into the data: on /cards, into the page's first card (a value,
	// a key, a nested value, a "Bearer" header text) and into one more
	// item that reuses that card's id (an item a client must reject); on
	// /account, into the account's name and an extra "notes" member. A
	// client must store none of them. [secrets-in-data]
	FaultSecretsInData
)

// linksShapes are the links renderings of FaultLinksShapes, in turn; %s
// is the next page's URL, %d its number.
var linksShapes = []string{
	`{"next":%d}`,
	`{"next":{"href":%s}}`,
	`%s`,
	`true`,
	`[%s]`,
}

// DefaultDeepMetaDepth is the nesting of FaultDeepMeta's array.
const DefaultDeepMetaDepth = 100000

// walkFaultNames are the walk faults' names, apart so that they read as
// one block.
var walkFaultNames = map[FaultKind]string{
	FaultEmptyPage: "empty-page", FaultShrinkingTotal: "shrinking-total", FaultRepeatedPage: "repeated-page",
	FaultPhantomPages: "phantom-pages", FaultFloatPagination: "float-pagination", FaultFractionalPages: "fractional-pages",
}

// walkFault reports whether the kind changes which items or totals a card
// page serves, and whether it acts on page when the fault names no pages.
func (k FaultKind) walkFault(page int) (walk, onPage bool) {
	switch k {
	case FaultEmptyPage:
		return true, page == 2
	case FaultShrinkingTotal:
		return true, page > 1
	case FaultRepeatedPage, FaultPhantomPages, FaultFloatPagination, FaultFractionalPages:
		return true, true
	}
	return false, false
}

var faultKindNames = map[FaultKind]string{
	FaultStatus: "status", FaultHTML: "html", FaultReset: "reset", FaultTruncate: "truncate",
	FaultLatency: "latency", FaultTrickle: "trickle", FaultRateLimit: "ratelimit", FaultRevoke: "revoke",
	FaultForeignNext: "foreign", FaultLoopNext: "loop", FaultLinksArray: "links-array",
	FaultTotalChange: "total", FaultOversize: "oversize",
	// The envelope faults.
	FaultLinksShapes: "links-shapes", FaultBOM: "bom", FaultContentType: "content-type",
	FaultDeepMeta: "deep-meta", FaultNoContent: "no-content", FaultRedirect: "redirect",
	FaultEmptyPage: walkFaultNames[FaultEmptyPage], FaultShrinkingTotal: walkFaultNames[FaultShrinkingTotal],
	FaultRepeatedPage: walkFaultNames[FaultRepeatedPage],
	FaultPhantomPages: walkFaultNames[FaultPhantomPages], FaultFloatPagination: walkFaultNames[FaultFloatPagination],
	FaultFractionalPages: walkFaultNames[FaultFractionalPages],
	FaultShuffleMembers:  "shuffle-members", FaultSecretsInData: "secrets-in-data",
}

// String returns the kind's name in the -fault syntax.
func (k FaultKind) String() string {
	if n, ok := faultKindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Endpoint names used by Fault.Endpoint and Stats.Requests.
const (
	EndpointToken   = "token"
	EndpointAccount = "account"
	EndpointCards   = "cards"
	EndpointOther   = "other" // Stats only: unknown paths
)

// Fault is one injected misbehaviour. Faults are deterministic: they apply
// to the matching requests in order, after Skip matches, Times times (0 =
// forever); Percent, when set, picks matches with the seeded generator.
type Fault struct {
	// Endpoint is "token", "account", "cards", or "" for all.
	Endpoint string
	// Kind is what the fault does.
	Kind FaultKind
	// Pages limits the fault to these /cards pages (empty = any request).
	Pages []int
	// Times is how many requests to affect (0 = every matching one).
	Times int
	// Skip lets this many matching requests through first.
	Skip int
	// Percent, when in 1..99, affects only that share of matching requests,
	// chosen by the seeded generator.
	Percent int

	// Status is the status of FaultStatus (default 503) and FaultHTML (default 502).
	Status int
	// RetryAfter, when > 0, adds a Retry-After header (seconds, rounded up)
	// to FaultStatus, FaultHTML and FaultRateLimit replies.
	RetryAfter time.Duration
	// Latency is the wait of FaultLatency and the pause between chunks of FaultTrickle.
	Latency time.Duration
	// Chunk is the piece size of FaultTrickle (default 64 bytes).
	Chunk int
	// URL is the base of the foreign links.next (FaultForeignNext); a URL
	// without a path gets the request's path.
	URL string
	// LoopTo is the page links.next points back at (FaultLoopNext, default 1).
	LoopTo int
	// TotalDelta is added to the total (FaultTotalChange, default 7).
	TotalDelta int
	// PadBytes is the size of the padding (FaultOversize, default 8 MiB).
	PadBytes int
	// Depth is the nesting of FaultDeepMeta's array (default 100,000).
	Depth int
	// Shrink is how many pages FaultShrinkingTotal takes off total_pages
	// (default 1).
	Shrink int
	// Claim is the total_pages FaultPhantomPages reports (default 2000).
	Claim int
}

// DefaultPhantomClaim is the total_pages FaultPhantomPages reports by
// default.
const DefaultPhantomClaim = 2000

// preFault reports whether the kind acts before the request is handled.
func (k FaultKind) preFault() bool {
	switch k {
	case FaultStatus, FaultHTML, FaultReset, FaultLatency, FaultRateLimit, FaultRevoke,
		FaultNoContent, FaultRedirect:
		return true
	}
	return false
}

type faultState struct {
	f       Fault
	matched int
	applied int
}

// take reports whether the fault applies to this request and counts it.
func (fs *faultState) take(endpoint string, page int, rng *rand.Rand) bool {
	f := &fs.f
	if f.Endpoint != "" && f.Endpoint != endpoint {
		return false
	}
	if len(f.Pages) > 0 && (endpoint != EndpointCards || !slices.Contains(f.Pages, page)) {
		return false
	}
	if walk, onPage := f.Kind.walkFault(page); walk && (endpoint != EndpointCards || len(f.Pages) == 0 && !onPage) {
		return false
	}
	if f.Times > 0 && fs.applied >= f.Times {
		return false
	}
	fs.matched++
	if fs.matched <= f.Skip {
		return false
	}
	if f.Percent > 0 && f.Percent < 100 && rng.IntN(100) >= f.Percent {
		return false
	}
	fs.applied++
	return true
}
