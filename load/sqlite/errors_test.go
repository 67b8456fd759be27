package sqlite

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// codeError is an error with a SQLite result code, as *sqlite.Error.
type codeError int

func (e codeError) Error() string {
	return fmt.Sprintf("attempt to write a readonly database (%d)", int(e))
}
func (e codeError) Code() int { return int(e) }

// TestReadOnlyDirHint: SQLITE_READONLY_DIRECTORY gets a hint naming the
// directory, still wrapping SQLite's error; other errors are left alone.
func TestReadOnlyDirHint(t *testing.T) {
	cause := fmt.Errorf("begin: %w", codeError(sqliteReadOnlyDirectory))
	err := readOnlyDir("/srv/cardsync/warehouse.db", cause)
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "(1544)") ||
		!strings.Contains(err.Error(), "make the directory /srv/cardsync writable") || !strings.Contains(err.Error(), "-wal") {
		t.Errorf("readOnlyDir(1544) = %v", err)
	}
	for _, other := range []error{nil, codeError(8), errors.New("disk I/O error")} {
		if got := readOnlyDir("/srv/cardsync/warehouse.db", other); got != other {
			t.Errorf("readOnlyDir(%v) = %v, want it unchanged", other, got)
		}
	}
}
