#!/bin/bash
# Real perf captures of one C program built at -O2, where hash_key is
# inlined into its two callers, and at -O1, where it is called: the
# release brings hash_key from nothing and its callers' self time falls
# by as much. Judged as one path, checksum_block with hash_key and
# parse_records, not as a critical regression from nothing beside two
# improvements (tests/data/perf/inline: where the captures came from).
. "$(dirname "$0")/lib.sh"
fresh_db cli_perf_inlined
D=$(cd "$(dirname "$0")/../data/perf/inline" && pwd)
pr --quiet db init
pr --quiet service add app --enable
for i in $(seq 1 12); do
	pr --quiet ingest "$D/o2-$(printf %02d "$i").perf.gz" --service app --release v1 \
		--host h$((i % 3)) --time "$(date -u -d "2026-11-20 +$((i * 17)) hours" +%Y-%m-%dT%H:%M:%SZ)"
done
for i in $(seq 1 6); do
	pr --quiet ingest "$D/o1-$(printf %02d "$i").perf.gz" --service app --release v2 \
		--host h$((i % 3)) --time "$(date -u -d "2026-11-30 +$((i * 4)) hours" +%Y-%m-%dT%H:%M:%SZ)"
done
run pr analyze --service app --release v2 --at 2026-12-01T04:00:00Z --json --dry-run
regs=$(jq -r '.findings[] | select(.direction == "regression") | .function' <<<"$OUT")
[ $RC -eq 0 ] && ! grep -qx "hash_key" <<<"$regs" &&
	jq -e '[.findings[] | select(.direction == "improvement" and
		(.function == "checksum_block" or .function == "parse_records"))] | length == 0' \
		<<<"$OUT" >/dev/null &&
	ok "a callee inlined into two callers at -O2 and called at -O1 is no regression from nothing" ||
	not_ok "inlined callee" "rc=$RC $(jq -c '[.findings[] | {function, direction, severity}]' <<<"$OUT" 2>&1) $ERR"
run pr analyze --service app --release v2 --at 2026-12-01T04:00:00Z --json --dry-run --all-tests
jq -e '.findings[] | select(.function == "checksum_block (+hash_key, +parse_records)")' \
	<<<"$OUT" >/dev/null && ok "it is tested as one path under the caller that moved most" ||
	not_ok "merged row" "$(jq -c '[.findings[] | .function]' <<<"$OUT" 2>&1)"
