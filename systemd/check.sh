#!/usr/bin/env bash
# check.sh: static checks of systemd/cardsync.service with systemd-analyze (no running
# systemd needed; works as root or not).
#
# Usage: systemd/check.sh PATH/TO/BUILT/cardsync
#
#   1. `systemd-analyze verify` on a copy of the unit whose ExecStart= points at the given
#      binary (verify fails if the ExecStart binary does not exist). Verify exits 0 on
#      unknown keys and bad values and only prints a warning, so ANY output is a failure.
#      Nothing is filtered: the unit verifies silently on systemd 252 even though the
#      cardsync user/group and /etc/cardsync/api-password do not exist on the build host.
#   2. `systemd-analyze security --offline=true --threshold=15`: fails if the exposure
#      score is above 1.5 (systemd 252 takes the threshold as an integer in tenths).
#      Prints the "Overall exposure level" line.
#
# If systemd-analyze is not installed, prints a message and exits 0.
# Exit status: 0 ok or skipped, 1 a check failed, 2 usage error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
unit_src="$here/cardsync.service"
threshold=15

if [[ $# -ne 1 ]]; then
	echo "usage: $0 PATH/TO/cardsync" >&2
	exit 2
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "systemd-analyze not found: skipping unit checks"
	exit 0
fi

bin=$(realpath -e -- "$1" 2>/dev/null) || {
	echo "check.sh: binary not found: $1" >&2
	exit 2
}
if [[ ! -f $bin || ! -x $bin ]]; then
	echo "check.sh: not an executable file: $bin" >&2
	exit 2
fi
# Keep ExecStart= parsing trivial: no whitespace, quotes, backslashes, % or $ in the path.
if [[ $bin =~ [[:space:]\"\'\\%\$] ]]; then
	echo "check.sh: binary path has characters systemd would reinterpret: $bin" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
chmod 0755 "$tmp"
unit="$tmp/cardsync.service" # same file name: the unit name must stay cardsync.service

prefix='ExecStart=/usr/local/bin/cardsync '
replaced=0
while IFS= read -r line || [[ -n $line ]]; do
	if [[ $line == "$prefix"* ]]; then
		line="ExecStart=$bin ${line#"$prefix"}"
		replaced=$((replaced + 1))
	fi
	printf '%s\n' "$line"
done <"$unit_src" >"$unit"
if [[ $replaced -ne 1 ]]; then
	echo "FAIL: expected exactly one '${prefix}...' line in $unit_src, found $replaced" >&2
	exit 1
fi

export SYSTEMD_LOG_COLOR=0 SYSTEMD_PAGER=cat

# 1. verify: must exit 0 and print nothing at all (stdout or stderr).
set +e
verify_out=$(systemd-analyze verify "$unit" 2>&1)
verify_rc=$?
set -e
if [[ $verify_rc -ne 0 || -n $verify_out ]]; then
	echo "FAIL: systemd-analyze verify (exit $verify_rc) printed:" >&2
	printf '%s\n' "$verify_out" >&2
	exit 1
fi
echo "ok: systemd-analyze verify cardsync.service printed nothing"

# 2. security: offline exposure score must be <= threshold/10.
set +e
sec_out=$(systemd-analyze security --no-pager --offline=true --threshold="$threshold" "$unit" 2>&1)
sec_rc=$?
set -e
overall=$(printf '%s\n' "$sec_out" | grep -F 'Overall exposure level' || true)
if [[ -z $overall ]]; then
	echo "FAIL: systemd-analyze security printed no 'Overall exposure level' line (exit $sec_rc):" >&2
	printf '%s\n' "$sec_out" >&2
	exit 1
fi
echo "$overall"
if [[ $sec_rc -ne 0 ]]; then
	echo "FAIL: systemd-analyze security --threshold=$threshold exited $sec_rc (exposure above $((threshold / 10)).$((threshold % 10)))" >&2
	printf '%s\n' "$sec_out" | grep -E '^✗' >&2 || true
	exit 1
fi
echo "ok: exposure within --threshold=$threshold"
