#!/usr/bin/env bash
# fuzz.sh: fuzz every FuzzXxx target of the module, one run per target of
# its package's instrumented test binary (-fuzz takes one target a run).
# Targets are found by grep, so a new one needs no change here.
#
# Usage: .ci/fuzz.sh [FUZZTIME]   (default: $CARDSYNC_FUZZTIME, else 3000x)
#
# FUZZTIME is go test's -fuzztime: a count such as 3000x (CI: a few seconds
# a target, and never a failure by chance: Go 1.26's coordinator can miss
# its own time limit under CPU contention and report "context deadline
# exceeded" with no crasher, go.dev/issue/75804, which a count-bounded run
# does not meet) or a duration such as 10m (`make fuzz`, long runs by hand).
# A crasher is written to the package's testdata/fuzz/FuzzXxx/ and fails
# the run; commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-${CARDSYNC_FUZZTIME:-3000x}}"
targets=$(git grep -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go' |
  sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#; s#^[^/ ]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#. \1#' | sort -u)
if [ -z "$targets" ]; then echo "no fuzz targets found"; exit 1; fi
start=$SECONDS
n=0
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cache=$(go env GOCACHE)
built=""
while read -r dir name; do
  # One instrumented test binary per package (go test -c -fuzz), run once
  # per target: `go test -fuzz` would link a binary per target. The binary
  # runs in the package's directory, as go test runs it (its seed corpus
  # and crashers are testdata/fuzz/FuzzXxx there), with go test's cache
  # of generated inputs.
  pkg=$(go list "./$dir")
  exe="$bin/$(echo "$pkg" | tr / _).test"
  if [ "$built" != "$dir" ]; then
    go test -c -fuzz=. -o "$exe" "./$dir"
    built=$dir
  fi
  printf -- '-- %s ./%s (-fuzztime %s)\n' "$name" "$dir" "$fuzztime"
  t0=$SECONDS
  (cd "$dir" && "$exe" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$fuzztime" \
    -test.fuzzcachedir "$cache/fuzz/$pkg" </dev/null)
  echo "   ${name}: $((SECONDS - t0))s"
  n=$((n + 1))
done <<<"$targets"
echo "fuzzed $n targets in $((SECONDS - start))s"
