package dialect

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestOpenFile: a path opens the SQLite warehouse with its account lock,
// taken when asked (a second holder is refused with load.ErrLocked), and
// the warehouse has a file's capabilities and no lease.
func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	wh, lock, err := Open(t.Context(), Target{Path: path}, load.Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { wh.Close(); lock.Close() }()
	if lock == nil || !lock.Held() {
		t.Fatal("a file's lock was not returned held")
	}
	if _, ok := wh.(load.LocalFile); !ok {
		t.Error("a file is not a load.LocalFile")
	}
	if _, ok := wh.(load.BackupTaker); !ok {
		t.Error("a file is not a load.BackupTaker")
	}
	if _, ok := wh.(load.Leaser); ok {
		t.Error("a file has leases")
	}
	if _, _, err := Open(t.Context(), Target{Path: path}, load.Options{}, true); !errors.Is(err, load.ErrLocked) {
		t.Errorf("second holder: %v, want load.ErrLocked", err)
	}
}

// TestIdleInTransaction: half a lease TTL, never above PostgreSQL's
// default, the default TTL when none is set.
func TestIdleInTransaction(t *testing.T) {
	for _, tt := range []struct{ ttl, want int64 }{{0, 10}, {60, 10}, {10, 5}} {
		if got := idleInTransaction(secs(tt.ttl)); got != secs(tt.want) {
			t.Errorf("idleInTransaction(%ds) = %v, want %ds", tt.ttl, got, tt.want)
		}
	}
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }
