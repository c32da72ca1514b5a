#!/bin/bash
# profreg backtest: the nightly analysis replayed over stored history
# finds the planted regression on the night it appeared, raises on the
# last night what a nightly dry run raises, and stores nothing.
. "$(dirname "$0")/lib.sh"
fresh_db cli_backtest
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_backtest
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 4 --functions 50 --factors 2 --bands 10-30 \
	--regressed 0.25 --seed 81 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"
svc=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | sed 's/.*"service":"\([^"]*\)".*/\1/')
fn=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | sed 's/.*"function":"\([^"]*\)".*/\1/')
start=$(date -u -d "$at - 1 day" +%Y-%m-%dT%H:%M:%SZ)
printf '{"service":"%s","function":"%s","time":"%s"}\n\n' "$svc" "$fn" "$start" >"$T/incidents.jsonl"

nf=$(sql "select count(*) from findings")
nb=$(sql "select count(*) from baselines")
run pr backtest --since "$(date -u -d "$at - 4 days" +%Y-%m-%dT%H:%M:%SZ)" --until "$at" \
	--incidents "$T/incidents.jsonl" --json
echo "$OUT" >"$T/bt.json"
[ $RC -eq 0 ] && [ "$(jq .nights "$T/bt.json")" = 4 ] && ok "four nights replayed" || not_ok "backtest" "rc=$RC $ERR"
[ "$(jq -r '.incidents[0].found' "$T/bt.json")" = true ] &&
	[ "$(jq -r '.incidents[0].night' "$T/bt.json")" = "$(date -u -d "$at" +%Y-%m-%dT%H:%M:%SZ)" ] &&
	[ "$(jq -r '.incidents[0].finding.function' "$T/bt.json")" = "$fn" ] &&
	ok "the planted regression is found on the night it appeared" || not_ok "found" "$(jq -c .incidents "$T/bt.json")"
last=$(jq '.nights_detail[-1].regressions' "$T/bt.json")
run pr nightly --at "$at" --dry-run --json
[ "$(jq '[.findings_list[] | select(.direction == "regression")] | length' <<<"$OUT")" = "$last" ] &&
	ok "its last night raises what a nightly dry run raises ($last)" || not_ok "same as nightly" "$last vs $OUT"
[ "$(jq .false_regressions "$T/bt.json")" = $(( last - 1 + $(jq '[.nights_detail[:-1][].regressions] | add' "$T/bt.json") )) ] &&
	ok "every other regression counts as a false finding" || not_ok "false count" "$(cat "$T/bt.json" | head -c 400)"
[ "$(sql "select count(*) from findings")" = "$nf" ] && [ "$(sql "select count(*) from baselines")" = "$nb" ] &&
	[ "$(sql "select count(*) from runs where kind <> 'nightly'")" = 0 ] &&
	ok "a backtest stores no finding, baseline or run" || not_ok "stored something"
run pr backtest --since "$(date -u -d "$at - 2 days" +%Y-%m-%dT%H:%M:%SZ)" --until "$at" --incidents "$T/incidents.jsonl"
[ $RC -eq 0 ] && [[ $OUT == *"incidents found: 1 of 1"* ]] && ok "the text says how many incidents were found" || not_ok "text" "$OUT"
printf '{"service":"x","time":"2026-01-01T00:00:00Z"}\n' >"$T/bad.jsonl"
run pr backtest --since 2d --incidents "$T/bad.jsonl"
[ $RC -eq 4 ] && [[ $ERR == *"line 1 of '$T/bad.jsonl': needs \"service\" and a \"function\" or a \"release\""* ]] &&
	ok "a bad incident line is exit 4 naming the line" || not_ok "bad incidents" "rc=$RC $ERR"
range=(--since "$(date -u -d "$at - 4 days" +%Y-%m-%dT%H:%M:%SZ)" --until "$at")
{ cat "$T/incidents.jsonl"; printf '{"service":"nosuch","function":"%s","time":"%s"}\n' "$fn" "$start"; } >"$T/unknown.jsonl"
run pr backtest "${range[@]}" --incidents "$T/unknown.jsonl" --json
[ $RC -eq 4 ] && [[ $ERR == *"line 3 of '$T/unknown.jsonl': service 'nosuch' not found"* ]] && [ -z "$OUT" ] &&
	ok "an incident of an unknown service is exit 4 naming the line" || not_ok "unknown service" "rc=$RC $ERR"
printf '{"service":"%s","function":"%s","time":"%s"}\n' "$svc" "$fn" "$(date -u -d "$at + 1 day" +%Y-%m-%dT%H:%M:%SZ)" >"$T/late.jsonl"
run pr backtest "${range[@]}" --incidents "$T/late.jsonl" --json
[ $RC -eq 4 ] && [[ $ERR == *"line 1 of '$T/late.jsonl': time "*" is outside the replayed range"* ]] &&
	ok "an incident outside --since/--until is exit 4 naming the line" || not_ok "late incident" "rc=$RC $ERR"
run pr backtest --since 2000d
[ $RC -eq 2 ] && [[ $ERR == *"at most 366"* ]] && ok "too long a range is refused" || not_ok "range" "rc=$RC $ERR"
run "$PROFREG_BIN" backtest --help
[ $RC -eq 0 ] && ok "backtest --help" || not_ok "help"
finish
