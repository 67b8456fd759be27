//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// TestAnalystReadTransaction holds an analyst's read transaction (a
// mode=ro connection, BEGIN; SELECT count(*) FROM cards) open for a whole
// backfill: the run succeeds, the analyst's snapshot stays put inside the
// transaction while fresh readers see the pages arrive, and after the
// transaction ends the analyst sees every card. It logs the run's duration
// and WAL size with and without the reader (no timing assertion).
func TestAnalystReadTransaction(t *testing.T) {
	cards := 3000
	if testing.Short() {
		cards = 1200
	}
	type figures struct {
		wall, run time.Duration
		wal       int64
	}
	backfill := func(t *testing.T, withReader bool) figures {
		up := newUpstream(t, sim.Options{Seed: 51, Cards: cards, Limit: 10000})
		d := newDeployment(t, up)
		d.env["CARDSYNC_API_RATE_LIMIT"] = "5000/1s"
		d.env["CARDSYNC_LOG_LEVEL"] = "info"
		// Create the warehouse first, so the analyst can open it before
		// the run; the baseline does the same.
		wh, err := sqlite.Open(t.Context(), d.db, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Close(); err != nil {
			t.Fatal(err)
		}
		var reader *sql.Conn
		var snapshot int64
		readerCount := func() int64 {
			t.Helper()
			var n int64
			if err := reader.QueryRowContext(t.Context(), `SELECT count(*) FROM cards`).Scan(&n); err != nil {
				t.Fatalf("analyst read: %v", err)
			}
			return n
		}
		if withReader {
			reader, err = openRO(t, d.db).Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { reader.Close() })
			if _, err := reader.ExecContext(t.Context(), `BEGIN`); err != nil {
				t.Fatal(err)
			}
			snapshot = readerCount()
		}
		started := time.Now()
		bf := d.startBG("backfill")
		if withReader {
			// Mid-run: a fresh reader sees committed pages, the analyst's
			// transaction still sees its snapshot.
			waitPages(t, newROWatch(t, d.db), 5, bf)
			if n := queryInt(t, openRO(t, d.db), `SELECT count(*) FROM cards`); n == 0 {
				t.Error("a fresh reader sees no cards after 5 committed pages")
			}
			if n := readerCount(); n != snapshot {
				t.Errorf("analyst's count changed inside its transaction: %d, then %d", snapshot, n)
			}
		}
		if code := bf.wait(t, time.Minute); code != 0 {
			t.Fatalf("backfill exit %d\n%s\n%s", code, bf.stdout, lastLines(bf.stderr.String()))
		}
		f := figures{wall: time.Since(started)}
		if m := runDurationRE.FindStringSubmatch(bf.stdout.String()); m != nil {
			f.run, _ = time.ParseDuration(m[1])
		} else {
			t.Errorf("no run duration in the summary: %s", bf.stdout)
		}
		if st, err := os.Stat(d.db + "-wal"); err == nil {
			f.wal = st.Size()
		}
		if withReader {
			if n := readerCount(); n != snapshot {
				t.Errorf("analyst's count changed inside its transaction: %d, then %d", snapshot, n)
			}
			if _, err := reader.ExecContext(t.Context(), `COMMIT`); err != nil {
				t.Fatal(err)
			}
			if n := readerCount(); n != int64(cards) {
				t.Errorf("after its transaction the analyst sees %d cards, want %d", n, cards)
			}
		}
		assertTruth(t, up, d.db)
		return f
	}
	var without, with figures
	t.Run("without reader", func(t *testing.T) { without = backfill(t, false) })
	t.Run("with reader", func(t *testing.T) { with = backfill(t, true) })
	if without.run > 0 && with.run > 0 {
		t.Logf("backfill of %d cards: run %s without a reader, %s with one held open (ratio %.2f); wall %s vs %s; WAL after the run %d vs %d bytes",
			cards, without.run, with.run, float64(with.run)/float64(without.run),
			without.wall.Round(time.Millisecond), with.wall.Round(time.Millisecond), without.wal, with.wal)
	}
}

// analystGID is the group analysts share with the daemon in these tests
// (nogroup); the unit uses cardsync-ro.
const analystGID = 65534

// TestAnalystReadOnlyAccess gives the warehouse a state directory like the
// unit's (setgid 2750, group = analysts) and reads it read-only while the
// daemon runs between syncs and after it stopped: through a mode=ro
// connection, and as a non-root analyst with the sqlite3 CLI (setpriv) in
// and outside the group.
func TestAnalystReadOnlyAccess(t *testing.T) {
	const cards = 300
	up := newUpstream(t, sim.Options{Seed: 52, Cards: cards, Limit: 5000})
	d := newDeployment(t, up)
	// Outside t.TempDir (whose parents are 0700) so another uid can reach it.
	state, err := os.MkdirTemp("", "cardsync-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	// As root, file permissions do not stop anything (DAC bypass): the
	// group setup and the non-root analyst checks need root to arrange.
	asRoot := os.Geteuid() == 0
	if !asRoot {
		t.Log("not root: checking mode=ro access only, not a non-root analyst's view")
	}
	if asRoot {
		if err := os.Chown(state, 0, analystGID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(state, 0o750|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	d.db = state + "/warehouse.db"
	d.env["CARDSYNC_WAREHOUSE_PATH"] = d.db
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	serve := d.startBG("serve")
	w := newROWatch(t, d.db)
	pollUntil(t, 30*time.Second, "the daemon's first run to succeed", func() bool {
		n, ok := w.int(`SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`)
		return ok && n == 1
	}, serve)

	check := func(t *testing.T, when string) {
		analyst := openRO(t, d.db)
		if n := queryInt(t, analyst, `SELECT count(*) FROM cards_current`); n != cards {
			t.Errorf("%s: analyst sees %d current cards, want %d", when, n, cards)
		}
		// cards is a view (schema 3): write to a table to meet mode=ro.
		if _, err := analyst.Exec(`DELETE FROM card_versions`); err == nil || !strings.Contains(err.Error(), "readonly") {
			t.Errorf("%s: a write through mode=ro: err = %v, want a read-only error", when, err)
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			st, err := os.Stat(d.db + suffix)
			if err != nil {
				t.Errorf("%s: %v", when, err)
				continue
			}
			if perm := st.Mode().Perm(); perm != 0o640 {
				t.Errorf("%s: warehouse.db%s mode %v, want 0640", when, suffix, perm)
			}
			if gid := st.Sys().(*syscall.Stat_t).Gid; asRoot && gid != analystGID {
				t.Errorf("%s: warehouse.db%s group %d, want the state dir's %d (setgid)", when, suffix, gid, analystGID)
			}
		}
		if !asRoot {
			return
		}
		q := `SELECT count(*) FROM cards_current`
		if out, err := asUser(t, analystGID, d.db, q); err != nil || strings.TrimSpace(out) != strconv.Itoa(cards) {
			t.Errorf("%s: analyst in the group: %q, %v; want %d", when, out, err, cards)
		} else {
			t.Logf("%s: non-root analyst in the group reads %s current cards", when, strings.TrimSpace(out))
		}
		if out, err := asUser(t, analystGID, d.db, `DELETE FROM card_versions`); err == nil || !strings.Contains(out, "readonly database") {
			t.Errorf("%s: analyst write: %q, %v; want attempt to write a readonly database", when, out, err)
		}
		if out, err := asUser(t, 4242, d.db, q); err == nil || !strings.Contains(out, "unable to open") {
			t.Errorf("%s: user outside the group: %q, %v; want unable to open", when, out, err)
		}
	}
	t.Run("while serving", func(t *testing.T) { check(t, "while serving") })
	stopDaemon(t, serve)
	t.Run("after stop", func(t *testing.T) { check(t, "after stop") })
	assertTruth(t, up, d.db)
}

// asUser runs the sqlite3 CLI read-only against path as uid 65534 with
// only group gid, and returns its combined output. It skips the test when
// setpriv or sqlite3 is missing.
func asUser(t *testing.T, gid int, path, query string) (string, error) {
	t.Helper()
	for _, tool := range []string{"setpriv", "sqlite3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: cannot check what a non-root analyst sees", tool)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid=65534", "--regid="+strconv.Itoa(gid), "--clear-groups",
		"sqlite3", "-bail", "file:"+path+"?mode=ro", query)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
	testbinary.Own(cmd)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
