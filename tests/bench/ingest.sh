#!/bin/bash
# Ingest of 200-function folded captures, one and two threads, against
# gzip -1 of the same bytes (a CPU-bound reference read in this run), and
# the fixed cost of a command that only connects, against /bin/true.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set.
set -eu
: "${PG_CONNINFO:?}" "${BIN:?}" "${BUILD:?}" "${TMP:?}"
now() { date +%s.%N; }
"$BUILD/sim/fleetgen" --out "$TMP/ingest-fleet" --services "${BENCH_INGEST_SERVICES:-20}" \
	--functions 200 --seed 9 >/dev/null
M=$TMP/ingest-fleet/manifest.jsonl
n=$(grep -c . "$M")
t0=$(now)
for f in "$TMP"/ingest-fleet/svc-*/*.folded; do gzip -1 -c "$f"; done >/dev/null
t1=$(now)
ref=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
for jobs in 1 2; do
	db=bench_ingest_$jobs
	psql "$PG_CONNINFO" -qc "create database $db" >/dev/null
	P=("$BIN/profreg" --db "$PG_CONNINFO dbname=$db" --home "$TMP/home-ingest-$jobs" --quiet)
	"${P[@]}" db init
	xargs "${P[@]}" service add <"$TMP/ingest-fleet/services.txt"
	while read -r s; do "${P[@]}" service enable "$s"; done <"$TMP/ingest-fleet/services.txt"
	t0=$(now)
	"${P[@]}" ingest --manifest "$M" --jobs "$jobs"
	t1=$(now)
	awk -v n="$n" -v a="$t0" -v b="$t1" -v r="$ref" -v j="$jobs" 'BEGIN {
		t = b - a
		printf "ingest of %d folded captures (200 functions), --jobs %d\n", n, j
		printf "  %.2f s  %.1f captures/s  %.1fx the time of gzip -1 of the same files (%.2f s)\n",
			t, n / t, t / r, r
	}'
done
# A command that only connects (and checks the schema), against /bin/true.
P=("$BIN/profreg" --db "$PG_CONNINFO dbname=bench_ingest_1" --home "$TMP/home-ingest-1")
t0=$(now)
for _ in $(seq 20); do /bin/true; done
t1=$(now)
for _ in $(seq 20); do "${P[@]}" service list >/dev/null; done
t2=$(now)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
	printf "a command that only connects (service list, 20 services): %.1f ms per call,", (c - b) * 50
	printf " %.1fx /bin/true (%.1f ms)\n", (c - b) / (b - a), (b - a) * 50
}'
