package sqlshare

import (
	"encoding/json"
	"slices"
)

// AppendPagesSQL is the SQL expression, the same in SQLite and
// PostgreSQL, that appends the JSON array of page numbers in param (NULL:
// none) to sync_walks.inconsistent_pages.
func AppendPagesSQL(param string) string {
	return `CASE WHEN ` + param + ` IS NULL THEN inconsistent_pages WHEN inconsistent_pages IS NULL THEN ` + param +
		` ELSE substr(inconsistent_pages, 1, length(inconsistent_pages) - 1) || ',' || substr(` + param + `, 2) END`
}

// ParsePages reads sync_walks.inconsistent_pages: the page numbers in the
// order first recorded, each once (nil for NULL or unreadable text).
func ParsePages(s string) []int {
	var pages []int
	if s == "" || json.Unmarshal([]byte(s), &pages) != nil {
		return nil
	}
	out := pages[:0]
	for _, p := range pages {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
