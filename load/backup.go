package load

import (
	"errors"
	"time"
)

// DefaultBackupKeep is how many backups Backup keeps when keep is 0.
const DefaultBackupKeep = 7

// PruneSkip is a file that pruning left alone although it is named like
// one of the warehouse's backups: its identity is another warehouse's, or
// could not be read. Only a backup that carries the warehouse's own
// identity is ever removed. When the backup just written has no identity
// (the warehouse was not yet upgraded), nothing is pruned and the one
// PruneSkip names that backup.
type PruneSkip struct {
	// Path is the file left alone.
	Path string
	// Reason says why, for a log line.
	Reason string
}

// BackupResult is what Backup did: the file it wrote and the backups its
// pruning left alone (see PruneSkip).
type BackupResult struct {
	// Path is the backup written ("" when none was).
	Path string
	// Skipped lists the files pruning left alone.
	Skipped []PruneSkip
}

// ErrBackupPrune is wrapped when a backup was written but older backups
// could not all be removed; Backup then also returns the new backup's path.
var ErrBackupPrune = errors.New("prune old backups")

// BeforeRestoreFile is a warehouse Restore replaced and kept beside the
// warehouse.
type BeforeRestoreFile struct {
	// Path is the kept file.
	Path string
	// ReplacedAt is when the restore replaced it (from its name; zero
	// for <warehouse>.before-restore, kept by a cardsync before warehouse identities).
	ReplacedAt time.Time
	// Bytes is its size, its -wal included.
	Bytes int64
}
