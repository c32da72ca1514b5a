#!/bin/bash
# Paging through the outbox to a loopback PagerDuty Events v2 server
# (tests/servers/pd_server.c): delivery with retries, backoff and 429
# Retry-After, 400 as a permanent failure with its body, a hanging server
# hitting the timeout, bounded attempts per run, a flush killed mid-send,
# two flushes at once, a webhook with a bearer token, secret files, a
# refused page armed again (next run, page retry) instead of lost, a
# regression resolved by hand and found again paging again, a resolve
# that stands when its flush fails, and the test key never
# showing up in any output or in the database. http_proxy names a port
# that refuses: every target here carries a secret (the routing key in
# PagerDuty's body, the webhook's token), so none may go through it.
. "$(dirname "$0")/lib.sh"
fresh_db cli_paging
pr --quiet db init
BUILD=${BUILD:-build}
PD_SERVER=${PD_SERVER:-$BUILD/servers/pd_server}
T=$PROFREG_TEST_TMP/cli_paging
rm -rf "$T" && mkdir -p "$T"
KEY=pdtestkey0123456789abcdefSECRET9
TOKEN=hooktoken-SECRET-abcdef0123456789
export PROFREG_PD_KEY=$KEY
export http_proxy=http://127.0.0.1:1
ALL=$T/all-output.txt
: >"$ALL"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

[ -x "$PD_SERVER" ] || { not_ok "pd_server is built ($PD_SERVER)"; finish; exit 1; }

# Three services, each with one strong regression in release v2.
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 3 --functions 30 --factors 3 --bands 10-30 \
	--regressed 1 --seed 5 --days 5 --per-day 2 --current 3 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl" >/dev/null

# start_pd SCRIPT [THEN]: a fresh server; sets PORT, LOG, SRV.
n_srv=0
start_pd() {
	n_srv=$((n_srv + 1))
	LOG=$T/pd$n_srv.log
	rm -f "$T/pd$n_srv.port"
	"$PD_SERVER" --port-file "$T/pd$n_srv.port" --log "$LOG" --script "$1" --then "${2:-202}" \
		--timeout 100 &
	SRV=$!
	PIDS="$PIDS $SRV"
	for _ in $(seq 100); do [ -s "$T/pd$n_srv.port" ] && break; sleep 0.05; done
	PORT=$(cat "$T/pd$n_srv.port")
	touch "$LOG"
}

# cfg [EXTRA PAGING JSON]: the config, paging to the current server.
cfg() {
	cat >"$T/cfg.json" <<EOF
{"paging": {"min_severity": "high", "backoff_ms": 20, "max_backoff_ms": 2000,
  "connect_timeout_ms": 1000, "timeout_ms": ${TIMEOUT_MS:-3000}, "max_attempts": ${ATTEMPTS:-5},
  "targets": {"pd": {"type": "pagerduty", "url": "http://127.0.0.1:$PORT", "secret_env": "PROFREG_PD_KEY"},
              "hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook", "secret_file": "$T/token"}},
  "default": ["pd"], "teams": {}},
 "reports": {"base_url": "https://reports.example/profreg/"}}
EOF
}
printf '%s\n' "$TOKEN" >"$T/token"
chmod 600 "$T/token"

# prc ARGS: run profreg with the config, keeping every byte it prints.
prc() {
	run pr --config "$T/cfg.json" "$@"
	printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL"
}
reqs() { grep -c . "$LOG"; }
reset_pages() {
	sql "update pages set status = 'pending', attempts = 0, next_attempt_at = now(), sent_at = null,
	     last_error = null, response = null, http_status = null $1" >/dev/null
}

# 1. The nightly pages once per regression, through a 500 and a 429.
start_pd "500,429:1,202"
cfg
prc nightly --at "$at" --json
echo "$OUT" >"$T/n1.json"
npages=$(sql "select count(*) from pages")
[ $RC -eq 0 ] && [ "$npages" = 3 ] && ok "a nightly with three regressions enqueues three pages" || not_ok "enqueue" "rc=$RC pages=$npages $ERR"
[ "$(sql "select count(*) from pages where status = 'sent'")" = 3 ] && ok "every page is delivered in the same run" || not_ok "delivered" "$(pr page list)"
[ "$(reqs)" = 5 ] && ok "a 500 and a 429 are retried (5 requests for 3 pages)" || not_ok "retries" "requests=$(reqs)"
# The time from the 429 to the next request for the same page.
gap=$(jq -s '(map(select(.action == "429:1")) | .[0]) as $t | map(select(.body.dedup_key == $t.body.dedup_key and .n > $t.n)) | .[0].ms - $t.ms' "$LOG")
[ "$gap" -ge 1000 ] && ok "Retry-After: 1 is honoured (${gap} ms between attempts, backoff 20 ms)" || not_ok "retry-after" "gap=$gap"
[ "$(jq -s '[.[] | select(.valid)] | length' "$LOG")" = 5 ] && ok "every request meets the PagerDuty Events v2 contract" || not_ok "contract" "$(head -c 600 "$LOG")"
[ "$(jq -r .body.dedup_key "$LOG" | sort -u | wc -l)" = 3 ] && ok "one dedup key per regression" || not_ok "dedup keys"
[ "$(jq -r .body.dedup_key "$LOG" | sort -u)" = "$(sql "select dedup_key from pages order by dedup_key")" ] && ok "the dedup keys sent are the outbox's" || not_ok "dedup keys match"
first=$(jq -c 'select(.action == "202")' "$LOG" | head -n 1)
fid=$(jq -r .body.payload.custom_details.finding_id <<<"$first")
rid=$(jq -r .body.payload.custom_details.run_id <<<"$first")
inst=$(sql "select left(replace(id::text, '-', ''), 8) from instance")
[ "$(jq -r '.body.links[0].href' <<<"$first")" = "https://reports.example/profreg/run-$rid-$inst.html#finding-$fid" ] && ok "the page links to the run report's finding" || not_ok "link" "$first"
[ "$(jq -r '.body.payload | "\(.severity) \(.group) \(.class) \(.source)"' <<<"$first")" = "critical $(jq -r .body.payload.group <<<"$first") cpu profreg" ] && [ -n "$(jq -r .body.payload.component <<<"$first")" ] && ok "payload: severity critical, group the service, class the type, component the function" || not_ok "payload" "$first"
grep -q '"pages": {' "$T/n1.json" && [ "$(jq .pages.sent "$T/n1.json")" = 3 ] && ok "nightly --json reports the page counts" || not_ok "nightly json pages" "$OUT"
[ "$(sql "select detail->'pages'->>'enqueued' from runs where kind = 'nightly' order by id desc limit 1")" = 3 ] && ok "the run record holds the page counts" || not_ok "run record pages"

# 2. A re-run of the same night pages no one again.
start_pd "202"
cfg
prc nightly --at "$at"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from pages")" = 3 ] && [ "$(reqs)" = 0 ] && ok "re-running the night enqueues and sends nothing" || not_ok "re-run" "rc=$RC requests=$(reqs)"
[[ $OUT == *"pages: 0 enqueued, 0 sent, 0 failed, 0 pending"* ]] && ok "the nightly prints its page counts" || not_ok "nightly text" "$OUT"

# 3. 400 is a permanent failure, recorded with the response body's words.
one=$(sql "select min(id) from pages")
reset_pages "where id = $one"
start_pd "400"
cfg
prc page flush
[ $RC -eq 3 ] && [ "$(sql "select status from pages where id = $one")" = failed ] && [ "$(reqs)" = 1 ] && ok "400 fails the page for good after one request (exit 3)" || not_ok "400" "rc=$RC requests=$(reqs) $OUT"
[[ "$(sql "select response from pages where id = $one")" == *"object is"* ]] && [ "$(sql "select http_status from pages where id = $one")" = 400 ] && ok "the 400 response body is recorded" || not_ok "400 body"
prc page list --state failed --json
[ "$(jq '.pages | length' <<<"$OUT")" = 1 ] && [[ $OUT == *'"last_error": "HTTP 400"'* ]] && ok "page list --state failed shows it" || not_ok "list failed" "$OUT"

# 4. Attempts per run are bounded; what is left stays pending for the next run.
reset_pages "where id = $one"
start_pd "500" 500
ATTEMPTS=3 cfg
prc page flush --json
[ $RC -eq 3 ] && [ "$(reqs)" = 3 ] && [ "$(sql "select status || ' ' || attempts from pages where id = $one")" = "pending 3" ] && ok "500s: 3 attempts (max_attempts), then left pending" || not_ok "bounded" "rc=$RC requests=$(reqs) $OUT"
[ "$(jq .pending <<<"$OUT")" = 1 ] && ok "flush --json reports the pending page" || not_ok "pending count" "$OUT"
start_pd "202"
cfg
prc page flush
[ $RC -eq 0 ] && [ "$(sql "select status from pages where id = $one")" = sent ] && [ "$(reqs)" = 1 ] && ok "the next flush delivers it" || not_ok "next flush" "rc=$RC $OUT"

# 5. A long Retry-After is stored and respected by a later run.
reset_pages "where id = $one"
start_pd "429:3600"
cfg
prc page flush
prc page flush
[ "$(reqs)" = 1 ] && [ "$(sql "select next_attempt_at > now() + interval '3500 seconds' from pages where id = $one")" = t ] && ok "429 with Retry-After: 3600 is not retried by this run nor the next" || not_ok "long retry-after" "requests=$(reqs)"

# 6. A server that never answers hits the timeout and is retried.
reset_pages "where id = $one"
start_pd "hang"
TIMEOUT_MS=400 cfg
t0=$(date +%s%N)
prc page flush
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $RC -eq 0 ] && [ "$(reqs)" = 2 ] && [ "$ms" -ge 400 ] && [[ $OUT == *"timeout"* ]] && ok "a hanging server times out (${ms} ms) and the retry delivers" || not_ok "hang" "rc=$RC requests=$(reqs) ms=$ms $OUT"

# 7. A flush killed mid-delivery loses nothing and enqueued nothing twice.
reset_pages ""
start_pd "hang"
TIMEOUT_MS=20000 cfg
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" page flush >"$T/killed.out" 2>&1 &
victim=$!
for _ in $(seq 100); do [ "$(reqs)" -ge 1 ] && break; sleep 0.05; done
{ kill -9 "$victim" && wait "$victim"; } 2>/dev/null
cat "$T/killed.out" >>"$ALL"
sleep 0.3
[ "$(sql "select count(*) from pages where status = 'pending'")" = 3 ] && ok "after kill -9 mid-send every page is still pending" || not_ok "kill pending" "$(pr page list)"
TIMEOUT_MS=3000 cfg
prc page flush
[ $RC -eq 0 ] && [ "$(sql "select count(*) from pages where status = 'sent'")" = 3 ] && [ "$(sql "select count(*) from pages")" = 3 ] && ok "the next flush delivers all three, none enqueued twice" || not_ok "after kill" "rc=$RC $OUT"
[ "$(jq -r .body.dedup_key "$LOG" | sort -u | wc -l)" = 3 ] && [ "$(reqs)" = 4 ] && ok "at least once: the interrupted page was sent again (4 requests, 3 keys)" || not_ok "at least once" "requests=$(reqs)"

# 8. Two flushes at once never send the same page.
reset_pages ""
start_pd "" "delay:150"
cfg
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" page flush --json >"$T/f1.json" 2>>"$ALL" &
f1=$!
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" page flush --json >"$T/f2.json" 2>>"$ALL" &
f2=$!
wait "$f1" "$f2"
cat "$T/f1.json" "$T/f2.json" >>"$ALL"
[ "$(reqs)" = 3 ] && [ "$(jq -r .body.dedup_key "$LOG" | sort -u | wc -l)" = 3 ] && ok "two concurrent flushes send each page exactly once" || not_ok "concurrent" "requests=$(reqs)"
[ $(( $(jq .sent "$T/f1.json") + $(jq .sent "$T/f2.json") )) = 3 ] && ok "their sent counts add up to three" || not_ok "concurrent counts"

# 9. Webhook with a bearer token from an owner-only file; resolve sends its event.
fid=$(sql "select finding_id from pages order by id limit 1")
svc=$(sql "select s.name from findings f join services s on s.id = f.service_id where f.id = $fid")
cat >"$T/cfg.json" <<EOF
{"paging": {"min_severity": "high", "backoff_ms": 20, "timeout_ms": 3000,
  "targets": {"pd": {"type": "pagerduty", "url": "http://127.0.0.1:$PORT", "secret_env": "PROFREG_PD_KEY"},
              "hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook", "secret_file": "$T/token"}},
  "default": ["pd"]}}
EOF
start_pd "202"
sed -i "s/127.0.0.1:[0-9]*/127.0.0.1:$PORT/g" "$T/cfg.json"
prc finding resolve "$fid"
[ $RC -eq 0 ] && [[ $OUT == *"1 resolve events, 1 sent"* ]] && ok "finding resolve sends the resolve event" || not_ok "resolve" "rc=$RC $OUT $ERR"
[ "$(jq -r '.body | "\(.event_action) \(.dedup_key)"' "$LOG")" = "resolve $(sql "select dedup_key from pages where finding_id = $fid and event = 'trigger'")" ] && [ "$(jq .valid "$LOG")" = true ] && ok "it resolves the trigger's dedup key at PagerDuty" || not_ok "resolve body" "$(cat "$LOG")"
# A webhook target: page a new finding row by hand through the outbox.
sql "insert into pages (service_id, finding_id, dedup_key, target, event, detail)
     select service_id, finding_id, dedup_key, 'hook', 'trigger', detail from pages
     where finding_id = (select max(finding_id) from pages) and event = 'trigger'" >/dev/null
prc page flush
hook=$(jq -c 'select(.path == "/hook")' "$LOG")
[ $RC -eq 0 ] && [ "$(jq -r '"\(.auth) \(.body.version) \(.body.event)"' <<<"$hook")" = "true 1 trigger" ] && [ -n "$(jq -r .body.text <<<"$hook")" ] && ok "the webhook gets version, event, text and a bearer token" || not_ok "webhook" "rc=$RC $hook $OUT"

# 10. Secret files readable by others are refused with a clear error.
chmod 644 "$T/token"
reset_pages "where target = 'hook'"
prc page flush
[ $RC -eq 3 ] && [[ $OUT == *"secret file '$T/token' is accessible by group or others (mode 0644)"* ]] && [ "$(sql "select status from pages where target = 'hook'")" = pending ] && ok "a 0644 secret file is refused, the page waits" || not_ok "0644" "rc=$RC $OUT"
chmod 600 "$T/token"
unset PROFREG_PD_KEY
reset_pages "where event = 'resolve'"
prc page flush
[ $RC -eq 3 ] && [[ $OUT == *"secret variable 'PROFREG_PD_KEY' is not set or empty"* ]] && ok "a missing routing key variable is named, the page waits" || not_ok "no env" "rc=$RC $OUT"
export PROFREG_PD_KEY=$KEY
prc page flush
[ $RC -eq 0 ] && [ "$(sql "select count(*) from pages where status = 'pending'")" = 0 ] && ok "with the secrets fixed, everything is delivered" || not_ok "fixed" "rc=$RC $OUT"

# 12. A refused page is not lost: flush keeps failing, the next run arms it
# again, `page retry` queues it by hand.
one=$(sql "select min(p.id) from pages p join findings f on f.id = p.finding_id where p.event = 'trigger' and f.status = 'open'")
reset_pages "where id = $one"
start_pd "400"
cfg
prc page flush
[ $RC -eq 3 ] && [ "$(sql "select status from pages where id = $one")" = failed ] && ok "a 400 fails the page (exit 3)" || not_ok "400 again" "rc=$RC $OUT"
start_pd "202"
cfg
prc page flush --json
[ $RC -eq 3 ] && [ "$(jq .failed_open <<<"$OUT")" = 1 ] && [ "$(reqs)" = 0 ] && ok "a later flush with nothing to send still exits 3 while a page of an open finding stands failed" || not_ok "flush after failure" "rc=$RC $OUT"
prc page flush
[ $RC -eq 3 ] && [[ $OUT == *"1 failed page of open findings"* ]] && ok "the flush names how many failed pages of open findings are left" || not_ok "flush names failed" "rc=$RC $OUT"
# The regression resolved by hand in 9 is still in the data: a nightly
# judging a time after the resolve (here the resolve is put before $at;
# a night run again from before it links to the resolved finding) finds
# it again, a new finding, which pages again under the same key.
sql "update findings set resolved_at = timestamptz '$at' - interval '1 hour' where id = $fid" \
	>/dev/null
key1=$(sql "select dedup_key from pages where finding_id = $fid and event = 'trigger' and target = 'pd'")
start_pd "400"
cfg
prc nightly --at "$at"
[ $RC -eq 3 ] && [ "$(reqs)" = 2 ] && [ "$(sql "select status || ' ' || attempts from pages where id = $one")" = "failed 1" ] && ok "the next nightly arms the failed page again, tries it once more, and exits 3" || not_ok "nightly re-arm" "rc=$RC requests=$(reqs) $(sql "select status, attempts from pages where id = $one")"
[ "$(jq -r 'select(.action == "202") | "\(.body.event_action) \(.body.dedup_key)"' "$LOG")" = "trigger $key1" ] &&
	[ "$(sql "select count(*) from pages where dedup_key = '$key1' and target = 'pd'
	          and finding_id = $fid and retired_at is not null and status = 'sent'")" = 2 ] &&
	[ "$(sql "select count(*) from pages p join findings f on f.id = p.finding_id
	          where p.dedup_key = '$key1' and p.target = 'pd' and p.retired_at is null
	          and p.event = 'trigger' and p.status = 'sent' and f.status = 'open' and f.id > $fid")" = 1 ] &&
	ok "the regression resolved by hand and found again pages again; its first page is kept" ||
	not_ok "paged again" "$(cat "$LOG")" "$(sql "select id, finding_id, event, status, retired_at from pages")"
[[ $ERR == *"paging: 1 page not delivered"*"1 failed page of open findings"* ]] && ok "the nightly names the failed page of an open finding" || not_ok "nightly warning" "$ERR"
prc page list
[ "$(grep -c "sent, set aside" <<<"$OUT")" = 2 ] && ok "page list shows the first finding's two pages as set aside" ||
	not_ok "set aside in page list" "$OUT"
[ "$(sql "select count(*) from pages where event = 'trigger' and status = 'sent' and id <> $one")" = "$(sql "select count(*) from pages where event = 'trigger' and id <> $one")" ] && ok "the delivered pages were not sent again" || not_ok "sent untouched"
start_pd "202"
cfg
prc page retry "$one"
[ $RC -eq 0 ] && [[ $OUT == *"1 failed page back to pending"* ]] && [ "$(sql "select status || ' ' || attempts from pages where id = $one")" = "pending 0" ] && ok "page retry ID puts the failed page back to pending" || not_ok "retry id" "rc=$RC $OUT $ERR"
[ "$(sql "select count(*) from audit_log where action = 'page-retry' and object = 'page:$one'")" = 1 ] && ok "page retry is audit-logged" || not_ok "retry audit"
prc page flush
[ $RC -eq 0 ] && [ "$(sql "select status from pages where id = $one")" = sent ] && [ "$(reqs)" = 1 ] && ok "the retried page is delivered by the next flush (exit 0)" || not_ok "retry flush" "rc=$RC $OUT"
prc page retry "$one"
[ $RC -eq 4 ] && [[ $ERR == *"page $one is sent, not failed"* ]] && ok "page retry of a page that is not failed is refused (exit 4)" || not_ok "retry sent" "rc=$RC $ERR"
prc page retry --all-failed --json
[ $RC -eq 0 ] && [ "$(jq .retried <<<"$OUT")" = 0 ] && ok "page retry --all-failed with nothing failed changes nothing" || not_ok "retry all none" "rc=$RC $OUT"
prc page retry
[ $RC -eq 2 ] && prc page retry 1 --all-failed && [ $RC -eq 2 ] && ok "page retry needs one ID or --all-failed" || not_ok "retry usage" "rc=$RC"

# 13. finding resolve: once the resolve is committed, a flush that fails
# (here: the database refuses to record the delivery) is a warning.
fid2=$(sql "select p.finding_id from pages p join findings f on f.id = p.finding_id
            where p.event = 'trigger' and p.status = 'sent' and f.status = 'open' order by p.id desc limit 1")
sql "create function pr_test_fail() returns trigger language plpgsql as \$\$ begin raise exception 'injected failure'; end \$\$;
     create trigger pr_test_fail before update on pages for each row
     when (new.attempts > old.attempts) execute function pr_test_fail()" >/dev/null
start_pd "202"
cfg
prc finding resolve "$fid2"
[ $RC -eq 0 ] && [ "$(sql "select status from findings where id = $fid2")" = resolved ] && ok "finding resolve exits 0 when the flush fails after the resolve" || not_ok "resolve exit" "rc=$RC $OUT $ERR"
[[ $ERR == *"pending in the outbox"* ]] && [ "$(sql "select string_agg(distinct status, ',') from pages where finding_id = $fid2 and event = 'resolve'")" = pending ] && ok "it warns that the resolve event waits in the outbox" || not_ok "resolve warning" "$ERR"
sql "drop trigger pr_test_fail on pages; drop function pr_test_fail()" >/dev/null
prc page flush
[ "$(sql "select string_agg(distinct status, ',') from pages where finding_id = $fid2 and event = 'resolve'")" = sent ] && ok "the next flush sends the resolve event" || not_ok "resolve later" "rc=$RC $OUT"

# 11. The secrets never show up in output, logs or the database.
prc page list --json
prc page list
psql "$DB" -qAt -c "select * from pages" -c "select * from audit_log" -c "select * from runs" >>"$T/db.txt"
if grep -q -e "$KEY" -e "$TOKEN" "$ALL" "$T/db.txt"; then not_ok "secrets leaked" "$(grep -l -e "$KEY" -e "$TOKEN" "$ALL" "$T/db.txt")"; else ok "neither secret appears in stdout, stderr or the database"; fi
grep -q "$KEY" "$T"/pd*.log && ok "(the routing key did reach the server, so the grep can find it)" || not_ok "routing key sent"

for c in "page" "page list" "page flush" "page retry"; do
	# shellcheck disable=SC2086
	run "$PROFREG_BIN" $c --help
	[ $RC -eq 0 ] && ok "$c --help" || not_ok "$c --help"
done
run pr page list --state nope
[ $RC -eq 2 ] && ok "page list --state nope is a usage error" || not_ok "bad state" "rc=$RC"
finish
