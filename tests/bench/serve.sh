#!/bin/bash
# profreg serve on loopback: how long from a trigger to its capture's
# start, and how many requests a second it answers while refusing a
# flood. Prints figures, asserts nothing.
#
#   latency   20 triggers (POST /v1/captures) for a Go net/http/pprof
#             program, one after another: from just before curl sends the
#             request to the request's started_at (the worker claimed it
#             and starts the pprof download), both on this host's clock.
#   flood     5,000 requests by curl's parallel mode (50 at a time): with
#             an unknown token (401), over a token's rate limit (429
#             after the first 10), over the global limit (429 before any
#             token is read); GET /healthz (one database round trip, 200)
#             is the reference measured in the same run.
#
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set, or on
# its own: tests/bench/serve.sh (starts a throwaway PostgreSQL).
set -eu
BUILD=${BUILD:-build}
BIN=${BIN:-bin}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PIDS=""
stop_all() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; }
if [ -z "${PG_CONNINFO:-}" ]; then
	. tests/pg.sh
	TMP=$(mktemp -d /tmp/profreg-bench-serve.XXXXXX)
	chmod 755 "$TMP"
	trap 'stop_all; pg_tmp_stop "$TMP/db"; rm -rf "$TMP"' EXIT INT TERM
	pg_tmp_start "$TMP/db" || exit 3
else
	trap stop_all EXIT INT TERM
fi
. tests/go/build.sh
N_TRIGGERS=${BENCH_SERVE_TRIGGERS:-20}
N_FLOOD=${BENCH_SERVE_FLOOD:-5000}
S=$TMP/serve
rm -rf "$S" && mkdir -p "$S"

# The build folder's Go cache, shared with the tests and the demo.
go_build "$(go_cache "$BUILD")" pprofdemo "$S/pprofdemo"
GODEBUG=asyncpreemptoff=1 "$S/pprofdemo" -addr 127.0.0.2:0 -port-file "$S/demo.port" \
	-lifetime 900s >"$S/demo.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -s "$S/demo.port" ] && break; sleep 0.1; done
D=$(cat "$S/demo.port")

DBN="$PG_CONNINFO"
psql "$DBN" -qAt -c "drop database if exists bench_serve" >/dev/null 2>&1
psql "$DBN" -qAt -c "create database bench_serve" >/dev/null
DBN="$PG_CONNINFO dbname=bench_serve"
P=("$BIN/profreg" --db "$DBN" --home "$S/home" --config "$S/cfg.json" --quiet)
cat >"$S/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "default_seconds": 1, "host_cooldown_s": 0,
           "token_rate": 10, "global_rate": 1000000},
 "services": {"checkout": {"sources": [{"type": "pprof_http", "targets": ["127.0.0.2:$D"],
                                        "seconds": 1}]}}}
EOF
"${P[@]}" db init >/dev/null
"${P[@]}" service add checkout --team a
"${P[@]}" service enable checkout
TOKEN=$("${P[@]}" token create --team a)
LIMITED=$("${P[@]}" token create --team a)

# serve_start CONFIG: start a server with CONFIG, U its base URL.
serve_start() {
	rm -f "$S/s.port"
	"$BIN/profreg" --db "$DBN" --home "$S/home" --config "$1" serve --port-file "$S/s.port" \
		>"$S/s.out" 2>"$S/s.err" &
	SPID=$!
	PIDS="$PIDS $SPID"
	for _ in $(seq 100); do [ -s "$S/s.port" ] && break; sleep 0.1; done
	U=http://127.0.0.1:$(cat "$S/s.port")
}
serve_stop() {
	kill -TERM "$SPID"
	for _ in $(seq 100); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
}
serve_start "$S/cfg.json"

# --- trigger to capture start ----------------------------------------------------------------
body='{"service": "checkout", "hosts": ["127.0.0.2"], "seconds": 1, "reason": "bench"}'
: >"$S/latency"
: >"$S/claim"
for _ in $(seq "$N_TRIGGERS"); do
	t0=$(date +%s.%N)
	id=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" --data-binary "$body" "$U/v1/captures" |
		jq -r .id)
	for _ in $(seq 600); do
		st=$(psql "$DBN" -qAt -c "select state from capture_requests where id = $id")
		[ "$st" = done ] || [ "$st" = failed ] && break
		sleep 0.05
	done
	started=$(psql "$DBN" -qAt -c "select extract(epoch from started_at)::numeric(20,6),
		extract(epoch from created_at)::numeric(20,6) from capture_requests where id = $id")
	[ -n "${started%%|*}" ] || continue # not started (failed before its capture)
	awk -v a="$t0" -v b="${started%%|*}" 'BEGIN { printf "%.6f\n", (b - a) * 1000 }' >>"$S/latency"
	awk -v a="${started##*|}" -v b="${started%%|*}" 'BEGIN { printf "%.6f\n", (b - a) * 1000 }' \
		>>"$S/claim"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END {
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "median %.1f ms  min %.1f ms  max %.1f ms\n", m, v[1], v[NR] }'; }
echo "serve: trigger to capture start on loopback, $(grep -c . "$S/latency") of $N_TRIGGERS triggers" \
	"(one after another) started"
echo "  curl sends to the worker's claim: $(median "$S/latency")"
echo "  of which admission committed to claim: $(median "$S/claim")"
done_n=$(psql "$DBN" -qAt -c "select count(*) from capture_requests where state = 'done'")
echo "  ($done_n of $N_TRIGGERS requests done, each a 1 s CPU profile of the Go program)"

# --- floods --------------------------------------------------------------------------------------
# flood NAME METHOD URL [CURL ARGS...]: N_FLOOD requests, 50 at a time; prints req/s and codes.
flood() {
	local name=$1 method=$2 url=$3 t0 t1
	shift 3
	for _ in $(seq "$N_FLOOD"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done >"$S/urls"
	t0=$(date +%s.%N)
	curl -s --parallel --parallel-immediate --parallel-max 50 -X "$method" "$@" \
		-w '%{http_code}\n' --config "$S/urls" >"$S/codes" 2>/dev/null || true
	t1=$(date +%s.%N)
	codes=$(sort "$S/codes" | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }')
	awk -v n="$N_FLOOD" -v t0="$t0" -v t1="$t1" -v name="$name" -v c="$codes" 'BEGIN {
		printf "  %-38s %6.0f req/s  (%.2f s; %s)\n", name, n / (t1 - t0), t1 - t0, c
	}'
	awk -v n="$N_FLOOD" -v t0="$t0" -v t1="$t1" -v name="$name" \
		'BEGIN { printf "%s|%f\n", name, n / (t1 - t0) }' >>"$S/flood"
}
echo "serve: $N_FLOOD requests, 50 at a time (curl --parallel), one server process"
: >"$S/flood"
flood "GET /healthz (reference)" GET "$U/healthz"
flood "unknown token (401)" POST "$U/v1/captures" -H "Authorization: Bearer prt_$(printf '0%.0s' $(seq 64))" \
	--data-binary "$body"
flood "over the token's rate limit (429)" POST "$U/v1/captures" -H "Authorization: Bearer $LIMITED" \
	--data-binary '{}'
serve_stop
jq '.serve.global_rate = 1' "$S/cfg.json" >"$S/cfg-global.json"
serve_start "$S/cfg-global.json"
flood "over the global rate limit (429)" POST "$U/v1/captures" -H "Authorization: Bearer $TOKEN" \
	--data-binary '{}'
serve_stop
echo "  against the reference measured above:"
awk -F'|' 'NR == 1 { ref = $2; next } { printf "  %-38s %.2f x GET /healthz\n", $1, $2 / ref }' \
	"$S/flood"
stop_all
