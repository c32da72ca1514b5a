#!/bin/bash
# Collection from real Go programs with net/http/pprof (tests/go/pprofdemo,
# built here with Debian's golang-go): targets from a static list and from
# Prometheus file_sd, release and commit from target labels and from the
# deploy history, the v2 regression found in the collected captures,
# idempotence, the dry run, labels never stored, secrets never printed,
# and every failure mode of a target: busy, WriteTimeout, 401, 5xx,
# hanging, oversized, bad TLS, malformed; each a one-line reason, nothing
# stored, the other targets unaffected; a post-deploy capture of a host
# takes its regular slot (the next collect in the slot asks it nothing).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

# A live endpoint gives one capture per target in the current slot; the
# test's slots are whole days, and a test that would cross midnight (UTC)
# starts after it, so that "the same slot again" means what it says.
left=$((86400 - $(date -u +%s) % 86400))
[ $left -lt 300 ] && sleep $((left + 1))

T=$PROFREG_TEST_TMP/collect_go
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT

if go_build "$PROFREG_BUILD/go" pprofdemo "$T/pprofdemo" 2>"$T/build.err"; then
	ok "the Go demo service builds with golang-go, without a network"
else
	not_ok "go build" "$(cat "$T/build.err")"
	finish
	exit 1
fi

# start NAME ADDR ARGS...: a demo service on ADDR (port 0), its port in $T/NAME.port.
# Without asynchronous preemption: on a loaded machine its signals would
# pull the loops' samples into runtime.asyncPreempt (tests/go/pprofdemo).
start() {
	local name=$1 addr=$2
	shift 2
	GODEBUG=asyncpreemptoff=1 "$T/pprofdemo" -addr "$addr:0" -port-file "$T/$name.port" -lifetime 240s "$@" \
		>"$T/$name.log" 2>&1 &
	PIDS="$PIDS $!"
}
port() { cat "$T/$1.port"; }

# Four v1 hosts now, three v2 hosts later, each its own loopback address.
V1PIDS=""
for i in 2 3 4 5; do
	start v1-$i 127.0.0.$i -version v1
	V1PIDS="$V1PIDS $!"
done
for n in v1-2 v1-3 v1-4 v1-5; do wait_port "$T/$n.port" || not_ok "start $n"; done

fresh_db collect_go
pr db init >/dev/null 2>&1
pr service add checkout >/dev/null && pr service enable checkout >/dev/null
pr service add idle >/dev/null

COMMIT1=1111111111111111111111111111111111111111
COMMIT2=2222222222222222222222222222222222222222
sd() { # sd RELEASE COMMIT HOSTS...: a file_sd group
	local rel=$1 commit=$2 first=1
	shift 2
	printf '{"targets": ['
	for n in "$@"; do
		[ $first -eq 1 ] || printf ', '
		first=0
		printf '"127.0.0.%s:%s"' "${n#*-}" "$(port "$n")"
	done
	printf '], "labels": {"release": "%s", "commit": "%s", "job": "checkout"}}' "$rel" "$commit"
}
printf '[%s]\n' "$(sd v1 $COMMIT1 v1-2 v1-3 v1-4 v1-5)" >"$T/sd.json"

config() { # config FILE_SD: the test's configuration
	cat >"$T/cfg.json" <<EOF
{"analysis": {"min_captures": 4},
 "collect": {"cooldown_s": 0, "max_concurrent": 4, "budget_s": 120},
 "services": {"checkout": {"types": ["cpu", "heap"],
                           "sources": [{"type": "pprof_http", "file_sd": ["$1"], "seconds": 8,
                                        "slot_s": 86400}]},
              "idle": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.1:9"]}]}}}
EOF
}
config "$T/sd.json"
P() { pr --config "$T/cfg.json" "$@"; }

# --- the dry run contacts no one -------------------------------------------
run P collect --dry-run
[ $RC -eq 0 ] && [[ $OUT == *"8 request(s) planned"* ]] && [[ $OUT == *"127.0.0.2:"* ]] &&
	[ "$(sql "select count(*) from profiles")" = 0 ] && [ "$(sql "select count(*) from runs")" = 0 ] &&
	[ "$(sql "select count(*) from collect_slots")" = 0 ] &&
	ok "collect --dry-run prints the plan (targets, windows, 8 requests) and stores nothing" ||
	not_ok "dry run" "rc=$RC $OUT $ERR"
run P collect --dry-run --json
[ $RC -eq 0 ] && [ "$(jq '.plan | length' <<<"$OUT")" = 8 ] &&
	[ "$(jq '[.plan[] | select(.source == "pprof_http" and .type == "cpu")] | length' <<<"$OUT")" = 4 ] &&
	ok "the plan as JSON: one entry per target and type" || not_ok "dry run json" "$OUT"

# --- collecting: labels give release and commit ------------------------------
run P collect
[ $RC -eq 0 ] && [[ $OUT == *"8 stored, 0 already stored, 0 failed"* ]] &&
	ok "collect stores a CPU and a heap capture of each of 4 targets" || not_ok "collect" "rc=$RC $OUT $ERR"
[ "$(sql "select count(*) from profiles where release = 'v1' and commit_sha = '$COMMIT1'")" = 8 ] &&
	[ "$(sql "select count(distinct host) from profiles")" = 4 ] &&
	[ "$(sql "select count(*) from profiles where tags->>'release_from' = 'label' and tags->>'source' = 'pprof_http'")" = 8 ] &&
	ok "release and commit come from the file_sd labels; the host from the target" ||
	not_ok "labels" "$(sql "select release, commit_sha, host, tags from profiles")"
[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'idle'")" = 0 ] &&
	ok "a service that is not enabled is never contacted" || not_ok "disabled service"
cpu_dur=$(sql "select min(duration_ns) from profiles where profile_type = 'cpu'")
[ "${cpu_dur:-0}" -ge 7900000000 ] && ok "the CPU captures are 8 s profiles (seconds=8)" ||
	not_ok "cpu duration" "$cpu_dur"

run P collect
[ $RC -eq 0 ] && [[ $OUT == *"0 stored"*"0 requests"* ]] && [[ $OUT == *"8 collected before"* ]] &&
	[ "$(sql "select count(*) from profiles")" = 8 ] &&
	ok "collecting the same window again asks no one and stores nothing new" ||
	not_ok "idempotent" "rc=$RC $OUT"

# --- the v2 hosts: the regression is in the collected captures -----------------
# (the v1 hosts are done: two cores give the v2 hosts more samples without them)
for p in $V1PIDS; do kill "$p" 2>/dev/null; done
for i in 6 7 8; do start v2-$i 127.0.0.$i -version v2; done
for n in v2-6 v2-7 v2-8; do wait_port "$T/$n.port" || not_ok "start $n"; done
printf '[%s, %s]\n' "$(sd v1 $COMMIT1 v1-2 v1-3 v1-4 v1-5)" "$(sd v2 $COMMIT2 v2-6 v2-7 v2-8)" >"$T/sd.json"
run P collect
[ $RC -eq 0 ] && [[ $OUT == *"6 stored"* ]] && [[ $OUT == *"8 collected before"* ]] &&
	ok "new targets in the file_sd file are collected, the others are not asked again" ||
	not_ok "v2 collect" "rc=$RC $OUT $ERR"
# computeTax's self share, averaged over a release's CPU captures, in percent.
share() {
	sql "select round(100 * avg(coalesce(pf.self_share, 0))::numeric, 1)
	       from profiles p
	       left join profile_functions pf on pf.profile_id = p.id
	        and pf.function_id in (select id from functions where name = 'main.computeTax')
	      where p.release = '$1' and p.profile_type = 'cpu'"
}
s1=$(share v1)
s2=$(share v2)
# v1: 3 of 12 cost units (25%); v2: 6 of 15 (40%). The machine may be busy,
# so the captures are small (a few hundred samples): a margin well inside
# the difference, well outside the noise.
awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(b > a * 1.15 && b > a + 4) }' &&
	ok "the collected captures show v2's regression: main.computeTax ${s1}% of CPU in v1, ${s2}% in v2" ||
	not_ok "regression visible" "v1 $s1 v2 $s2"
run P analyze --service checkout --release v2 --all-tests --json
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.function == "main.computeTax" and .delta > 0)] | length' <<<"$OUT")" = 1 ] &&
	ok "analyze tests main.computeTax of v2 against the v1 baseline and sees it rise" ||
	not_ok "analyze" "rc=$RC $(head -c 1500 <<<"$OUT") $ERR"

# --- labels of the profiles never reach the index ------------------------------
pg_dump "$DB" >"$T/dump.sql" 2>/dev/null
! grep -q 4111111111111111 "$T/dump.sql" && ! grep -q card_number "$T/dump.sql" &&
	ok "pprof labels (a card number, span ids) are nowhere in the database" ||
	not_ok "labels stored"

# --- release from the deploy history, else unknown ------------------------------
start plain 127.0.0.9 -version v1
wait_port "$T/plain.port"
cat >"$T/cfg2.json" <<EOF
{"collect": {"cooldown_s": 0},
 "services": {"pay": {"types": ["heap"],
                      "sources": [{"type": "pprof_http", "targets": ["127.0.0.9:$(port plain)"],
                                   "slot_s": 60}]}}}
EOF
pr service add pay >/dev/null && pr service enable pay >/dev/null
run pr --config "$T/cfg2.json" collect --service pay
[ $RC -eq 0 ] && [ "$(sql "select release || ' ' || (commit_sha is null)::text || ' ' || (tags->>'release_from') from profiles p join services s on s.id = p.service_id where s.name = 'pay'")" = "unknown true none" ] &&
	ok "a capture whose release nothing says is stored as release 'unknown'" ||
	not_ok "unknown release" "rc=$RC $OUT $ERR"
run pr --config "$T/cfg2.json" post-deploy --service pay --release r9 \
	--commit 9999999999999999999999999999999999999999 --wait 100s --min-captures 1
[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'pay' and release = 'r9' and commit_sha = '9999999999999999999999999999999999999999' and tags->>'release_from' = 'deploy'")" = 1 ] &&
	ok "post-deploy collects while it waits, and the capture is the deploy's release and commit" ||
	not_ok "post-deploy release" "rc=$RC $OUT $ERR $(sql "select release, tags from profiles")"

# --- every failure mode, in one run: one line each, the good target stored -------
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 \
	-subj /CN=127.0.0.18 -addext subjectAltName=IP:127.0.0.18 >/dev/null 2>&1
start good 127.0.0.10 -version v1
start busy 127.0.0.11 -version v1 -access-log "$T/busy.access"
start wto 127.0.0.12 -version v1 -write-timeout 2s
start auth 127.0.0.13 -mode auth -token s3cret-t0ken
start e503 127.0.0.14 -mode fail503
start hang 127.0.0.15 -mode hang
start huge 127.0.0.16 -mode huge
start junk 127.0.0.17 -mode garbage
start tls 127.0.0.18 -version v1 -tls-cert "$T/cert.pem" -tls-key "$T/key.pem"
for n in good busy wto auth e503 hang huge junk tls; do wait_port "$T/$n.port" || not_ok "start $n"; done
a() { echo "127.0.0.$1:$(port "$2")"; }
cat >"$T/cfg3.json" <<EOF
{"limits": {"max_input_bytes": 1048576},
 "collect": {"cooldown_s": 0, "max_concurrent": 8, "retries": 0, "budget_s": 60},
 "services": {"fleet": {"types": ["cpu"], "sources": [
   {"type": "pprof_http", "seconds": 3, "timeout_ms": 1500, "connect_timeout_ms": 1000,
    "slot_s": 86400,
    "targets": ["$(a 10 good)", "$(a 11 busy)", "$(a 12 wto)", "$(a 14 e503)",
                "$(a 15 hang)", "$(a 16 huge)", "$(a 17 junk)"]},
   {"type": "pprof_http", "seconds": 3, "targets": ["$(a 13 auth)"], "slot_s": 86400,
    "auth": "bearer", "secret_env": "DEMO_TOKEN"},
   {"type": "pprof_http", "scheme": "https", "seconds": 3, "targets": ["$(a 18 tls)"],
    "slot_s": 86400}]}}}
EOF
pr service add fleet >/dev/null && pr service enable fleet >/dev/null
# A CPU profile already running on the busy host: the collect starts once
# the host has logged that request (a fixed sleep lost the race on a
# loaded machine), and a moment later, when the profiler holds it.
curl -s -o /dev/null "http://$(a 11 busy)/debug/pprof/profile?seconds=10" &
CURL=$!
for _ in $(seq 100); do grep -q profile "$T/busy.access" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
export DEMO_TOKEN=wrong-t0ken-value
run pr --config "$T/cfg3.json" collect --service fleet
kill $CURL 2>/dev/null
stored=$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'fleet'")
[ $RC -eq 3 ] && [[ $OUT == *"1 stored"*"8 failed"* ]] && [ "$stored" = 1 ] &&
	ok "one run over nine targets: the good one stored, eight failed, exit 3" ||
	not_ok "failure run" "rc=$RC stored=$stored $OUT $ERR"
fails() { grep -c . <<<"$ERR"; }
line() { grep -F "$1" <<<"$ERR" | head -n 1; }
[ "$(fails)" = 8 ] && ok "each failure is one line on standard error" || not_ok "lines" "$ERR"
[[ $(line "$(a 11 busy)") == *"CPU profiler is busy"*"already in use"* ]] &&
	ok "busy: a CPU profile already running (HTTP 500) is named as such" || not_ok "busy" "$ERR"
[[ $(line "$(a 12 wto)") == *"at or above the server's WriteTimeout"*"lower \"seconds\""* ]] &&
	ok "WriteTimeout: HTTP 400 says to lower seconds" || not_ok "wto" "$ERR"
[[ $(line "$(a 13 auth)") == *"HTTP 401"*"refused the credentials"* ]] && [[ $ERR != *wrong-t0ken* ]] &&
	[[ $OUT != *wrong-t0ken* ]] &&
	ok "401: refused credentials, and the token is never printed" || not_ok "401" "$ERR"
[[ $(line "$(a 14 e503)") == *"HTTP 503"*"overloaded"* ]] && ok "5xx: the status and the first line of its body" ||
	not_ok "503" "$ERR"
[[ $(line "$(a 15 hang)") == *"within"*"(timeout)"* ]] && ok "hanging: a timeout, bounded" || not_ok "hang" "$ERR"
[[ $(line "$(a 16 huge)") == *"larger than the input limit of 1048576 bytes"* ]] &&
	ok "oversized: refused at the input limit" || not_ok "huge" "$ERR"
[[ $(line "$(a 17 junk)") == *"pprof/profile?seconds=3': truncated gzip stream"* ]] &&
	ok "malformed: the parser's one-line reason, naming the target's URL" ||
	not_ok "junk" "$ERR"
[[ $(line "127.0.0.18") == *"TLS"* || $(line "127.0.0.18") == *"certificate"* ]] &&
	ok "bad TLS: an unknown certificate is refused" || not_ok "tls" "$ERR"
[ "$(sql "select count(*) from collect_slots s join services v on v.id = s.service_id where v.name = 'fleet'")" = 1 ] &&
	ok "only the target that answered is recorded: the others are tried again next time" ||
	not_ok "slots" "$(sql "select target from collect_slots")"
run pr run show "$(sql "select max(id) from runs where kind = 'collect'")" --json
[ "$(jq '.detail.services.fleet.failures | length' <<<"$OUT")" = 8 ] &&
	[[ $(jq -r '.detail.services.fleet.failures[].target' <<<"$OUT") == *"$(a 14 e503)"* ]] &&
	ok "the run records each failed target with its reason" || not_ok "run record" "$OUT"

# The retry: the busy host recovers within the budget; the right token works; the CA file fixes TLS.
curl -s -o /dev/null "http://$(a 11 busy)/debug/pprof/profile?seconds=3" &
CURL=$!
sleep 0.5
sed -e 's/"retries": 0/"retries": 3, "retry_s": 2/' -e "s|\"scheme\": \"https\",|\"scheme\": \"https\", \"ca_file\": \"$T/cert.pem\",|" \
	"$T/cfg3.json" >"$T/cfg4.json"
export DEMO_TOKEN=s3cret-t0ken
run pr --config "$T/cfg4.json" collect --service fleet
wait $CURL 2>/dev/null
[[ $OUT == *"3 stored"* ]] && [[ $ERR != *"$(a 11 busy)"* ]] && [[ $ERR != *"$(a 13 auth)"* ]] &&
	[[ $ERR != *127.0.0.18* ]] && [[ $ERR != *s3cret* ]] &&
	ok "a busy profiler is tried again later within the budget; the right token and the CA file work" ||
	not_ok "retry" "rc=$RC $OUT $ERR"

# --- the per-host cooldown holds across runs --------------------------------------
start cool1 127.0.0.19 -version v1
start cool2 127.0.0.19 -version v1
wait_port "$T/cool1.port" && wait_port "$T/cool2.port"
cat >"$T/cfg5.json" <<EOF
{"collect": {"cooldown_s": 600, "budget_s": 20},
 "services": {"cool": {"sources": [{"type": "pprof_http", "seconds": 1, "slot_s": 86400,
   "targets": ["$(a 19 cool1)", "$(a 19 cool2)"]}]}}}
EOF
pr service add cool >/dev/null && pr service enable cool >/dev/null
run pr --config "$T/cfg5.json" collect --service cool --json
[ $RC -eq 0 ] && [ "$(jq '.services.cool.stored' <<<"$OUT")" = 1 ] && [ "$(jq '.services.cool.deferred' <<<"$OUT")" = 1 ] &&
	ok "two processes on one host: one CPU profile, the other deferred by the host's cooldown" ||
	not_ok "cooldown" "rc=$RC $OUT $ERR"
run pr --config "$T/cfg5.json" collect --service cool --json
[ $RC -eq 0 ] && [ "$(jq '.services.cool.stored' <<<"$OUT")" = 0 ] && [ "$(jq '.services.cool.deferred' <<<"$OUT")" = 1 ] &&
	ok "the cooldown holds in the next run too (kept in the database)" || not_ok "cooldown 2" "$OUT"
# A CI gate does not wait out a cooling host: it takes the hosts free now and
# polls again, so its --wait holds. Host .19 was just profiled (45 s to go),
# host .23 is new; the gate has its capture in seconds.
start cool3 127.0.0.23 -version v2
wait_port "$T/cool3.port"
cat >"$T/cfg7.json" <<EOF
{"collect": {"cooldown_s": 45, "budget_s": 60},
 "services": {"cool": {"sources": [{"type": "pprof_http", "seconds": 1, "slot_s": 86400,
   "targets": ["$(a 19 cool1)", "$(a 23 cool3)"]}]}}}
EOF
t0=$(date +%s)
run pr --config "$T/cfg7.json" post-deploy --service cool --release c2 \
	--commit cccccccccccccccccccccccccccccccccccccccc --wait 30s --min-captures 1
secs=$(( $(date +%s) - t0 ))
[ "$secs" -lt 20 ] && [[ $OUT == *"1 capture of the release"* ]] &&
	[ "$(sql "select string_agg(host, ',') from profiles where release = 'c2'")" = 127.0.0.23 ] &&
	ok "post-deploy defers a host still cooling down instead of waiting for it (${secs} s)" ||
	not_ok "post-deploy waits out a cooldown" "secs=$secs rc=$RC $OUT $ERR"

# --- the nightly collects through the same job ---------------------------------
printf '[%s]\n' "$(sd v2 $COMMIT2 v2-6 v2-7 v2-8)" >"$T/sd.json"
run pr --config "$T/cfg.json" nightly --service checkout --json
[ "$(jq '.services.checkout.collected.stored' <<<"$OUT")" = 0 ] &&
	[ "$(jq '.services.checkout.collected.failed' <<<"$OUT")" = 0 ] &&
	[ "$(jq -r '.services.checkout.status' <<<"$OUT")" != failed ] &&
	[ "$(sql "select count(*) from runs where kind = 'nightly'")" = 1 ] &&
	ok "nightly collects the service's sources (nothing new in this slot) and analyses" ||
	not_ok "nightly" "rc=$RC $(head -c 800 <<<"$OUT") $ERR"

# A nightly without --at ends its night as it starts, and collects just
# after: its live captures are that night's, judged by it (stamped when
# taken, they were after its window and before the next one's). Stamped
# 15 minutes before the night's end, so that the next night, started a
# little early, still finds them a night old.
start live1 127.0.0.31 -version v2
wait_port "$T/live1.port"
cat >"$T/cfg8.json" <<EOF
{"collect": {"cooldown_s": 0},
 "services": {"live": {"sources": [{"type": "pprof_http", "seconds": 1, "slot_s": 86400,
   "targets": ["$(a 31 live1)"]}]}}}
EOF
pr service add live >/dev/null && pr service enable live >/dev/null
run pr --config "$T/cfg8.json" nightly --service live --json
lrun=$(sql "select max(id) from runs where kind = 'nightly'")
[ "$(jq '.services.live.collected.stored' <<<"$OUT")" = 1 ] &&
	[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id
		join runs r on r.id = $lrun where s.name = 'live'
		and p.captured_at = 'epoch'::timestamptz + (r.detail ->> 'at_us')::bigint
			* interval '1 microsecond' - interval '15 minutes'")" = 1 ] &&
	[[ "$(jq -r '.services.live.reason' <<<"$OUT")" != *"no cpu captures"* ]] &&
	ok "a nightly's live captures fall in its own night" ||
	not_ok "live captures in the night" "rc=$RC $(head -c 800 <<<"$OUT") $ERR"

run pr --config "$T/cfg.json" collect --service nosuch
[ $RC -eq 4 ] && [[ $ERR == *"service 'nosuch' not found"* ]] && ok "an unknown service is exit 4" ||
	not_ok "unknown" "rc=$RC $ERR"
run pr --config "$T/cfg.json" collect --service idle
[ $RC -eq 4 ] && [[ $ERR == *"not enabled"* ]] && ok "a disabled service named on the command line is refused" ||
	not_ok "disabled" "rc=$RC $ERR"


# --- a deploy capture takes the host's regular slot ------------------------------
# Two hosts, each logging the pprof requests it gets. A regular collect right
# after post-deploy's captures, within the same slot, must ask neither host
# again (cooldown 0: nothing else would hold it back); in the next slot it does.
for i in 20 21; do
	start slot$i 127.0.0.$i -version v1 -access-log "$T/slot$i.access"
done
{ wait_port "$T/slot20.port" && wait_port "$T/slot21.port"; } || not_ok "start slot hosts"
cat >"$T/cfg6.json" <<EOF
{"collect": {"cooldown_s": 0, "budget_s": 60},
 "services": {"rel": {"types": ["cpu", "heap"],
                      "sources": [{"type": "pprof_http", "seconds": 1, "slot_s": 3600,
                                   "targets": ["$(a 20 slot20)", "$(a 21 slot21)"]}]}}}
EOF
pr service add rel >/dev/null && pr service enable rel >/dev/null
R() { pr --config "$T/cfg6.json" "$@"; }
asked() { cat "$T/slot20.access" "$T/slot21.access" 2>/dev/null | grep -c '^/debug/pprof/'; }
rel_profiles() {
	sql "select count(*) from profiles p join services s on s.id = p.service_id
	      where s.name = 'rel'"
}
# Post-deploy and the collects after it must fall in one slot: an hour,
# so that the test seldom has to wait for the next one to begin (a minute
# made it wait 13 s on average, holding its two places).
hour() { echo $(($(date -u +%s) / 3600)); }
[ $((3600 - $(date -u +%s) % 3600)) -lt 40 ] && sleep $((3600 - $(date -u +%s) % 3600 + 1))
slot0=$(hour)
run R post-deploy --service rel --release r10 \
	--commit aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa --wait 30s --min-captures 4
deploy_asked=$(asked)
[ "$(sql "select count(*) from collect_slots c join services s on s.id = c.service_id
           where s.name = 'rel' and c.source = 'pprof_http deploy r10'
             and c.outcome = 'stored'")" = 4 ] &&
	[ "$deploy_asked" = 4 ] && [ "$(rel_profiles)" = 4 ] &&
	ok "post-deploy captures CPU and heap of both hosts: 4 requests, 4 deploy slots" ||
	not_ok "post-deploy slots" "rc=$RC asked=$deploy_asked $OUT $ERR"
run R collect --service rel --json
json=$OUT json_rc=$RC
run R collect --service rel
slot1=$(hour)
if [ "$slot0" != "$slot1" ]; then
	not_ok "deploy slot rule" "the collects crossed a slot boundary (a very slow machine)"
else
	[ $json_rc -eq 0 ] && [ "$(jq '.services.rel.requests' <<<"$json")" = 0 ] &&
		[ "$(jq '.services.rel.already_collected' <<<"$json")" = 4 ] &&
		[ "$(jq '.services.rel.stored' <<<"$json")" = 0 ] &&
		[ $RC -eq 0 ] && [[ $OUT == *"0 requests"* ]] && [[ $OUT == *"4 collected before"* ]] &&
		[ "$(asked)" = "$deploy_asked" ] && [ "$(rel_profiles)" = 4 ] &&
		ok "a regular collect in the slot of post-deploy's captures asks neither host again" ||
		not_ok "deploy slot rule" "asked=$(asked) (was $deploy_asked) $json $OUT $ERR"
fi
# The next slot, without waiting an hour for it: every slot recorded for
# 'rel' so far (the deploy's captures included) moves back one slot.
sql "update collect_slots c set slot_start = slot_start - interval '3600 s',
	slot_end = slot_end - interval '3600 s', fetched_at = fetched_at - interval '3600 s'
	from services s where s.id = c.service_id and s.name = 'rel'" >/dev/null
run R collect --service rel --json
[ $RC -eq 0 ] && [ "$(jq '.services.rel.stored' <<<"$OUT")" = 4 ] &&
	[ "$(asked)" = $((deploy_asked + 4)) ] &&
	[ "$(grep -c . "$T/slot20.access")" = 4 ] && [ "$(grep -c . "$T/slot21.access")" = 4 ] &&
	[ "$(rel_profiles)" = 8 ] &&
	ok "a slot later (the records moved back one) it profiles both hosts again, CPU and heap" ||
	not_ok "next slot" "rc=$RC asked=$(asked) $OUT $ERR"

finish
