#!/bin/bash
# profreg serve under each token's database role: two team roles on one
# database, tokens made with --role, a real Go net/http/pprof program as
# team a's capture target. Row-level security decides what a token sees:
# team a's token gets 404 (not 403) for team b's capture request and 403
# for team b's service; once its role loses the grant for team a, the
# same token loses team a too, although the token itself still says
# team a (only the role can have done that). Every API call leaves an
# audit row naming the token, its team, its role, the route, the answer,
# the captures and the caller's address. A role left with no grant at all
# is refused 403 on every route, not answered as a database outage.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

T=$PROFREG_TEST_TMP/serve_access
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

demo_up "$T" 127.0.0.3 demo
D=$DEMO_PORT

fresh_db serve_access
RA=serve_access_a
RB=serve_access_b
for r in $RA $RB; do
	psql "$PROFREG_TEST_DB" -qAt -c "DROP OWNED BY $r" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "CREATE ROLE $r LOGIN" >/dev/null
done
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
pr service add billing --team b >/dev/null && pr service enable billing >/dev/null
# Team a's role also sees team z, so that revoking team a later leaves it
# its table privileges: what it loses is rows, not the right to ask.
pr access grant $RA --team a >/dev/null
pr access grant $RA --team z >/dev/null
pr access grant $RB --team b >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "token_rate": 1000, "global_rate": 100000,
           "host_cooldown_s": 1, "default_seconds": 1},
 "services": {
   "checkout": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.3:$D"], "seconds": 1}]},
   "billing": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.9:9"]}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }

# --- tokens with a role ----------------------------------------------------------------
run P token create --team a --role $RA
TA=$OUT
[ $RC -eq 0 ] && [ "$(sql "select role from api_tokens order by id desc limit 1")" = $RA ] &&
	ok "token create --role keeps the role with the token" || not_ok "create --role" "$RC $ERR"
TAID=$(sql "select id from api_tokens order by id desc limit 1")
TB=$(P token create --team b --role $RB 2>/dev/null)
run P token create --team a --role $RB
[ $RC -eq 2 ] && grep -q "role '$RB' does not see team 'a'" <<<"$ERR" && [ "$(wc -l <<<"$ERR")" = 1 ] &&
	ok "a role that does not see the team is refused (exit 2, one line)" ||
	not_ok "role not of the team" "rc $RC" "$ERR"
run P token create --team a --role serve_access_nosuch
[ $RC -eq 2 ] && grep -q "does not exist" <<<"$ERR" && ok "a role that does not exist is refused" ||
	not_ok "unknown role" "rc $RC" "$ERR"
run P --json token list
[ "$(jq -r ".[] | select(.id == $TAID) | .role" <<<"$OUT")" = $RA ] &&
	ok "token list --json shows the role" || not_ok "list role" "$OUT"

"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")

# post URL TOKEN BODY: the status code; the body in $T/resp
post() {
	local url=$1 tok=$2
	shift 2
	curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $tok" \
		-H 'Content-Type: application/json' --data-binary "$@" "$url"
}
# get ID TOKEN: the status code of GET /v1/captures/ID; the body in $T/resp
get() {
	curl -s -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $2" "$U/v1/captures/$1"
}

# --- each team's own requests ------------------------------------------------------------
[ "$(post "$U/v1/captures" "$TB" '{"service": "billing", "hosts": ["127.0.0.9"], "reason": "b"}')" = 202 ] &&
	ok "team b's token queues a capture of billing (202)" || not_ok "b post" "$(cat "$T/resp")"
IDB=$(jq -r .id "$T/resp")
[ "$(post "$U/v1/captures" "$TA" '{"service": "checkout", "hosts": ["127.0.0.3"], "reason": "a"}')" = 202 ] &&
	ok "team a's token queues a capture of checkout (202)" || not_ok "a post" "$(cat "$T/resp")"
IDA=$(jq -r .id "$T/resp")
for _ in $(seq 100); do
	st=$(sql "select string_agg(state, ',' order by id) from capture_requests")
	[[ $st != *queued* && $st != *running* ]] && break
	sleep 0.1
done
[ "$(sql "select state from capture_requests where id = $IDA")" = done ] &&
	ok "team a's request is executed" || not_ok "executed" "$(sql "select id, state, error from capture_requests")"
CAP=$(sql "select capture_ids[1] from capture_requests where id = $IDA")

# --- row-level security through the token's role -------------------------------------------
[ "$(get "$IDB" "$TA")" = 404 ] && ! grep -q billing "$T/resp" &&
	ok "team a's token: team b's request is 404 (its existence does not leak)" ||
	not_ok "a reads b" "$(cat "$T/resp")"
[ "$(get "$IDB" "$TB")" = 200 ] && ok "team b's token reads its own request" || not_ok "b reads b"
[ "$(get "$IDA" "$TA")" = 200 ] && [ "$(jq '.captures[0]' "$T/resp")" = "$CAP" ] &&
	ok "team a's token reads its own request and capture" || not_ok "a reads a" "$(cat "$T/resp")"
[ "$(post "$U/v1/captures" "$TA" '{"service": "billing", "hosts": ["127.0.0.9"], "reason": "x"}')" = 403 ] &&
	ok "team a's token cannot trigger team b's service (403)" || not_ok "a triggers b" "$(cat "$T/resp")"
nb=$(sql "select count(*) from capture_requests where service_id = (select id from services where name = 'billing')")
[ "$nb" = 1 ] && ok "nothing was queued for team b by team a" || not_ok "b queue" "$nb"

# Take team a away from the role, not from the token: only the role can refuse now.
pr access revoke $RA --team a >/dev/null
[ "$(get "$IDA" "$TA")" = 404 ] &&
	ok "with its role's grant revoked, the token no longer sees team a's request (404)" ||
	not_ok "revoked role reads a" "$(cat "$T/resp")"
[ "$(post "$U/v1/captures" "$TA" '{"service": "checkout", "hosts": ["127.0.0.3"], "reason": "a"}')" = 403 ] &&
	ok "... nor triggers team a's service (403)" || not_ok "revoked role triggers a" "$(cat "$T/resp")"
alert='{"version": "4", "groupKey": "g", "status": "firing", "alerts": [{"status": "firing",
 "labels": {"alertname": "Slow", "service": "checkout", "instance": "127.0.0.3:1"}}]}'
[ "$(post "$U/v1/alertmanager" "$TA" "$alert")" = 200 ] &&
	[[ "$(jq -r '.alerts[0].outcome' "$T/resp")" == *"not this token's"* ]] &&
	ok "... nor through the Alertmanager webhook" || not_ok "revoked role alerts" "$(cat "$T/resp")"
pr access grant $RA --team a >/dev/null

# --- the audit row of every call -------------------------------------------------------------
q() { sql "select $1 from audit_log where action = '$2' and object = '$3' and db_role = '$4' order by id limit 1"; }
[ "$(q "detail->>'status'" serve.capture.get "capture_request:$IDB" $RA)" = 404 ] &&
	[ "$(q "detail->>'token'" serve.capture.get "capture_request:$IDB" $RA)" = "$TAID" ] &&
	[ "$(q "detail->>'team'" serve.capture.get "capture_request:$IDB" $RA)" = a ] &&
	[ "$(q "detail->>'remote'" serve.capture.get "capture_request:$IDB" $RA)" = 127.0.0.1 ] &&
	ok "a refused read is audited: token, team, role, answer, address" ||
	not_ok "audit 404" "$(sql "select db_role, object, detail from audit_log where action like 'serve.%'")"
[ "$(q "capture_ids::text" serve.capture.get "capture_request:$IDA" $RA)" = "{$CAP}" ] &&
	[ "$(q "detail->>'status'" serve.capture.get "capture_request:$IDA" $RA)" = 200 ] &&
	ok "a read is audited with the captures it returned" ||
	not_ok "audit 200" "$(sql "select db_role, object, capture_ids, detail from audit_log where action like 'serve.%'")"
[ "$(q "detail->'requests'->>0" serve.capture.request "capture_request:$IDA" $RA)" = "$IDA" ] &&
	[ "$(q "detail->>'route'" serve.capture.request "capture_request:$IDA" $RA)" = /v1/captures ] &&
	ok "a trigger is audited with the request it queued" ||
	not_ok "audit post" "$(sql "select db_role, object, detail from audit_log where action like 'serve.%'")"
[ "$(sql "select count(*) from audit_log where action = 'serve.capture.request'
	and db_role = '$RA' and detail->>'status' = '403'")" = 2 ] &&
	ok "a refused trigger is audited (403)" ||
	not_ok "audit 403" "$(sql "select db_role, object, detail from audit_log where action like 'serve.%'")"
[ "$(sql "select count(*) from audit_log where action = 'serve.alertmanager' and db_role = '$RA'")" = 1 ] &&
	ok "a webhook call is audited" || not_ok "audit webhook"
n=$(sql "select count(*) from audit_log where action like 'serve.%'")
[ "$n" = 9 ] && ok "one audit row for each of the 9 authenticated calls" ||
	not_ok "audit count" "$n" "$(sql "select action, object, detail->>'status' from audit_log where action like 'serve.%'")"
out=$(psql "$DB user=$RA" -qAt -c "select profreg_audit_as('$RA', 'serve.forged', 'x', '{}', null)" 2>&1)
[[ $out == *"cannot write audit rows"* ]] &&
	ok "a team role cannot write API audit rows itself" || not_ok "forge" "$out"

# The role's last grants go: it keeps no table privilege. That is the
# token's refusal (403), not a database outage (503, Retry-After, a log
# line) that pages whoever watches the server.
pr access revoke $RA >/dev/null
nolog=$(wc -c <"$T/s.err")
code=$(curl -s -D "$T/hdr" -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TA" "$U/compare?service=checkout")
[ "$code" = 403 ] && [ "$(cat "$T/resp")" = "the token's role has no access" ] &&
	! grep -qi '^retry-after' "$T/hdr" &&
	ok "a role with no grant left: /compare is 403, the token's role has no access" ||
	not_ok "compare no grant" "$code $(cat "$T/resp")"
[ "$(get "$IDA" "$TA")" = 403 ] && [ "$(jq -r .error "$T/resp")" = "the token's role has no access" ] &&
	ok "... GET /v1/captures/ID is 403" || not_ok "get no grant" "$(cat "$T/resp")"
[ "$(post "$U/v1/captures" "$TA" '{"service": "checkout", "hosts": ["127.0.0.3"], "reason": "a"}')" = 403 ] &&
	[ "$(jq -r .error "$T/resp")" = "the token's role has no access" ] &&
	ok "... POST /v1/captures is 403" || not_ok "post no grant" "$(cat "$T/resp")"
[ "$(post "$U/v1/alertmanager" "$TA" "$alert")" = 200 ] &&
	[ "$(jq -r '.alerts[0].outcome' "$T/resp")" = "the token's role has no access" ] &&
	ok "... and each alert of the webhook is refused so" || not_ok "webhook no grant" "$(cat "$T/resp")"
[ "$(wc -c <"$T/s.err")" = "$nolog" ] && ok "... and nothing is logged as a database failure" ||
	not_ok "no grant logged" "$(tail -c +$((nolog + 1)) "$T/s.err")"
[ "$(get "$IDB" "$TB")" = 200 ] && ok "another role's token is served as before" || not_ok "b after"

kill -TERM $SPID
for _ in $(seq 50); do kill -0 $SPID 2>/dev/null || break; sleep 0.1; done
! kill -0 $SPID 2>/dev/null && ok "serve stops" || not_ok "stop" "$(cat "$T/s.err")"
[ ! -s "$T/s.err" ] && ok "serve noted no failure" || not_ok "serve stderr" "$(cat "$T/s.err")"
finish
