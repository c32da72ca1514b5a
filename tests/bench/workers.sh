#!/bin/bash
# A simulated night spread over processes: the same fleet's night
# (collect the night's captures from drop folders, ingest, analyse, store,
# report) done by one process, then by a coordinator and 1 and 3 `profreg
# worker` processes (2 and 4 processes in all), each from a copy of the
# same database (CREATE DATABASE ... TEMPLATE) and blob store. Prints each
# time, its ratio to the single process measured in this run, and
# whether the findings are the same.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set, or
# on its own: tests/bench/workers.sh (starts a throwaway PostgreSQL).
set -eu
BUILD=${BUILD:-build}
BIN=${BIN:-bin}
if [ -z "${PG_CONNINFO:-}" ]; then
	ROOT=$(cd "$(dirname "$0")/../.." && pwd)
	cd "$ROOT"
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench-workers.XXXXXX)
	chmod 755 "$TMP"
	trap 'pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
fi
SERVICES=${BENCH_WORKER_SERVICES:-100}
W=$TMP/workers
rm -rf "$W" && mkdir -p "$W/drop"
"$BUILD/sim/fleetgen" --out "$W/fleet" --services "$SERVICES" --functions 200 --seed 13 >"$W/gen.txt"
at=$(sed -n 's/^at: //p' "$W/gen.txt")
rel=$(sed -n 's/^release: //p' "$W/gen.txt")
# The baseline is ingested once, beforehand; the night's captures wait in drop folders.
grep -v "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl" >"$W/base.jsonl" || true
sed -i "s#\"path\":\"#\"path\":\"$W/fleet/#" "$W/base.jsonl"
grep "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl" | while IFS= read -r line; do
	path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$line")
	svc=$(sed 's/.*"service":"\([^"]*\)".*/\1/' <<<"$line")
	mkdir -p "$W/drop/$svc"
	cp "$W/fleet/$path" "$W/drop/$svc/"
	sed 's/"path":"[^"]*",//; s/"service":"[^"]*",//' <<<"$line" >"$W/drop/$svc/$(basename "$path").json"
done
{
	echo '{"services": {'
	sep=""
	while read -r s; do
		printf '%s"%s": {"source": {"dir": "%s"}}' "$sep" "$s" "$W/drop/$s"
		sep=","
	done <"$W/fleet/services.txt"
	echo '}, "workers": {"lease_s": 30, "poll_ms": 100}}'
} >"$W/cfg.json"
psql "$PG_CONNINFO" -qAt -c "drop database if exists bench_workers_base" \
	-c "create database bench_workers_base" >/dev/null 2>&1
BASE=("$BIN/profreg" --db "$PG_CONNINFO dbname=bench_workers_base" --home "$W/home-base" --quiet)
"${BASE[@]}" db init
while read -r s; do "${BASE[@]}" service add "$s" && "${BASE[@]}" service enable "$s"; done <"$W/fleet/services.txt"
split -n l/2 -d "$W/base.jsonl" "$W/base.part."
for part in "$W"/base.part.*; do "${BASE[@]}" ingest --manifest "$part" & done
wait
ncur=$(grep -c "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl")

# night N: the night with N processes in all; prints seconds.
night() {
	local n=$1 dbn=bench_workers_$1 pids=""
	psql "$PG_CONNINFO" -qAt -c "drop database if exists $dbn" \
		-c "create database $dbn template bench_workers_base" >/dev/null
	rm -rf "$W/home-$n" && cp -a "$W/home-base" "$W/home-$n"
	local P=("$BIN/profreg" --db "$PG_CONNINFO dbname=$dbn" --home "$W/home-$n" --config "$W/cfg.json")
	local t0 t1
	t0=$(date +%s.%N)
	if [ "$n" = 1 ]; then
		"${P[@]}" nightly --at "$at" --json >"$W/night-$n.json" || true
	else
		for _ in $(seq $((n - 1))); do
			"${P[@]}" --quiet worker --idle-exit 2 >/dev/null &
			pids="$pids $!"
		done
		"${P[@]}" nightly --at "$at" --workers --json >"$W/night-$n.json" || true
	fi
	t1=$(date +%s.%N)
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	wait
	psql "$PG_CONNINFO dbname=$dbn" -qAt -c "select s.name, f.function, f.direction,
		f.q_value::text from findings f join services s on s.id = f.service_id order by 1, 2, 3" \
		>"$W/findings-$n.txt"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
t1=$(night 1)
t2=$(night 2)
t4=$(night 4)
same() { cmp -s "$W/findings-1.txt" "$W/findings-$1.txt" && echo "same findings" || echo "FINDINGS DIFFER"; }
nf=$(grep -c . "$W/findings-1.txt" || true)
printf 'simulated night over workers: %d services, %d night captures collected, %d findings\n' \
	"$SERVICES" "$ncur" "$nf"
awk -v t="$t1" 'BEGIN { printf "  1 process              %6.2f s  (reference)\n", t }'
awk -v t="$t2" -v r="$t1" -v s="$(same 2)" 'BEGIN { printf "  coordinator + 1 worker %6.2f s  %.2fx the single process  %s\n", t, t / r, s }'
awk -v t="$t4" -v r="$t1" -v s="$(same 4)" 'BEGIN { printf "  coordinator + 3 workers %5.2f s  %.2fx the single process  %s\n", t, t / r, s }'
echo "  ($(nproc) cores: on a machine this small more processes share the same cores and database)"
