//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/sim"
)

// unitFile is a parsed systemd unit file: section -> key -> values, in
// file order (a key may be set several times).
type unitFile map[string]map[string][]string

// get returns the last value of key in section ("" when unset), as
// systemd does for single-valued settings.
func (u unitFile) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// readUnit parses systemd/NAME: sections, KEY=VALUE lines, comments (#, ;);
// the units use no line continuations.
func readUnit(t *testing.T, name string) unitFile {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "systemd", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case strings.HasSuffix(line, "\\"):
			t.Fatalf("systemd/%s:%d: a continuation line; this parser does not read them", name, n)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("systemd/%s:%d: not KEY=VALUE in a section: %q", name, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// readGuides returns README.md and every guide in docs/, one after the
// other.
func readGuides(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, name := range docFiles(t) {
		b.WriteString(readDoc(t, name))
		b.WriteString("\n")
	}
	return b.String()
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// textfileDropIn is the drop-in of cardsync-backfill.service, relative to
// systemd/, that writes node_exporter's textfile.
const textfileDropIn = "cardsync-backfill.service.d/textfile.conf"

// hardening are the sandbox settings every cardsync service shares with
// cardsync.service (systemd/check.sh scores each; this keeps them equal).
var hardening = []string{
	"ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateMounts", "PrivateDevices", "ProtectProc",
	"ProcSubset", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
	"ProtectControlGroups", "ProtectClock", "ProtectHostname", "NoNewPrivileges", "CapabilityBoundingSet",
	"AmbientCapabilities", "PrivateUsers", "RestrictSUIDSGID", "RemoveIPC", "LockPersonality",
	"MemoryDenyWriteExecute", "RestrictRealtime", "RestrictNamespaces", "RestrictAddressFamilies",
	"SystemCallArchitectures", "SystemCallFilter", "SystemCallErrorNumber", "DevicePolicy", "KeyringMode",
	"User", "Group", "UMask", "StateDirectoryMode", "ConfigurationDirectory", "MemoryMax", "LimitCORE",
}

// TestSystemdUnits holds the units in systemd/ to what the docs (README.md,
// the guides in docs/ and systemd/README.md) say of
// them and to each other: one sandbox for every cardsync service, the
// template's per-instance paths, the timer's schedule, the exit codes,
// the textfile path, and one documented way to run a one-off command.
// systemd/check.sh (CI's "systemd unit" step) verifies and scores them
// with systemd-analyze; this test needs no systemd.
func TestSystemdUnits(t *testing.T) {
	serve := readUnit(t, "cardsync.service")
	tmpl := readUnit(t, "cardsync@.service")
	backfill := readUnit(t, "cardsync-backfill.service")
	timer := readUnit(t, "cardsync-backfill.timer")
	readme := readGuides(t)
	unitsDoc := readDoc(t, "systemd/README.md")

	services := map[string]unitFile{"cardsync.service": serve, "cardsync@.service": tmpl, "cardsync-backfill.service": backfill}
	for name, u := range services {
		// The Debian package rewrites this prefix to /usr/bin/cardsync.
		if ex := u["Service"]["ExecStart"]; len(ex) != 1 || !strings.HasPrefix(ex[0], "/usr/local/bin/cardsync ") {
			t.Errorf("%s: ExecStart = %q, want one line starting /usr/local/bin/cardsync", name, ex)
		}
		for _, k := range hardening {
			if got, want := u["Service"][k], serve["Service"][k]; !slices.Equal(got, want) {
				t.Errorf("%s: %s = %q, cardsync.service has %q", name, k, got, want)
			}
		}
		cred := u.get("Service", "LoadCredential")
		if id, _, _ := strings.Cut(cred, ":"); id != config.CredentialName {
			t.Errorf("%s: LoadCredential=%s: the credential cardsync reads is %s", name, cred, config.CredentialName)
		}
	}
	if serve.get("Service", "MemoryMax") == "" {
		t.Error("cardsync.service sets no MemoryMax=, which the runbook points at")
	}

	// Restarts: the same policy for both daemons, written the same in the README.
	for name, u := range map[string]unitFile{"cardsync.service": serve, "cardsync@.service": tmpl} {
		if got := u.get("Service", "RestartPreventExitStatus"); got != "2 3 243" {
			t.Errorf("%s: RestartPreventExitStatus=%s, want 2 3 243 (see the comment in the unit)", name, got)
		}
		if u.get("Service", "Restart") != "on-failure" || u.get("Unit", "StartLimitIntervalSec") != "0" {
			t.Errorf("%s: want Restart=on-failure and [Unit] StartLimitIntervalSec=0", name)
		}
		if u.get("Service", "Type") != "notify" || u.get("Service", "WatchdogSec") == "" {
			t.Errorf("%s: want Type=notify with a watchdog", name)
		}
	}
	for _, s := range []string{"RestartPreventExitStatus=2 3 243", "StartLimitIntervalSec=0", "MemoryMax=" + serve.get("Service", "MemoryMax"),
		"SuccessExitStatus=" + backfill.get("Service", "SuccessExitStatus"), "TimeoutStartSec=" + backfill.get("Service", "TimeoutStartSec"),
		"OnCalendar=" + timer.get("Timer", "OnCalendar"), "RandomizedDelaySec=" + timer.get("Timer", "RandomizedDelaySec")} {
		if !strings.Contains(unitsDoc, s) {
			t.Errorf("systemd/README.md does not say %s", s)
		}
	}
	if !strings.Contains(readme, "MemoryMax="+serve.get("Service", "MemoryMax")) {
		t.Errorf("README.md and docs/ do not give the unit's MemoryMax=%s", serve.get("Service", "MemoryMax"))
	}

	// The template: everything an instance owns is named after it.
	for k, want := range map[string]string{
		"ExecStart":      "/usr/local/bin/cardsync serve -config /etc/cardsync/%i.toml",
		"StateDirectory": "cardsync/%i",
		"LoadCredential": config.CredentialName + ":/etc/cardsync/%i.api-password",
		"ExecReload":     serve.get("Service", "ExecReload"),
		"NotifyAccess":   serve.get("Service", "NotifyAccess"),
		"RestartSec":     serve.get("Service", "RestartSec"),
		"TimeoutStopSec": serve.get("Service", "TimeoutStopSec"),
		"WatchdogSec":    serve.get("Service", "WatchdogSec"),
	} {
		if got := tmpl.get("Service", k); got != want {
			t.Errorf("cardsync@.service: %s=%s, want %s", k, got, want)
		}
	}
	if serve.get("Service", "StateDirectory") != "cardsync" || backfill.get("Service", "StateDirectory") != "cardsync" {
		t.Error("cardsync.service and cardsync-backfill.service must share StateDirectory=cardsync")
	}

	checkBackfillTimer(t, backfill, timer, readme, unitsDoc)
	checkOneOffAndLinks(t, serve, readme, unitsDoc)
}

// checkBackfillTimer checks timer mode: the backfill unit, its textfile
// drop-in and the timer, and that the docs name them.
func checkBackfillTimer(t *testing.T, backfill, timer unitFile, readme, unitsDoc string) {
	t.Helper()
	// Timer mode: the backfill alone names nothing of node_exporter; its
	// textfile drop-in adds the flag (to the unit's own command) and lets
	// the unit write where the textfile goes.
	if backfill.get("Service", "Type") != "oneshot" || backfill["Install"] != nil {
		t.Error("cardsync-backfill.service: want Type=oneshot and no [Install] (the timer starts it)")
	}
	ex := backfill.get("Service", "ExecStart")
	if ex != "/usr/local/bin/cardsync backfill -config /etc/cardsync/config.toml" {
		t.Errorf("cardsync-backfill.service: ExecStart=%s, want the backfill alone (the textfile is the drop-in's)", ex)
	}
	if got := backfill["Service"]["ReadWritePaths"]; len(got) > 0 {
		t.Errorf("cardsync-backfill.service: ReadWritePaths=%q: the unit writes only its state directory (the textfile's is the drop-in's)", got)
	}
	dropin := readUnit(t, textfileDropIn)
	dex := dropin["Service"]["ExecStart"]
	if len(dex) != 2 || dex[0] != "" {
		t.Fatalf("%s: ExecStart=%q, want an empty one (clearing the unit's) then the command", textfileDropIn, dex)
	}
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(ex) + ` -metrics-textfile (\S+\.prom)$`).FindStringSubmatch(dex[1])
	if m == nil {
		t.Fatalf("%s: ExecStart=%s, want the unit's command with -metrics-textfile FILE.prom", textfileDropIn, dex[1])
	}
	textfile := m[1]
	if got := dropin["Service"]["ReadWritePaths"]; !slices.Equal(got, []string{"-" + filepath.Dir(textfile)}) {
		t.Errorf("%s: ReadWritePaths=%q, want -%s", textfileDropIn, got, filepath.Dir(textfile))
	}
	if len(dropin) != 1 || len(dropin["Service"]) != 2 {
		t.Errorf("%s sets more than ExecStart= and ReadWritePaths=: %v", textfileDropIn, dropin)
	}
	for doc, text := range map[string]string{"README.md and docs/": readme, "systemd/README.md": unitsDoc} {
		if !strings.Contains(text, textfile) {
			t.Errorf("%s does not name the textfile %s", doc, textfile)
		}
		if !strings.Contains(text, textfileDropIn) {
			t.Errorf("%s does not name the drop-in %s", doc, textfileDropIn)
		}
	}
	codes := strings.Fields(backfill.get("Service", "SuccessExitStatus"))
	if !slices.Equal(codes, []string{"4", "130"}) {
		t.Errorf("cardsync-backfill.service: SuccessExitStatus=%q, want 4 130", codes)
	}
	// Every 15 minutes, like the default [schedule] cron.
	if config.DefaultCron != "*/15 * * * *" || timer.get("Timer", "OnCalendar") != "*:00/15" {
		t.Errorf("the timer's OnCalendar=%s and the default cron %q disagree", timer.get("Timer", "OnCalendar"), config.DefaultCron)
	}
	if timer.get("Timer", "Persistent") != "true" || timer.get("Timer", "Unit") != "cardsync-backfill.service" ||
		timer.get("Unit", "Conflicts") != "cardsync.service" || timer.get("Install", "WantedBy") != "timers.target" {
		t.Errorf("cardsync-backfill.timer: want Persistent=true, Unit=cardsync-backfill.service, Conflicts=cardsync.service, WantedBy=timers.target: %v", timer)
	}
}

// checkOneOffAndLinks checks the one documented way to run a one-off
// command as the service user, and the links into systemd/README.md.
func checkOneOffAndLinks(t *testing.T, serve unitFile, readme, unitsDoc string) {
	t.Helper()
	// One documented way to run a one-off command as the service user:
	// defined once in systemd/README.md, with the unit's identity.
	if strings.Contains(readme, "sudo -u cardsync") || strings.Contains(unitsDoc, "sudo -u cardsync") {
		t.Error("a README runs cardsync with sudo -u cardsync: use the one-off form of systemd/README.md")
	}
	if n := strings.Count(unitsDoc, "as_cardsync() {"); n != 1 {
		t.Errorf("systemd/README.md defines as_cardsync %d times, want 1", n)
	}
	if strings.Contains(readme, "as_cardsync() {") {
		t.Error("README.md or a guide in docs/ defines as_cardsync: it belongs to systemd/README.md only")
	}
	def := unitsDoc[strings.Index(unitsDoc, "as_cardsync() {"):]
	def = def[:strings.Index(def, "\n}")]
	for _, k := range []string{"User", "Group", "UMask", "StateDirectory", "StateDirectoryMode", "LoadCredential"} {
		if want := "-p " + k + "=" + serve.get("Service", k) + " "; !strings.Contains(def, want) {
			t.Errorf("systemd/README.md: as_cardsync lacks %q (cardsync.service's)", strings.TrimSpace(want))
		}
	}
	if strings.Contains(readme, "as_cardsync") && !strings.Contains(readme, "systemd/README.md#one-off-commands-as-the-service-user") {
		t.Error("README.md or docs/ use as_cardsync without linking to its definition")
	}

	// Links from README.md and docs/ into systemd/README.md, and within it, name headings that exist.
	anchors := map[string]bool{}
	for _, line := range strings.Split(unitsDoc, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			anchors[githubAnchor(h)] = true
		}
	}
	for doc, re := range map[string]*regexp.Regexp{
		"README.md and docs/": regexp.MustCompile(`\((?:\.\./)?systemd/README\.md#([^)]+)\)`),
		"systemd/README.md":   regexp.MustCompile(`\]\(#([^)]+)\)`),
	} {
		text := readme
		if doc != "README.md and docs/" {
			text = unitsDoc
		}
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if !anchors[m[1]] {
				t.Errorf("%s links to systemd/README.md#%s: no such heading", doc, m[1])
			}
		}
	}
}

// githubAnchor is the id GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than - and _ dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestBackfillUnitCommand runs cardsync-backfill.service's ExecStart= as
// set by its textfile drop-in, as the timer would (its config and textfile
// paths moved to a scratch directory, the password as the systemd
// credential it gets from LoadCredential=): it syncs and leaves a 0644
// textfile that node_exporter can read, with the run counted.
func TestBackfillUnitCommand(t *testing.T) {
	u := readUnit(t, "cardsync-backfill.service")
	args := strings.Fields(readUnit(t, textfileDropIn).get("Service", "ExecStart"))
	up := newUpstream(t, sim.Options{Seed: 26, Cards: 40})
	d := newDeployment(t, up)
	creds := t.TempDir()
	cred, _, _ := strings.Cut(u.get("Service", "LoadCredential"), ":")
	if err := os.WriteFile(filepath.Join(creds, cred), []byte(sim.DefaultPassword+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	delete(d.env, "CARDSYNC_API_PASSWORD")
	d.env["CREDENTIALS_DIRECTORY"] = creds
	cfg := filepath.Join(d.dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[api]\nbase_url = %q\nemail = %q\n[warehouse]\npath = %q\n", up.URL, sim.DefaultEmail, d.db)), 0o644); err != nil {
		t.Fatal(err)
	}
	textfiles := t.TempDir()
	var textfile string
	for i, a := range args {
		switch {
		case a == "/etc/cardsync/config.toml":
			args[i] = cfg
		case strings.HasSuffix(a, ".prom"):
			textfile = filepath.Join(textfiles, filepath.Base(a))
			args[i] = textfile
		}
	}
	if args[0] != "/usr/local/bin/cardsync" || textfile == "" {
		t.Fatalf("ExecStart=%q", args)
	}
	code, stdout, stderr := d.run(args[1:]...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
	}
	fi, err := os.Stat(textfile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode %04o, want 0644 (node_exporter runs as another user)", fi.Mode().Perm())
	}
	f, err := os.Open(textfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("the textfile does not parse: %v", err)
	}
	found := false
	for _, m := range fams["cardsync_runs_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["trigger"] == "backfill" && labels["status"] == "succeeded" {
			found = true
			if v := m.GetCounter().GetValue(); v != 1 {
				t.Errorf("cardsync_runs_total%v = %v, want 1", labels, v)
			}
		}
	}
	if !found {
		t.Error("no cardsync_runs_total{trigger=backfill,status=succeeded} in the textfile")
	}
}
