#!/bin/bash
# A gate passes only what it could have seen. On a starved host a Go
# service's 15 s profiles held 63-107 samples, and post-deploy passed a
# release whose main.computeTax had gone from a quarter of the time to
# 44%: right not to call so few samples significant, wrong to pass. Here
# three captures of 30 samples each, the function risen from 25% to 40%:
# the gate is inconclusive (exit 5), naming the function and the rise it
# could have missed; --max-unseen 0 gives the old pass. The same baseline
# against captures of 5,000 samples passes and says what it would see.
. "$(dirname "$0")/lib.sh"
fresh_db cli_gate_blind
T=$PROFREG_TEST_TMP/cli_gate_blind
rm -rf "$T" && mkdir -p "$T"
pr --quiet db init

# One capture: SEED, SAMPLES drawn one by one, computeTax's share TAX
# (jittered by 4%), 20 other functions sharing the rest.
capture() {
	awk -v seed="$1" -v n="$2" -v tax="$3" 'BEGIN { srand(seed)
		w[0] = tax * (0.98 + 0.04 * rand()); s = w[0]
		for (f = 1; f <= 20; f++) { w[f] = (1 - tax) / 20 * (0.9 + 0.2 * rand()); s += w[f] }
		for (i = 0; i < n; i++) {
			u = rand() * s
			for (f = 0; f < 20 && u > w[f]; f++)
				u -= w[f]
			c[f]++
		}
		print "main;handle;computeTax " c[0] + 0
		for (f = 1; f <= 20; f++)
			if (c[f])
				print "main;handle;f" f " " c[f] }'
}
c1=1111111111111111111111111111111111111111
c2=2222222222222222222222222222222222222222
# svc samples-a-capture current-captures current-share [baseline-share, 0.25]
release() {
	pr --quiet service add "$1" --enable
	for i in $(seq 0 11); do
		capture $((i + 1)) 5000 "${5:-0.25}" >"$T/$1-b$i.folded"
		pr --quiet ingest "$T/$1-b$i.folded" --service "$1" --release v1 --host h$((i % 3)) \
			--commit $c1 --time "$(date -u -d "2026-01-01 +$((i * 7)) hours" +%Y-%m-%dT%H:%M:%SZ)"
	done
	for i in $(seq 0 $(($3 - 1))); do
		capture $((i + 100)) "$2" "$4" >"$T/$1-c$i.folded"
		pr --quiet ingest "$T/$1-c$i.folded" --service "$1" --release v2 --host h$((i % 3)) \
			--commit $c2 --time "2026-01-05T0$i:00:00Z"
	done
}
release thin 30 3 0.40
release ample 5000 4 0.25
release hot 30 3 0.90
release dominant 5000 4 0.85 0.85
AT=2026-01-05T12:00:00Z

run pr analyze --service thin --release v2 --at $AT --dry-run --json --all-tests
jq -e '.findings[] | select(.function == "computeTax") | .significant == false and
	.current_share > 0.3' <<<"$OUT" >/dev/null &&
	ok "30-sample captures: computeTax's rise is not significant" ||
	not_ok "thin significance" "$(jq -c '.findings[] | select(.function == "computeTax")' <<<"$OUT" 2>&1)"

run pr post-deploy --service thin --release v2 --commit $c2 --at $AT
[ $RC -eq 5 ] && [[ $OUT == *"**Verdict: inconclusive**"* ]] &&
	[[ $OUT == *"too few or too small to pass the release: a rise in the cost of computeTax (thin, cpu) that took its share from 2"* ]] &&
	[[ $OUT == *"would be missed more than one time in five"* ]] &&
	ok "thin captures: the gate is inconclusive, naming what it could miss" ||
	not_ok "thin captures" "rc=$RC $(grep -A2 Verdict <<<"$OUT") $ERR"

run pr --json post-deploy --service thin --release v2 --commit $c2 --at $AT
jq -e '.verdict == "inconclusive" and .blind_spots[0].function == "computeTax" and
	.blind_spots[0].unseen_for_captures > 0.25 and
	.blind_spots[0].unseen_cost > .blind_spots[0].unseen_for_captures and
	.blind_spots[0].share_seen > .blind_spots[0].baseline_share' \
	<<<"$OUT" >/dev/null && ok "--json names the blind spot and its unseen cost" ||
	not_ok "thin json" "$(jq -c '{verdict, blind_spots}' <<<"$OUT" 2>&1)"

[ "$(sql "select detail->'blind_spots'->0->>'function' from runs
	where kind = 'post-deploy' order by id desc limit 1")" = computeTax ] &&
	ok "the run keeps the blind spot with its verdict" ||
	not_ok "run detail" "$(sql "select detail::text from runs order by id desc limit 1")"

run pr post-deploy --service thin --release v2 --commit $c2 --at $AT --max-unseen 0
[ $RC -eq 0 ] && [[ $OUT == *"**Verdict: pass**"* ]] &&
	ok "--max-unseen 0: the thin release passes, as before" ||
	not_ok "max-unseen 0" "rc=$RC $(grep -m 1 Verdict <<<"$OUT") $ERR"

run pr post-deploy --service thin --release v2 --commit $c2 --at $AT --max-unseen 1000
[ $RC -eq 0 ] && ok "--max-unseen 1000: the limit is the caller's" ||
	not_ok "max-unseen 1000" "rc=$RC $(grep -m 1 Verdict <<<"$OUT") $ERR"

run pr analyze --service thin --release v2 --at $AT --dry-run --gate high
[ $RC -eq 5 ] && [[ $ERR == *"inconclusive: the captures are too few or too small to pass the release: a rise in the cost of computeTax"* ]] &&
	ok "analyze --gate: the same, exit 5" ||
	not_ok "analyze gate thin" "rc=$RC $ERR"

run pr post-deploy --service ample --release v2 --commit $c2 --at $AT
[ $RC -eq 0 ] && [[ $OUT == *"**Verdict: pass**"* ]] &&
	grep -Eq '^Seen: computeTax \(2[0-9.]+% of cpu\), the function these captures see least, is found four times in five once its cost rises enough to make the service [0-9]+% costlier$' <<<"$OUT" &&
	ok "5,000-sample captures: a pass, saying what it would see" ||
	not_ok "ample" "rc=$RC $(grep -E 'Verdict|Seen|too few' <<<"$OUT") $ERR"

run pr --json analyze --service ample --release v2 --at $AT --dry-run --gate high
jq -e '(.blind_spots[0].unseen_for_captures | type) == "number" and
	.blind_spots[0].unseen_for_captures < 0.25' <<<"$OUT" >/dev/null && [ $RC -eq 0 ] &&
	ok "analyze --gate --json: the ample release's blind spot is under the limit" ||
	not_ok "ample analyze" "rc=$RC $(jq -c .blind_spots <<<"$OUT" 2>&1) $ERR"

run pr analyze --service ample --release v2 --at $AT --dry-run --gate high
[ $RC -eq 0 ] &&
	grep -Eq '^seen: ample/cpu: computeTax \(2[0-9.]+% of cpu\), the function these captures see least, is found four times in five once its cost rises enough to make the service [0-9]+% costlier$' <<<"$OUT" &&
	ok "analyze --gate: a pass says what it would see, as post-deploy does" ||
	not_ok "ample analyze text" "rc=$RC $(grep seen <<<"$OUT") $ERR"

run pr post-deploy --service thin --release v2 --commit $c2 --at $AT --max-unseen x
[ $RC -eq 2 ] && [[ $ERR == *"'--max-unseen x' is not a number from 0 to 100000"* ]] &&
	ok "a bad --max-unseen is a usage error" || not_ok "bad max-unseen" "rc=$RC $ERR"

run pr post-deploy --service thin --release v2 --commit $c2 --at $AT --on-inconclusive pass
[ $RC -eq 0 ] && [[ $OUT == *"passed by --on-inconclusive pass"* ]] &&
	[[ $OUT == *"a rise in the cost of computeTax"* ]] &&
	ok "--on-inconclusive pass: exit 0, the reason still said" ||
	not_ok "on-inconclusive pass" "rc=$RC $(grep -A2 Verdict <<<"$OUT") $ERR"

echo '{"analysis": {"gate_max_unseen_pct": 1000}}' >"$T/wide.json"
run pr --config "$T/wide.json" post-deploy --service thin --release v2 --commit $c2 --at $AT
[ $RC -eq 0 ] && ok "analysis.gate_max_unseen_pct sets the limit" ||
	not_ok "config key" "rc=$RC $(grep -m 1 Verdict <<<"$OUT") $ERR"

# Thin captures still fail a regression they do show.
run pr post-deploy --service hot --release v2 --commit $c2 --at $AT
[ $RC -eq 1 ] && [[ $OUT == *"**Verdict: FAIL**"* ]] && [[ $OUT == *"| computeTax |"* ]] &&
	ok "thin captures of a function risen from 25% to 90%: the gate fails" ||
	not_ok "hot" "rc=$RC $(grep -A2 Verdict <<<"$OUT") $ERR"

# A function of 85% of the time: its 5% margin alone is a rise that makes
# the service about 39% costlier, which no captures can shrink; the gate
# asks only what the captures add to it.
run pr --json post-deploy --service dominant --release v2 --commit $c2 --at $AT
jq -e '.verdict == "pass" and .blind_spots[0].unseen_by_design > 0.25 and
	.blind_spots[0].unseen_for_captures < 0.25' <<<"$OUT" >/dev/null &&
	ok "a function of 85% of the time: a pass, its margin not taken for blindness" ||
	not_ok "dominant" "$(jq -c '{verdict, blind_spots}' <<<"$OUT" 2>&1) $ERR"

run pr analyze --service thin --release v2 --at $AT --dry-run --max-unseen 10
[ $RC -eq 2 ] && [[ $ERR == *"--max-unseen needs --gate"* ]] &&
	ok "analyze --max-unseen without --gate is a usage error" || not_ok "no gate" "rc=$RC $ERR"
