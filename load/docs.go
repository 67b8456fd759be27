package load

import (
	"context"

	"github.com/cardsync/cardsync/schema"
)

// DocsReader is the part of a Reader with which a warehouse describes
// itself (`cardsync datasette-metadata`): its place, the rows of its column_docs
// and the card fields that are columns of cards_flat, with their types
// when its card_fields has them.
type DocsReader interface {
	// WarehouseDocs reads the description in one read-only transaction.
	WarehouseDocs(ctx context.Context) (schema.WarehouseDocs, error)
}
