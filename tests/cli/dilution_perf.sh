#!/bin/bash
# Real perf profiles (tests/data/perf/dilution) of a C program whose
# compute_tax holds about two thirds of the time and, in the release,
# runs twice as long (68% -> 80%). Every other share falls by more, as
# dilution makes them, and most of the tested functions are kernel and
# libc functions met once or twice in the baseline and never in the
# release: their share ratios of 0 made the typical change 0, and the
# regression was called a relative shift of three "improvements"; the
# gate passed it. It is the regression now, the others its relative
# shifts. A release of the same code stays quiet.
. "$(dirname "$0")/lib.sh"
fresh_db cli_dilution_perf
D=$PROFREG_TEST_DATA/perf/dilution
pr --quiet db init
# svc BASELINE-PREFIX RELEASE-PREFIX
setup() {
	pr --quiet service add "$1" --enable
	for i in 1 2 3 4 5 6 7 8; do
		pr --quiet ingest "$D/$2-$i.perf.gz" --service "$1" --release v1 --host h$i \
			--time "2026-12-07T10:0$i:00Z"
	done
	for i in 1 2 3 4; do
		pr --quiet ingest "$D/$3-$i.perf.gz" --service "$1" --release v2 --host h$i \
			--time "2026-12-07T11:0$i:00Z"
	done
}
setup slower v1 slow
setup same fp-v1 fp-null
AT=2026-12-07T12:00:00Z

run pr --json analyze --service slower --release v2 --at $AT --dry-run --gate high
[ $RC -eq 1 ] &&
	jq -e '[.findings[] | select(.function == "compute_tax")][0] |
		.direction == "regression" and .severity == "critical"' <<<"$OUT" >/dev/null &&
	jq -e '[.findings[] | select(.function != "compute_tax") | .direction] |
		length > 0 and all(. == "relative_shift")' <<<"$OUT" >/dev/null &&
	ok "a doubled function of two thirds of the time is the regression, the diluted ones its shifts" ||
	not_ok "slower" "rc=$RC $(jq -c '[.findings[] | [.function, .direction]]' <<<"$OUT" 2>&1) $ERR"

run pr post-deploy --service slower --release v2 --commit 2222222222222222222222222222222222222222 \
	--at $AT
[ $RC -eq 1 ] && [[ $OUT == *"**Verdict: FAIL**"* ]] && [[ $OUT == *"| compute\_tax |"* ]] &&
	ok "post-deploy fails the release on compute_tax" ||
	not_ok "post-deploy" "rc=$RC $(grep -A4 Verdict <<<"$OUT") $ERR"

run pr --json analyze --service same --release v2 --at $AT --dry-run --gate high
[ $RC -eq 0 ] && jq -e '.findings | length == 0' <<<"$OUT" >/dev/null &&
	ok "a release of the same code: no finding, the gate passes" ||
	not_ok "same" "rc=$RC $(jq -c '[.findings[] | [.function, .direction]]' <<<"$OUT" 2>&1) $ERR"
finish
