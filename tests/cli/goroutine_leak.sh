#!/bin/bash
# Real goroutine profiles of a Go program whose release starts 23 more
# goroutines that wait for good (tests/data/pprof/goroutine-leak): every
# goroutine waits in runtime.gopark, so no share moves; the whole
# service's goroutines rise, a whole-service finding in goroutines, at
# most low without a load figure (the same count unchanged is no
# finding: test_a_goroutine_leak_is_a_whole_service_finding).
. "$(dirname "$0")/lib.sh"
fresh_db cli_goroutine_leak
D=$(cd "$(dirname "$0")/../data/pprof/goroutine-leak" && pwd)
pr --quiet db init
pr --quiet service add leaky --enable
for i in $(seq 1 12); do
	pr --quiet ingest "$D/base-$(printf %02d "$i").pb.gz" --service leaky --release v1 \
		--type goroutine --host h$((i % 3)) \
		--time "$(date -u -d "2026-11-20 +$((i * 17)) hours" +%Y-%m-%dT%H:%M:%SZ)"
done
for i in $(seq 1 4); do
	pr --quiet ingest "$D/leak-$(printf %02d "$i").pb.gz" --service leaky --release v2 \
		--type goroutine --host h$((i % 3)) \
		--time "$(date -u -d "2026-11-30 +$((i * 4)) hours" +%Y-%m-%dT%H:%M:%SZ)"
done
run pr analyze --service leaky --release v2 --type goroutine --at 2026-12-01T04:00:00Z --dry-run
[ $RC -eq 0 ] && [[ $OUT == *"cost of leaky: "*" -> "*" goroutines"* ]] &&
	grep -q "^low *regression *leaky *(whole service)" <<<"$OUT" &&
	ok "a goroutine leak is a low whole-service regression in goroutines" ||
	not_ok "goroutine leak" "rc=$RC $OUT $ERR"
run pr analyze --service leaky --release v2 --type goroutine --at 2026-12-01T04:00:00Z --json \
	--dry-run
jq -e '.findings[] | select(.function == "(whole service)") |
	.cost_unit == "goroutines" and .baseline_share < .current_share' <<<"$OUT" >/dev/null &&
	! grep -q "no capture carries a duration" <<<"$ERR" &&
	ok "in JSON, its unit is goroutines, and no warning says a duration is missing" ||
	not_ok "goroutine json" "$(jq -c '[.findings[] | {function, cost_unit}]' <<<"$OUT" 2>&1) $ERR"
