#!/usr/bin/env bash
# How many accounts one warehouse holds, on this machine (issue 24).
#
#   make bench-accounts                              # or: bash e2e/bench-accounts.sh
#   BENCH_ACCOUNTS_N=100,200 make bench-accounts     # the N to try, in order
#   BENCH_ACCOUNTS_TARGETS=sqlite make bench-accounts
#
# One `cardsync serve` (the built binary, pacing as shipped) syncs N
# accounts, each from its own simulator over loopback HTTP at the API's
# limits (180 requests and 10 tokens a minute), into one SQLite file and
# into one PostgreSQL database (a throwaway server from the Debian
# binaries, fsync on). After a warm-up (BENCH_ACCOUNTS_WARMUP, 30s) a window
# (BENCH_ACCOUNTS_WINDOW, 60s) measures each account's requests per minute
# at its simulator. An N passes when every account keeps >= 0.95 of 180/min
# with no 429. The N are tried in order until one fails, then bisected
# (BENCH_ACCOUNTS_BISECT rounds, 1). It prints a table per warehouse (pace
# min/median, 429s, CPU seconds per account per minute and RSS per account
# of the serve process, PostgreSQL connections, ERROR lines) and the largest
# N that passed. The PostgreSQL server keeps its default max_connections,
# 100 (BENCH_ACCOUNTS_PG_MAX_CONNECTIONS sets another): serve's accounts
# share one pool ([warehouse] max_connections, default 20), and "conns" is
# the most connections serve held during the window. Exit status 0 either way, or 1
# below BENCH_ACCOUNTS_GOAL (200) with BENCH_STRICT=1.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${BENCH_OUT:-$(mktemp -t cardsync-bench-accounts.XXXXXX)}"
goal="${BENCH_ACCOUNTS_GOAL:-200}"

echo "== machine"
echo "cpu:     $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "memory:  $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go:      $(go version | cut -d' ' -f3-)"
echo "pg:      $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1 || echo none)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo

CARDSYNC_BENCH_ACCOUNTS="${BENCH_ACCOUNTS_N:-default}" \
  go test -tags e2e -count=1 -timeout 3h -run '^TestAccountsPerWarehouse$' -v ./e2e/ | tee "$out" |
  grep -E '^(accounts bench|==|\|)|^(--- |FAIL|ok )|^  first ERROR'

echo
echo "goal: N >= $goal on every warehouse; raw output in $out"
missed=0
while read -r target n; do
  if [ "$n" -lt "$goal" ]; then
    echo "missed: $target holds $n accounts"
    missed=1
  fi
done < <(sed -n 's/^accounts bench: \([a-z]*\) holds N = \([0-9]*\) .*/\1 \2/p' "$out")
if [ "$missed" -eq 1 ] && [ -n "${BENCH_STRICT:-}" ]; then
  exit 1
fi
