package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// watchBuffer is a syncBuffer that closes seen the first time what it
// holds contains want.
type watchBuffer struct {
	syncBuffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// start runs cardsync in-process in the background, its stderr watched
// for want; the result arrives on the returned channel.
func (e *env) start(ctx context.Context, want string, args ...string) (*watchBuffer, *syncBuffer, <-chan int) {
	stderr := &watchBuffer{want: want, seen: make(chan struct{})}
	stdout := &syncBuffer{}
	m := &Main{
		Stdin:   strings.NewReader(""),
		Stdout:  stdout,
		Stderr:  stderr,
		Getenv:  func(k string) string { return e.vars[k] },
		Environ: e.environ,
	}
	code := make(chan int, 1)
	go func() { code <- m.Run(ctx, args) }()
	return stderr, stdout, code
}

// TestRestoreWhileARunIsInProgress: restore meets a run in progress (the
// account's run lock held, as serve holds it during a run). Without -wait it
// exits 4, changing nothing, and says how to go on: -wait, or stop serve.
// With -wait it logs that it waits and changes nothing while the run goes
// on, then restores once the run ends. A -wait-timeout that runs out exits
// 4 saying how long it waited; Ctrl-C while waiting exits 130, nothing
// changed. -wait-timeout without -wait, or not positive, is a usage error.
func TestRestoreWhileARunIsInProgress(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 7, Cards: 30})
	backup := backfillAndBackup(t, e)
	run, err := sqlite.OpenAccountLock(e.db, 0, load.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if err := run.Acquire(); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(e.db)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(t *testing.T, what string) {
		t.Helper()
		now, err := os.Stat(e.db)
		if err != nil || !os.SameFile(before, now) {
			t.Errorf("%s: the warehouse file was replaced (%v)", what, err)
		}
		if kept, _ := filepath.Glob(e.db + sqlite.BeforeRestoreSuffix + "*"); len(kept) > 0 {
			t.Errorf("%s: kept %v", what, kept)
		}
	}

	code, _, errOut := e.run(t.Context(), "restore", backup)
	if code != exitLocked {
		t.Fatalf("restore during a run: exit %d, want %d\n%s", code, exitLocked, errOut)
	}
	for _, want := range []string{"refused, nothing changed", "(a run in progress)", "-wait", "stop serve first (systemctl stop cardsync)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("restore during a run says %q; want it to contain %q", errOut, want)
		}
	}
	unchanged(t, "without -wait")

	code, _, errOut = e.run(t.Context(), "restore", "-wait", "-wait-timeout", "1s", backup)
	if code != exitLocked || !strings.Contains(errOut, "after waiting 1s") || !strings.Contains(errOut, "longer -wait-timeout") {
		t.Errorf("restore -wait-timeout 1s during a longer run: exit %d, want %d, saying how long it waited\n%s", code, exitLocked, errOut)
	}
	unchanged(t, "-wait-timeout ran out")

	ctx, cancel := context.WithCancel(t.Context())
	stderr, _, done := e.start(ctx, "waiting for the sync in progress to end", "restore", "-wait", backup)
	<-stderr.seen
	cancel()
	if code := <-done; code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted, nothing changed") {
		t.Errorf("restore -wait interrupted: exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	unchanged(t, "interrupted")

	for _, args := range [][]string{{"-wait-timeout", "1m"}, {"-wait", "-wait-timeout", "0s"}} {
		if code, _, errOut := e.run(t.Context(), append(append([]string{"restore"}, args...), backup)...); code != exitConfig {
			t.Errorf("restore %v: exit %d, want %d\n%s", args, code, exitConfig, errOut)
		}
	}

	// Flags may follow FILE.
	stderr, stdout, done := e.start(t.Context(), "waiting for the sync in progress to end", "restore", backup, "-wait")
	select {
	case <-stderr.seen:
	case code := <-done:
		t.Fatalf("restore -wait did not wait for the run: exit %d\n%s", code, stderr.String())
	}
	unchanged(t, "while -wait waits")
	if err := run.Release(); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 || !strings.Contains(stdout.String(), "restored "+backup) {
		t.Fatalf("restore -wait once the run ended: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if kept, err := sqlite.ListBeforeRestore(e.db); err != nil || len(kept) != 1 {
		t.Errorf("kept %v (%v), want the replaced warehouse", kept, err)
	}
}

// TestRestoreLeavesALiveWarehouse: after restore, and after restore
// -force, the warehouse is in WAL mode as a live one is (journal_mode read
// on a read-only connection, as an analyst's), with an empty -wal and a
// -shm beside it, and status gives that WAL's size.
func TestRestoreLeavesALiveWarehouse(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 8, Cards: 20})
	backup := backfillAndBackup(t, e)
	live := func(t *testing.T) {
		t.Helper()
		for _, suffix := range []string{"-wal", "-shm"} {
			if fi, err := os.Stat(e.db + suffix); err != nil || suffix == "-wal" && fi.Size() != 0 {
				t.Errorf("%s beside the restored warehouse: %v, want an empty one", suffix, err)
			}
		}
		var mode string
		if err := openDB(t, e.db).QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode after restore: %q (%v), want wal", mode, err)
		}
		if code, out, errOut := e.run(t.Context(), "status"); !strings.Contains(out, ", WAL 0 B)") {
			t.Errorf("status after restore: exit %d, want the WAL's size (0 B):\n%s\n%s", code, out, errOut)
		}
	}
	// The same history: no -force needed.
	if code, out, errOut := e.run(t.Context(), "restore", backup); code != 0 {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errOut)
	}
	live(t)
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := e.run(t.Context(), "restore", "-force", backup); code != 0 {
		t.Fatalf("restore -force: exit %d\n%s\n%s", code, out, errOut)
	}
	live(t)
}

// backfillAndBackup backfills e's warehouse, backs it up and returns the
// backup's path.
func backfillAndBackup(t *testing.T, e *env) string {
	t.Helper()
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	code, out, errOut := e.run(t.Context(), "backup")
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, errOut)
	}
	return strings.TrimSpace(out)
}
