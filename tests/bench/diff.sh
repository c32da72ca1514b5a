#!/bin/bash
# `profreg diff` of two stored captures of 100,000 distinct folded stacks
# each (20 MB of text each; the profiles of bench_flame), end to end: the
# command reads both captures' rows, reads and decompresses both blobs,
# checks their SHA-256, parses them, builds the call tree and writes the
# HTML page. Timed whole (wall, CPU, the largest resident set of the
# process) against `zstd -dc` of the same two blobs in the same run (the
# floor of reading them at all), REPS runs in turns: the median of each
# figure, and the run with the least CPU.
# BENCH_DIFF_REF=PATH: another profreg binary (an older build) timed in
# the same turns, its page compared byte for byte with this one's (but
# for the time it was generated).
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
D=(diff --base service=flame,release=r1 --target service=flame,release=r2)
REF=${BENCH_DIFF_REF:-}
differ=0
"${P[@]}" "${D[@]}" --out "$W/diff.html" # warm the page cache
[ -z "$REF" ] || "$REF" "${P[@]:1}" "${D[@]}" --out "$W/ref.html"
for _ in $(seq "$REPS"); do
	"$RUN" "$W/zstd.txt" zstd -q -dc "${blobs[@]}" >/dev/null
	"$RUN" "$W/diff.txt" "${P[@]}" "${D[@]}" --out "$W/diff.html"
	[ -z "$REF" ] || "$RUN" "$W/ref.txt" "$REF" "${P[@]:1}" "${D[@]}" --out "$W/ref.html"
done
# The least CPU of the runs: on a shared machine the wall clock says more about the neighbours.
least_cpu() { awk '{ print $2 + $3, $0 }' "$1" | sort -n | head -n 1 | cut -d' ' -f2-; }
# Medians of wall, CPU (user + system) and resident set, as "wall cpu kib".
medians() {
	awk '{ print $1, $2 + $3, $4 }' "$1" | awk '{ w[NR] = $1; c[NR] = $2; r[NR] = $3 }
	function med(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END { printf "%s %s %s\n", med(w, NR), med(c, NR), med(r, NR) }'
}
show() { # LABEL FILE: median and least-CPU lines for one command
	awk -v label="$1" -v m="$(medians "$2")" -v l="$(least_cpu "$2")" -v z="$(medians "$W/zstd.txt")" 'BEGIN {
		split(m, a, " "); split(l, b, " "); split(z, c, " ")
		printf "  %-28s median %6.3f s wall %6.3f s CPU %4.0f MiB  %4.1fx the CPU of zstd -dc\n",
			label, a[1], a[2], a[3] / 1024, a[2] / c[2]
		printf "  %-28s least  %6.3f s wall %6.3f s CPU %4.0f MiB\n", "", b[1], b[2] + b[3], b[4] / 1024
	}'
}
printf "profreg diff of two stored 100,000-stack folded captures (20 MB each), %d runs in turns\n" "$REPS"
show "zstd -dc of the two blobs" "$W/zstd.txt"
show "profreg diff, end to end" "$W/diff.txt"
if [ -n "$REF" ]; then
	show "reference $(basename "$REF")" "$W/ref.txt"
	if cmp -s <(sed 's/generated [0-9T:.Z-]*//' "$W/diff.html") \
		<(sed 's/generated [0-9T:.Z-]*//' "$W/ref.html"); then
		echo "  the two pages are the same bytes (but for the time they were generated)"
	else
		echo "  the page differs from the reference's" >&2
		differ=1
	fi
fi
awk -v page="$(wc -c <"$W/diff.html")" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	printf "  aim: under 0.4 s and 100 MiB; HTML page %.2f MB (load average %s: compare within this run)\n",
		page / 1e6, load
}'
exit "$differ"
