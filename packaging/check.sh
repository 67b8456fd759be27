#!/usr/bin/env bash
# packaging/check.sh DIST: checks what make dist wrote to DIST, as CI does:
# SHA256SUMS verifies and covers every file, each tarball lists the binary and
# every file of packaging/release-files, the binaries are static for the right
# architecture, the image archive reads, unpacks and runs (this host's
# platform; as root, in a chroot of its rootfs), and the Debian checks
# (packaging/check-deb-root.sh in throwaway roots, packaging/check-deb.sh).
#
# The Debian checks change this machine: as root they install the .deb for
# its architecture system-wide (dpkg -i), use it, remove and purge it, and
# delete the cardsync user and group they made; they refuse to start when
# cardsync is installed or its user, group, /etc/cardsync or /var/lib/cardsync
# exist. Run it in a throwaway machine or container, as CI does.
#
# Needs go, tar, sha256sum and readelf (binutils); skopeo, lintian and
# systemd-analyze when present (required with CARDSYNC_REQUIRE_TOOLS set).
set -euo pipefail
dist=$(cd "${1:?usage: packaging/check.sh DIST}" && pwd)
cd "$(dirname "$0")/.."
fail() { echo "check: $*" >&2; exit 1; }
for tool in go tar sha256sum readelf; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (readelf: apt-get install binutils)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The repository files every tarball must hold: packaging/release-files, as
# dist.sh reads it.
want=(cardsync)
while read -r pat; do
  case $pat in '' | '#'*) continue ;; esac
  if [[ $pat == *[*?[]* ]]; then
    for f in $pat; do [ -f "$f" ] && want+=("$f"); done
  else
    [ -f "$pat" ] || fail "packaging/release-files names $pat, which is not in the tree"
    want+=("$pat")
  fi
done <packaging/release-files

echo "-- SHA256SUMS"
(cd "$dist" && sha256sum --strict -c SHA256SUMS)
for f in "$dist"/*; do
  n=$(basename "$f")
  [ "$n" = SHA256SUMS ] && continue
  grep -q "^[0-9a-f]\{64\}  $n\$" "$dist/SHA256SUMS" || fail "$n is not in SHA256SUMS"
done

oci=$(ls "$dist"/cardsync_*_oci.tar 2>/dev/null) || fail "no image archive in $dist"
version=$(basename "$oci" _oci.tar); version=${version#cardsync_}

for arch in amd64 arm64; do
  top="cardsync_${version}_linux_$arch"
  tarball="$dist/$top.tar.gz"
  echo "-- $top.tar.gz"
  [ -f "$tarball" ] || fail "no $tarball"
  tar -tzf "$tarball" >"$work/list"
  for f in "${want[@]}" THIRD_PARTY_LICENSES; do
    grep -qx "$top/$f" "$work/list" || fail "$top.tar.gz lacks $top/$f"
  done
  tar -xzf "$tarball" -C "$work" "$top/cardsync"
  bin="$work/$top/cardsync"
  info=$(go version -m "$bin")
  # The notice names every module linked into the binary.
  tar -xzf "$tarball" -C "$work" "$top/THIRD_PARTY_LICENSES"
  deps=0
  while read -r mod ver; do
    grep -qx "$mod $ver" "$work/$top/THIRD_PARTY_LICENSES" || fail "$top/THIRD_PARTY_LICENSES lacks $mod $ver"
    deps=$((deps + 1))
  done < <(awk '$1 == "dep" { print $2, $3 }' <<<"$info")
  [ "$deps" -gt 0 ] || fail "$top/cardsync: go version -m lists no module"
  grep -q $'\tbuild\tCGO_ENABLED=0$' <<<"$info" || fail "$top/cardsync: not built with CGO_ENABLED=0"
  grep -q $'\tbuild\tGOARCH='"$arch"'$' <<<"$info" || fail "$top/cardsync: GOARCH is not $arch"
  grep -q $'\tbuild\t-trimpath=true$' <<<"$info" || fail "$top/cardsync: not built with -trimpath"
  # Static: no program interpreter (ld.so), no dynamic section.
  if LC_ALL=C readelf -l -W "$bin" | grep 'INTERP\|DYNAMIC' >/dev/null; then
    fail "$top/cardsync: not statically linked (readelf -l lists INTERP or DYNAMIC)"
  fi
  echo "static linux/$arch binary, $(grep -c . "$work/list") entries"
done

echo "-- $(basename "$oci")"
go run ./packaging/archive check-oci -version "$version" "$oci"
# A reader the check did not write: skopeo (containers/image, as podman and
# buildah read oci-archive:) must find each platform's image and its labels.
if command -v skopeo >/dev/null; then
  for arch in amd64 arm64; do
    got=$(skopeo --override-os linux --override-arch "$arch" inspect \
      --format '{{.Os}}/{{.Architecture}} {{index .Labels "org.opencontainers.image.version"}}' "oci-archive:$oci") ||
      fail "skopeo inspect of the $arch image"
    [ "$got" = "linux/$arch $version" ] || fail "skopeo inspect of the $arch image: got '$got', want 'linux/$arch $version'"
    echo "skopeo reads the linux/$arch image"
  done
  # The reference name podman load gives the image (localhost/cardsync:VERSION)
  # selects it, and the copy the README shows works.
  skopeo inspect --format '{{.Architecture}}' "oci-archive:$oci:cardsync:$version" >/dev/null ||
    fail "skopeo finds no image named cardsync:$version in $(basename "$oci")"
  skopeo copy -q "oci-archive:$oci" "dir:$work/copy" >/dev/null || fail "skopeo copy oci-archive:$(basename "$oci") dir:..."
  [ -f "$work/copy/manifest.json" ] || fail "skopeo copy wrote no manifest"
  echo "skopeo finds the image by its name cardsync:$version and copies it"
elif [ -n "${CARDSYNC_REQUIRE_TOOLS:-}" ]; then
  fail "skopeo not found and CARDSYNC_REQUIRE_TOOLS is set (apt-get install skopeo)"
fi

echo "-- Debian packages"
# The maintainer scripts in throwaway roots, then the package on this machine.
bash packaging/check-deb-root.sh "$dist"
bash packaging/check-deb.sh "$dist"
echo "dist $dist: ok"
