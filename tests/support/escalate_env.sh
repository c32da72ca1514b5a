# Shared by tests/cli/escalate*.sh (sourced after lib.sh, with NAME set):
# a real Prometheus (Debian's prometheus, on a free loopback port with a
# private config and data folder, scraping every second) reading a test
# exporter (tests/servers/metrics_file.c) whose latency and load metrics
# the test drives through LAT, LOAD and publish; four real Go services
# with net/http/pprof on 127.0.0.2-5 and 20 more targets nothing listens
# on (127.0.1.1-20: a fleet, for the caps); a database with the service
# checkout; the configurations; a `profreg serve` that executes the
# queued captures; and six quiet runs that teach every host its band.
set -u
. "$(dirname "$0")/../go/build.sh"
BUILD=${BUILD:-build}
PROM=${PROMETHEUS:-/usr/bin/prometheus}
EXPORTER=${METRICS_FILE:-$BUILD/servers/metrics_file}

T=$PROFREG_TEST_TMP/$NAME
rm -rf "$T"
mkdir -p "$T/prom"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

if [ ! -x "$PROM" ] || [ ! -x "$EXPORTER" ]; then
	not_ok "prometheus is installed (make deps) and metrics_file is built" "$PROM $EXPORTER"
	finish
	exit 1
fi
if ! go_build "$PROFREG_BUILD/go" pprofdemo "$T/pprofdemo" 2>"$T/build.err"; then
	not_ok "go build" "$(cat "$T/build.err")"
	finish
	exit 1
fi

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

fresh_db $NAME
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
targets=""
for i in 2 3 4 5; do targets="$targets\"127.0.0.$i:$(cat "$T/go$i.port")\","; done
for h in $FLEET; do targets="$targets\"$h:9\","; done
# config SESSION_MAX FLEET_CAP: the configuration file, safeguards varied by phase.
# Level 2 lasts 300 s (level2.window_s): the steps a test takes at level 2
# stay inside it however slowly a loaded machine runs them.
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
              "level2": {"seconds": 1, "every_s": 0, "heap": true, "window_s": 300},
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

