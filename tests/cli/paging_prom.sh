#!/bin/bash
# Paging a real Prometheus Alertmanager (API v2) and pushing job metrics
# to a real Pushgateway, both started here on free loopback ports: one
# alert per regression with the right labels, none added by a re-run,
# resolved when the finding is; metrics arrive and a failed run does not
# overwrite the last success timestamp. An Alertmanager that is down when
# the nightly pages makes the night exit 3 with the reason even under
# --quiet (what cron mails), and the next run sends the page, once.
. "$(dirname "$0")/lib.sh"
fresh_db cli_paging_prom
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_paging_prom
rm -rf "$T" && mkdir -p "$T/am" "$T/pg"
AM=${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}
PGW=${PUSHGATEWAY:-/usr/bin/prometheus-pushgateway}
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

if [ ! -x "$AM" ] || [ ! -x "$PGW" ]; then
	not_ok "prometheus-alertmanager and prometheus-pushgateway are installed (make deps)"
	finish
	exit 1
fi

# wait_ready URL: bounded wait for a 200.
wait_ready() {
	for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}

AM_PORT=$(free_port)
cat >"$T/am.yml" <<EOF
route:
  receiver: 'null'
  group_wait: 30s
receivers:
  - name: 'null'
EOF
"$AM" --config.file="$T/am.yml" --storage.path="$T/am" --web.listen-address="127.0.0.1:$AM_PORT" \
	--cluster.listen-address= --log.level=warn >"$T/am.log" 2>&1 &
PIDS="$PIDS $!"
PG_PORT=$(free_port)
"$PGW" --web.listen-address="127.0.0.1:$PG_PORT" --persistence.file= --log.level=warn >"$T/pgw.log" 2>&1 &
PIDS="$PIDS $!"
wait_ready "http://127.0.0.1:$AM_PORT/-/ready" && ok "alertmanager is up on port $AM_PORT" || not_ok "alertmanager start" "$(tail -5 "$T/am.log")"
wait_ready "http://127.0.0.1:$PG_PORT/-/ready" && ok "pushgateway is up on port $PG_PORT" || not_ok "pushgateway start" "$(tail -5 "$T/pgw.log")"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 3 --bands 10-30 \
	--regressed 1 --seed 5 --days 5 --per-day 2 --current 3 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
fn=$(jq -r .function "$T/fleet/truth.jsonl")
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl" >/dev/null
cat >"$T/cfg.json" <<EOF
{"paging": {"min_severity": "high", "backoff_ms": 20, "timeout_ms": 3000, "alert_hours": 2,
  "targets": {"am": {"type": "alertmanager", "url": "http://127.0.0.1:$AM_PORT/"}},
  "default": ["am"]},
 "metrics": {"pushgateway": "http://127.0.0.1:$PG_PORT", "instance": "test"},
 "reports": {"base_url": "https://reports.example"}}
EOF
alerts() { curl -sf "http://127.0.0.1:$AM_PORT/api/v2/alerts?alertname=ProfregRegression" "$@"; }

run pr --config "$T/cfg.json" nightly --at "$at"
[ $RC -eq 0 ] && [[ $OUT == *"pages: 1 enqueued, 1 sent"* ]] && ok "the nightly pages Alertmanager once" || not_ok "nightly" "rc=$RC $OUT $ERR"
A=$(alerts)
[ "$(jq length <<<"$A")" = 1 ] && ok "exactly one alert is firing" || not_ok "one alert" "$A"
labels=$(jq -c '.[0].labels | {alertname, service, function, severity, profile_type}' <<<"$A")
want=$(jq -nc --arg f "$fn" '{alertname: "ProfregRegression", service: "svc-000", function: $f, severity: "critical", profile_type: "cpu"}')
[ "$labels" = "$want" ] && ok "its labels: alertname, service, function, severity, profile_type" || not_ok "labels" "$labels"
[[ $(jq -r '.[0].annotations.report' <<<"$A") == https://reports.example/run-*.html#finding-* ]] && [ -n "$(jq -r '.[0].annotations.summary' <<<"$A")" ] && ok "annotations carry the summary and the report link" || not_ok "annotations" "$A"
[ "$(jq -r '.[0].status.state' <<<"$A")" = active ] && ok "the alert is active" || not_ok "active"
ends1=$(jq -r '.[0].endsAt' <<<"$A")

sleep 1.1
run pr --config "$T/cfg.json" nightly --at "$at"
A=$(alerts)
[ $RC -eq 0 ] && [ "$(jq length <<<"$A")" = 1 ] && [ "$(sql "select count(*) from pages")" = 1 ] && ok "a re-run adds no alert and no page" || not_ok "re-run" "rc=$RC $A"
[ "$(sql "select refreshes from pages")" = 1 ] && [[ "$(jq -r '.[0].endsAt' <<<"$A")" > "$ends1" ]] && ok "the re-run re-sends the open alert, pushing endsAt on" || not_ok "refresh" "$(sql "select refreshes from pages") $ends1 $(jq -r '.[0].endsAt' <<<"$A")"

fid=$(sql "select finding_id from pages")
run pr --config "$T/cfg.json" finding resolve "$fid"
[ $RC -eq 0 ] && [[ $OUT == *"1 resolve events, 1 sent"* ]] && ok "finding resolve sends the resolved alert" || not_ok "resolve" "rc=$RC $OUT $ERR"
A=$(alerts --get --data active=true)
[ "$(jq length <<<"$A")" = 0 ] && ok "no alert is active any more (endsAt <= now)" || not_ok "resolved" "$A"
run pr --config "$T/cfg.json" page flush
[ $RC -eq 0 ] && [ "$(jq length <<<"$(alerts --get --data active=true)")" = 0 ] && ok "a later flush does not revive the resolved alert" || not_ok "no revive" "$OUT"

# Pushgateway: the metrics of the runs above arrived.
M=$(curl -sf "http://127.0.0.1:$PG_PORT/metrics")
grep -q '^profreg_run_success{instance="test",job="profreg",kind="nightly"} 1$' <<<"$M" && ok "profreg_run_success 1 is pushed" || not_ok "run_success" "$(grep profreg_ <<<"$M" | head)"
grep -q '^profreg_findings{instance="test",job="profreg",kind="nightly",severity="critical"} 1$' <<<"$M" && grep -q '^profreg_services_analysed{.*} 1$' <<<"$M" && grep -q '^profreg_run_duration_seconds{' <<<"$M" && grep -q '^profreg_pages{.*state="pending"} 0$' <<<"$M" && grep -q '^profreg_pages{.*state="failed_open"} 0$' <<<"$M" && ok "duration, services, findings by severity and pages arrive" || not_ok "metrics" "$(grep profreg_ <<<"$M")"
last=$(sed -n 's/^profreg_last_success_timestamp_seconds{instance="test",job="profreg",kind="nightly"} //p' <<<"$M")
[ -n "$last" ] && ok "the success timestamp is pushed ($last)" || not_ok "last success"

# A failed run (no such database) pushes its failure but keeps the success time.
sleep 1.1
run "$PROFREG_BIN" --db "$PROFREG_TEST_DB dbname=no_such_db_here" --home "$HOME_DIR" --config "$T/cfg.json" nightly --at "$at"
M=$(curl -sf "http://127.0.0.1:$PG_PORT/metrics")
[ $RC -eq 3 ] && grep -q '^profreg_run_success{instance="test",job="profreg",kind="nightly"} 0$' <<<"$M" && ok "a failed nightly pushes profreg_run_success 0" || not_ok "failed push" "rc=$RC $(grep profreg_run_success <<<"$M")"
[ "$(sed -n 's/^profreg_last_success_timestamp_seconds{instance="test",job="profreg",kind="nightly"} //p' <<<"$M")" = "$last" ] && ok "and does not overwrite the last success timestamp" || not_ok "success kept" "$(grep last_success <<<"$M")"
# Alertmanager down while the nightly pages: a page that never arrives must
# not look like a quiet night, even under --quiet; the next run sends it.
fresh_db cli_paging_prom_down
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl" >/dev/null
AM2_PORT=$(free_port)
sed "s/127.0.0.1:$AM_PORT/127.0.0.1:$AM2_PORT/" "$T/cfg.json" >"$T/cfg-down.json"
run pr --quiet --config "$T/cfg-down.json" nightly --at "$at"
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] && [[ $ERR == *"paging: 1 page not delivered"*"connection refused"* ]] &&
	ok "a nightly whose Alertmanager is down exits 3 with one line saying so under --quiet" ||
	not_ok "alertmanager down" "rc=$RC $ERR"
[ "$(sql "select status || ' ' || event from pages")" = "pending trigger" ] &&
	[ "$(sql "select status from runs where kind = 'nightly'")" = ok ] &&
	ok "the page waits in the outbox and the run's findings stand" || not_ok "kept" "$(sql "select * from pages")"
# Exit 3 is no success for the metrics either: the staleness alert must fire
# while the pager stays down.
lastsucc() { sed -n 's/^profreg_last_success_timestamp_seconds{instance="test",job="profreg",kind="nightly"} //p'; }
M=$(curl -sf "http://127.0.0.1:$PG_PORT/metrics")
[ "$(lastsucc <<<"$M")" = "$last" ] &&
	grep -q '^profreg_run_success{instance="test",job="profreg",kind="nightly"} 0$' <<<"$M" &&
	ok "a night whose page was not delivered pushes no success" ||
	not_ok "undelivered night's metrics" "$(grep -E 'last_success|run_success' <<<"$M")"
"$AM" --config.file="$T/am.yml" --storage.path="$T/am2" --web.listen-address="127.0.0.1:$AM2_PORT" \
	--cluster.listen-address= --log.level=warn >"$T/am2.log" 2>&1 &
PIDS="$PIDS $!"
wait_ready "http://127.0.0.1:$AM2_PORT/-/ready" || not_ok "second alertmanager start" "$(tail -5 "$T/am2.log")"
run pr --quiet --config "$T/cfg-down.json" nightly --at "$at"
A2=$(curl -sf "http://127.0.0.1:$AM2_PORT/api/v2/alerts?alertname=ProfregRegression")
[ $RC -eq 0 ] && [ -z "$OUT$ERR" ] && [ "$(jq length <<<"$A2")" = 1 ] &&
	[ "$(sql "select count(*) || ' ' || string_agg(status, ',') from pages")" = "1 sent" ] &&
	ok "once it is back the next nightly sends that page, once, and exits 0 quietly" ||
	not_ok "next run" "rc=$RC $OUT $ERR $A2 $(sql "select id, status from pages")"
M=$(curl -sf "http://127.0.0.1:$PG_PORT/metrics")
[ -n "$(lastsucc <<<"$M")" ] && [ "$(lastsucc <<<"$M")" != "$last" ] &&
	ok "and that night's success moves the last-success time" || not_ok "success moved" "$(lastsucc <<<"$M")"
# One function name in two files (py-spy writes "name (file:line)"): two
# findings, two keys, two alerts; resolving one leaves the other firing.
fresh_db cli_paging_prom_twins
pr --quiet db init
pr --quiet service add twins && pr --quiet service enable twins
mkdir -p "$T/twins"
RANDOM=3
: >"$T/twins/manifest.jsonl"
for n in $(seq 0 31); do
	if [ $n -lt 28 ]; then
		rel=v1 boost=1 when=$(date -u -d "2026-01-01 +$((n / 2)) days +$((3 + 10 * (n % 2))) hours" +%FT%TZ)
	else
		rel=v2 boost=2 when=$(date -u -d "2026-01-15 +$((2 + 4 * (n - 28))) hours" +%FT%TZ)
	fi
	{
		for i in $(seq 0 19); do echo "main (m.py:1);work_$i (w.py:$i) $((380 + RANDOM % 40))"; done
		for f in "a.py:3" "b.py:9"; do echo "main (m.py:1);__init__ ($f) $(((570 + RANDOM % 60) * boost))"; done
	} >"$T/twins/c$n.folded"
	echo "{\"path\": \"c$n.folded\", \"service\": \"twins\", \"release\": \"$rel\", \"host\": \"h$((n % 3))\", \"time\": \"$when\", \"type\": \"cpu\"}" >>"$T/twins/manifest.jsonl"
done
(cd "$T/twins" && pr --quiet ingest --manifest manifest.jsonl >/dev/null)
jq '.analysis = {confirm_looks: 1}' "$T/cfg.json" >"$T/cfg-twins.json"
twins() { curl -sf "http://127.0.0.1:$AM_PORT/api/v2/alerts?active=true&filter=service%3D%22twins%22"; }
run pr --config "$T/cfg-twins.json" nightly --at 2026-01-16T00:00:00Z
A=$(twins)
[ $RC -eq 0 ] && [ "$(sql "select count(*) from findings where direction = 'regression' and function = '__init__'")" = 2 ] &&
	[ "$(jq '[.[].labels.dedup_key] | unique | length' <<<"$A")" = 2 ] &&
	ok "two findings of one function name in two files are two alerts, each labelled with its key" ||
	not_ok "twins paged" "rc=$RC $OUT $ERR $(jq -c '[.[].labels]' <<<"$A")"
fid=$(sql "select min(id) from findings where direction = 'regression' and function = '__init__'")
run pr --config "$T/cfg-twins.json" finding resolve "$fid"
A=$(twins)
[ $RC -eq 0 ] && [ "$(jq length <<<"$A")" = 1 ] &&
	[ "$(jq -r '.[0].labels.dedup_key' <<<"$A")" = "$(sql "select dedup_key from pages p join findings f on f.id = p.finding_id
		where f.function = '__init__' and f.id <> $fid and p.event = 'trigger'")" ] &&
	ok "resolving one leaves the other's alert firing" || not_ok "twin resolve" "rc=$RC $OUT $ERR $A"
finish
