//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// procStat reads a running process's resident set and peak resident set
// (KiB) and the CPU time its threads have used. The CPU time is the sum of
// /proc/PID/task/*/schedstat (nanoseconds), since /proc/PID/stat counts in
// 10 ms ticks, too coarse for an idle daemon over a few seconds; without
// schedstat it falls back to the ticks.
func procStat(b *testing.B, pid int) (rssKiB, hwmKiB int64, cpu time.Duration) {
	b.Helper()
	status := fmt.Sprintf("/proc/%d/status", pid)
	rssKiB, hwmKiB = procField(status, "VmRSS:"), procField(status, "VmHWM:")
	if rssKiB == 0 {
		b.Skip("no /proc/PID/status VmRSS on this platform")
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(raw)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			cpu += time.Duration(ns)
		}
	}
	if cpu > 0 {
		return rssKiB, hwmKiB, cpu
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// utime and stime are fields 14 and 15 of the line; counting from the
	// state (field 3) after the parenthesised command name, which may hold
	// spaces, they are at 11 and 12. USER_HZ is 100 wherever Go runs.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return rssKiB, hwmKiB, time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkIdleDaemon starts `cardsync serve` (hourly schedule, run on
// start) against a 1,000-card simulator, waits until the first run has
// succeeded, and samples its RSS and CPU over three idle seconds.
func BenchmarkIdleDaemon(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs the daemon for seconds")
	}
	for b.Loop() {
		up := benchUpstream(b, sim.Options{Seed: 1, Cards: 1000})
		d := benchDeployment(b, up)
		d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
		d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		cmd, _, stderr := d.command(ctx, "serve")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()

		// Poll the warehouse read-only until the first run succeeded.
		deadline := time.Now().Add(30 * time.Second)
		for {
			if st := firstRunStatus(d.db); st == "succeeded" {
				break
			} else if st != "" && st != "running" {
				b.Fatalf("first run %s\n%s", st, tail(stderr.String(), 4000))
			}
			select {
			case err := <-done:
				b.Fatalf("serve exited before its first run succeeded: %v\n%s", err, tail(stderr.String(), 4000))
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				b.Fatalf("no successful run after 30s\n%s", tail(stderr.String(), 4000))
			}
		}
		// Let the run's tail (run record, WAL checkpoint) finish, then
		// measure a quiet stretch.
		time.Sleep(500 * time.Millisecond)
		pid := cmd.Process.Pid
		_, _, t0 := procStat(b, pid)
		start := time.Now()
		time.Sleep(3 * time.Second)
		rss, hwm, t1 := procStat(b, pid)
		wall := time.Since(start)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatalf("serve after SIGTERM: %v\n%s", err, tail(stderr.String(), 4000))
		}
		cancel()
		b.ReportMetric(float64(rss), "idle_rss_KiB")
		b.ReportMetric(float64(t1-t0)/float64(wall)*100, "idle_cpu_pct")
		b.ReportMetric(float64(hwm), "peak_rss_KiB")
	}
}

// firstRunStatus returns the status of the warehouse's first run, or ""
// while there is none (or no database yet).
func firstRunStatus(path string) string {
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return ""
	}
	defer db.Close()
	var st string
	if err := db.QueryRow(`SELECT status FROM sync_runs ORDER BY run_id LIMIT 1`).Scan(&st); err != nil {
		return ""
	}
	return st
}
