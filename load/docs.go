package load

import (
	"context"
	"strings"

	"github.com/cardsync/cardsync/schema"
)

// ColumnDoc is one row of column_docs (Unit "" is NULL).
type ColumnDoc = schema.ColumnDoc

// ColumnDocs is column_docs as schema.Objects describes it, in primary key
// order (table, column): the rows both warehouses store.
func ColumnDocs() []ColumnDoc { return schema.ColumnDocs() }

// DocsReader is the part of a Reader with which a warehouse describes
// itself (`cardsync datasette-metadata`): its place, the rows of its column_docs
// and the card fields that are columns of cards_flat, with their types
// when its card_fields has them.
type DocsReader interface {
	// WarehouseDocs reads the description in one read-only transaction.
	WarehouseDocs(ctx context.Context) (schema.WarehouseDocs, error)
}

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
