package main

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

func TestShellWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"cardsync-demo.db", "cardsync-demo.db"},
		{"/tmp/a b/demo.db", "'/tmp/a b/demo.db'"},
		{"it's.db", `'it'\''s.db'`},
		{"", "''"},
	} {
		if got := shellWord(c.in); got != c.want {
			t.Errorf("shellWord(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestHelpAndUsage(t *testing.T) {
	e := &env{t: t, vars: map[string]string{}}
	cmds := []string{"serve", "backfill", "status", "check", "demo", "sim", "backup", "restore", "report", "datasette-metadata"}
	sort.Strings(cmds)
	for _, c := range cmds {
		code, _, errOut := e.run(t.Context(), c, "-h")
		if code != 0 || !strings.Contains(errOut, "Examples:") {
			t.Errorf("%s -h: exit %d, output lacks examples:\n%s", c, code, errOut)
		}
		if c == "report" && (strings.Contains(errOut, "(per day)") || !strings.Contains(errOut, "at most 72 points")) {
			t.Errorf("report -h does not tell the charts' slots:\n%s", errOut)
		}
	}
	if code, _, _ := e.run(t.Context(), "nope"); code != exitConfig {
		t.Errorf("unknown command exit %d, want %d", code, exitConfig)
	}
	if code, _, _ := e.run(t.Context(), "backfill", "-password", "x"); code != exitConfig {
		t.Errorf("a -password flag must not exist (exit %d)", code)
	}
	if code, out, _ := e.run(t.Context(), "version"); code != 0 || !strings.HasPrefix(out, "cardsync ") || len(strings.Split(strings.TrimSpace(out), "\n")) != 4 {
		t.Errorf("version: %d %q", code, out)
	}
	if code, out, _ := e.run(t.Context(), "version", "-h"); code != 0 || !strings.HasPrefix(out, "Usage: cardsync version") {
		t.Errorf("version -h: %d %q, want its usage", code, out)
	}
	if code, _, errOut := e.run(t.Context(), "version", "-x"); code != exitConfig || !strings.Contains(errOut, `unexpected argument "-x"`) {
		t.Errorf("version -x: %d %q, want a usage error", code, errOut)
	}
}

// TestSmallOperatorMessages: check prints only its own lines (no routine
// log line between them) and, on a 401, the fix naming where the email
// and the password came from; a
// missing warehouse directory is named as such with the key to set.
func TestSmallOperatorMessages(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 3, Cards: 10})
	e.vars["CARDSYNC_LOG_LEVEL"] = "info"
	code, out, errOut := e.run(t.Context(), "check")
	if code != 0 || errOut != "" {
		t.Errorf("check: exit %d, stderr %q; want 0 and nothing on stderr at the info level", code, errOut)
	}
	if !strings.Contains(out, "ok    authenticated as") {
		t.Errorf("check output:\n%s", out)
	}
	e.vars["CARDSYNC_API_PASSWORD"] = "not-the-password"
	code, _, errOut = e.run(t.Context(), "check")
	if code != exitAuth || !strings.Contains(errOut, "fix: the API refused demo@example.com with the password of CARDSYNC_API_PASSWORD: correct api.email (env CARDSYNC_API_EMAIL)") ||
		!strings.Contains(errOut, "Administrator") {
		t.Errorf("check with a wrong password: exit %d, %q; want exit %d and the advice", code, errOut, exitAuth)
	}
	if strings.Contains(errOut, "not-the-password") {
		t.Errorf("check printed the password: %q", errOut)
	}
	e.vars["CARDSYNC_API_PASSWORD"] = sim.DefaultPassword
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = filepath.Join(missing, "w.db")
	code, _, errOut = e.run(t.Context(), "backfill")
	if code != exitWarehouse || !strings.Contains(errOut, "warehouse directory "+missing+" does not exist") || !strings.Contains(errOut, "warehouse.path") {
		t.Errorf("backfill into a missing directory: exit %d, %q", code, errOut)
	}
	// Nothing configured at all: said, not acted on with the defaults.
	e.vars = map[string]string{"CARDSYNC_LOG_LEVEL": "info"}
	for _, cmd := range []string{"status", "backfill", "check", "report", "backup"} {
		code, _, errOut = e.run(t.Context(), cmd)
		if code != exitConfig || !strings.Contains(errOut, "no configuration: pass -config FILE or set CARDSYNC_CONFIG") {
			t.Errorf("%s with no configuration: exit %d, %q", cmd, code, errOut)
		}
	}
}
