package load

// The reasons a walk is inconsistent (sync_walks.inconsistent_reason, the
// reason label of cardsync_walks_inconsistent_total). The page reasons are
// the client's page anomalies (extract.Anomaly), recorded by the page
// commit; the others are judged from the walk's counts when it closes.
const (
	// ReasonEmptyPage: a page before the last was empty, twice.
	ReasonEmptyPage = "empty_page"
	// ReasonRepeatedPage: a page listed the ids of the page before, twice.
	ReasonRepeatedPage = "repeated_page"
	// ReasonShortPage: a page before the last held fewer than per_page
	// items, twice.
	ReasonShortPage = "short_page"
	// ReasonFractionalPagination: a number of meta.pagination had a
	// fraction (2.5; an integral 2.0 is read as 2 and is no anomaly).
	ReasonFractionalPagination = "fractional_pagination"
	// ReasonPhantomPages: total_pages claimed more pages than the page's
	// total bears out (more than 2 past ceil(total / per_page)); the walk
	// never requested them.
	ReasonPhantomPages = "phantom_pages"
	// ReasonTotalPagesChanged: total_pages changed between pages.
	ReasonTotalPagesChanged = "total_pages_changed"
	// ReasonTotalChanged: the card total changed during the walk (cards
	// added or removed upstream while it ran).
	ReasonTotalChanged = "total_changed"
	// ReasonDuplicateIDs: card ids appeared on more than one page.
	ReasonDuplicateIDs = "duplicate_ids"
	// ReasonCountMismatch: the distinct ids seen differ from the total.
	ReasonCountMismatch = "count_mismatch"
	// ReasonNoPages: no page was committed in the walk.
	ReasonNoPages = "no_pages"
)

// WalkReasons lists every reason a walk can be inconsistent: a bounded set,
// page reasons first.
func WalkReasons() []string {
	return []string{ReasonEmptyPage, ReasonRepeatedPage, ReasonShortPage, ReasonFractionalPagination, ReasonPhantomPages,
		ReasonTotalPagesChanged, ReasonTotalChanged, ReasonDuplicateIDs, ReasonCountMismatch, ReasonNoPages}
}
