#!/bin/bash
# A baseline that reaches into the summary tier: retention cut the older
# captures to their top functions, and a function they did not keep is
# unknown there, not 0. On a fleet with nothing regressed, analysis finds
# no more regressions after retention than before.
. "$(dirname "$0")/lib.sh"
fresh_db cli_summary_baseline
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_summary_baseline
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 4 --functions 150 --regressed 0 --seed 11 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"

regressions() {
	pr analyze --all-services --release "$rel" --at "$at" --dry-run --json |
		grep -c '"direction": "regression"'
}
before=$(regressions)
printf '{"retention": {"hot_days": 3, "summary_days": 30, "summary_top": 15}}' >"$T/cut.json"
run pr --config "$T/cut.json" retention --at "$at"
cut=$(sql "select count(*) from profiles where retention_class = 'summary'")
[ $RC -eq 0 ] && [ "$cut" -ge 40 ] && ok "retention cut the older captures to 15 functions ($cut captures)" || not_ok "retention" "rc=$RC cut=$cut $ERR"
after=$(regressions)
[ "$after" -le "$before" ] && ok "no regression appears because old captures lost their small functions ($before before, $after after)" ||
	not_ok "false regressions from summary captures" "before=$before after=$after"
# A function the cut kept everywhere is still tested on every capture.
run pr analyze --all-services --release "$rel" --at "$at" --dry-run --json
[ $RC -eq 0 ] && [[ $OUT == *'"tests": '* ]] && ! grep -q '"tests": 0,' <<<"$OUT" &&
	ok "the functions the summaries kept are still tested" || not_ok "still tested" "rc=$RC"
finish
