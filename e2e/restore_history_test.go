//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
)

// backfillN runs n backfills, changing a few cards upstream before each
// but the first, so every run stores card versions and an account
// snapshot.
func backfillN(t *testing.T, d *deployment, up *upstream, n int) {
	t.Helper()
	for i := range n {
		if i > 0 {
			for _, c := range up.Cards()[:5] {
				up.UpdateCard(c.ID)
			}
		}
		if code, _, errOut := d.run("backfill"); code != 0 {
			t.Fatalf("backfill %d: exit %d\n%s", i+1, code, lastLines(errOut))
		}
	}
}

// backupNow runs `cardsync backup` with args and returns the file it wrote.
func backupNow(t *testing.T, d *deployment, args ...string) string {
	t.Helper()
	code, out, errOut := d.run(append([]string{"backup"}, args...)...)
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, lastLines(errOut))
	}
	return strings.TrimSpace(out)
}

// TestRestoreKeepsHistory: after three runs, a restore of the backup taken
// after the first would silently drop runs 2 and 3 with their balance
// snapshots and card versions: it exits 6, says what each side holds and
// what would be lost, and changes nothing. -force restores it and keeps the
// replaced warehouse as .before-restore-<time>; a second forced restore
// keeps its own file beside the first, and status lists both (text and
// -json).
func TestRestoreKeepsHistory(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 41, Cards: 60})
	d := newDeployment(t, up)
	backfillN(t, d, up, 1)
	backup := backupNow(t, d)
	backfillN(t, d, up, 2)
	if n := countRuns(t, d.db, ""); n != 3 {
		t.Fatalf("%d runs, want 3", n)
	}
	db := openRO(t, d.db)
	snapshots := queryInt(t, db, `SELECT count(*) FROM account_snapshots`)
	versions := queryInt(t, db, `SELECT count(*) FROM card_versions WHERE run_id > 1`)
	db.Close()
	if snapshots != 3 || versions == 0 {
		t.Fatalf("%d account snapshots and %d card versions after run 1; want 3 and some", snapshots, versions)
	}
	before, err := os.ReadFile(d.db)
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := d.run("restore", backup)
	if code != 6 {
		t.Fatalf("restore of run 1's backup after 3 runs: exit %d, want 6\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"refused, nothing changed",
		"it would discard 2 runs, 2 account snapshots and " + strconv.FormatInt(versions, 10) + " card versions the warehouse holds and the file lacks",
		"the warehouse " + d.db + ": 3 runs, 3 account snapshots, ",
		", newest run 3 started ",
		"the file      " + backup + ": 1 run, 1 account snapshot, ",
		", newest run 1 started ",
		"-force",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, errOut)
		}
	}
	if after, err := os.ReadFile(d.db); err != nil || string(after) != string(before) {
		t.Errorf("a refused restore changed the warehouse (%v)", err)
	}
	if kept, _ := filepath.Glob(d.db + ".before-restore*"); len(kept) != 0 {
		t.Errorf("a refused restore kept %v", kept)
	}

	code, out, errOut = d.run("restore", "-force", backup)
	if code != 0 {
		t.Fatalf("restore -force: exit %d\n%s\n%s", code, out, lastLines(errOut))
	}
	first := keptAs(t, out)
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(d.db) + `\.before-restore-\d{8}T\d{6}Z$`).MatchString(first) {
		t.Errorf("kept as %s, want %s.before-restore-YYYYMMDDTHHMMSSZ", first, d.db)
	}
	if !strings.Contains(out, "lacks 2 runs, 2 account snapshots") {
		t.Errorf("restore -force does not say what the restored warehouse lacks:\n%s", out)
	}
	if n := countRuns(t, d.db, ""); n != 1 {
		t.Errorf("restored warehouse has %d runs, want the backup's 1", n)
	}
	if n := countRuns(t, first, ""); n != 3 {
		t.Errorf("%s has %d runs, want the replaced warehouse's 3", first, n)
	}

	// Nothing to lose now, but forced all the same: the first kept file
	// stays, the second gets its own name.
	code, out, errOut = d.run("restore", "-force", backup)
	if code != 0 {
		t.Fatalf("second restore -force: exit %d\n%s\n%s", code, out, lastLines(errOut))
	}
	second := keptAs(t, out)
	if second == first {
		t.Fatalf("the second restore kept the warehouse under the first one's name %s", first)
	}
	if n := countRuns(t, first, ""); n != 3 {
		t.Errorf("after a second restore %s has %d runs, want 3", first, n)
	}
	if n := countRuns(t, second, ""); n != 1 {
		t.Errorf("%s has %d runs, want 1", second, n)
	}

	checkStatusListsKept(t, d, first, second)
}

// checkStatusListsKept checks that status, in text and in -json, lists the
// files restores kept (first, second) with their time and size.
func checkStatusListsKept(t *testing.T, d *deployment, first, second string) {
	t.Helper()
	_, human, _ := d.run("status")
	for _, p := range []string{first, second} {
		if !strings.Contains(human, "kept       "+p+" (") {
			t.Errorf("status does not list %s:\n%s", p, human)
		}
	}
	_, js, errOut := d.run("status", "-json")
	var doc struct {
		Accounts []struct {
			Warehouse struct {
				BeforeRestore []struct {
					Path       string  `json:"path"`
					ReplacedAt *string `json:"replaced_at"`
					Bytes      int64   `json:"bytes"`
				} `json:"before_restore"`
			} `json:"warehouse"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Accounts) != 1 {
		t.Fatalf("status -json: %v\n%s\n%s", err, js, errOut)
	}
	var listed []string
	for _, k := range doc.Accounts[0].Warehouse.BeforeRestore {
		listed = append(listed, k.Path)
		if k.ReplacedAt == nil || k.Bytes <= 0 {
			t.Errorf("status -json lists %+v, want its time and size", k)
		}
	}
	slices.Sort(listed)
	if want := []string{first, second}; !slices.Equal(listed, want) {
		t.Errorf("status -json before_restore %v, want %v", listed, want)
	}
}

// TestRestoreAnotherWarehouse: a backup of staging restored over
// production exits 6 naming both identities, even though staging holds
// more runs; -force restores it.
func TestRestoreAnotherWarehouse(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 42, Cards: 30})
	prod := newDeployment(t, up)
	staging := newDeployment(t, up)
	backfillN(t, prod, up, 1)
	backfillN(t, staging, up, 2)
	backup := backupNow(t, staging)
	prodID := identity(t, prod.db)
	stagingID := identity(t, staging.db)
	if prodID == stagingID || len(prodID) != 32 {
		t.Fatalf("identities %q and %q, want two of 32 hex digits", prodID, stagingID)
	}
	code, out, errOut := prod.run("restore", backup)
	if code != 6 || !strings.Contains(errOut, "the file is a backup of another warehouse (identity "+stagingID+"; this warehouse's is "+prodID+")") {
		t.Fatalf("restore of staging's backup over production: exit %d, want 6 naming both identities\n%s\n%s", code, out, errOut)
	}
	if got := identity(t, prod.db); got != prodID {
		t.Errorf("a refused restore changed production's identity to %s", got)
	}
	if code, out, errOut := prod.run("restore", "-force", backup); code != 0 {
		t.Fatalf("restore -force: exit %d\n%s\n%s", code, out, lastLines(errOut))
	}
	if got := identity(t, prod.db); got != stagingID {
		t.Errorf("after restore -force the warehouse's identity is %s, want the restored file's %s", got, stagingID)
	}
}

// identity reads a warehouse file's identity.
func identity(t *testing.T, path string) string {
	t.Helper()
	db := openRO(t, path)
	defer db.Close()
	var id string
	if err := db.QueryRow(`SELECT warehouse_id FROM warehouse_identity`).Scan(&id); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return id
}

// TestBackupsShareADirectory: three warehouses back up into one directory
// with -keep 3, in turns: two named warehouse.db in different directories
// (their backups have the same names' pattern) and one prod.db. Each keeps
// its own newest 3 and never prunes another's, and says which files it
// left alone.
func TestBackupsShareADirectory(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 43, Cards: 20})
	a := newDeployment(t, up)
	b := newDeployment(t, up)
	c := newDeployment(t, up)
	c.db = filepath.Join(c.dir, "prod.db")
	c.env["CARDSYNC_WAREHOUSE_PATH"] = c.db
	dir := t.TempDir()
	mine := map[*deployment][]string{}
	for _, d := range []*deployment{a, b, c} {
		backfillN(t, d, up, 1)
	}
	for range 5 {
		for _, d := range []*deployment{a, b, c} {
			code, out, errOut := d.run("backup", "-to", dir, "-keep", "3", "-log-level", "info")
			if code != 0 {
				t.Fatalf("backup of %s: exit %d\n%s", d.db, code, lastLines(errOut))
			}
			mine[d] = append(mine[d], strings.TrimSpace(out))
		}
	}
	for d, paths := range mine {
		for i, p := range paths {
			_, err := os.Stat(p)
			if i < 2 && err == nil {
				t.Errorf("%s: %s kept, want only its newest 3", d.db, filepath.Base(p))
			}
			if i >= 2 && err != nil {
				t.Errorf("%s: its backup %s was pruned: %v", d.db, filepath.Base(p), err)
			}
		}
	}
	if got := filepath.Base(mine[c][0]); !strings.HasPrefix(got, "prod-") {
		t.Errorf("prod.db's backup named %s, want prod-YYYYMMDDTHHMMSSZ.db", got)
	}
	if got := filepath.Base(mine[a][0]); !backupFileRE.MatchString(got) {
		t.Errorf("warehouse.db's backup named %s, want warehouse-YYYYMMDDTHHMMSSZ.db", got)
	}
	// One more of b's: it leaves a's backups (same names) alone and says
	// so.
	_, _, errOut := b.run("backup", "-to", dir, "-keep", "3", "-log-level", "info")
	if !strings.Contains(errOut, `"msg":"backup left alone by pruning"`) || !strings.Contains(errOut, "a backup of another warehouse (identity "+identity(t, a.db)) {
		t.Errorf("b's backup did not say it left a's backups alone:\n%s", lastLines(errOut))
	}
	if _, err := os.Stat(mine[a][4]); err != nil {
		t.Errorf("b's backup pruned a's newest: %v", err)
	}
}

// TestUpgradeGivesIdentity: a warehouse of an earlier release (schema 4)
// has no identity, nor have the backups an earlier cardsync took of it. The
// first run upgrades it and gives it one; from then on its backups carry it
// and prune each other, never the older backups without one (each backup
// says so), and a restore of an old backup needs -force.
func TestUpgradeGivesIdentity(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 44, Cards: 30})
	d := newDeployment(t, up)
	dump, err := os.ReadFile("../load/sqlite/testdata/release4.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.LoadSQL(t.Context(), d.db, string(dump)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Backups an earlier cardsync took: copies of the file, named alike.
	raw, err := os.ReadFile(d.db)
	if err != nil {
		t.Fatal(err)
	}
	old := []string{filepath.Join(dir, "warehouse-20200101T000000Z.db"), filepath.Join(dir, "warehouse-20200102T000000Z.db")}
	for _, p := range old {
		if err := os.WriteFile(p, raw, 0o640); err != nil {
			t.Fatal(err)
		}
	}

	if code, _, errOut := d.run("backfill"); code != 0 {
		t.Fatalf("backfill of the schema-4 warehouse: exit %d\n%s", code, lastLines(errOut))
	}
	id := identity(t, d.db)
	if len(id) != 32 {
		t.Fatalf("identity after the upgrade %q, want 32 hex digits", id)
	}
	var latest string
	for range 3 {
		code, out, errOut := d.run("backup", "-to", dir, "-keep", "1", "-log-level", "info")
		if code != 0 {
			t.Fatalf("backup: exit %d\n%s", code, lastLines(errOut))
		}
		latest = strings.TrimSpace(out)
		if got := identity(t, latest); got != id {
			t.Errorf("backup %s carries identity %s, want the warehouse's %s", latest, got, id)
		}
		// The log masks card numbers, and t.TempDir's random digits
		// may read as one: look for the path as the log writes it.
		if !strings.Contains(errOut, `"msg":"backup left alone by pruning","path":"`+redact.PANs(old[0])+`","reason":"it has no warehouse identity`) {
			t.Errorf("the backup did not say it left %s alone:\n%s", old[0], lastLines(errOut))
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if backupFileRE.MatchString(e.Name()) {
			left = append(left, filepath.Join(dir, e.Name()))
		}
	}
	if want := []string{old[0], old[1], latest}; !slices.Equal(left, want) {
		t.Errorf("backups left %v, want the two without identity and the newest", left)
	}

	code, out, errOut := d.run("restore", old[1])
	if code != 6 || !strings.Contains(errOut, "the file has no warehouse identity") {
		t.Errorf("restore of a backup without identity: exit %d, want 6\n%s\n%s", code, out, errOut)
	}
}
