#!/bin/bash
# Retention killed with SIGKILL in the middle of a run, several times,
# then run again: no capture left pointing at a missing blob at any
# point, no blob file left that nothing keeps, every capture in the tier
# its age says, forensic and pinned captures whole and readable.
. "$(dirname "$0")/lib.sh"
fresh_db cli_retention_kill
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_retention_kill
rm -rf "$T" && mkdir -p "$T"
AT=2026-06-01T00:00:00Z
N=${RETENTION_KILL_CAPTURES:-3000}

# Small batches make a run long enough to kill in the middle.
cat >"$T/profreg.json" <<'JSON'
{"retention": {"summary_top": 5, "batch": 10},
 "services": {"keep": {"retention": {"hot_days": 365, "summary_days": 400}}}}
JSON
P() { pr --config "$T/profreg.json" "$@"; }
for s in k keep; do pr --quiet service add $s && pr --quiet service enable $s; done

# Real captures: one pinned by hand, one the baseline of an open finding, both 150 days old.
for n in forensic baseline; do
	printf 'main;a 5\nmain;b 3\nmain;%s 1\n' "$n" >"$T/$n.folded"
	P --quiet ingest "$T/$n.folded" --service k --release r1 --time 2026-01-02T00:00:00Z
done
forensic=$(sql "select min(id) from profiles")
baseline=$(sql "select max(id) from profiles")
P --quiet capture pin "$forensic" --reason "kill test evidence"
sql "insert into findings (service_id, status) values ((select id from services where name='k'), 'open')" >/dev/null
sql "insert into capture_pins (profile_id, finding_id) values ($baseline, (select max(id) from findings))" >/dev/null

# Generated captures: a third 150 days old (to delete), the rest 10 to 60
# days (to summarise), every 10th one day old (hot). Every 20th shares its
# blob with a capture of service "keep", which keeps it hot.
sql "insert into functions (name, file) select 'gen_f' || g, 'gen.c' from generate_series(1, 30) g" >/dev/null
sql "insert into profiles (service_id, profile_type, release, captured_at, value_type, value_unit,
	total_value, sample_count, function_count, blob_key, format)
	select (select id from services where name='k'), 'cpu', 'r1',
		'$AT'::timestamptz - case when i % 10 = 0 then interval '1 day' when i % 3 = 0 then interval '150 days'
			else (10 + i % 50) * interval '1 day' end,
		'samples', 'count', 465, 465, 30, encode(sha256(('blob-' || i)::bytea), 'hex'), 'folded'
	from generate_series(1, $N) i" >/dev/null
sql "insert into profiles (service_id, profile_type, release, captured_at, value_type, value_unit,
	total_value, sample_count, function_count, blob_key, format)
	select (select id from services where name='keep'), 'cpu', 'r1', '$AT'::timestamptz - interval '30 days',
		'samples', 'count', 465, 465, 30, encode(sha256(('blob-' || i)::bytea), 'hex'), 'folded'
	from generate_series(20, $N, 20) i" >/dev/null
sql "insert into profile_vectors (profile_id, service_id, function_ids, self_values, total_values)
	select p.id, p.service_id, array_agg(f.id order by f.id),
		array_agg(substr(f.name, 6)::int order by f.id), array_agg(substr(f.name, 6)::int order by f.id)
	from profiles p cross join functions f where p.format = 'folded' and p.release = 'r1'
	and f.name like 'gen_f%' and p.id > $baseline group by p.id, p.service_id" >/dev/null
# Their blob files, as the local store lays them out.
sql "select distinct blob_key from profiles where id > $baseline" >"$T/keys"
while read -r k; do
	d=$HOME_DIR/blobs/sha256/${k:0:2}
	[ -d "$d" ] || mkdir -p "$d"
	printf 'x' >"$d/${k:2}.zst"
done <"$T/keys"
total=$(sql "select count(*) from profiles")
ok "generated $total captures with $(wc -l <"$T/keys") blob files"

# live_missing: captures that keep a blob whose file is gone (must always be 0).
live_missing() {
	sql "select distinct blob_key from profiles where blob_deleted_at is null" |
		while read -r k; do [ -f "$HOME_DIR/blobs/sha256/${k:0:2}/${k:2}.zst" ] || echo "$k"; done | wc -l
}
# unreferenced: blob files no capture keeps.
unreferenced() {
	comm -23 <(find "$HOME_DIR/blobs/sha256" -name '*.zst' ! -name '*.tmp.*' | sed 's|.*/\(..\)/\(.*\)\.zst$|\1\2|' | sort) \
		<(sql "select distinct blob_key from profiles where blob_deleted_at is null" | sort) | wc -l
}
moved() { sql "select $total - count(*) + count(*) filter (where retention_class = 'summary') from profiles"; }

mid=0
for point in 1 2 3; do
	before=$(moved)
	# exec: the pid is profreg's own, not a subshell's.
	(exec "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/profreg.json" --quiet \
		retention --at "$AT" >/dev/null 2>&1) &
	pid=$!
	# Kill once some batches have committed since this run started.
	for _ in $(seq 1 500); do
		[ "$(moved)" -ge $((before + 40 * point)) ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.02
	done
	if kill -9 $pid 2>/dev/null; then
		wait $pid 2>/dev/null
		now=$(moved)
		[ "$now" -gt "$before" ] && mid=$((mid + 1))
		echo "# kill $point after $((now - before)) captures moved"
	else
		wait $pid 2>/dev/null
		echo "# run $point finished before it could be killed"
	fi
	[ "$(live_missing)" = 0 ] && ok "after kill $point no capture points at a missing blob" || not_ok "dangling after kill $point" "$(live_missing) missing"
done
[ "$mid" -ge 2 ] && ok "at least two runs were killed in the middle ($mid)" || not_ok "kills landed mid-run: $mid (machine too fast? raise RETENTION_KILL_CAPTURES)"

run P retention --at "$AT" --json
[ $RC -eq 0 ] && ok "the run after the kills completes" || not_ok "final run" "rc=$RC $ERR"
[ "$(live_missing)" = 0 ] && ok "no capture points at a missing blob" || not_ok "dangling" "$(live_missing)"
[ "$(unreferenced)" = 0 ] && ok "no blob file is left that nothing keeps" || not_ok "orphans left" "$(unreferenced)"
[ "$(sql "select count(*) from blob_sweep")" = 0 ] && ok "the sweep queue is empty" || not_ok "queue"
exp_deleted=$(sql "select count(*) from generate_series(1, $N) i where i % 10 <> 0 and i % 3 = 0")
exp_summary=$(sql "select count(*) from generate_series(1, $N) i where i % 10 <> 0 and i % 3 <> 0")
exp_hot=$(sql "select count(*) from generate_series(1, $N) i where i % 10 = 0")
[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'k' and p.id > $baseline")" = $((exp_summary + exp_hot)) ] && ok "every capture past summary_days is deleted, once ($exp_deleted)" || not_ok "deleted count"
[ "$(sql "select count(*) from profiles where retention_class = 'summary'")" = "$exp_summary" ] && ok "every capture past hot_days is summary ($exp_summary)" || not_ok "summary count" "$(sql "select count(*) from profiles where retention_class = 'summary'") want $exp_summary"
[ "$(sql "select count(*) from profiles where retention_class = 'hot' and id > $baseline")" = $((exp_hot + N / 20)) ] && ok "the young and the other service's captures are hot" || not_ok "hot count"
[ "$(sql "select count(*) from (select profile_id from profile_functions pf join profiles p on p.id = pf.profile_id where p.retention_class = 'summary' group by 1 having count(*) <> 6 or sum(pf.self_value) <> 465) x")" = 0 ] && ok "every summary capture has exactly its top 5 and (other), adding up" || not_ok "summary rows"
[ "$(sql "select count(*) from runs where kind = 'retention' and status = 'interrupted'")" -ge "$mid" ] && [ "$(sql "select count(*) from runs where kind = 'retention' and status = 'running'")" = 0 ] && ok "killed runs are marked interrupted" || not_ok "interrupted runs"
for c in $forensic $baseline; do
	run P profile "$c" --json
	[ $RC -eq 0 ] && [ "$(sql "select count(*) from profile_functions where profile_id = $c")" = 4 ] && [ "$(sql "select retention_class from profiles where id = $c")" != summary ] || { not_ok "capture $c damaged" "rc=$RC $ERR"; continue; }
	ok "protected capture $c is whole and its blob reads back"
done
run P retention --at "$AT" --json
grep -q '"to_summary": 0' <<<"$OUT" && grep -q '"deleted": 0' <<<"$OUT" && ok "one more run finds nothing to do" || not_ok "stable" "$OUT"
finish
