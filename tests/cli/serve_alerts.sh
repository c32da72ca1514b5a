#!/bin/bash
# profreg serve's Alertmanager webhook and the session safeguards, with
# webhook payloads (version 4) posted as Alertmanager posts them: a
# fleet-wide alert on 50 hosts elevates no more than the fleet cap; a
# session ends at its expiry while the alert still fires; a flapping
# alert elevates a host once per re-escalation window; a resolved alert
# ends its session, and only its own service's: another team's resolved
# alert for its service on the same host leaves it open; an alert name's
# card number is kept in no row. The 50 targets are not real processes:
# the caps are about sessions, not captures.
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/serve_alerts
rm -rf "$T"
mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

fresh_db serve_alerts
pr db init >/dev/null 2>&1
pr service add fleet --team a >/dev/null && pr service enable fleet >/dev/null
pr service add ledger --team b >/dev/null && pr service enable ledger >/dev/null
targets=$(for i in $(seq 1 50); do printf '"127.0.1.%d:9",' "$i"; done)
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "global_rate": 100000, "token_rate": 100000,
           "host_cooldown_s": 0, "default_seconds": 1, "session_max_s": 10,
           "reescalate_s": 600, "max_sessions_service": 50, "max_sessions_fleet": 10},
 "services": {"fleet": {"sources": [{"type": "pprof_http", "targets": [${targets%,}],
                                      "connect_timeout_ms": 200, "timeout_ms": 500}]},
              "ledger": {"sources": [{"type": "pprof_http", "targets": ["127.0.1.47:7"],
                                       "connect_timeout_ms": 200, "timeout_ms": 500}]}}}
EOF
TA=$(pr --config "$T/cfg.json" token create --team a 2>/dev/null)
TB=$(pr --config "$T/cfg.json" token create --team b 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve --port-file "$T/s.port" \
	>"$T/s.out" 2>"$T/s.err" &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -s "$T/s.port" ] && break; sleep 0.1; done
[ -s "$T/s.port" ] || not_ok "serve starts" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")

# payload STATUS FIRST LAST: one alert per host 127.0.1.FIRST..LAST
payload() {
	local st=$1 a="" i
	for i in $(seq "$2" "$3"); do
		a="$a{\"status\": \"$st\", \"labels\": {\"alertname\": \"HighLatency\", \"service\": \"fleet\", \"instance\": \"127.0.1.$i:9\"}, \"fingerprint\": \"fp$i\"},"
	done
	printf '{"version": "4", "status": "%s", "groupKey": "{}:{alertname=\\"HighLatency\\"}", "receiver": "profreg", "alerts": [%s]}' "$st" "${a%,}"
}
# hook BODY [TOKEN]: the status code; the body in $T/resp
hook() { curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer ${2:-$TA}" --data-binary "$1" "$U/v1/alertmanager"; }
# one STATUS SERVICE: one alert of SERVICE on host 127.0.1.47
one() { printf '{"version": "4", "groupKey": "g", "alerts": [{"status": "%s", "fingerprint": "fp-%s", "labels": {"alertname": "HighLatency", "service": "%s", "instance": "127.0.1.47"}}]}' "$1" "$2" "$2"; }

code=$(hook "$(payload firing 1 50)")
open=$(sql "select count(*) from elevated_sessions where ended_at is null")
[ "$code" = 200 ] && [ "$open" = 10 ] &&
	[ "$(jq '[.alerts[] | select(.outcome == "refused: fleet_cap")] | length' "$T/resp")" = 40 ] &&
	ok "a fleet-wide alert on 50 hosts elevates 10 (the fleet cap); 40 refused fleet_cap" ||
	not_ok "fleet cap" "code=$code open=$open $(head -c 400 "$T/resp")"
[ "$(sql "select count(*) from capture_requests where source = 'alertmanager'")" = 10 ] &&
	ok "and queues a capture for each elevated host only" || not_ok "captures"
[ "$(sql "select count(*) from audit_log where action = 'session.escalated'")" = 10 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.refused' and detail->>'refused' = 'fleet_cap'")" = 40 ] &&
	ok "each escalation and each refusal is an audit row" ||
	not_ok "audit" "$(sql "select action, count(*) from audit_log group by 1")"

# The alert keeps firing (Alertmanager re-sends it); the sessions still end
# at 10 s (long enough that the 50 alerts above are all answered before the
# first session ends, even on a loaded machine).
for _ in $(seq 300); do
	hook "$(payload firing 1 10)" >/dev/null
	[ "$(sql "select count(*) from elevated_sessions where ended_at is null")" = 0 ] && break
	sleep 0.1
done
[ "$(sql "select count(*) from elevated_sessions where end_reason = 'expired'")" = 10 ] &&
	[ "$(sql "select count(*) from elevated_sessions where ended_at - started_at > interval '10 s'")" = 0 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.expired'")" = 10 ] &&
	ok "every session ends at its expiry (10 s) while the alert still fires; audited" ||
	not_ok "expiry" "$(sql "select host, started_at, expires_at, ended_at, end_reason from elevated_sessions limit 3")"
[ "$(sql "select count(*) from elevated_sessions where host = '127.0.1.1'")" = 1 ] &&
	ok "the still-firing alert does not elevate the host again inside the window" ||
	not_ok "no re-elevation" "$(sql "select host, started_at from elevated_sessions where host = '127.0.1.1'")"

# A flapping alert on a fresh host: firing, resolved, firing, ... five times.
for _ in 1 2 3 4 5; do
	hook "$(payload firing 45 45)" >/dev/null
	hook "$(payload resolved 45 45)" >/dev/null
done
[ "$(sql "select count(*) from elevated_sessions where host = '127.0.1.45'")" = 1 ] &&
	[ "$(sql "select end_reason from elevated_sessions where host = '127.0.1.45'")" = resolved ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.refused' and detail->>'refused' = 'reescalate' and detail->'hosts'->>0 = '127.0.1.45'")" = 4 ] &&
	ok "a flapping alert elevates its host once per window; resolved ends it; 4 refused reescalate" ||
	not_ok "flapping" "$(sql "select host, end_reason from elevated_sessions where host = '127.0.1.45'")"

# Hostile webhook bodies.
[ "$(hook '{"alerts": 5}')" = 422 ] && ok "a payload without an alerts array: 422" || not_ok "bad payload"
[ "$(hook 'not json')" = 422 ] && ok "a payload that is not JSON: 422" || not_ok "not json"
code=$(hook '{"alerts": [{"status": "firing", "labels": {"alertname": "X"}}, 7]}')
[ "$code" = 200 ] && [ "$(jq '[.alerts[] | select(.outcome | startswith("skipped"))] | length' "$T/resp")" = 2 ] &&
	ok "alerts without a service label, or not objects, are skipped" || not_ok "skipped" "$(cat "$T/resp")"
# An alert name of 199 bytes and a 2-byte letter, and a fingerprint of 99
# and one: the reason and the incident made of them (200 and 100 bytes at
# most) are cut whole letters at a time, never inside one.
long=$(printf 'A%.0s' $(seq 199))é
fp=$(printf 'A%.0s' $(seq 99))é
code=$(hook "{\"alerts\": [{\"status\": \"firing\", \"labels\": {\"alertname\": \"$long\", \"service\": \"fleet\", \"instance\": \"127.0.1.46:9\"}, \"fingerprint\": \"$fp\"}]}")
[ "$code" = 200 ] && [ "$(jq -r '.alerts[0].outcome' "$T/resp")" = "capture $(sql "select max(id) from capture_requests") queued" ] &&
	[ "$(sql "select reason from capture_requests order by id desc limit 1")" = "alert '$(printf 'A%.0s' $(seq 199))' firing" ] &&
	[ "$(sql "select length(incident) from capture_requests order by id desc limit 1")" = 105 ] &&
	ok "a long non-ASCII alert name is cut at a letter, not inside one: the capture is queued" ||
	not_ok "long name" "code=$code $(head -c 300 "$T/resp") $(tail -3 "$T/s.err")"
# An alert name is any text a rule builds from labels: what could be a card
# number or an e-mail address in it is kept in no request, session or
# audit row.
code=$(hook '{"alerts": [{"status": "firing", "labels": {"alertname": "Refund card 4111111111111111 for jane.doe@example.com", "service": "fleet", "instance": "127.0.1.44:9"}, "fingerprint": "fp44"}]}')
[ "$code" = 200 ] && [ "$(sql "select reason from capture_requests order by id desc limit 1")" = "alert 'Refund card # for <21 bytes> firing" ] &&
	[ "$(sql "select (select count(*) from capture_requests r where r::text ~ '4111111111111111|jane') + (select count(*) from elevated_sessions e where e::text ~ '4111111111111111|jane') + (select count(*) from audit_log a where a::text ~ '4111111111111111|jane')")" = 0 ] &&
	ok "an alert name's card number and e-mail address are kept nowhere" ||
	not_ok "alert name kept" "code=$code $(sql "select reason from capture_requests order by id desc limit 1")"
# Without a fingerprint the incident is named after the alert: the same.
code=$(hook '{"alerts": [{"status": "firing", "labels": {"alertname": "Refund_4111111111111111_jane.doe@example.com", "service": "fleet", "instance": "127.0.1.43:9"}}]}')
[ "$code" = 200 ] && [ "$(sql "select incident from capture_requests order by id desc limit 1")" = "alert-Refund_##" ] &&
	[ "$(sql "select (select count(*) from capture_requests r where r::text ~ '4111111111111111|jane') + (select count(*) from audit_log a where a::text ~ '4111111111111111|jane')")" = 0 ] &&
	ok "an incident named after an alert without a fingerprint keeps no card number or address" ||
	not_ok "incident kept" "code=$code $(sql "select incident from capture_requests order by id desc limit 1")"
# Two teams' services on one host: team b's resolved alert for its own
# service does not end team a's session there.
hook "$(one firing fleet)" >/dev/null
sid=$(sql "select id from elevated_sessions where host = '127.0.1.47' and ended_at is null")
code=$(hook "$(one resolved ledger)" "$TB")
[ -n "$sid" ] && [ "$code" = 200 ] && [ "$(jq -r '.alerts[0].outcome' "$T/resp")" = resolved ] &&
	[ "$(sql "select ended_at is null from elevated_sessions where id = $sid")" = t ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.resolved' and (detail->>'session')::int = $sid")" = 0 ] &&
	ok "another team's resolved alert for its service leaves the host's session of team a's open" ||
	not_ok "shared host" "sid=$sid code=$code $(cat "$T/resp")" \
		"$(sql "select id, service_id, host, ended_at, end_reason from elevated_sessions where host = '127.0.1.47'")"
code=$(hook "$(one resolved fleet)")
[ "$code" = 200 ] && [ "$(jq -r '.alerts[0].outcome' "$T/resp")" = "resolved: session ended" ] &&
	[ "$(sql "select end_reason from elevated_sessions where id = $sid")" = resolved ] &&
	ok "team a's own resolved alert ends it" || not_ok "own resolve" "code=$code $(cat "$T/resp")"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary "$(payload firing 1 1)" "$U/v1/alertmanager")" = 401 ] &&
	ok "the webhook wants the bearer token too (401)" || not_ok "webhook auth"
finish
