#!/bin/bash
# Ingest of 200-function folded captures, one and two threads, against
# gzip -1 of the same bytes (a CPU-bound reference read in this run), and
# the fixed cost of a command that only connects, against /bin/true.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set; run
# alone (without PG_CONNINFO), it starts a throwaway PostgreSQL of its own.
set -eu
if [ -z "${PG_CONNINFO:-}" ]; then
	BUILD=${BUILD:-build}
	BIN=${BIN:-bin}
	cd "$(dirname "$0")/../.."
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench.XXXXXX)
	chmod 755 "$TMP" # the cluster runs as postgres when we are root
	trap 'pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
fi
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
# A command that only connects (and checks the schema), against a program
# that links libpq alone and only connects and runs one statement
# (tests/bench/pqconnect.c) and /bin/true: CPU of each process (user +
# system, by wait4), the least and the median of 20 runs in turns.
P=("$BIN/profreg" --db "$PG_CONNINFO dbname=bench_ingest_1" --home "$TMP/home-ingest-1")
rm -f "$TMP"/connect-*.txt
for _ in $(seq 20); do
	"$BUILD/bench/benchrun" "$TMP/connect-true.txt" /bin/true
	"$BUILD/bench/benchrun" "$TMP/connect-pq.txt" "$BUILD/bench/pqconnect" \
		"$PG_CONNINFO dbname=bench_ingest_1"
	"$BUILD/bench/benchrun" "$TMP/connect-profreg.txt" "${P[@]}" service list >/dev/null
done
cpu() { awk '{ printf "%.2f\n", ($2 + $3) * 1000 }' "$1" | sort -n | awk '
	{ v[NR] = $1 } END { printf "%s %s", v[1], v[int((NR + 1) / 2)] }'; }
awk -v t="$(cpu "$TMP/connect-true.txt")" -v q="$(cpu "$TMP/connect-pq.txt")" \
	-v p="$(cpu "$TMP/connect-profreg.txt")" -v libs="$(ldd "$BIN/profreg" | wc -l)" \
	-v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	split(t, a, " "); split(q, b, " "); split(p, c, " ")
	printf "a command that only connects (service list, 20 services), CPU per call, least / median of 20:\n"
	printf "  profreg service list     %5.1f / %5.1f ms  (%d shared objects)\n", c[1], c[2], libs
	printf "  libpq connect + select 1 %5.1f / %5.1f ms  profreg is %.2fx it (least)\n",
		b[1], b[2], c[1] / b[1]
	printf "  /bin/true                %5.1f / %5.1f ms  (load average %s)\n", a[1], a[2], load
}'
