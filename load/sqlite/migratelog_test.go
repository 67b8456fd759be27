package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
)

// records keeps every log record a handler is given.
type records struct {
	mu  sync.Mutex
	got []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// migrationLines returns the messages logged at level that start with
// "schema migrat".
func (r *records) migrationLines(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.got {
		if rec.Level == level && strings.HasPrefix(rec.Message, "schema migrat") {
			out = append(out, rec.Message)
		}
	}
	return out
}

// TestMigrationsLogOneInfoLine: an open that migrates logs one info line
// naming the versions and the count (a new file: from 0 to the latest; a
// release 4 file: from 4), and one debug line per migration; an open with
// nothing to migrate logs none.
func TestMigrationsLogOneInfoLine(t *testing.T) {
	latest := SchemaVersion()
	cases := []struct {
		name string
		path func(t *testing.T) string
		from int
	}{
		{"new file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "w.db") }, 0},
		{"release 4", func(t *testing.T) string { return releaseWarehouse(t, "release4") }, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t)
			open := func() *records {
				var rec records
				w, err := Open(t.Context(), path, load.Options{Logger: slog.New(&rec)})
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				return &rec
			}
			rec := open()
			n := latest - c.from
			want := fmt.Sprintf("schema migrated from version %d to %d (%d migrations)", c.from, latest, n)
			if got := rec.migrationLines(slog.LevelInfo); len(got) != 1 || got[0] != want {
				t.Errorf("info lines %q, want one: %q", got, want)
			}
			if got := rec.migrationLines(slog.LevelDebug); len(got) != n {
				t.Errorf("%d debug lines of migrations, want one per migration (%d): %q", len(got), n, got)
			}
			rec = open()
			if got := append(rec.migrationLines(slog.LevelInfo), rec.migrationLines(slog.LevelDebug)...); len(got) != 0 {
				t.Errorf("an open with nothing to migrate logged %q", got)
			}
		})
	}
}

// TestLogMigratedCountsOne: one migration is "1 migration".
func TestLogMigratedCountsOne(t *testing.T) {
	var rec records
	sqlshare.LogMigrated(slog.New(&rec), 17, 18, 1)
	if got, want := rec.migrationLines(slog.LevelInfo), "schema migrated from version 17 to 18 (1 migration)"; len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
