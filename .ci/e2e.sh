#!/usr/bin/env bash
# e2e.sh: the end-to-end tier (`go test -tags e2e ./e2e`) in N shards run
# side by side, each a process of one test binary built once, with a 25-minute deadline
# (CARDSYNC_E2E_TIMEOUT): the shard holding TestREADME runs the docs'
# benchmarks too.
#
# Usage: .ci/e2e.sh [N]   (default: $CARDSYNC_E2E_SHARDS, else 3)
#
# The suite spends most of its time waiting (paced walks, schedules, kills
# timed against a walk, PostgreSQL), not computing: one process runs its
# ~70 tests one after another in about 10 minutes on a quiet 2-core
# machine, three processes side by side in about a third of that. Tests
# are dealt to shards longest first (the hints below; any other test in
# listed order), round robin. Each shard builds nothing twice: the binary
# comes from the shared build cache (internal/testbinary), the test binary
# is built once. The output of
# each shard is printed when it ends; the script fails if any shard did.
set -euo pipefail
cd "$(dirname "$0")/.."
shards="${1:-${CARDSYNC_E2E_SHARDS:-3}}"
# The longest tests, longest first: only the order of dealing.
heavy="TestREADME TestBackupKilled TestFaults TestPostgresFaults TestSIGKILLResume TestPostgresTwoWriters
TestReplicasSharePostgres TestPostgresMassRemovalGuard TestPostgresCanarySecrets TestSecretsInDataProof
TestPostgresSecretsInDataProof TestREADMEPostgres TestManyAccountsOneDaemon TestPostgresOddData"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One test binary for every shard: each `go test` process would compile
# and link its own.
go test -tags e2e -c -o "$out/e2e.test" ./e2e
mapfile -t listed < <(cd e2e && "$out/e2e.test" -test.list '^Test' | grep '^Test')
ordered=()
for t in $heavy; do
  for l in "${listed[@]}"; do [ "$l" = "$t" ] && ordered+=("$t"); done
done
for l in "${listed[@]}"; do
  case " $heavy " in *[[:space:]]"$l"[[:space:]]*) ;; *) ordered+=("$l") ;; esac
done
[ "${#ordered[@]}" -eq "${#listed[@]}" ] || { echo "e2e.sh: dealt ${#ordered[@]} of ${#listed[@]} tests"; exit 1; }
declare -a groups
for i in "${!ordered[@]}"; do
  s=$((i % shards))
  groups[s]="${groups[s]:+${groups[s]}|}${ordered[i]}"
done
start=$SECONDS
pids=()
for s in $(seq 0 $((shards - 1))); do
  # -timeout: CI runs the shards beside the race tier, and TestREADME
  # alone runs every command of the docs, `make bench` included (about 5
  # minutes on a quiet machine, near 9 beside the race detector).
  # As go test runs it: in the package's directory.
  (cd e2e && exec "$out/e2e.test" -test.count=1 -test.timeout "${CARDSYNC_E2E_TIMEOUT:-25m}" -test.run "^(${groups[s]})\$") >"$out/$s" 2>&1 &
  pids+=($!)
done
failed=0
for s in "${!pids[@]}"; do
  if wait "${pids[s]}"; then status=ok; else status=FAILED; failed=1; fi
  echo "-- e2e shard $((s + 1))/$shards ($status): ${groups[s]//|/ }"
  cat "$out/$s"
done
echo "e2e tier: ${#ordered[@]} tests in $shards shards, $((SECONDS - start))s"
exit $failed
