#!/bin/bash
# profreg escalate against a real Prometheus (Debian's prometheus,
# started here on a free loopback port with a private config and data
# folder) scraping a test exporter (tests/servers/metrics_file.c) whose
# latency and load metrics the test drives, with real Go services
# (net/http/pprof) as capture targets executed by `profreg serve`:
# a host whose latency jumps goes to level 1 and is captured; persisting
# takes it to level 2 with a heap profile; back in its band it
# de-escalates after the cooldown; a flapping signal re-escalates at most
# once per window; a host over the load ceiling is skipped and audited; a
# session ends at its hard expiry while the signal stays high; a
# fleet-wide spike on 20 hosts elevates no more than the fleet cap.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"
BUILD=${BUILD:-build}
PROM=${PROMETHEUS:-/usr/bin/prometheus}
EXPORTER=${METRICS_FILE:-$BUILD/servers/metrics_file}

T=$PROFREG_TEST_TMP/escalate
rm -rf "$T"
mkdir -p "$T/prom"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

if [ ! -x "$PROM" ] || [ ! -x "$EXPORTER" ]; then
	not_ok "prometheus is installed (make deps) and metrics_file is built" "$PROM $EXPORTER"
	finish
	exit 1
fi
if ! go_build "$PROFREG_TEST_TMP/go" pprofdemo "$T/pprofdemo" 2>"$T/build.err"; then
	not_ok "go build" "$(cat "$T/build.err")"
	finish
	exit 1
fi

free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}

# Four real Go services, each on its own loopback address.
for i in 2 3 4 5; do
	GODEBUG=asyncpreemptoff=1 "$T/pprofdemo" -addr "127.0.0.$i:0" -port-file "$T/go$i.port" \
		-lifetime 300s >"$T/go$i.log" 2>&1 &
	PIDS="$PIDS $!"
done
for i in 2 3 4 5; do wait_port "$T/go$i.port" || not_ok "go service 127.0.0.$i starts"; done

# The exporter: the metrics of every host, from one file the test rewrites.
# LAT[host] and LOAD[host]; hosts 127.0.0.2-5 are the Go services,
# 127.0.1.1-20 a fleet of targets nothing listens on (the caps are about
# sessions, and only admitted hosts are captured).
declare -A LAT LOAD
HOSTS="127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5"
FLEET=$(for i in $(seq 1 20); do printf '127.0.1.%d ' "$i"; done)
for h in $HOSTS $FLEET; do LAT[$h]=0.05; LOAD[$h]=0.5; done
LOAD[127.0.0.3]=20
GEN=0
publish() {
	GEN=$((GEN + 1))
	{
		echo "# TYPE demo_latency_p99_seconds gauge"
		for h in $HOSTS $FLEET; do echo "demo_latency_p99_seconds{host=\"$h\"} ${LAT[$h]}"; done
		echo "# TYPE demo_load1 gauge"
		for h in $HOSTS $FLEET; do echo "demo_load1{host=\"$h\"} ${LOAD[$h]}"; done
		echo "# TYPE demo_generation gauge"
		echo "demo_generation $GEN"
	} >"$T/metrics.tmp"
	mv "$T/metrics.tmp" "$T/metrics.txt"
}
publish
"$EXPORTER" --file "$T/metrics.txt" --port-file "$T/exp.port" --timeout 600 2>"$T/exp.err" &
PIDS="$PIDS $!"
wait_port "$T/exp.port" || not_ok "the exporter starts" "$(cat "$T/exp.err")"

PROM_PORT=$(free_port)
cat >"$T/prom.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: demo
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$(cat "$T/exp.port")']
EOF
"$PROM" --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$T/prom.log" 2>&1 &
PIDS="$PIDS $!"
PU=http://127.0.0.1:$PROM_PORT
# scraped: bounded wait until Prometheus answers with the latest generation.
scraped() {
	local v
	for _ in $(seq 150); do
		v=$(curl -sf "$PU/api/v1/query?query=demo_generation" 2>/dev/null |
			jq -r '.data.result[0].value[1] // empty' 2>/dev/null)
		[ "$v" = "$GEN" ] && return 0
		sleep 0.1
	done
	return 1
}
scraped && ok "prometheus scrapes the test exporter (port $PROM_PORT)" ||
	not_ok "prometheus start" "$(tail -5 "$T/prom.log")"

fresh_db escalate
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
targets=""
for i in 2 3 4 5; do targets="$targets\"127.0.0.$i:$(cat "$T/go$i.port")\","; done
for h in $FLEET; do targets="$targets\"$h:9\","; done
# config SESSION_MAX FLEET_CAP: the configuration file, safeguards varied by phase.
config() {
	cat <<EOF
{"serve": {"listen": "127.0.0.1:0", "host_cooldown_s": 0, "default_seconds": 1,
           "session_max_s": $1, "reescalate_s": 600, "max_sessions_service": 50,
           "max_sessions_fleet": $2},
 "escalate": {"prometheus": "$PU", "host_label": "host", "min_samples": 5, "window_s": 3600,
              "band_mads": 4, "large_mads": 1000, "rel_floor": 0.05, "persist_runs": 3,
              "cooldown_s": 2, "timeout_ms": 3000,
              "load": {"query": "demo_load1", "max": 8},
              "level1": {"seconds": 1, "every_s": 2},
              "level2": {"seconds": 1, "every_s": 0, "heap": true, "window_s": 30},
              "services": {"checkout": {"signals": {"p99_latency": "demo_latency_p99_seconds"}}}},
 "services": {"checkout": {"types": ["cpu", "heap"],
                           "sources": [{"type": "pprof_http", "targets": [${targets%,}],
                                        "seconds": 1, "connect_timeout_ms": 200,
                                        "timeout_ms": 5000}]}}}
EOF
}
config 900 10 >"$T/cfg.json"
config 4 10 >"$T/cfg_expiry.json"
config 900 3 >"$T/cfg_fleet.json"
E() { pr --config "$T/cfg.json" escalate --json; }
level() { sql "select level from escalation_hosts where host = '$1'"; }

# A serve process executes the capture requests escalation queues.
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/serve.port" >"$T/serve.out" 2>"$T/serve.err" &
PIDS="$PIDS $!"
wait_port "$T/serve.port" || not_ok "serve starts" "$(cat "$T/serve.err")"
# settle HOST: bounded wait until no request of HOST is queued or running.
settle() {
	for _ in $(seq 300); do
		[ "$(sql "select count(*) from capture_requests where '$1' = any(hosts)
			and state in ('queued', 'running')")" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# done_requests HOST N: bounded wait until N requests of HOST are finished.
done_requests() {
	for _ in $(seq 300); do
		[ "$(sql "select count(*) from capture_requests where '$1' = any(hosts)
			and state in ('done', 'failed')")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# --- the band is learnt: six runs with every host inside -----------------------------
for _ in 1 2 3 4 5 6; do run E; done
[ $RC -eq 0 ] && [ "$(jq '.counts.hosts' <<<"$OUT")" = 24 ] &&
	[ "$(jq '.decisions | length' <<<"$OUT")" = 0 ] &&
	[ "$(sql "select count(*) from signal_samples")" = $((6 * 24)) ] &&
	ok "six quiet runs: 24 hosts read, each sample stored, nothing decided" ||
	not_ok "quiet runs" "rc=$RC $(head -c 600 <<<"$OUT") $ERR"
[ "$(sql "select count(*) from runs where kind = 'escalate' and status = 'ok'")" = 6 ] &&
	ok "each run is recorded" || not_ok "runs" "$(sql "select status, count(*) from runs group by 1")"

# --- a latency jump: level 1 and a capture; the host over the load ceiling skipped ----
LAT[127.0.0.2]=0.5
LAT[127.0.0.3]=0.5
publish && scraped || not_ok "scrape"
run E
[ $RC -eq 0 ] && [ "$(level 127.0.0.2)" = 1 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.2") | .action' <<<"$OUT")" = escalated ] &&
	[ "$(sql "select level from elevated_sessions where host = '127.0.0.2' and ended_at is null")" = 1 ] &&
	ok "a host whose latency jumps goes to level 1 (an elevated session)" ||
	not_ok "level 1" "rc=$RC $(head -c 800 <<<"$OUT") $ERR"
[ "$(sql "select count(*) from capture_requests where source = 'escalate' and '127.0.0.3' = any(hosts)")" = 0 ] &&
	[ -z "$(level 127.0.0.3 | grep -v 0)" ] &&
	[ "$(sql "select count(*) from audit_log where action = 'escalate.skipped'
		and object = 'host:127.0.0.3' and detail->>'reason' = 'load_ceiling'")" = 1 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.3") | .action' <<<"$OUT")" = skipped ] &&
	ok "the host over the load ceiling (20 > 8) is skipped, not profiled, and audited" ||
	not_ok "load ceiling" "$(sql "select action, object, detail from audit_log where object = 'host:127.0.0.3'")"
done_requests 127.0.0.2 1
[ "$(sql "select state from capture_requests where '127.0.0.2' = any(hosts) order by id limit 1")" = done ] &&
	[ "$(sql "select count(*) from profiles where host = '127.0.0.2' and profile_type = 'cpu'
		and tags ? 'incident'")" -ge 1 ] &&
	ok "its capture is taken by serve from the real Go service, tagged with the incident" ||
	not_ok "level 1 capture" "$(sql "select id, state, error from capture_requests")" "$(tail -3 "$T/serve.err")"

# --- it persists: level 2, back-to-back CPU plus a heap profile ---------------------
run E
settle 127.0.0.2
sleep 2.1 # level 1 captures at most every 2 s (every_s): the next is due after it
run E
[ "$(level 127.0.0.2)" = 2 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.2") | .action' <<<"$OUT" | sort | tr '\n' ' ')" = "capture raised " ] &&
	[ "$(sql "select level from elevated_sessions where host = '127.0.0.2' and ended_at is null")" = 2 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.level' and detail->>'to' = '2'")" = 1 ] &&
	ok "outside its band for 3 runs: level 2, audited" ||
	not_ok "level 2" "$(level 127.0.0.2) $(head -c 800 <<<"$OUT")"
[ "$(sql "select types::text from capture_requests where '127.0.0.2' = any(hosts) order by id desc limit 1")" = "{cpu,heap}" ] &&
	settle 127.0.0.2 &&
	[ "$(sql "select count(*) from profiles where host = '127.0.0.2' and profile_type = 'heap'")" -ge 1 ] &&
	ok "level 2 queues CPU and heap; the heap profile is taken" ||
	not_ok "level 2 heap" "$(sql "select id, types, state, error from capture_requests")"
run E
[ "$(jq -r '.decisions[] | select(.host == "127.0.0.2") | .action' <<<"$OUT")" = capture ] &&
	ok "level 2 captures back to back: the next request as soon as the last is done" ||
	not_ok "back to back" "$(jq -c .decisions <<<"$OUT")" \
		"$(sql "select id, types, state, created_at, started_at, finished_at from capture_requests")"

# --- back in its band: de-escalated after the cooldown -----------------------------
LAT[127.0.0.2]=0.05
publish && scraped || not_ok "scrape"
run E
[ "$(level 127.0.0.2)" = 2 ] &&
	[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.2' and ended_at is null")" = 1 ] &&
	ok "back inside its band: still elevated during the cooldown" || not_ok "cooldown" "$(level 127.0.0.2)"
sleep 2.1
run E
[ "$(level 127.0.0.2)" = 0 ] &&
	[ "$(sql "select end_reason from elevated_sessions where host = '127.0.0.2'")" = deescalated ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.deescalated' and object = 'host:127.0.0.2'")" = 1 ] &&
	ok "after the cooldown (2 s) inside the band it de-escalates to level 0, audited" ||
	not_ok "de-escalation" "$(level 127.0.0.2) $(head -c 600 <<<"$OUT")"

# --- flapping: up, down, up, down, ... one session per re-escalation window ----------
for _ in 1 2 3; do
	LAT[127.0.0.2]=0.5
	publish && scraped || not_ok "scrape"
	E >/dev/null
	LAT[127.0.0.2]=0.05
	publish && scraped || not_ok "scrape"
	E >/dev/null
done
[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.2'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.refused'
		and detail->>'host' = '127.0.0.2' and detail->>'refused' = 'reescalate'")" = 3 ] &&
	ok "a flapping signal does not re-escalate inside the window: 3 refusals (reescalate), audited" ||
	not_ok "flapping" "$(sql "select host, started_at, end_reason from elevated_sessions")"

# --- hard expiry while the signal stays high ------------------------------------------
LAT[127.0.0.4]=0.5
publish && scraped || not_ok "scrape"
run pr --config "$T/cfg_expiry.json" escalate --json
[ "$(level 127.0.0.4)" = 1 ] && ok "host 127.0.0.4 escalates (a session of 4 s at most)" ||
	not_ok "expiry escalation" "$(head -c 600 <<<"$OUT")"
for _ in $(seq 100); do
	run pr --config "$T/cfg_expiry.json" escalate --json
	[ "$(level 127.0.0.4)" = 0 ] && break
	sleep 0.2
done
[ "$(sql "select end_reason from elevated_sessions where host = '127.0.0.4'")" = expired ] &&
	[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.4'
		and ended_at - started_at <= interval '4 s'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.expired' and object = 'host:127.0.0.4'")" = 1 ] &&
	[ "$(sql "select count(*) from signal_samples s join elevated_sessions e on e.host = s.host
		where s.host = '127.0.0.4' and s.at >= e.ended_at and s.outside")" -ge 1 ] &&
	ok "the session ends at its hard expiry (4 s) while the signal stays high; level 0" ||
	not_ok "expiry" "$(sql "select host, started_at, expires_at, ended_at, end_reason from elevated_sessions where host = '127.0.0.4'")" \
		"$(sql "select action, detail from audit_log where object = 'host:127.0.0.4'")" \
		"$(sql "select at, value, outside from signal_samples where host = '127.0.0.4' order by at desc limit 3")"
run pr --config "$T/cfg_expiry.json" escalate --json
[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.4'")" = 1 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.4") | .action + " " + .why' <<<"$OUT" | cut -d' ' -f1-2)" = "refused reescalate" ] &&
	ok "and the still-high signal does not open another inside the window" ||
	not_ok "no re-escalation after expiry" "$(head -c 600 <<<"$OUT")"

# --- a fleet-wide spike on 20 hosts: no more than the fleet cap (3) -------------------
for h in $FLEET; do LAT[$h]=0.5; done
publish && scraped || not_ok "scrape"
run pr --config "$T/cfg_fleet.json" escalate --json
open=$(sql "select count(*) from elevated_sessions where ended_at is null")
[ "$open" = 3 ] && [ "$(jq '.counts.escalated' <<<"$OUT")" -le 3 ] &&
	[ "$(jq '[.decisions[] | select(.action == "refused" and (.why | startswith("fleet_cap")))] | length' <<<"$OUT")" -ge 17 ] &&
	ok "a fleet-wide spike on 20 hosts opens 3 sessions (the fleet cap); the rest refused fleet_cap" ||
	not_ok "fleet cap" "open=$open $(jq -c .counts <<<"$OUT")"
[ "$(sql "select count(*) from escalation_hosts where level > 0")" = 3 ] &&
	ok "and only those 3 hosts are above level 0" ||
	not_ok "fleet levels" "$(sql "select host, level from escalation_hosts where level > 0")"

# --- Prometheus down, answering garbage, answering too much: one line, exit 3 -----------
sed "s|\"prometheus\": \"$PU\"|\"prometheus\": \"http://127.0.0.1:9\"|" "$T/cfg.json" >"$T/cfg_down.json"
sed "s|\"prometheus\": \"$PU\"|\"prometheus\": \"http://127.0.0.1:$(cat "$T/exp.port")\"|" \
	"$T/cfg.json" >"$T/cfg_garbage.json"
sed "s|\"timeout_ms\": 3000,|\"timeout_ms\": 3000, \"max_response_bytes\": 1024,|" \
	"$T/cfg.json" >"$T/cfg_big.json"
before=$(sql "select count(*) from signal_samples")
run pr --config "$T/cfg_down.json" escalate
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"service 'checkout' failed: cannot query prometheus for signal 'p99_latency'"* ]] &&
	ok "prometheus unreachable: exit 3, one line naming the service and the signal" ||
	not_ok "prometheus down" "rc=$RC $ERR"
run pr --config "$T/cfg_garbage.json" escalate
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"cannot read prometheus answer to signal 'p99_latency': not JSON"* ]] &&
	ok "an answer that is not Prometheus's JSON: exit 3, one line" || not_ok "garbage" "rc=$RC $ERR"
run pr --config "$T/cfg_big.json" escalate
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] && [[ $ERR == *"larger than 1024 bytes"* ]] &&
	ok "an answer over escalate.max_response_bytes: exit 3, one line" || not_ok "oversized" "rc=$RC $ERR"
[ "$(sql "select count(*) from signal_samples")" = "$before" ] &&
	[ "$(sql "select count(*) from runs where kind = 'escalate' and status = 'failed'")" = 3 ] &&
	ok "and nothing is stored or decided from them; the runs are recorded as failed" ||
	not_ok "nothing stored" "$(sql "select count(*) from signal_samples") vs $before"
run pr escalate --bogus
[ $RC -eq 2 ] && ok "an unknown option is a usage error" || not_ok "usage" "rc=$RC"
run pr escalate --help
[ $RC -eq 0 ] && [[ $OUT == *"usage: profreg escalate"* ]] && ok "escalate --help" ||
	not_ok "help" "$OUT"
run pr --config "$T/cfg.json" escalate --service nosuch
[ $RC -eq 4 ] && [[ $ERR == *"service 'nosuch' has no escalate signals"* ]] &&
	ok "an unknown --service is exit 4" || not_ok "unknown service" "rc=$RC $ERR"
run pr escalate
[ $RC -eq 2 ] && [[ $ERR == *"escalate.prometheus"* ]] &&
	ok "without an escalate section: a usage error naming the key" || not_ok "no config" "rc=$RC $ERR"

finish
