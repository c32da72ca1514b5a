#!/bin/bash
# The escalation replay of profreg backtest over 504,000 stored signal
# samples (2 services of 25 hosts, one sample a minute for 7 days, a
# daily 40-minute excursion on one host of each), against plain SQL
# reading the same samples in the replay's order, and against the same
# backtest without an escalate section, measured in the same run.
# Called by tests/bench/run with PG_CONNINFO, BIN, BUILD and TMP set.
set -eu
: "${PG_CONNINFO:?}" "${BIN:?}" "${TMP:?}"
HOSTS=${BENCH_REPLAY_HOSTS:-25}
DAYS=${BENCH_REPLAY_DAYS:-7}
DBN=bench_replay
psql "$PG_CONNINFO" -qAt -c "drop database if exists $DBN" -c "create database $DBN" >/dev/null 2>&1
DB="$PG_CONNINFO dbname=$DBN"
P=("$BIN/profreg" --db "$DB" --home "$TMP/home-replay" --quiet)
"${P[@]}" db init
q() { psql "$DB" -qAt -v ON_ERROR_STOP=1 -c "$1"; }
for s in a b; do "${P[@]}" service add "$s" && "${P[@]}" service enable "$s"; done
q "insert into signal_samples (service_id, host, signal, at, value)
	select s.id, 'h' || h, 'p99', timestamptz '2026-03-01 00:00:00+00' + make_interval(mins => m),
	0.05 + 0.001 * ((m * 7 + h) % 5)
	+ case when h = 3 and m % 1440 between 600 and 640 then 0.05 else 0 end
	from services s, generate_series(1, $HOSTS) h, generate_series(-60, $DAYS * 1440) m"
q "analyze"
mkdir -p "$TMP/replay"
echo '{}' >"$TMP/replay/none.json"
echo '{"escalate": {"services": {"a": {"signals": {"p99": "x"}}, "b": {"signals": {"p99": "y"}}}}}' \
	>"$TMP/replay/cfg.json"
until=$(date -u -d "2026-03-01 + $DAYS days" +%Y-%m-%dT%H:%M:%SZ)
BT=(backtest --since 2026-03-01T00:00:00Z --until "$until" --json)

timeit() { local a b; a=$(date +%s.%N); "$@" >/dev/null; b=$(date +%s.%N); awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }'; }
ref=$(timeit psql "$DB" -qAt -c "select service_id, host, signal, at, value from signal_samples
	where at >= timestamptz '2026-03-01 00:00:00+00' - interval '1 hour'
	order by at, service_id, host, signal, id")
none=$(timeit "${P[@]}" --config "$TMP/replay/none.json" "${BT[@]}")
replay=$(timeit "${P[@]}" --config "$TMP/replay/cfg.json" "${BT[@]}")
n=$("${P[@]}" --config "$TMP/replay/cfg.json" "${BT[@]}" | jq .escalation.samples)
awk -v n="$n" -v ref="$ref" -v none="$none" -v r="$replay" 'BEGIN {
	printf "escalation replay of %d stored signal samples\n", n
	printf "  plain SQL, the same samples in order (reference)  %.3f s\n", ref
	printf "  profreg backtest without an escalate section     %.3f s\n", none
	printf "  profreg backtest with the escalation replay      %.3f s  (%.1fx the reference," \
		" %.0f samples/s)\n", r, r / ref, n / r
}'
psql "$PG_CONNINFO" -qAt -c "drop database if exists $DBN" >/dev/null 2>&1 || true
