package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestAccountLocks: each account's run lock refuses a second writer of the
// same account only; the whole-file lock excludes them all, and is
// excluded by any.
func TestAccountLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	open := func(account string) *Lock {
		t.Helper()
		l, err := OpenAccountLock(path, 0, account)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	alpha, beta, alpha2 := open("alpha"), open("beta"), open("alpha")
	if err := alpha.Acquire(); err != nil {
		t.Fatalf("alpha: %v", err)
	}
	if err := beta.Acquire(); err != nil {
		t.Fatalf("beta while alpha runs: %v, want the lock", err)
	}
	var le *load.LockedError
	if err := alpha2.Acquire(); !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("a second alpha writer: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	if pid, err := AccountLockHolder(path, "alpha"); err != nil || pid != os.Getpid() {
		t.Errorf("AccountLockHolder(alpha) = %d, %v; want %d", pid, err, os.Getpid())
	}
	if pid, err := AccountLockHolder(path, "gamma"); err != nil || pid != 0 {
		t.Errorf("AccountLockHolder(gamma) = %d, %v; want 0", pid, err)
	}
	if _, err := AcquireLock(path); !errors.Is(err, load.ErrLocked) {
		t.Errorf("whole-file lock while accounts run: %v, want ErrLocked", err)
	}
	if pid, err := LockHolder(path); err != nil || pid != os.Getpid() {
		t.Errorf("LockHolder = %d, %v; want %d", pid, err, os.Getpid())
	}
	if _, err := os.Stat(path + ".alpha.lock"); err != nil {
		t.Errorf("alpha's pid file: %v", err)
	}
	if err := alpha.Release(); err != nil {
		t.Fatal(err)
	}
	if err := alpha2.Acquire(); err != nil {
		t.Fatalf("alpha after the first writer released: %v", err)
	}
	alpha2.Release()
	beta.Release()
	whole, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("whole-file lock with no account running: %v", err)
	}
	if err := alpha.Acquire(); !errors.Is(err, load.ErrLocked) {
		t.Errorf("alpha while the whole-file lock is held: %v, want ErrLocked", err)
	}
	whole.Close()
	if err := alpha.Acquire(); err != nil {
		t.Errorf("alpha after the whole-file lock: %v", err)
	}
	// The default account keeps the one-account pid file.
	def := open(load.DefaultAccount)
	if err := def.Acquire(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path + ".lock"); err != nil || len(b) == 0 {
		t.Errorf("default's pid file %s.lock: %q, %v", path, b, err)
	}
}
