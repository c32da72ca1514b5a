#!/bin/bash
# POST /v1/captures with "count": N instead of "hosts": serve picks N of
# the service's pprof_http hosts that no safeguard refuses (not busy, not
# cooling down), the first in byte order whatever the config's order,
# each host once; fewer when fewer are free, 409 with Retry-After when
# none is, 422 for a body with both "hosts" and "count", neither, or a
# count out of range. The targets are closed ports: what is tested is the
# choice, which holds whether the captures then work or fail.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/serve_count
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

fresh_db serve_count
pr db init >/dev/null 2>&1
pr service add fleet --team a >/dev/null && pr service enable fleet >/dev/null
pr service add lonely --team a >/dev/null && pr service enable lonely >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "token_rate": 1000, "global_rate": 100000,
           "host_cooldown_s": 600, "default_seconds": 1, "max_hosts": 4},
 "services": {
   "fleet": {"sources": [{"type": "pprof_http", "seconds": 1, "targets":
     ["127.0.0.23:9", "127.0.0.21:9", "127.0.0.24:9", "127.0.0.21:10", "127.0.0.22:9"]}]},
   "lonely": {"sources": [{"type": "dir", "dir": "/nonexistent"}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
TA=$(P token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")

# post BODY: the status code; the body in $T/resp, headers in $T/hdr
post() {
	curl -s -o "$T/resp" -D "$T/hdr" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
		-H 'Content-Type: application/json' --data-binary "$1" "$U/v1/captures"
}

[ "$(post '{"service": "fleet", "count": 2, "reason": "two"}')" = 202 ] &&
	[ "$(jq -c .hosts "$T/resp")" = '["127.0.0.21","127.0.0.22"]' ] &&
	ok "count 2: the first two hosts in byte order, whatever the config's order" ||
	not_ok "count 2" "$(cat "$T/resp")"
ID1=$(jq -r .id "$T/resp")
[ "$(sql "select hosts::text from capture_requests where id = $ID1")" = '{127.0.0.21,127.0.0.22}' ] &&
	ok "the request row holds the hosts picked" || not_ok "row" "$(sql "select hosts from capture_requests")"
[ "$(post '{"service": "fleet", "count": 3, "reason": "three"}')" = 202 ] &&
	[ "$(jq -c .hosts "$T/resp")" = '["127.0.0.23","127.0.0.24"]' ] &&
	ok "count 3 with two hosts left: the two that are free, none twice (two ports, one host)" ||
	not_ok "count 3" "$(cat "$T/resp")"
ID2=$(jq -r .id "$T/resp")
code=$(post '{"service": "fleet", "count": 1, "reason": "one"}')
why=$(jq -r .reason "$T/resp")
[ "$code" = 409 ] && { [ "$why" = host_busy ] || [ "$why" = host_cooldown ]; } &&
	[ "$(jq -r .error "$T/resp")" = "no host of the service is free now" ] &&
	ok "count 1 with every host busy or cooling down: 409" || not_ok "none free" "$(cat "$T/resp")"
for _ in $(seq 100); do
	st=$(sql "select string_agg(state, ',') from capture_requests where state in ('queued', 'running')")
	[ -z "$st" ] && break
	sleep 0.1
done
[ "$(post '{"service": "fleet", "count": 4, "reason": "four"}')" = 409 ] &&
	[ "$(jq -r .reason "$T/resp")" = host_cooldown ] && grep -qi '^Retry-After: [1-9]' "$T/hdr" &&
	ok "once the requests ran, every host cools down: 409 host_cooldown with Retry-After" ||
	not_ok "cooldown" "$(cat "$T/hdr" "$T/resp")"
[ "$(sql "select count(*) from capture_requests")" = 2 ] && ok "refusals queued nothing" ||
	not_ok "rows" "$(sql "select id, hosts from capture_requests")"
[ "$(sql "select detail->>'count' || ' ' || (detail->'hosts')::text from audit_log
	where action = 'capture.requested' and object = 'capture_request:$ID2'")" = '3 ["127.0.0.23", "127.0.0.24"]' ] &&
	ok "the admission's audit row has the count asked and the hosts taken" ||
	not_ok "audit" "$(sql "select detail from audit_log where action = 'capture.requested'")"
[ "$(sql "select detail->>'refused' from audit_log where action = 'capture.refused'
	and detail->>'count' = '4'")" = host_cooldown ] &&
	ok "a refusal with count is audited" || not_ok "refusal audit"

bad() { # bad DESCRIPTION BODY
	local got
	got=$(post "$2")
	[ "$got" = 422 ] && [ "$(jq -r .error "$T/resp" | wc -l)" = 1 ] && ok "$1: 422, one line" ||
		not_ok "$1" "got $got $(head -c 300 "$T/resp")"
}
bad "hosts and count both" '{"service": "fleet", "hosts": ["127.0.0.21"], "count": 1, "reason": "x"}'
bad "neither hosts nor count" '{"service": "fleet", "reason": "x"}'
bad "count 0" '{"service": "fleet", "count": 0, "reason": "x"}'
bad "count -1" '{"service": "fleet", "count": -1, "reason": "x"}'
bad "count over max_hosts" '{"service": "fleet", "count": 5, "reason": "x"}'
bad "count huge" '{"service": "fleet", "count": 99999999999999999999, "reason": "x"}'
bad "count a string" '{"service": "fleet", "count": "2", "reason": "x"}'
bad "count a fraction" '{"service": "fleet", "count": 1.5, "reason": "x"}'
bad "count on a service without pprof_http targets" '{"service": "lonely", "count": 1, "reason": "x"}'
grep -q "no pprof_http target" "$T/resp" && ok "... which says so" || not_ok "lonely msg" "$(cat "$T/resp")"

# Every type asked for is queued, not only the first.
sql "delete from capture_requests" >/dev/null
[ "$(post '{"service": "fleet", "hosts": ["127.0.0.21"], "types": ["heap", "cpu"], "reason": "t"}')" = 202 ] &&
	[ "$(sql "select types::text from capture_requests")" = '{heap,cpu}' ] &&
	ok "a request for two types queues both" ||
	not_ok "types" "$(cat "$T/resp") $(sql "select types from capture_requests")"

kill -TERM $SPID
for _ in $(seq 50); do kill -0 $SPID 2>/dev/null || break; sleep 0.1; done
! kill -0 $SPID 2>/dev/null && ok "serve stops" || not_ok "stop"
finish
