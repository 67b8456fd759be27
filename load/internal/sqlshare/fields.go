package sqlshare

import "strings"

// TypedFields reports whether cols, the columns of a warehouse's
// card_fields, include the typed fields' type, scale and minor_column
// (SQLite schema 13, PostgreSQL 10): an older warehouse's fields are
// described by their JSON types alone.
func TypedFields(cols []string) bool {
	n := 0
	for _, c := range cols {
		switch strings.ToLower(c) {
		case "type", "scale", "minor_column":
			n++
		}
	}
	return n == 3
}
