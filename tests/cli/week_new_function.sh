#!/bin/bash
# A function new in the release (2% of the CPU, p 7e-74), judged on
# captures partly taken on a weekend against a baseline whose weekend
# captures differ in size from its weekdays': the week's adjustment, put
# back at the judged captures' weekend, took the new function's baseline
# share below zero, NaN, and the function was no finding. Simulated
# captures (tests/data/folded/week-new).
. "$(dirname "$0")/lib.sh"
fresh_db cli_week_new_function
D=$(cd "$(dirname "$0")/../data/folded/week-new" && pwd)
pr --quiet db init
pr --quiet service add svc --enable
(cd "$D" && pr --quiet ingest --manifest manifest.jsonl)
run pr analyze --service svc --release v2.0 --at 2026-03-16T22:14:18Z --dry-run --json
jq -e '.findings[] | select(.function == "com.acme.cache.HeaderClient.priceWindow" and
	.direction == "regression" and .baseline_share == 0 and .current_share > 0.015)' \
	<<<"$OUT" >/dev/null && ok "a new function judged partly on a weekend is a regression from nothing" ||
	not_ok "new function on a weekend" "rc=$RC $(jq -c '[.findings[] | {function, baseline_share, severity}]' <<<"$OUT" 2>&1) $ERR"
