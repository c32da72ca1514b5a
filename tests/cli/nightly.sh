#!/bin/bash
# The nightly job: services' drop folders collected, the night analysed in
# one run, the lock, an idempotent re-run, one broken service not
# stopping the others, and retention's reason for a non-zero exit said
# even under --quiet.
. "$(dirname "$0")/lib.sh"
fresh_db cli_nightly
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_nightly
rm -rf "$T" && mkdir -p "$T/drop"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 5 --functions 60 --factors 2 \
	--bands 1-10,10-30 --regressed 0.4 --seed 21 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")

# Each capture goes into its service's drop folder with a sidecar, its
# manifest line without path and service (one process for all of them).
python3 - "$T" <<'EOF'
import os, re, shutil, sys
t = sys.argv[1]
for line in open(t + '/fleet/manifest.jsonl'):
    line = line.rstrip('\n')
    path = re.search(r'"path":"([^"]*)"', line).group(1)
    svc = re.search(r'"service":"([^"]*)"', line).group(1)
    os.makedirs(f'{t}/drop/{svc}', exist_ok=True)
    dst = f'{t}/drop/{svc}/{os.path.basename(path)}'
    shutil.copyfile(f'{t}/fleet/{path}', dst)
    side = re.sub(r'"service":"[^"]*",', '', re.sub(r'"path":"[^"]*",', '', line, count=1), count=1)
    with open(dst + '.json', 'w') as f:
        f.write(side + '\n')
EOF
# A profile whose sidecar has not arrived yet is left for later.
printf 'main;x 1\n' >"$T/drop/svc-000/late.folded"

# svc-004's folder is missing: that service fails, the others go on.
{
	echo '{"services": {'
	for s in svc-000 svc-001 svc-002 svc-003; do echo "\"$s\": {\"team\": \"t\", \"source\": {\"dir\": \"$T/drop/$s\"}},"; done
	echo "\"svc-004\": {\"source\": {\"dir\": \"$T/drop/nosuch\"}},"
	echo '"ghost": {"types": ["cpu"]}'
	echo '}}'
} >"$T/profreg.json"
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"

run pr --config "$T/profreg.json" nightly --at "$at" --json
echo "$OUT" >"$T/n1.json"
[ $RC -eq 3 ] && [[ $ERR == *"service 'svc-004' failed"*"nosuch"* ]] &&
	ok "nightly analyses the others, then fails (exit 3) naming the broken service" || not_ok "nightly exit" "rc=$RC $ERR"
[ "$(sql "select count(*) from profiles")" = $(( $(grep -c . "$T/fleet/manifest.jsonl") - $(grep -c '"service":"svc-004"' "$T/fleet/manifest.jsonl") )) ] && ok "every capture with a sidecar is collected" || not_ok "collected count"
grep -q '"status": "failed"' "$T/n1.json" && grep -q 'nosuch' "$T/n1.json" && ok "the broken service is reported with its reason" || not_ok "failed service" "$OUT"
grep -q '"ghost"' "$T/n1.json" && grep -q 'not registered' "$T/n1.json" && ok "a configured but unregistered service is reported" || not_ok "ghost"
grep -q '"waiting": 1' "$T/n1.json" && ok "a file without its sidecar waits" || not_ok "waiting"
missed=0
while IFS= read -r line; do
	svc=$(sed 's/.*"service":"\([^"]*\)".*/\1/' <<<"$line")
	[ "$svc" = svc-004 ] && continue
	fn=$(sed 's/.*"function":"\([^"]*\)".*/\1/' <<<"$line")
	grep -q "\"function\": \"$fn\"" "$T/n1.json" || missed=$((missed + 1))
done < <(grep '"regressed":true' "$T/fleet/truth.jsonl")
nreg=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | grep -vc '"service":"svc-004"')
[ "$missed" = 0 ] && [ "$nreg" -ge 1 ] && ok "the night's injected regressions are found ($nreg)" || not_ok "nightly missed $missed"
[ "$(sql "select count(*) from runs where kind='nightly' and status='incomplete'")" = 1 ] && ok "the run is recorded as incomplete" || not_ok "run record"
rid1=$(sql "select max(id) from runs where kind='nightly'")
report=$(sed -n 's/^  "report": "\(.*\)",*$/\1/p' "$T/n1.json")
[[ $report == "$HOME_DIR/reports/run-$rid1-"*.html ]] && [ -s "$report" ] && [ -s "${report%.html}.md" ] && [ -s "${report%.html}.json" ] &&
	ok "the night's HTML, Markdown and JSON reports are written under the state directory" || not_ok "nightly report" "report=$report"
jq -e '.skipped | map(select(startswith("ghost: "))) | length == 1' "${report%.html}.json" >/dev/null &&
	grep -q 'Skipped (not analysed)' "$report" && ok "the report lists the skipped services with their reasons" || not_ok "skipped in report"
fid1=$(sql "select id from findings where direction='regression' order by id limit 1")
grep -q "id=\"finding-$fid1\"" "$report" 2>/dev/null && ok "each finding has its anchor in the night's report" || not_ok "report anchor"
nf=$(sql "select count(*) from findings")
np=$(sql "select count(*) from profiles")
nreg_found=$(sql "select count(*) from findings where direction='regression'")
[ "$(sql "select count(*) from profiles where retention_class='forensic' and tags ? 'finding'")" -ge "$nreg_found" ] && [ "$nreg_found" -ge 1 ] && ok "a regression's current captures become forensic, tagged with the finding" || not_ok "forensic captures"
[ "$(sql "select count(*) from capture_pins")" -ge 8 ] && ok "its baseline captures are pinned" || not_ok "pins"
npin=$(sql "select count(*) from audit_log where action='pin'")
[ "$npin" = "$nreg_found" ] && ok "an audit row records each pinning" || not_ok "pin audit" "pins=$npin regressions=$nreg_found"

run pr --config "$T/profreg.json" nightly --at "$at" --json
[ $RC -eq 3 ] && [ "$(sql "select count(*) from findings")" = "$nf" ] && [ "$(sql "select count(*) from profiles")" = "$np" ] && ok "re-running the same night changes nothing" || not_ok "re-run" "rc=$RC"

[ "$(sql "select count(*) from audit_log where action='pin'")" = "$npin" ] && ok "a re-run pins nothing twice" || not_ok "pin audit after re-run"
run pr report --run "$rid1" --format json --out -
[ $RC -eq 0 ] && [ "$(grep -c '"function":' <<<"$OUT")" -ge "$nreg_found" ] &&
	ok "an earlier run's report still lists its findings after a re-run updated them" || not_ok "report of an earlier run" "rc=$RC"

fid=$(sql "select id from findings where direction='regression' order by id limit 1")
run pr finding show "$fid" --json
stored=$(sed -n 's/^  "p_value": \(.*\),$/\1/p' <<<"$OUT" | head -n 1)
again=$(sed -n 's/^    "p_value": \(.*\),$/\1/p' <<<"$OUT" | head -n 1)
[ $RC -eq 0 ] && [ -n "$stored" ] && [ "$stored" = "$again" ] && ok "finding show reproduces the p-value from the pinned captures" || not_ok "finding show" "stored=$stored again=$again $OUT"
run pr finding resolve "$fid" --note "fixed in v4"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from capture_pins where finding_id=$fid")" = 0 ] && [ "$(sql "select status from findings where id=$fid")" = resolved ] && ok "resolve closes the finding and lifts its pins" || not_ok "resolve" "rc=$RC $ERR"
[ "$(sql "select count(*) from profiles where retention_class='forensic' and tags->>'finding'='$fid'")" -ge 1 ] && ok "its current captures stay forensic" || not_ok "forensic after resolve"
run pr finding resolve "$fid"
[ $RC -eq 4 ] && ok "resolving twice is exit 4" || not_ok "resolve twice" "rc=$RC"
run pr finding list --state resolved
[ $RC -eq 0 ] && grep -qE "^ *$fid .*resolved" <<<"$OUT" &&
	! pr finding list --state confirmed | grep -qE "^ *$fid " &&
	pr finding show "$fid" --json | grep -q '"reason": "resolved by hand: fixed in v4"' &&
	ok "a finding resolved by hand is listed in state resolved, its history saying why" ||
	not_ok "resolved state" "rc=$RC $OUT"

# A second nightly while one holds the lock exits 3 at once.
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-nightly')), pg_sleep(4)" >/dev/null 2>&1 &
holder=$!
sleep 1
start=$(date +%s)
run pr --config "$T/profreg.json" nightly --at "$at"
[ $RC -eq 3 ] && [[ $ERR == *"lock"* ]] && [ $(( $(date +%s) - start )) -lt 5 ] && ok "a second nightly exits 3 at once while the lock is held" || not_ok "lock" "rc=$RC $ERR"

wait "$holder" 2>/dev/null

run pr --config "$T/profreg.json" nightly --at "$at" --service svc-001 --dry-run
[ $RC -eq 0 ] && [[ $OUT == *"dry run"* ]] && [ "$(sql "select count(*) from runs where kind='nightly'")" = 2 ] && ok "--dry-run records nothing" || not_ok "dry run" "rc=$RC $OUT"
run pr runs list --json
[[ $OUT == *'"kind": "nightly"'* ]] && ok "runs list" || not_ok "runs list" "$OUT"
rid=$(sql "select max(id) from runs where kind='nightly'")
run pr run show "$rid" --json
[ $RC -eq 0 ] && [[ $OUT == *'"services"'* ]] && [[ $OUT == *'"findings"'* ]] && ok "run show --json gives outcomes and findings" || not_ok "run show" "rc=$RC"
run pr run show "$rid"
[ $RC -eq 0 ] && [[ $OUT == "run $rid: nightly"* ]] && [[ $OUT == *"svc-004"*"failed"* ]] && [[ $OUT != *'{'* ]] &&
	ok "run show prints text without --json" || not_ok "run show text" "rc=$RC $OUT"
run pr run show 999999
[ $RC -eq 4 ] && ok "a missing run is exit 4" || not_ok "missing run" "rc=$RC"
run pr config check "$T/profreg.json"
[ $RC -eq 2 ] && [[ $ERR == *"services.svc-004.source.dir: drop folder"*"nosuch"* ]] &&
	ok "config check refuses a drop folder that is not there" || not_ok "config check" "rc=$RC $OUT $ERR"
grep -v nosuch "$T/profreg.json" >"$T/good.json"
run pr config check "$T/good.json"
[ $RC -eq 0 ] && [[ $OUT == *"5 services configured"* ]] && ok "config check accepts the file" || not_ok "config check good" "rc=$RC $OUT $ERR"
run pr config check "$T/good.json" --json
[ $RC -eq 0 ] && [ "$(jq -r .valid <<<"$OUT")" = true ] && ok "config check --json prints JSON" || not_ok "config check json" "$OUT"
printf '{"services": {"a": {"source": {"folder": "x"}}}}' >"$T/bad.json"
run pr config check "$T/bad.json"
[ $RC -eq 2 ] && [[ $ERR == *"services.a.source"* ]] && ok "config check names the bad path" || not_ok "config check bad" "rc=$RC $ERR"
printf '{"retention": {"forensic_days": 30}}' >"$T/keep.json"
sql "update profiles set retention_class='hot', retain_until=null, tags = tags - 'finding'" >/dev/null
sql "update findings set status='open'" >/dev/null
# One of a regression's current captures was already pinned by hand, for good.
kept=$(sql "select x::bigint from findings f, jsonb_array_elements_text(f.detail -> 'captures' -> 'current') x where f.direction='regression' order by f.id, 1 limit 1")
pr --quiet capture pin "$kept" --reason "incident review" >/dev/null
pr --config "$T/keep.json" --quiet nightly --at "$at" >/dev/null
[ "$(sql "select count(*) from profiles where retention_class='forensic' and retain_until > now() + interval '29 days'")" -ge 1 ] && ok "forensic expiry follows retention.forensic_days" || not_ok "forensic days"
[ "$(sql "select retention_class || ':' || coalesce(retain_until::text, 'forever') from profiles where id=$kept")" = "forensic:forever" ] &&
	ok "a finding never shortens the retention of evidence already kept for good" || not_ok "forensic shortened" "$(sql "select retain_until from profiles where id=$kept")"

# Retention at the end of the night when the config asks for it: with a
# 3-day hot tier, the older baseline captures lose their blobs, and the
# next night still analyses from their summary rows.
printf '{"retention": {"after_nightly": true, "hot_days": 3, "summary_days": 30}}' >"$T/ret.json"
nhot=$(sql "select count(*) from profiles where retention_class='hot' and captured_at < timestamptz '$at' - interval '3 days' and id not in (select profile_id from capture_pins cp join findings f on f.id = cp.finding_id where f.status = 'open')")
run pr --config "$T/ret.json" nightly --at "$at" --json
[ $RC -eq 0 ] && [[ $OUT == *'"retention"'* ]] && [ "$nhot" -ge 1 ] &&
	[ "$(sql "select count(*) from profiles where retention_class='summary'")" = "$nhot" ] &&
	ok "nightly runs retention at its end when configured ($nhot captures to summary)" || not_ok "nightly retention" "rc=$RC hot=$nhot $ERR"
[ "$(sql "select count(*) from runs where kind='retention' and status='ok'")" = 1 ] && ok "the retention is recorded as its own run" || not_ok "retention run record"
run pr --config "$T/ret.json" nightly --at "$at"
[ $RC -eq 0 ] && [[ $OUT == *"retention: 0 captures moved to summary"* ]] && [[ $OUT == *"report: "* ]] &&
	ok "a second night moves nothing again and prints the report path" || not_ok "nightly retention rerun" "rc=$RC $OUT $ERR"
# Relative shifts are a count under the findings, not a line each.
nshift=$(sql "select count(*) from findings f join run_findings rf on rf.finding_id = f.id where rf.run_id = (select max(id) from runs where kind = 'nightly') and f.direction = 'relative_shift'")
if [ "$nshift" -gt 0 ]; then
	grep -q "^and $nshift relative shifts\? (shares that moved only because others did" <<<"$OUT" &&
		! grep -q "relative_shift" <<<"$OUT" &&
		ok "the night's $nshift relative shifts are one line, not a line each" || not_ok "shifts folded" "$OUT"
else
	grep -q "relative shift" <<<"$OUT" && not_ok "shifts folded" "$OUT" ||
		ok "a night without relative shifts prints no count of them"
fi
# Under --quiet (cron mails only what is printed), retention over budget
# with only protected data left is exit 1 with its reason, not a silent one.
printf '{"retention": {"after_nightly": true, "hot_days": 3, "summary_days": 30, "budget_bytes": 1000}}' \
	>"$T/ret-tight.json"
run pr --quiet --config "$T/ret-tight.json" nightly --at "$at"
[ $RC -eq 1 ] && [ -z "$OUT" ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"retention: over budget"*"(budget 1000)"* ]] &&
	ok "a quiet nightly over its storage budget exits 1 and says why in one line" ||
	not_ok "quiet over budget" "rc=$RC out='$OUT' err='$ERR'"
# Resolving a finding lifts the pins on its baseline: retention then
# summarises the old ones, and its report draws from those still kept.
fsum=$(sql "select id from findings where status='open' and direction='regression' order by id limit 1")
pr finding resolve "$fsum" --quiet >/dev/null
pr --config "$T/ret.json" --quiet retention --at "$at" >/dev/null
run pr report --finding "$fsum" --out "$T/after.html"
[ $RC -eq 0 ] && grep -q 'class="note">The flame graph leaves out [0-9]* captures* in the summary tier' "$T/after.html" &&
	grep -q '<svg' "$T/after.html" &&
	ok "a report after retention draws its graphs from the captures still kept, and says so" || not_ok "report after retention" "rc=$RC $ERR"
# A summary keeps a capture's top functions: one it did not keep is
# unknown in that capture, not 0. Its history has no point there (one
# summarised baseline capture made to drop the finding's function).
cut=$(sql "select p.id from profiles p, findings f where f.id = $fsum
	and p.retention_class = 'summary'
	and f.detail -> 'captures' -> 'baseline' @> jsonb_build_array(p.id)
	order by p.id limit 1")
sql "update profile_vectors v set function_ids = x.i, self_values = x.s, total_values = x.t
	from (select array_agg(u.i order by u.n) i, array_agg(u.s order by u.n) s,
		array_agg(u.t order by u.n) t from profile_vectors w,
		unnest(w.function_ids, w.self_values, w.total_values) with ordinality u(i, s, t, n)
		where w.profile_id = $cut and u.i <> (select function_id from findings
			where id = $fsum)) x where v.profile_id = $cut" >/dev/null
run pr report --finding "$fsum" --format json --out -
[ -n "$cut" ] && [ $RC -eq 0 ] &&
	[ "$(jq "[.. | objects | select(has(\"history\")) | .history[] |
		select(.capture_id == $cut)] | length" <<<"$OUT")" = 0 ] &&
	[ "$(jq '[.. | objects | select(has("history")) | .history[]] | length' <<<"$OUT")" -gt 0 ] &&
	ok "a summarised capture that did not keep the function has no point in its history" ||
	not_ok "summary point" "cut=$cut rc=$RC $ERR $(sql "select count(*) from profiles where retention_class = 'summary'")"

# A night that hangs (another session holds a table it writes) stops at
# --deadline with exit 3 and one line, and frees the nightly's lock: the
# next run goes ahead.
psql "$DB" -qAt -c "begin; lock table runs in access exclusive mode; select pg_sleep(60)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do
	[ "$(sql "select count(*) from pg_locks l join pg_class c on c.oid = l.relation
		where c.relname = 'runs' and l.mode = 'AccessExclusiveLock' and l.granted")" = 1 ] && break
	sleep 0.1
done
t0=$(date +%s)
run timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/profreg.json" --quiet \
	nightly --at "$at" --deadline 3s
took=$(($(date +%s) - t0))
kill "$holder" 2>/dev/null
sql "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database()
	and application_name = 'psql' and pid <> pg_backend_pid()" >/dev/null
wait "$holder" 2>/dev/null
[ $RC -eq 3 ] && [ "$took" -le 20 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"did not end within the deadline (--deadline 3s)"* ]] &&
	ok "a nightly held up by a lock stops at --deadline with exit 3 in one line (${took} s)" ||
	not_ok "nightly deadline" "rc=$RC after ${took} s: $ERR"
run pr --config "$T/profreg.json" nightly --at "$at" --service svc-001 --dry-run
[ $RC -eq 0 ] && ok "the next nightly is not held by the stopped one's lock" ||
	not_ok "after nightly deadline" "rc=$RC $ERR"
# A report that cannot be written (a disk full, a reports folder that is
# a file) is exit 3 and one line under --quiet: the night's pages link to it.
run pr service set svc-001 --team t
: >"$T/notadir"
perl -MJSON::PP -e 'local $/; my $c = decode_json(<STDIN>); $c->{reports}{dir} = $ARGV[0];
	print encode_json($c)' "$T/notadir" <"$T/profreg.json" >"$T/badreports.json"
run pr --quiet --config "$T/badreports.json" nightly --at "$at" --service svc-001
[ $RC -eq 3 ] && [ -z "$OUT" ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"report not written"*"profreg report --run "* ]] &&
	ok "a nightly whose report cannot be written exits 3 and says so under --quiet" ||
	not_ok "report not written" "rc=$RC out='$OUT' err='$ERR'"
# What the line says to run writes the run's report and its team's, which
# the pages link to.
badrun=$(sed -n "s/.*'profreg report --run \([0-9]*\)'.*/\1/p" <<<"$ERR")
run pr --config "$T/profreg.json" report --run "$badrun"
team_html=$(ls "$HOME_DIR/reports/run-$badrun-"*-team-t.html 2>/dev/null)
[ $RC -eq 0 ] && [ "$OUT" = "$(ls "$HOME_DIR/reports/run-$badrun-"????????.html)" ] &&
	[ -s "$team_html" ] && [ -s "${team_html%.html}.md" ] && [ -s "${team_html%.html}.json" ] &&
	ok "report --run writes the run's report and its team's again" ||
	not_ok "report --run again" "run=$badrun rc=$RC out='$OUT' err='$ERR' team='$team_html'"
run pr nightly --deadline soon
[ $RC -eq 2 ] && [[ $ERR == *"'--deadline soon' is not a duration"* ]] &&
	ok "a --deadline that is not a duration is a usage error" || not_ok "deadline usage" "rc=$RC $ERR"

# A gate collecting one service (its lock, under the collect lock held
# shared) does not hold up the nightly's other services, and the nightly
# waits for the gate's service; the collect command over every service
# (the collect lock held alone) is waited for too. Here a gate holds
# svc-002 for 2 s, inside 6 s of the shared lock.
for svc in svc-001 svc-002; do
	last=$(grep "\"service\":\"$svc\"" "$T/fleet/manifest.jsonl" | tail -1)
	path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$last")
	{ cat "$T/fleet/$path"; printf 'main;lockcheck 1\n'; } >"$T/drop/$svc/lock.folded"
	cp "$T/drop/$svc/$(basename "$path").json" "$T/drop/$svc/lock.folded.json"
done
psql "$DB" -qAt -c "select pg_advisory_lock_shared(1886547814, hashtext('profreg-collect')),
	pg_advisory_lock(1886547814, hashtext('profreg-collect:svc-002')), pg_sleep(2),
	pg_advisory_unlock(1886547814, hashtext('profreg-collect:svc-002')), pg_sleep(4)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted
		and database = (select oid from pg_database where datname = current_database())")" -ge 2 ] && break
	sleep 0.1
done
run pr --config "$T/profreg.json" nightly --at "$at" --json
wait "$holder" 2>/dev/null
stored=$(sql "select count(*) from profiles p join profile_vectors v on v.profile_id = p.id
	join functions f on f.id = any(v.function_ids) where f.name = 'lockcheck'")
[ $RC -eq 3 ] && [[ $ERR != *"holds the lock"* ]] && [ "$stored" = 2 ] &&
	[ "$(jq -r '.services["svc-002"].status' <<<"$OUT")" != failed ] &&
	ok "the nightly collects beside a gate, and waits for the gate's service" ||
	not_ok "nightly beside a gate" "rc=$RC stored=$stored $ERR"
{ cat "$T/drop/svc-001/lock.folded"; printf 'main;lockcheck 1\n'; } >"$T/drop/svc-001/lock2.folded"
cp "$T/drop/svc-001/lock.folded.json" "$T/drop/svc-001/lock2.folded.json"
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-collect')), pg_sleep(2)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted
		and database = (select oid from pg_database where datname = current_database())")" -ge 1 ] && break
	sleep 0.1
done
t0=$(date +%s)
run pr --config "$T/profreg.json" nightly --at "$at" --service svc-001
took=$(($(date +%s) - t0))
wait "$holder" 2>/dev/null
[ $RC -eq 0 ] && [ "$took" -ge 1 ] && [ -z "$(sql "select 1 from profiles where blob_key is null limit 1")" ] &&
	[ "$(sql "select count(*) from profiles p join profile_vectors v on v.profile_id = p.id
		join functions f on f.id = any(v.function_ids) where f.name = 'lockcheck'")" = 3 ] &&
	ok "the nightly waits for a collection of every service, then collects (${took} s)" ||
	not_ok "nightly after a collect of all" "rc=$RC took=$took $ERR"

# A service whose collection failed is still judged on the captures it
# has: the night is incomplete (exit 3), but it did not check nothing.
printf 'not a profile\n' >"$T/drop/svc-001/broken.folded"
cp "$T/drop/svc-001/lock.folded.json" "$T/drop/svc-001/broken.folded.json"
run pr --config "$T/profreg.json" nightly --at "$at" --service svc-001 --json
[ $RC -eq 3 ] && [[ $ERR == *"service 'svc-001' failed"* ]] && [[ $ERR != *"checked nothing"* ]] &&
	[ "$(jq -r '.tests' <<<"$OUT")" -gt 0 ] &&
	ok "a service whose collection failed but was judged is not a night that checked nothing" ||
	not_ok "failed but judged" "rc=$RC $ERR"
rm -f "$T/drop/svc-001/broken.folded" "$T/drop/svc-001/broken.folded.json"

for c in "nightly" "runs list" "run show" "finding show" "finding resolve" "config check"; do
	# shellcheck disable=SC2086
	run "$PROFREG_BIN" $c --help
	[ $RC -eq 0 ] && ok "$c --help" || not_ok "$c --help"
done
finish
