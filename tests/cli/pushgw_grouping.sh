#!/bin/bash
# The Pushgateway groups a run's metrics by instance and kind as they are
# named: against Debian's prometheus-pushgateway (started here on a free
# loopback port), an instance of ".." (which a URL's path drops) arrives
# as "..", and "a/b", 'a"b' and "a_b" arrive as three instances, not one
# ("_"); a plain name is still sent plain.
. "$(dirname "$0")/lib.sh"
fresh_db cli_pushgw_grouping
T=$PROFREG_TEST_TMP/cli_pushgw_grouping
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
# Ours alone: in memory (Debian's default persistence file holds what other
# runs pushed), and on a port no other server took between probe and bind.
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

# push INSTANCE: a nightly with metrics.instance INSTANCE.
push() {
	jq -n --arg u "http://127.0.0.1:$PG_PORT" --arg i "$1" \
		'{metrics: {pushgateway: $u, instance: $i}}' >"$T/cfg.json"
	run pr --quiet --config "$T/cfg.json" nightly
}
for i in plain-host.1 .. . a/b 'a"b' a_b 'web 1'; do
	push "$i"
done
M=$(curl -sf "http://127.0.0.1:$PG_PORT/metrics" | grep '^profreg_run_success{')
for want in 'plain-host.1' '..' '.' 'a/b' 'a\"b' 'a_b' 'web 1'; do
	grep -qF "profreg_run_success{instance=\"$want\",job=\"profreg\",kind=\"nightly\"}" <<<"$M" &&
		ok "instance '$want' arrives as it is" || not_ok "instance '$want'" "$M"
done
[ "$(wc -l <<<"$M")" = 7 ] && ok "seven instances, seven groups" || not_ok "groups" "$M"
finish
