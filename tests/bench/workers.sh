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
#
# At fleet scale, e.g. 10,000 services of 50 functions over 7 days, with
# one of the 3 workers killed (SIGKILL) once a tenth of the tasks are done:
#   BENCH_WORKER_SERVICES=10000 BENCH_WORKER_FUNCTIONS=50 BENCH_WORKER_DAYS=7 \
#   BENCH_WORKER_PER_DAY=1 BENCH_WORKER_NIGHTS="1 4" BENCH_WORKER_KILL=1 \
#   tests/bench/workers.sh
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
NIGHTS=${BENCH_WORKER_NIGHTS:-1 2 4}
KILL=${BENCH_WORKER_KILL:-0}
W=$TMP/workers
rm -rf "$W" && mkdir -p "$W/drop"
"$BUILD/sim/fleetgen" --out "$W/fleet" --services "$SERVICES" \
	--functions "${BENCH_WORKER_FUNCTIONS:-200}" --days "${BENCH_WORKER_DAYS:-14}" \
	--per-day "${BENCH_WORKER_PER_DAY:-2}" --seed 13 >"$W/gen.txt"
at=$(sed -n 's/^at: //p' "$W/gen.txt")
rel=$(sed -n 's/^release: //p' "$W/gen.txt")
# The baseline is ingested once, beforehand; the night's captures wait in
# drop folders, each file (a hard link) with its metadata beside it, made
# by one perl process (a process per file took half an hour at 40,000).
grep -v "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl" >"$W/base.jsonl" || true
sed -i "s#\"path\":\"#\"path\":\"$W/fleet/#" "$W/base.jsonl"
grep "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl" | perl -e '
	my ($fleet, $drop) = @ARGV;
	while (my $line = <STDIN>) {
		chomp $line;
		my ($path) = $line =~ /"path":"([^"]*)"/;
		my ($svc) = $line =~ /"service":"([^"]*)"/;
		my ($base) = $path =~ m{([^/]*)$};
		(my $meta = $line) =~ s/"path":"[^"]*",//;
		$meta =~ s/"service":"[^"]*",//;
		-d "$drop/$svc" or mkdir "$drop/$svc" or die "mkdir $drop/$svc: $!\n";
		link "$fleet/$path", "$drop/$svc/$base" or die "link $path: $!\n";
		open my $fh, ">", "$drop/$svc/$base.json" or die "$base.json: $!\n";
		print $fh "$meta\n";
		close $fh;
	}' "$W/fleet" "$W/drop"
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
xargs "${BASE[@]}" service add <"$W/fleet/services.txt"
xargs "${BASE[@]}" service enable <"$W/fleet/services.txt"
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
		"${P[@]}" nightly --at "$at" --workers --json >"$W/night-$n.json" &
		local coord=$!
		if [ "$KILL" = 1 ] && [ "$n" -gt 2 ]; then
			# Once a tenth of the tasks are done, SIGKILL a worker while
			# it holds a task (worker ids end in the process id): that
			# task is claimed again when its lease runs out.
			local q="select count(*) filter (where state = 'done') * 10 >= greatest(count(*), 1)
				from tasks where run_id = (select max(run_id) from tasks)"
			local held="select string_agg(split_part(worker, ':', 2), ' ') from tasks
				where state = 'leased' and run_id = (select max(run_id) from tasks)"
			local ready="" h
			for _ in $(seq 36000); do
				kill -0 "$coord" 2>/dev/null || break
				[ -z "$ready" ] &&
					[ "$(psql "$PG_CONNINFO dbname=$dbn" -qAt -c "$q" 2>/dev/null)" = t ] &&
					ready=1
				if [ -n "$ready" ]; then
					for h in $(psql "$PG_CONNINFO dbname=$dbn" -qAt -c "$held" 2>/dev/null); do
						case " $pids " in *" $h "*) ;; *) continue ;; esac
						kill -9 "$h" 2>/dev/null &&
							echo "$h" >"$W/killed-$n.txt"
						break 2
					done
				fi
				sleep 0.1
			done
		fi
		wait "$coord" || true
	fi
	t1=$(date +%s.%N)
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	wait
	[ -f "$W/killed-$n.txt" ] && psql "$PG_CONNINFO dbname=$dbn" -qAt -c "select count(*)
		from tasks where attempts > 1" >"$W/reclaimed-$n.txt"
	psql "$PG_CONNINFO dbname=$dbn" -qAt -c "select s.name, f.function, f.direction,
		f.q_value::text from findings f join services s on s.id = f.service_id order by 1, 2, 3" \
		>"$W/findings-$n.txt"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
same() { cmp -s "$W/findings-1.txt" "$W/findings-$1.txt" && echo "same findings" || echo "FINDINGS DIFFER"; }
declare -A took
for n in $NIGHTS; do took[$n]=$(night "$n"); done
nf=$(grep -c . "$W/findings-1.txt" || true)
printf 'simulated night over workers: %d services, %d night captures collected, %d findings\n' \
	"$SERVICES" "$ncur" "$nf"
awk -v t="${took[1]}" 'BEGIN { printf "  1 process               %7.2f s  (reference)\n", t }'
for n in $NIGHTS; do
	[ "$n" = 1 ] && continue
	k=""
	[ -f "$W/killed-$n.txt" ] &&
		k=", one worker killed holding a task ($(cat "$W/reclaimed-$n.txt") claimed again)"
	awk -v t="${took[$n]}" -v r="${took[1]}" -v s="$(same "$n")" -v w=$((n - 1)) -v k="$k" 'BEGIN {
		printf "  coordinator + %d worker%s %7.2f s  %.2fx the single process  %s%s\n",
			w, (w > 1 ? "s" : " "), t, t / r, s, k }'
done
echo "  ($(nproc) cores: on a machine this small more processes share the same cores and database)"
