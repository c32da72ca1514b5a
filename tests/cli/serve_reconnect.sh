#!/bin/bash
# profreg serve while its PostgreSQL stops and starts again: during the
# outage /healthz and an authenticated route answer 503 in one line, and
# the log says so as it happens, each line once however often it fails;
# once PostgreSQL is back, both answer again without restarting serve,
# and a capture request queued then is run by the worker (whose own
# connection was dropped too); a table locked by hand holds a request
# needing it for the server's lock_timeout only, and the others no
# longer. The cluster is the script's own (started
# as tests/pg.sh starts the suite's), so stopping it disturbs no other
# test. The target is tests/support/slow_pprof.py, answering at once.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port
. "$(dirname "$0")/../pg.sh"

T=$PROFREG_TEST_TMP/serve_reconnect
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	pg_tmp_stop "$T"
}
trap cleanup EXIT

pg_tmp_start "$T" || {
	not_ok "a private PostgreSQL starts"
	finish
	exit 1
}
DB=$PG_CONNINFO
HOME_DIR=$T/home
mkdir -p "$HOME_DIR"
pg_up() { # the cluster again, with the options pg_tmp_start gave it
	pg_as_owner "$PGBIN/pg_ctl" -D "$T/pg" -w -t 60 -l "$T/log/pg.log" \
		-o "-c listen_addresses= -c unix_socket_directories=$T/sock -c fsync=off -c max_connections=50" \
		start >/dev/null
}
pg_down() { pg_as_owner "$PGBIN/pg_ctl" -D "$T/pg" -m fast -w -t 60 stop >/dev/null; }

python3 "$(dirname "$0")/../support/slow_pprof.py" --port-file "$T/pprof.port" \
	--log "$T/pprof.log" --timeout 120 &
PIDS="$PIDS $!"
wait_port "$T/pprof.port" || not_ok "the pprof stand-in starts"
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "token_rate": 1000, "global_rate": 100000,
           "host_cooldown_s": 0, "default_seconds": 1},
 "services": {
   "checkout": {"sources": [{"type": "pprof_http",
                             "targets": ["127.0.0.1:$(cat "$T/pprof.port")"], "seconds": 1}]}}}
EOF
P() { pr --config "$T/cfg.json" "$@"; }
TA=$(P token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
U=http://127.0.0.1:$(cat "$T/s.port")

# code PATH: the status of an authenticated GET; the body in $T/resp
code() {
	curl -s -m 20 -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TA" "$U$1"
}
capture() {
	curl -s -m 20 -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TA" \
		--data-binary '{"service": "checkout", "count": 1, "seconds": 1, "reason": "t"}' \
		"$U/v1/captures"
}
# ran ID: wait (at most 30 s) for request ID to end; its state
ran() {
	local st
	for _ in $(seq 300); do
		st=$(sql "select state from capture_requests where id = $1")
		case $st in done | failed) break ;; esac
		sleep 0.1
	done
	echo "$st"
}

[ "$(code /healthz)" = 200 ] && [ "$(code /v1/captures/999)" = 404 ] &&
	ok "before: /healthz 200, an unknown request 404" || not_ok "before" "$(cat "$T/resp")"
[ "$(capture)" = 202 ] && [ "$(ran "$(jq -r .id "$T/resp")")" = done ] &&
	ok "before: a capture request runs" || not_ok "capture before" "$(cat "$T/resp" "$T/s.err")"

pg_down
h=$(code /healthz)
hb=$(cat "$T/resp")
a=$(code /v1/captures/999)
[ "$h" = 503 ] && [ "$hb" = "the database is unavailable" ] && [ "$a" = 503 ] &&
	[ "$(wc -l <"$T/resp")" = 0 ] && [ "$(jq -r .error "$T/resp")" = "the database is unavailable" ] &&
	ok "PostgreSQL stopped: /healthz and an authenticated route answer 503 in one line" ||
	not_ok "during the outage" "healthz $h '$hb', route $a $(cat "$T/resp")"
for _ in $(seq 30); do code /healthz >/dev/null; code /v1/captures/999 >/dev/null; done
sleep 3 # the worker finds its connection gone too, and fails to connect again meanwhile
# The warnings reach the log while serve runs, each line once, not once a failure.
lines=$(wc -l <"$T/s.err")
grep -q "the server's database connection is down" "$T/s.err" &&
	grep -q "the worker's database connection is down" "$T/s.err" && [ "$lines" -le 12 ] &&
	[ "$(sort "$T/s.err" | uniq -d | wc -l)" = 0 ] &&
	ok "the outage is in the log as it happens, each line once ($lines lines for 60 failed requests)" ||
	not_ok "log during the outage" "$lines lines: $(sort "$T/s.err" | uniq -c | sort -rn | head -5)"

pg_up || not_ok "PostgreSQL starts again" "$(tail -5 "$T/log/pg.log")"
t0=$(date +%s.%N)
for _ in $(seq 150); do
	[ "$(code /healthz)" = 200 ] && break
	sleep 0.1
done
back=$(echo "$(date +%s.%N) - $t0" | bc)
[ "$(code /healthz)" = 200 ] && ok "PostgreSQL back: /healthz answers 200 again (after ${back} s)" ||
	not_ok "healthz after the restart" "$(code /healthz) $(cat "$T/resp") $(tail -5 "$T/s.err")"
[ "$(code /v1/captures/999)" = 404 ] && ok "... and so does an authenticated route (404)" ||
	not_ok "route after the restart" "$(cat "$T/resp")"
[ "$(capture)" = 202 ] && id=$(jq -r .id "$T/resp") && [ "$(ran "$id")" = done ] &&
	[ "$(sql "select count(*) from capture_requests where state = 'done'")" = 2 ] &&
	ok "a capture request queued after the restart is run by the worker" ||
	not_ok "capture after" "$(cat "$T/resp") $(sql "select id, state, error from capture_requests")
$(tail -5 "$T/s.err")"

# A restart proper (pg_ctl restart, the options it was started with).
pg_as_owner "$PGBIN/pg_ctl" -D "$T/pg" -m fast -w -t 60 -l "$T/log/pg.log" restart >/dev/null ||
	not_ok "pg_ctl restart"
for _ in $(seq 150); do
	[ "$(code /v1/captures/999)" = 404 ] && break
	sleep 0.1
done
[ "$(code /v1/captures/999)" = 404 ] && [ "$(capture)" = 202 ] && id=$(jq -r .id "$T/resp") &&
	[ "$(ran "$id")" = done ] && ok "after pg_ctl restart, requests and captures work again" ||
	not_ok "after restart" "$(cat "$T/resp") $(tail -5 "$T/s.err")"

# A table locked by hand in psql: a request that needs it fails after the
# server's lock_timeout (3 s) instead of waiting, and holds the others up
# no longer (it waited for the lock, holding every request, before).
psql "$DB" -qAt -c "begin" -c "lock table api_tokens in access exclusive mode" \
	-c "select pg_sleep(30)" >/dev/null 2>&1 &
LOCKER=$!
PIDS="$PIDS $LOCKER"
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks l join pg_class c on c.oid = l.relation
		where c.relname = 'api_tokens' and l.mode = 'AccessExclusiveLock' and l.granted")" = 1 ] && break
	sleep 0.1
done
t0=$(date +%s.%N)
curl -s -m 15 -o "$T/resp" -w '%{http_code}' -H "Authorization: Bearer $TA" \
	"$U/v1/captures/999" >"$T/route.code" &
RPID=$!
sleep 0.5 # the route's request is answered first, and waits on the lock
h=$(curl -s -m 6 -o /dev/null -w '%{http_code}' "$U/healthz")
htook=$(echo "$(date +%s.%N) - $t0" | bc)
wait $RPID
a=$(cat "$T/route.code")
took=$htook
sql "select pg_terminate_backend(pid) from pg_stat_activity where query like '%pg_sleep(30)%'
	and pid <> pg_backend_pid()" >/dev/null
[ "$a" = 503 ] && [ "$(jq -r .error "$T/resp")" = "the database is unavailable" ] &&
	[ "$(echo "$took < 8" | bc)" = 1 ] && [ "$h" = 200 ] &&
	ok "a table locked by hand: the request that needs it is 503, /healthz behind it 200 after ${took} s" ||
	not_ok "lock" "route $a after $took s $(cat "$T/resp"), healthz '$h'"
[ "$(code /v1/captures/999)" = 404 ] && ok "the lock gone, the route answers again" ||
	not_ok "after the lock" "$(cat "$T/resp")"

[ "$(grep -c "the server's database connection is back" "$T/s.err")" = 2 ] &&
	[ "$(grep -c "the worker's database connection is back" "$T/s.err")" = 2 ] &&
	ok "the log says each time each connection came back, while serve runs" ||
	not_ok "log" "$(cat "$T/s.err")"
kill -TERM $SPID
for _ in $(seq 100); do kill -0 $SPID 2>/dev/null || break; sleep 0.1; done
grep -q "no connection to the server (and [0-9]* more times in" "$T/s.err" &&
	ok "on stopping, the warnings said once are said with how often they came again" ||
	not_ok "tally" "$(cat "$T/s.err")"

finish
