package dialect

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestOpenReadOnlyFile: a file opens read-only with what status and report
// need of it (its writer and kept warehouses, no lease); a missing file
// is an error with no warehouse (a nil interface, not a nil pointer).
func TestOpenReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	wh, lock, _, err := Open(t.Context(), Target{Path: path}, load.Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	wh.Close()
	lock.Close()
	for _, account := range []string{"", load.DefaultAccount} {
		ro, err := OpenReadOnly(t.Context(), Target{Path: path}, load.Options{Account: account})
		if err != nil {
			t.Fatalf("account %q: %v", account, err)
		}
		facts, err := ro.WriterFacts(t.Context(), true)
		if err != nil {
			t.Errorf("writer facts: %v", err)
		}
		if facts.Shared || facts.Leases != nil || facts.WriterPID != 0 {
			t.Errorf("writer facts %+v: want a file's, with no writer and no lease", facts)
		}
		if _, err := ro.ReportData(t.Context(), time.Now().Add(-time.Hour), time.Now()); err != nil {
			t.Errorf("report data: %v", err)
		}
		if _, err := ro.Summary(t.Context()); err != nil {
			t.Errorf("summary: %v", err)
		}
		ro.Close()
	}
	if ro, err := OpenReadOnly(t.Context(), Target{Path: filepath.Join(t.TempDir(), "missing.db")}, load.Options{}); err == nil || ro != nil {
		t.Errorf("a missing file: %v, %v", ro, err)
	}
	lock2, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(path); err == nil {
		t.Error("a second AcquireLock was not refused")
	}
	lock2.Close()
}
