#!/bin/bash
# A nightly refused for the lock another nightly holds pushes no metrics
# to the Pushgateway (Debian's prometheus-pushgateway, started here on a
# free loopback port): with the cron line on two hosts, the host that
# lost the lock pushed a failed run every night, and its group kept
# profreg_run_success at 0. A nightly that runs still pushes.
. "$(dirname "$0")/lib.sh"
fresh_db cli_nightly_lock_push
T=$PROFREG_TEST_TMP/cli_nightly_lock_push
rm -rf "$T" && mkdir -p "$T"
PGW=${PUSHGATEWAY:-/usr/bin/prometheus-pushgateway}
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT
if [ ! -x "$PGW" ]; then
	not_ok "prometheus-pushgateway is installed (make deps)"
	finish
	exit 1
fi
wait_ready() {
	for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
up=false
for _ in 1 2 3 4 5; do
	PG_PORT=$(free_port)
	"$PGW" --web.listen-address="127.0.0.1:$PG_PORT" --persistence.file= --log.level=warn \
		>"$T/pgw.log" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	if wait_ready "http://127.0.0.1:$PG_PORT/-/ready" && kill -0 "$pid" 2>/dev/null &&
		[ -z "$(curl -sf "http://127.0.0.1:$PG_PORT/metrics" | grep '^push_time_seconds')" ]; then
		up=true
		break
	fi
	kill "$pid" 2>/dev/null
done
$up && ok "pushgateway is up on port $PG_PORT, empty" ||
	not_ok "pushgateway start" "$(tail -5 "$T/pgw.log")"
pr --quiet db init
jq -n --arg u "http://127.0.0.1:$PG_PORT" '{metrics: {pushgateway: $u, instance: "host-b"}}' \
	>"$T/cfg.json"
pushed() { curl -sf "http://127.0.0.1:$PG_PORT/metrics" | grep '^profreg_run_success{'; }

# Another nightly holds the lock.
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-nightly')), pg_sleep(4)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted
		and database = (select oid from pg_database where datname = current_database())")" = 1 ] && break
	sleep 0.1
done
run pr --config "$T/cfg.json" nightly
[ $RC -eq 3 ] && [[ $ERR == *"another nightly run holds the lock"* ]] &&
	ok "a second nightly is refused for the lock (exit 3)" || not_ok "refused" "rc=$RC $ERR"
[ -z "$(pushed)" ] && ok "the refused nightly pushes nothing" ||
	not_ok "refused nightly pushed" "$(pushed)"
wait "$holder" 2>/dev/null

# With the lock free the nightly runs (nothing registered: it checked
# nothing, exit 3) and pushes its failure.
run pr --config "$T/cfg.json" nightly
[ $RC -eq 3 ] && [ "$(pushed)" = \
	'profreg_run_success{instance="host-b",job="profreg",kind="nightly"} 0' ] &&
	ok "a nightly that runs pushes its outcome" || not_ok "nightly push" "rc=$RC $(pushed) $ERR"
finish
