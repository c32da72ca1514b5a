#!/bin/bash
# A gate never passes on a baseline it had to fill with releases no run has
# judged: a release deployed without a gate during a gap in the nightlies
# may hold the very regression the gate is asked about. The pass is
# inconclusive (exit 5), naming the releases to judge first; once they are
# judged, the regression they shipped stays out of the baseline and the
# gate fails.
. "$(dirname "$0")/lib.sh"
fresh_db cli_unjudged_gate
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_unjudged_gate
rm -rf "$T" && mkdir -p "$T"

# v1 (1-7 January) and v2 (8-14 January) change nothing; v3, from 15
# January for 12 nights, doubles a function of 10-30% of the CPU.
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 \
	--bands 10-30 --regressed 1 --seed 11 --nights 12 >"$T/gen.txt"
M=$T/fleet/manifest.jsonl
c2=$(grep -m 1 '"release":"v2"' "$M" | sed 's/.*"commit":"\([0-9a-f]*\)".*/\1/')
c4=4444444444444444444444444444444444444444
between() { awk -F'"time":"' -v lo="$1" -v hi="$2" '{ split($2, a, "\""); if (a[1] >= lo && a[1] < hi) print }'; }
grep '"release":"v1"' "$M" >"$T/fleet/v1.jsonl"
grep '"release":"v2"' "$M" | between 0 2026-01-09T12 >"$T/fleet/v2a.jsonl"
grep '"release":"v2"' "$M" | between 2026-01-09T12 9 >"$T/fleet/v2b.jsonl"
# v3 ran 15-25 January with no gate, while no nightly ran.
grep '"release":"v3"' "$M" | between 0 2026-01-26 >"$T/fleet/v3.jsonl"
# v4 is the same regressed code under a name and commit of its own, gated.
grep '"release":"v3"' "$M" | between 2026-01-26 9 |
	sed "s/\"release\":\"v3\"/\"release\":\"v4\"/; s/\"commit\":\"[0-9a-f]*\"/\"commit\":\"$c4\"/" \
		>"$T/fleet/v4.jsonl"
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000
(cd "$T/fleet" && pr --quiet ingest --manifest "$T/fleet/v1.jsonl" &&
	pr --quiet ingest --manifest "$T/fleet/v2a.jsonl")
run pr --quiet post-deploy --service svc-000 --release v2 --commit "$c2" --at 2026-01-09T12:00:00Z
[ $RC -eq 0 ] || not_ok "v2's gate" "rc=$RC $ERR"
(cd "$T/fleet" && for m in v2b v3 v4; do pr --quiet ingest --manifest "$T/fleet/$m.jsonl"; done)

# The window before v4 holds too few judged captures (v2's last nights):
# v3's are taken too, and they hold the regression.
run pr post-deploy --service svc-000 --release v4 --commit "$c4" --at 2026-01-27T00:00:00Z \
	--summary "$T/summary.md"
[ $RC -eq 5 ] && [[ $OUT == *"**Verdict: inconclusive**"* ]] &&
	grep -q "release(s) 'v3', which no run has judged" "$T/summary.md" &&
	grep -q "profreg analyze --service svc-000 --release R" "$T/summary.md" &&
	ok "a pass against a baseline of releases no run has judged is inconclusive, naming them" ||
	not_ok "unjudged baseline gate" "rc=$RC $(grep -i -m 3 'verdict\|judged' <<<"$OUT") $ERR"
run pr post-deploy --service svc-000 --release v4 --commit "$c4" --at 2026-01-27T00:00:00Z --json
[ $RC -eq 5 ] && [ "$(jq -r .verdict <<<"$OUT")" = inconclusive ] &&
	jq -e '.inconclusive_reasons | map(select(test("no run has judged"))) | length == 1' \
		<<<"$OUT" >/dev/null &&
	ok "--json gives the reason" || not_ok "unjudged json" "rc=$RC $(jq -c '{verdict, inconclusive_reasons}' <<<"$OUT" 2>&1)"
run pr analyze --service svc-000 --release v4 --at 2026-01-27T00:00:00Z --gate high --dry-run
[ $RC -eq 5 ] && [[ $ERR == *"inconclusive: a baseline holds captures of release(s) 'v3'"* ]] &&
	ok "analyze --gate is inconclusive on it too" || not_ok "analyze gate unjudged" "rc=$RC $ERR"

# Judged on its eleventh night, the first time a run looks at it, v3 may
# spend the alpha of the looks no run took: its regression is found (with
# none, it was judged finding nothing and became v4's baseline). Kept out
# of v4's baseline, it leaves that baseline too thin: the gate still does
# not pass.
run pr --json analyze --service svc-000 --release v3 --at 2026-01-26T00:00:00Z
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.direction == "regression"
	and .severity == "critical")] | length' <<<"$OUT")" = 1 ] &&
	ok "a release first judged past its planned looks spends their alpha and is found" ||
	not_ok "judging v3 late" "rc=$RC $(jq -c '[.findings[] | {function, direction, severity, look}]' <<<"$OUT" 2>&1) $ERR"
run pr post-deploy --service svc-000 --release v4 --commit "$c4" --at 2026-01-27T00:00:00Z
[ $RC -eq 5 ] && [[ $OUT == *"insufficient baseline"* ]] && [[ $OUT != *"no run has judged"* ]] &&
	ok "with v3 judged and kept out, v4's gate is inconclusive on a thin baseline, not a pass" ||
	not_ok "gate after judging" "rc=$RC $(grep -i -m 3 'verdict\|judged\|baseline' <<<"$OUT") $ERR"
finish
