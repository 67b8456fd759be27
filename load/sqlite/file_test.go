package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestVerifyRepairsTheFile: a warehouse file deleted under a writer is
// written back with everything in it; one replaced by another warehouse is
// adopted; one replaced by something else is moved aside and ours written
// back. Writes after Verify land in the file the path names.
func TestVerifyRepairsTheFile(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(t *testing.T, path string)
		want    load.FileEvent
		msg     string
		keepOld bool // the warehouse keeps its rows (false: adopted another)
	}{
		{"nothing happened", func(*testing.T, string) {}, load.FileOK, "", true},
		{"deleted", func(t *testing.T, path string) {
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Remove(path + s)
			}
		}, load.FileWrittenBack, "nothing is lost", true},
		{"only the database file deleted", func(t *testing.T, path string) { os.Remove(path) }, load.FileWrittenBack, "written back", true},
		{"replaced by another warehouse", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "other.db")
			w2, err := Open(t.Context(), other, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			w2.Close()
			os.Remove(path)
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}, load.FileSwitched, "replaced by another cardsync warehouse", false},
		{"replaced by something else", func(t *testing.T, path string) {
			os.Remove(path)
			if err := os.WriteFile(path, []byte("not a database"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, load.FileMovedAside, "moved to", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, path, _ := openTest(t, load.Options{})
			run := startRun(t, w)
			commit(t, w, run, page(1, idRange(1, 15), 1, 30))
			tt.damage(t, path)
			ev, msg, err := w.Verify(t.Context())
			if err != nil || ev != tt.want || !strings.Contains(msg, tt.msg) {
				t.Fatalf("Verify = %v, %q, %v; want %v and a message containing %q", ev, msg, err, tt.want, tt.msg)
			}
			if ev.Changed() != (tt.want != load.FileOK) {
				t.Errorf("Changed() = %v", ev.Changed())
			}
			wantCards := int64(15)
			if !tt.keepOld {
				wantCards = 0
				run = startRun(t, w)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM cards`); got != wantCards {
				t.Fatalf("cards = %d after Verify, want %d", got, wantCards)
			}
			commit(t, w, run, page(2, idRange(16, 30), 1, 30))
			w.Close()
			// What the path names now holds everything.
			r, err := OpenReadOnly(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := queryInt(t, r, `SELECT count(*) FROM cards`); got != wantCards+15 {
				t.Errorf("the file at the path has %d cards, want %d", got, wantCards+15)
			}
			if tt.want == load.FileMovedAside {
				aside, _ := filepath.Glob(path + ".replaced-*")
				if len(aside) != 1 || string(readFile(t, aside[0])) != "not a database" {
					t.Errorf("the foreign file was not kept aside: %v", aside)
				}
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != load.DefaultFileMode {
				t.Errorf("file mode after Verify: %v, %v; want %04o", fi.Mode().Perm(), err, load.DefaultFileMode)
			}
		})
	}
}

// TestKeepFollowsTheFile: the run lock's Keep (load.RunLock) moves a held
// lock to the file written back after Verify, and leaves a lock on the
// file the path still names alone.
func TestKeepFollowsTheFile(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	l, err := OpenAccountLock(path, 0, load.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Hold(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, stop, err := l.Keep(t.Context()); err != nil {
		t.Fatalf("Keep on the same file: %v", err)
	} else {
		stop()
	}
	os.Remove(path)
	if ev, _, err := w.Verify(t.Context()); err != nil || ev != load.FileWrittenBack {
		t.Fatalf("Verify = %v, %v", ev, err)
	}
	_, stop, err := l.Keep(t.Context())
	if err != nil || !l.Held() {
		t.Fatalf("Keep: %v (held %v)", err, l.Held())
	}
	defer stop()
	if l.Check() != nil {
		t.Error("a file's lock said stop")
	}
	other, err := OpenAccountLock(path, 0, load.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Hold(t.Context()); !errors.Is(err, load.ErrLocked) {
		t.Fatalf("a second writer of the written-back file: %v, want load.ErrLocked (the lock did not follow it)", err)
	}
}

// TestLockFollowsTheFile: after the file is written back, the lock moves to
// the new file, so a second writer of the path is refused again.
func TestLockFollowsTheFile(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Remove(path)
	ev, _, err := w.Verify(t.Context())
	if err != nil || ev != load.FileWrittenBack {
		t.Fatalf("Verify = %v, %v", ev, err)
	}
	if err := l.Reopen(); err != nil || !l.Held() {
		t.Fatalf("Reopen: %v (held %v)", err, l.Held())
	}
	if other, err := AcquireLock(path); err == nil {
		other.Close()
		t.Fatal("a second writer got the written-back file: the lock did not follow it")
	}
}
