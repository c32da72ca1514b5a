#!/bin/bash
# A real Alertmanager (Debian's prometheus-alertmanager, on a free
# loopback port) posting to profreg serve's /v1/alertmanager through a
# webhook receiver with bearer authorization (http_config.authorization,
# the token in a credentials_file), as docs/serve.md wires it. An alert
# fed through Alertmanager's API v2 for the Go target's instance starts
# a capture of that host, tagged with the alert's fingerprint; resolving
# it through the API ends the session it opened. A second receiver with
# a wrong token is refused (401) and starts nothing.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

AM=${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}
T=$PROFREG_TEST_TMP/serve_am
rm -rf "$T"
mkdir -p "$T/am"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

if [ ! -x "$AM" ]; then
	not_ok "prometheus-alertmanager is installed (make deps)"
	finish
	exit 1
fi
demo_up "$T" 127.0.0.2 demo
D=$DEMO_PORT

wait_ready() {
	for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}

fresh_db serve_am
pr db init >/dev/null 2>&1
pr service add checkout --team a >/dev/null && pr service enable checkout >/dev/null
cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "default_seconds": 1, "host_cooldown_s": 0},
 "services": {"checkout": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.2:$D"],
                                        "seconds": 1}]}}}
EOF
umask 077
pr --config "$T/cfg.json" token create --team a >"$T/token" 2>/dev/null
echo "prt_$(printf '0%.0s' $(seq 64))" >"$T/badtoken"
umask 022
TID=$(sql "select id from api_tokens")
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve --port-file "$T/s.port" \
	>"$T/s.out" 2>"$T/s.err" &
SPID=$!
PIDS="$PIDS $SPID"
wait_port "$T/s.port" && ok "serve listens" || not_ok "serve start" "$(cat "$T/s.err")"
SP=$(cat "$T/s.port")

AM_PORT=$(free_port)
cat >"$T/am.yml" <<EOF
route:
  receiver: profreg
  group_by: [alertname, instance]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
  routes:
    - matchers: ['team="impostor"']
      receiver: impostor
receivers:
  - name: profreg
    webhook_configs:
      - url: http://127.0.0.1:$SP/v1/alertmanager
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials_file: $T/token
  - name: impostor
    webhook_configs:
      - url: http://127.0.0.1:$SP/v1/alertmanager
        http_config:
          authorization:
            type: Bearer
            credentials_file: $T/badtoken
EOF
"$AM" --config.file="$T/am.yml" --storage.path="$T/am" --web.listen-address="127.0.0.1:$AM_PORT" \
	--cluster.listen-address= --log.level=warn >"$T/am.log" 2>&1 &
PIDS="$PIDS $!"
wait_ready "http://127.0.0.1:$AM_PORT/-/ready" && ok "alertmanager is up on port $AM_PORT" ||
	not_ok "alertmanager start" "$(tail -5 "$T/am.log")"

# feed LABELS-JSON [ENDS]: one alert through Alertmanager's API v2.
feed() {
	local ends=${2:-}
	curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' \
		--data-binary "[{\"labels\": $1${ends:+, \"endsAt\": \"$ends\"}}]" \
		"http://127.0.0.1:$AM_PORT/api/v2/alerts"
}
LABELS="{\"alertname\": \"CheckoutSlow\", \"service\": \"checkout\", \"instance\": \"127.0.0.2:$D\"}"
feed "$LABELS" && ok "an alert is fed through Alertmanager's API v2" || not_ok "feed"
for _ in $(seq 300); do
	[ "$(sql "select count(*) from capture_requests where state in ('done', 'failed')")" -ge 1 ] && break
	sleep 0.1
done
[ "$(sql "select source || ' ' || state || ' ' || array_to_string(hosts, ',') from capture_requests")" = \
	"alertmanager done 127.0.0.2" ] &&
	ok "Alertmanager's webhook started a capture of the alert's host, done" ||
	not_ok "capture" "$(sql "select source, state, hosts, error from capture_requests")" "$(cat "$T/s.err" "$T/am.log")"
inc=$(sql "select incident from capture_requests")
[[ $inc == alert-* ]] && [ "$(sql "select tags->>'incident' from profiles")" = "$inc" ] &&
	[ "$(sql "select retention_class from profiles")" = forensic ] &&
	ok "the capture is tagged with the alert's incident ($inc) and kept as evidence" ||
	not_ok "tagged" "$(sql "select tags, retention_class from profiles")"
[ "$(sql "select count(*) from elevated_sessions where ended_at is null and source = 'alertmanager'")" = 1 ] &&
	ok "the alert's host is elevated" || not_ok "session"
[ "$(sql "select count(*) from audit_log where action = 'serve.alertmanager' and (detail->>'token')::int = $TID and detail->>'status' = '200'")" -ge 1 ] &&
	ok "the webhook call is audited with the token Alertmanager used" ||
	not_ok "audit" "$(sql "select action, detail from audit_log where action like 'serve.%'")"

# Resolved through the API: Alertmanager sends the resolved notification.
feed "$LABELS" "$(date -u -d '-1 second' +%Y-%m-%dT%H:%M:%SZ)" || not_ok "resolve feed"
for _ in $(seq 300); do
	[ "$(sql "select count(*) from elevated_sessions where ended_at is null")" = 0 ] && break
	sleep 0.1
done
[ "$(sql "select end_reason from elevated_sessions")" = resolved ] &&
	ok "resolving the alert in Alertmanager ends the session (send_resolved)" ||
	not_ok "resolved" "$(sql "select ended_at, end_reason from elevated_sessions")"

# A receiver whose token is wrong: 401, nothing started.
feed '{"alertname": "Impostor", "team": "impostor", "service": "checkout", "instance": "127.0.0.2:1"}'
for _ in $(seq 300); do
	curl -s "http://127.0.0.1:$SP/metrics" >"$T/metrics"
	grep -q 'route="/v1/alertmanager",code="401"' "$T/metrics" && break
	sleep 0.1
done
grep -q 'route="/v1/alertmanager",code="401"' "$T/metrics" &&
	[ "$(sql "select count(*) from capture_requests")" = 1 ] &&
	ok "a receiver with a wrong token is refused (401) and starts nothing" ||
	not_ok "impostor" "$(grep alertmanager "$T/metrics")"

kill -TERM $SPID
for _ in $(seq 100); do kill -0 $SPID 2>/dev/null || break; sleep 0.1; done
! kill -0 $SPID 2>/dev/null && ok "serve stops" || not_ok "stop"
finish
