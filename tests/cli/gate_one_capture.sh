#!/bin/bash
# A gate judged on one capture fails on a regression whatever the
# baseline's ties. The Mann-Whitney check fell back to its normal
# approximation when two baseline values were equal (a function absent
# from several captures), and for one capture against 20 that
# approximation cannot go below about 0.053: a function risen from 0.04%
# to 5% of the CPU passed the gate. The same rise with no tie failed it.
# One capture of a service with no baseline is inconclusive, and the
# count of captures judged says why none was (not "of a type or host").
. "$(dirname "$0")/lib.sh"
fresh_db cli_gate_one_capture
T=$PROFREG_TEST_TMP/cli_gate_one_capture
rm -rf "$T" && mkdir -p "$T"
pr --quiet db init
pr --quiet service add tied --enable
pr --quiet service add distinct --enable

# One capture: `work` with W samples, 30 steady functions with 5% noise,
# 20,000 samples in all.
capture() {
	awk -v seed="$1" -v w="$2" 'BEGIN { srand(seed); print "main;work " w; t = w
		for (f = 1; f <= 30; f++) { n = int((200 + f * 10) * (0.95 + 0.1 * rand())); t += n
			print "main;f" f " " n }
		print "main;rest " 20000 - t }'
}
tied=(0 0 3 1 2 0 4 1 0 2 3 0 1 2 0 5 1 0 2 1)
distinct=(6 7 3 1 2 8 4 9 10 12 13 14 15 16 17 5 18 19 20 11)
c1=1111111111111111111111111111111111111111
c2=2222222222222222222222222222222222222222
for svc in tied distinct; do
	declare -n ws=$svc
	for i in $(seq 0 19); do
		capture $((i + 1)) "${ws[$i]}" >"$T/$svc-b$i.folded"
		pr --quiet ingest "$T/$svc-b$i.folded" --service "$svc" --release v1 \
			--host h$((i % 4)) --commit $c1 \
			--time "$(date -u -d "2026-01-01 +$((i * 7)) hours" +%Y-%m-%dT%H:%M:%SZ)"
	done
	capture 99 1000 >"$T/$svc-c1.folded"
	pr --quiet ingest "$T/$svc-c1.folded" --service "$svc" --release v2 --host h1 \
		--commit $c2 --time 2026-01-07T03:00:00Z
done
for svc in tied distinct; do
	run pr post-deploy --service "$svc" --release v2 --commit $c2 --at 2026-01-07T04:00:00Z
	[ $RC -eq 1 ] && [[ $OUT == *"**Verdict: FAIL**"* ]] &&
		ok "one capture, a baseline $( [ $svc = tied ] && echo with || echo without) ties: the gate fails" ||
		not_ok "one capture $svc" "rc=$RC $(grep -m 1 Verdict <<<"$OUT") $ERR"
done
run pr analyze --service tied --release v2 --at 2026-01-07T04:00:00Z --dry-run --json --all-tests
jq -e '.findings[] | select(.function == "work") | .significant and .mw_p < 0.05' <<<"$OUT" \
	>/dev/null && ok "its Mann-Whitney p is the exact 1/21" ||
	not_ok "tied mw_p" "$(jq -c '.findings[] | select(.function == "work")' <<<"$OUT" 2>&1)"

pr --quiet service add fresh --enable
pr --quiet ingest "$T/tied-c1.folded" --service fresh --release v2 --host h1 --commit $c2 \
	--time 2026-01-07T03:00:00Z
run pr post-deploy --service fresh --release v2 --commit $c2 --at 2026-01-07T04:00:00Z
[ $RC -eq 5 ] && [[ $OUT == *"0 of the 1 capture of the release judged (1 not judged: the analysis was skipped, for the reason given)"* ]] &&
	ok "no baseline: inconclusive, the capture not judged because the analysis was skipped" ||
	not_ok "fresh service" "rc=$RC $(grep -m 1 '^Commit' <<<"$OUT") $ERR"
