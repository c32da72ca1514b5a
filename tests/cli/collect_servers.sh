#!/bin/bash
# Collection from Grafana Pyroscope and Parca, against the loopback
# stand-in tests/servers/profiler_server.c (the wire format of
# pipeline/pyroscope.proto and pipeline/parca.proto, real pprof bytes):
# slots, one capture each, release split by the version label, tenant and
# token, empty slots, idempotence, and each failure mode (401, 5xx,
# hanging, oversized, malformed) as one line with nothing stored and the
# other sources unaffected.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

BUILD=${BUILD:-build}
SRV=$(cd "$(dirname "$0")/../.." && pwd)/$BUILD/servers/profiler_server
T=$PROFREG_TEST_TMP/collect_servers
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT

V1=$PROFREG_TEST_DATA/pprof/demo-v1-cpu.pb.gz
V2=$PROFREG_TEST_DATA/pprof/demo-v2-cpu.pb.gz
# serve NAME PROTOCOL ARGS...: a stand-in, its port in $T/NAME.port, its log in $T/NAME.log.
serve() {
	local name=$1 proto=$2
	shift 2
	"$SRV" --protocol "$proto" --port-file "$T/$name.port" --log "$T/$name.log" \
		--timeout 200 "$@" 2>"$T/$name.err" &
	PIDS="$PIDS $!"
	wait_port "$T/$name.port" || not_ok "start $name" "$(cat "$T/$name.err")"
}
url() { echo "http://127.0.0.1:$(cat "$T/$1.port")"; }

# Slots of one hour on 2026-11-30, 00:00 to 06:00; the first two have no data.
DAY=2026-11-30
EMPTY_MS=$(( $(date -u -d "${DAY}T02:00:00Z" +%s) * 1000 ))
serve pyro pyroscope --profile "$V1" --release v1=$V1 --release v2=$V2 --label service_git_ref \
	--token py-t0ken --tenant acme --empty-before "$EMPTY_MS"
serve parca parca --profile "$V2" --token pa-t0ken
serve py401 pyroscope --profile "$V1" --mode unauth
serve py503 pyroscope --profile "$V1" --mode unavailable
serve pyhang pyroscope --profile "$V1" --mode hang
serve pyhuge pyroscope --profile "$V1" --mode huge
serve pyjunk pyroscope --profile "$V1" --mode garbage
serve pa401 parca --profile "$V1" --mode unauth
serve pa503 parca --profile "$V1" --mode unavailable
serve pajunk parca --profile "$V1" --mode garbage
serve paframe parca --profile "$V1" --mode badframe
serve patrail parca --profile "$V1" --mode trailersonly

printf 'pa-t0ken\n' >"$T/parca.token"
chmod 600 "$T/parca.token"
export PY_TOKEN=py-t0ken

fresh_db collect_servers
pr db init >/dev/null 2>&1
for s in checkout search broken; do
	pr service add $s >/dev/null && pr service enable $s >/dev/null
done
pr service add dormant >/dev/null

cat >"$T/cfg.json" <<EOF
{"limits": {"max_input_bytes": 1048576},
 "collect": {"retries": 1, "retry_s": 1, "budget_s": 120},
 "services": {
  "checkout": {"sources": [{"type": "pyroscope", "url": "$(url pyro)", "tenant": "acme",
                            "auth": "bearer", "secret_env": "PY_TOKEN", "slot_s": 3600}]},
  "search": {"sources": [{"type": "parca", "url": "$(url parca)", "selector": "{comm=\"search\"}",
                          "auth": "bearer", "secret_file": "$T/parca.token", "slot_s": 7200}]},
  "broken": {"sources": [
    {"type": "pyroscope", "url": "$(url py401)", "slot_s": 21600},
    {"type": "pyroscope", "url": "$(url py503)", "slot_s": 21600},
    {"type": "pyroscope", "url": "$(url pyhang)", "slot_s": 21600, "timeout_ms": 1500},
    {"type": "pyroscope", "url": "$(url pyhuge)", "slot_s": 21600},
    {"type": "pyroscope", "url": "$(url pyjunk)", "slot_s": 21600},
    {"type": "parca", "url": "$(url pa401)", "selector": "{}", "slot_s": 21600},
    {"type": "parca", "url": "$(url pa503)", "selector": "{}", "slot_s": 21600},
    {"type": "parca", "url": "$(url pajunk)", "selector": "{}", "slot_s": 21600},
    {"type": "parca", "url": "$(url paframe)", "selector": "{}", "slot_s": 21600},
    {"type": "parca", "url": "$(url patrail)", "selector": "{}", "slot_s": 21600},
    {"type": "pyroscope", "url": "$(url pyro)", "tenant": "acme", "auth": "bearer",
     "secret_env": "PY_TOKEN", "selector": "{service_name=\"broken\"}", "slot_s": 21600}]},
  "dormant": {"sources": [{"type": "pyroscope", "url": "$(url pyro)", "slot_s": 3600}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
WIN=(--since "${DAY}T00:00:00Z" --until "${DAY}T06:00:00Z")

run P collect --service checkout --dry-run "${WIN[@]}" --json
[ $RC -eq 0 ] && [ "$(jq '.plan | length' <<<"$OUT")" = 6 ] && [ ! -s "$T/pyro.log" ] &&
	ok "the dry run plans six one-hour slots and sends nothing" || not_ok "dry run" "rc=$RC $OUT $ERR"

# --- Pyroscope: slots, the version label, tenant and token --------------------
run P collect --service checkout "${WIN[@]}" --json
[ $RC -eq 0 ] && [ "$(jq '.services.checkout.stored' <<<"$OUT")" = 8 ] &&
	[ "$(jq '.services.checkout.empty' <<<"$OUT")" = 2 ] &&
	ok "Pyroscope: four slots with data give a v1 and a v2 capture each; two empty slots store nothing" ||
	not_ok "pyroscope collect" "rc=$RC $OUT $ERR"
q="select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'checkout'"
[ "$(sql "$q and release = 'v1' and tags->>'release_from' = 'label'")" = 4 ] &&
	[ "$(sql "$q and release = 'v2'")" = 4 ] &&
	[ "$(sql "$q and captured_at = '${DAY}T03:00:00Z' and duration_ns = 3600000000000")" = 2 ] &&
	ok "each capture is one slot: its release from service_git_ref, its time and length the slot's" ||
	not_ok "pyroscope rows" "$(sql "select release, captured_at, duration_ns, tags from profiles")"
grep -q '"call":"SelectMergeProfile","end":[0-9]*,"selector":"{service_name=\\"checkout\\",service_git_ref=\\"v2\\"}","start":[0-9]*,"type_id":"process_cpu:cpu:nanoseconds:cpu:nanoseconds"' "$T/pyro.log" &&
	grep -q '"auth":true,"inflight":[0-9]*,"method":"POST","path":"/querier.v1.QuerierService/SelectMergeProfile","tenant":"acme"' "$T/pyro.log" &&
	ok "the request: SelectMergeProfile with the type id, the selector narrowed to a release, the tenant and the token" ||
	not_ok "pyroscope request" "$(head -5 "$T/pyro.log")"
start_ms=$(( $(date -u -d "${DAY}T03:00:00Z" +%s) * 1000 ))
grep -q "\"start\":$start_ms" "$T/pyro.log" && grep -q "\"end\":$(( start_ms + 3600000 ))" "$T/pyro.log" &&
	ok "start and end go in milliseconds" || not_ok "ms" "$(grep Select "$T/pyro.log" | head -2)"
n=$(grep -c '"path"' "$T/pyro.log")
run P collect --service checkout "${WIN[@]}" --json
[ $RC -eq 0 ] && [ "$(jq '.services.checkout.stored' <<<"$OUT")" = 0 ] &&
	[ "$(jq '.services.checkout.already_collected' <<<"$OUT")" = 6 ] && [ "$(grep -c '"path"' "$T/pyro.log")" = "$n" ] &&
	ok "the same window again: no request, nothing stored" || not_ok "idempotent" "$OUT"
[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'dormant'")" = 0 ] &&
	ok "a registered but disabled service is never asked for" || not_ok "dormant"

# --- Parca ----------------------------------------------------------------------
run P collect --service search "${WIN[@]}" --json
[ $RC -eq 0 ] && [ "$(jq '.services.search.stored' <<<"$OUT")" = 3 ] &&
	grep -q '"query":"parca_agent:samples:count:cpu:nanoseconds:delta{comm=\\"search\\"}"' "$T/parca.log" &&
	ok "Parca: three two-hour slots, a merge query of type and selector, the token from a 0600 file" ||
	not_ok "parca" "rc=$RC $OUT $ERR $(head -3 "$T/parca.log")"
[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'search' and format = 'pprof' and release = 'unknown' and sample_count > 0")" = 3 ] &&
	ok "its gzipped pprof bytes are ingested; no label, no deploy: release 'unknown'" ||
	not_ok "parca rows" "$(sql "select release, format, sample_count from profiles")"

# --- every failure mode: one line each, the good source stored -------------------
run P collect --service broken "${WIN[@]}"
stored=$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'broken'")
[ $RC -eq 3 ] && [ "$stored" = 2 ] && [ "$(grep -c . <<<"$ERR")" = 10 ] &&
	ok "ten failing sources and a good one: the good one stored (v1 and v2), ten one-line failures, exit 3" ||
	not_ok "broken" "rc=$RC stored=$stored $OUT $ERR"
line() { grep -F "$(url "$1")" <<<"$ERR" | head -n 1; }
[[ $(line py401) == *"HTTP 401 unauthenticated: invalid credentials"* ]] &&
	[[ $(line pa401) == *"gRPC status 16 UNAUTHENTICATED"* ]] && ok "401: the Connect code and the gRPC status" ||
	not_ok "401" "$ERR"
[[ $(line py503) == *"HTTP 503 unavailable"* ]] && [[ $(line pa503) == *"gRPC status 14 UNAVAILABLE"* ]] &&
	[ "$(grep -c '"path"' "$T/py503.log")" = 2 ] &&
	ok "5xx and UNAVAILABLE: tried once more (retries 1), then reported" || not_ok "503" "$ERR $(cat "$T/py503.log")"
[[ $(line pyhang) == *"cpu slot ${DAY}T00:00:00Z: pyroscope"*"within"*"(timeout)"* ]] &&
	ok "a server that hangs: a timeout, naming the type and slot that failed" || not_ok "hang" "$ERR"
[[ $(line pyhuge) == *"larger than the input limit of 1048576 bytes"* ]] && ok "oversized: refused at the input limit" ||
	not_ok "huge" "$ERR"
[[ $(line pyjunk) == *"is text, not a protobuf profile"* ]] &&
	[[ $(line pajunk) == *"malformed QueryResponse"* ]] &&
	[[ $(line paframe) == *"malformed gRPC-Web answer: a frame of"*"runs past the end"* ]] &&
	ok "malformed answers: text for a profile, a QueryResponse that does not decode, a frame past the end" ||
	not_ok "malformed" "$ERR"
[[ $(line patrail) == *"gRPC status 7 PERMISSION_DENIED: tenant not allowed"* ]] &&
	ok "a status sent in the HTTP headers alone (trailers-only) is read as the status" ||
	not_ok "trailers-only" "$ERR"
[[ $ERR != *py-t0ken* ]] && [[ $ERR != *pa-t0ken* ]] && [[ $OUT != *t0ken* ]] &&
	ok "no token is ever printed" || not_ok "token printed"

# --- a server that quotes the token back in its refusal: the token is masked -------
serve paecho parca --profile "$V1" --mode echoauth
serve pyecho pyroscope --profile "$V1" --mode echoauth
cat >"$T/echo.json" <<EOF
{"collect": {"retries": 0},
 "services": {"broken": {"sources": [
  {"type": "parca", "url": "$(url paecho)", "selector": "{}", "slot_s": 21600, "auth": "bearer",
   "secret_file": "$T/parca.token"},
  {"type": "pyroscope", "url": "$(url pyecho)", "slot_s": 21600, "auth": "bearer",
   "secret_env": "PY_TOKEN"}]}}}
EOF
# A slot of several versions is a request a version: the budget is checked
# before each, and each is cut to the time left, so a slow server cannot
# hold the run far past the budget (eight versions, 0.8 s an answer).
rels=()
for i in 1 2 3 4 5 6 7 8; do rels+=(--release "v$i=$V1"); done
serve pyslow pyroscope --profile "$V1" "${rels[@]}" --label service_git_ref --delay-ms 800
cat >"$T/slow.json" <<EOF
{"collect": {"retries": 0, "budget_s": 2},
 "services": {"broken": {"sources": [
  {"type": "pyroscope", "url": "$(url pyslow)", "slot_s": 21600, "timeout_ms": 1500}]}}}
EOF
t0=$(date +%s)
run timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/slow.json" collect \
	--service broken --since "${DAY}T00:00:00Z" --until "${DAY}T06:00:00Z"
t1=$(date +%s)
[ $RC -eq 3 ] && [ $((t1 - t0)) -lt 6 ] && grep -q "of 8 versions not fetched: the collection budget ran out" <<<"$ERR" &&
	ok "a slow server's versions stop at the budget ($((t1 - t0)) s for 2 s)" ||
	not_ok "slow versions" "rc=$RC $((t1 - t0)) s $ERR"

# The budget is the collection's, not the wait for another's lock: a
# nightly that waits 7 s for a collection of every service still has its
# 10 s for four slots of a server answering in 1 s (about 5 s), where a
# budget counted from before the wait would cut them.
DAY_MS=$(( $(date -u -d "${DAY}T00:00:00Z" +%s) * 1000 ))
serve pyslow2 pyroscope --profile "$V1" --release "v1=$V1" --release "v2=$V2" --label service_git_ref \
	--delay-ms 1000 --empty-before "$DAY_MS"
cat >"$T/slow2.json" <<EOF
{"collect": {"retries": 0, "budget_s": 10},
 "services": {"broken": {"types": ["cpu"], "sources": [
  {"type": "pyroscope", "url": "$(url pyslow2)", "slot_s": 21600, "timeout_ms": 3000}]}}}
EOF
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-collect')), pg_sleep(7)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted
		and database = (select oid from pg_database where datname = current_database())")" -ge 1 ] && break
	sleep 0.1
done
run timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/slow2.json" nightly \
	--service broken --at "${DAY}T06:00:00Z"
wait "$holder" 2>/dev/null
[[ $ERR != *"budget"* ]] && [[ $ERR != *"holds the lock"* ]] &&
	[ "$(sql "select count(*) from collect_slots where source like '%$(url pyslow2)%'")" = 4 ] &&
	[ "$(grep -c '"call":"SelectMergeProfile"' "$T/pyslow2.log")" = 5 ] &&
	ok "the collection budget starts once the lock is held, not while waiting for it" ||
	not_ok "budget after the lock" "rc=$RC $ERR"

# A 200 with no body and not of type application/proto (a proxy's empty
# page) is no empty profile: a failure, and the slot is asked again later.
serve pyempty pyroscope --profile "$V1" --mode emptyhtml
cat >"$T/empty.json" <<EOF
{"collect": {"retries": 0},
 "services": {"broken": {"sources": [
  {"type": "pyroscope", "url": "$(url pyempty)", "slot_s": 21600}]}}}
EOF
run pr --config "$T/empty.json" collect --service broken "${WIN[@]}"
[ $RC -eq 3 ] && [[ $ERR == *"an empty answer of type 'text/html', not an empty message (application/proto)"* ]] &&
	[ "$(sql "select count(*) from collect_slots where source like '%$(url pyempty)%'")" = 0 ] &&
	ok "an empty page that is not a protobuf answer fails the slot, which is asked again" ||
	not_ok "empty html" "rc=$RC $ERR $(sql "select source, outcome from collect_slots")"

# Series with the version label beside series without it: those without
# are fetched too (selector service_git_ref=""), as release 'unknown',
# never the latest deploy's (the pods of a release from before the label
# would have joined the new one); they were skipped, their samples never
# collected and the slot stored. A deploy of v1 is recorded to show it.
# A value that cannot be a release (a quote) fails the slot, naming its
# length, where it was skipped.
serve pymix pyroscope --profile "$V1" --release "v1=$V1" --release "=$V2" --label service_git_ref \
	--empty-before "$(($(date -u -d "${DAY}T05:00:00Z" +%s) * 1000))"
serve pybad pyroscope --profile "$V1" --release "v1=$V1" --release "v2 \"rc\"=$V2" \
	--label service_git_ref
pr --quiet service add mixed --enable
pr --quiet service add mixbad --enable
sql "insert into deploys (service_id, release, deployed_at)
	select id, 'v1', '${DAY}T01:00:00Z' from services where name = 'mixed'" >/dev/null
cat >"$T/mix.json" <<EOF
{"collect": {"retries": 0},
 "services": {"mixed": {"types": ["cpu"], "sources": [
  {"type": "pyroscope", "url": "$(url pymix)", "slot_s": 3600, "version_label": "service_git_ref"}]},
  "mixbad": {"types": ["cpu"], "sources": [
  {"type": "pyroscope", "url": "$(url pybad)", "slot_s": 21600, "version_label": "service_git_ref"}]}}}
EOF
run pr --config "$T/mix.json" collect --service mixed "${WIN[@]}"
q="select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'mixed'"
[ $RC -eq 0 ] && [ "$(sql "$q and release = 'v1'")" = 1 ] &&
	[ "$(sql "$q and release = 'unknown' and tags->>'release_from' = 'unlabelled'")" = 1 ] &&
	grep -q 'service_git_ref=\\"\\"}' "$T/pymix.log" &&
	ok "Pyroscope: series without the version label beside labelled ones are collected too" ||
	not_ok "unlabelled series" "rc=$RC $ERR $(sql "select release, tags from profiles p
		join services s on s.id = p.service_id where s.name = 'mixed'")"
run pr --config "$T/mix.json" collect --service mixbad "${WIN[@]}"
[ $RC -eq 3 ] &&
	[[ $ERR == *"a series' value of label 'service_git_ref' (7 bytes) cannot be a release"* ]] &&
	[[ $ERR != *'"rc"'* ]] &&
	[ "$(sql "select count(*) from collect_slots where source like '%$(url pybad)%'
		and outcome = 'stored'")" = 0 ] &&
	ok "Pyroscope: a version that cannot be a release fails the slot, by its length" ||
	not_ok "bad version value" "rc=$RC $ERR $(sql "select source, outcome from collect_slots
		where source like '%$(url pybad)%'")"

run pr --config "$T/echo.json" collect --service broken "${WIN[@]}"
detail=$(sql "select detail::text from runs order by id desc limit 1")
[ $RC -eq 3 ] && [[ $(line paecho) == *"gRPC status 16 UNAUTHENTICATED: invalid token: <15 bytes>"* ]] &&
	[[ $(line pyecho) == *"invalid token: <15 bytes>"* ]] &&
	[[ $ERR != *t0ken* ]] && [[ $detail == *"invalid token: <15 bytes>"* ]] && [[ $detail != *t0ken* ]] &&
	ok "a token quoted back in a refusal (a gRPC trailer, a Connect error) is left out, on screen and in the run" ||
	not_ok "token quoted back" "rc=$RC $ERR $detail"

# The same refusal under a 2xx status that is not 200: quoted, and masked all the same.
serve py203 pyroscope --profile "$V1" --mode echoauth203
cat >"$T/echo203.json" <<EOF
{"collect": {"retries": 0},
 "services": {"broken": {"sources": [
  {"type": "pyroscope", "url": "$(url py203)", "slot_s": 21600, "auth": "bearer",
   "secret_env": "PY_TOKEN"}]}}}
EOF
run pr --config "$T/echo203.json" collect --service broken "${WIN[@]}"
[ $RC -eq 3 ] && [[ $(line py203) == *"invalid token: <15 bytes>"* ]] && [[ $ERR != *t0ken* ]] &&
	ok "a token quoted back under a 2xx status that is not 200 is left out too" ||
	not_ok "token quoted back under 203" "rc=$RC $ERR"

# A server that answers the Series call with the token as a version (an
# echo, a proxy quoting the request): the value would be the release of
# the slot's capture, stored and shown in every report. The slot fails,
# the value unquoted, nothing stored; it is asked again next time.
serve pyrel pyroscope --profile "$V1" --release "py-t0ken=$V1" --release "v9=$V2" \
	--label service_git_ref --token py-t0ken
cat >"$T/rel.json" <<EOF
{"collect": {"retries": 0},
 "services": {"broken": {"sources": [
  {"type": "pyroscope", "url": "$(url pyrel)", "slot_s": 21600, "auth": "bearer",
   "secret_env": "PY_TOKEN"}]}}}
EOF
run pr --config "$T/rel.json" collect --service broken "${WIN[@]}"
detail=$(sql "select detail::text from runs order by id desc limit 1")
[ $RC -eq 3 ] &&
	[[ $(line pyrel) == *"a value of label 'service_git_ref' holds the credentials this source sends: not used as a release"* ]] &&
	[[ $ERR != *t0ken* ]] && [[ $OUT != *t0ken* ]] && [[ $detail != *t0ken* ]] &&
	[ "$(sql "select count(*) from profiles where release like '%t0ken%' or commit_sha like '%t0ken%'")" = 0 ] &&
	[ "$(sql "select count(*) from collect_slots where source like '%$(url pyrel)%'")" = 0 ] &&
	ok "a version label holding the token is no release: the slot fails, nothing stored or shown" ||
	not_ok "token as a release" "rc=$RC $ERR" "$(sql "select release from profiles where release like '%t0ken%'")"

# Basic credentials quoted back decoded ("user:password"): the password is masked.
serve pabasic parca --profile "$V1" --mode echobasic
serve pybasic pyroscope --profile "$V1" --mode echobasic
cat >"$T/basic.json" <<EOF
{"collect": {"retries": 0},
 "services": {"broken": {"sources": [
  {"type": "parca", "url": "$(url pabasic)", "selector": "{}", "slot_s": 21600, "auth": "basic",
   "username": "scraper", "secret_env": "PY_TOKEN"},
  {"type": "pyroscope", "url": "$(url pybasic)", "slot_s": 21600, "auth": "basic",
   "username": "scraper", "secret_env": "PY_TOKEN"}]}}}
EOF
run pr --config "$T/basic.json" collect --service broken "${WIN[@]}"
detail=$(sql "select detail::text from runs order by id desc limit 1")
[ $RC -eq 3 ] && [[ $(line pabasic) == *"with password <29 bytes>"* ]] &&
	[[ $(line pybasic) == *"with password <29 bytes>"* ]] &&
	[[ $ERR != *t0ken* ]] && [[ $detail != *t0ken* ]] &&
	ok "a Basic password quoted back decoded is left out, on screen and in the run" ||
	not_ok "Basic password quoted back" "rc=$RC $ERR $detail"

# --- a secret never travels in cleartext to a host that is not loopback ----------
# (a dry run: nothing is sent whatever happens)
cat >"$T/clear.json" <<EOF
{"services": {"broken": {"sources": [{"type": "pprof_http", "auth": "bearer", "secret_env": "PY_TOKEN",
  "targets": ["127.0.0.1:9", "203.0.113.9:6060"]}]}}}
EOF
run pr --config "$T/clear.json" collect --service broken --dry-run --json
[ $RC -eq 3 ] && [ "$(jq -r '[.plan[].target] | join(" ")' <<<"$OUT")" = "127.0.0.1:9" ] &&
	[[ $ERR == *"target '203.0.113.9:6060': not contacted: its credentials would cross the network in cleartext"* ]] &&
	ok "a target that would get a token over plain http off the host is refused before any request" ||
	not_ok "cleartext" "rc=$RC $OUT $ERR"

# --- a bad file_sd file is one failure; the other files' targets are still planned ---
# (a dry run: nothing is sent). The bad files come first: reading stops at none of them.
printf '[{"targets": ["127.0.0.1:7"]}' >"$T/sd-cut.json"
printf '[{"targets": ["127.0.0.1:8", "127.0.0.5:8"]}]\n' >"$T/sd-good.json"
cat >"$T/sd.json" <<EOF
{"services": {"broken": {"sources": [{"type": "pprof_http",
  "file_sd": ["$T/sd-missing.json", "$T/sd-cut.json", "$T/sd-good.json"]}]}}}
EOF
run pr --config "$T/sd.json" collect --service broken --dry-run --json
[ $RC -eq 3 ] && [ "$(jq -r '[.plan[].target] | unique | join(" ")' <<<"$OUT")" = "127.0.0.1:8 127.0.0.5:8" ] &&
	[ "$(jq '.services.broken.failed' <<<"$OUT")" = 2 ] &&
	[[ $ERR == *"'$T/sd-missing.json'"* ]] && [[ $ERR == *"file_sd '$T/sd-cut.json': line "* ]] &&
	ok "a missing and a cut file_sd file: a failure each, exit 3, the good file after them still planned" ||
	not_ok "bad file_sd first" "rc=$RC $OUT $ERR"

# A server that echoes the token into the profile itself (a function name):
# stored, it would be in the blob, the rows and every report. The slot
# fails without quoting it, nothing is stored, and it is asked again.
pr service add tokfile >/dev/null && pr service enable tokfile >/dev/null
printf 'main;serve;auth_py-t0ken_check 40\nmain;serve;work 60\n' >"$T/tok.folded"
pr ingest --service tokfile --release x "$T/tok.folded" >/dev/null
pr export "service=tokfile,release=x" --format pprof --out "$T/tok.pb.gz"
serve pytok pyroscope --profile "$T/tok.pb.gz" --token py-t0ken
cat >"$T/tok.json" <<EOF
{"collect": {"retries": 0},
 "services": {"broken": {"sources": [
  {"type": "pyroscope", "url": "$(url pytok)", "slot_s": 21600, "auth": "bearer",
   "secret_env": "PY_TOKEN"}]}}}
EOF
before=$(sql "select count(*) from profiles")
run pr --config "$T/tok.json" collect --service broken "${WIN[@]}"
detail=$(sql "select detail::text from runs order by id desc limit 1")
[ $RC -eq 3 ] && [ -s "$T/tok.pb.gz" ] &&
	[[ $(line pytok) == *"the profile holds the credentials this source sends: not stored"* ]] &&
	[[ $ERR != *t0ken* ]] && [[ $OUT != *t0ken* ]] && [[ $detail != *t0ken* ]] &&
	[ "$(sql "select count(*) from profiles")" = "$before" ] &&
	[ "$(sql "select count(*) from collect_slots where source like '%$(url pytok)%'")" = 0 ] &&
	ok "a profile holding the token is not stored: the slot fails, the token not shown" ||
	not_ok "token in a function name" "rc=$RC $OUT $ERR" "$(sql "select count(*) from profiles")"

# --- configuration mistakes are refused before anything runs ---------------------
bad() { # bad JSON-SOURCE EXPECTED
	printf '{"services": {"x": {"sources": [%s]}}}\n' "$1" >"$T/bad.json"
	run pr --config "$T/bad.json" config check
	[ $RC -eq 2 ] && [[ $ERR == *"$2"* ]]
}
bad '{"type": "s3", "bucket": "b"}' 'object-store drops are "s3_prefix"' &&
	bad '{"type": "pyroscope", "url": "http://pyroscope.example:4040", "secret_env": "X", "auth": "bearer"}' \
		'needs an https:// URL' &&
	bad '{"type": "pprof_http"}' 'needs "targets" or "file_sd"' &&
	bad '{"type": "pprof_http", "targets": ["http://h:1/x"]}' 'host:port' &&
	bad '{"type": "parca", "url": "http://127.0.0.1:1"}' 'needs "selector"' &&
	bad '{"type": "pyroscope", "url": "http://127.0.0.1:1", "tenant": "a\nb"}' 'tenant: expected printable' &&
	bad '{"type": "pprof_http", "targets": ["h:1"], "typo": 1}' 'sources[0].typo: unknown key' &&
	ok "config check refuses s3 (it is s3_prefix), a secret over plain http, missing targets, a URL as a target, a bad tenant, unknown keys" ||
	not_ok "config errors" "rc=$RC $ERR"

finish
