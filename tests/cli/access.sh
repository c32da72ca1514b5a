#!/bin/bash
# Access control that PostgreSQL enforces: three login roles (team A,
# team B, team A with the heap permission) and an admin job role on one
# database. As each role, hand-written SELECTs on every protected table
# return none of the other team's rows; commands are allowed or refused
# (a heap profile read whole without the heap permission is exit 4 in one
# line); every view and download leaves an audit row the database wrote
# with the role, the OS user, the command and the captures; audit rows
# cannot be changed or deleted by anyone but the schema owner.
. "$(dirname "$0")/lib.sh"
fresh_db cli_access
T=$PROFREG_TEST_TMP/cli_access
rm -rf "$T" && mkdir -p "$T" && chmod 755 "$T"
A=cli_access_a
B=cli_access_b
AH=cli_access_ah
JOB=cli_access_job
for r in $A $B $AH $JOB; do
	psql "$PROFREG_TEST_DB" -qAt -c "DROP OWNED BY $r" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "CREATE ROLE $r LOGIN" >/dev/null
done
# as ROLE CMD...: profreg connected as ROLE (same blob store: profreg's identity).
as() {
	local role=$1
	shift
	"$PROFREG_BIN" --db "$DB user=$role" --home "$HOME_DIR" "$@"
}
# sql_as ROLE SQL: psql as ROLE; the first column of the first row, or the error.
sql_as() {
	psql "$DB user=$1" -qAt -v ON_ERROR_STOP=1 -c "$2" 2>&1
}

# The owner (the private cluster's single user in the embedded default) sets up.
pr db init >/dev/null
for s in pay:ta shop:tb; do
	pr service add "${s%%:*}" --team "${s##*:}" >/dev/null
	pr service enable "${s%%:*}" >/dev/null
done
printf 'main;pay_cpu_secret 5\nmain;pay_other 3\n' >"$T/pay.folded"
printf 'main;pay_heap_secret 9\nmain;pay_other 1\n' >"$T/payheap.folded"
printf 'main;shop_cpu_secret 4\nmain;shop_other 2\n' >"$T/shop.folded"
printf 'main;shop_heap_secret 4\n' >"$T/shopheap.folded"
pr ingest "$T/pay.folded" --service pay --release r1 >/dev/null
pr ingest "$T/payheap.folded" --service pay --release r1 --type heap >/dev/null
pr ingest "$T/shop.folded" --service shop --release r1 >/dev/null
pr ingest "$T/shopheap.folded" --service shop --release r1 --type heap >/dev/null
PAY=$(sql "select p.id from profiles p join services s on s.id = p.service_id
	where s.name = 'pay' and p.profile_type = 'cpu'")
PAYHEAP=$(sql "select p.id from profiles p join services s on s.id = p.service_id
	where s.name = 'pay' and p.profile_type = 'heap'")
SHOP=$(sql "select p.id from profiles p join services s on s.id = p.service_id
	where s.name = 'shop' and p.profile_type = 'cpu'")
SHOPID=$(sql "select id from services where name = 'shop'")
PAYID=$(sql "select id from services where name = 'pay'")
# Service data in every table with a service: a deploy, a finding, its
# state, look, run row and pin, a page, an incident, a collect slot, a
# baseline, a snapshot, for each team.
for sid in $PAYID $SHOPID; do
	sql "insert into deploys (service_id, release) values ($sid, 'r1');
	     insert into runs (kind, service_id) values ('nightly', $sid);
	     insert into findings (service_id, run_id, profile_type, function)
		values ($sid, (select max(id) from runs), 'cpu', 'f$sid');
	     insert into run_findings select run_id, id from findings where service_id = $sid;
	     insert into finding_states (finding_id, state)
		select id, 'confirmed' from findings where service_id = $sid;
	     insert into finding_looks (finding_id, look, analysed_at, significant)
		select id, 1, now(), true from findings where service_id = $sid;
	     insert into finding_groups (service_id, profile_type, release, reason)
		values ($sid, 'cpu', 'r1', 'x');
	     insert into capture_pins select p.id, f.id from profiles p, findings f
		where p.service_id = $sid and f.service_id = $sid;
	     insert into pages (service_id, dedup_key) values ($sid, 'k$sid');
	     insert into incidents (service_id) values ($sid);
	     insert into collect_slots (service_id, source, target, profile_type, slot_start,
		slot_end, outcome) values ($sid, 's', 't', 'cpu', now(), now(), 'empty');
	     insert into baselines (service_id, profile_type) values ($sid, 'cpu');
	     insert into baseline_vectors select b.id, 1, f.ids, f.z, f.z, f.z, f.z, f.z, f.z,
		f.z, f.z from baselines b, (select array_agg(d.fid) as ids,
		array_agg(0::float8) as z from (select distinct pf.function_id as fid
		from profile_functions pf where pf.service_id = $sid) d) f
		where b.service_id = $sid and f.ids is not null;
	     insert into snapshots (host, taken_at, service, blob_key, archive_bytes, manifest,
		stored_by) select 'h', now(), name, lpad(to_hex(id), 64, 'a'), 1, '{}', 'x'
		from services where id = $sid;" >/dev/null
done

# One nightly over both teams: a heap regression of pay with its captures,
# a CPU one of shop; pay skipped, shop failed.
HEAPFN=$(sql "select id from functions where name = 'pay_heap_secret'")
RUN=$(sql "insert into runs (kind, detail) values ('nightly', '{\"services\": {
	\"pay\": {\"status\": \"skipped\", \"reason\": \"few captures\"},
	\"shop\": {\"status\": \"failed\", \"reason\": \"shop-failure-reason\"}}}')
	returning id")
sql "update findings set profile_type = 'heap', direction = 'regression', function = 'pay_heap_secret',
	function_id = $HEAPFN, detail = '{\"captures\": {\"baseline\": [$PAYHEAP], \"current\": [$PAYHEAP]}}'
	where service_id = $PAYID;
     update findings set direction = 'regression', function = 'shop_cpu_secret' where service_id = $SHOPID;
     insert into run_findings (run_id, finding_id) select $RUN, id from findings" >/dev/null
PAYF=$(sql "select id from findings where service_id = $PAYID")

run pr access grant $A --team ta
[ $RC -eq 0 ] && grep -q "role '$A' sees team 'ta'" <<<"$OUT" && ok "access grant" ||
	not_ok "access grant" "rc $RC" "$OUT" "$ERR"
pr access grant $AH --team ta --heap >/dev/null
pr access grant $B --team tb >/dev/null
pr access grant $JOB --admin >/dev/null
# The grants themselves: a team role reads its own, an admin role every one.
[ "$(sql_as $B "select string_agg(role || ':' || team, ',') from access_grants")" = "$B:tb" ] &&
	ok "a team role reads only its own grant" ||
	not_ok "grants seen by B" "$(sql_as $B "select string_agg(role, ',') from access_grants")"
[ "$(sql_as $B "select count(*) from access_grants where admin or heap")" = 0 ] &&
	ok "a team role cannot find the admin and heap grants" || not_ok "grants B admin"
[ "$(sql_as $JOB "select count(*) from access_grants")" = 4 ] &&
	ok "an admin role reads every grant" || not_ok "grants seen by admin" \
	"$(sql_as $JOB "select count(*) from access_grants")"
run as $B access list --json
[ $RC -eq 0 ] && [[ $OUT == *"$B"* ]] && [[ $OUT != *"$A"* ]] && [[ $OUT != *"$JOB"* ]] &&
	ok "access list as a team role shows its own grant only" ||
	not_ok "access list as B" "rc $RC" "$OUT" "$ERR"
[[ $(sql_as $B "select profreg_grants_admin('$JOB')") == f* ]] &&
	ok "a team role cannot ask whether another role is an admin" ||
	not_ok "grants_admin probe" "$(sql_as $B "select profreg_grants_admin('$JOB')")"
[[ $(sql_as $B "insert into access_grants (role, team) values ('$B', 'ta')") == *"denied"* ||
   $(sql_as $B "select count(*) from access_grants where team = 'ta'") = 0 ]] &&
	ok "a team role cannot grant itself another team" || not_ok "self grant"

run pr access grant cli_access_nobody --team ta
[ $RC -eq 4 ] && grep -q 'CREATE ROLE' <<<"$ERR" && [ "$(wc -l <<<"$ERR")" -eq 1 ] &&
	ok "a grant to a role that does not exist says how to create it" ||
	not_ok "grant unknown role" "rc $RC" "$ERR"
run pr access grant 'no"body' --team ta
[ $RC -eq 4 ] && [[ $ERR == *"(create it first: CREATE ROLE \"no\"\"body\" LOGIN)" ]] &&
	ok "the CREATE ROLE it suggests doubles a quote in the name" || not_ok "create role quote" "rc $RC" "$ERR"
run pr access grant $A
[ $RC -eq 2 ] && ok "a grant without --team or --admin is a usage error" || not_ok "no team" "rc $RC"
run pr access list --json
[ $RC -eq 0 ] && [ "$(jq '.grants | length' <<<"$OUT")" -eq 4 ] &&
	[ "$(jq -r ".grants[] | select(.role == \"$AH\") | .heap" <<<"$OUT")" = true ] &&
	[ "$(jq -r ".grants[] | select(.role == \"$A\") | .heap" <<<"$OUT")" = false ] &&
	[ "$(jq -r ".grants[] | select(.role == \"$JOB\") | .admin" <<<"$OUT")" = true ] &&
	ok "access list --json" || not_ok "access list" "$OUT" "$ERR"
run pr access list
[ $RC -eq 0 ] && grep -q "^ROLE" <<<"$OUT" && grep -q "$AH" <<<"$OUT" && ok "access list" ||
	not_ok "access list table" "$OUT"

# Every table that holds a service's data has row-level security: a table
# added later without a policy fails here.
missing=$(sql "select string_agg(c.relname, ' ') from pg_class c
	join pg_namespace n on n.oid = c.relnamespace
	where c.relkind = 'r' and n.nspname = current_schema() and not c.relrowsecurity
	and (exists (select 1 from pg_attribute a where a.attrelid = c.oid and not a.attisdropped
		     and a.attname in ('service_id', 'service', 'profile_id', 'finding_id',
				       'baseline_id', 'capture_id'))
	     or c.relname in ('functions', 'blob_sweep', 'audit_log'))")
[ -z "$missing" ] && ok "row-level security on every table with service data" ||
	not_ok "tables without row security" "$missing"

# SQL level: a hand-written select as team A's role sees none of team B's rows.
PROTECTED="profiles profile_functions service_functions baselines findings deploys pages incidents collect_slots
	finding_groups runs"
bad=""
for t in $PROTECTED; do
	own=$(sql "select count(*) from $t where service_id = $PAYID")
	[ "$(sql_as $A "select count(*) from $t where service_id = $SHOPID")" = 0 ] &&
		[ "$(sql_as $A "select count(*) from $t where service_id is not null")" = "$own" ] &&
		[ "$(sql_as $B "select count(*) from $t where service_id = $PAYID")" = 0 ] &&
		[ "$own" -gt 0 ] || bad="$bad $t"
done
[ -z "$bad" ] && ok "as team A, select * from each service table returns only team A's rows" ||
	not_ok "rows leak" "$bad"
out=$(sql_as $A "select string_agg(name, ',' order by name) from services")
[ "$out" = pay ] && ok "team A sees only its service" || not_ok "services" "$out"
out=$(sql_as $A "select string_agg(name, ',' order by name) from functions where name like '%secret'")
[ "$out" = "pay_cpu_secret,pay_heap_secret" ] &&
	ok "function names of team B's captures are hidden" || not_ok "functions" "$out"
# Retention's "(other functions)" is a label, not a name from a profile:
# a team role that cannot see it cannot analyse a capture cut to summary.
out=$(sql_as $A "select string_agg(name, ',') from functions where synthetic")
[ -n "$out" ] && [ "$out" = "$(sql "select string_agg(name, ',') from functions where synthetic")" ] &&
	ok "every role sees the synthetic functions" || not_ok "synthetic functions" "$out"
bad=""
for t in run_findings finding_states finding_looks; do
	[ "$(sql_as $A "select count(*) from $t x join findings f on f.id = x.finding_id
		where f.service_id = $SHOPID")" = 0 ] &&
		[ "$(sql_as $A "select count(*) from $t")" = \
		  "$(sql "select count(*) from $t x join findings f on f.id = x.finding_id
			where f.service_id = $PAYID")" ] || bad="$bad $t"
done
[ "$(sql_as $A "select count(*) from capture_pins")" = \
  "$(sql "select count(*) from capture_pins p join profiles c on c.id = p.profile_id
	where c.service_id = $PAYID")" ] || bad="$bad capture_pins"
[ "$(sql_as $A "select count(*) from baseline_functions")" = \
  "$(sql "select count(*) from baseline_functions x join baselines b on b.id = x.baseline_id
	where b.service_id = $PAYID")" ] || bad="$bad baseline_functions"
[ "$(sql_as $A "select string_agg(service, ',') from snapshots")" = pay ] || bad="$bad snapshots"
[ "$(sql_as $A "select count(*) from blob_sweep")" = 0 ] || bad="$bad blob_sweep"
[ -z "$bad" ] && ok "tables reached through a finding, capture or baseline are filtered too" ||
	not_ok "indirect rows leak" "$bad"
[ "$(sql_as $JOB "select count(*) from profiles")" = "$(sql "select count(*) from profiles")" ] &&
	ok "an admin role sees every service" || not_ok "admin sees all"
out=$(sql_as $A "insert into deploys (service_id, release) values ($PAYID, 'x')")
grep -q 'permission denied' <<<"$out" && ok "a team role cannot write" || not_ok "team write" "$out"
out=$(sql_as $A "select profreg_read('capture.read', array[$PAY], true, null, '$B')")
grep -q 'cannot read as' <<<"$out" && ok "a role cannot have its reads audited as another" ||
	not_ok "read as another" "$out"

# Commands, as each role.
run as $A profiles list --json
[ $RC -eq 0 ] && [ "$(jq -r '[.captures[].service] | unique | join(",")' <<<"$OUT")" = pay ] &&
	ok "profiles list as team A lists team A's captures" || not_ok "profiles list" "$OUT" "$ERR"
run as $A service list --json
[ $RC -eq 0 ] && [ "$(jq -r '[.services[].name] | join(",")' <<<"$OUT")" = pay ] &&
	ok "service list as team A" || not_ok "service list" "$OUT" "$ERR"
run as $A profiles list --service shop
[ $RC -eq 4 ] && grep -q "service 'shop' not found" <<<"$ERR" &&
	ok "team B's service does not exist for team A" || not_ok "list shop" "rc $RC" "$ERR"
run as $A profile show "$PAYHEAP" --json
[ $RC -eq 0 ] && [ "$(jq -r '.top[0].name' <<<"$OUT")" = pay_heap_secret ] &&
	ok "team A sees the per-function rows of its heap capture" || not_ok "show heap" "$OUT" "$ERR"
run as $A profile show "$SHOP"
[ $RC -eq 4 ] && [ "$ERR" = "profreg profile: capture $SHOP not found" ] &&
	ok "team B's capture is not found for team A (exit 4)" || not_ok "show shop" "rc $RC" "$ERR"
run as $A export "$PAY" --format folded --out "$T/pay.out"
[ $RC -eq 0 ] && grep -q pay_cpu_secret "$T/pay.out" && ok "team A exports its CPU capture" ||
	not_ok "export cpu" "rc $RC" "$ERR"
run as $A export "$PAYHEAP" --format folded --out "$T/heap.out"
[ $RC -eq 4 ] && [ "$(wc -l <<<"$ERR")" -eq 1 ] && grep -q 'needs the heap permission' <<<"$ERR" &&
	[ ! -e "$T/heap.out" ] &&
	ok "a heap capture read whole without the heap permission: one line, exit 4" ||
	not_ok "export heap refused" "rc $RC" "$ERR"
run as $AH export "$PAYHEAP" --format folded --out "$T/heap.out"
[ $RC -eq 0 ] && grep -q pay_heap_secret "$T/heap.out" &&
	ok "with the heap permission the heap capture exports" || not_ok "export heap" "rc $RC" "$ERR"
run as $AH export "$SHOP" --format folded --out "$T/shop.out"
[ $RC -eq 4 ] && [ "$ERR" = "profreg export: capture $SHOP not found" ] &&
	ok "the heap permission is per team" || not_ok "heap other team" "rc $RC" "$ERR"
run as $A diff --base "id=$PAY" --target "id=$SHOP" --out "$T/d.html"
[ $RC -eq 4 ] && grep -q 'matches no capture\|not found' <<<"$ERR" &&
	ok "diff against team B's capture is refused" || not_ok "diff" "rc $RC" "$ERR"
run as $B diff --base "id=$SHOP" --target "id=$SHOP" --out "$T/d.html"
[ $RC -eq 0 ] && ok "team B diffs its own captures" || not_ok "diff own" "rc $RC" "$ERR"
printf 'main;pay_new 1\n' >"$T/pay2.folded"
run as $A ingest "$T/pay2.folded" --service pay --release r2
[ $RC -ne 0 ] && [ "$(sql "select count(*) from profiles where release = 'r2'")" = 0 ] &&
	ok "a team role cannot ingest" || not_ok "team ingest" "rc $RC" "$OUT"
printf 'main;shop_new 3\n' >"$T/shop2.folded"
run as $JOB ingest "$T/shop2.folded" --service shop --release r2 --host other
[ $RC -eq 0 ] && [ "$(sql "select count(*) from profiles where release = 'r2'")" = 1 ] &&
	[ "$(sql "select count(*) from profile_vectors v join profiles p on p.id = v.profile_id
		where p.release = 'r2'")" = 1 ] &&
	ok "an admin job role ingests, its function rows too (under row security)" ||
	not_ok "admin ingest" "rc $RC" "$ERR"

# Audit: the rows the database wrote for those reads.
arow() { sql "select $1 from audit_log where db_role = '$2' and action = '$3' order by id desc limit 1"; }
[ "$(arow "detail->>'refused'" $A capture.export)" = heap ] &&
	[ "$(arow "capture_ids::text" $A capture.export)" = "{$PAYHEAP}" ] &&
	[ "$(arow command $A capture.export)" = "profreg export" ] &&
	[ "$(arow actor $A capture.export)" = "$(id -un)" ] &&
	[ "$(arow session_role $A capture.export)" = $A ] &&
	[ -n "$(arow client_host $A capture.export)" ] &&
	ok "a refused export is audited: role, OS user, command, capture, host" ||
	not_ok "audit refused" "$(sql "select * from audit_log where db_role = '$A'")"
[ "$(sql "select count(*) from audit_log where db_role = '$AH' and action = 'capture.export'
	and capture_ids = array[$PAYHEAP::bigint] and not detail ? 'refused'")" = 1 ] &&
	ok "an allowed heap export is audited" || not_ok "audit heap export"
[ "$(sql "select count(*) from audit_log where db_role = '$A' and action = 'capture.show'")" = 2 ] &&
	[ "$(sql "select count(*) from audit_log where db_role = '$B' and action = 'capture.diff'")" = 2 ] &&
	ok "profile show and diff are audited" || not_ok "audit show/diff"
[ "$(sql "select count(*) from audit_log where db_role = '$AH' and action = 'capture.export'
	and capture_ids = array[$SHOP::bigint] and detail->>'refused' = 'not_found'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where db_role = '$A' and action = 'capture.diff'
	and capture_ids = array[$SHOP::bigint] and detail->>'refused' = 'not_found'")" = 1 ] &&
	ok "an export or diff of another team's capture by id is audited as refused" ||
	not_ok "audit refused by id" "$(sql "select db_role, action, capture_ids, detail
		from audit_log where action in ('capture.export', 'capture.diff')")"
run pr audit list --role $A --json
[ $RC -eq 0 ] && [ "$(jq '[.audit[] | select(.db_role != "'$A'")] | length' <<<"$OUT")" = 0 ] &&
	[ "$(jq '[.audit[] | select(.action == "capture.export")] | length' <<<"$OUT")" = 2 ] &&
	ok "audit list --role" || not_ok "audit list --role" "$OUT" "$ERR"
# Capture ids are exactly those captures: another team's among them is refused
# in the words of one that does not exist.
run as $A export "id=$PAY,99999999" --format folded --out "$T/mixed.out"
missing=${ERR//99999999/$SHOP}
run as $A export "id=$PAY,$SHOP" --format folded --out "$T/mixed.out"
[ $RC -eq 4 ] && [ "$ERR" = "profreg export: capture $SHOP not found" ] && [ "$ERR" = "$missing" ] &&
	[ ! -e "$T/mixed.out" ] &&
	ok "ids with one of team B's captures: exit 4, in the words of a missing one" ||
	not_ok "export ids with B's" "rc $RC" "$ERR" "$missing"
run pr audit list --capture "$PAYHEAP" --json
[ $RC -eq 0 ] && [ "$(jq '.audit | length' <<<"$OUT")" -ge 3 ] &&
	[ "$(jq "[.audit[] | select(.capture_ids | index($PAYHEAP) | not)] | length" <<<"$OUT")" = 0 ] &&
	ok "audit list --capture" || not_ok "audit list --capture" "$OUT" "$ERR"
run pr audit list --since 1h
[ $RC -eq 0 ] && grep -q refused <<<"$OUT" && grep -q '^TIME' <<<"$OUT" &&
	ok "audit list as a table" || not_ok "audit list table" "$OUT" "$ERR"
run as $A audit list --json
[ $RC -eq 0 ] && [ "$(jq '[.audit[] | select(.db_role != "'$A'")] | length' <<<"$OUT")" = 0 ] &&
	[ "$(jq '.audit | length' <<<"$OUT")" -gt 0 ] &&
	ok "a team role sees only its own audit rows" || not_ok "team audit list" "$OUT" "$ERR"
out=$(sql_as $A "update audit_log set action = 'x'")
out2=$(sql_as $A "delete from audit_log")
grep -q 'permission denied' <<<"$out" && grep -q 'permission denied' <<<"$out2" &&
	ok "a team role cannot change or delete audit rows" || not_ok "team audit change" "$out $out2"
out=$(sql_as $JOB "update audit_log set action = 'x'")
out2=$(sql_as $JOB "delete from audit_log")
grep -q 'audit rows cannot be changed or deleted' <<<"$out" &&
	grep -q 'audit rows cannot be changed or deleted' <<<"$out2" &&
	ok "an admin job role cannot change or delete audit rows either" ||
	not_ok "admin audit change" "$out $out2"
out=$(sql_as $JOB "insert into audit_log (actor, action, object, db_role) values ('x', 'y', 'z', '$A')
	returning db_role")
[ "$out" = $JOB ] && ok "an audit row cannot be written in another role's name" ||
	not_ok "forged role" "$out"

# Snapshots: extract needs the team's heap permission.
SNAPPAY=$(sql "select id from snapshots where service = 'pay'")
SNAPSHOP=$(sql "select id from snapshots where service = 'shop'")
run as $A snapshot extract "$SNAPPAY" --out "$T/s.tar.zst"
[ $RC -eq 4 ] && grep -q 'needs the heap permission' <<<"$ERR" &&
	ok "snapshot extract without the heap permission: exit 4" || not_ok "snap A" "rc $RC" "$ERR"
run as $AH snapshot extract "$SNAPSHOP" --out "$T/s.tar.zst"
[ $RC -eq 4 ] && grep -q "snapshot $SNAPSHOP not found" <<<"$ERR" &&
	ok "team B's snapshot is not found for team A" || not_ok "snap AH shop" "rc $RC" "$ERR"
run as $AH snapshot extract "$SNAPPAY" --out "$T/s.tar.zst"
# The row was made by hand without an archive: allowed, then the blob is missing.
[ $RC -ne 0 ] && grep -q "blob '.*' not found" <<<"$ERR" &&
	[ "$(sql "select count(*) from audit_log where db_role = '$AH' and action = 'snapshot.extract'
		and object = 'snapshot:$SNAPPAY' and not detail ? 'refused'")" = 1 ] &&
	ok "with the heap permission the extract is allowed and audited" ||
	not_ok "snap AH" "rc $RC" "$ERR"

# Reports: per team, and as each role.
run pr report --run "$RUN" --team ta --format json --out -
[ $RC -eq 0 ] && [ "$(jq -r '[.findings[].service] | unique | join(",")' <<<"$OUT")" = pay ] &&
	! grep -q 'shop' <<<"$OUT" && ok "report --team names only that team's services" ||
	not_ok "report --team" "rc $RC" "$ERR" "$(head -c 600 <<<"$OUT")"
run pr report --run "$RUN" --team tb --format md --out -
[ $RC -eq 0 ] && grep -q 'shop\\_cpu\\_secret' <<<"$OUT" && grep -q shop-failure-reason <<<"$OUT" &&
	! grep -q 'pay' <<<"$OUT" && ok "team B's report keeps its failure, names no pay" ||
	not_ok "report --team tb" "rc $RC" "$ERR" "$(head -c 600 <<<"$OUT")"
run pr report --run "$RUN" --team ta
[ $RC -eq 0 ] && [[ $OUT == "$HOME_DIR/reports/run-$RUN-"*"-team-ta.html" ]] && [ -s "$OUT" ] &&
	[ -s "${OUT%.html}.json" ] && ok "report --team writes run-ID-team-T files" ||
	not_ok "report --team files" "$OUT" "$ERR"
# A team with no services is a typo or another team's, never an all-clear.
sql "insert into services (name, team, enabled) values ('ledger', 'payments', true)" >/dev/null
run pr report --run "$RUN" --team paymnts --format md --out -
[ $RC -eq 4 ] && [ "$ERR" = "profreg report: team 'paymnts' has no services (did you mean 'payments'?)" ] &&
	[ -z "$OUT" ] && ok "report --team with a typo is exit 4 with the close name" ||
	not_ok "team typo" "rc $RC" "$ERR" "$(head -c 300 <<<"$OUT")"
run as $B report --run "$RUN" --team tq --format md --out -
unknown=${ERR//tq/ta}
run as $B report --run "$RUN" --team ta --format md --out -
[ $RC -eq 4 ] && [[ $ERR == "profreg report: team 'ta' has no services"* ]] && [ "$ERR" = "$unknown" ] &&
	ok "a team the role cannot see is answered the same way" || not_ok "team unseen" "rc $RC" "$ERR"
# The team report is for the team's own roles, who read runs without its detail.
run as $B report --run "$RUN" --team tb --format md --out -
[ $RC -eq 0 ] && grep -q 'shop\\_cpu\\_secret' <<<"$OUT" && grep -q shop-failure-reason <<<"$OUT" &&
	! grep -q 'pay' <<<"$OUT" && ok "team B's role writes its team's report of a shared run" ||
	not_ok "report --team as B" "rc $RC" "$ERR" "$(head -c 600 <<<"$OUT")"
BLOBRUN=$(sql "insert into runs (kind, status) values ('blobs-check', 'ok') returning id")
run pr report --run "$BLOBRUN" --team ta --format md --out -
[ $RC -eq 4 ] && [[ $ERR == *"run $BLOBRUN is a 'blobs-check' run: a team report is of a run that analysed services"* ]] &&
	ok "a team report of a run that analysed nothing is refused" || not_ok "blobs run" "rc $RC" "$ERR"
run as $A report --run "$RUN" --format md --out -
[ $RC -eq 0 ] && grep -q 'pay\\_heap\\_secret' <<<"$OUT" && ! grep -q 'shop' <<<"$OUT" &&
	ok "team A's report of a shared run names none of team B's services" ||
	not_ok "report as A" "rc $RC" "$ERR" "$(head -c 800 <<<"$OUT")"
run as $A report --finding "$PAYF" --format json --out -
[ $RC -eq 0 ] && [ "$(jq -r '.findings[0].function' <<<"$OUT")" = pay_heap_secret ] &&
	[ "$(jq '.findings[0].flame' <<<"$OUT")" = null ] &&
	as $A report --finding "$PAYF" --format html --out - | grep -q 'needs the heap permission' &&
	ok "a heap finding's report without the heap permission: numbers, no flame graph" ||
	not_ok "report heap finding as A" "rc $RC" "$ERR" "$(head -c 800 <<<"$OUT")"
run as $AH report --finding "$PAYF" --format json --out -
[ $RC -eq 0 ] && [ "$(jq '.findings[0].flame != null' <<<"$OUT")" = true ] &&
	ok "with the heap permission the flame graph is drawn" ||
	not_ok "report heap finding as AH" "rc $RC" "$ERR" "$(head -c 800 <<<"$OUT")"
run as $B report --finding "$PAYF" --format json --out -
[ $RC -eq 4 ] && grep -q "finding $PAYF not found" <<<"$ERR" &&
	ok "team A's finding is not found for team B" || not_ok "report as B" "rc $RC" "$ERR"
[ "$(sql "select count(*) from audit_log where db_role = '$A' and action = 'capture.flame'
	and detail->>'refused' = 'heap'")" -ge 1 ] &&
	[ "$(sql "select count(*) from audit_log where db_role = '$AH' and action = 'capture.flame'
	and not detail ? 'refused'")" = 1 ] &&
	ok "flame graphs are audited, refused or drawn" || not_ok "flame audit"
run as $A finding show "$PAYF"
[ "$(sql "select count(*) from audit_log where db_role = '$A' and action = 'finding.show'
	and object = 'finding:$PAYF' and capture_ids @> array[$PAYHEAP::bigint]")" = 1 ] &&
	ok "finding show is audited with its pinned captures" ||
	not_ok "finding show audit" "rc $RC" "$ERR"

# A run without a service is every team's, but its detail names each
# service it looked at: team B reads only its own services' part.
out=$(sql_as $B "select detail::text from runs where id = $RUN")
grep -q 'permission denied' <<<"$out" && ok "a team role cannot read runs.detail whole" ||
	not_ok "runs.detail as B" "$out"
out=$(sql_as $B "select profreg_run_detail($RUN)::text")
grep -q shop-failure-reason <<<"$out" && ! grep -q pay <<<"$out" &&
	ok "profreg_run_detail keeps team B's services only" || not_ok "run detail as B" "$out"
run as $B run "$RUN" --json
[ $RC -eq 0 ] && grep -q shop-failure-reason <<<"$OUT" && ! grep -q 'pay' <<<"$OUT" &&
	as $B runs list --json | grep -q "\"id\": $RUN" &&
	ok "run and runs list as team B name none of team A's services" ||
	not_ok "run as B" "rc $RC" "$ERR" "$(head -c 600 <<<"$OUT")"
# An analysis of one service is that service's run, as a post-deploy's:
# the other team does not see it, nor its finding count.
pr analyze --service shop --release r1 >/dev/null 2>&1
ANRUN=$(sql "select max(id) from runs where kind = 'analyze'")
seen() { as "$1" runs list --json | jq "[.. | objects | select(.id? == $ANRUN)] | length"; }
[ -n "$ANRUN" ] && [ "$(sql "select service_id from runs where id = $ANRUN")" = "$SHOPID" ] &&
	[ "$(seen $A)" = 0 ] && [ "$(seen $B)" = 1 ] &&
	ok "analyze --service of team B's service is listed to team B only" ||
	not_ok "analyze run's service" "run $ANRUN" "$(sql "select service_id from runs where id = $ANRUN")" \
		"A sees $(seen $A), B sees $(seen $B)"
run pr report --run "$ANRUN" --format json --out -
[ "$(jq -r .title <<<"$OUT")" = "profreg analyze run $ANRUN: shop" ] &&
	ok "its report is titled with the service, and no release it does not have" ||
	not_ok "analyze run title" "rc=$RC '$(jq -r .title <<<"$OUT")'"
run as $JOB run "$RUN" --json
[ $RC -eq 0 ] && grep -q 'few captures' <<<"$OUT" && grep -q shop-failure-reason <<<"$OUT" &&
	ok "an admin role reads a run's detail whole" || not_ok "run as admin" "rc $RC" "$ERR"

# A schema granted before migration 035 (the record of deletes in doubt):
# the admin role that runs retention may write it, a team role may not read
# its rows but may ask, through its function, whether a key is in doubt.
sql "drop function profreg_blob_delete_doubt(text[]); drop table blob_deletes;
	delete from schema_migrations where version = 35" >/dev/null
run pr db migrate
K=$(printf '%064d' 7)
[ $RC -eq 0 ] &&
	[ "$(sql_as $JOB "insert into blob_deletes values ('$K', now() + interval '1 hour') returning 1")" = 1 ] &&
	[ "$(sql_as $A "select count(*) from blob_deletes")" = 0 ] &&
	[ "$(sql_as $A "select blob_key from profreg_blob_delete_doubt(array['$K'])")" = "$K" ] &&
	ok "an upgrade to 035 gives the admin role the record of deletes, and a team role only its question" ||
	not_ok "035 upgrade grants" "rc $RC $ERR" "$(sql_as $A "select count(*) from blob_deletes")" "$(sql_as $A "select blob_key from profreg_blob_delete_doubt(array['$K'])")"
sql "delete from blob_deletes" >/dev/null

# Revoking takes the rows away.
run pr access revoke $A
[ $RC -eq 0 ] && grep -q 'removed 1 grant' <<<"$OUT" && ok "access revoke" || not_ok "revoke" "$ERR"
out=$(sql_as $A "select count(*) from profiles")
grep -q 'permission denied' <<<"$out" && ok "a revoked role reads nothing" || not_ok "revoked" "$out"
run pr access revoke $A
[ $RC -eq 4 ] && ok "revoking again is exit 4" || not_ok "revoke twice" "rc $RC"
run as $AH profiles list --json
[ $RC -eq 0 ] && [ "$(jq '.captures | length' <<<"$OUT")" = 2 ] &&
	ok "other roles of the team keep their grant" || not_ok "AH after revoke" "$OUT" "$ERR"

# A team whose every service the run skipped: its report says so, not "nothing moved".
sql "insert into services (name, team, enabled) values ('idle', 'tc', true)" >/dev/null
IDLERUN=$(sql "insert into runs (kind, detail) values ('nightly', '{\"services\": {
	\"idle\": {\"status\": \"skipped\", \"reason\": \"insufficient baseline\"},
	\"pay\": {\"status\": \"analysed\"}}}') returning id")
for fmt in md html; do
	run pr report --run "$IDLERUN" --team tc --format $fmt --out -
	[ $RC -eq 0 ] && grep -q "None of the team.*services was analysed" <<<"$OUT" &&
		! grep -q "self share moved" <<<"$OUT" &&
		ok "a team report ($fmt) whose services were all skipped says none was analysed" ||
		not_ok "team all skipped $fmt" "rc $RC" "$ERR" "$(head -c 600 <<<"$OUT")"
done
run pr report --run "$IDLERUN" --team ta --format md --out -
[ $RC -eq 0 ] && ! grep -q "None of the team's services" <<<"$OUT" &&
	ok "a team with an analysed service has no such note" ||
	not_ok "team analysed" "rc $RC" "$ERR" "$(head -c 600 <<<"$OUT")"

# Team names of the same length that are not ASCII: one file each, not one
# written over by the other.
sql "insert into services (name, team, enabled) values ('zhi', '支付', true), ('kyeol', '결제', true)" >/dev/null
TEAMRUN=$(sql "insert into runs (kind, detail) values ('nightly', '{\"services\": {
	\"zhi\": {\"status\": \"skipped\", \"reason\": \"insufficient baseline\"},
	\"kyeol\": {\"status\": \"skipped\", \"reason\": \"insufficient baseline\"}}}') returning id")
run pr report --run "$TEAMRUN" --team 支付
one=$OUT
run pr report --run "$TEAMRUN" --team 결제
[ $RC -eq 0 ] && [ -n "$one" ] && [ "$one" != "$OUT" ] && grep -q zhi "${one%.html}.md" &&
	grep -q kyeol "${OUT%.html}.md" && ! grep -q kyeol "${one%.html}.md" &&
	ok "two teams whose names differ only outside ASCII get a report file each" ||
	not_ok "team file names" "rc $RC" "$one" "$OUT" "$ERR"
# Names whose encoding passes a file name's 255 bytes are cut and told apart by a hash.
long1=$(printf '결제%.0s' {1..30})팀
long2=$(printf '결제%.0s' {1..30})부
sql "insert into services (name, team, enabled) values ('long1', '$long1', true), ('long2', '$long2', true)" >/dev/null
LONGRUN=$(sql "insert into runs (kind, detail) values ('nightly', '{\"services\": {
	\"long1\": {\"status\": \"skipped\", \"reason\": \"insufficient baseline\"},
	\"long2\": {\"status\": \"skipped\", \"reason\": \"insufficient baseline\"}}}') returning id")
run pr report --run "$LONGRUN" --team "$long1"
one=$OUT rc1=$RC
run pr report --run "$LONGRUN" --team "$long2"
[ $rc1 -eq 0 ] && [ $RC -eq 0 ] && [ "$one" != "$OUT" ] && [ "$(basename "$one" | wc -c)" -lt 200 ] &&
	grep -q long1 "${one%.html}.md" && grep -q long2 "${OUT%.html}.md" &&
	ok "team names too long for a file name are cut and kept apart" ||
	not_ok "long team names" "rc $rc1 $RC" "$one" "$OUT" "$ERR"

for r in $A $B $AH $JOB; do
	psql "$PROFREG_TEST_DB" -qAt -c "DROP DATABASE IF EXISTS cli_access" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1
done
finish
