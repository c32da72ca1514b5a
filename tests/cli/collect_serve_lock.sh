#!/bin/bash
# collect and serve never CPU-profile one host at once: both hold the
# host's CPU profile lock (capreq_host_lock) while they profile it, and
# collect waits for a running capture request of the host, then lets it
# cool down from that capture; an alert for a host collect is profiling
# is queued and taken after it. A request of a service disabled since it
# was queued asks nothing. Against a slow loopback pprof stand-in
# (tests/support/slow_pprof.py, 3 s an answer).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/collect_serve_lock
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

# slow NAME ADDR: a slow pprof server on ADDR; its port in $T/NAME.port
slow() {
	python3 "$(dirname "$0")/../support/slow_pprof.py" --bind "$2" --delay 3 \
		--port-file "$T/$1.port" --log "$T/$1.log" --timeout 600 &
	PIDS="$PIDS $!"
	wait_port "$T/$1.port" || not_ok "slow server $1 starts"
	touch "$T/$1.log"
}
slow a 127.0.0.1
slow b 127.0.0.2

fresh_db collect_serve_lock
pr db init >/dev/null 2>&1
pr service add pay --team a >/dev/null && pr service enable pay >/dev/null
pr service add ledger --team a >/dev/null && pr service enable ledger >/dev/null
cat >"$T/cfg.json" <<EOF
{"collect": {"budget_s": 2, "cooldown_s": 0, "retries": 0},
 "serve": {"listen": "127.0.0.1:0", "token_rate": 1000, "global_rate": 100000,
           "host_cooldown_s": 0, "default_seconds": 1},
 "services": {
   "pay": {"types": ["cpu"], "sources": [{"type": "pprof_http", "seconds": 1,
     "targets": ["127.0.0.1:$(cat "$T/a.port")"]}]},
   "ledger": {"types": ["cpu"], "sources": [{"type": "pprof_http", "seconds": 1,
     "targets": ["127.0.0.2:$(cat "$T/b.port")"]}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
TA=$(P token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")
post() { # post SERVICE HOST: the status code, the body in $T/resp
	curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
		-H 'Content-Type: application/json' --data-binary "{\"service\": \"$1\",
		\"hosts\": [\"$2\"], \"types\": [\"cpu\"], \"reason\": \"lock\"}" "$U/v1/captures"
}
asked() { wc -l <"$T/$1.log" | tr -d ' '; }

# --- collect waits for serve's capture ------------------------------------------------
[ "$(post pay 127.0.0.1)" = 202 ] && ok "serve captures host a" || not_ok "post" "$(cat "$T/resp")"
for _ in $(seq 100); do [ "$(asked a)" -ge 1 ] && break; sleep 0.1; done
run P collect --service pay
[ "$(asked a)" = 1 ] &&
	ok "collect asks no CPU profile of a host serve is profiling" ||
	not_ok "collect during serve's capture" "$(cat "$T/a.log")" "$OUT" "$ERR"
[ $RC -eq 0 ] && [[ $OUT == *" 1 deferred"* ]] &&
	ok "the host is deferred, not failed" || not_ok "deferred" "rc=$RC $OUT $ERR"

# --- serve refuses a host collect is profiling -----------------------------------------
P collect --service ledger >"$T/c.out" 2>"$T/c.err" &
CPID=$!
for _ in $(seq 100); do [ "$(asked b)" -ge 1 ] && break; sleep 0.1; done
code=$(post ledger 127.0.0.2)
[ "$code" = 409 ] && [ "$(jq -r .reason "$T/resp")" = host_busy ] &&
	ok "serve refuses a host collect is CPU-profiling: 409 host_busy" ||
	not_ok "serve during collect's profile" "$code $(cat "$T/resp")"
wait $CPID
[ "$(asked b)" = 1 ] && ok "host b was profiled once" || not_ok "b" "$(cat "$T/b.log")"

# --- an alert for a host collect is profiling is queued, and waits its turn -------------
# Alertmanager sends a firing alert again only hours later: refused, the
# incident's capture would be lost. Its worker waits for collect's profile.
sql "delete from collect_slots" >/dev/null
before=$(asked b)
P collect --service ledger >"$T/c2.out" 2>"$T/c2.err" &
CPID=$!
for _ in $(seq 100); do [ "$(asked b)" -gt "$before" ] && break; sleep 0.1; done
alert='{"version": "4", "status": "firing", "receiver": "profreg", "alerts": [{"status": "firing",
 "labels": {"alertname": "LedgerSlow", "service": "ledger", "instance": "127.0.0.2"},
 "fingerprint": "fpledger"}]}'
code=$(curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	--data-binary "$alert" "$U/v1/alertmanager")
wait $CPID
for _ in $(seq 150); do
	[ "$(sql "select state from capture_requests where source = 'alertmanager'")" = done ] && break
	sleep 0.1
done
t1=$(sed -n "$((before + 1))p" "$T/b.log" | cut -d' ' -f2)
t2=$(sed -n "$((before + 2))p" "$T/b.log" | cut -d' ' -f2)
[ "$code" = 200 ] && [[ $(jq -r '.alerts[0].outcome' "$T/resp") == "capture "*" queued" ]] &&
	[ "$(sql "select state from capture_requests where source = 'alertmanager'")" = done ] &&
	[ "$(asked b)" = $((before + 2)) ] && awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(b - a >= 2.9) }' &&
	ok "an alert for a host collect is profiling is queued, and captured once collect's profile ends" ||
	not_ok "alert during collect" "code=$code $(cat "$T/resp") asked $(asked b) of $before, $t1 $t2" \
	"$(sql "select state, error from capture_requests where source = 'alertmanager'")"

# --- a request waiting for its busy host holds up no other --------------------------------
# Host b's CPU lock held 12 s (a long profile elsewhere); an alert for it
# waits, put back every 2 s, while a request for host a is taken at once.
# (The first alert's session on b is made a day old: a new alert may elevate it.)
sql "update elevated_sessions set started_at = now() - interval '1 day',
	expires_at = now() - interval '23 hours', ended_at = now() - interval '23 hours',
	end_reason = 'expired'" >/dev/null
psql "$DB" -qAt -c "select pg_advisory_lock(hashtextextended('cpu-profile 127.0.0.2', 0)),
	pg_sleep(12)" >/dev/null 2>&1 &
LK=$!
# (Its own lock: serve and the database hold advisory locks of their own.)
for _ in $(seq 200); do
	[ "$(sql "select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid
		where l.locktype = 'advisory' and l.granted
		and a.query like '%cpu-profile 127.0.0.2%'")" = 1 ] && break
	sleep 0.05
done
code=$(curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	--data-binary "${alert//fpledger/fpledger2}" "$U/v1/alertmanager")
sleep 0.5
t0=$(date +%s)
[ "$(post pay 127.0.0.1)" = 202 ] || not_ok "post pay" "$(cat "$T/resp")"
rid=$(jq -r .id "$T/resp")
for _ in $(seq 200); do
	[ "$(sql "select state from capture_requests where id = $rid")" = done ] && break
	sleep 0.05
done
took=$(($(date +%s) - t0))
state2=$(sql "select state from capture_requests where incident = 'alert-fpledger2'")
[ "$code" = 200 ] && [ "$(sql "select state from capture_requests where id = $rid")" = done ] &&
	[ "$took" -lt 9 ] && kill -0 "$LK" 2>/dev/null && [ "$state2" != done ] &&
	ok "a request for a free host is taken while an alert waits for its busy host (${took} s)" ||
	not_ok "head of line" "code=$code took=$took alert=$state2" \
	"$(sql "select id, state, error from capture_requests order by id desc limit 2")"
wait "$LK"
for _ in $(seq 150); do
	[ "$(sql "select state from capture_requests where incident = 'alert-fpledger2'")" = done ] && break
	sleep 0.1
done
[ "$(sql "select state from capture_requests where incident = 'alert-fpledger2'")" = done ] &&
	ok "and the waiting alert is taken once its host is free" ||
	not_ok "waiting alert" "$(sql "select state, attempts, error from capture_requests
		where incident = 'alert-fpledger2'")"

# --- collect leaves a host to a request admitted and waiting -----------------------------
# With no server running to take it (as when every worker is busy), a
# request is inserted as serve admits one.
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
sid=$(sql "select id from services where name = 'ledger'")
sql "insert into capture_requests (service_id, hosts, seconds, types, reason, source,
	requested_by) values ($sid, '{127.0.0.2}', 1, '{cpu}', 'queued', 'api', 't')" >/dev/null
sql "update capture_requests set state = 'refused' where reason = 'queued'
	and id <> (select max(id) from capture_requests)" >/dev/null
before=$(asked b)
sql "delete from collect_slots" >/dev/null # the slot asked anew
run P collect --service ledger
[ $RC -eq 0 ] && [ "$(asked b)" = "$before" ] && [[ $OUT == *" 1 deferred"* ]] &&
	ok "collect leaves a host to a capture request waiting for a worker" ||
	not_ok "queued request" "rc=$RC asked $(asked b) of $before $OUT $ERR"
# A dead server's request, running with its lease run out, holds no host.
sql "update capture_requests set state = 'running', worker = 'gone:1', started_at = now(),
	lease_until = now() - interval '1 day' where reason = 'queued'" >/dev/null
sql "delete from collect_slots" >/dev/null
run P collect --service ledger
[ $RC -eq 0 ] && [ "$(asked b)" = $((before + 1)) ] && [[ $OUT == *" 1 stored"* ]] &&
	ok "a running request whose lease ran out does not keep collect off the host" ||
	not_ok "stale running request" "rc=$RC asked $(asked b) of $before $OUT $ERR"
sql "update capture_requests set state = 'failed' where reason = 'queued'" >/dev/null

# --- a host serve has just profiled cools down for collect too ---------------------------
# collect waits for serve's capture; when it ends, the host has just been
# profiled and cools down (collect.cooldown_s) before collect asks again.
sed 's/"cooldown_s": 0/"cooldown_s": 300/; s/"budget_s": 2/"budget_s": 10/' "$T/cfg.json" >"$T/cool.json"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cool.json" serve \
	--port-file "$T/s2.port" >"$T/s2.out" 2>"$T/s2.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s2.port" || not_ok "serve restart" "$(cat "$T/s2.err")"
U=http://127.0.0.1:$(cat "$T/s2.port")
sql "delete from collect_slots" >/dev/null
before=$(asked a)
[ "$(post pay 127.0.0.1)" = 202 ] || not_ok "post for the cooldown" "$(cat "$T/resp")"
for _ in $(seq 100); do [ "$(asked a)" -gt "$before" ] && break; sleep 0.1; done
run pr --config "$T/cool.json" collect --service pay
[ $RC -eq 0 ] && [ "$(asked a)" = $((before + 1)) ] && [[ $OUT == *" 1 deferred"* ]] &&
	ok "collect does not profile a host again within its cooldown of serve's capture" ||
	not_ok "cooldown after serve's capture" "rc=$RC asked $(asked a) of $before $OUT $ERR"

# --- a request queued before its service was disabled contacts nobody ------------------
# (Inserted after the service is disabled, as a request admitted just
# before would be found: a running serve takes it at once.)
before=$(asked b)
pr service disable ledger >/dev/null
sql "insert into capture_requests (service_id, hosts, seconds, types, reason, source,
	requested_by, incident) values ($sid, '{127.0.0.2}', 1, '{cpu}', 'disabled', 'api', 't',
	'inc-1')" >/dev/null
for _ in $(seq 100); do
	[ "$(sql "select state from capture_requests where reason = 'disabled'")" = failed ] && break
	sleep 0.1
done
[ "$(asked b)" = "$before" ] &&
	[[ $(sql "select error from capture_requests where reason = 'disabled'") == *"not enabled"* ]] &&
	ok "a request of a service disabled since it was queued fails without asking its host" ||
	not_ok "disabled service's request" "asked $(asked b) of $before" \
	"$(sql "select state, error from capture_requests where reason = 'disabled'")"

# A service registered but not in the configuration has no targets, and says so.
pr service add extra --team a >/dev/null && pr service enable extra >/dev/null
code=$(post extra 127.0.0.1)
[ "$code" = 422 ] && [[ $(cat "$T/resp") == *"the service has no sources in the configuration"* ]] &&
	ok "a capture of a service without sources says so (422)" || not_ok "no sources" "$code $(cat "$T/resp")"
finish
