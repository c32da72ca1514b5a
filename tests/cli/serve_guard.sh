#!/bin/bash
# profreg serve's guards in front of its work: a flood of requests
# without a valid token (none, one of the wrong shape, an unknown one)
# is refused 401 without touching the global rate limit, whose budget
# stays for the callers with a token (an Alertmanager webhook posted
# during the flood is answered 200), and each refusal is counted in
# /metrics. A request with two Content-Length headers, or one with
# Transfer-Encoding, or a header with a blank before its colon or folded
# onto the line before, is refused 400 and nothing after it is read as a
# request. Every answer serve writes, a refusal of any route included,
# carries the headers that keep a browser from sniffing, framing or
# running it (libmicrohttpd's own refusals of what it cannot read carry
# none, and hold nothing but a fixed sentence). No
# capture target is needed: nothing here queues a capture.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/serve_guard
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

fresh_db serve_guard
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
cat >"$T/cfg.json" <<JSON
{"serve": {"listen": "127.0.0.1:0", "global_rate": 5, "token_rate": 1000}}
JSON
TA=$(pr --config "$T/cfg.json" token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
PIDS="$PIDS $!"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")
refusals() {
	curl -s -m 5 "$U/metrics" | sed -n "s/^profreg_serve_refusals_total{reason=\"$1\"} //p"
}
global_count() { sql "select coalesce(sum(n), 0) from rate_counters where key = 'global'"; }

# --- requests without a valid token -----------------------------------------------------
# urls N PATH: PATH N times, for one curl that sends them over one kept-alive connection.
urls() { for _ in $(seq "$1"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$U$2"; done; }
urls 30 /v1/alertmanager >"$T/anon.curl"
codes=$(curl -s -m 30 -K "$T/anon.curl" -X POST -d '{"alerts": []}' \
	-w '%{http_code}\n' | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')
[ "$codes" = "401x30 " ] && ok "30 webhooks without a token over one connection are each 401" ||
	not_ok "anonymous 401" "$codes"
BAD="prt_$(printf 'g%.0s' $(seq 64))"
UNKNOWN="prt_$(printf '0%.0s' $(seq 64))"
got=$(curl -s -m 5 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $BAD" \
	-d '{"alerts": []}' "$U/v1/alertmanager")
[ "$got" = 401 ] && [ "$(jq -r .error "$T/resp")" = "not a profreg token" ] &&
	ok "a token of the wrong shape is 401 'not a profreg token'" || not_ok "bad shape" "$got $(cat "$T/resp")"
got=$(curl -s -m 5 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $UNKNOWN" \
	-d '{"alerts": []}' "$U/v1/alertmanager")
[ "$got" = 401 ] && [ "$(jq -r .error "$T/resp")" = "unknown token" ] &&
	ok "an unknown token is 401" || not_ok "unknown token" "$got $(cat "$T/resp")"
got=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -u "x:$UNKNOWN" "$U/compare")
[ "$got" = 401 ] && ok "... and so is one on /compare" || not_ok "compare unknown" "$got"
[ "$(global_count)" = 0 ] &&
	ok "none of them was counted against the global rate limit" ||
	not_ok "global counter" "$(global_count)"
[ "$(refusals unauthenticated)" = 33 ] && ok "each is counted as unauthenticated" ||
	not_ok "unauthenticated counted" "'$(refusals unauthenticated)'"

# Four clients flood without a token (bounded by the clock, 20 s, and by
# the count); once the flood is under way (20 refusals, on a loaded
# machine curl takes a while to start), a webhook with the token is
# still answered, and the flood is stopped.
urls 20000 /v1/alertmanager >"$T/flood.curl"
FLOOD=""
for i in 1 2 3 4; do
	# -N: each answer's code written at once, not lost in a buffer when timeout stops it.
	timeout 20 curl -s -N -m 20 -K "$T/flood.curl" -X POST -d '{"alerts": []}' \
		-w '%{http_code}\n' >"$T/flood$i.out" 2>/dev/null &
	FLOOD="$FLOOD $!"
done
for _ in $(seq 200); do
	[ "$(cat "$T"/flood?.out 2>/dev/null | grep -c '^401$')" -gt 20 ] && break
	sleep 0.05
done
got=$(curl -s -m 5 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	-d '{"alerts": []}' "$U/v1/alertmanager")
kill $FLOOD 2>/dev/null
wait $FLOOD
flooded=$(cat "$T"/flood?.out | grep -c '^401$')
[ "$got" = 200 ] && [ "$flooded" -gt 20 ] &&
	ok "a webhook with the token during a flood of $flooded without one is answered 200" ||
	not_ok "webhook in a flood" "got $got $(cat "$T/resp") after $flooded refusals"
[ "$(global_count)" = 1 ] && ok "only the call with the token was counted" ||
	not_ok "global count after the flood" "$(global_count)"

# --- a request whose body's length is not one number ---------------------------------------
# RFC 9112 6.3: two Content-Length headers, or one with Transfer-Encoding,
# leave the body's end to whoever reads it; what one server takes for the
# rest of the body another takes for a request of its own. Each is 400,
# one answer, and nothing after it is read as a request.
RAW="python3 $(cd "$(dirname "$0")/../support" && pwd)/rawclient.py"
PORT=$(cat "$T/s.port")
# framed WHAT HEADERS BODY: ok when the only answer is 400.
framed() {
	local what=$1 req
	req="POST /v1/alertmanager HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n$2\r\n$3"
	run timeout 20 $RAW raw --port "$PORT" --token "$TA" --seconds 3 --data "$req"
	[ "$(grep -c '^HTTP/1.1 ' <<<"$OUT")" = 1 ] && [[ $OUT == *$'\n'"HTTP/1.1 400 "* ]] &&
		ok "$what is refused 400, one answer" || not_ok "$what" "$OUT"
}
SMUGGLED='GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
framed "two equal Content-Length headers" 'Content-Length: 14\r\nContent-Length: 14\r\n' \
	'{"alerts": []}'
framed "two Content-Length headers, the longer first" \
	'Content-Length: 14\r\nContent-Length: 2\r\n' '{"alerts": []}'
framed "two Content-Length headers, the shorter first (a request after the body)" \
	'Content-Length: 14\r\nContent-Length: 50\r\n' "{\"alerts\": []}$SMUGGLED"
framed "Content-Length with Transfer-Encoding" \
	'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n' "e\r\n{\"alerts\": []}\r\n0\r\n\r\n"
# libmicrohttpd keeps a blank before the colon in the header's name, and
# appends a folded line (one starting with a blank) to the name of the
# header before: a Transfer-Encoding so written, or a Content-Length so
# renamed, would pass as another header here and be read by a proxy in
# front as the body's length (RFC 9112 5.1, 5.2).
framed "a blank before a header's colon" 'Content-Length: 2\r\nTransfer-Encoding : chunked\r\n' \
	"{}$SMUGGLED"
framed "a tab before a header's colon" 'Content-Length: 2\r\nTransfer-Encoding\t: chunked\r\n' \
	"{}$SMUGGLED"
framed "a Transfer-Encoding folded onto the header before" \
	'Content-Length: 2\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\n' "{}$SMUGGLED"
framed "a line folded onto Content-Length" 'Content-Length: 2\r\n\tx\r\n' "{}$SMUGGLED"
framed "a header name that is not a token" 'Content-Length: 2\r\nX(a): 1\r\n' '{}'
# A coding libmicrohttpd does not frame by, where a proxy frames by its
# last coding, chunked: the request hung and took the next one into it.
CHUNKED='e\r\n{"alerts": []}\r\n0\r\n\r\n'
framed "Transfer-Encoding: gzip, chunked" 'Transfer-Encoding: gzip, chunked\r\n' \
	"$CHUNKED$SMUGGLED"
framed "Transfer-Encoding: identity" 'Transfer-Encoding: identity\r\n' "$CHUNKED$SMUGGLED"
framed "Transfer-Encoding: chunked with a blank after it" 'Transfer-Encoding: chunked \r\n' \
	"$CHUNKED$SMUGGLED"
[ "$(refusals bad_framing)" = 12 ] && ok "each is counted as bad_framing" ||
	not_ok "bad_framing counted" "'$(refusals bad_framing)'"
got=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	-d '{"alerts": []}' "$U/v1/alertmanager")
[ "$got" = 200 ] && ok "one Content-Length is answered as before" || not_ok "one length" "$got"
got=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	-H 'Transfer-Encoding: chunked' -d '{"alerts": []}' "$U/v1/alertmanager")
[ "$got" = 200 ] && ok "a chunked body is answered as before" || not_ok "chunked" "$got"
# Headers as clients send them still pass: blanks after the colon, names
# of every tchar, a header section larger than a first read.
big=$(head -c 20000 /dev/zero | tr '\0' a)
got=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
	-H "X-Odd!#\$%&'*+-.^_\`|~9: v" -H 'X-Tabbed:	 v' -H "X-Big: $big" \
	-d '{"alerts": []}' "$U/v1/alertmanager")
[ "$got" = 200 ] && ok "token names, blanks after a colon and a 20 KB header are answered 200" ||
	not_ok "plain headers" "$got"

# --- the headers every answer carries ------------------------------------------------------
# guarded WHAT CURL-ARGS...: ok when the answer has all four headers.
guarded() {
	local what=$1 code
	shift
	code=$(curl -s -m 5 -o /dev/null -D "$T/hdr" -w '%{http_code}' "$@")
	grep -qi '^X-Content-Type-Options: nosniff' "$T/hdr" &&
		grep -qi '^X-Frame-Options: DENY' "$T/hdr" &&
		grep -qi '^Referrer-Policy: no-referrer' "$T/hdr" &&
		grep -qi "^Content-Security-Policy: default-src 'none'; frame-ancestors 'none'" "$T/hdr" &&
		ok "$what ($code) carries nosniff, X-Frame-Options, Referrer-Policy and a CSP" ||
		not_ok "headers of $what" "$code $(cat "$T/hdr")"
}
guarded "POST /compare" -X POST -d x "$U/compare?service=web"
guarded "/compare without a token" "$U/compare"
guarded "an unknown endpoint" "$U/nothing"
guarded "the API without a token" -X POST -d '{}' "$U/v1/captures"
guarded "GET of the webhook" "$U/v1/alertmanager"
guarded "/healthz" "$U/healthz"
# libmicrohttpd refuses a request it cannot read before serve sees it,
# with its own answer, to which no header can be added (docs/serve.md):
# a fixed sentence, nothing of the caller's, and the connection closed.
run timeout 20 $RAW raw --port "$PORT" --seconds 3 \
	--data 'POST /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2, 40\r\n\r\n{}'
[[ $OUT == *$'\n'"HTTP/1.1 400 "* ]] && [[ $OUT == *"<title>Request malformed</title>"* ]] &&
	[[ $OUT != *nothing* ]] && [[ $OUT == *"Connection: close"* ]] &&
	ok "libmicrohttpd's own 400 holds only its fixed text and closes the connection" ||
	not_ok "libmicrohttpd's 400" "$OUT"

finish
