#!/usr/bin/env bash
# check.sh: static checks of the cardsync units in systemd/ with systemd-analyze (no
# running systemd needed; works as root or not).
#
# Usage: systemd/check.sh PATH/TO/BUILT/cardsync
#
# The units: cardsync.service, cardsync@.service (checked as the instance
# cardsync@example.service: verify and security need an instance name),
# cardsync-backfill.service and cardsync-backfill.timer. litestream.service runs another
# program (/usr/bin/litestream, not on the build host) and is not checked; any other
# *.service or *.timer in systemd/ is an error until it is added here. The drop-ins,
# UNIT.d/*.conf (cardsync-backfill.service.d/textfile.conf), are checked with their
# unit; a drop-in for a unit not checked here is an error.
#
#   1. `systemd-analyze verify` on copies of the units, in one directory, whose
#      ExecStart= points at the given binary (verify fails if the ExecStart binary does
#      not exist). Verify exits 0 on unknown keys and bad values and only prints a
#      warning, so ANY output is a failure. Nothing is filtered: the units verify
#      silently on systemd 252 even though the cardsync user/group and the credential
#      files under /etc/cardsync do not exist on the build host.
#   2. For each service: `systemd-analyze security --offline=true --threshold=15`: fails
#      if the exposure score is above 1.5 (systemd 252 takes the threshold as an integer
#      in tenths). Prints the "Overall exposure level" line.
#   3. Each unit with drop-ins: 1 and 2 again on a second directory holding the units
#      and the drop-ins (copies, ExecStart= pointing at the binary as above), so the unit
#      passes both without and with them. First, a drop-in whose ExecStart= names a
#      binary that does not exist must make verify complain: that proves verify read
#      the drop-ins, so their silence is worth something.
#
# If systemd-analyze is not installed, prints a message and exits 0, unless
# CARDSYNC_REQUIRE_TOOLS is set (as CI sets it): then a missing
# systemd-analyze is a failure, so the check can never pass by checking nothing.
# Exit status: 0 ok or skipped, 1 a check failed or a required tool is
# missing, 2 usage error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
threshold=15
# unit file in systemd/ -> the name it is checked under
declare -A checked=(
	[cardsync.service]=cardsync.service
	[cardsync@.service]=cardsync@example.service
	[cardsync-backfill.service]=cardsync-backfill.service
	[cardsync-backfill.timer]=cardsync-backfill.timer
)
order=(cardsync.service cardsync@.service cardsync-backfill.service cardsync-backfill.timer)
not_checked=(litestream.service)

if [[ $# -ne 1 ]]; then
	echo "usage: $0 PATH/TO/cardsync" >&2
	exit 2
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
	if [[ -n "${CARDSYNC_REQUIRE_TOOLS:-}" ]]; then
		echo "systemd-analyze not found and CARDSYNC_REQUIRE_TOOLS is set: install the systemd package" >&2
		exit 1
	fi
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

# Every unit in systemd/ is either checked or named as not checked, and every
# drop-in belongs to a checked unit.
for f in "$here"/*.service "$here"/*.timer; do
	[[ -f $f ]] || continue
	name=$(basename -- "$f")
	if [[ -z ${checked[$name]+x} && " ${not_checked[*]} " != *" $name "* ]]; then
		echo "FAIL: $name in systemd/ is not checked: add it to check.sh" >&2
		exit 1
	fi
done
dropin_units=()
for d in "$here"/*.d; do
	[[ -d $d ]] || continue
	name=$(basename -- "$d" .d)
	if [[ -z ${checked[$name]+x} || $name == *@.* ]]; then
		echo "FAIL: drop-in directory $(basename -- "$d") in systemd/ is for no unit check.sh checks" >&2
		exit 1
	fi
	dropin_units+=("$name")
done

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
chmod 0755 "$tmp"
mkdir "$tmp/plain" "$tmp/dropins" "$tmp/probe"

prefix='ExecStart=/usr/local/bin/cardsync '
# pointed SRC DST BIN WANT: copies SRC to DST with each ExecStart= line that runs
# /usr/local/bin/cardsync running BIN instead; fails unless WANT lines were rewritten.
pointed() {
	local src=$1 dst=$2 to=$3 want=$4 replaced=0 line
	while IFS= read -r line || [[ -n $line ]]; do
		if [[ $line == "$prefix"* ]]; then
			line="ExecStart=$to ${line#"$prefix"}"
			replaced=$((replaced + 1))
		fi
		printf '%s\n' "$line"
	done <"$src" >"$dst"
	if [[ $replaced -ne $want ]]; then
		echo "FAIL: expected $want '${prefix}...' line(s) in $src, found $replaced" >&2
		exit 1
	fi
}

# Copies under their own file names (the unit name must stay the same), in one
# directory so that verify finds the units they name (the timer's service, the
# conflicting cardsync.service) and the template behind the instance; the same
# again with the drop-ins beside them.
for name in "${order[@]}"; do
	src="$here/$name"
	if [[ ! -f $src ]]; then
		echo "FAIL: $src is missing" >&2
		exit 1
	fi
	want=1
	[[ $name == *.service ]] || want=0
	for dir in plain dropins probe; do
		pointed "$src" "$tmp/$dir/$name" "$bin" "$want"
	done
done
for name in "${dropin_units[@]}"; do
	for dir in dropins probe; do
		mkdir "$tmp/$dir/$name.d"
	done
	for f in "$here/$name.d"/*.conf; do
		[[ -f $f ]] || continue
		pointed "$f" "$tmp/dropins/$name.d/$(basename -- "$f")" "$bin" 1
		pointed "$f" "$tmp/probe/$name.d/$(basename -- "$f")" "$tmp/no-such-binary" 1
	done
done

export SYSTEMD_LOG_COLOR=0 SYSTEMD_PAGER=cat
failed=0

# check DIR UNIT WHAT: verify, and for a service the exposure score, of DIR/UNIT.
check() {
	local dir=$1 unit=$2 what=$3 verify_out verify_rc sec_out sec_rc overall

	# 1. verify: must exit 0 and print nothing at all (stdout or stderr).
	set +e
	verify_out=$(systemd-analyze verify "$dir/$unit" 2>&1)
	verify_rc=$?
	set -e
	if [[ $verify_rc -ne 0 || -n $verify_out ]]; then
		echo "FAIL: systemd-analyze verify $what (exit $verify_rc) printed:" >&2
		printf '%s\n' "$verify_out" >&2
		failed=1
		return
	fi
	echo "ok: systemd-analyze verify $what printed nothing"

	[[ $unit == *.service ]] || return 0

	# 2. security: offline exposure score must be <= threshold/10.
	set +e
	sec_out=$(systemd-analyze security --no-pager --offline=true --threshold="$threshold" "$dir/$unit" 2>&1)
	sec_rc=$?
	set -e
	overall=$(printf '%s\n' "$sec_out" | grep -F 'Overall exposure level' || true)
	if [[ -z $overall ]]; then
		echo "FAIL: systemd-analyze security $what printed no 'Overall exposure level' line (exit $sec_rc):" >&2
		printf '%s\n' "$sec_out" >&2
		failed=1
		return
	fi
	echo "$overall"
	if [[ $sec_rc -ne 0 ]]; then
		echo "FAIL: systemd-analyze security --threshold=$threshold $what exited $sec_rc (exposure above $((threshold / 10)).$((threshold % 10)))" >&2
		printf '%s\n' "$sec_out" | grep -E '^✗' >&2 || true
		failed=1
		return
	fi
	echo "ok: $what exposure within --threshold=$threshold"
}

for name in "${order[@]}"; do
	check "$tmp/plain" "${checked[$name]}" "${checked[$name]}"
done

# 3. The units with their drop-ins.
for name in "${dropin_units[@]}"; do
	unit=${checked[$name]}
	set +e
	probe_out=$(systemd-analyze verify "$tmp/probe/$unit" 2>&1)
	set -e
	if [[ $probe_out != *no-such-binary* ]]; then
		echo "FAIL: systemd-analyze verify did not read the drop-ins of $unit (a drop-in's missing binary went unreported):" >&2
		printf '%s\n' "$probe_out" >&2
		failed=1
		continue
	fi
	check "$tmp/dropins" "$unit" "$unit with $(cd "$here/$name.d" && echo *.conf)"
done

exit "$failed"
