#!/bin/bash
# Retention throughput: 100,000 generated captures (10 function rows
# each, a few thousand with real blob files) moved through the tiers by
# `profreg retention`, against a reference measured in the same run on
# the same tables: plain set-based SQL doing the same row work in two
# statements (no batches, no locks, no re-checks, no audit, no files),
# rolled back.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set.
set -eu
: "${PG_CONNINFO:?}" "${BIN:?}" "${TMP:?}"
N=${BENCH_RETENTION_CAPTURES:-100000}
FILES=${BENCH_RETENTION_FILES:-3000}
H=$TMP/home-retention
DBN=bench_retention
psql "$PG_CONNINFO" -qAt -c "drop database if exists $DBN" -c "create database $DBN" >/dev/null 2>&1
DB="$PG_CONNINFO dbname=$DBN"
P=("$BIN/profreg" --db "$DB" --home "$H" --quiet)
echo '{"retention": {"summary_top": 5}}' >"$TMP/retention.json"
"${P[@]}" db init
"${P[@]}" service add bench-ret
"${P[@]}" service enable bench-ret
AT=2026-06-01T00:00:00Z
q() { psql "$DB" -qAt -v ON_ERROR_STOP=1 -c "$1"; }

# Ages 8 to 119 days: about a quarter past summary_days (deleted), the
# rest moved to summary with their rows cut from 10 to 6.
q "insert into functions (name, file) select 'bench_f' || g, 'bench.c' from generate_series(1, 10) g"
q "insert into profiles (service_id, profile_type, release, captured_at, value_type, value_unit,
	total_value, sample_count, function_count, blob_key, format)
	select (select id from services where name = 'bench-ret'), 'cpu', 'r' || (i % 50),
		'$AT'::timestamptz - (8 + i % 112) * interval '1 day' - (i % 86400) * interval '1 second',
		'samples', 'count', 550, 550, 10, encode(sha256(('bench-' || i)::bytea), 'hex'), 'pprof'
	from generate_series(1, $N) i"
q "insert into profile_vectors (profile_id, service_id, function_ids, self_values, total_values)
	select p.id, p.service_id, array_agg(f.id order by f.id),
		array_agg(10 * substr(f.name, 8)::int order by f.id),
		array_agg(10 * substr(f.name, 8)::int order by f.id)
	from profiles p cross join functions f where f.name like 'bench_f%' group by p.id, p.service_id"
q "analyze"
q "select blob_key from profiles order by id limit $FILES" | while read -r k; do
	d=$H/blobs/sha256/${k:0:2}
	[ -d "$d" ] || mkdir -p "$d"
	printf 'bench blob %s' "$k" >"$d/${k:2}.zst"
done
rows=$(q "select sum(cardinality(function_ids)) from profile_vectors")

# The reference: the same row work as two set-based statements on the
# same tables and indexes, in a transaction rolled back afterwards.
r0=$(date +%s.%N)
psql "$DB" -qAt -v ON_ERROR_STOP=1 >/dev/null <<SQL
begin;
update profiles set retention_class = 'summary', blob_deleted_at = now()
	where captured_at < '$AT'::timestamptz - interval '7 days';
update profile_vectors v set function_ids = a.ids, self_values = a.sv, total_values = a.tv
	from (select profile_id, array_agg(function_id order by function_id) ids,
		array_agg(self_value order by function_id) sv, array_agg(total_value order by function_id) tv
		from (select v.profile_id, u.*, row_number() over (partition by v.profile_id
			order by u.self_value desc, u.function_id) rn
			from profile_vectors v, unnest(v.function_ids, v.self_values, v.total_values)
			as u(function_id, self_value, total_value)) x
		where rn <= 5 group by profile_id) a
	where v.profile_id = a.profile_id;
select 1;
SQL
r1=$(date +%s.%N)
# (psql ends without commit: the server rolls it back)
q "vacuum analyze profiles"
q "vacuum analyze profile_vectors"

t0=$(date +%s.%N)
"${P[@]}" --config "$TMP/retention.json" retention --at "$AT" --json >"$TMP/retention.out"
t1=$(date +%s.%N)
moved=$(sed -n 's/^ *"\(to_summary\|deleted\)": \([0-9]*\).*/\2/p' "$TMP/retention.out" | head -n 2 | awk '{s += $1} END {print s + 0}')
blobs=$(sed -n 's/^ *"blobs_deleted": \([0-9]*\).*/\1/p' "$TMP/retention.out")
batches=$(sed -n 's/^ *"batches": \([0-9]*\).*/\1/p' "$TMP/retention.out")
awk -v n="$N" -v m="$moved" -v rows="$rows" -v b="$blobs" -v nb="$batches" -v t0="$t0" -v t1="$t1" -v r0="$r0" -v r1="$r1" 'BEGIN {
	t = t1 - t0; r = r1 - r0
	printf "retention over %d captures (%d function rows, %d blob files deleted), batches of 200\n", n, rows, b
	printf "  profreg retention      %.2f s  %.0f captures moved/s (%d moved, %d transactions)\n", t, m / t, m, nb
	printf "  reference: one-shot SQL of the same row work  %.2f s  %.0f captures/s\n", r, n / r
	printf "  ratio                  %.2fx the reference time\n", t / r
}'
psql "$PG_CONNINFO" -qAt -c "drop database $DBN" >/dev/null
