#!/usr/bin/env bash
# make dist: cardsync's release artefacts, written to $DIST (default dist/):
#   cardsync_<V>_linux_<arch>.tar.gz   binary, README, LICENSE, THIRD_PARTY_LICENSES, config example, systemd units, monitoring files
#   cardsync_<DEBVER>_<arch>.deb       when packaging/deb.sh exists
#   cardsync_<V>_oci.tar               OCI image layout archive, linux/amd64 and linux/arm64
#   SHA256SUMS                         sha256sum -c format, over every other file
# V is `git describe --tags --always --dirty`. Everything is stamped with the
# commit, never with the clock (SOURCE_DATE_EPOCH = the commit's time), so two
# runs on one commit write identical tarballs and image archives. It refuses a
# shallow clone or a tree without .git (exit status 1).
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=${DIST:-dist}
# The version, the copyright years and every date come from git: a checkout
# without the history (a shallow clone, an exported tree) would stamp a release
# that differs from the same commit built elsewhere.
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "dist.sh: $(pwd) is not a git checkout: make dist needs the repository and its history" >&2
  exit 1
fi
if [ "$(git rev-parse --is-shallow-repository)" != false ]; then
  echo "dist.sh: this is a shallow clone: its version (git describe) and copyright years would differ from a full clone's;" \
    "run git fetch --unshallow --tags first" >&2
  exit 1
fi
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

# The files every tarball carries beside the binary: packaging/release-files
# (check.sh reads the same list).
extras=()
while read -r pat; do
  case $pat in '' | '#'*) continue ;; esac
  if [[ $pat == *[*?[]* ]]; then
    for f in $pat; do [ -f "$f" ] && extras+=("$f"); done
  else
    [ -f "$pat" ] || { echo "dist.sh: packaging/release-files names $pat, which is not in the tree" >&2; exit 1; }
    extras+=("$pat")
  fi
done <packaging/release-files
mapfile -t extras < <(printf '%s\n' "${extras[@]}" | LC_ALL=C sort -u)

oci_args=()
for arch in amd64 arm64; do
  bin="$work/linux_$arch/cardsync"
  # Static, no build paths, no VCS stamp of go's own (the -X values say it);
  # -s -w: no symbol table or DWARF (stack traces keep their names).
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=false -o "$bin" \
    -ldflags "-s -w -X main.version=$VERSION -X main.revision=$REVISION -X main.buildDate=$BUILD_DATE" ./cmd/cardsync
  # The licenses of the modules linked into this binary (they may differ by
  # platform), read from the module cache the build used.
  "$work/archive" licenses -o "$work/linux_$arch/THIRD_PARTY_LICENSES" -modcache "$(go env GOMODCACHE)" "$bin"
  top="cardsync_${VERSION}_linux_$arch"
  files=("cardsync=$bin" "THIRD_PARTY_LICENSES=$work/linux_$arch/THIRD_PARTY_LICENSES")
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
  -revision "$REVISION" -source "$SOURCE_URL" -cacerts "$cacerts" -license LICENSE -modcache "$(go env GOMODCACHE)" "${oci_args[@]}"

"$work/archive" sums "$DIST"
ls -l "$DIST"
