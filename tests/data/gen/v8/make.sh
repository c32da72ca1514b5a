#!/bin/sh
# Regenerate tests/data/v8/node-burn.cpuprofile and node-idle.cpuprofile
# and their golden shares.
# The profile is a real capture, so each run gives slightly different
# numbers; the golden file is always recomputed from the profile it
# belongs to.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../../v8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node --cpu-prof --cpu-prof-dir="$tmp" --cpu-prof-interval=500 "$here/burn.js" >/dev/null
cp "$tmp"/*.cpuprofile "$data/node-burn.cpuprofile"
chmod 644 "$data/node-burn.cpuprofile"
node "$here/shares.js" "$data/node-burn.cpuprofile" > "$data/node-burn.shares.txt"
node --cpu-prof --cpu-prof-dir="$tmp/idle" --cpu-prof-interval=1000 "$here/idle.js"
cp "$tmp"/idle/*.cpuprofile "$data/node-idle.cpuprofile"
chmod 644 "$data/node-idle.cpuprofile"
node "$here/shares.js" "$data/node-idle.cpuprofile" > "$data/node-idle.shares.txt"
