//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cardsync/cardsync/sim"
)

// procCost is what one finished process cost: bytes it caused to be
// written to storage (/proc/PID/io write_bytes: WAL, database file and
// checkpoints alike), CPU time (user+sys) and wall time.
type procCost struct {
	writeBytes int64
	cpu, wall  time.Duration
}

// runCost runs cmd to completion and measures it. write_bytes is read
// from /proc/PID/io after the process exited but before it is reaped
// (waitid with WNOWAIT keeps the zombie and its I/O counters); where that
// is impossible it falls back to rusage oublock, the same counter in
// 512-byte units.
func runCost(tb testing.TB, cmd *exec.Cmd) procCost {
	tb.Helper()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	writeBytes := int64(-1)
	if waitExited(cmd.Process.Pid) == nil {
		writeBytes = procIOField(fmt.Sprintf("/proc/%d/io", cmd.Process.Pid), "write_bytes:")
	}
	err := cmd.Wait()
	wall := time.Since(start)
	if err != nil {
		tb.Fatalf("%v: %v", cmd.Args, err)
	}
	if writeBytes < 0 {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			writeBytes = ru.Oublock * 512
		}
	}
	return procCost{writeBytes: writeBytes, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall: wall}
}

// waitExited waits until process pid has exited without reaping it
// (waitid(P_PID, pid, WEXITED|WNOWAIT)), so its /proc entry stays readable.
func waitExited(pid int) error {
	const pPID, wEXITED, wNOWAIT = 1, 4, 0x01000000
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), wEXITED|wNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

// procIOField reads one counter of a /proc/PID/io file (-1 when absent).
func procIOField(path, name string) int64 {
	raw, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// usedBytes is the warehouse's used size: (page_count - freelist_count) *
// page_size, read through a read-only connection (WAL included).
func usedBytes(tb testing.TB, path string) int64 {
	tb.Helper()
	db := benchDB(tb, path)
	defer db.Close()
	return (benchInt(tb, db, `PRAGMA page_count`) - benchInt(tb, db, `PRAGMA freelist_count`)) * benchInt(tb, db, `PRAGMA page_size`)
}

func median[T int64 | time.Duration | float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkQuietRun measures what a run with no upstream change costs,
// the common case of a scheduled sync (most of the 96 runs a day find
// nothing new). It backfills 10,000 cards with pacing off, then runs five
// more backfills with nothing changed upstream and reports the median of
// those five: bytes written to storage (/proc/PID/io write_bytes, WAL and
// checkpoints included), growth of the used pages (page_count -
// freelist_count) and CPU time (user+sys). It also reports the used size
// after the first run, the mean growth over the five runs (a used page is
// 4 KiB, so a run that adds less shows a median of 0) and how many quiet
// runs at that mean would double the size (90 days at 15 minutes are
// 8,640), and, when sqlite-utils is on PATH, the
// CPU of `sqlite-utils upsert --pk id` re-upserting the same cards unchanged
// (median of five) and the ratio of the two CPU times.
//
//	go test -tags e2e -run '^$' -bench QuietRun -benchtime 1x ./e2e/
func BenchmarkQuietRun(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs the binary six times")
	}
	const quiet = 5
	cards := benchCards(10000)
	for b.Loop() {
		up := benchUpstream(b, sim.Options{Seed: 1, Cards: cards})
		d := benchDeployment(b, up)
		run := func() procCost {
			ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
			defer cancel()
			cmd, _, _ := d.command(ctx, "backfill", "-no-progress")
			return runCost(b, cmd)
		}
		first := run()
		used0 := usedBytes(b, d.db)
		var written, growth []int64
		var cpu, wall []time.Duration
		prev := used0
		for range quiet {
			c := run()
			used := usedBytes(b, d.db)
			written = append(written, c.writeBytes)
			growth = append(growth, used-prev)
			cpu = append(cpu, c.cpu)
			wall = append(wall, c.wall)
			prev = used
		}
		db := benchDB(b, d.db)
		if n := benchInt(b, db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded' AND cards_new + cards_changed + cards_removed = 0`); n != quiet {
			b.Fatalf("%d quiet runs recorded, want %d", n, quiet)
		}
		db.Close()

		b.ReportMetric(float64(first.writeBytes)/(1<<20), "first_written_MiB")
		b.ReportMetric(float64(used0)/(1<<10), "first_used_KiB")
		b.ReportMetric(float64(median(written))/(1<<20), "quiet_written_MiB")
		b.ReportMetric(float64(median(growth))/(1<<10), "quiet_growth_KiB")
		b.ReportMetric(float64(slices.Max(growth))/(1<<10), "quiet_growth_max_KiB")
		mean := float64(prev-used0) / quiet
		b.ReportMetric(mean/(1<<10), "quiet_growth_mean_KiB")
		if mean > 0 {
			b.ReportMetric(float64(used0)/mean, "quiet_runs_to_double")
		}
		b.ReportMetric(median(cpu).Seconds(), "quiet_cpu_s")
		b.ReportMetric(median(wall).Seconds(), "quiet_wall_s")

		tool, err := exec.LookPath("sqlite-utils")
		if err != nil {
			continue
		}
		dir := b.TempDir()
		jsonPath := filepath.Join(dir, "cards.json")
		var arr bytes.Buffer
		arr.WriteByte('[')
		for i, c := range up.Cards() {
			if i > 0 {
				arr.WriteByte(',')
			}
			arr.Write(c.JSON())
		}
		arr.WriteByte(']')
		if err := os.WriteFile(jsonPath, arr.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		dbPath := filepath.Join(dir, "su.db")
		upsert := func() procCost {
			return runCost(b, exec.CommandContext(b.Context(), tool, "upsert", dbPath, "cards", jsonPath, "--pk", "id"))
		}
		upsert() // new
		var suCPU []time.Duration
		var suWritten []int64
		for range quiet {
			c := upsert()
			suCPU = append(suCPU, c.cpu)
			suWritten = append(suWritten, c.writeBytes)
		}
		b.ReportMetric(median(suCPU).Seconds(), "sqlite-utils_unchanged_cpu_s")
		b.ReportMetric(float64(median(suWritten))/(1<<20), "sqlite-utils_unchanged_written_MiB")
		b.ReportMetric(median(cpu).Seconds()/median(suCPU).Seconds(), "quiet_cpu/sqlite-utils")
	}
}
