// Package reportrows holds what both warehouses need to fill a report's
// data (load.ReportData) the same way: how many rows each list holds
// (ReportLastRuns, ReportRunPoints, ReportCardChanges, ReportRejected),
// where a shown value is cut (ReportValueBytes, CutValue) and a changed
// card's fields before and after (FieldChanges). Only load/sqlite and
// load/postgres import it.
package reportrows

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load"
)

// FieldChanges compares two stored card documents field by field, for
// ReportData.ChangedCards. It wants canonical JSON (redact.Policy.JSON's
// form, what the SQLite warehouse stores; the PostgreSQL warehouse makes
// its jsonb canonical first), so equal values have equal bytes; values
// keep their exact text (json.RawMessage: numbers are never parsed), cut
// by CutValue.
func FieldChanges(before, after []byte) []load.FieldChange {
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return []load.FieldChange{{Name: "(document)", Before: CutValue(string(before)), After: CutValue(string(after))}}
	}
	var out []load.FieldChange
	for name, av := range a {
		bv, ok := b[name]
		switch {
		case !ok:
			out = append(out, load.FieldChange{Name: name, After: CutValue(string(av)), Added: true})
		case !bytes.Equal(av, bv):
			out = append(out, load.FieldChange{Name: name, Before: CutValue(string(bv)), After: CutValue(string(av))})
		}
	}
	for name, bv := range b {
		if _, ok := a[name]; !ok {
			out = append(out, load.FieldChange{Name: name, Before: CutValue(string(bv)), Dropped: true})
		}
	}
	slices.SortFunc(out, func(x, y load.FieldChange) int {
		if x.Name < y.Name {
			return -1
		}
		if x.Name > y.Name {
			return 1
		}
		return 0
	})
	return out
}

// CutValue shortens s to at most ReportValueBytes bytes on a rune boundary,
// marking the cut with "…".
func CutValue(s string) string {
	if len(s) <= ReportValueBytes {
		return s
	}
	n := ReportValueBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Limits of ReportData's lists.
const (
	// ReportLastRuns is how many runs ReportData.LastRuns holds.
	ReportLastRuns = 20
	// ReportRunPoints is the most runs a period may hold for ReportData to
	// list each of them (RunPoints); beyond it only RunDays describe them.
	ReportRunPoints = 400
	// ReportCardChanges is how many changed cards ReportData lists.
	ReportCardChanges = 100
	// ReportRejected is how many rejected items ReportData lists.
	ReportRejected = 50
	// ReportValueBytes cuts the JSON values and data shown in the report.
	ReportValueBytes = 300
)
