#!/bin/sh
# Regenerate tests/data/v8/node-retain.heapprofile and its golden sizes.
# The profile is a real capture, so each run gives somewhat different
# numbers; the golden file is always recomputed from the profile it
# belongs to.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node --heap-prof --heap-prof-dir="$tmp" --heap-prof-interval=16384 "$here/retain.mjs"
cp "$tmp"/*.heapprofile "$here/node-retain.heapprofile"
chmod 644 "$here/node-retain.heapprofile"
node "$here/heapsizes.js" "$here/node-retain.heapprofile" > "$here/node-retain.selfsizes.txt"
