package dialect

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestOpenFile: a path opens the SQLite warehouse with its account lock,
// taken when asked (a second holder is refused with load.ErrLocked), and
// the warehouse is a file's (File, beside which unrecorded results are
// kept) with no cluster.
func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	wh, lock, cluster, err := Open(t.Context(), Target{Path: path}, load.Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { wh.Close(); lock.Close() }()
	if lock == nil || !lock.Held() {
		t.Fatal("a file's lock was not returned held")
	}
	if wh.File() != path {
		t.Errorf("File() = %q, want %q", wh.File(), path)
	}
	if cluster != nil {
		t.Error("a file has leases")
	}
	if _, _, _, err := Open(t.Context(), Target{Path: path}, load.Options{}, true); !errors.Is(err, load.ErrLocked) {
		t.Errorf("second holder: %v, want load.ErrLocked", err)
	}
}
