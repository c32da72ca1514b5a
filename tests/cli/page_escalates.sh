#!/bin/bash
# A finding paged at one severity and escalated by a later look pages
# again, saying so: Alertmanager (a real one, on a free loopback port)
# gets the alert of the new severity and the end of the old one (severity
# is a label, so the two are two alerts), a webhook gets a second trigger
# with escalated_from and "Escalated from" in its text. A later run at the
# same severity sends nothing more, and resolving the finding ends the
# escalated alert.
. "$(dirname "$0")/lib.sh"
fresh_db cli_page_escalates
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_page_escalates
rm -rf "$T" && mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT
alertmanager_start
webhook_start
alerts() { curl -sf "http://127.0.0.1:$AM_PORT/api/v2/alerts?alertname=ProfregRegression&active=true&silenced=true&inhibited=true"; }

# The simulated night is yesterday; the release's first captures, 20
# hours ago, are three of the baseline's with the regressed function's
# stacks 1.2 times as costly.
escalation_fleet
cat >"$T/cfg.json" <<JSON
{"analysis": {"confirm_looks": 1},
 "paging": {"min_severity": "low", "backoff_ms": 20, "timeout_ms": 3000, "alert_hours": 2,
  "targets": {"am": {"type": "alertmanager", "url": "http://127.0.0.1:$AM_PORT"},
              "hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook"}},
  "default": ["am", "hook"]}}
JSON
run pr --config "$T/cfg.json" nightly --service "$bad" --at "$(date -u -d '-19 hours' +%Y-%m-%dT%H:%M:%SZ)"
fid=$(sql "select id from findings where function = '$fn' and current_release = '$rel'")
early=$(sql "select severity from findings where id = $fid")
A=$(alerts)
hooks() { grep -c '"event":"trigger"' "$T/hook.log"; }
if [ -n "$fid" ] && [ "$early" != critical ] && [ "$(jq length <<<"$A")" = 1 ] && [ "$(hooks)" = 1 ]; then
	ok "the early look pages its $early finding once to each target"
else
	not_ok "early page" "rc=$RC fid=$fid sev=$early alerts=$A hooks=$(hooks) $OUT $ERR"
fi
sev0=$(jq -r '.[0].labels.severity' <<<"$A")

# The release's captures now: the full regression, a critical finding.
grep "\"service\":\"$bad\"" "$T/fleet/manifest.jsonl" | grep "\"release\":\"$rel\"" |
	sed "s/\"time\":\"[^\"]*\"/\"time\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"/" >"$T/fleet/now.jsonl"
pr --quiet ingest --manifest "$T/fleet/now.jsonl" || not_ok "ingest of the release's captures"
run pr --config "$T/cfg.json" post-deploy --service "$bad" --release "$rel" --commit "$commit" \
	--min-captures 4 --gate critical
[ "$(sql "select severity from findings where id = $fid")" = critical ] &&
	ok "the later look escalates the finding to critical" ||
	not_ok "escalation" "rc=$RC $(sql "select severity from findings where id = $fid") $OUT $ERR"
A=$(alerts)
[ "$(jq length <<<"$A")" = 1 ] && [ "$(jq -r '.[0].labels.severity' <<<"$A")" = critical ] &&
	[ "$(jq -r '.[0].labels.function' <<<"$A")" = "$fn" ] &&
	ok "Alertmanager holds one alert, at the new severity (the $sev0 one ended)" ||
	not_ok "alertmanager after escalation" "$A"
[ "$(hooks)" = 2 ] && ok "the webhook got a second trigger" || not_ok "webhook triggers" "$(cat "$T/hook.log")"
last=$(grep '"event":"trigger"' "$T/hook.log" | tail -n 1)
[[ $last == *"\"escalated_from\":\"$early\""* ]] && [[ $last == *"\"text\":\"Escalated from $early: [critical]"* ]] &&
	[[ $last == *"\"finding_id\":$fid"* ]] &&
	ok "which says from what it escalated, for the same finding" || not_ok "escalated trigger" "$last"
[ "$(sql "select count(*) from pages where finding_id = $fid and event = 'trigger' and status = 'sent'")" = 2 ] &&
	ok "each target's trigger is recorded as sent again" || not_ok "page rows" "$(sql "select target, status, detail->>'severity' from pages")"

# Another look at the same severity sends nothing new.
run pr --config "$T/cfg.json" post-deploy --service "$bad" --release "$rel" --commit "$commit" \
	--min-captures 4 --gate critical
[ "$(hooks)" = 2 ] && [ "$(jq length <<<"$(alerts)")" = 1 ] &&
	ok "a later look at the same severity pages no one again" || not_ok "re-look" "$(cat "$T/hook.log")"

run pr --config "$T/cfg.json" finding resolve "$fid" --note "fixed forward"
A=$(alerts)
[ $RC -eq 0 ] && [ "$(jq length <<<"$A")" = 0 ] && ok "resolving the finding ends the escalated alert" ||
	not_ok "resolve" "rc=$RC $A $OUT $ERR"
[ "$(grep -c '"event":"resolve"' "$T/hook.log")" = 1 ] && ! grep '"event":"resolve"' "$T/hook.log" | grep -q Escalated &&
	ok "the webhook gets one resolve, without the escalation in its text" || not_ok "webhook resolve" "$(cat "$T/hook.log")"
finish
