#!/bin/bash
# profreg escalate against a Prometheus that takes every query and never
# answers (tests/support/stall_http.py on loopback): each query has its
# timeout, and the run has escalate.budget_s for all of them. Four
# services of one signal each, a 2 s timeout and a 3 s budget: the run
# ends after about 3 s, not after four timeouts (8 s), every service is
# one failure line, and the ones the budget left are not asked at all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

T=$PROFREG_TEST_TMP/escalate_budget
rm -rf "$T"
mkdir -p "$T"
python3 "$(dirname "$0")/../support/stall_http.py" --port-file "$T/prom.port" \
	--log "$T/prom.log" --timeout 40 &
STALL=$!
trap 'kill $STALL 2>/dev/null' EXIT
wait_port "$T/prom.port" || not_ok "the stalling server starts"

fresh_db escalate_budget
pr db init >/dev/null 2>&1
for i in 0 1 2 3; do
	pr service add s$i >/dev/null && pr service enable s$i >/dev/null
done
cat >"$T/cfg.json" <<EOC
{"services": {"s0": {"types": ["cpu"], "sources": [{"type": "pprof_http", "targets": ["127.0.0.2:9"]}]},
              "s1": {"types": ["cpu"], "sources": [{"type": "pprof_http", "targets": ["127.0.0.3:9"]}]},
              "s2": {"types": ["cpu"], "sources": [{"type": "pprof_http", "targets": ["127.0.0.4:9"]}]},
              "s3": {"types": ["cpu"], "sources": [{"type": "pprof_http", "targets": ["127.0.0.5:9"]}]}},
 "escalate": {"prometheus": "http://127.0.0.1:$(cat "$T/prom.port")", "timeout_ms": 2000,
              "budget_s": 3,
              "services": {"s0": {"signals": {"lat": "up"}}, "s1": {"signals": {"lat": "up"}},
                           "s2": {"signals": {"lat": "up"}}, "s3": {"signals": {"lat": "up"}}}}}
EOC

start=$(date +%s%N)
run pr --config "$T/cfg.json" escalate --json
took_ms=$((($(date +%s%N) - start) / 1000000))
asked=$(wc -l <"$T/prom.log")
[ $RC -eq 3 ] && [ $took_ms -lt 6000 ] &&
	ok "a Prometheus that never answers holds the run about its budget of 3 s (${took_ms} ms), not four timeouts" ||
	not_ok "budget" "rc=$RC took ${took_ms} ms; $ERR"
[ "$(jq -r '.counts.failed' <<<"$OUT")" = 4 ] &&
	[ "$(grep -c "^profreg escalate: service 's[0-3]' failed" <<<"$ERR")" = 4 ] &&
	ok "each of the four services is one failure line" ||
	not_ok "failures" "$ERR" "$(head -c 600 <<<"$OUT")"
[ "$asked" -lt 4 ] &&
	grep -q "signal 'lat' not asked: the run's 3 s for Prometheus (escalate.budget_s) ran out" <<<"$ERR" &&
	ok "the services the budget left are not asked ($asked of 4 queries sent)" ||
	not_ok "not asked" "asked=$asked" "$ERR"
[ "$(sql "select status from runs where kind = 'escalate'")" = failed ] &&
	[ "$(sql "select count(*) from signal_samples")" = 0 ] &&
	ok "the run is recorded as failed and stores no sample" ||
	not_ok "run row" "$(sql "select status, detail from runs where kind = 'escalate'")"

finish
