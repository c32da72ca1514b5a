#!/bin/bash
# A nightly killed after it stored its findings and pages, and before it
# wrote its reports, leaves pages that link to a report that is not
# there. The run that sends them writes that report (and its team's)
# first, so the link on-call follows leads somewhere; also when only the
# team's report is missing.
. "$(dirname "$0")/lib.sh"
fresh_db cli_page_report_owed
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_page_report_owed
rm -rf "$T" && mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT
webhook_start

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 3 --bands 10-30 \
	--regressed 1 --seed 5 --days 5 --per-day 2 --current 3 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
pr --quiet service add svc-000 --team payments && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl" >/dev/null
cat >"$T/cfg.json" <<JSON
{"paging": {"min_severity": "high", "backoff_ms": 20, "timeout_ms": 3000,
  "targets": {"hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook"}},
  "default": ["hook"]},
 "reports": {"dir": "$T/reports", "base_url": "https://reports.example"}}
JSON
run pr --config "$T/cfg.json" nightly --at "$at"
[ $RC -eq 0 ] && [ "$(grep -c '"event":"trigger"' "$T/hook.log")" = 1 ] &&
	ok "the nightly pages once" || not_ok "nightly" "rc=$RC $OUT $ERR"
link=$(grep '"event":"trigger"' "$T/hook.log" | sed 's/.*"link":"\([^"]*\)".*/\1/')
file=${link#https://reports.example/}
file=${file%%#*}
[ -f "$T/reports/$file" ] && ok "its link names a report that was written ($file)" || not_ok "report" "$link"

# The state a kill leaves between storing the pages and writing the
# reports: the page still to go, the run's reports not there.
rm -rf "$T/reports"
sql "update pages set status = 'pending', attempts = 0, sent_at = null, next_attempt_at = now()" >/dev/null
: >"$T/hook.log"
run pr --config "$T/cfg.json" nightly --at "$at"
[ $RC -eq 0 ] && [ "$(grep -c '"event":"trigger"' "$T/hook.log")" = 1 ] &&
	ok "the next nightly sends the waiting page" || not_ok "rerun" "rc=$RC $OUT $ERR"
[ -f "$T/reports/$file" ] && [ -f "$T/reports/${file%-team-*}.html" ] &&
	ok "after writing the report its link names, and the run's whole report" ||
	not_ok "owed report" "$(ls "$T/reports" 2>&1)"

# Killed between the run's report and its team's: the team's is written.
rm -f "$T/reports/$file"
sql "update pages set status = 'pending', attempts = 0, sent_at = null, next_attempt_at = now()" >/dev/null
run pr --config "$T/cfg.json" nightly --at "$at"
[ $RC -eq 0 ] && [ -f "$T/reports/$file" ] &&
	ok "a missing team report is written though the run's report is there" ||
	not_ok "owed team report" "rc=$RC $(ls "$T/reports" 2>&1)"
finish
