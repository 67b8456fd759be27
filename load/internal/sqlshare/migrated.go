package sqlshare

import (
	"fmt"
	"log/slog"

	"github.com/cardsync/cardsync/internal/english"
)

// LogMigrated logs, once, that an open brought the warehouse's schema
// from version from to version to by applying n migrations: one info line
// for them all ("schema migrated from version 0 to 18 (18 migrations)"),
// so a first sync does not open with a line per migration (each
// warehouse logs those at debug). It logs nothing when n is 0.
func LogMigrated(log *slog.Logger, from, to, n int) {
	if n == 0 {
		return
	}
	log.Info(fmt.Sprintf("schema migrated from version %d to %d (%s)", from, to, english.Count(n, "migration")),
		"from_version", from, "to_version", to, "migrations", n)
}
