#!/usr/bin/env bash
# debver.sh: the Debian package version for a `git describe --tags --always --dirty` string.
#
# Usage: packaging/debver.sh VERSION EPOCH      (prints the Debian version)
#        source packaging/debver.sh; debver VERSION EPOCH
#
# EPOCH is the commit time (Unix seconds, as SOURCE_DATE_EPOCH); only an untagged build uses it.
# The package is native (no Debian revision, so no "-" in the result). Mapping:
#
#   v1.2.0                 -> 1.2.0                  a release tag (the leading "v" is dropped)
#   v1.2.0-rc.1            -> 1.2.0~rc.1             a pre-release tag: "~" sorts before 1.2.0
#   v1.2.0-3-gabc1234      -> 1.2.0+git3.gabc1234    3 commits after the tag: after 1.2.0, before 1.2.1
#   abc1234 (no tag)       -> 0.0~git20261126153000.abc1234  commit time (UTC, to the second) then
#                                                    hash: sorts before any release and in commit-time
#                                                    order, also for two commits of one day
#   any of these + -dirty  -> the same + "+dirty"    (1.2.0+dirty, 1.2.0+git3.gabc1234+dirty)
#
# Anything else ("dev", a tag not starting with a digit after the "v", characters Debian versions
# do not allow) is refused: exit status 2 and a message on stderr.

# debver VERSION EPOCH prints the Debian version for VERSION (see above); returns 2 when VERSION
# cannot be mapped.
debver() {
	local v=${1-} epoch=${2-} suffix='' out
	if [[ $v == *-dirty ]]; then
		v=${v%-dirty}
		suffix='+dirty'
	fi
	if [[ $v =~ ^[0-9a-f]{7,40}$ ]]; then
		# Untagged: git describe --always printed the abbreviated hash alone.
		if [[ ! $epoch =~ ^[0-9]+$ ]]; then
			echo "debver: an untagged version ($1) needs the commit time (Unix seconds), got '$epoch'" >&2
			return 2
		fi
		out="0.0~git$(TZ=UTC date -d "@$epoch" +%Y%m%d%H%M%S).$v"
	else
		local tag=$v count='' hash=''
		if [[ $v =~ ^(.+)-([0-9]+)-g([0-9a-f]{4,40})$ ]]; then
			tag=${BASH_REMATCH[1]}
			count=${BASH_REMATCH[2]}
			hash=${BASH_REMATCH[3]}
		fi
		tag=${tag#v}
		if [[ ! $tag =~ ^[0-9][0-9A-Za-z.+~-]*$ ]]; then
			echo "debver: cannot map '$1' to a Debian version: expected vX.Y.Z[-pre][-N-gHASH][-dirty] or a bare commit hash" >&2
			return 2
		fi
		# A hyphen in the tag is a pre-release: the first becomes "~", others ".".
		if [[ $tag == *-* ]]; then
			local head=${tag%%-*} rest=${tag#*-}
			tag="$head~${rest//-/.}"
		fi
		out=$tag
		if [[ -n $count ]]; then
			out+="+git$count.g$hash"
		fi
	fi
	printf '%s\n' "$out$suffix"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	if [[ $# -lt 1 || $# -gt 2 ]]; then
		echo "usage: $0 VERSION [EPOCH]" >&2
		exit 2
	fi
	debver "$@"
fi
