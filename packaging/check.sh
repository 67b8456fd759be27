#!/usr/bin/env bash
# packaging/check.sh DIST: checks what make dist wrote to DIST, as CI does:
# SHA256SUMS verifies and covers every file, each tarball lists the binary and
# every repo file a release carries, the binaries are static for the right
# architecture, the image archive reads, unpacks and runs (this host's
# platform), and the Debian checks (packaging/check-deb.sh) when they exist.
set -euo pipefail
dist=$(cd "${1:?usage: packaging/check.sh DIST}" && pwd)
cd "$(dirname "$0")/.."
fail() { echo "check: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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
  want=(cardsync README.md LICENSE config.example.toml systemd/cardsync.service monitoring/alerts.yml)
  for f in systemd/*.service systemd/*.timer systemd/README.md monitoring/*; do [ -f "$f" ] && want+=("$f"); done
  for f in "${want[@]}"; do
    grep -qx "$top/$f" "$work/list" || fail "$top.tar.gz lacks $top/$f"
  done
  tar -xzf "$tarball" -C "$work" "$top/cardsync"
  bin="$work/$top/cardsync"
  info=$(go version -m "$bin")
  grep -q $'\tbuild\tCGO_ENABLED=0$' <<<"$info" || fail "$top/cardsync: not built with CGO_ENABLED=0"
  grep -q $'\tbuild\tGOARCH='"$arch"'$' <<<"$info" || fail "$top/cardsync: GOARCH is not $arch"
  grep -q $'\tbuild\t-trimpath=true$' <<<"$info" || fail "$top/cardsync: not built with -trimpath"
  file "$bin" | grep -q 'statically linked' || fail "$top/cardsync: not statically linked: $(file "$bin")"
  echo "static linux/$arch binary, $(grep -c . "$work/list") entries"
done

echo "-- $(basename "$oci")"
go run ./packaging/archive check-oci -version "$version" "$oci"
# A reader the check did not write: skopeo (containers/image, as podman and
# buildah read oci-archive:) must find each platform's image and its labels.
if command -v skopeo >/dev/null; then
  for arch in amd64 arm64; do
    skopeo --override-os linux --override-arch "$arch" inspect "oci-archive:$oci" >"$work/inspect.json"
    python3 - "$work/inspect.json" "$arch" "$version" <<'PY' || fail "skopeo inspect of the $arch image: $(cat "$work/inspect.json")"
import json, sys
i = json.load(open(sys.argv[1]))
assert i["Architecture"] == sys.argv[2] and i["Os"] == "linux", i
assert i["Labels"]["org.opencontainers.image.version"] == sys.argv[3], i["Labels"]
PY
    echo "skopeo reads the linux/$arch image"
  done
elif [ -n "${CARDSYNC_REQUIRE_TOOLS:-}" ]; then
  fail "skopeo not found and CARDSYNC_REQUIRE_TOOLS is set (apt-get install skopeo)"
fi

if [ -f packaging/check-deb.sh ]; then
  echo "-- Debian packages"
  bash packaging/check-deb.sh "$dist"
fi
echo "dist $dist: ok"
