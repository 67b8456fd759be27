package sqlite

import (
	"os"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestCheckpointModes: in auto mode Optimize (after every run) and Close
// empty the WAL with a TRUNCATE WAL checkpoint; in external mode cardsync
// leaves the WAL to its owner (Litestream): it never shrinks it, and what it
// holds is read by the next open. (SQLite itself checkpoints when the last
// connection to the file closes; Litestream's own open connection keeps
// that from happening, as the reader here does.)
func TestCheckpointModes(t *testing.T) {
	for _, tt := range []struct {
		mode      string
		truncated bool
	}{
		{mode: "", truncated: true},
		{mode: load.WALCheckpointAuto, truncated: true},
		{mode: load.WALCheckpointExternal, truncated: false},
	} {
		t.Run("mode "+tt.mode, func(t *testing.T) {
			w, path, _ := openTest(t, load.Options{WALCheckpoint: tt.mode})
			fillWarehouse(t, w, 3)
			replicator, err := OpenReadOnly(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer replicator.Close()
			if n := queryInt(t, replicator, "SELECT count(*) FROM cards"); n != 45 {
				t.Fatalf("reader sees %d cards", n)
			}
			before := walSize(t, path)
			if before == 0 {
				t.Fatal("no WAL after commits")
			}
			if err := w.Optimize(t.Context()); err != nil {
				t.Fatal(err)
			}
			// PRAGMA optimize may write a page or two after the WAL checkpoint.
			if after := walSize(t, path); (after < before) != tt.truncated {
				t.Errorf("WAL %d bytes before a run's end, %d after: truncated %v, want %v", before, after, after < before, tt.truncated)
			}
			before = walSize(t, path)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if after := walSize(t, path); (after == 0) != tt.truncated {
				t.Errorf("WAL %d bytes before close, %d after: emptied %v, want %v", before, after, after == 0, tt.truncated)
			}
			replicator.Close()
			w2, err := Open(t.Context(), path, load.Options{WALCheckpoint: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer w2.Close()
			if n := queryInt(t, w2, "SELECT count(*) FROM cards"); n != 45 {
				t.Errorf("%d cards after reopening, want 45", n)
			}
		})
	}
}

func TestCheckpointValidate(t *testing.T) {
	if err := (load.Options{WALCheckpoint: "truncate"}).Validate(); err == nil || !strings.Contains(err.Error(), "Checkpoint") {
		t.Errorf("Validate of checkpoint \"truncate\": %v, want an error naming Checkpoint", err)
	}
	for _, ok := range []string{"", load.WALCheckpointAuto, load.WALCheckpointExternal} {
		if err := (load.Options{WALCheckpoint: ok}).Validate(); err != nil {
			t.Errorf("Validate(%q): %v", ok, err)
		}
	}
}
