#!/bin/bash
# The lease of a running capture request (jobs/capreq.c): it covers the
# capture in flight however long its target may take (the request's
# timeout, not its seconds), so no other server claims the request and
# profiles its hosts again; a worker that lost its request profiles
# nothing more and records no outcome for it; a request whose lease ran
# out CAPREQ_MAX_ATTEMPTS times is failed, not claimed once more. The
# targets are tests/support/slow_pprof.py on loopback, answering slowly.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/serve_lease
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
SLOW=$(dirname "$0")/../support/slow_pprof.py

# slow NAME ADDR DELAY: a slow pprof server on ADDR; its port in $T/NAME.port
slow() {
	python3 "$SLOW" --bind "$2" --delay "$3" --port-file "$T/$1.port" --log "$T/$1.log" \
		--timeout 60 &
	PIDS="$PIDS $!"
	wait_port "$T/$1.port" || not_ok "slow server $1 starts"
	touch "$T/$1.log"
}
slow a 127.0.0.1 2
slow b 127.0.0.2 2

fresh_db serve_lease
pr db init >/dev/null 2>&1
pr service add pay --team a >/dev/null && pr service enable pay >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "token_rate": 1000, "global_rate": 100000,
           "host_cooldown_s": 0, "default_seconds": 1, "lease_s": 10},
 "services": {
   "pay": {"types": ["cpu", "heap", "goroutine"], "sources": [{"type": "pprof_http",
     "seconds": 1, "timeout_ms": 30000,
     "targets": ["127.0.0.1:$(cat "$T/a.port")", "127.0.0.2:$(cat "$T/b.port")"]}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
TA=$(P token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
PIDS="$PIDS $!"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")

post() {
	curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
		-H 'Content-Type: application/json' --data-binary "$1" "$U/v1/captures"
}
# until_true SQL: wait (at most 10 s) until the query says t
until_true() {
	local i
	for i in $(seq 100); do
		[ "$(sql "$1")" = t ] && return 0
		sleep 0.1
	done
	return 1
}
# asked NAME: how many profiles server NAME was asked for
asked() { wc -l <"$T/$1.log" | tr -d ' '; }

# --- the lease covers the capture in flight ------------------------------------------
[ "$(post '{"service": "pay", "hosts": ["127.0.0.1"], "types": ["heap"],
	"reason": "slow"}')" = 202 ] &&
	ok "a request for the slow host is queued" || not_ok "queue" "$(cat "$T/resp")"
ID=$(jq -r .id "$T/resp")
for _ in $(seq 100); do [ "$(asked a)" -ge 1 ] && break; sleep 0.1; done
# The capture may take timeout_ms (30 s); seconds x types x hosts + lease_s was 11 s.
left=$(sql "select floor(extract(epoch from lease_until - now()))
	from capture_requests where id = $ID")
[ "${left:-0}" -ge 30 ] && ok "while its capture runs, the lease outlasts the capture's timeout" ||
	not_ok "lease" "left ${left:-none} s"
until_true "select state = 'done' from capture_requests where id = $ID" &&
	[ "$(sql "select attempts from capture_requests where id = $ID")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where object = 'capture_request:$ID'
		and action in ('capture.done', 'capture.failed')")" = 1 ] && [ "$(asked a)" = 1 ] &&
	ok "the request is done in one attempt, one profile, one outcome audited" ||
	not_ok "done" "$(sql "select state, attempts, error from capture_requests
	where id = $ID")"

# --- a worker that lost its request stops --------------------------------------------
[ "$(post '{"service": "pay", "hosts": ["127.0.0.2"], "types": ["heap", "goroutine"],
	"reason": "lost"}')" = 202 ] &&
	ok "a request of two profiles is queued" || not_ok "queue 2" "$(cat "$T/resp")"
ID2=$(jq -r .id "$T/resp")
for _ in $(seq 100); do [ "$(asked b)" -ge 1 ] && break; sleep 0.1; done
# Another server claims it while the first profile runs (as after a lease ran out).
sql "update capture_requests set worker = 'other:1', attempts = attempts + 1
	where id = $ID2" >/dev/null
sleep 3.5
[ "$(asked b)" = 1 ] && ok "the worker that lost the request asks for no further profile" ||
	not_ok "lost: profiles asked" "$(cat "$T/b.log")"
[ "$(sql "select count(*) from audit_log where object = 'capture_request:$ID2'
	and action in ('capture.done', 'capture.failed')")" = 0 ] &&
	[ "$(sql "select state || ' ' || worker from capture_requests
		where id = $ID2")" = "running other:1" ] &&
	ok "and it records no outcome for it: the row and the audit are the new holder's" ||
	not_ok "lost: outcome" "$(sql "select state, worker, error from capture_requests
	where id = $ID2")" \
	"$(sql "select action, detail from audit_log where object = 'capture_request:$ID2'")" \
	"$(cat "$T/b.log")"
sql "update capture_requests set state = 'failed', finished_at = now() where id = $ID2" >/dev/null

# Claimed again by a server of the same name (containers on one host's
# network are each "host:1"): the claim, not the name, is what it holds.
before=$(asked b)
[ "$(post '{"service": "pay", "hosts": ["127.0.0.2"], "types": ["heap", "goroutine"],
	"reason": "same name"}')" = 202 ] || not_ok "queue 3" "$(cat "$T/resp")"
ID4=$(jq -r .id "$T/resp")
for _ in $(seq 100); do [ "$(asked b)" -gt "$before" ] && break; sleep 0.1; done
sql "update capture_requests set attempts = attempts + 1, started_at = now()
	where id = $ID4" >/dev/null
sleep 3.5
[ "$(asked b)" = $((before + 1)) ] &&
	[ "$(sql "select state || ' ' || attempts from capture_requests
		where id = $ID4")" = "running 2" ] &&
	[ "$(sql "select count(*) from audit_log where object = 'capture_request:$ID4'
		and action in ('capture.done', 'capture.failed')")" = 0 ] &&
	ok "a worker whose claim was taken by one of the same name stops, recording nothing" ||
	not_ok "same-name takeover" "asked $(asked b) of $before" \
	"$(sql "select state, worker, attempts, error from capture_requests where id = $ID4")"
sql "update capture_requests set state = 'failed', finished_at = now() where id = $ID4" >/dev/null

# --- a request whose lease ran out CAPREQ_MAX_ATTEMPTS times ---------------------------
ID3=$(sql "insert into capture_requests (service_id, hosts, seconds, types, reason, source,
	requested_by, state, started_at, lease_until, worker, attempts)
	select id, '{127.0.0.1}', 1, '{heap}', 'stuck', 'api', 'test', 'running',
	now() - interval '1 hour', now() - interval '1 minute', 'gone:1', 3
	from services where name = 'pay' returning id" | head -n 1)
until_true "select state <> 'running' from capture_requests where id = $ID3" &&
	[ "$(sql "select state || ' ' || attempts from capture_requests
		where id = $ID3")" = "failed 3" ] &&
	[[ $(sql "select error from capture_requests
		where id = $ID3") == "given up after 3 attempts"* ]] &&
	[ "$(asked a)" = 1 ] &&
	ok "a request whose lease ran out 3 times is failed with the reason, not profiled again" ||
	not_ok "attempts" "$(sql "select state, attempts, error from capture_requests
	where id = $ID3")"
[ "$(sql "select count(*) from audit_log where object = 'capture_request:$ID3'
	and action = 'capture.failed' and detail->>'attempts' = '3'")" = 1 ] &&
	ok "giving up is audited" ||
	not_ok "give-up audit" "$(sql "select action, detail from audit_log
	where object = 'capture_request:$ID3'")"

finish
