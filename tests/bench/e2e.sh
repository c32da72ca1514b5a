#!/bin/bash
# Files to findings: 40 services x 32 folded captures of about 200
# functions (28 baseline captures over 14 days, 4 of the new release),
# from the files on disk to the list of regressions. profreg registers
# and enables the services (service import --enable), ingests every
# file (ingest --manifest --jobs 2: zstd blobs, SHA-256, rows in
# PostgreSQL) and analyses the release (analyze --all-services). The reference, measured in the same
# run on the same files, is a plain Perl script without a database
# (tests/bench/e2e_ref.pl): it parses the same files, sums each
# function's self samples, and runs a Welch t test of every function's
# share with Benjamini-Hochberg across the run. Prints both times (best
# of REPS, in turns), the ratio, and each side's number of findings.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set, or
# on its own: tests/bench/e2e.sh (starts a throwaway PostgreSQL).
set -eu
BUILD=${BUILD:-build}
BIN=${BIN:-bin}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${PG_CONNINFO:-}" ]; then
	cd "$ROOT"
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench-e2e.XXXXXX)
	chmod 755 "$TMP"
	trap 'pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
fi
BIN=$(cd "$BIN" && pwd)
REPS=${BENCH_E2E_REPS:-3}
SERVICES=${BENCH_E2E_SERVICES:-40}
W=$TMP/e2e
rm -rf "$W" && mkdir -p "$W"
"$BUILD/sim/fleetgen" --out "$W/fleet" --services "$SERVICES" --functions 200 --days 14 \
	--per-day 2 --current 4 --seed 21 >"$W/gen.txt"
at=$(sed -n 's/^at: //p' "$W/gen.txt")
rel=$(sed -n 's/^release: //p' "$W/gen.txt")
caps=$(grep -c . "$W/fleet/manifest.jsonl")
sed 's/.*/{"name": "&"}/' "$W/fleet/services.txt" >"$W/services.jsonl"
cat "$W"/fleet/svc-*/*.folded >/dev/null # the page cache, for both sides

one_profreg() { # $1: a fresh database name
	local P=("$BIN/profreg" --db "$PG_CONNINFO dbname=$1" --home "$W/home-$1" --quiet)
	psql "$PG_CONNINFO" -qAt -c "set client_min_messages = warning" \
		-c "drop database if exists $1" -c "create database $1" >/dev/null
	"${P[@]}" db init
	local t0 t1
	t0=$(date +%s.%N)
	"${P[@]}" service import --enable "$W/services.jsonl"
	(cd "$W/fleet" && "${P[@]}" ingest --manifest manifest.jsonl --jobs 2)
	"${P[@]}" analyze --all-services --release "$rel" --at "$at" --json >"$W/profreg.json"
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$W/profreg.txt"
}
# Each run's blob store and database are removed after the last run, not
# between runs: ext4 without a journal (this machine's) does not reuse an
# inode for up to five minutes after it was freed, and a new file scans
# past every such inode, so a run right after deleting 1,280 blob files
# measured the file system's scan of them (1.62-1.68 s of ingest against 1.27-1.33 s
# into a folder with nothing deleted nearby).
cleanup_profreg() {
	for i in $(seq "$REPS"); do
		rm -rf "$W/home-bench_e2e_$i"
		psql "$PG_CONNINFO" -qAt -c "drop database if exists bench_e2e_$i" >/dev/null
	done
}
one_ref() {
	local t0 t1
	t0=$(date +%s.%N)
	perl "$ROOT/tests/bench/e2e_ref.pl" "$W/fleet" "$rel" >"$W/ref.out"
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$W/ref.txt"
}
: >"$W/profreg.txt"
: >"$W/ref.txt"
for i in $(seq "$REPS"); do
	one_ref
	one_profreg "bench_e2e_$i"
done
cleanup_profreg
nf=$(perl -MJSON::PP -0777 -ne '
	my $d = decode_json($_); my $n = 0;
	for my $f (@{$d->{findings}}) { $n++ if $f->{direction} eq "regression" }
	print $n' "$W/profreg.json")
nr=$(sed -n 's/^findings: //p' "$W/ref.out")
best() { sort -n "$1" | head -n 1; }
awk -v p="$(best "$W/profreg.txt")" -v r="$(best "$W/ref.txt")" -v s="$SERVICES" -v c="$caps" \
	-v nf="$nf" -v nr="$nr" -v reps="$REPS" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	printf "files to findings: %d services, %d folded captures of about 200 functions, ", s, c
	printf "best of %d\n", reps
	printf "  Perl script, no database (parse, t test, BH)  %6.2f s  %d regressions\n", r, nr
	printf "  profreg import + ingest --jobs 2 + analyze    %6.2f s  %d regressions", p, nf
	printf "  %.1fx the script\n", p / r
	printf "  aim: within 2x (load average %s: compare within this run)\n", load
}'
