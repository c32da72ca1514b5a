#!/bin/bash
# profreg serve against hostile clients on a raw socket
# (tests/support/rawclient.py): a chunked body that never ends is cut
# off, one over the cap that ends is still answered 413 in one line, and
# the server answers everyone else meanwhile; a refusal that quotes a
# long name of letters that are not ASCII is still one line of JSON, to
# the API and the webhook; a token pasted into a /compare address or a
# capture request's reason is refused and kept nowhere; a path holding
# an encoded NUL is refused 400, not routed by its part before the NUL;
# clients that send their requests a byte a second to hold every slot
# are closed after 30 s. The pprof target is a closed port: nothing here
# gets as far as a capture.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/serve_hostile
RAW="python3 $(cd "$(dirname "$0")/../support" && pwd)/rawclient.py"
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

fresh_db serve_hostile
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "max_body_bytes": 2048, "token_rate": 1000,
           "global_rate": 100000, "default_seconds": 1},
 "services": {
   "checkout": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.2:9"], "seconds": 1}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
TA=$(P token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
PIDS="$PIDS $!"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
PORT=$(cat "$T/s.port")
U=http://127.0.0.1:$PORT
refusals() {
	curl -s -m 5 "$U/metrics" | sed -n "s/^profreg_serve_refusals_total{reason=\"$1\"} //p"
}

# --- bodies without a length ----------------------------------------------------
# 64 MiB offered in chunks of 4 KiB: the server must stop reading long before.
run timeout 60 $RAW chunked --port "$PORT" --token "$TA" --bytes 67108864 --seconds 30
sent=$(sed -n 's/^sent \([0-9]*\) .*/\1/p' <<<"$OUT")
[ $RC -eq 0 ] && [[ $OUT == *"closed by the server"* ]] && [ "${sent:-0}" -lt $((16 << 20)) ] &&
	ok "a chunked body that never ends is cut off (the server closed after $sent bytes)" ||
	not_ok "endless chunked body" "rc=$RC $OUT $ERR"
[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 200 ] &&
	ok "the server still answers" || not_ok "healthz after the endless body"
[ "$(refusals too_large)" = 1 ] && ok "the cut-off body is counted as too_large" ||
	not_ok "too_large counted" "'$(refusals too_large)'"
run timeout 60 $RAW chunked --port "$PORT" --token "$TA" --bytes 100000 --seconds 30
[ $RC -eq 0 ] && [[ $OUT == *"HTTP/1.1 413 "* ]] &&
	[ "$(sed -n '/^{/p' <<<"$OUT" | jq -r .error)" = "the body is larger than serve.max_body_bytes" ] &&
	ok "a chunked body over the cap that ends is answered 413, one line" ||
	not_ok "chunked 413" "rc=$RC $OUT $ERR"
[ "$(sql "select count(*) from capture_requests")" = 0 ] && ok "nothing was queued" ||
	not_ok "nothing queued"

# --- names that are not ASCII, quoted cut to a length -------------------------------
# A host of 241 bytes (one letter, then 80 of 3 bytes) is quoted in the
# refusal up to 200 bytes, which ends inside a letter.
LONG="x$(printf '\xe2\x82\xac%.0s' $(seq 80))"
printf '{"service": "checkout", "hosts": ["%s"], "reason": "x"}' "$LONG" >"$T/longhost.json"
got=$(curl -s -m 10 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	--data-binary @"$T/longhost.json" "$U/v1/captures")
[ "$got" = 422 ] && [ "$(jq -r .error "$T/resp" | wc -l)" = 1 ] &&
	[[ $(jq -r .error "$T/resp") == "host 'x"*"' is not a pprof_http target of service 'checkout'" ]] &&
	ok "a long host of 3-byte letters is refused 422 in one line, cut between letters" ||
	not_ok "long host" "got $got $(head -c 400 "$T/resp")"
printf '{"alerts": [{"status": "firing", "labels": {"alertname": "hot", "service": "checkout", "instance": "%s"}}]}' \
	"$LONG" >"$T/longalert.json"
got=$(curl -s -m 10 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	--data-binary @"$T/longalert.json" "$U/v1/alertmanager")
[ "$got" = 200 ] && [ "$(jq '.alerts | length' "$T/resp")" = 1 ] &&
	[[ $(jq -r '.alerts[0].outcome' "$T/resp") == *"is not a pprof_http target"* ]] &&
	ok "an alert on such a host is listed with its outcome" ||
	not_ok "long alert host" "got $got $(head -c 400 "$T/resp")"

# --- a token in the address -------------------------------------------------------------
# Pasted as a release into a shared link: refused without quoting it, and
# kept nowhere (not in the comparison's audit row).
got=$(curl -s -m 10 -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TA" \
	"$U/compare?service=checkout&type=cpu&a=release:$TA&b=release:v2")
[ "$got" = 400 ] && [ "$(wc -l <"$T/resp")" = 1 ] && ! grep -q "${TA:4:16}" "$T/resp" &&
	ok "a token in a /compare address is refused, one line, not quoted" ||
	not_ok "token in address" "got $got $(cat "$T/resp")"
got=$(curl -s -m 10 -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TA" \
	"$U/compare?service=checkout&type=cpu&a=host:x&b=host:y&access_token=$TA")
[ "$got" = 400 ] && ! grep -q "${TA:4:16}" "$T/resp" &&
	ok "... and so is one in a parameter of its own" || not_ok "token parameter" "got $got $(cat "$T/resp")"
# Pasted into a capture request's reason, kept in its row and audit rows.
printf '{"service": "checkout", "hosts": ["127.0.0.2"], "reason": "slow since deploy, token %s"}' \
	"$TA" >"$T/tokreason.json"
got=$(curl -s -m 10 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	--data-binary @"$T/tokreason.json" "$U/v1/captures")
[ "$got" = 422 ] && [[ $(jq -r .error "$T/resp") == "'reason' holds a token"* ]] &&
	! grep -q "${TA:4:16}" "$T/resp" &&
	[ "$(sql "select count(*) from capture_requests")" = 0 ] &&
	ok "a token in a capture request's reason is refused 422, not quoted, nothing queued" ||
	not_ok "token in reason" "got $got $(cat "$T/resp") $(sql "select count(*) from capture_requests")"
[ "$(sql "select count(*) from audit_log where detail::text like '%${TA:4:16}%' or object like '%${TA:4:16}%'")" = 0 ] &&
	ok "no audit row holds the token" ||
	not_ok "token in audit" "$(sql "select action, detail from audit_log where detail::text like '%${TA:4:16}%'")"
# Pasted into an alert's name or fingerprint, which become a request's
# reason and incident: the alert is skipped, the token not quoted back.
# So is one that lacks its service label, which was skipped quoting its name.
for at in alertname fingerprint "alertname of an alert with no service label"; do
	case $at in
	alertname) alert='"labels": {"alertname": "see '$TA'", "service": "checkout", "instance": "127.0.0.2"}' ;;
	fingerprint) alert='"fingerprint": "fp-'$TA'", "labels": {"alertname": "hot", "service": "checkout", "instance": "127.0.0.2"}' ;;
	*) alert='"labels": {"alertname": "see '$TA'", "instance": "127.0.0.2"}' ;;
	esac
	printf '{"alerts": [{"status": "firing", %s}]}' "$alert" >"$T/tokalert.json"
	got=$(curl -s -m 10 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
		--data-binary @"$T/tokalert.json" "$U/v1/alertmanager")
	[ "$got" = 200 ] && [[ $(jq -r '.alerts[0].outcome' "$T/resp") == "skipped: the alert holds a token"* ]] &&
		! grep -q "${TA:4:16}" "$T/resp" && [ "$(sql "select count(*) from capture_requests")" = 0 ] &&
		[ "$(sql "select count(*) from audit_log where detail::text like '%${TA:4:16}%' or object like '%${TA:4:16}%'")" = 0 ] &&
		ok "a token in an alert's $at is skipped, not quoted back, kept nowhere" ||
		not_ok "token in $at" "got $got $(cat "$T/resp") $(sql "select count(*) from capture_requests")"
done

# --- an encoded NUL in the path -------------------------------------------------------------
# libmicrohttpd decodes %00 into a NUL that ends the path the server
# routes by: these were the /compare page and /healthz, answered 200.
nul_path() { # nul_path PATH [curl args]: 400, one line
	local path=$1 got
	shift
	got=$(curl -s -m 10 --path-as-is -o "$T/resp" -w '%{http_code}' "$@" "$U$path")
	[ "$got" = 400 ] && [ "$(jq -r .error "$T/resp")" = "the path holds an encoded NUL byte (%00)" ] &&
		[ "$(wc -l <"$T/resp")" = 0 ] && ok "$path is refused 400 in one line" ||
		not_ok "$path" "got $got $(head -c 300 "$T/resp")"
}
nul_path "/compare%00/../../v1/alertmanager" -u "x:$TA"
nul_path "/healthz%00.json"
nul_path "/v1/captures%00" -X POST -H "Authorization: Bearer $TA" \
	--data-binary '{"service": "checkout", "hosts": ["127.0.0.2"], "reason": "x"}'
[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz?x=%00")" = 200 ] &&
	[ "$(refusals bad_path)" = 3 ] && [ "$(sql "select count(*) from capture_requests")" = 0 ] &&
	ok "a NUL in the query of /healthz is not the path's; the three are counted as bad_path" ||
	not_ok "bad_path" "'$(refusals bad_path)'"

# --- requests that trickle in ---------------------------------------------------------
# Every slot of a second server held by clients sending a byte a second
# (three heads, one body), from one address with no per-address limit, as
# behind a proxy: past the 30 s a request has to arrive, they are closed,
# and the next client gets in.
jq '.serve.max_connections = 4 | .serve.max_connections_per_ip = 0' "$T/cfg.json" >"$T/cfg2.json"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg2.json" serve \
	--port-file "$T/s2.port" >"$T/s2.out" 2>"$T/s2.err" &
PIDS="$PIDS $!"
wait_port "$T/s2.port" || not_ok "second serve start" "$(cat "$T/s2.err")"
P2=$(cat "$T/s2.port")
SLOW=""
for i in 1 2 3 4; do
	what=head
	[ $i = 4 ] && what=body
	timeout 70 $RAW slow --port "$P2" --token "$TA" --what $what --gap 1 --seconds 55 \
		>"$T/slow$i.out" 2>&1 &
	SLOW="$SLOW $!"
done
for _ in $(seq 200); do
	[ "$(cat "$T"/slow?.out 2>/dev/null | grep -c '^connected$')" = 4 ] && break
	sleep 0.1
done
sleep 1
held=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/healthz")
# The clients give up by themselves at 55 s: a slot must free up before.
sleep 29
for waited in $(seq 30 45); do
	later=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/healthz")
	[ "$later" = 200 ] && break
	sleep 1
done
wait $SLOW
[ "$held" = 000 ] && [ "$later" = 200 ] &&
	ok "slots held by requests a byte a second free up after 30 s for the next client ($waited s)" ||
	not_ok "slow requests" "held=$held later=$later"
cut=0
for i in 1 2 3 4; do grep -q "closed by the server" "$T/slow$i.out" && cut=$((cut + 1)); done
[ $cut = 4 ] && ok "the trickling heads and body were each closed by the server" ||
	not_ok "slow clients closed" "$(cat "$T"/slow?.out)"
n=$(curl -s -m 5 "http://127.0.0.1:$P2/metrics" |
	sed -n 's/^profreg_serve_refusals_total{reason="slow_request"} //p')
[ "${n:-0}" = 4 ] && ok "each is counted as slow_request" || not_ok "slow_request counted" "'$n'"

finish
