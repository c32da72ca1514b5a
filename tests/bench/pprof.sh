#!/bin/bash
# Ingest of a big Go CPU profile (1.5 MB gzipped pprof, 5,000 functions,
# 50,000 stacks; tests/bench/pprofgen.c) against `go tool pprof -top` of
# the same file, each command timed whole (start, read, parse, and for
# profreg the blob, the index rows and the commit in PostgreSQL), in turns
# on the same files, best of REPS. The first capture of a service also
# interns its 5,000 function names; the next ones find them: both shown.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set, or
# on its own: tests/bench/pprof.sh (starts a throwaway PostgreSQL).
set -eu
BUILD=${BUILD:-build}
BIN=${BIN:-bin}
if [ -z "${PG_CONNINFO:-}" ]; then
	ROOT=$(cd "$(dirname "$0")/../.." && pwd)
	cd "$ROOT"
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench-pprof.XXXXXX)
	chmod 755 "$TMP"
	trap 'pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
fi
REPS=${BENCH_PPROF_REPS:-5}
if ! command -v go >/dev/null; then
	echo "pprof ingest against go tool pprof: skipped (no go: scripts/install-deps installs golang-go)"
	exit 0
fi
W=$TMP/pprof
rm -rf "$W" && mkdir -p "$W"
for i in $(seq 0 "$REPS"); do
	"$BUILD/bench/pprofgen" "$W/c$i.pb.gz" 5000 50000 $((i + 1)) >"$W/size-$i"
done
psql "$PG_CONNINFO" -qAt -c "drop database if exists bench_pprof" \
	-c "create database bench_pprof" >/dev/null
P=("$BIN/profreg" --db "$PG_CONNINFO dbname=bench_pprof" --home "$W/home" --quiet)
"${P[@]}" db init
"${P[@]}" service add checkout
"${P[@]}" service enable checkout
RUN=$(cd "$BUILD/bench" && pwd)/benchrun
# CPU ticks the PostgreSQL cluster has used: the postmaster with the
# backends it has reaped, and the processes it still runs.
PGPID=$(head -n 1 "$(psql "$PG_CONNINFO" -qAt -c "show data_directory")/postmaster.pid")
HZ=$(getconf CLK_TCK)
server_ticks() {
	{
		cat "/proc/$PGPID/stat"
		for c in $(cat "/proc/$PGPID/task/$PGPID/children" 2>/dev/null || true); do
			cat "/proc/$c/stat" 2>/dev/null || true
		done
	} | sed 's/.*) //' | awk '{ t += $12 + $13 } NR == 1 { t += $14 + $15 } END { print t }'
}
# ingest OUT FILE: one line in OUT, benchrun's figures and the server's CPU seconds.
ingest() {
	local a b
	a=$(server_ticks)
	"$RUN" "$1.tmp" "${P[@]}" ingest "$2" --service checkout --release r1
	sleep 0.2 # the backend has exited; let the postmaster reap it
	b=$(server_ticks)
	echo "$(cat "$1.tmp") $(awk -v a="$a" -v b="$b" -v hz="$HZ" 'BEGIN { print (b - a) / hz }')" >>"$1"
	rm -f "$1.tmp"
}
# go tool pprof writes nothing but its report; keep its caches in TMP.
gopprof() { (cd "$W" && HOME=$W GOCACHE=$W/gocache "$RUN" "$1" \
	go tool pprof -top "$2" >/dev/null 2>"$W/go.err"); }
# Warm the page cache and Go's toolchain once, untimed.
gopprof "$W/warm.txt" "$W/c0.pb.gz" || { cat "$W/go.err" >&2; exit 3; }
ingest "$W/first.txt" "$W/c0.pb.gz"
gopprof "$W/go-first.txt" "$W/c0.pb.gz"
for i in $(seq 1 "$REPS"); do
	gopprof "$W/go.txt" "$W/c$i.pb.gz"
	ingest "$W/ingest.txt" "$W/c$i.pb.gz"
done
n=$(psql "$PG_CONNINFO dbname=bench_pprof" -qAt -c "select count(*) from profiles")
[ "$n" = $((REPS + 1)) ] || { echo "bench: $n captures stored, expected $((REPS + 1))" >&2; exit 3; }
best() { sort -n "$1" | head -n 1; }
awk -v size="$(cat "$W/size-1")" -v reps="$REPS" -v go="$(best "$W/go.txt")" \
	-v pr="$(best "$W/ingest.txt")" -v go1="$(cat "$W/go-first.txt")" \
	-v pr1="$(cat "$W/first.txt")" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	split(go, g, " "); split(pr, p, " "); split(go1, g1, " "); split(pr1, p1, " ")
	printf "pprof ingest: %.2f MB gzipped, 5,000 functions, 50,000 stacks (best of %d, in turns)\n",
		size / 1e6, reps
	printf "  go tool pprof -top      %6.3f s wall  %6.3f s CPU  %4.0f MiB\n",
		g[1], g[2] + g[3], g[4] / 1024
	printf "  profreg ingest          %6.3f s wall  %6.3f s CPU  %4.0f MiB  %.1fx faster (wall)\n",
		p[1], p[2] + p[3], p[4] / 1024, g[1] / p[1]
	printf "    + PostgreSQL server   %6.3f s CPU: %.3f s CPU in all, %.1fx less than go\n",
		p[5], p[2] + p[3] + p[5], (g[2] + g[3]) / (p[2] + p[3] + p[5])
	printf "  first capture of the service (interns 5,000 names): %.3f s wall against %.3f s, %.1fx\n",
		p1[1], g1[1], g1[1] / p1[1]
	printf "  (load average %s: compare within this run)\n", load
}'
