#!/usr/bin/env bash
# The cost of a run, side by side with sqlite-utils, on this machine.
#
#   make bench                 # or: bash e2e/bench.sh
#   BENCH_COUNT=3 make bench   # each benchmark 3 times, medians printed
#   BENCH_SMOKE=1 make bench   # a twentieth of the cards: proves it runs (TestREADME), measures nothing
#
# It installs sqlite-utils from the Debian package when it is missing, runs
# the end-to-end benchmarks (the built cardsync binary against the
# simulator on loopback, 10,000 cards, pacing off; sqlite-utils upserting
# the same cards as JSON; a 20,000-card backfill into PostgreSQL, fsync on,
# beside SQLite), and prints each figure beside its goal. It exits
# 0 either way (noisy shared machines miss a goal now and then; the figures
# are for a person to read), or 1 on a missed goal with BENCH_STRICT=1. The raw benchmark output is kept in
# $BENCH_OUT (default: a temporary file, named at the end).
set -euo pipefail
cd "$(dirname "$0")/.."

count="${BENCH_COUNT:-1}"
out="${BENCH_OUT:-$(mktemp -t cardsync-bench.XXXXXX)}"

if ! command -v sqlite-utils >/dev/null 2>&1; then
  echo "sqlite-utils is missing: installing the Debian package"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq sqlite-utils >/dev/null
fi

echo "== machine"
echo "cpu:     $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "memory:  $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "kernel:  $(uname -sr)"
echo "fs:      $(df -T "${TMPDIR:-/tmp}" | awk 'NR==2 {print $2}') (${TMPDIR:-/tmp})"
echo "go:      $(go version | cut -d' ' -f3-)"
echo "peer:    $(sqlite-utils --version)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo

echo "== go test -tags e2e -run '^\$' -bench 'QuietRun|LoadOnly|Memory' -benchtime 1x -count $count ./e2e/"
go test -tags e2e -run '^$' -bench 'QuietRun|LoadOnly|Memory' -benchtime 1x -count "$count" ./e2e/ | tee "$out"
echo

# PostgreSQL side by side with SQLite: a throwaway PostgreSQL started from
# the Debian binaries with fsync on (skipped without them), 20,000 new
# cards into each, then a re-run of the unchanged cards.
echo "== go test -tags e2e -run '^\$' -bench 'PostgresBackfill' -benchtime 1x -count $count ./e2e/"
go test -tags e2e -run '^$' -bench 'PostgresBackfill' -benchtime 1x -count "$count" ./e2e/ | tee -a "$out"
echo

# 90 days at 15 minutes: 8,640 quiet runs through the worker on a small
# warehouse; what grows per run (run history, balance snapshots) does not
# depend on the number of cards.
runs90="${BENCH_QUIET_RUNS:-8640}"
echo "== QUIET_RUNS=$runs90 go test -count=1 -run 'TestQuietRunsDoNotGrow/plain' -v ./worker/"
QUIET_RUNS="$runs90" go test -count=1 -run 'TestQuietRunsDoNotGrow/plain' -v ./worker/ | tee -a "$out" | grep -E 'quiet runs:|^(ok|FAIL|---)'
echo

# metric NAME: the median of the values reported with unit NAME.
metric() {
  local vals n
  vals=$(awk -v u="$1" '/^Benchmark/ { for (i = 4; i <= NF; i++) if ($i == u) print $(i-1) }' "$out" | sort -g)
  n=$(printf '%s\n' "$vals" | grep -c . || true)
  if [ "$n" -eq 0 ]; then echo "-"; return; fi
  printf '%s\n' "$vals" | sed -n "$(( (n + 1) / 2 ))p"
}

written=$(metric quiet_written_MiB)
growth=$(metric quiet_growth_KiB)
used0=$(metric first_used_KiB)
cpu=$(metric quiet_cpu_s)
su_cpu=$(metric sqlite-utils_unchanged_cpu_s)
cpu_ratio=$(metric quiet_cpu/sqlite-utils)
new_ratio=$(metric load/sqlite-utils_new)
same_ratio=$(metric load/sqlite-utils_unchanged)
new_rate=$(metric new_cards/s)
same_rate=$(metric unchanged_cards/s)
rss10=$(metric rss_10k_KiB)
rss100=$(metric rss_100k_KiB)
rss_ratio=$(metric rss_ratio)
pg_new=$(metric pg_new_s)
lite_new=$(metric sqlite_new_s)
pg_ratio=$(metric pg/sqlite_new)
pg_same=$(metric pg_unchanged_s)
lite_same=$(metric sqlite_unchanged_s)
pg_same_ratio=$(metric pg/sqlite_unchanged)
pg_rows=$(metric pg_unchanged_card_rows_written)
# 90 days at 15 minutes: 8,640 quiet runs growing as many bytes a run as
# the long worker test measured, against the 10,000-card file.
per_run=$(sed -n 's/.* quiet runs: .*, \([0-9][0-9]*\) bytes a run.*/\1/p' "$out" | tail -1)
per_run="${per_run:--}"
days90=$(awk -v g="$per_run" -v u="$used0" 'BEGIN { if (g != "-" && u != "-" && u > 0) printf "%.3f", 1 + 8640 * g / (u * 1024); else print "-" }')

missed=0
row() { # figure, measured, goal text, comparison (le|ge), bound
  local verdict
  verdict=$(awk -v v="$2" -v op="$4" -v b="$5" 'BEGIN {
    if (v !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print "NOT MEASURED"; exit }
    ok = (op == "le") ? (v + 0 <= b + 0) : (v + 0 >= b + 0)
    print ok ? "ok" : "MISSED" }')
  [ "$verdict" = "ok" ] || missed=1
  printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$verdict"
}

echo "== the cost of a run (10,000 cards, pacing off; quiet runs: median of 5 after a first full one)"
echo
echo "| Figure | Measured | Goal | |"
echo "|---|---|---|---|"
row "Bytes written by a quiet run (MiB, /proc/PID/io write_bytes)" "$written" "<= 4" le 4
row "Used-page growth per quiet run (KiB, median)" "$growth" "<= 2" le 2
row "File after 90 days of quiet runs / after the first run ($per_run bytes a run over $runs90 runs; $used0 KiB used)" "$days90" "<= 2" le 2
row "CPU of a quiet run / sqlite-utils re-upserting the same cards ($cpu s / $su_cpu s)" "$cpu_ratio" "<= 2" le 2
row "Load rate / sqlite-utils upsert, new cards (sqlite-utils $new_rate cards/s)" "$new_ratio" ">= 1.0" ge 1.0
row "Load rate / sqlite-utils upsert, unchanged cards (sqlite-utils $same_rate cards/s)" "$same_ratio" ">= 2" ge 2
row "Peak RSS 100k / 10k cards ($rss100 / $rss10 KiB)" "$rss_ratio" "<= 1.2" le 1.2
echo
echo "== PostgreSQL (fsync on) beside SQLite, 20,000 cards, pacing off (medians)"
echo
echo "| Figure | Measured | Goal | |"
echo "|---|---|---|---|"
row "Backfill of new cards, PostgreSQL / SQLite ($pg_new s / $lite_new s)" "$pg_ratio" "<= 2" le 2
printf '| %s | %s | %s | %s |\n' "Re-run of unchanged cards, PostgreSQL / SQLite ($pg_same s / $lite_same s)" "$pg_same_ratio" "(figure only)" ""
row "Card rows the PostgreSQL re-run wrote (card_state, card_versions)" "$pg_rows" "0" le 0
echo
echo "raw benchmark output: $out"
if [ "$missed" -ne 0 ]; then
  echo "a goal was missed or not measured"
  [ "${BENCH_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
