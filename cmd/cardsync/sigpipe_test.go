package main

import (
	"database/sql"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/sim"
)

// TestClosedPipeDoesNotKillARun: a backfill whose stdout and stderr are
// pipes closed before it writes (`cardsync backfill 2>&1 | head -2` once
// head has exited) still walks every page and records a succeeded run,
// instead of dying of SIGPIPE with its run left running.
func TestClosedPipeDoesNotKillARun(t *testing.T) {
	bin := testbinary.Cardsync(t)
	srv := sim.New(sim.Options{Seed: 3, Cards: 120, Window: time.Second, Limit: 1000, AuthLimit: 100})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	db := filepath.Join(t.TempDir(), "w.db")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone: every write to w raises SIGPIPE
	cmd := exec.CommandContext(t.Context(), bin, "backfill", "-log-level", "debug")
	// Only the variables named here: the test's own environment may hold
	// CARDSYNC_ variables of the test runner (CI's CARDSYNC_REQUIRE_TOOLS),
	// which cardsync refuses as unknown keys.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, "CARDSYNC_API_BASE_URL="+ts.URL, "CARDSYNC_API_EMAIL="+sim.DefaultEmail,
		"CARDSYNC_API_PASSWORD="+sim.DefaultPassword, "CARDSYNC_API_RATE_LIMIT=1000/1s", "CARDSYNC_WAREHOUSE_PATH="+db)
	cmd.Stdout, cmd.Stderr = w, w
	err = testbinary.Run(t.Context(), cmd)
	w.Close()
	if err != nil {
		t.Fatalf("backfill with its output on a closed pipe: %v (state %v)", err, cmd.ProcessState)
	}
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var status string
	var cards int
	if err := conn.QueryRow(`SELECT status, cards_seen FROM sync_runs ORDER BY run_id DESC LIMIT 1`).Scan(&status, &cards); err != nil {
		t.Fatal(err)
	}
	if status != "succeeded" || cards != 120 {
		t.Errorf("last run %s with %d cards, want succeeded with 120", status, cards)
	}
}
