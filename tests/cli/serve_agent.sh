#!/bin/bash
# profreg serve --agent, the snapshot agent of a host, and the webhook
# that asks it: two serve processes on loopback (the server and the
# agent, port 0, ports in files) and a real Go net/http/pprof program as
# the capture target. The agent takes snapshots of its own host only
# (401 without its secret, 403 for another host, 413/422 for bad
# bodies); an alert firing on the host queues a capture and asks the
# agent, which stores a snapshot tied to the alert's incident; a flapping
# alert takes no second snapshot (the agent's per-host cooldown, 409 with
# Retry-After); the secret is never printed or stored.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

T=$PROFREG_TEST_TMP/serve_agent
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

demo_up "$T" 127.0.0.2 demo
D=$DEMO_PORT

fresh_db serve_agent
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
SECRET=agent-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
umask 077
printf '%s\n' "$SECRET" >"$T/agent.secret"
umask 022
SNAP='"snapshot": {"time_budget_ms": 4000, "sample_ms": 200, "cooldown_s": 600}'
cat >"$T/agent.json" <<EOF
{"serve": {"agent_secret_file": "$T/agent.secret"}, $SNAP}
EOF

# --- the agent alone -----------------------------------------------------------------------
echo '{}' >"$T/nosecret.json"
run pr --config "$T/nosecret.json" serve --agent --listen 127.0.0.1:0
[ $RC -eq 2 ] && grep -q 'needs a secret' <<<"$ERR" && [ "$(wc -l <<<"$ERR")" = 1 ] &&
	ok "an agent without a secret does not start (exit 2, one line)" || not_ok "no secret" "$RC $ERR"
run pr serve --name x
[ $RC -eq 2 ] && ok "--name without --agent is a usage error" || not_ok "--name alone" "$RC"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/agent.json" serve --agent \
	--listen 127.0.0.1:0 --port-file "$T/a.port" --name 127.0.0.2 >"$T/a.out" 2>"$T/a.err" &
APID=$!
PIDS="$PIDS $APID"
wait_port "$T/a.port" && ok "the agent listens on port 0, its port in a file" ||
	not_ok "agent start" "$(cat "$T/a.err")"
A=http://127.0.0.1:$(cat "$T/a.port")
[ "$(curl -s -o /dev/null -w '%{http_code}' "$A/healthz")" = 200 ] && ok "agent /healthz" ||
	not_ok "agent healthz"

# apost SECRET BODY: the code; the body in $T/resp, headers in $T/hdr
apost() {
	local sec=$1
	shift
	curl -s -o "$T/resp" -D "$T/hdr" -w '%{http_code}' -X POST ${sec:+-H "Authorization: Bearer $sec"} \
		--data-binary "$@" "$A/v1/snapshots"
}
[ "$(apost "" '{"host": "127.0.0.2"}')" = 401 ] && ok "no secret: 401" || not_ok "401" "$(cat "$T/resp")"
[ "$(apost "${SECRET}x" '{"host": "127.0.0.2"}')" = 401 ] && ok "a wrong secret: 401" ||
	not_ok "401 wrong" "$(cat "$T/resp")"
[ "$(apost "$SECRET" '{"host": "10.9.9.9"}')" = 403 ] &&
	[ "$(jq -r .error "$T/resp")" = "this agent takes snapshots of host '$(hostname)' only, also named '127.0.0.2'" ] &&
	ok "another host: 403, naming the host and the --name it also answers to" ||
	not_ok "403" "$(cat "$T/resp")"
[ "$(apost "$SECRET" '{"host": "127.0.0.2", "x": 1}')" = 422 ] && ok "an unknown key: 422" ||
	not_ok "422 key" "$(cat "$T/resp")"
[ "$(apost "$SECRET" '{"host": "127.0.0.2", "incident": "a\u0001b"}')" = 422 ] &&
	ok "a control character in the incident: 422" || not_ok "422 ctl" "$(cat "$T/resp")"
[ "$(apost "$SECRET" '{"host": ')" = 422 ] && ok "not JSON: 422" || not_ok "422 json"
[ "$(apost "$SECRET" "{\"host\": \"127.0.0.2\", \"reason\": \"$(head -c 5000 /dev/zero | tr '\0' a)\"}")" = 413 ] &&
	ok "a body over 4 KiB: 413" || not_ok "413" "$(cat "$T/resp")"
[ "$(sql "select count(*) from snapshots")" = 0 ] && ok "no refused request took a snapshot" ||
	not_ok "no snapshot"
# A body that never ends would hold the agent's one thread: it is cut off.
RAW="python3 $(cd "$(dirname "$0")/../support" && pwd)/rawclient.py"
run timeout 60 $RAW chunked --port "$(cat "$T/a.port")" --token "$SECRET" --path /v1/snapshots \
	--bytes 67108864 --seconds 30
sent=$(sed -n 's/^sent \([0-9]*\) .*/\1/p' <<<"$OUT")
[ $RC -eq 0 ] && [[ $OUT == *"closed by the server"* ]] && [ "${sent:-0}" -lt $((4 << 20)) ] &&
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$A/healthz")" = 200 ] &&
	ok "a chunked body that never ends is cut off, the agent still answers ($sent bytes)" ||
	not_ok "agent endless body" "rc=$RC $OUT $ERR"

# --- the server asks the agent when an alert fires -------------------------------------------
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "global_rate": 100000, "token_rate": 100000,
           "host_cooldown_s": 0, "default_seconds": 1, "reescalate_s": 0,
           "agent_secret_file": "$T/agent.secret",
           "agents": [{"hosts": "127.0.0.*", "url": "http://127.0.0.1:$(cat "$T/a.port")"}]},
 $SNAP,
 "services": {"checkout": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.2:$D"],
                                        "seconds": 1}]}}}
EOF
TA=$(pr --config "$T/cfg.json" token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve --port-file "$T/s.port" \
	>"$T/s.out" 2>"$T/s.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s.port" && ok "the server listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")
alert() { # alert STATUS
	printf '{"version": "4", "status": "%s", "groupKey": "g1", "alerts": [{"status": "%s",
	 "labels": {"alertname": "CheckoutSlow", "service": "checkout", "instance": "127.0.0.2:%s"},
	 "fingerprint": "fpcheckout"}]}' "$1" "$1" "$D"
}
hook() { curl -s -o "$T/hook" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" --data-binary "$1" "$U/v1/alertmanager"; }
[ "$(hook "$(alert firing)")" = 200 ] && [ "$(jq -r '.alerts[0].snapshot' "$T/hook")" = asked ] &&
	[[ "$(jq -r '.alerts[0].outcome' "$T/hook")" == "capture "*" queued" ]] &&
	ok "a firing alert queues a capture and asks the host's agent for a snapshot" ||
	not_ok "fire" "$(cat "$T/hook")"
for _ in $(seq 300); do
	[ "$(sql "select count(*) from snapshots")" -ge 1 ] &&
		[ "$(sql "select count(*) from capture_requests where state in ('done', 'failed')")" -ge 1 ] && break
	sleep 0.1
done
[ "$(sql "select count(*) from snapshots")" = 1 ] &&
	[ "$(sql "select incident || ' ' || trigger || ' ' || service from snapshots")" = "alert-fpcheckout alertmanager checkout" ] &&
	[ "$(sql "select host from snapshots")" = "$(hostname)" ] &&
	ok "the agent stored a snapshot of its host, tied to the alert's incident" ||
	not_ok "snapshot" "$(sql "select host, incident, trigger, service from snapshots")" "$(cat "$T/a.err" "$T/s.err")"
[ "$(sql "select state from capture_requests")" = done ] &&
	[ "$(sql "select tags->>'incident' from profiles")" = alert-fpcheckout ] &&
	ok "and the capture of the same incident is taken" ||
	not_ok "capture" "$(sql "select state, error from capture_requests")"
[ "$(sql "select count(*) from audit_log where action = 'snapshot.store'")" = 1 ] &&
	ok "the stored snapshot is audited" || not_ok "audit store"

# --- a flapping alert: resolved, firing, three times ------------------------------------------
for _ in 1 2 3; do
	hook "$(alert resolved)" >/dev/null
	hook "$(alert firing)" >/dev/null
done
for _ in $(seq 300); do
	curl -s "$U/metrics" >"$T/metrics"
	grep -q '^profreg_serve_snapshot_requests_total{outcome="cooldown"} 3$' "$T/metrics" && break
	sleep 0.1
done
grep -q '^profreg_serve_snapshot_requests_total{outcome="taken"} 1$' "$T/metrics" &&
	grep -q '^profreg_serve_snapshot_requests_total{outcome="cooldown"} 3$' "$T/metrics" &&
	[ "$(sql "select count(*) from snapshots")" = 1 ] &&
	ok "a flapping alert asks three more times; the cooldown holds: still one snapshot" ||
	not_ok "flapping" "$(grep snapshot "$T/metrics")" "$(sql "select count(*) from snapshots")"
[ "$(apost "$SECRET" '{"host": "127.0.0.2"}')" = 409 ] && grep -qi '^Retry-After: [1-9]' "$T/hdr" &&
	grep -q cooldown "$T/resp" && ok "the agent's cooldown answers 409 with Retry-After" ||
	not_ok "409" "$(cat "$T/hdr" "$T/resp")"

# --- an agent that does not answer ---------------------------------------------------------------
kill -TERM $APID
for _ in $(seq 50); do kill -0 $APID 2>/dev/null || break; sleep 0.1; done
! kill -0 $APID 2>/dev/null && grep -q 'took 1 snapshots' "$T/a.out" &&
	ok "SIGTERM stops the agent cleanly" || not_ok "agent stop" "$(cat "$T/a.out" "$T/a.err")"
sql "delete from elevated_sessions" >/dev/null
hook "$(alert firing)" >/dev/null
for _ in $(seq 100); do
	curl -s "$U/metrics" >"$T/metrics"
	grep -q 'outcome="unreachable"} 1$' "$T/metrics" && break
	sleep 0.1
done
grep -q '^profreg_serve_snapshot_requests_total{outcome="unreachable"} 1$' "$T/metrics" &&
	ok "an agent that is down is counted as unreachable" || not_ok "unreachable" "$(grep snapshot "$T/metrics")"
kill -TERM $SPID
for _ in $(seq 100); do kill -0 $SPID 2>/dev/null || break; sleep 0.1; done
! kill -0 $SPID 2>/dev/null && ok "SIGTERM stops the server" || not_ok "server stop"
grep -q "snapshot of host '127.0.0.2': cannot reach 'http://127.0.0.1:" "$T/s.err" &&
	ok "the server notes the unreachable agent in one line" || not_ok "note" "$(cat "$T/s.err")"
! grep -rqF "$SECRET" "$T"/*.out "$T"/*.err "$T/hook" "$T/resp" &&
	[ "$(sql "select count(*) from audit_log where detail::text like '%$SECRET%'")" = 0 ] &&
	ok "the secret is in no output, log or audit row" || not_ok "secret leaked"

# --- a server with agents but no secret ------------------------------------------------------------
jq 'del(.serve.agent_secret_file)' "$T/cfg.json" >"$T/cfg-nosecret.json"
run pr --config "$T/cfg-nosecret.json" serve --listen 127.0.0.1:0
[ $RC -eq 2 ] && grep -q "serve.agents needs the agents' secret" <<<"$ERR" &&
	ok "serve.agents without a secret does not start (exit 2)" || not_ok "server no secret" "$RC $ERR"
finish
