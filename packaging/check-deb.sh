#!/usr/bin/env bash
# check-deb.sh: checks the Debian package for this machine's architecture in a dist directory by
# installing, using, removing and purging it for real. Needs root and dpkg; changes the system
# while it runs and puts it back at the end (also on failure).
#
# Usage: packaging/check-deb.sh DIST
#
# Steps (each prints "ok: ..." or "FAIL: ..."):
#   0. packaging/debver_test.sh (the git describe -> Debian version mapping)
#   1. lintian --fail-on error,warning (skipped when lintian is missing, unless
#      CARDSYNC_REQUIRE_TOOLS is set)
#   2. dpkg -i
#   3. the installed package: `cardsync version` names the version the package was built from;
#      user cardsync (primary group cardsync-ro, home /var/lib/cardsync, nologin); the conffile
#      /etc/cardsync/config.toml root:cardsync-ro 0640 (a reinstall keeps a mode the operator set);
#      the four units in /usr/lib/systemd/system,
#      `systemd-analyze verify` silent on them (skipped without systemd-analyze); nothing enabled,
#      and `systemctl enable cardsync.service cardsync-backfill.timer cardsync@acme.service` works
#   4. `cardsync check` as the cardsync user against the simulator, with the packaged config.toml
#      where only base_url and email are filled in, the password handed over as systemd does
#      (CREDENTIALS_DIRECTORY), the warehouse in /var/lib/cardsync made as StateDirectory= makes it
#   5. dpkg -r: binary and units gone, conffile and /var/lib/cardsync kept
#   6. dpkg -P: conffile and the links made by systemctl enable gone, /var/lib/cardsync kept, user
#      and group kept (Debian keeps system users)
# Cleanup: stops the simulator, purges the package if a step failed, removes /var/lib/cardsync,
# /etc/cardsync, the enablement links it made and the user and group (refuses to start if any of
# them existed before).
#
# Exit status: 0 all steps passed, 1 a step failed, 2 usage error or a machine this cannot run on
# (not root, no dpkg, no package for this architecture, cardsync already installed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=packaging/debver.sh
source "$here/debver.sh"

say() { printf '%s\n' "$*"; }
fail() {
	say "FAIL: $*" >&2
	exit 1
}
refuse() {
	say "check-deb.sh: $*" >&2
	exit 2
}

if [[ $# -ne 1 ]]; then
	say "usage: $0 DIST" >&2
	exit 2
fi
dist=$1
[[ $(id -u) -eq 0 ]] || refuse "must run as root (it installs the package)"
command -v dpkg >/dev/null 2>&1 || refuse "dpkg not found"
arch=$(dpkg --print-architecture)
shopt -s nullglob
debs=("$dist"/cardsync_*_"$arch".deb)
shopt -u nullglob
[[ ${#debs[@]} -eq 1 ]] || refuse "want exactly one $dist/cardsync_*_$arch.deb, found ${#debs[@]}"
deb=${debs[0]}

units=(cardsync.service cardsync@.service cardsync-backfill.service cardsync-backfill.timer)
unitdir=/usr/lib/systemd/system
# What `systemctl enable cardsync.service cardsync-backfill.timer cardsync@acme.service` creates.
links=(/etc/systemd/system/multi-user.target.wants/cardsync.service /etc/systemd/system/timers.target.wants/cardsync-backfill.timer
	/etc/systemd/system/multi-user.target.wants/cardsync@acme.service)

# Refuse to touch an installation or state this script did not make.
if dpkg-query -W -f='${Status}' cardsync 2>/dev/null | grep -v 'not-installed' >/dev/null; then
	refuse "the cardsync package is installed (or its config files remain): remove it with dpkg -P first"
fi
for p in /var/lib/cardsync /etc/cardsync; do
	[[ ! -e $p ]] || refuse "$p exists: this check would remove it at the end; move it away first"
done
for p in "${links[@]}"; do
	[[ ! -L $p && ! -e $p ]] || refuse "$p exists: this check would remove it at the end"
done
if getent passwd cardsync >/dev/null || getent group cardsync-ro >/dev/null; then
	refuse "the user cardsync or the group cardsync-ro exists: this check would delete them at the end"
fi

export LC_ALL=C.UTF-8 SYSTEMD_LOG_COLOR=0 SYSTEMD_PAGER=cat
tmp=$(mktemp -d)
chmod 0755 "$tmp" # the cardsync user reads the test config in here
sim_pid=''
made_links=0
cleanup() {
	local rc=$?
	set +e
	if [[ -n $sim_pid ]]; then
		kill "$sim_pid" 2>/dev/null
		wait "$sim_pid" 2>/dev/null
	fi
	if dpkg-query -W -f='${Status}' cardsync 2>/dev/null | grep -v 'not-installed' >/dev/null; then
		dpkg -P cardsync >/dev/null 2>&1
	fi
	# Only the links this script made (none existed when it started).
	if [[ $made_links -eq 1 ]]; then
		rm -f -- "${links[@]}"
	fi
	rm -rf -- /var/lib/cardsync /etc/cardsync "$tmp"
	getent passwd cardsync >/dev/null && userdel cardsync
	getent group cardsync-ro >/dev/null && groupdel cardsync-ro
	if [[ $rc -eq 0 ]]; then
		say "ok: cleaned up (package purged, /var/lib/cardsync, /etc/cardsync, user and group removed)"
	else
		say "cleaned up after the failure" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT

say "== 0. the version mapping (packaging/debver_test.sh)"
bash "$here/debver_test.sh" || fail "packaging/debver_test.sh"

say "== 1. lintian $deb"
if command -v lintian >/dev/null 2>&1; then
	# lintian warns that it runs as root; that line is not about the package.
	if ! out=$(lintian --fail-on error,warning --display-info "$deb" 2>&1); then
		printf '%s\n' "$out" | grep -v 'running with root privileges' >&2
		fail "lintian reports errors or warnings (above)"
	fi
	printf '%s\n' "$out" | grep -v 'running with root privileges' || true
	say "ok: lintian: no error, no warning"
elif [[ -n ${CARDSYNC_REQUIRE_TOOLS:-} ]]; then
	fail "lintian not found and CARDSYNC_REQUIRE_TOOLS is set"
else
	say "skip: lintian not found"
fi

say "== 2. dpkg -i"
out=$(dpkg -i "$deb" 2>&1) || {
	printf '%s\n' "$out" >&2
	fail "dpkg -i $deb"
}
say "ok: installed $(dpkg-query -W -f='${Package} ${Version} ${Architecture}' cardsync)"

say "== 3. installed files, user, conffile, units"
debversion=$(dpkg-query -W -f='${Version}' cardsync)
vline=$(/usr/bin/cardsync version | sed -n 1p) || fail "/usr/bin/cardsync version failed"
[[ $vline == "cardsync "* ]] || fail "cardsync version printed '$vline', want 'cardsync VERSION'"
# dpkg keeps the archive's mtimes, which deb.sh set to the build's SOURCE_DATE_EPOCH.
want=$(debver "${vline#cardsync }" "$(stat -c %Y /usr/bin/cardsync)" 2>&1) ||
	fail "cardsync version prints '${vline#cardsync }', which has no package version: $want"
[[ $want == "$debversion" ]] || fail "cardsync version prints '${vline#cardsync }' (package version $want), the package is $debversion"
say "ok: $vline (package $debversion)"

IFS=: read -r _ _ uid gid _ home shell < <(getent passwd cardsync) || fail "no user cardsync"
rogid=$(getent group cardsync-ro | cut -d: -f3) || fail "no group cardsync-ro"
[[ $gid == "$rogid" ]] || fail "cardsync's primary group is $gid, want cardsync-ro ($rogid)"
[[ $home == /var/lib/cardsync ]] || fail "cardsync's home is $home, want /var/lib/cardsync"
[[ $shell == /usr/sbin/nologin ]] || fail "cardsync's shell is $shell, want /usr/sbin/nologin"
((uid < 1000)) || fail "cardsync has uid $uid: not a system user"
say "ok: system user cardsync (uid $uid), primary group cardsync-ro, home /var/lib/cardsync, nologin"

conf=/etc/cardsync/config.toml
perm=$(stat -c '%a %U:%G' "$conf") || fail "no $conf"
[[ $perm == "640 root:cardsync-ro" ]] || fail "$conf is $perm, want 640 root:cardsync-ro"
dpkg-query -W -f='${Conffiles}\n' cardsync | grep "^ $conf " >/dev/null || fail "$conf is not a conffile"
say "ok: conffile $conf 0640 root:cardsync-ro"
# An upgrade (here: the same package again) keeps the mode the operator gave the conffile.
chmod 0600 "$conf"
out=$(dpkg -i "$deb" 2>&1) || {
	printf '%s\n' "$out" >&2
	fail "dpkg -i $deb a second time"
}
perm=$(stat -c '%a %U:%G' "$conf")
[[ $perm == "600 root:cardsync-ro" ]] || fail "reinstalling changed $conf to $perm; the operator had set 600 root:cardsync-ro"
chmod 0640 "$conf"
say "ok: reinstalling keeps the mode the operator gave the conffile"

for u in "${units[@]}"; do
	[[ -f $unitdir/$u ]] || fail "no $unitdir/$u"
	if grep -n '/usr/local/' "$unitdir/$u" >&2; then
		fail "$unitdir/$u names /usr/local (above)"
	fi
done
say "ok: units in $unitdir: ${units[*]}"
if command -v systemd-analyze >/dev/null 2>&1; then
	# A template is verified as an instance; the copies sit in one directory so that the
	# timer finds its service.
	mkdir "$tmp/units"
	verify=()
	for u in "${units[@]}"; do
		v=${u/@./@check.}
		cp "$unitdir/$u" "$tmp/units/$v"
		verify+=("$tmp/units/$v")
	done
	out=$(systemd-analyze verify "${verify[@]}" 2>&1) && [[ -z $out ]] || {
		printf '%s\n' "$out" >&2
		fail "systemd-analyze verify printed the above"
	}
	say "ok: systemd-analyze verify silent on the installed units"
elif [[ -n ${CARDSYNC_REQUIRE_TOOLS:-} ]]; then
	fail "systemd-analyze not found and CARDSYNC_REQUIRE_TOOLS is set"
else
	say "skip: systemd-analyze not found"
fi

# Installation enables nothing; the units are registered with deb-systemd-helper, so an
# operator's `systemctl enable` works and purging removes its links.
for p in "${links[@]}"; do
	[[ ! -L $p ]] || fail "$p exists after dpkg -i: the package must enable nothing"
done
enabled=0
if command -v systemctl >/dev/null 2>&1; then
	made_links=1
	out=$(systemctl enable cardsync.service cardsync-backfill.timer cardsync@acme.service 2>&1) || {
		printf '%s\n' "$out" >&2
		fail "systemctl enable cardsync.service cardsync-backfill.timer cardsync@acme.service"
	}
	for p in "${links[@]}"; do
		[[ -L $p ]] || fail "systemctl enable made no $p"
	done
	enabled=1
	say "ok: nothing enabled by dpkg -i; systemctl enable cardsync.service cardsync-backfill.timer cardsync@acme.service works"
elif [[ -n ${CARDSYNC_REQUIRE_TOOLS:-} ]]; then
	fail "systemctl not found and CARDSYNC_REQUIRE_TOOLS is set"
else
	say "skip: systemctl not found (enable/purge of the units' links not checked)"
fi

say "== 4. cardsync check as the cardsync user against the simulator"
/usr/bin/cardsync sim -listen 127.0.0.1:0 -cards 30 -write-config "$tmp/sim.toml" >"$tmp/sim.out" 2>&1 &
sim_pid=$!
for ((i = 0; i < 300; i++)); do # at most 30 s for the simulator to listen
	[[ -s $tmp/sim.toml ]] && break
	kill -0 "$sim_pid" 2>/dev/null || {
		cat "$tmp/sim.out" >&2
		fail "the simulator exited"
	}
	sleep 0.1
done
[[ -s $tmp/sim.toml ]] || fail "the simulator wrote no configuration within 30 s"
base_url=$(sed -n 's/^base_url = "\(.*\)"$/\1/p' "$tmp/sim.toml")
email=$(sed -n 's/^email = "\(.*\)"$/\1/p' "$tmp/sim.toml")
[[ -n $base_url && -n $email ]] || fail "no base_url or email in the simulator's configuration"
# The packaged configuration with what the operator fills in: base_url and email.
sed -e "s#^base_url = .*#base_url = \"$base_url\"#" -e "s#^email = .*#email = \"$email\"#" "$conf" >"$tmp/config.toml"
chgrp cardsync-ro "$tmp/config.toml"
chmod 0640 "$tmp/config.toml"
# The password as LoadCredential= hands it over: a directory only the service user can read.
install -d -m 0500 -o cardsync "$tmp/credentials"
install -m 0400 -o cardsync "$tmp/sim.toml.password" "$tmp/credentials/api-password"
# The state directory as StateDirectory=cardsync with StateDirectoryMode=2750 makes it.
install -d -m 2750 -o cardsync -g cardsync-ro /var/lib/cardsync
# The environment systemd gives a service: nothing of the caller's (cardsync
# refuses a CARDSYNC_* variable it does not know, such as CI's).
if ! out=$(cd / && runuser -u cardsync -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CREDENTIALS_DIRECTORY="$tmp/credentials" \
	/usr/bin/cardsync check -config "$tmp/config.toml" 2>&1); then
	printf '%s\n' "$out" >&2
	fail "cardsync check as the cardsync user"
fi
printf '%s\n' "$out" | sed 's/^/  /'
say "ok: cardsync check passed as the cardsync user ($base_url)"
kill "$sim_pid"
wait "$sim_pid" 2>/dev/null || true
sim_pid=''
touch /var/lib/cardsync/kept-on-purge # state the package must not delete

say "== 5. dpkg -r"
out=$(dpkg -r cardsync 2>&1) || {
	printf '%s\n' "$out" >&2
	fail "dpkg -r cardsync"
}
[[ ! -e /usr/bin/cardsync ]] || fail "/usr/bin/cardsync still there after dpkg -r"
for u in "${units[@]}"; do
	[[ ! -e $unitdir/$u ]] || fail "$unitdir/$u still there after dpkg -r"
done
[[ -f $conf ]] || fail "$conf removed by dpkg -r (a conffile stays until purge)"
[[ -f /var/lib/cardsync/kept-on-purge ]] || fail "/var/lib/cardsync removed by dpkg -r"
dpkg-query -W -f='${Status}' cardsync | grep 'config-files' >/dev/null || fail "status after dpkg -r is not config-files"
say "ok: removed; $conf and /var/lib/cardsync kept"

say "== 6. dpkg -P"
out=$(dpkg -P cardsync 2>&1) || {
	printf '%s\n' "$out" >&2
	fail "dpkg -P cardsync"
}
[[ ! -e $conf ]] || fail "$conf still there after dpkg -P"
[[ -f /var/lib/cardsync/kept-on-purge ]] || fail "/var/lib/cardsync removed by dpkg -P (it must be kept)"
if [[ $enabled -eq 1 ]]; then
	for p in "${links[@]}"; do
		[[ ! -L $p ]] || fail "$p still there after dpkg -P (deb-systemd-helper purge should remove it)"
	done
fi
getent passwd cardsync >/dev/null || fail "user cardsync deleted by dpkg -P (Debian keeps system users)"
getent group cardsync-ro >/dev/null || fail "group cardsync-ro deleted by dpkg -P"
if dpkg-query -W -f='${Status}' cardsync 2>/dev/null | grep -v 'not-installed' >/dev/null; then
	fail "cardsync still known to dpkg after dpkg -P"
fi
say "ok: purged; $conf and the units' enablement links gone; /var/lib/cardsync, user cardsync and group cardsync-ro kept"
say "ok: all steps passed for $deb"
