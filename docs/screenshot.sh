#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of `cardsync report`:
# builds cardsync, runs the demo (simulator on loopback, no credentials) in a
# scratch directory and takes a headless Chromium screenshot of the
# report.html it writes. Needs chromium (apt-get install -y chromium).
# Usage: bash docs/screenshot.sh [output.png]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/report.png}"
command -v chromium >/dev/null || { echo "chromium not found: apt-get install -y chromium" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/cardsync" ./cmd/cardsync
(cd "$tmp" && ./cardsync demo -db "$tmp/cardsync-demo.db" -cards 300 >/dev/null)
# The page only; nothing may resolve, and the profile is thrown away.
chromium --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --hide-scrollbars \
  '--host-resolver-rules=MAP * ~NOTFOUND' --user-data-dir="$tmp/profile" \
  --force-device-scale-factor=1 --window-size=1100,2300 \
  --screenshot="$tmp/report.png" "file://$tmp/report.html" >/dev/null 2>&1
cp "$tmp/report.png" "$out"
echo "$out: $(wc -c <"$out") bytes"
