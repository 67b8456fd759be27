package load

import "time"

// MaxNewFieldsPerWalk bounds how many fields one walk adds to card_fields
// (and so to cards_flat), across all its pages, batches and runs: the
// fields a walk finds beyond it stay in card_state.data only, with no
// card_fields row and no column. An API that puts ids or free text in its
// keys would otherwise grow card_fields and its index without end (200
// unique 1 KB names made a 488 MB warehouse). A later walk with room adds
// them.
const MaxNewFieldsPerWalk = 1000

// DefaultFieldRetention is how long a card_fields row stays after the last
// commit whose cards held its field: 90 days (config
// warehouse.field_retention). Older rows are pruned after a complete walk
// (PruneFields), and their cards_flat columns go with them.
const DefaultFieldRetention = 90 * 24 * time.Hour
