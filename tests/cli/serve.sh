#!/bin/bash
# profreg serve, the trigger API, against real Go net/http/pprof programs
# (tests/go/pprofdemo): tokens (401 unknown, expired, revoked; 403 another
# team's service), hostile bodies (413, 422), a burst of 100 triggers for
# one host split over two servers (one capture, the rest 409 or 429),
# the capture tagged as an incident and kept as evidence, metrics, and
# every decision audited.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

T=$PROFREG_TEST_TMP/serve
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

demo_up "$T" 127.0.0.2 demo2
D2=$DEMO_PORT

fresh_db serve
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
pr service add billing --team b >/dev/null && pr service enable billing >/dev/null
pr service add quiet --team a >/dev/null
pr service add fleet --team a >/dev/null && pr service enable fleet >/dev/null
# fleet's targets: a file_sd file cut short, listed before a good one
printf '[{"targets": ["127.0.0.5:9"]}' >"$T/sd-cut.json"
printf '[{"targets": ["127.0.0.6:9", "127.0.0.7:9"]}]\n' >"$T/sd-good.json"
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "max_body_bytes": 2048, "token_rate": 30,
           "global_rate": 100000, "host_cooldown_s": 600, "default_seconds": 1},
 "services": {
   "checkout": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.2:$D2"], "seconds": 1}]},
   "billing": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.9:9"]}]},
   "quiet": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.8:9"]}]},
   "fleet": {"sources": [{"type": "pprof_http", "file_sd": ["$T/sd-cut.json", "$T/sd-good.json"],
                          "seconds": 1}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }

# --- tokens ---------------------------------------------------------------------
run P token create --team a --services checkout,quiet
TA=$OUT
[ $RC -eq 0 ] && [[ $TA =~ ^prt_[0-9a-f]{64}$ ]] && ok "token create prints the token once" ||
	not_ok "token create" "rc=$RC $OUT $ERR"
[ "$(sql "select count(*) from api_tokens where token_hash = encode(sha256('$TA'::bytea), 'hex')")" = 1 ] &&
	[ "$(sql "select count(*) from api_tokens where token_hash like '%${TA:4:20}%' or hint = '$TA'")" = 0 ] &&
	ok "only its SHA-256 is stored" || not_ok "hash only"
TB=$(P token create --team b 2>/dev/null)
TX=$(P token create --team a --expires 1s 2>/dev/null)
TR=$(P token create --team a 2>/dev/null)
rid=$(sql "select id from api_tokens order by id desc limit 1")
run P token revoke "$rid"
[ $RC -eq 0 ] && ok "token revoke" || not_ok "revoke" "$OUT $ERR"
run P token list
[ $RC -eq 0 ] && [[ $OUT == *revoked* ]] && [[ $OUT != *"$TA"* ]] && [[ $OUT == *"${TA:0:12}"* ]] &&
	ok "token list shows hints and states, never a token" || not_ok "list" "$OUT"
run P token create
[ $RC -eq 2 ] && ok "token create without --team is a usage error" || not_ok "no team" "rc=$RC"

# --- two servers on one database --------------------------------------------------
SERVE=("$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve)
"${SERVE[@]}" --port-file "$T/s1.port" >"$T/s1.out" 2>"$T/s1.err" &
PIDS="$PIDS $!"
S1PID=$!
"${SERVE[@]}" --port-file "$T/s2.port" >"$T/s2.out" 2>"$T/s2.err" &
PIDS="$PIDS $!"
wait_port "$T/s1.port" && wait_port "$T/s2.port" && ok "two servers listen on port 0, ports in files" ||
	not_ok "serve start" "$(cat "$T/s1.err" "$T/s2.err")"
U1=http://127.0.0.1:$(cat "$T/s1.port")
U2=http://127.0.0.1:$(cat "$T/s2.port")

[ "$(curl -s -o /dev/null -w '%{http_code}' "$U1/healthz")" = 200 ] && ok "GET /healthz is 200" ||
	not_ok "healthz"

# post URL TOKEN BODY: the status code; the body in $T/resp, headers in $T/hdr
post() {
	local url=$1 tok=$2
	shift 2
	curl -s -o "$T/resp" -D "$T/hdr" -w '%{http_code}' -X POST ${tok:+-H "Authorization: Bearer $tok"} \
		-H 'Content-Type: application/json' --data-binary "$@" "$url"
}
good='{"service": "checkout", "hosts": ["127.0.0.2"], "seconds": 1, "reason": "test"}'
sleep 1.1 # the 1 s token has expired
[ "$(post "$U1/v1/captures" "" "$good")" = 401 ] && grep -qi '^WWW-Authenticate: Bearer' "$T/hdr" &&
	ok "no token: 401 with WWW-Authenticate" || not_ok "no token" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "prt_$(printf '0%.0s' $(seq 64))" "$good")" = 401 ] &&
	ok "an unknown token: 401" || not_ok "unknown token" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TX" "$good")" = 401 ] && grep -q expired "$T/resp" &&
	ok "an expired token: 401 (expired)" || not_ok "expired" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TR" "$good")" = 401 ] && grep -q revoked "$T/resp" &&
	ok "a revoked token: 401 (revoked)" || not_ok "revoked" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TB" "$good")" = 403 ] &&
	ok "team b's token cannot trigger team a's service: 403" || not_ok "team b" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TA" '{"service": "billing", "hosts": ["127.0.0.9"], "reason": "x"}')" = 403 ] &&
	ok "team a's token cannot trigger team b's service: 403" || not_ok "team a billing" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TA" '{"service": "quiet", "hosts": ["127.0.0.8"], "reason": "x"}')" = 403 ] &&
	grep -q 'not enabled' "$T/resp" && ok "a service not enabled: 403" || not_ok "disabled" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TA" '{"service": "nosuch", "hosts": ["h"], "reason": "x"}')" = 403 ] &&
	ok "an unknown service: 403, like another team's" || not_ok "unknown service" "$(cat "$T/resp")"

# --- hostile bodies ---------------------------------------------------------------
bad_body() { # bad_body WANT DESCRIPTION BODY
	local got
	got=$(post "$U1/v1/captures" "$TA" "$3")
	[ "$got" = "$1" ] && [ "$(jq -r .error "$T/resp" | wc -l)" = 1 ] && ok "$2: $1, one line" ||
		not_ok "$2" "got $got $(head -c 300 "$T/resp")"
}
bad_body 422 "not JSON" '{"service": '
bad_body 422 "not JSON, a number where a key goes" '{"service": "x" 4111111111111111}'
! grep -q 4111111111111111 "$T/resp" && grep -q 'not JSON' "$T/resp" &&
	ok "the answer to a body that is not JSON does not quote the body's bytes" ||
	not_ok "body quoted" "$(head -c 300 "$T/resp")"
bad_body 422 "empty body" ''
bad_body 422 "an array" '[1, 2]'
bad_body 422 "an unknown key" '{"service": "checkout", "hosts": ["127.0.0.2"], "reason": "x", "x": 1}'
bad_body 422 "no reason" '{"service": "checkout", "hosts": ["127.0.0.2"]}'
# Names quoted in the answer are cut between letters: cut inside one, the
# answer could not be written as JSON (a 500 instead).
k39=$(printf 'k%.0s' $(seq 39))
bad_body 422 "an unknown key of 39 bytes and a 2-byte letter" "{\"service\": \"checkout\", \"hosts\": [\"127.0.0.2\"], \"reason\": \"x\", \"${k39}é\": 1}"
bad_body 403 "a service name of 63 bytes and a 2-byte letter" "{\"service\": \"$(printf 's%.0s' $(seq 63))é\", \"hosts\": [\"127.0.0.2\"], \"reason\": \"x\"}"
bad_body 422 "a NUL in the reason" '{"service": "checkout", "hosts": ["127.0.0.2"], "reason": "a\u0000b"}'
bad_body 422 "seconds too long" '{"service": "checkout", "hosts": ["127.0.0.2"], "seconds": 100000, "reason": "x"}'
bad_body 422 "seconds not an integer" '{"service": "checkout", "hosts": ["127.0.0.2"], "seconds": "5", "reason": "x"}'
bad_body 422 "an unknown profile type" '{"service": "checkout", "hosts": ["127.0.0.2"], "types": ["cpu", "disk"], "reason": "x"}'
bad_body 422 "hosts not an array" '{"service": "checkout", "hosts": "127.0.0.2", "reason": "x"}'
bad_body 422 "a host that is not a target" '{"service": "checkout", "hosts": ["10.9.9.9"], "reason": "x"}'
bad_body 422 "a duplicate key" '{"service": "checkout", "service": "billing", "hosts": ["127.0.0.2"], "reason": "x"}'
bad_body 422 "nesting 2000 deep, unclosed" "$(printf '[%.0s' $(seq 2000))"
bad_body 413 "a body over max_body_bytes" "{\"service\": \"checkout\", \"hosts\": [\"127.0.0.2\"], \"reason\": \"$(head -c 4000 /dev/zero | tr '\0' a)\"}"
# A body whose Content-Length is over the cap is refused before it is sent:
# curl asks to continue (Expect: 100-continue) and gets the 413 instead.
head -c 20000000 /dev/zero >"$T/big.json"
got=$(curl -s -m 30 -o /dev/null -w '%{http_code} %{size_upload}' -X POST -H "Authorization: Bearer $TA" \
	--data-binary @"$T/big.json" "$U1/v1/captures")
rm -f "$T/big.json"
[ "${got% *}" = 413 ] && [ "${got#* }" -lt 1000000 ] &&
	ok "a body declared over max_body_bytes is refused before it is read (uploaded ${got#* } bytes)" ||
	not_ok "early 413" "$got"
[ "$(sql "select count(*) from capture_requests")" = 0 ] && ok "no refused request queued anything" ||
	not_ok "nothing queued"

# --- a burst of 100 triggers for one host, over two servers -------------------------
TT=$(P token create --team a 2>/dev/null)
seq 100 | xargs -P 20 -I{} sh -c 'u='"$U1"'; [ $(({} % 2)) = 0 ] && u='"$U2"'; curl -s -o /dev/null -w "%{http_code}\n" -X POST -H "Authorization: Bearer '"$TT"'" --data-binary '"'$good'"' "$u/v1/captures"' >"$T/burst"
n202=$(grep -c '^202$' "$T/burst")
nother=$(grep -vc '^\(202\|409\|429\)$' "$T/burst")
n409=$(grep -c '^409$' "$T/burst")
n429=$(grep -c '^429$' "$T/burst")
[ "$n202" = 1 ] && [ "$nother" = 0 ] && [ $((n409 + n429)) = 99 ] &&
	ok "a burst of 100 triggers: one 202, the rest 409 ($n409) or 429 ($n429)" ||
	not_ok "burst" "202: $n202, 409: $n409, 429: $n429, other: $nother"
[ "$(sql "select count(*) from capture_requests")" = 1 ] && ok "one request row" || not_ok "one row"
id=$(sql "select id from capture_requests")
for _ in $(seq 100); do
	st=$(sql "select state from capture_requests where id = $id")
	[ "$st" = done ] || [ "$st" = failed ] && break
	sleep 0.1
done
[ "$st" = done ] && ok "the request is executed (done)" ||
	not_ok "executed" "$(sql "select state, error from capture_requests")"
[ "$(sql "select count(*) from profiles")" = 1 ] &&
	[ "$(sql "select tags->>'incident' from profiles")" = "req-$id" ] &&
	[ "$(sql "select host from profiles")" = 127.0.0.2 ] &&
	ok "one capture of the host, tagged incident req-$id (out of baselines)" ||
	not_ok "capture" "$(sql "select host, tags from profiles")"
[ "$(sql "select retention_class from profiles")" = forensic ] &&
	[ "$(sql "select capture_ids[1] = (select id from profiles) from capture_requests")" = t ] &&
	ok "kept as forensic evidence and linked from the request" ||
	not_ok "evidence" "$(sql "select retention_class, forensic_reason from profiles")"
run curl -s -H "Authorization: Bearer $TA" "$U2/v1/captures/$id"
[ "$(jq -r .state <<<"$OUT")" = done ] && [ "$(jq '.captures | length' <<<"$OUT")" = 1 ] &&
	ok "GET /v1/captures/$id from the other server: done, one capture" || not_ok "get" "$OUT"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TB" "$U1/v1/captures/$id")" = 404 ] &&
	ok "another team's token cannot read it (404)" || not_ok "get other team"
[ "$(post "$U1/v1/captures" "$TA" "$good")" = 409 ] && [ "$(jq -r .reason "$T/resp")" = host_cooldown ] &&
	grep -qi '^Retry-After: [1-9]' "$T/hdr" && ok "the host cools down: 409 with Retry-After" ||
	not_ok "cooldown" "$(cat "$T/hdr" "$T/resp")"
[ "$(sql "select count(*) from audit_log where action = 'capture.requested'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.refused'")" -ge 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.done'")" = 1 ] &&
	ok "decisions are audited: requested, refused, done" ||
	not_ok "audit" "$(sql "select action, count(*) from audit_log group by 1")"

M=$(curl -s "$U1/metrics")
# The burst went to both servers: the one 202 was answered by either.
accepted=$( (printf '%s\n' "$M"; curl -s "$U2/metrics") |
	sed -n 's/^profreg_serve_requests_total{route="\/v1\/captures",code="202"} //p' |
	awk '{n += $1} END {print n + 0}')
[ "$accepted" = 1 ] &&
	grep -q '^profreg_serve_refusals_total{reason="host_' <<<"$M" &&
	grep -q '^profreg_capture_requests{state="done"} 1$' <<<"$M" &&
	grep -q '^profreg_elevated_sessions 0$' <<<"$M" &&
	ok "/metrics: requests, refusals by reason, requests by state, sessions" || not_ok "metrics" "$M"

# --- rate limits ----------------------------------------------------------------------
TC=$(P token create --team a 2>/dev/null)
tcid=$(sql "select id from api_tokens order by id desc limit 1")
# 100 requests: at most two windows of 30 pass, whatever the clock does.
seq 100 | xargs -P 10 -I{} curl -s -o /dev/null -w '%{http_code} %header{retry-after}\n' -X POST \
	-H "Authorization: Bearer $TC" --data-binary '{}' "$U1/v1/captures" >"$T/rate"
n429=$(grep -c '^429 [1-9][0-9]*$' "$T/rate")
[ "$n429" -ge 40 ] && [ "$(grep -vc '^\(429 [1-9][0-9]*\|422 \)$' "$T/rate")" = 0 ] &&
	ok "over token_rate a minute: 429 with Retry-After ($n429 of 100)" ||
	not_ok "token rate" "$n429 $(sort "$T/rate" | uniq -c)"
na=$(sql "select count(*) from audit_log where action = 'capture.refused' and object = 'token:$tcid'")
[ "$na" -ge 1 ] && [ "$na" -le 3 ] &&
	ok "a rate limit's first refusal in a window is audited, not each one ($na rows)" ||
	not_ok "rate audit" "$na"

# --- connections held open ----------------------------------------------------------
# A client that opens connections and never finishes a request (a byte now
# and then keeps each from timing out) holds at most max_connections_per_ip
# of them: the next from its address is closed at once, and everyone else
# still gets in. A third server, for its own limit.
sed 's/"listen": "127.0.0.1:0",/"listen": "127.0.0.1:0", "max_connections_per_ip": 4,/' \
	"$T/cfg.json" >"$T/cfg3.json"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg3.json" serve --port-file "$T/s3.port" \
	>"$T/s3.out" 2>"$T/s3.err" &
PIDS="$PIDS $!"
if wait_port "$T/s3.port"; then
	P3=$(cat "$T/s3.port")
	for fd in 5 6 7 8 9; do
		eval "exec $fd<>/dev/tcp/127.0.0.1/$P3" && printf 'GET /healthz HTTP/1.1\r\n' >&$fd
	done
	sleep 0.3
	same=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P3/healthz")
	other=$(curl -s -m 5 --interface 127.0.0.3 -o /dev/null -w '%{http_code}' \
		"http://127.0.0.1:$P3/healthz")
	for fd in 5 6 7 8 9; do eval "exec $fd>&-"; done
	later=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P3/healthz")
	[ "$same" = 000 ] && [ "$other" = 200 ] && [ "$later" = 200 ] &&
		ok "an address holding its max_connections_per_ip locks out only itself" ||
		not_ok "per-address limit" "same=$same other=$other later=$later"
	# The fifth held connection and the curl from the same address.
	refused=$(curl -s -m 5 "http://127.0.0.1:$P3/metrics" |
		sed -n 's/^profreg_serve_refusals_total{reason="connections_per_ip"} //p')
	[ "${refused:-0}" -ge 2 ] &&
		ok "connections refused for their address are counted ($refused)" ||
		not_ok "per-address refusals counted" "'$refused'"
else
	not_ok "per-address limit" "$(cat "$T/s3.err")"
fi

# --- a bad file_sd file hides only its own hosts ------------------------------------
TF=$(P token create --team a --services fleet 2>/dev/null)
[ "$(post "$U1/v1/captures" "$TF" '{"service": "fleet", "hosts": ["127.0.0.7"], "reason": "x"}')" = 202 ] &&
	ok "a host from the good file_sd file after a bad one is captured: 202" ||
	not_ok "good file after a bad one" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TF" '{"service": "fleet", "count": 1, "reason": "x"}')" = 202 ] &&
	[ "$(jq -r '.hosts | join(" ")' "$T/resp")" = 127.0.0.6 ] &&
	ok "\"count\" picks among the good file's hosts: 202" ||
	not_ok "count with a bad file" "$(cat "$T/resp")"
[ "$(post "$U1/v1/captures" "$TF" '{"service": "fleet", "hosts": ["127.0.0.5"], "reason": "x"}')" = 422 ] &&
	[[ $(jq -r .error "$T/resp") == *"host '127.0.0.5' is not a pprof_http target of service 'fleet'"*"file_sd '$T/sd-cut.json': line "* ]] &&
	ok "a host found in no good file: 422 naming the bad file, which may list it" ||
	not_ok "host of the bad file" "$(cat "$T/resp")"

kill -TERM $S1PID
for _ in $(seq 50); do kill -0 $S1PID 2>/dev/null || break; sleep 0.1; done
! kill -0 $S1PID 2>/dev/null && grep -q 'served [0-9]* requests' "$T/s1.out" &&
	ok "SIGTERM stops a server cleanly" || not_ok "stop" "$(cat "$T/s1.out" "$T/s1.err"; ps -o pid,stat,wchan,cmd -p $S1PID)"
finish
