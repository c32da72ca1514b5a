#!/bin/bash
# profreg escalate, two services on one host (tests/support/escalate_env.sh):
# a host's elevated session belongs to the service it was opened for.
# Another service on the same host whose own signal crosses its band is
# refused (the host is elevated), and when that signal comes back it
# neither lowers nor ends the first service's session. A signal or load
# query that also answers for other hosts is read for the service's hosts
# only, each with its own value. A run's time is the database's, not the
# machine's.
. "$(dirname "$0")/lib.sh"
NAME=escalate_shared
. "$(dirname "$0")/../support/escalate_env.sh"

# search runs on 127.0.0.2 beside checkout, and on 127.0.0.5; its signal
# is the hosts' load, a query that also answers for hosts not search's.
pr service add search --team a >/dev/null && pr service enable search >/dev/null
jq --arg t "127.0.0.2:$(cat "$T/go2.port")" --arg u "127.0.0.5:$(cat "$T/go5.port")" '
	.services.search = {types: ["cpu"], sources: [{type: "pprof_http", targets: [$t, $u],
		seconds: 1, connect_timeout_ms: 200, timeout_ms: 5000}]}
	| .escalate.services.search = {signals: {load: "demo_load1"}}' \
	"$T/cfg.json" >"$T/shared.json"
S() { pr --config "$T/shared.json" escalate --json; }
for _ in 1 2 3 4 5 6; do run S; done
search=$(sql "select id from services where name = 'search'")
[ $RC -eq 0 ] && [ "$(jq '.decisions | length' <<<"$OUT")" = 0 ] &&
	[ "$(sql "select string_agg(host || ':' || n, ',' order by host) from (select host, count(*) n
		from signal_samples where service_id = $search group by host) x")" = "127.0.0.2:6,127.0.0.5:6" ] &&
	ok "six quiet runs teach search its band on both its hosts, the other hosts' series left out" ||
	not_ok "quiet" "rc=$RC $(head -c 600 <<<"$OUT") $ERR" \
	"$(sql "select host, count(*) from signal_samples where service_id = $search group by host")"
checkout=$(sql "select id from services where name = 'checkout'")
open_of() { sql "select count(*) from elevated_sessions where host = '127.0.0.2'
	and ended_at is null and service_id = $checkout"; }
# search_action: search's decision on 127.0.0.2 in the last run, if any.
search_action() {
	jq -r '.decisions[] | select(.service == "search" and .host == "127.0.0.2") | .action' \
		<<<"$OUT" | head -1
}

LAT[127.0.0.2]=0.5
publish && scraped || not_ok "scrape"
run S
[ "$(open_of)" = 1 ] && ok "checkout's latency opens a session on 127.0.0.2" ||
	not_ok "checkout escalates" "rc=$RC $(head -c 800 <<<"$OUT") $ERR"

LOAD[127.0.0.2]=5
publish && scraped || not_ok "scrape"
run S
[ "$(search_action)" = refused ] && [[ $OUT == *host_elevated* ]] && [ "$(open_of)" = 1 ] &&
	ok "search's own crossing on the elevated host is refused, not taken over, and not judged by another host's load" ||
	not_ok "search outside" "$(jq -c '.decisions' <<<"$OUT") $ERR"

LOAD[127.0.0.2]=0.5
publish && scraped || not_ok "scrape"
for _ in 1 2 3; do
	run S
	[ -n "$(search_action)" ] && break
	sleep 1.5
done
[ -z "$(search_action)" ] && [ "$(open_of)" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.deescalated'
		and object = 'host:127.0.0.2'")" = 0 ] &&
	ok "search back inside its band leaves checkout's session open" ||
	not_ok "search inside" "$(search_action) open=$(open_of) $(jq -c '.decisions' <<<"$OUT")"

# A machine whose clock stepped ten minutes back: the run's samples are
# on the database's clock, so they stay in the band's window.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cc -shared -fPIC -o "$T/clockskew.so" "$ROOT/tests/support/clockskew.c" -ldl ||
	not_ok "clock shim"
PRELOAD=$T/clockskew.so
asan=$(ldd "$PROFREG_BIN" | awk '/libasan/ { print $3; exit }')
[ -n "$asan" ] && PRELOAD="$asan $PRELOAD"
last=$(sql "select max(id) from signal_samples")
SKEW_S=-600 LD_PRELOAD=$PRELOAD run S
[ $RC -eq 0 ] && [ "$(sql "select count(*) from signal_samples where id > $last")" -gt 0 ] &&
	[ "$(sql "select count(*) from signal_samples where id > $last
		and abs(extract(epoch from at - now())) > 60")" = 0 ] &&
	ok "a run on a machine whose clock is ten minutes behind stores its samples at the database's time" ||
	not_ok "clock behind" "rc=$RC $ERR" "$(sql "select min(at), max(at), now() from signal_samples where id > $last")"
finish
