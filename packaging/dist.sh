#!/usr/bin/env bash
# make dist: cardsync's release artefacts, written to $DIST (default dist/):
#   cardsync_<V>_linux_<arch>.tar.gz   binary, README, LICENSE, config example, systemd units, monitoring files
#   cardsync_<DEBVER>_<arch>.deb       when packaging/deb.sh exists
#   cardsync_<V>_oci.tar               OCI image layout archive, linux/amd64 and linux/arm64
#   SHA256SUMS                         sha256sum -c format, over every other file
# V is `git describe --tags --always --dirty`. Everything is stamped with the
# commit, never with the clock (SOURCE_DATE_EPOCH = the commit's time), so two
# runs on one commit write identical tarballs and image archives.
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=${DIST:-dist}
VERSION=$(git describe --tags --always --dirty)
REVISION=$(git rev-parse HEAD)
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
BUILD_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
SOURCE_URL=https://$(go list -m)
export VERSION REVISION SOURCE_DATE_EPOCH BUILD_DATE
echo "cardsync $VERSION (commit $REVISION, $BUILD_DATE) -> $DIST/"

mkdir -p "$DIST"
# Only what an earlier run wrote goes: DIST may be any directory.
rm -f "$DIST"/cardsync_* "$DIST"/SHA256SUMS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/archive" ./packaging/archive

# The files every tarball carries beside the binary: those of this list that
# exist in the tree (units and monitoring files come and go with the repo).
extras=(README.md LICENSE config.example.toml)
for f in $(printf '%s\n' systemd/*.service systemd/*.timer systemd/README.md systemd/litestream.* monitoring/* | LC_ALL=C sort -u); do
  [ -f "$f" ] && extras+=("$f")
done

oci_args=()
for arch in amd64 arm64; do
  bin="$work/linux_$arch/cardsync"
  # Static, no build paths, no VCS stamp of go's own (the -X values say it);
  # -s -w: no symbol table or DWARF (stack traces keep their names).
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=false -o "$bin" \
    -ldflags "-s -w -X main.version=$VERSION -X main.revision=$REVISION -X main.buildDate=$BUILD_DATE" ./cmd/cardsync
  top="cardsync_${VERSION}_linux_$arch"
  files=("cardsync=$bin")
  for f in "${extras[@]}"; do files+=("$f=$f"); done
  "$work/archive" tar -o "$DIST/$top.tar.gz" -mtime "$SOURCE_DATE_EPOCH" -prefix "$top" "${files[@]}"
  if [ -f packaging/deb.sh ]; then
    bash packaging/deb.sh "$bin" "$arch" "$VERSION" "$DIST"
  fi
  oci_args+=("linux/$arch=$bin")
done

# The image trusts the build host's CA bundle (Debian: ca-certificates), the
# one file Go's crypto/x509 looks for first; without it https needs a mounted one.
cacerts=/etc/ssl/certs/ca-certificates.crt
[ -f "$cacerts" ] || { echo "warning: no $cacerts on this host: the image carries no CA bundle" >&2; cacerts=""; }
"$work/archive" oci -o "$DIST/cardsync_${VERSION}_oci.tar" -mtime "$SOURCE_DATE_EPOCH" -version "$VERSION" \
  -revision "$REVISION" -source "$SOURCE_URL" -cacerts "$cacerts" "${oci_args[@]}"

"$work/archive" sums "$DIST"
ls -l "$DIST"
