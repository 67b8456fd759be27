package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cardsync/cardsync/sim"
)

// readTextfile parses a metrics textfile with the Prometheus text parser.
func readTextfile(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	return fams
}

// sample returns the value of the series of name with exactly these labels.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			match = match && labels[l.GetName()] == l.GetValue()
		}
		if match {
			return m.GetCounter().GetValue() + m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// defaultAccount is the label set of the [api] table's one account.
var defaultAccount = map[string]string{"account": "default"}

func TestBackfillWritesMetricsTextfile(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 21, Cards: 20})
	path := filepath.Join(t.TempDir(), "cardsync.prom")
	if code, _, stderr := e.run(t.Context(), "backfill", "-metrics-textfile", path); code != 0 {
		t.Fatalf("backfill exit %d: %s", code, stderr)
	}
	fams := readTextfile(t, path)
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"cardsync_runs_total", map[string]string{"account": "default", "trigger": "backfill", "status": "succeeded"}, 1},
		{"cardsync_cards", map[string]string{"account": "default", "state": "live"}, 20},
		{"cardsync_cards_synced_total", map[string]string{"account": "default", "change": "new"}, 20},
		{"cardsync_auth_requests_total", map[string]string{"account": "default"}, 1},
		{"cardsync_warehouse_info", map[string]string{"kind": "sqlite"}, 1},
	}
	for _, c := range checks {
		if got, ok := sample(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	b := thisBuild()
	if got, ok := sample(fams, "cardsync_build_info", map[string]string{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion}); !ok || got != 1 {
		t.Errorf("cardsync_build_info = %v (present %v), want 1 labelled %+v", got, ok, b)
	}
	success, _ := sample(fams, "cardsync_last_success_timestamp_seconds", defaultAccount)
	if success < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last success %v, want about now", success)
	}
	if fams["go_goroutines"] != nil {
		t.Error("the textfile carries go_goroutines; node_exporter has its own")
	}
	// A backfill takes no scheduled backups: their zeros would fire
	// CardsyncBackupsNotConfigured or claim backups never succeeded.
	for _, name := range []string{"cardsync_backups_configured", "cardsync_backup_interval_seconds", "cardsync_backup_last_success_timestamp_seconds",
		"cardsync_backup_last_failure_timestamp_seconds", "cardsync_backups_total"} {
		if fams[name] != nil {
			t.Errorf("the textfile carries %s", name)
		}
	}

	// A failed run still writes the file; the last success comes from the
	// warehouse, not from this process.
	srv.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 400})
	if code, _, _ := e.run(t.Context(), "backfill", "-metrics-textfile", path); code == 0 {
		t.Fatal("backfill against an API answering 400 exited 0")
	}
	fams = readTextfile(t, path)
	if got, _ := sample(fams, "cardsync_runs_total", map[string]string{"account": "default", "trigger": "backfill", "status": "failed"}); got != 1 {
		t.Errorf("failed backfills = %v, want 1", got)
	}
	// The warehouse stamps whole seconds, taken a moment apart from the
	// first process's own clock reading: the two may straddle a second.
	if got, _ := sample(fams, "cardsync_last_success_timestamp_seconds", defaultAccount); got != math.Floor(got) || math.Abs(got-math.Floor(success)) > 1 {
		t.Errorf("last success after a failed run = %v, want the earlier %v (whole seconds, within one)", got, math.Floor(success))
	}
	if got, _ := sample(fams, "cardsync_runs_failed_in_a_row", defaultAccount); got != 1 {
		t.Errorf("failed in a row = %v, want 1", got)
	}
}

// logRecords decodes the JSON log lines of stderr.
func logRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// TestBackfillTextfileDirectoryMissing: a textfile whose directory does not
// exist (node_exporter not installed: one, two or three levels missing) is
// a warning naming the path and the fix, and the exit code is the sync's:
// 0 after a sync that succeeded, the failure's own after one that failed.
// A directory that exists but cannot hold the file (here a regular file
// where the directory should be) still fails the command.
func TestBackfillTextfileDirectoryMissing(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 23, Cards: 20})
	warned := func(t *testing.T, stderr, path string) {
		t.Helper()
		n := 0
		for _, r := range logRecords(t, stderr) {
			if r["level"] == "ERROR" {
				t.Errorf("an error logged: %v", r)
			}
			// The path's end only: the log masks what reads as a card
			// number, and the random digits of a temporary directory
			// with its "/003" can make one.
			if r["level"] == "WARN" && strings.HasSuffix(fmt.Sprint(r["path"]), path[strings.Index(path, "/missing0"):]) && strings.Contains(fmt.Sprint(r["msg"]), "directory does not exist") &&
				strings.Contains(fmt.Sprint(r["msg"]), "drop -metrics-textfile") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d warnings about the missing directory of %s, want 1:\n%s", n, path, stderr)
		}
	}
	for depth := 1; depth <= 3; depth++ {
		dir := t.TempDir()
		for i := range depth {
			dir = filepath.Join(dir, fmt.Sprintf("missing%d", i))
		}
		path := filepath.Join(dir, "cardsync.prom")
		code, out, stderr := e.run(t.Context(), "backfill", "-no-progress", "-metrics-textfile", path)
		if code != 0 || !strings.Contains(out, "succeeded") {
			t.Fatalf("backfill with %d missing directories: exit %d, want 0 (the sync succeeded)\n%s\n%s", depth, code, out, stderr)
		}
		warned(t, stderr, path)
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("backfill created %s (%v): the textfile's directory is not its to make", dir, err)
		}
	}

	// A directory that exists but may not be written (the setfacl step
	// not taken): a warning naming the fix, the sync's exit code. Root
	// writes any directory whatever its mode; sysfs refuses even root.
	locked := t.TempDir()
	if os.Geteuid() == 0 {
		locked = "/sys"
	} else if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	if f, err := os.CreateTemp(locked, "probe"); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Fatalf("%s is writable here: no directory to test an unwritable textfile directory with", locked)
	}
	lockedPath := filepath.Join(locked, "cardsync.prom")
	code, out, stderr := e.run(t.Context(), "backfill", "-no-progress", "-metrics-textfile", lockedPath)
	if code != 0 || !strings.Contains(out, "succeeded") {
		t.Errorf("backfill with an unwritable textfile directory: exit %d, want 0 (the sync succeeded)\n%s\n%s", code, out, stderr)
	}
	n := 0
	for _, r := range logRecords(t, stderr) {
		if r["level"] == "ERROR" {
			t.Errorf("an error logged: %v", r)
		}
		if m := fmt.Sprint(r["msg"]); r["level"] == "WARN" && strings.HasSuffix(fmt.Sprint(r["path"]), filepath.Base(locked)+"/cardsync.prom") && strings.Contains(m, "may not write") && strings.Contains(m, "setfacl") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings naming the fix for the unwritable %s, want 1:\n%s", n, locked, stderr)
	}

	notDir := filepath.Join(t.TempDir(), "node-exporter")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.run(t.Context(), "backfill", "-no-progress", "-metrics-textfile", filepath.Join(notDir, "cardsync.prom")); code != exitFailure ||
		!strings.Contains(stderr, "metrics textfile not written") {
		t.Errorf("backfill with a file where the textfile's directory should be: exit %d, want %d\n%s", code, exitFailure, stderr)
	}

	// A failed sync keeps its own exit code.
	srv.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 400})
	want, _, _ := e.run(t.Context(), "backfill", "-no-progress")
	if want == 0 {
		t.Fatal("backfill against an API answering 400 exited 0")
	}
	path := filepath.Join(t.TempDir(), "missing", "cardsync.prom")
	code, _, stderr = e.run(t.Context(), "backfill", "-no-progress", "-metrics-textfile", path)
	if code != want {
		t.Errorf("failed backfill with a missing textfile directory: exit %d, want the failure's %d\n%s", code, want, stderr)
	}
}

// freePort returns a loopback address nobody listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestServeServesMetricsAndHealth(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 22, Cards: 20})
	addr := freePort(t)
	e.vars["CARDSYNC_METRICS_LISTEN"] = addr
	e.vars["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	// sd_notify tells when the run at start-up has ended.
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	e.vars["NOTIFY_SOCKET"] = sock
	ran := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			if strings.HasPrefix(string(buf[:n]), "STATUS=last run 1 ") {
				close(ran)
				return
			}
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	var stderr string
	go func() {
		var code int
		code, _, stderr = e.run(ctx, "serve")
		done <- code
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	select {
	case <-ran:
	case code := <-done:
		t.Fatalf("serve exited %d before its first run ended: %s", code, stderr)
	case <-time.After(20 * time.Second):
		t.Fatal("the run at start-up did not end in 20s")
	}
	code, body := get("/metrics")
	for _, want := range []string{`cardsync_runs_total{account="default",status="succeeded",trigger="schedule"} 1`, `cardsync_cards{account="default",state="live"} 20`,
		"cardsync_healthy_within_seconds 10800", "go_goroutines", "process_start_time_seconds", buildInfoLine()} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if code, body := get("/healthz"); code != 200 || !strings.HasPrefix(body, "ok:") {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d: %s", code, stderr)
	}
	if code, _ := get("/healthz"); code != 0 {
		t.Errorf("/healthz answered %d after serve stopped", code)
	}
}

func TestServeRefusesABusyMetricsPort(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 23, Cards: 5})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e.vars["CARDSYNC_METRICS_LISTEN"] = l.Addr().String()
	code, _, stderr := e.run(t.Context(), "serve")
	if code == 0 || !strings.Contains(stderr, "metrics listen") {
		t.Errorf("serve with a busy metrics port: exit %d, stderr %s; want a failure naming metrics listen", code, stderr)
	}
}

// buildInfoLine is this binary's cardsync_build_info series as /metrics
// writes it.
func buildInfoLine() string {
	b := thisBuild()
	return fmt.Sprintf(`cardsync_build_info{goversion=%q,revision=%q,version=%q} 1`, b.GoVersion, b.Revision, b.Version)
}
