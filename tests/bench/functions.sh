#!/bin/bash
# The function query on 10,000,000 per-function rows (20,000 captures of
# 500 functions, 50 services, 30 days): `profreg functions` end to end,
# against the same lookup done by plain SQL in psql, measured in
# the same run on the same tables.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set.
set -eu
: "${PG_CONNINFO:?}" "${BIN:?}" "${TMP:?}"
CAPS=${BENCH_FUNCTIONS_CAPTURES:-20000}
FUNCS=${BENCH_FUNCTIONS_FUNCTIONS:-500}
DBN=bench_functions
psql "$PG_CONNINFO" -qAt -c "drop database if exists $DBN" -c "create database $DBN" >/dev/null 2>&1
DB="$PG_CONNINFO dbname=$DBN"
P=("$BIN/profreg" --db "$DB" --home "$TMP/home-functions" --quiet)
"${P[@]}" db init
q() { psql "$DB" -qAt -v ON_ERROR_STOP=1 -c "$1"; }
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)

t0=$(date +%s.%N)
q "insert into services (name, enabled) select 'svc-' || lpad(g::text, 3, '0'), true
	from generate_series(1, 50) g"
q "insert into functions (name, file) select 'pkg' || (g % 20) || '.fn' || g, 'pkg/f' || g || '.go'
	from generate_series(1, $FUNCS) g"
q "insert into profiles (service_id, profile_type, release, captured_at, value_type, value_unit,
	total_value, sample_count, function_count, blob_key, format, host)
	select (select min(id) from services) + i % 50, 'cpu', 'v' || (i / 2000),
		'$NOW'::timestamptz - (i % 43200) * interval '1 minute', 'samples', 'count',
		1000000, 1000000, $FUNCS, encode(sha256(('fq-' || i)::bytea), 'hex'), 'pprof',
		'host-' || (i % 200)
	from generate_series(1, $CAPS) i"
# Shares fall with the function's rank; each capture varies by up to 20%.
q "insert into profile_vectors (profile_id, service_id, function_ids, self_values, total_values)
	select p.id, p.service_id, array_agg(f.id order by f.id), array_agg(s.v order by f.id),
		array_agg(s.v order by f.id)
	from profiles p cross join (select * from functions where not synthetic) f
	cross join lateral (select (120000.0 / (1 + f.id % 100) * (0.8 + 0.4 * ((p.id * 7919 + f.id * 104729) % 1000) / 1000.0))::bigint as v) s
	group by p.id, p.service_id"
q "insert into service_functions (function_id, service_id)
	select distinct u.id, v.service_id from profile_vectors v cross join lateral unnest(v.function_ids) u(id)"
q "vacuum analyze profile_vectors"
q "analyze"
t1=$(date +%s.%N)
rows=$(q "select sum(cardinality(function_ids)) from profile_vectors")
# A function near 6% in every capture: about half of its captures pass 5%.
name=$(q "select name from functions where not synthetic and id % 100 = 1 order by id limit 1")
fid=$(q "select id from functions where name = '$name'")

timeit() { local a b; a=$(date +%s.%N); "$@" >/dev/null; b=$(date +%s.%N); awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }'; }
ref=$(timeit psql "$DB" -qAt -c "select count(*) from profile_vectors v
	join profiles p on p.id = v.profile_id
	where p.service_id in (select service_id from service_functions where function_id = $fid)
	and p.captured_at >= now() - interval '30 days'
	and v.self_values[array_position(v.function_ids, $fid::bigint)] >= 0.05 * p.total_value")
exact=$(timeit "${P[@]}" functions --name "$name" --min-self 5% --since 30d --limit 100000 --json)
byrel=$(timeit "${P[@]}" functions --name "$name" --min-self 5% --since 30d --by release --json)
prefix=$(timeit "${P[@]}" functions --name "pkg7.fn4" --match prefix --min-self 5% --since 30d --limit 100000 --json)
regex=$(timeit "${P[@]}" functions --name '^pkg1[0-9]\.fn1' --match regex --min-self 10% --since 30d --limit 100000 --json)
n=$("${P[@]}" functions --name "$name" --min-self 5% --since 30d --limit 100000 --json | jq '.rows | length')
awk -v r="$rows" -v g="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v ref="$ref" \
	-v e="$exact" -v br="$byrel" -v p="$prefix" -v x="$regex" -v n="$n" 'BEGIN {
	printf "function query on %d per-function rows (generated in %.0f s)\n", r, g
	printf "  plain SQL count of the same captures (reference)  %.3f s\n", ref
	printf "  profreg functions, exact name, %d captures     %.3f s  (%.1fx the reference)\n", n, e, e / ref
	printf "  ... --by release                                %.3f s\n", br
	printf "  ... prefix                                      %.3f s\n", p
	printf "  ... regular expression                          %.3f s\n", x
}'
psql "$PG_CONNINFO" -qAt -c "drop database if exists $DBN" >/dev/null 2>&1 || true
