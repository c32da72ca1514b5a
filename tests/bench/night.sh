#!/bin/bash
# The fleet-scale night of issue 13: 1,000 simulated services of about 500
# functions, 14 days x 2 baseline captures and 4 captures of the new
# release each (tests/sim/fleetgen). The services are registered (service
# import) and the 28,000 baseline captures ingested beforehand (ingest
# --manifest --jobs 2: timed and printed, not part of the night). The
# night is what the issue timed: ingest of the night's 4,000 captures
# (--jobs 2) plus `analyze --all-services` of the new release, which stores
# the findings. (`profreg nightly` does that and more: it collects from
# sources and writes reports and pages; tests/bench/workers.sh times it.)
# Each night runs on its own copy of the database made after the baseline
# (CREATE DATABASE ... TEMPLATE) and of the blob store, so that a second
# night shows whether the stored findings are the same.
# References measured in this run on the same bytes: gzip -1 of the night's
# files (CPU-bound, one core), and the database-free Perl script of
# tests/bench/e2e.sh (tests/bench/e2e_ref.pl: parses every capture of the
# fleet, baseline and night, and runs a Welch test with BH). Prints each
# part's wall time, its ratio to the references, the findings and the load
# average; never passes or fails on time.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set, or on
# its own: tests/bench/night.sh (starts a throwaway PostgreSQL). Sizes:
#   BENCH_NIGHT_SERVICES (1000) BENCH_NIGHT_FUNCTIONS (500)
#   BENCH_NIGHT_DAYS (14) BENCH_NIGHT_PER_DAY (2) BENCH_NIGHT_CURRENT (4)
#   BENCH_NIGHT_RUNS (2: nights, each on a fresh copy)
#   BENCH_NIGHT_PERL (1: run the Perl reference; 0 to leave it out)
#   BENCH_NIGHT_PERF=DIR: one more night on its own copy, untimed, its
#   ingest and analysis each under `perf record -a -g` (every process, so
#   the PostgreSQL backends too), into DIR/ingest.data and DIR/analyze.data
# At the default size the fleet is about 6 GB on disk and the whole script
# takes some 15 minutes on 2 cores.
set -eu
BUILD=${BUILD:-build}
BIN=${BIN:-bin}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${PG_CONNINFO:-}" ]; then
	cd "$ROOT"
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench-night.XXXXXX)
	chmod 755 "$TMP" # the cluster runs as postgres when we are root
	trap 'pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
fi
: "${PG_CONNINFO:?}" "${BIN:?}" "${BUILD:?}" "${TMP:?}"
BIN=$(cd "$BIN" && pwd)
BUILD=$(cd "$BUILD" && pwd)
SERVICES=${BENCH_NIGHT_SERVICES:-1000}
FUNCTIONS=${BENCH_NIGHT_FUNCTIONS:-500}
RUNS=${BENCH_NIGHT_RUNS:-2}
PERL_REF=${BENCH_NIGHT_PERL:-1}
W=$TMP/night
rm -rf "$W" && mkdir -p "$W"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
sql() { psql "$PG_CONNINFO" -qAt -c "set client_min_messages = warning" "$@" >/dev/null; }

t0=$(now)
"$BUILD/sim/fleetgen" --out "$W/fleet" --services "$SERVICES" --functions "$FUNCTIONS" \
	--days "${BENCH_NIGHT_DAYS:-14}" --per-day "${BENCH_NIGHT_PER_DAY:-2}" \
	--current "${BENCH_NIGHT_CURRENT:-4}" --seed 13 >"$W/gen.txt"
t1=$(now)
at=$(sed -n 's/^at: //p' "$W/gen.txt")
rel=$(sed -n 's/^release: //p' "$W/gen.txt")
# The baseline days and the night: the night's captures are those of the
# new release (fleetgen --verify checks that they are exactly the night's).
grep -v "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl" >"$W/fleet/base.jsonl" || true
grep "\"release\":\"$rel\"" "$W/fleet/manifest.jsonl" >"$W/fleet/night.jsonl"
nbase=$(grep -c . "$W/fleet/base.jsonl" || true)
nnight=$(grep -c . "$W/fleet/night.jsonl")
sed -n 's/.*"path":"\([^"]*\)".*/\1/p' "$W/fleet/night.jsonl" >"$W/night-files.txt"
bnight=$(cd "$W/fleet" && xargs cat <"$W/night-files.txt" | wc -c)
bfleet=$(du -sb "$W/fleet" | cut -f1)
printf 'fleet-scale night: %d services, --functions %d, %d baseline + %d night captures\n' \
	"$SERVICES" "$FUNCTIONS" "$nbase" "$nnight"
printf '  fleetgen %.1f s, %.2f GB; the night'"'"'s files %.1f MB\n' \
	"$(secs "$t0" "$t1")" "$(awk -v b="$bfleet" 'BEGIN { print b / 1e9 }')" \
	"$(awk -v b="$bnight" 'BEGIN { print b / 1e6 }')"

# The baseline, once, into bench_night_base.
sql -c "drop database if exists bench_night_base" -c "create database bench_night_base"
B=("$BIN/profreg" --db "$PG_CONNINFO dbname=bench_night_base" --home "$W/home-base" --quiet)
"${B[@]}" db init
sed 's/.*/{"name": "&"}/' "$W/fleet/services.txt" >"$W/services.jsonl"
"${B[@]}" service import "$W/services.jsonl"
xargs "${B[@]}" service enable <"$W/fleet/services.txt"
l0=$(load)
t0=$(now)
(cd "$W/fleet" && "${B[@]}" ingest --manifest base.jsonl --jobs 2)
t1=$(now)
tb=$(secs "$t0" "$t1")
awk -v n="$nbase" -v t="$tb" -v l0="$l0" -v l1="$(load)" 'BEGIN {
	printf "  baseline ingest --jobs 2 (not part of the night)  %.1f s", t
	printf "  %.1f captures/s", n / t
	printf "  (load average %s -> %s)\n", l0, l1
}'
# No connection may stay on the template while it is copied.
sql -c "checkpoint"

# night K: the night on a fresh copy; leaves times in $W/night-K.txt and
# the stored findings, every number as text, in $W/findings-K.txt.
night() {
	local k=$1 dbn=bench_night_$1 t0 t1 t2 l0
	sql -c "drop database if exists $dbn" -c "create database $dbn template bench_night_base"
	rm -rf "$W/home-$k" && cp -a "$W/home-base" "$W/home-$k"
	local P=("$BIN/profreg" --db "$PG_CONNINFO dbname=$dbn" --home "$W/home-$k" --quiet)
	local rec_i=() rec_a=()
	if [ "$k" = perf ]; then
		rec_i=(perf record -q -a -g -o "$PERF/ingest.data" --)
		rec_a=(perf record -q -a -g -o "$PERF/analyze.data" --)
	fi
	# The night's files in the page cache, as for the references.
	(cd "$W/fleet" && xargs cat <"$W/night-files.txt" >/dev/null)
	l0=$(load)
	t0=$(now)
	(cd "$W/fleet" &&
		${rec_i[@]+"${rec_i[@]}"} "${P[@]}" ingest --manifest night.jsonl --jobs 2)
	t1=$(now)
	${rec_a[@]+"${rec_a[@]}"} "${P[@]}" analyze --all-services --release "$rel" --at "$at" \
		--json >"$W/analysis-$k.json" ||
		[ $? = 1 ] # exit 1: regressions found, the expected outcome
	t2=$(now)
	echo "$t0 $t1 $t2 $l0 $(load)" >"$W/night-$k.txt"
	psql "$PG_CONNINFO dbname=$dbn" -qAt -c "select s.name, f.function, f.direction,
		f.severity, f.p_value::text, f.q_value::text, f.delta::text, f.current_share::text
		from findings f join services s on s.id = f.service_id order by 1, 2, 3" \
		>"$W/findings-$k.txt"
	# A copy holds the whole fleet: only its findings are kept.
	sql -c "drop database $dbn"
	rm -rf "$W/home-$k"
}
for k in $(seq "$RUNS"); do night "$k"; done
PERF=${BENCH_NIGHT_PERF:-}
if [ -n "$PERF" ]; then
	mkdir -p "$PERF"
	PERF=$(cd "$PERF" && pwd)
	night perf
fi

# References on the same bytes, from the page cache: gzip -1 of the night's
# files as one stream (no process per file), the Perl script.
t0=$(now)
(cd "$W/fleet" && xargs cat <"$W/night-files.txt" | gzip -1 >/dev/null)
t1=$(now)
gz=$(secs "$t0" "$t1")
if [ "$PERL_REF" = 1 ]; then
	t0=$(now)
	perl "$ROOT/tests/bench/e2e_ref.pl" "$W/fleet" "$rel" >"$W/ref.out"
	t1=$(now)
	pl=$(secs "$t0" "$t1")
fi

# "database_seconds statistics_seconds tests insufficient" of an analysis.
timing() { perl -MJSON::PP -0777 -ne '
	my $d = decode_json($_);
	print "$d->{timing}{database_seconds} $d->{timing}{statistics_seconds} $d->{tests} ",
		scalar @{$d->{insufficient}}' "$1"; }
for k in $(seq "$RUNS"); do
	read -r t0 t1 t2 la lb lc ld le lf <"$W/night-$k.txt"
	read -r db st tests insuf <<<"$(timing "$W/analysis-$k.json")"
	nf=$(grep -c . "$W/findings-$k.txt" || true)
	nr=$(grep -c '|regression|' "$W/findings-$k.txt" || true)
	same=""
	if [ "$k" -gt 1 ]; then
		if cmp -s "$W/findings-1.txt" "$W/findings-$k.txt"; then
			same="  the same findings as night 1 (every stored p, q, delta, share)"
		else
			same="  FINDINGS DIFFER from night 1"
		fi
	fi
	awk -v k="$k" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v n="$nnight" -v gz="$gz" \
		-v db="$db" -v st="$st" -v tests="$tests" -v insuf="$insuf" \
		-v nf="$nf" -v nr="$nr" -v same="$same" \
		-v l0="$la $lb $lc" -v l1="$ld $le $lf" 'BEGIN {
		i = t1 - t0; a = t2 - t1
		printf "  night %d (load average %s -> %s)\n", k, l0, l1
		printf "    ingest of the night --jobs 2  %6.2f s  %.1f captures/s\n", i, n / i
		printf "    analyze --all-services        %6.2f s  (database %.2f s,", a, db
		printf " statistics %.2f s,", st
		printf " %d tests, %d services without a baseline)\n", tests, insuf
		printf "    night                         %6.2f s", i + a
		printf "  %.1fx gzip -1 of its files;", (i + a) / gz
		printf " target 20 s\n"
		printf "    %d findings stored, %d of them regressions%s\n", nf, nr, same
	}'
done
printf '  gzip -1 of the night'"'"'s files, one stream, one core  %.2f s\n' "$gz"
if [ "$PERL_REF" = 1 ]; then
	read -r t0 t1 t2 _ <"$W/night-1.txt"
	awk -v pl="$pl" -v n="$(sed -n 's/^findings: //p' "$W/ref.out")" \
		-v tn="$(secs "$t0" "$t2")" -v c=$((nbase + nnight)) 'BEGIN {
		printf "  Perl script, no database, all %d captures", c
		printf " (parse, t test, BH)  %.2f s", pl
		printf "  %d findings; night 1 is %.2fx it\n", n, tn / pl
	}'
fi
if [ -n "$PERF" ]; then
	read -r t0 t1 t2 _ <"$W/night-perf.txt"
	same=", DIFFER"
	cmp -s "$W/findings-1.txt" "$W/findings-perf.txt" && same=", the same"
	printf '  under perf record -a -g: ingest %.2f s, analyze %.2f s, %s findings%s\n' \
		"$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" \
		"$(grep -c . "$W/findings-perf.txt" || true)" "$same"
	echo "  profiles in $PERF (perf report -i $PERF/analyze.data --stdio --no-children" \
		"--sort comm,dso,sym)"
fi
echo "  ($(nproc) cores, shared: compare within this run)"
# The benchmarks after this one need the disk.
sql -c "drop database bench_night_base"
rm -rf "$W/fleet" "$W/home-base"
