package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// TestRescanCommand: a warehouse and a backup "written by an older
// release" (rules version 1, a card holding the API password) make status
// and check warn, naming cardsync rescan; rescan -backups cleans both and
// the warnings stop.
func TestRescanCommand(t *testing.T) {
	const password = "Rescan-Pa55word-9"
	_, e := newEnv(t, sim.Options{Seed: 7, Cards: 30, Password: password})
	e.vars["CARDSYNC_API_PASSWORD"] = password
	ctx := t.Context()
	if code, _, errOut := e.run(ctx, "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	db, err := sql.Open("sqlite", "file:"+e.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE card_state SET data = json_set(data, '$.note', 'pw ` + password + `') WHERE card_id = (SELECT min(card_id) FROM card_state)`,
		`UPDATE card_versions SET data = json_set(data, '$.note', 'pw ` + password + `') WHERE card_id = (SELECT min(card_id) FROM card_state)`,
		`UPDATE rules_state SET rules_version = 1`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	code, out, errOut := e.run(ctx, "backup")
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, errOut)
	}
	backup := strings.TrimSpace(out)
	if err := os.Chmod(backup, 0o600); err != nil {
		t.Fatal(err)
	}
	identity := func(path string) string {
		var id string
		if err := openDB(t, path).QueryRow(`SELECT warehouse_id FROM warehouse_identity`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	id := identity(backup)

	_, out, _ = e.run(ctx, "status")
	if !strings.Contains(out, "data rules version 1") || strings.Count(out, "cardsync rescan") != 2 || !strings.Contains(out, backup) {
		t.Errorf("status before rescan does not warn of the warehouse and the backup:\n%s", out)
	}
	_, out, _ = e.run(ctx, "status", "-json")
	var rep worker.StatusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if wh := rep.Accounts[0].Warehouse; wh.RulesVersion != 1 || wh.CurrentRulesVersion != redact.RulesVersion || len(wh.RulesWarnings) != 2 {
		t.Errorf("status -json warehouse = %+v, want rules version 1 and two warnings", wh)
	}
	_, out, _ = e.run(ctx, "check")
	if strings.Count(out, "WARN  ") != 2 || !strings.Contains(out, "cardsync rescan") {
		t.Errorf("check before rescan does not warn:\n%s", out)
	}

	code, out, errOut = e.run(ctx, "rescan", "-backups", "-batch", "7")
	if code != 0 || !strings.Contains(out, "warehouse rescanned") || !strings.Contains(out, "backup "+backup+" rescanned") {
		t.Fatalf("rescan: exit %d\n%s\n%s", code, out, errOut)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 || identity(backup) != id {
		t.Errorf("rewritten backup: %v, %v; want mode 0600 and identity %s kept", fi.Mode(), err, id)
	}
	_, out, _ = e.run(ctx, "status")
	if strings.Contains(out, "cardsync rescan") {
		t.Errorf("status after rescan still warns:\n%s", out)
	}
	_, out, _ = e.run(ctx, "check")
	if strings.Contains(out, "WARN") {
		t.Errorf("check after rescan still warns:\n%s", out)
	}
	for _, f := range []string{e.db, e.db + "-wal", backup} {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), password) {
			t.Errorf("%s still holds the password", filepath.Base(f))
		}
	}
	// A second rescan has nothing to do.
	if code, out, _ := e.run(ctx, "rescan", "-backups"); code != 0 || !strings.Contains(out, "0 rows changed") || !strings.Contains(out, "already at rules version") {
		t.Errorf("second rescan: exit %d\n%s", code, out)
	}
}
