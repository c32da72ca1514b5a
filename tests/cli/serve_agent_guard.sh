#!/bin/bash
# The snapshot agent (profreg serve --agent) against clients that hold
# its connections without its secret: 64 connections from one address
# sending a header line every 5 s. Past 8 from that address each is
# closed at once, so another address is answered meanwhile; the 8 it
# kept are closed once their requests have not arrived in 30 s; each
# refusal is counted in the agent's /metrics. A request with two
# lengths for its body, or a header with a blank before its colon or
# folded onto the line before, is refused 400. A second agent takes a
# snapshot of 33 s meanwhile: a request sent during it, on a connection
# opened before it, is answered after it, not cut for its deadline.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/serve_agent_guard
RAW="python3 $(cd "$(dirname "$0")/../support" && pwd)/rawclient.py"
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

fresh_db serve_agent_guard
pr db init >/dev/null 2>&1
umask 077
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/agent.secret"
umask 022
echo "{\"serve\": {\"agent_secret_file\": \"$T/agent.secret\"}}" >"$T/agent.json"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/agent.json" serve --agent \
	--listen 127.0.0.1:0 --port-file "$T/a.port" >"$T/a.out" 2>"$T/a.err" &
PIDS="$PIDS $!"
wait_port "$T/a.port" && ok "the agent listens" || not_ok "agent start" "$(cat "$T/a.err")"
PORT=$(cat "$T/a.port")
A=http://127.0.0.1:$PORT
# From another loopback address than the clients holding connections.
other() { curl -s -m 5 --interface 127.0.0.2 "$@"; }
refusals() { other "$A/metrics" | sed -n "s/^profreg_agent_refusals_total{reason=\"$1\"} //p"; }

# Two lengths for one body (RFC 9112 6.3), or a header libmicrohttpd reads
# otherwise than a proxy may (a blank before its colon, a folded line:
# RFC 9112 5.1, 5.2): 400, one answer, the rest unread.
SMUGGLED='GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
# refused WHAT HEADERS: ok when a POST with HEADERS, {} and a GET after it gets only a 400.
refused() {
	run timeout 20 $RAW raw --port "$PORT" --seconds 3 \
		--data "POST /v1/snapshots HTTP/1.1\r\nHost: 127.0.0.1\r\n$2\r\n{}$SMUGGLED"
	[ "$(grep -c '^HTTP/1.1 ' <<<"$OUT")" = 1 ] && [[ $OUT == *$'\n'"HTTP/1.1 400 "* ]] &&
		ok "a request with $1 is refused 400, one answer" || not_ok "framing: $1" "$OUT"
}
refused "Content-Length twice" 'Content-Length: 2\r\nContent-Length: 40\r\n'
refused "Content-Length and Transfer-Encoding" 'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n'
refused "a blank before a colon" 'Content-Length: 2\r\nTransfer-Encoding : chunked\r\n'
refused "a tab before a colon" 'Content-Length: 2\r\nTransfer-Encoding\t: chunked\r\n'
refused "a folded Transfer-Encoding" \
	'Content-Length: 2\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\n'
refused "a line folded onto Content-Length" 'Content-Length: 2\r\n x\r\n'
[ "$(refusals bad_framing)" = 6 ] && ok "each counted as bad_framing" ||
	not_ok "bad_framing counted" "'$(refusals bad_framing)'"

# A second agent takes a snapshot of 33 s (its sampling interval) with its
# one thread, meanwhile the hold below runs against the first. A request
# on a connection opened before the snapshot, sent in full during it, is
# read only once it ends, past the 30 s deadline from the connection's
# opening: that time is the agent's, not the client's, so the request is
# answered (401: no secret), not cut as slow.
cat >"$T/busy.json" <<JSON
{"serve": {"agent_secret_file": "$T/agent.secret"},
 "snapshot": {"time_budget_ms": 85000, "sample_ms": 33000}}
JSON
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/busy.json" serve --agent \
	--listen 127.0.0.1:0 --port-file "$T/b.port" --name busyhost >"$T/b.out" 2>"$T/b.err" &
PIDS="$PIDS $!"
wait_port "$T/b.port" && ok "a second agent listens" || not_ok "agent 2 start" "$(cat "$T/b.err")"
B=http://127.0.0.1:$(cat "$T/b.port")
QREQ='POST /v1/snapshots HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n'
timeout 70 $RAW raw --port "$(cat "$T/b.port")" --wait 4 --seconds 60 \
	--data "${QREQ}Content-Length: 2\r\n\r\n{}" >"$T/queued.out" 2>&1 &
QUEUED=$!
PIDS="$PIDS $QUEUED"
for _ in $(seq 50); do grep -q '^connected' "$T/queued.out" && break; sleep 0.1; done
curl -s -m 70 -o "$T/busy.resp" -w '%{http_code} %{time_total}' -X POST \
	-H "Authorization: Bearer $(cat "$T/agent.secret")" --data-binary '{"host": "busyhost"}' \
	"$B/v1/snapshots" >"$T/busy.code" 2>&1 &
BUSY=$!
PIDS="$PIDS $BUSY"

timeout 70 $RAW hold --port "$PORT" --conns 64 --gap 5 --seconds 60 --path /v1/snapshots \
	>"$T/hold.out" 2>&1 &
HOLD=$!
PIDS="$PIDS $HOLD"
for _ in $(seq 100); do grep -q '^connected' "$T/hold.out" && break; sleep 0.1; done
held_at=$(date +%s)
sleep 2
got=$(other -o /dev/null -w '%{http_code}' "$A/healthz")
[ "$got" = 200 ] && ok "with 64 connections held from one address, another is answered" ||
	not_ok "locked out" "healthz from another address: $got; $(cat "$T/hold.out")"
n=$(refusals connections_per_ip)
[ "${n:-0}" -ge 56 ] && ok "past 8 from that address each was closed at once ($n counted)" ||
	not_ok "connections_per_ip counted" "'$n' $(cat "$T/hold.out")"
# The 8 kept are closed once their requests have been arriving for 30 s;
# a client arriving is what has the agent look (as in serve).
for waited in $(seq 1 45); do
	other -o /dev/null "$A/healthz"
	grep -q '^closed 64$' "$T/hold.out" && break
	sleep 1
done
# Timed from when the hold connected, not from the loop's start: the
# checks before the loop take seconds of their own on a busy machine.
held=$(($(date +%s) - held_at))
grep -q '^closed 64$' "$T/hold.out" && [ "$held" -ge 28 ] &&
	ok "the 8 it kept were closed for their deadline (after about $held s)" ||
	not_ok "deadline" "held $held s (waited $waited): $(tail -n 3 "$T/hold.out")"
[ "$(refusals slow_request)" = 8 ] && ok "each counted as slow_request" ||
	not_ok "slow_request counted" "'$(refusals slow_request)'"
wait $HOLD $BUSY $QUEUED
[ "$(sql "select count(*) from snapshots")" = 1 ] &&
	ok "no snapshot was taken but the one asked with the secret" || not_ok "snapshots"
read -r code took <"$T/busy.code"
[ "$code" = 201 ] && [ "${took%.*}" -ge 31 ] &&
	ok "the second agent took a snapshot of $took s" ||
	not_ok "the long snapshot" "$(cat "$T/busy.code" "$T/busy.resp" "$T/b.err")"
queued=$(curl -s -m 5 "$B/metrics" |
	sed -n 's/^profreg_agent_refusals_total{reason="\(.*\)"} /\1 /p')
grep -q '^HTTP/1.1 401 ' "$T/queued.out" && [ -z "$queued" ] &&
	ok "a request sent in full during the snapshot is answered after it, not cut as slow" ||
	not_ok "queued during the snapshot" "refusals '$queued': $(cat "$T/queued.out")"
finish
