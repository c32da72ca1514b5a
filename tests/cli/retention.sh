#!/bin/bash
# Retention: captures age through the tiers with --at; forensic, pinned and
# shared-blob captures survive; summary rows still add up; --dry-run
# changes nothing; the run is recorded and audited; a re-run does nothing;
# `profreg storage` matches the files on disk; pin and unpin; the lock.
. "$(dirname "$0")/lib.sh"
fresh_db cli_retention
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_retention
rm -rf "$T" && mkdir -p "$T"
AT=2026-06-01T00:00:00Z

cat >"$T/profreg.json" <<'JSON'
{"retention": {"summary_top": 2},
 "services": {"long": {"retention": {"hot_days": 30}}}}
JSON
P() { pr --config "$T/profreg.json" "$@"; }
for s in svc long; do pr --quiet service add $s && pr --quiet service enable $s; done

# capture NAME SERVICE AGE_DAYS: five functions of different weights,
# unique per NAME; prints the new capture's id.
capture() {
	printf 'main;a 50\nmain;b 30\nmain;c 10\nmain;d 6\nmain;e 4\nmain;%s 1\n' "$1" >"$T/$1.folded"
	P --quiet ingest "$T/$1.folded" --service "$2" --release r1 \
		--time "$(date -u -d "$AT - $3 days" +%Y-%m-%dT%H:%M:%SZ)" >/dev/null || echo "ingest $1 failed" >&2
	sql "select max(id) from profiles"
}
blobfile() { k=$(sql "select blob_key from profiles where id=$1"); echo "$HOME_DIR/blobs/sha256/${k:0:2}/${k:2}.zst"; }

hot=$(capture hot svc 1)
old=$(capture old svc 10)
gone=$(capture gone svc 100)
pinned_forensic=$(capture forensic svc 100)
baseline=$(capture baseline svc 10)
expired=$(capture expired svc 10)
resolved=$(capture resolved svc 10)
long=$(capture long long 10)
# The same bytes in two services: one blob, kept while either needs it.
cp "$T/old.folded" "$T/shared.folded"
P --quiet ingest "$T/shared.folded" --service long --release r1 \
	--time "$(date -u -d "$AT - 10 days" +%Y-%m-%dT%H:%M:%SZ)" >/dev/null
shared=$(sql "select max(id) from profiles")
[ "$(sql "select count(distinct blob_key) from profiles where id in ($old, $shared)")" = 1 ] && ok "two services share one blob" || not_ok "shared blob setup"

run P capture pin "$pinned_forensic" --reason "incident 42: checkout latency"
[ $RC -eq 0 ] && [ "$(sql "select retention_class || ':' || forensic_reason from profiles where id=$pinned_forensic")" = "forensic:incident 42: checkout latency" ] && ok "capture pin makes a capture forensic with its reason" || not_ok "capture pin" "rc=$RC $ERR"
[ "$(sql "select count(*) from audit_log where action='capture.pin' and object='capture:$pinned_forensic' and detail->>'reason' like 'incident 42%'")" = 1 ] && ok "the pin is audited with its reason" || not_ok "pin audit"
run P capture pin "$pinned_forensic"
[ $RC -eq 2 ] && grep -q -- "--reason" <<<"$ERR" && ok "a pin without --reason is a usage error" || not_ok "pin without reason" "rc=$RC $ERR"
run P capture pin 999999 --reason x
[ $RC -eq 4 ] && grep -q "999999" <<<"$ERR" && ok "pinning a missing capture names it, exit 4" || not_ok "pin missing" "rc=$RC $ERR"
run P capture pin "$expired" --reason "kept a while" --until 2026-05-25
[ $RC -eq 0 ] && ok "capture pin --until" || not_ok "pin until" "rc=$RC $ERR"

# An open finding pins $baseline; a resolved one no longer pins $resolved.
sql "insert into findings (service_id, status) values ((select id from services where name='svc'), 'open')" >/dev/null
sql "insert into findings (service_id, status, resolved_at) values ((select id from services where name='svc'), 'resolved', now())" >/dev/null
sql "insert into capture_pins (profile_id, finding_id) values ($baseline, (select min(id) from findings)), ($resolved, (select max(id) from findings))" >/dev/null

before=$(sql "select string_agg(id || retention_class || (select count(*) from profile_functions where profile_id = p.id), ',' order by id) from profiles p")
files_before=$(find "$HOME_DIR/blobs" -name '*.zst' | wc -l)
run P retention --at "$AT" --dry-run --json
echo "$OUT" >"$T/dry.json"
[ $RC -eq 0 ] && [ "$(sql "select string_agg(id || retention_class || (select count(*) from profile_functions where profile_id = p.id), ',' order by id) from profiles p")" = "$before" ] && [ "$(find "$HOME_DIR/blobs" -name '*.zst' | wc -l)" = "$files_before" ] && ok "--dry-run changes nothing" || not_ok "dry run" "rc=$RC $ERR"
grep -q '"to_summary": 3' "$T/dry.json" && grep -q '"deleted": 1' "$T/dry.json" && grep -q '"dry_run": true' "$T/dry.json" && ok "--dry-run says what it would do" || not_ok "dry run figures" "$OUT"
[ "$(sql "select count(*) from runs where kind='retention'")" = 0 ] && ok "a dry run records no run" || not_ok "dry run recorded"

run P retention --at "$AT" --json
echo "$OUT" >"$T/r1.json"
[ $RC -eq 0 ] && ok "retention runs" || not_ok "retention" "rc=$RC $ERR $OUT"
cmp -s <(grep -v '"seconds"\|"run_id"\|"batches"\|"dry_run"' "$T/dry.json") <(grep -v '"seconds"\|"run_id"\|"batches"\|"dry_run"' "$T/r1.json") && ok "the dry run predicted exactly what the run did" || not_ok "dry run vs run" "$(diff <(cat "$T/dry.json") <(cat "$T/r1.json"))"
cls() { sql "select retention_class from profiles where id=$1"; }
[ "$(cls $hot)" = hot ] && [ -f "$(blobfile $hot)" ] && [ "$(sql "select count(*) from profile_functions where profile_id=$hot")" = 7 ] && ok "a young capture stays hot, whole" || not_ok "hot"
[ "$(cls $old)" = summary ] && [ "$(sql "select count(*) from profile_functions where profile_id=$old")" = 3 ] && ok "a capture past hot_days keeps its top 2 functions and one (other) row" || not_ok "summary" "$(cls $old)"
[ "$(sql "select sum(self_value) = (select total_value from profiles where id=$old) from profile_functions where profile_id=$old")" = t ] && ok "the summary rows still add up to the capture's total" || not_ok "totals"
[ "$(sql "select f.name || '=' || pf.self_value from profile_functions pf join functions f on f.id=pf.function_id where pf.profile_id=$old and f.synthetic")" = "(other functions)=21" ] && ok "the (other) row holds the rest" || not_ok "other row"
[ "$(sql "select count(*) from profiles where id=$gone")" = 0 ] && [ "$(sql "select count(*) from profile_functions where profile_id=$gone")" = 0 ] && ok "a capture past summary_days is deleted with its rows" || not_ok "deleted"
[ "$(cls $pinned_forensic)" = forensic ] && [ -f "$(blobfile $pinned_forensic)" ] && [ "$(sql "select count(*) from profile_functions where profile_id=$pinned_forensic")" = 7 ] && ok "a forensic capture survives whole past every tier" || not_ok "forensic"
run P profile "$pinned_forensic" --json
[ $RC -eq 0 ] && ok "its blob still reads back" || not_ok "forensic blob readable" "rc=$RC $ERR"
[ "$(cls $baseline)" = hot ] && [ -f "$(blobfile $baseline)" ] && [ "$(sql "select count(*) from profile_functions where profile_id=$baseline")" = 7 ] && ok "a baseline capture of an open finding is never degraded" || not_ok "pinned baseline"
[ "$(cls $resolved)" = summary ] && ok "once its finding is resolved, a pinned capture ages normally" || not_ok "resolved pin"
[ "$(cls $expired)" = summary ] && ok "a forensic capture whose retain_until passed is tiered by age" || not_ok "expired forensic" "$(cls $expired)"
[ "$(cls $long)" = hot ] && [ "$(cls $shared)" = hot ] && ok "a service's own hot_days applies" || not_ok "per service tiers"
[ "$(sql "select blob_deleted_at is not null from profiles where id=$old")" = t ] && [ -f "$(blobfile $old)" ] && ok "a blob another service still keeps is not deleted" || not_ok "shared blob kept"
[ ! -f "$(blobfile $resolved)" ] && ok "a summary capture's own blob is deleted" || not_ok "blob deleted"
[ "$(sql "select count(*) from blob_sweep")" = 0 ] && ok "the sweep queue is empty after a run" || not_ok "queue"
[ "$(sql "select status from runs where kind='retention'")" = ok ] && [ "$(sql "select (detail->'moved'->>'to_summary') from runs where kind='retention'")" = 3 ] && ok "the run is recorded with what it did" || not_ok "run record"
[ "$(sql "select count(*) from audit_log where action='retention.summary' and object like 'run:%'")" -ge 1 ] && [ "$(sql "select count(*) from audit_log where action='retention.delete' and detail->'captures' @> '[$gone]'")" = 1 ] && [ "$(sql "select count(*) from audit_log where action='retention'")" = 1 ] && ok "the audit log names every capture moved" || not_ok "audit"

run P retention --at "$AT" --json
grep -q '"to_summary": 0' <<<"$OUT" && grep -q '"deleted": 0' <<<"$OUT" && grep -q '"blobs_deleted": 0' <<<"$OUT" && ok "a second run at the same time does nothing" || not_ok "idempotent" "$OUT"
grep -q '"protected_kept": 2' <<<"$OUT" && ok "it counts the protected captures it kept" || not_ok "protected count" "$OUT"

# The shared blob goes once the other service's capture leaves hot too.
run P retention --at 2026-07-05T00:00:00Z --json
[ "$(cls $shared)" = summary ] && [ ! -f "$(blobfile $shared)" ] && ok "a shared blob goes when no capture keeps it" || not_ok "shared blob deleted" "$OUT"

# storage: the figures match the files on disk.
run P storage --json
echo "$OUT" >"$T/storage.json"
disk=$(find "$HOME_DIR/blobs" -name '*.zst' ! -name '*.tmp.*' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
nfiles=$(find "$HOME_DIR/blobs" -name '*.zst' ! -name '*.tmp.*' | wc -l)
kept=$(sed -n '/"total"/,/}/s/^ *"blob_bytes": \([0-9]*\).*/\1/p' "$T/storage.json")
ondisk=$(sed -n '/"disk"/,/}/s/^ *"bytes": \([0-9]*\).*/\1/p' "$T/storage.json")
[ $RC -eq 0 ] && [ "$kept" = "$disk" ] && [ "$ondisk" = "$disk" ] && [ "$disk" -gt 0 ] && ok "storage: blob bytes kept equal the bytes of the files on disk ($disk in $nfiles files)" || not_ok "storage bytes" "kept=$kept ondisk=$ondisk disk=$disk $OUT"
[ "$(sed -n '/"summary"/,/}/s/^ *"captures": \([0-9]*\).*/\1/p' "$T/storage.json")" = "$(sql "select count(*) from profiles where retention_class='summary'")" ] && ok "storage counts captures by tier" || not_ok "storage tiers"
[ "$(sed -n '/"total"/,/}/s/^ *"rows": \([0-9]*\).*/\1/p' "$T/storage.json")" = "$(sql "select count(*) from profile_functions")" ] && ok "storage counts rows" || not_ok "storage rows"
run P storage
[ $RC -eq 0 ] && grep -q "^  forensic" <<<"$OUT" && grep -q "^  svc " <<<"$OUT" && ok "storage prints tiers and services" || not_ok "storage text" "$OUT"

# An orphan blob (an ingest died before its row) goes only after the grace period.
mkdir -p "$HOME_DIR/blobs/sha256/ee"
o1=$HOME_DIR/blobs/sha256/ee/$(printf 'e%.0s' $(seq 62)).zst
o2=$HOME_DIR/blobs/sha256/ee/$(printf 'f%.0s' $(seq 62)).zst
echo x >"$o1"; echo y >"$o2"; touch -d '2 days ago' "$o1"
run P retention --at 2026-07-05T00:00:00Z --json
[ ! -f "$o1" ] && [ -f "$o2" ] && grep -q '"orphans_deleted": 1' <<<"$OUT" && ok "an old unreferenced blob is swept, a fresh one is left for its ingest" || not_ok "orphans" "$OUT"
rm -f "$o2"

run P capture unpin "$pinned_forensic" --reason "incident closed"
[ $RC -eq 0 ] && [ "$(cls $pinned_forensic)" = hot ] && [ "$(sql "select count(*) from audit_log where action='capture.unpin'")" = 1 ] && ok "capture unpin returns it to retention, audited" || not_ok "unpin" "rc=$RC $ERR"
run P capture unpin "$pinned_forensic" --reason again
[ $RC -eq 4 ] && ok "unpinning a capture that is not forensic is exit 4" || not_ok "unpin twice" "rc=$RC"
run P retention --at 2026-07-05T00:00:00Z --json
[ "$(sql "select count(*) from profiles where id=$pinned_forensic")" = 0 ] && ok "an unpinned old capture is deleted by the next run" || not_ok "unpinned deleted" "$OUT"

# Beside nightly: nightly's lock does not stop retention; a second retention does not start.
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-nightly')), pg_advisory_lock(1886547814, hashtext('profreg-retention')), pg_sleep(3)" >/dev/null 2>&1 &
holder=$!
sleep 1
run P retention --at 2026-07-05T00:00:00Z
[ $RC -eq 3 ] && grep -q "another retention run holds the lock" <<<"$ERR" && ok "a second retention exits 3 at once" || not_ok "lock" "rc=$RC $ERR"
wait $holder
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-nightly')), pg_sleep(3)" >/dev/null 2>&1 &
holder=$!
sleep 1
run P retention --at 2026-07-05T00:00:00Z
[ $RC -eq 0 ] && ok "retention runs while nightly holds its lock" || not_ok "beside nightly" "rc=$RC $ERR"
wait $holder

# An ingest in flight on a blob retention is about to delete: it holds the
# shared lock on the key while its row is not yet committed. Retention
# waits for it, sees the new row and keeps the file.
racy=$(capture racy svc 10)
rk=$(sql "select blob_key from profiles where id=$racy")
rfile=$(blobfile "$racy")
psql "$DB" -qAt -c "begin; select pg_advisory_xact_lock_shared(1886547815, hashtext('$rk'));
	insert into profiles (service_id, profile_type, release, captured_at, value_type, value_unit,
		total_value, sample_count, blob_key, format)
	select (select id from services where name='long'), profile_type, 'r2', timestamptz '$AT',
		value_type, value_unit, total_value, sample_count, blob_key, format from profiles where id=$racy;
	select pg_sleep(3); commit;" >/dev/null 2>&1 &
holder=$!
sleep 1
t0=$(date +%s.%N)
run P retention --at "$AT"
t1=$(date +%s.%N)
wait $holder
[ $RC -eq 0 ] && [ "$(cls $racy)" = summary ] && [ -f "$rfile" ] &&
	[ "$(sql "select count(*) from profiles where blob_key='$rk' and blob_deleted_at is null")" = 1 ] &&
	awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a > 1.5) }' &&
	ok "retention waits for an ingest writing the same blob and keeps the file it needs" ||
	not_ok "blob lock" "rc=$RC class=$(cls $racy) file=$([ -f "$rfile" ] && echo yes || echo no) $ERR"

# A pin never shortens what is kept.
ever=$(capture ever svc 10)
P --quiet capture pin "$ever" --reason "kept for good"
run P capture pin "$ever" --reason "a later, shorter request" --until 2026-12-31 --json
[ $RC -eq 0 ] && [ "$(sql "select retention_class || ':' || coalesce(retain_until::text, 'forever') from profiles where id=$ever")" = forensic:forever ] &&
	grep -q '"until": null' <<<"$OUT" && grep -q '"requested_until": "2026-12-31' <<<"$OUT" &&
	ok "pin --until on evidence kept forever keeps it forever" || not_ok "pin shortened forever" "rc=$RC $OUT $(sql "select retain_until from profiles where id=$ever")"
until_of() { sql "select to_char(retain_until at time zone 'UTC', 'YYYY-MM-DD') from profiles where id=$1"; }
exp2=$(capture expiring svc 10)
P --quiet capture pin "$exp2" --reason "a while" --until 2027-03-01
run P capture pin "$exp2" --reason "shorter" --until 2027-01-01
[ $RC -eq 0 ] && [ "$(until_of "$exp2")" = 2027-03-01 ] && grep -q "already kept longer" <<<"$OUT" &&
	ok "an earlier --until leaves the later end" || not_ok "pin shortened" "rc=$RC $OUT $(until_of "$exp2")"
run P capture pin "$exp2" --reason "longer" --until 2027-06-01
[ $RC -eq 0 ] && [ "$(until_of "$exp2")" = 2027-06-01 ] && ok "a later --until extends it" || not_ok "pin extend" "rc=$RC $(until_of "$exp2")"
run P capture pin "$exp2" --reason "for good now"
[ $RC -eq 0 ] && [ "$(sql "select retain_until is null from profiles where id=$exp2")" = t ] && grep -q "kept forever" <<<"$OUT" &&
	ok "a pin without --until makes expiring evidence kept forever" || not_ok "pin forever" "rc=$RC $OUT"

# A time to come would expire evidence early: refused, for a dry run too.
future=$(date -u -d 'now + 2 days' +%Y-%m-%dT%H:%M:%SZ)
runs_before=$(sql "select count(*) from runs")
run P retention --at "$future"
[ $RC -eq 2 ] && grep -q "cannot run retention as of '$future'" <<<"$ERR" && [ "$(sql "select count(*) from runs")" = "$runs_before" ] &&
	ok "retention --at in the future is a usage error naming the time" || not_ok "future at" "rc=$RC $ERR"
run P retention --at "$future" --dry-run
[ $RC -eq 2 ] && ok "so is a dry run's" || not_ok "future at dry run" "rc=$RC $ERR"

# Over the row budget with nothing left that may go: hot captures stay, and stderr says what is left.
printf '{"retention": {"summary_top": 0, "budget_rows": 1}}' >"$T/tight.json"
fresh=$(capture fresh svc 1)
hot_before=$(sql "select string_agg(id::text, ',' order by id) from profiles where retention_class = 'hot'")
run pr --config "$T/tight.json" retention --at "$AT"
[ $RC -eq 1 ] && [ "$(sql "select count(*) from profile_functions where profile_id = $fresh")" = 7 ] && [ "$(sql "select string_agg(id::text, ',' order by id) from profiles where retention_class = 'hot'")" = "$hot_before" ] &&
	[ "$(sql "select count(*) from profiles where retention_class = 'summary'")" = 0 ] &&
	grep -q "over budget: what is left cannot be cut further:.* in protected (forensic or pinned) captures, [1-9][0-9]* in hot captures the budget may not cut further" <<<"$ERR" &&
	ok "the row budget deletes summary captures only, keeps hot ones and says so" || not_ok "row budget hot" "rc=$RC $ERR hot=$hot_before"

# The evidence of a finding still open is kept past its keep (forensic_days
# ended while the regression still pages), and a pin by hand taken off it
# leaves it the finding's evidence: unpinned, it was deleted.
ev=$(capture evidence svc 100)
open_f=$(sql "select min(id) from findings where status = 'open'")
# The finding was stored on 1 January and its evidence is kept 30 days.
sql "update findings set created_at = '2026-01-01T00:00:00Z' where id = $open_f" >/dev/null
sql "update profiles set retention_class = 'forensic', retain_until = '2026-01-31T00:00:00Z',
	tags = tags || jsonb_build_object('finding', '$open_f') where id = $ev" >/dev/null
printf '{"retention": {"summary_top": 2, "forensic_days": 30}}' >"$T/ev.json"
run P capture pin "$ev" --reason "look at it later"
run pr --config "$T/ev.json" capture unpin "$ev" --reason "looked"
[ $RC -eq 0 ] && [[ $OUT == *"capture $ev is no longer pinned by hand; it stays the evidence of finding $open_f"* ]] &&
	[ "$(sql "select retention_class || ' ' || retain_until from profiles where id = $ev")" = "forensic 2026-01-31 00:00:00+00" ] &&
	ok "unpinning a finding's evidence leaves it the finding's evidence, kept to the finding's end" ||
	not_ok "unpin evidence" "rc=$RC $OUT $ERR $(sql "select retention_class || ' ' || retain_until from profiles where id = $ev")"
run P retention --at 2026-07-05T00:00:00Z
[ "$(cls $ev)" = forensic ] && [ -f "$(blobfile $ev)" ] &&
	ok "an open finding's evidence past its keep is not deleted" || not_ok "open evidence kept" "$(cls $ev) $OUT $ERR"
sql "update findings set status = 'resolved', resolved_at = now() where id = $open_f" >/dev/null
run P retention --at 2026-07-05T00:00:00Z
[ "$(sql "select coalesce((select retention_class from profiles where id = $ev), 'gone')")" != forensic ] &&
	[ ! -f "$(blobfile $ev)" ] &&
	ok "once the finding is closed, its evidence past its keep ages as any capture" ||
	not_ok "closed evidence" "$(cls $ev) $OUT"

# The capture's tag names its first finding only: closed, while a second
# open finding judged the same captures, the evidence is still kept.
ev2=$(capture evidence2 svc 100)
sql "insert into findings (service_id, status, resolved_at) values ((select id from services where name='svc'), 'resolved', now())" >/dev/null
closed_f=$(sql "select max(id) from findings")
sql "insert into findings (service_id, status, detail) values ((select id from services where name='svc'), 'open',
	jsonb_build_object('captures', jsonb_build_object('current', jsonb_build_array($ev2))))" >/dev/null
sql "update profiles set retention_class = 'forensic', retain_until = '2026-01-31T00:00:00Z',
	tags = tags || jsonb_build_object('finding', '$closed_f') where id = $ev2" >/dev/null
run P retention --at 2026-07-05T00:00:00Z
[ "$(cls $ev2)" = forensic ] && [ -f "$(blobfile $ev2)" ] &&
	ok "evidence an open finding shares with a closed one it is tagged with is kept" ||
	not_ok "shared evidence kept" "$(cls $ev2) $OUT $ERR"

run P retention --help
[ $RC -eq 0 ] && grep -q -- "--dry-run" <<<"$OUT" && ok "retention --help" || not_ok "help"
run P retention --at yesterdayish
[ $RC -eq 2 ] && ok "a bad --at is a usage error" || not_ok "bad at" "rc=$RC"
finish
