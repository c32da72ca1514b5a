#!/bin/bash
# post-deploy judges the build that was deployed, and says what it judged:
# a release name reused for a hotfix, whose captures ingest refused,
# leaves only the old build's captures, and a pass on them is
# inconclusive, not a pass (a fail stays a fail); commits compare as
# ingest compares them (a prefix, in any case); with --at before some of
# the release's captures, the summary counts the captures judged.
. "$(dirname "$0")/lib.sh"
fresh_db cli_postdeploy_build
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_postdeploy_build
rm -rf "$T" && mkdir -p "$T"

# v1 and v2 make the baseline; the night's release, v3, doubles a function.
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 \
	--bands 10-30 --regressed 1 --seed 5 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000

# v2 is commit ...02, its captures stamped with 39 of its digits in upper
# case; the hotfix ...22 differs from it in the 39th digit only.
c02=0123456789abcdef0123456789abcdef01234502
c22=0123456789abcdef0123456789abcdef01234522
short=$(tr a-f A-F <<<"${c02:0:39}")
grep '"release":"v1"' "$T/fleet/manifest.jsonl" >"$T/fleet/v1.jsonl"
# Its last three nights only: a release judged on more nights than
# analysis.max_looks is inconclusive whatever its commit.
grep '"release":"v2"' "$T/fleet/manifest.jsonl" | grep -E '"time":"2026-01-1[2-4]' |
	sed "s/\"commit\":\"[0-9a-f]*\"/\"commit\":\"$short\"/" >"$T/fleet/v2.jsonl"
pr --quiet ingest --manifest "$T/fleet/v1.jsonl"
pr --quiet ingest --manifest "$T/fleet/v2.jsonl"

# 1. --at before some of the release's captures: the summary counts the
# ones judged, and says why the others were not.
mid=2026-01-13T12:00:00Z
nall=$(wc -l <"$T/fleet/v2.jsonl")
nbefore=$(sed 's/.*"time":"\([^"]*\)".*/\1/' "$T/fleet/v2.jsonl" | awk -v m="$mid" '$0 <= m' | wc -l)
run pr post-deploy --service svc-000 --release v2 --commit "$c02" --at "$mid"
[ "$nbefore" -gt 0 ] && [ "$nbefore" -lt "$nall" ] &&
	[[ $OUT == *"; $nbefore of the $nall captures of the release judged ($((nall - nbefore)) stamped after --at)"* ]] &&
	[[ $OUT != *"; $nall captures of the release"* ]] &&
	ok "with --at before some captures, the summary counts the $nbefore judged of $nall" ||
	not_ok "captures judged" "rc=$RC before=$nbefore all=$nall $(grep -m 1 '^Commit' <<<"$OUT")"
run pr post-deploy --service svc-000 --release v2 --commit "$c02" --at "$at" --json
[ "$(jq -r .judged_captures <<<"$OUT")" = "$nall" ] && ok "--json gives the captures judged" ||
	not_ok "json judged" "rc=$RC $(jq -c '{captures, judged_captures}' <<<"$OUT" 2>&1)"

# 2. v2 as deployed: its captures carry a prefix of the commit in upper
# case, which is the same commit: it passes.
run pr post-deploy --service svc-000 --release v2 --commit "$c02" --at "$at" --min-captures 3
[ $RC -eq 0 ] && [[ $OUT == *"**Verdict: pass**"* ]] && [[ $OUT != *"Another build"* ]] &&
	[[ $ERR != *"captured as commit"* ]] &&
	ok "captures stamped with a prefix of the deployed commit, in upper case, are of that build" ||
	not_ok "prefix is the same build" "rc=$RC $OUT $ERR"

# 3. v2 deployed again as the hotfix ...22, which doubles a function:
# ingest refuses its captures, so only the old build's are left to judge.
grep "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" |
	sed "s/\"release\":\"$rel\"/\"release\":\"v2\"/; s/\"commit\":\"[0-9a-f]*\"/\"commit\":\"$c22\"/" \
		>"$T/fleet/hotfix.jsonl"
run pr ingest --manifest "$T/fleet/hotfix.jsonl"
[ $RC -eq 4 ] && [[ $ERR == *"release 'v2' of service 'svc-000' is commit $short"* ]] &&
	[ "$(sql "select count(*) from profiles where commit_sha = '$c22'")" = 0 ] &&
	ok "ingest refuses the hotfix's captures under the old release name" ||
	not_ok "hotfix refused" "rc=$RC $ERR"
run pr post-deploy --service svc-000 --release v2 --commit "$c22" --at "$at" --min-captures 3
reason="release 'v2' was deployed as commit $c22, but the captures judged are of commit $short"
[ $RC -eq 5 ] && [[ $OUT == *"**Verdict: inconclusive**"* ]] && [[ $OUT == *"$reason (capture "* ]] &&
	[[ $OUT == *"the deployed build was never measured. A release is one build (docs/ingest.md, \"A release has one commit\"): deploy the new build under a release name of its own"* ]] &&
	ok "a release name reused for a build never measured is inconclusive (exit 5), naming both commits" ||
	not_ok "unmeasured build" "rc=$RC $OUT $ERR"
[ "$(grep -c "$reason" <<<"$OUT")" = 1 ] && [[ $OUT != *"Another build"* ]] &&
	ok "the summary says it once, as the reason" || not_ok "said once" "$OUT"
run pr post-deploy --service svc-000 --release v2 --commit "$c22" --at "$at" --min-captures 3 --json
[ $RC -eq 5 ] && [ "$(jq -r .verdict <<<"$OUT")" = inconclusive ] &&
	[ "$(jq -r .captured_commit <<<"$OUT")" = "$short" ] &&
	[ "$(jq '.inconclusive_reasons | length' <<<"$OUT")" = 1 ] &&
	jq -r '.inconclusive_reasons[]' <<<"$OUT" | grep -q "^$reason" &&
	ok "--json gives the verdict, the reason and the commit captured" ||
	not_ok "unmeasured json" "rc=$RC $OUT"
run pr post-deploy --service svc-000 --release v2 --commit "$c22" --at "$at" --min-captures 3 \
	--on-inconclusive pass
[ $RC -eq 0 ] && [[ $OUT == *"passed by --on-inconclusive pass"* ]] &&
	ok "--on-inconclusive pass still passes it, saying so" || not_ok "on-inconclusive" "rc=$RC $OUT"

# 4. A fail stays a fail: the release name's captures did regress.
grep "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" >"$T/fleet/v3.jsonl"
pr --quiet ingest --manifest "$T/fleet/v3.jsonl"
run pr post-deploy --service svc-000 --release "$rel" --commit "$c22" --at "$at"
[ $RC -eq 1 ] && [[ $OUT == *"**Verdict: FAIL**"* ]] &&
	[[ $OUT == *"**Another build:**"*"none of which is of the deployed build"* ]] &&
	ok "a regression in another build's captures still fails the gate (exit 1), saying whose" ||
	not_ok "fail stays" "rc=$RC $OUT $ERR"
finish
