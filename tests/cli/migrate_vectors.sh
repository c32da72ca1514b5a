#!/bin/bash
# Migrations 024, 025 and 033 on a database that has data: the schema is
# built to version 23 from the migration files, filled the old way (one
# row per capture and function, one per baseline and function, a team
# role granted access), then profreg migrates it. The per-function views
# must read back exactly what the old tables held, the arrays must be in
# function order, and the role granted before must still read its
# team's rows, and only those, through the views.
. "$(dirname "$0")/lib.sh"
fresh_db cli_migvec
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R=cli_migvec_team
psql "$PROFREG_TEST_DB" -qAt -c "DROP OWNED BY $R" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $R" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "CREATE ROLE $R LOGIN" >/dev/null

sql "create table schema_migrations (version int primary key, name text not null,
	applied_at timestamptz not null default now())" >/dev/null
bad=""
for f in "$ROOT"/pipeline/migrations/0*.sql; do
	n=$(basename "$f" .sql)
	v=$((10#${n%%_*}))
	[ "$v" -le 23 ] || continue
	psql "$DB" -qAt -v ON_ERROR_STOP=1 -1 -f "$f" >/dev/null 2>"$PROFREG_TEST_TMP/mig.err" &&
		sql "insert into schema_migrations (version, name) values ($v, '$n')" >/dev/null ||
		bad="$bad $n: $(head -c 300 "$PROFREG_TEST_TMP/mig.err")"
done
[ -z "$bad" ] && [ "$(sql "select max(version) from schema_migrations")" = 23 ] &&
	ok "the schema is built to version 23 from its files" || not_ok "old schema" "$bad"

# Two teams' services, captures whose rows come in no particular order,
# a baseline with a NULL variance, and a role that sees team ta.
sql "insert into services (name, team, enabled) values ('pay', 'ta', true), ('shop', 'tb', true);
	insert into functions (name, file) select 'fn' || g, 'f.go' from generate_series(1, 40) g;
	insert into profiles (service_id, profile_type, release, captured_at, value_type, value_unit,
		total_value, sample_count, function_count, blob_key, format)
		select s.id, 'cpu', 'r1', now() - g * interval '1 hour', 'samples', 'count', 1000 + g,
			1000 + g, 30, lpad(to_hex(g * 10 + s.id), 64, '0'), 'folded'
		from services s, generate_series(1, 3) g;
	insert into profile_functions (profile_id, function_id, self_value, total_value,
		self_share, total_share, captured_at, service_id, profile_type)
		select p.id, f.id, (f.id * 7 + p.id) % 50, (f.id * 7 + p.id) % 50 + 10,
			((f.id * 7 + p.id) % 50)::float8 / p.total_value,
			((f.id * 7 + p.id) % 50 + 10)::float8 / p.total_value,
			p.captured_at, p.service_id, p.profile_type
		from profiles p, functions f where (f.id + p.id) % 4 <> 0 order by md5(f.id::text);
	insert into baselines (service_id, profile_type) select id, 'cpu' from services;
	insert into baseline_functions select b.id, f.id, 3, f.id / 100.0, f.id / 90.0, 0.01,
		f.id / 95.0, 0.5, case when f.id % 3 = 0 then null else 0.02 end, 0.001,
		case when f.id % 5 = 0 then null else f.id * 10.0 end
		from baselines b, functions f where f.id % 2 = b.id % 2;
	insert into access_grants (role, team) values ('$R', 'ta');
	select profreg_access_apply('$R', false);" >/dev/null
pf_cols="profile_id, function_id, self_value, total_value, self_share, total_share,
	captured_at, service_id, profile_type"
bf_cols="baseline_id, function_id, n, mean_share, median_share, mad_share, ewma_share, mean_vst,
	var_vst, var_floor, mean_rate"
sql "select $pf_cols from profile_functions order by 1, 2" >"$PROFREG_TEST_TMP/pf.before"
sql "select $bf_cols from baseline_functions order by 1, 2" >"$PROFREG_TEST_TMP/bf.before"
as_team=$(psql "$DB user=$R" -qAt -c "select count(*) from profile_functions" 2>&1)
want_team=$(sql "select count(*) from profile_functions pf join services s on s.id = pf.service_id
	where s.team = 'ta'")

run pr db init
[ $RC -eq 0 ] && [ "$(sql "select max(version) from schema_migrations")" -ge 25 ] &&
	ok "profreg migrates the filled database" || not_ok "migrate" "rc=$RC $ERR"
sql "select $pf_cols from profile_functions order by 1, 2" >"$PROFREG_TEST_TMP/pf.after"
sql "select $bf_cols from baseline_functions order by 1, 2" >"$PROFREG_TEST_TMP/bf.after"
cmp -s "$PROFREG_TEST_TMP/pf.before" "$PROFREG_TEST_TMP/pf.after" &&
	[ "$(wc -l <"$PROFREG_TEST_TMP/pf.after")" -gt 100 ] &&
	ok "profile_functions reads back every row, share and time as before" ||
	not_ok "profile rows" "$(diff "$PROFREG_TEST_TMP/pf.before" "$PROFREG_TEST_TMP/pf.after" | head -4)"
cmp -s "$PROFREG_TEST_TMP/bf.before" "$PROFREG_TEST_TMP/bf.after" &&
	[ "$(wc -l <"$PROFREG_TEST_TMP/bf.after")" -gt 20 ] &&
	ok "baseline_functions reads back every summary, NULLs as NULLs" ||
	not_ok "baseline rows" "$(diff "$PROFREG_TEST_TMP/bf.before" "$PROFREG_TEST_TMP/bf.after" | head -4)"
[ "$(sql "select count(*) from profile_vectors where function_ids <> array(select unnest(function_ids) order by 1)")" = 0 ] &&
	[ "$(sql "select count(*) from profile_vectors")" = 6 ] &&
	[ "$(sql "select count(*) from pg_tables where tablename in ('profile_functions', 'baseline_functions')")" = 0 ] &&
	ok "one row a capture, its ids in order, and the old tables gone" || not_ok "vectors" "$(sql "select * from profile_vectors limit 1")"
for v in profile_functions profile_vectors baseline_functions baseline_vectors; do
	psql "$DB user=$R" -qAt -v ON_ERROR_STOP=1 -c "select count(*) from $v" >/dev/null 2>&1 ||
		bad="$bad $v"
done
after_team=$(psql "$DB user=$R" -qAt -c "select count(*) from profile_functions" 2>&1)
[ -z "$bad" ] && [ "$as_team" = "$want_team" ] && [ "$after_team" = "$want_team" ] &&
	[ "$(psql "$DB user=$R" -qAt -c "select count(*) from profile_vectors v
		join services s on s.id = v.service_id where s.team <> 'ta'" 2>&1)" = 0 ] &&
	ok "the role granted before still reads its team's rows, and only those ($after_team)" ||
	not_ok "role" "unreadable:$bad before=$as_team after=$after_team want=$want_team"
# Migration 033: the services' functions come from the captures, and the
# role sees the names its team's captures use, and only those.
pairs=$(sql "select count(*) from (select distinct v.service_id, u.id from profile_vectors v
	cross join lateral unnest(v.function_ids) u(id)) x")
team_fns=$(sql "select count(distinct u.id) from profile_vectors v join services s on s.id = v.service_id
	cross join lateral unnest(v.function_ids) u(id) where s.team = 'ta'")
[ "$(sql "select count(*) from service_functions")" = "$pairs" ] && [ "$pairs" -gt 40 ] &&
	[ "$(sql "select count(*) from service_functions sf where not exists (select 1
		from profile_vectors v where v.service_id = sf.service_id
		and sf.function_id = any(v.function_ids))")" = 0 ] &&
	ok "each service's functions are recorded from its captures ($pairs pairs)" ||
	not_ok "service_functions" "$(sql "select count(*) from service_functions") want $pairs"
sql "insert into functions (name, file) values ('tb_secret', 'f.go')" >/dev/null
sql "insert into profile_vectors (profile_id, service_id, function_ids, self_values, total_values)
	select p.id, p.service_id, array[(select id from functions where name = 'tb_secret')], '{1}', '{1}'
	from profiles p join services s on s.id = p.service_id where s.team = 'tb'
	and not exists (select 1 from profile_vectors v where v.profile_id = p.id) limit 1" >/dev/null
sql "insert into service_functions select f.id, s.id from functions f, services s
	where f.name = 'tb_secret' and s.name = 'shop'" >/dev/null
[ "$(psql "$DB user=$R" -qAt -c "select count(*) from functions" 2>&1)" = "$team_fns" ] &&
	[ "$(psql "$DB user=$R" -qAt -c "select count(*) from functions where name = 'tb_secret'" 2>&1)" = 0 ] &&
	[ "$(psql "$DB user=$R" -qAt -c "select count(*) from service_functions sf
		join services s on s.id = sf.service_id where s.team <> 'ta'" 2>&1)" = 0 ] &&
	ok "the role sees the $team_fns function names of its team's captures, and no other" ||
	not_ok "function names" "$(psql "$DB user=$R" -qAt -c "select count(*) from functions" 2>&1) want $team_fns"
psql "$PROFREG_TEST_DB" -qAt -c "DROP DATABASE IF EXISTS cli_migvec" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "DROP OWNED BY $R" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $R" >/dev/null 2>&1
finish
