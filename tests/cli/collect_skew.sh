#!/bin/bash
# collect's CPU cooldown holds when this machine's clock is ahead of the
# database's: the time a host still cools down is computed by the
# database, from the clock that wrote its last profile's time. profreg
# runs with its wall clock an hour ahead (tests/support/clockskew.c,
# LD_PRELOAD); the target is tests/support/slow_pprof.py on loopback.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/collect_skew
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

cc -shared -fPIC -o "$T/clockskew.so" "$ROOT/tests/support/clockskew.c" -ldl &&
	ok "the clock shim builds" || not_ok "clock shim"
python3 "$ROOT/tests/support/slow_pprof.py" --port-file "$T/a.port" --log "$T/a.log" \
	--timeout 60 &
PIDS="$PIDS $!"
wait_port "$T/a.port" || not_ok "the pprof server starts"
touch "$T/a.log"
A=127.0.0.1:$(cat "$T/a.port")

fresh_db collect_skew
pr db init >"$T/init.out" 2>&1 || not_ok "db init" "$(cat "$T/init.out")"
pr service add pay --team a >/dev/null && pr service enable pay >/dev/null
cat >"$T/cfg.json" <<EOF
{"collect": {"budget_s": 1, "cooldown_s": 600, "retries": 0},
 "services": {"pay": {"types": ["cpu"], "sources": [{"type": "pprof_http", "seconds": 1,
   "targets": ["$A"]}]}}}
EOF
# The host was CPU-profiled a minute ago (by the database's clock): 540 s left.
sql "insert into collect_slots (service_id, source, target, profile_type, slot_start,
	slot_end, host, outcome, fetched_at) select id, 'pprof_http', '$A', 'cpu',
	now() - interval '2 hours', now() - interval '1 hour', '127.0.0.1', 'empty',
	now() - interval '1 minute' from services where name = 'pay'" >/dev/null
# A sanitizer build's runtime must come first among the preloaded libraries.
PRELOAD=$T/clockskew.so
asan=$(ldd "$PROFREG_BIN" | awk '/libasan/ { print $3; exit }')
[ -n "$asan" ] && PRELOAD="$asan $PRELOAD"
SKEW_S=3600 LD_PRELOAD=$PRELOAD run pr --config "$T/cfg.json" collect --service pay
[ "$(wc -l <"$T/a.log")" = 0 ] &&
	ok "a clock an hour ahead does not end the host's cooldown early: not profiled" ||
	not_ok "skew" "$(cat "$T/a.log")" "$OUT" "$ERR"
[ $RC -eq 0 ] && [[ $OUT == *" 1 deferred"* ]] && ok "the host is deferred" ||
	not_ok "deferred" "rc=$RC $OUT $ERR"
finish
