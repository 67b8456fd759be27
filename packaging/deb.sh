#!/usr/bin/env bash
# deb.sh: builds the Debian package of cardsync from a built binary and the repository's files.
#
# Usage: packaging/deb.sh BINARY ARCH VERSION OUTDIR
#
#   BINARY   a static (CGO_ENABLED=0) cardsync binary for ARCH
#   ARCH     the Debian architecture: amd64, arm64, ...
#   VERSION  `git describe --tags --always --dirty` of the source; packaging/debver.sh maps it to
#            the package version DEBVER (v1.2.0 -> 1.2.0; see there)
#   OUTDIR   where OUTDIR/cardsync_<DEBVER>_<ARCH>.deb is written (its path is printed on stdout)
#
# Reproducible: every file's mtime, the changelog date, the man page date and dpkg-deb's own
# timestamps are SOURCE_DATE_EPOCH (default: the commit time of HEAD). Two runs on the same inputs
# give identical .deb files.
#
# Units: every systemd/*.service and *.timer except litestream ones goes to /usr/lib/systemd/system
# with /usr/local/bin/cardsync rewritten to /usr/bin/cardsync; the litestream files go to
# /usr/share/doc/cardsync/examples/, and so do the drop-ins (systemd/UNIT.d/*.conf, opt-in:
# examples/UNIT.d/*.conf, with the same rewrite). CARDSYNC_UNITS_DIR replaces systemd/ (for tests only).
#
# The man page is generated from `cardsync -h` and each command's -h. When BINARY cannot run on
# this machine (another architecture), a host binary is built from this source tree for that.
#
# Refuses (exit status 1) a shallow clone or a tree without .git, and says which tool is missing
# (readelf, dpkg-deb, gzip).
#
# Exit status: 0 built, 1 failed, 2 usage error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=packaging/debver.sh
source "$here/debver.sh"

maintainer='cardsync maintainers <maintainers@cardsync.invalid>'

if [[ $# -ne 4 ]]; then
	echo "usage: $0 BINARY ARCH VERSION OUTDIR" >&2
	exit 2
fi
binary=$1 arch=$2 version=$3 outdir=$4
if [[ ! -f $binary || ! -x $binary ]]; then
	echo "deb.sh: not an executable file: $binary" >&2
	exit 2
fi
if [[ ! $arch =~ ^[a-z0-9][a-z0-9-]*$ ]]; then
	echo "deb.sh: not a Debian architecture: $arch" >&2
	exit 2
fi
# The copyright years and (without SOURCE_DATE_EPOCH) every date come from git: a shallow clone or
# a tree without .git would give another package than a full clone of the same commit.
if ! git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	echo "deb.sh: $root is not a git checkout: the package needs the repository and its history" >&2
	exit 1
fi
if [[ $(git -C "$root" rev-parse --is-shallow-repository) != false ]]; then
	echo "deb.sh: $root is a shallow clone: its copyright years and dates would differ from a full clone's;" \
		"run git fetch --unshallow --tags first" >&2
	exit 1
fi
for tool in readelf dpkg-deb gzip; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "deb.sh: $tool not found (apt-get install binutils dpkg gzip)" >&2
		exit 1
	}
done
# Debian ships stripped binaries (lintian: unstripped-binary-or-object). Go's linker strips for
# every architecture (-ldflags "-s -w"; stack traces and `go version -m` still work), so the
# binary must come stripped instead of deb.sh running a host strip on a foreign-arch file.
if LC_ALL=C readelf -S -W "$binary" | grep -E ' \.(symtab|debug_[a-z_]+|zdebug_[a-z_]+) ' >/dev/null; then
	echo "deb.sh: $binary has a symbol table or debug sections: build it with -ldflags \"-s -w ...\"" >&2
	exit 2
fi
units_dir=${CARDSYNC_UNITS_DIR:-$root/systemd}

if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
	SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct)
fi
if [[ ! $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]]; then
	echo "deb.sh: SOURCE_DATE_EPOCH is not Unix seconds: $SOURCE_DATE_EPOCH" >&2
	exit 2
fi
export SOURCE_DATE_EPOCH
debversion=$(debver "$version" "$SOURCE_DATE_EPOCH") || exit 2

umask 022
export LC_ALL=C TZ=UTC
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
pkg=$work/pkg
doc=$pkg/usr/share/doc/cardsync
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/lib/systemd/system" "$pkg/usr/lib/sysusers.d" \
	"$pkg/etc/cardsync" "$doc/examples" "$pkg/usr/share/man/man1" "$pkg/usr/share/lintian/overrides"

gz() { gzip -9n -c -- "$1" >"$2"; } # gz SRC DST: compressed as debhelper does (no name, no time)

# The binary.
install -m 0755 "$binary" "$pkg/usr/bin/cardsync"

# The units.
units=() all_units=() templates=()
shopt -s nullglob
for f in "$units_dir"/*.service "$units_dir"/*.timer; do
	name=$(basename "$f")
	if [[ $name == litestream* ]]; then
		install -m 0644 "$f" "$doc/examples/$name"
		continue
	fi
	sed 's#/usr/local/bin/cardsync#/usr/bin/cardsync#g' "$f" >"$pkg/usr/lib/systemd/system/$name"
	chmod 0644 "$pkg/usr/lib/systemd/system/$name"
	if [[ $name == *@.* ]]; then
		templates+=("'${name/@./@*.}'") # cardsync@.service -> 'cardsync@*.service'
		continue
	fi
	all_units+=("'$name'")
	if grep -q '^\[Install\]' "$f"; then
		units+=("'$name'")
	fi
done
for f in "$units_dir"/litestream*.yml; do
	install -m 0644 "$f" "$doc/examples/$(basename "$f")"
done
# Drop-ins are opt-in (the textfile one needs node_exporter): examples, with the
# package's binary path, that the operator copies to /etc/systemd/system/UNIT.d/.
for f in "$units_dir"/*.d/*.conf; do
	d=$doc/examples/$(basename "$(dirname "$f")")
	mkdir -p "$d"
	sed 's#/usr/local/bin/cardsync#/usr/bin/cardsync#g' "$f" >"$d/$(basename "$f")"
	chmod 0644 "$d/$(basename "$f")"
done
# The monitoring files the READMEs name (alert rules, their tests, the dashboard).
for f in "$root"/monitoring/*.yml "$root"/monitoring/*.json; do
	install -m 0644 "$f" "$doc/examples/$(basename "$f")"
done
shopt -u nullglob
if [[ ! -f $pkg/usr/lib/systemd/system/cardsync.service ]]; then
	echo "deb.sh: no cardsync.service in $units_dir" >&2
	exit 1
fi
if grep -rn '/usr/local/' "$pkg/usr/lib/systemd/system" "$doc/examples"; then
	echo "deb.sh: a unit or an example still names /usr/local (above)" >&2
	exit 1
fi

# The system user, the configuration, the lintian overrides.
install -m 0644 "$here/debian/sysusers.conf" "$pkg/usr/lib/sysusers.d/cardsync.conf"
{
	cat <<'HDR'
# /etc/cardsync/config.toml: cardsync's configuration (a conffile of the cardsync
# package; root:cardsync-ro 0640). Fill in [api] base_url and email, and put the
# API password in /etc/cardsync/api-password (root, 0600): cardsync.service hands
# it over with LoadCredential=. See /usr/share/doc/cardsync/README.Debian.
#
HDR
	# The example as it is: it already uses the packaged paths (the warehouse under
	# /var/lib/cardsync, the password from /run/credentials/cardsync.service); checked below.
	cat "$root/config.example.toml"
} >"$pkg/etc/cardsync/config.toml"
grep -q '^path = "/var/lib/cardsync/warehouse.db"$' "$pkg/etc/cardsync/config.toml" || {
	echo "deb.sh: config.example.toml no longer sets the warehouse path /var/lib/cardsync/warehouse.db" >&2
	exit 1
}
grep -q '^password_file = "/run/credentials/cardsync.service/api-password"$' "$pkg/etc/cardsync/config.toml" || {
	echo "deb.sh: config.example.toml no longer sets password_file under /run/credentials/cardsync.service" >&2
	exit 1
}
chmod 0640 "$pkg/etc/cardsync/config.toml"
install -m 0644 "$here/debian/lintian-overrides" "$pkg/usr/share/lintian/overrides/cardsync"

# Documentation.
modules=$(go version -m "$binary" | awk '$1 == "dep" { print "  " $2 " " $3 }') || {
	echo "deb.sh: cannot read the Go build information of $binary" >&2
	exit 1
}
# Copyright years: the first commit's year to the build's (SOURCE_DATE_EPOCH).
last_year=$(date -d "@$SOURCE_DATE_EPOCH" +%Y)
first_year=$(git -C "$root" log --reverse --format=%cd --date=format:%Y 2>/dev/null | sed -n 1p) || true
years=${first_year:-$last_year}
if [[ $years != "$last_year" ]]; then
	years+="-$last_year"
fi
MAINT=$maintainer MODS=$modules YEARS=$years awk \
	'{ gsub(/@MAINTAINER@/, ENVIRON["MAINT"]); gsub(/@YEARS@/, ENVIRON["YEARS"]) } /^@MODULES@$/ { n = split(ENVIRON["MODS"], m, "\n"); for (i = 1; i <= n; i++) print " " m[i]; next } { print }' \
	"$here/debian/copyright.in" >"$doc/copyright"
chmod 0644 "$doc/copyright"
{
	printf 'cardsync (%s) unstable; urgency=medium\n\n' "$debversion"
	printf '  * Built from cardsync %s.\n\n' "$version"
	printf ' -- %s  %s\n' "$maintainer" "$(date -R -d "@$SOURCE_DATE_EPOCH")"
} >"$work/changelog"
gz "$work/changelog" "$doc/changelog.gz"
gz "$root/README.md" "$doc/README.md.gz"
# The guides the README links to (docs/NAME.md), beside it.
mkdir -p "$doc/docs"
for f in "$root"/docs/*.md; do
	gz "$f" "$doc/docs/$(basename "$f").gz"
done
if [[ -f $units_dir/README.md ]]; then
	gz "$units_dir/README.md" "$doc/README.systemd.md.gz"
fi
install -m 0644 "$here/debian/README.Debian" "$doc/README.Debian"
# The licenses of the Go modules linked into the binary, read from the module cache.
(cd "$root" && go run ./packaging/archive licenses -o "$work/THIRD_PARTY_LICENSES" -modcache "$(go env GOMODCACHE)" "$binary")
gz "$work/THIRD_PARTY_LICENSES" "$doc/THIRD_PARTY_LICENSES.gz"

# The man page, from the commands' -h texts.
helpbin=$binary
if ! "$helpbin" version >/dev/null 2>&1; then
	helpbin=$work/cardsync-help
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$helpbin" ./cmd/cardsync)
fi
bash "$here/manpage.sh" "$helpbin" "$version" "$SOURCE_DATE_EPOCH" >"$work/cardsync.1"
gz "$work/cardsync.1" "$pkg/usr/share/man/man1/cardsync.1.gz"

# Maintainer scripts and control files.
subst() { # FILE: replaces @UNITS@, @ALLUNITS@, @TEMPLATES@
	sed -e "s#@UNITS@#${units[*]}#g" -e "s#@ALLUNITS@#${all_units[*]}#g" -e "s#@TEMPLATES@#${templates[*]}#g" "$1"
}
for s in postinst prerm postrm; do
	subst "$here/debian/$s" >"$pkg/DEBIAN/$s"
	chmod 0755 "$pkg/DEBIAN/$s"
done
printf '/etc/cardsync/config.toml\n' >"$pkg/DEBIAN/conffiles"
(cd "$pkg" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$pkg/DEBIAN/md5sums"
# Installed-Size as dpkg-gencontrol counts it: KiB per file rounded up, 1 per other entry.
size=$(cd "$pkg" && find . -path ./DEBIAN -prune -o ! -path . -printf '%y %s\n' |
	awk '$1 == "f" { s += int(($2 + 1023) / 1024); next } { s += 1 } END { print s }')
sed -e "s#@VERSION@#$debversion#" -e "s#@ARCH@#$arch#" -e "s#@MAINTAINER@#$maintainer#" -e "s#@SIZE@#$size#" \
	"$here/debian/control.in" >"$pkg/DEBIAN/control"
chmod 0644 "$pkg/DEBIAN/control" "$pkg/DEBIAN/conffiles" "$pkg/DEBIAN/md5sums"

# Same mtimes everywhere, then build.
find "$pkg" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$outdir"
out=$outdir/cardsync_${debversion}_${arch}.deb
# xz at level 1: 3 s a package instead of 14 at the default 6, for 12%
# more bytes (7.8 MB against 7.0 for amd64); make dist builds four in CI.
dpkg-deb --root-owner-group -Zxz -z1 --build "$pkg" "$out" >/dev/null
echo "$out"
