#!/usr/bin/env bash
# debver_test.sh: table test of packaging/debver.sh, and of the order dpkg gives the results.
# Exit status: 0 all cases pass, 1 a case failed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=packaging/debver.sh
source "$here/debver.sh"

fail=0
epoch=1795700000 # 2026-11-26 13:33:20 UTC
check() { # VERSION WANT (WANT "ERR": refused with status 2)
	local got rc=0
	got=$(debver "$1" "$epoch" 2>/dev/null) || rc=$?
	if [[ $2 == ERR ]]; then
		if [[ $rc -ne 2 ]]; then
			echo "FAIL: debver '$1': want refusal (status 2), got '$got' (status $rc)"
			fail=1
		fi
		return
	fi
	if [[ $rc -ne 0 || $got != "$2" ]]; then
		echo "FAIL: debver '$1' = '$got' (status $rc), want '$2'"
		fail=1
	fi
}

check v1.2.0 1.2.0
check 1.2.0 1.2.0
check v1.2.0-dirty 1.2.0+dirty
check v1.2.0-3-gabc1234 1.2.0+git3.gabc1234
check v1.2.0-3-gabc1234-dirty 1.2.0+git3.gabc1234+dirty
check v1.2.0-rc.1 1.2.0~rc.1
check v1.2.0-rc.1-2-g0123abc 1.2.0~rc.1+git2.g0123abc
check v2.0.0-beta-2 2.0.0~beta.2
check 05270d9 0.0~git20261126133320.05270d9
check 05270d9-dirty 0.0~git20261126133320.05270d9+dirty
check 05270d9f0123456789abcdef0123456789abcdef 0.0~git20261126133320.05270d9f0123456789abcdef0123456789abcdef
check dev ERR
check '' ERR
check vx1.0 ERR
check 'v1.0 beta' ERR
check v1.0_1 ERR

if got=$(debver 05270d9 '' 2>/dev/null); then
	echo "FAIL: an untagged version without a commit time gave '$got'"
	fail=1
fi

# Two untagged commits of one day: the later one's version is the later one (whatever the hashes).
earlier=$(debver fffffff "$epoch")
later=$(debver 0000000 $((epoch + 60)))
[[ $later == 0.0~git20261126133420.0000000 ]] || {
	echo "FAIL: debver 0000000 a minute later = '$later'"
	fail=1
}

# dpkg must order them as releases are made.
order=(0.0~git20261125235959.fffffff "$earlier" "$later" 0.0~git20261127000000.0000000 1.2.0~rc.1 1.2.0~rc.1+git2.g0123abc 1.2.0
	1.2.0+dirty 1.2.0+git3.gabc1234 1.2.0+git10.g0000000 1.2.1 1.10.0)
if command -v dpkg >/dev/null 2>&1; then
	for ((i = 0; i + 1 < ${#order[@]}; i++)); do
		if ! dpkg --compare-versions "${order[i]}" lt "${order[i + 1]}"; then
			echo "FAIL: dpkg does not sort ${order[i]} before ${order[i + 1]}"
			fail=1
		fi
	done
fi

if [[ $fail -ne 0 ]]; then
	exit 1
fi
echo "ok: debver mapping and dpkg order"
