#!/usr/bin/env bash
# check-deb-root.sh: checks the maintainer scripts of the Debian package for this machine's
# architecture in a dist directory without touching this machine's packages: dpkg installs it
# into throwaway roots (dpkg --root, scripts run with DPKG_ROOT set, as for a chroot being
# built). Needs root and dpkg; check-deb.sh does the full install on the machine itself.
#
# Usage: packaging/check-deb-root.sh DIST
#
# Checks (each prints "ok: ..." or "FAIL: ..."):
#   1. first install: user cardsync and group cardsync-ro made in the root (systemd-sysusers
#      --root), /etc/cardsync/config.toml 0640 with the root's cardsync-ro group id
#   2. reinstall (as an upgrade runs the postinst): a mode the operator set is kept
#   3. a dpkg-statoverride entry made before the first install is honoured
#   4. an existing user cardsync is left as it is (its primary group too: README.Debian)
#   5. purge: the conffile gone, the user kept
#
# Runs only where cardsync is not installed and has no user, group or /etc/cardsync (a script
# ignoring DPKG_ROOT would change this machine's), and fails if /etc/passwd or /etc/group change.
#
# Exit status: 0 all passed, 1 a check failed, 2 usage error or a machine this cannot run on.
set -euo pipefail

say() { printf '%s\n' "$*"; }
fail() {
	say "FAIL: $*" >&2
	exit 1
}
if [[ $# -ne 1 ]]; then
	say "usage: $0 DIST" >&2
	exit 2
fi
[[ $(id -u) -eq 0 ]] || { say "check-deb-root.sh: must run as root (dpkg --root)" >&2; exit 2; }
command -v dpkg >/dev/null 2>&1 || { say "check-deb-root.sh: dpkg not found" >&2; exit 2; }
arch=$(dpkg --print-architecture)
shopt -s nullglob
debs=("$1"/cardsync_*_"$arch".deb)
shopt -u nullglob
[[ ${#debs[@]} -eq 1 ]] || { say "check-deb-root.sh: want exactly one $1/cardsync_*_$arch.deb, found ${#debs[@]}" >&2; exit 2; }
deb=${debs[0]}

# A maintainer script that ignored DPKG_ROOT would act on this machine instead of the root: run
# only where it would find nothing of cardsync's to change, and fail if passwd or group changed.
if dpkg-query -W -f='${Status}' cardsync 2>/dev/null | grep -v 'not-installed' >/dev/null ||
	[[ -e /etc/cardsync ]] || getent passwd cardsync >/dev/null || getent group cardsync-ro >/dev/null; then
	say "check-deb-root.sh: cardsync (package, /etc/cardsync, user or group) is on this machine: not run" >&2
	exit 2
fi
host_ids() { cat /etc/passwd /etc/group | sha256sum; }
before=$(host_ids)

export LC_ALL=C.UTF-8
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
conf=etc/cardsync/config.toml

newroot() { # NAME: an empty root with a dpkg database; prints its path
	local r=$tmp/$1
	mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/etc"
	touch "$r/var/lib/dpkg/status"
	printf '%s\n' "$r"
}
dpkgr() { # ROOT ARGS...: dpkg on ROOT (systemd, the dependency, is not in it)
	local r=$1
	shift
	local out
	out=$(dpkg --root="$r" --force-script-chrootless --force-depends "$@" 2>&1) || {
		printf '%s\n' "$out" >&2
		fail "dpkg --root=$r $*"
	}
}
gid_in() { sed -n "s/^$2:[^:]*:\\([0-9]*\\):.*/\\1/p" "$1/etc/group"; } # ROOT GROUP

r=$(newroot fresh)
dpkgr "$r" -i "$deb"
IFS=: read -r _ _ _ ugid _ home shell < <(grep '^cardsync:' "$r/etc/passwd") || fail "no user cardsync in $r/etc/passwd"
rogid=$(gid_in "$r" cardsync-ro)
[[ -n $rogid && $ugid == "$rogid" ]] || fail "cardsync's primary group is $ugid, want cardsync-ro ($rogid)"
[[ $home == /var/lib/cardsync && $shell == /usr/sbin/nologin ]] || fail "cardsync: home $home, shell $shell"
perm=$(stat -c '%a %u:%g' "$r/$conf")
[[ $perm == "640 0:$rogid" ]] || fail "$conf is $perm, want 640 0:$rogid (the root's cardsync-ro)"
say "ok: first install: user cardsync, group cardsync-ro ($rogid) in the root; $conf 640 root:cardsync-ro"

chmod 0600 "$r/$conf"
dpkgr "$r" -i "$deb"
perm=$(stat -c '%a %u:%g' "$r/$conf")
[[ $perm == "600 0:$rogid" ]] || fail "reinstalling made $conf $perm; the operator had set 600 0:$rogid"
say "ok: reinstall keeps the mode the operator gave $conf"

dpkgr "$r" -P cardsync
[[ ! -e $r/$conf ]] || fail "$conf still there after purge"
grep -q '^cardsync:' "$r/etc/passwd" || fail "purge deleted the user cardsync"
say "ok: purge removes $conf and keeps the user"

r=$(newroot override)
dpkg-statoverride --root="$r" --add root root 0604 "/$conf"
dpkgr "$r" -i "$deb"
perm=$(stat -c '%a %u:%g' "$r/$conf")
[[ $perm == "604 0:0" ]] || fail "with a statoverride root root 0604, $conf is $perm"
say "ok: a dpkg-statoverride of $conf is honoured"

r=$(newroot olduser)
printf 'root:x:0:0:root:/root:/bin/sh\ncardsync:x:900:900::/home/cardsync:/bin/sh\n' >"$r/etc/passwd"
printf 'root:x:0:\ncardsync:x:900:\n' >"$r/etc/group"
dpkgr "$r" -i "$deb"
grep -q '^cardsync:x:900:900:' "$r/etc/passwd" || fail "systemd-sysusers changed the existing user: $(grep '^cardsync:' "$r/etc/passwd")"
say "ok: an existing user cardsync is left as it is (primary group $(grep '^cardsync:' "$r/etc/passwd" | cut -d: -f4), not cardsync-ro $(gid_in "$r" cardsync-ro)): README.Debian says what to do"
[[ $(host_ids) == "$before" ]] || fail "this machine's /etc/passwd or /etc/group changed: a maintainer script ignored DPKG_ROOT"
[[ ! -e /etc/cardsync ]] || fail "/etc/cardsync appeared on this machine: a maintainer script ignored DPKG_ROOT"
say "ok: maintainer scripts in throwaway roots for $deb; this machine untouched"
