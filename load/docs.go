package load

import (
	"slices"

	"github.com/cardsync/cardsync/schema"
)

// ColumnDoc is one row of column_docs (Unit "" is NULL).
type ColumnDoc struct {
	Table, Column, Description, Unit string
}

// ColumnDocs is column_docs as schema.Objects describes it, in primary key
// order (table, column): the rows both warehouses store.
func ColumnDocs() []ColumnDoc {
	var out []ColumnDoc
	for _, o := range schema.Objects() {
		if o.Internal {
			continue
		}
		for _, c := range o.Columns {
			out = append(out, ColumnDoc{o.Name, c.Name, c.Description, c.Unit})
		}
	}
	slices.SortFunc(out, func(a, b ColumnDoc) int {
		if a.Table != b.Table {
			if a.Table < b.Table {
				return -1
			}
			return 1
		}
		switch {
		case a.Column < b.Column:
			return -1
		case a.Column > b.Column:
			return 1
		}
		return 0
	})
	return out
}
