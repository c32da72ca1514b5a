#!/bin/bash
# A stored finding that a later look finds worse takes the later figures:
# a regression first stored as "medium" from three early captures, whose
# release's captures now say "critical", fails the gate and pages; its
# state history says it was escalated, and finding show prints its
# severity. A later look that is milder, or an
# improvement, leaves the stored finding as it was.
. "$(dirname "$0")/lib.sh"
fresh_db cli_finding_escalates
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_finding_escalates
rm -rf "$T" && mkdir -p "$T"

# The simulated night is yesterday; the release's first captures, 20
# hours ago, are three of the baseline's with the regressed function's
# stacks 1.2 times as costly.
escalation_fleet
printf '{"paging": {"min_severity": "high", "targets": []}}' >"$T/cfg.json"
pr --quiet nightly --service "$bad" --at "$(date -u -d '-19 hours' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null 2>&1
fid=$(sql "select id from findings where function = '$fn' and current_release = '$rel'")
early=$(sql "select severity || ' ' || current_captures from findings where id = $fid")
case "$early" in
critical* | "") not_ok "the early look stores a milder finding" "'$early'" ;;
*) ok "the early look stores a milder finding ($early)" ;;
esac

# The release's captures now: the full regression.
grep "\"service\":\"$bad\"" "$T/fleet/manifest.jsonl" | grep "\"release\":\"$rel\"" |
	sed "s/\"time\":\"[^\"]*\"/\"time\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"/" >"$T/fleet/now.jsonl"
pr --quiet ingest --manifest "$T/fleet/now.jsonl" || not_ok "ingest of the release's captures"
run pr post-deploy --service "$bad" --release "$rel" --commit "$commit" --min-captures 4 --gate critical
[ $RC -eq 1 ] && [[ $OUT == *"Verdict: FAIL"* ]] && ok "the gate fails on the release's captures now" ||
	not_ok "gate passed a critical regression" "rc=$RC $(grep -i -e verdict -e "$fn" <<<"$OUT")"
now=$(sql "select severity || ' ' || current_captures || ' ' || jsonb_array_length(detail->'captures'->'current')
	   from findings where id = $fid")
[ "${now%% *}" = critical ] && [ "$(cut -d' ' -f2 <<<"$now")" = 7 ] && [ "${now##* }" = 7 ] &&
	ok "the stored finding takes the worse look's figures ($now)" || not_ok "escalated figures" "'$now'"
[ "$(sql "select count(*) from findings where function = '$fn' and current_release = '$rel'")" = 1 ] &&
	ok "escalating keeps one finding" || not_ok "escalation made another finding"
why=$(sql "select reason from finding_states where finding_id = $fid and reason like 'escalated%'")
[[ $why == "escalated at look"*"-> critical regression" ]] && ok "its state history says it was escalated" ||
	not_ok "state history" "'$why'"
run pr finding list --json
[ "$(jq -r --argjson id "$fid" '.[] | select(.id == $id) | .severity' <<<"$OUT")" = critical ] &&
	ok "finding list shows the escalated finding" || not_ok "finding list" "$OUT"
run pr finding show "$fid"
[ $RC -eq 0 ] && grep -qx 'severity  critical' <<<"$OUT" &&
	ok "finding show prints the escalated severity" || not_ok "finding show severity" "rc=$RC $OUT"

# A milder look later leaves it as it is: three of the release's captures only.
before=$(sql "select severity, current_captures, detail->'captures', current_share from findings where id = $fid")
run pr analyze --service "$bad" --since "$(date -u -d '-21 hours' +%Y-%m-%dT%H:%M:%SZ)" \
	--until "$(date -u -d '-19 hours' +%Y-%m-%dT%H:%M:%SZ)"
after=$(sql "select severity, current_captures, detail->'captures', current_share from findings where id = $fid")
arid=$(sql "select max(id) from runs where kind = 'analyze'")
[ "$(sql "select count(*) from run_findings where run_id = $arid and finding_id = $fid")" = 1 ] ||
	not_ok "the milder look did not see the finding" "run=$arid rc=$RC $OUT"
[ -n "$before" ] && [ "$before" = "$after" ] && ok "a milder later look leaves the finding as it was" ||
	not_ok "milder look rewrote" "rc=$RC $before / $after"
finish
