#!/bin/bash
# Real Go profiles of a starved host (tests/data/pprof/starved): release
# v2 of pprofdemo, whose main.computeTax costs twice as much, captured on
# a CPU it shared at nice 19 with three busy loops, 1-2 samples in each
# 5 s profile. The gate passed it ("no regression"); it is inconclusive
# now, saying the captures are too few or too small. The same release
# captured with the CPU it needs (134-158 samples) fails the gate.
. "$(dirname "$0")/lib.sh"
fresh_db cli_gate_starved
D=$PROFREG_TEST_DATA/pprof/starved
pr --quiet db init
c1=1111111111111111111111111111111111111111
c2=2222222222222222222222222222222222222222
# svc FILE-PREFIX-OF-V2
setup() {
	pr --quiet service add "$1" --enable
	for i in 1 2 3 4 5 6 7 8; do
		pr --quiet ingest "$D/v1-$i.pb.gz" --service "$1" --release v1 --host h$((i % 3)) \
			--commit $c1 --time "$(date -u -d "2026-01-01 +$((i * 2)) hours" +%Y-%m-%dT%H:%M:%SZ)"
	done
	for i in 1 2 3 4; do
		pr --quiet ingest "$D/$2-$i.pb.gz" --service "$1" --release v2 --host h$((i % 3)) \
			--commit $c2 --time "2026-01-02T0$i:00:00Z"
	done
}
setup starved v2-starved
setup fed v2
AT=2026-01-02T12:00:00Z

run pr post-deploy --service starved --release v2 --commit $c2 --at $AT
[ $RC -eq 5 ] && [[ $OUT == *"**Verdict: inconclusive**"* ]] &&
	[[ $OUT == *"the captures are too few or too small to pass the release"* ]] &&
	ok "starved captures of a regressed release: inconclusive, not a pass" ||
	not_ok "starved" "rc=$RC $(grep -A2 Verdict <<<"$OUT") $ERR"

run pr post-deploy --service starved --release v2 --commit $c2 --at $AT --max-unseen 0
[ $RC -eq 0 ] && [[ $OUT == *"**Verdict: pass** - no regression"* ]] &&
	ok "without the rule (--max-unseen 0) the same captures pass: what the gate did before" ||
	not_ok "starved, no rule" "rc=$RC $(grep -A2 Verdict <<<"$OUT") $ERR"

run pr post-deploy --service fed --release v2 --commit $c2 --at $AT
[ $RC -eq 1 ] && [[ $OUT == *"| main.computeTax |"* ]] &&
	ok "the same release with the CPU it needs: the gate fails on main.computeTax" ||
	not_ok "fed" "rc=$RC $(grep -A3 Verdict <<<"$OUT") $ERR"
finish
