#!/bin/bash
# `profreg diff` of two stored captures of 100,000 distinct folded stacks
# each (20 MB of text each; the profiles of bench_flame), end to end: the
# command reads both captures' rows, reads and decompresses both blobs,
# checks their SHA-256, parses them, builds the call tree and writes the
# HTML page. Timed whole (wall, CPU, the largest resident set of the
# process) against `zstd -dc` of the same two blobs in the same run (the
# floor of reading them at all), best of REPS in turns.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set, or
# on its own: tests/bench/diff.sh (starts a throwaway PostgreSQL).
set -eu
BUILD=${BUILD:-build}
BIN=${BIN:-bin}
if [ -z "${PG_CONNINFO:-}" ]; then
	ROOT=$(cd "$(dirname "$0")/../.." && pwd)
	cd "$ROOT"
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench-diff.XXXXXX)
	chmod 755 "$TMP"
	trap 'pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
fi
REPS=${BENCH_DIFF_REPS:-5}
W=$TMP/diff
rm -rf "$W" && mkdir -p "$W"
RUN=$BUILD/bench/benchrun
"$BUILD/bench/bench_flame" --write "$W"
psql "$PG_CONNINFO" -qAt -c "drop database if exists bench_diff" \
	-c "create database bench_diff" >/dev/null
P=("$BIN/profreg" --db "$PG_CONNINFO dbname=bench_diff" --home "$W/home" --quiet)
"${P[@]}" db init
"${P[@]}" service add flame
"${P[@]}" service enable flame
"${P[@]}" ingest "$W/base.folded" --service flame --release r1 --time 2026-11-30T10:00:00Z
"${P[@]}" ingest "$W/target.folded" --service flame --release r2 --time 2026-11-30T11:00:00Z
blobs=()
for k in $(psql "$PG_CONNINFO dbname=bench_diff" -qAt -c "select blob_key from profiles order by id"); do
	blobs+=("$W/home/blobs/sha256/${k:0:2}/${k:2}.zst")
done
[ "${#blobs[@]}" = 2 ] || { echo "bench: expected 2 stored captures" >&2; exit 3; }
D=("${P[@]}" diff --base service=flame,release=r1 --target service=flame,release=r2 --out "$W/diff.html")
"${D[@]}" # warm the page cache
for _ in $(seq "$REPS"); do
	"$RUN" "$W/zstd.txt" zstd -q -dc "${blobs[@]}" >/dev/null
	"$RUN" "$W/diff.txt" "${D[@]}"
done
best() { sort -n "$1" | head -n 1; }
# The least CPU of the runs: on a shared machine the wall clock says more about the neighbours.
least_cpu() { awk '{ print $2 + $3, $0 }' "$1" | sort -n | head -n 1 | cut -d' ' -f2-; }
awk -v z="$(least_cpu "$W/zstd.txt")" -v d="$(least_cpu "$W/diff.txt")" \
	-v dw="$(best "$W/diff.txt")" -v zw="$(best "$W/zstd.txt")" -v reps="$REPS" \
	-v page="$(wc -c <"$W/diff.html")" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	split(z, a, " "); split(d, b, " "); split(dw, c, " "); split(zw, e, " ")
	printf "profreg diff of two stored 100,000-stack folded captures (20 MB each), best of %d\n", reps
	printf "  zstd -dc of the two blobs   %6.3f s CPU  %6.3f s wall  %4.0f MiB\n",
		a[2] + a[3], e[1], a[4] / 1024
	printf "  profreg diff, end to end    %6.3f s CPU  %6.3f s wall  %4.0f MiB  %.1fx the CPU of zstd -dc\n",
		b[2] + b[3], c[1], b[4] / 1024, (b[2] + b[3]) / (a[2] + a[3])
	printf "  aim: under 0.4 s and 100 MiB; HTML page %.2f MB (load average %s: compare within this run)\n",
		page / 1e6, load
}'
