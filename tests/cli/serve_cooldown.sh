#!/bin/bash
# serve's host cooldown counts from when the request that captured the
# host ended, not from when it was queued: a capture that took longer
# than host_cooldown_s (a slow target, tests/support/slow_pprof.py)
# still leaves the host cooling down after it.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/serve_cooldown
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

python3 "$(dirname "$0")/../support/slow_pprof.py" --delay 3 --port-file "$T/a.port" \
	--log "$T/a.log" --timeout 60 &
PIDS="$PIDS $!"
wait_port "$T/a.port" || not_ok "the slow server starts"

fresh_db serve_cooldown
pr db init >/dev/null 2>&1
pr service add pay --team a >/dev/null && pr service enable pay >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "token_rate": 1000, "global_rate": 100000,
           "host_cooldown_s": 2, "default_seconds": 1},
 "services": {"pay": {"types": ["heap"], "sources": [{"type": "pprof_http",
   "targets": ["127.0.0.1:$(cat "$T/a.port")"]}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
TA=$(P token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
PIDS="$PIDS $!"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")
post() {
	curl -s -o "$T/resp" -D "$T/hdr" -w '%{http_code}' -X POST \
		-H "Authorization: Bearer $TA" -H 'Content-Type: application/json' \
		--data-binary '{"service": "pay", "hosts": ["127.0.0.1"], "types": ["heap"],
		"reason": "cooldown"}' "$U/v1/captures"
}

[ "$(post)" = 202 ] && ok "a capture of the slow host is queued" ||
	not_ok "queue" "$(cat "$T/resp")"
ID=$(jq -r .id "$T/resp")
code=$(post)
[ "$code" = 409 ] && [ "$(jq -r .reason "$T/resp")" = host_busy ] &&
	ok "while it is queued or running, the host is busy" ||
	not_ok "busy" "$code $(cat "$T/resp")"
for _ in $(seq 100); do
	[ "$(sql "select state from capture_requests where id = $ID")" = done ] && break
	sleep 0.1
done
# Queued more than host_cooldown_s ago, but its capture just ended.
code=$(post)
[ "$code" = 409 ] && [ "$(jq -r .reason "$T/resp")" = host_cooldown ] &&
	grep -qi '^Retry-After: [1-9]' "$T/hdr" &&
	ok "right after a capture that took longer than the cooldown, the host cools down" ||
	not_ok "cooldown after the capture" "$code $(cat "$T/resp")" \
	"$(sql "select state, created_at, finished_at, now() from capture_requests")"
[ "$(wc -l <"$T/a.log")" = 1 ] && ok "the host was profiled once" ||
	not_ok "profiles" "$(cat "$T/a.log")"
sleep 2.2
[ "$(post)" = 202 ] && ok "once the cooldown has passed after the capture, it is admitted" ||
	not_ok "after the cooldown" "$(cat "$T/resp")"
finish
