//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestBackupMetricsFollowSIGHUP: a serve without [backup] cron exports
// cardsync_backups_configured 0 and an interval of 0 from start-up; a
// reload to a weekly cron turns them to 1 and a week, the last success
// is seeded from the newest backup already in the directory, and since when
// backups run on this schedule is the reload (later than that backup), from
// which CardsyncBackupStale counts.
func TestBackupMetricsFollowSIGHUP(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 29, Cards: 10})
	d := newDeployment(t, up)
	addr := freeAddr(t)
	d.env["CARDSYNC_METRICS_LISTEN"] = addr
	cfg := filepath.Join(d.dir, "cardsync.toml")
	write := func(body string) {
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[schedule]\ncron = \"@every 1h\"\nrun_on_start = true\n")
	serve := d.startBG("serve", "-config", cfg)
	pollUntil(t, 30*time.Second, "backups not configured on /metrics", func() bool {
		m := scrape(addr)
		return m["cardsync_backups_configured"] == "0" && m["cardsync_backup_interval_seconds"] == "0" &&
			m["cardsync_backup_last_failure_timestamp_seconds"] == "0" && m[`cardsync_warehouse_info{kind="sqlite"}`] == "1" &&
			m["cardsync_backups_configured_timestamp_seconds"] == "0"
	}, serve)
	pollUntil(t, 30*time.Second, "the start-up run", func() bool { return countRuns(t, d.db, `WHERE status = 'succeeded'`) == 1 }, serve)
	// A backup by hand, then backups on a weekly cron (Sundays 02:30).
	if code, _, errOut := d.run("backup", "-config", cfg); code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, errOut)
	}
	write("[schedule]\ncron = \"@every 1h\"\n[backup]\ncron = \"30 2 * * 0\"\n")
	if err := serve.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 30*time.Second, "a weekly backup schedule on /metrics", func() bool {
		m := scrape(addr)
		last, _ := strconv.ParseFloat(m["cardsync_backup_last_success_timestamp_seconds"], 64)
		since, _ := strconv.ParseFloat(m["cardsync_backups_configured_timestamp_seconds"], 64)
		return m["cardsync_backups_configured"] == "1" && m["cardsync_backup_interval_seconds"] == "604800" && last > 0 && since >= last
	}, serve)
	stopDaemon(t, serve)
}

// scrape reads addr's /metrics into series -> value text (series with
// their labels as exposed); nil when it does not answer.
func scrape(addr string) map[string]string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			m[line[:i]] = line[i+1:]
		}
	}
	return m
}
