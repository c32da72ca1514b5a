#!/bin/bash
# Retention deletes run reports past reports.keep_days: the folder was
# written to every night and never emptied. A report that lists a
# finding still open stays (its page links there), as do recent ones,
# files not named after a run, and everything in a dry run. Several
# databases may share one reports folder, each naming its reports after
# its instance (run-<ID>-<instance>): another database's run 1 is not
# ours, and its reports stay whatever our run 1's age.
. "$(dirname "$0")/lib.sh"
fresh_db cli_retention_reports
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_retention_reports
rm -rf "$T" && mkdir -p "$T"
R=$HOME_DIR/reports
mkdir -p "$R"
AT=2026-10-01T02:30:00Z
echo '{"reports": {"keep_days": 30}}' >"$T/cfg.json"
P() { pr --config "$T/cfg.json" "$@"; }

# Runs 1 and 2 ended 60 days before AT, run 3 two days before; run 2
# listed a finding that is still open, run 1 one that is closed.
sql "insert into services (name) values ('svc');
	insert into runs (kind, status, started_at, finished_at) values
	  ('nightly', 'ok', '2026-08-02', '2026-08-02'),
	  ('nightly', 'ok', '2026-08-02', '2026-08-02'),
	  ('nightly', 'ok', '2026-09-29', '2026-09-29');
	insert into findings (service_id, status) select id, 'open' from services;
	insert into findings (service_id, status) select id, 'resolved' from services;
	insert into run_findings values (2, 1), (1, 2)" >/dev/null
# I: this database's instance as its report names carry it; O: another's.
I=$(sql "select left(replace(id::text, '-', ''), 8) from instance")
O=$([ "$I" = 0f0f0f0f ] && echo 1e1e1e1e || echo 0f0f0f0f)
for r in 1 2 3; do
	for ext in html md json; do printf 'report %s\n' "$r" >"$R/run-$r-$I.$ext"; done
done
printf 'x\n' >"$R/run-1-$I-team-payments.html"
printf 'x\n' >"$R/notes.txt"
printf 'x\n' >"$R/run-x-$I.html"
# The other database's run 1 (it may list a finding open over there).
for ext in html md json; do printf 'other 1\n' >"$R/run-1-$O.$ext"; done
printf 'x\n' >"$R/run-1-$O-team-payments.html"

run P retention --at "$AT" --dry-run --json
[ $RC -eq 0 ] && [ "$(jq -r .reports_deleted <<<"$OUT")" = 4 ] && [ -e "$R/run-1-$I.html" ] &&
	ok "a dry run counts the old reports and deletes none" || not_ok "dry run" "rc=$RC $OUT $ERR"
run P retention --at "$AT"
[ $RC -eq 0 ] && [[ $OUT == *"4 run report files past reports.keep_days deleted"* ]] &&
	ok "retention says how many report files it deleted" || not_ok "text" "rc=$RC $OUT $ERR"
left=$(cd "$R" && ls | sort | tr '\n' ' ')
mine=$(cd "$R" && ls | grep -v -- "-$O" | sort | tr '\n' ' ')
[ "$mine" = "notes.txt run-2-$I.html run-2-$I.json run-2-$I.md run-3-$I.html run-3-$I.json run-3-$I.md run-x-$I.html " ] &&
	ok "an old run's reports and its team's go; an open finding's, recent ones and other files stay" ||
	not_ok "left" "$left"
theirs=$(cd "$R" && ls | grep -- "-$O" | sort | tr '\n' ' ')
[ "$theirs" = "run-1-$O-team-payments.html run-1-$O.html run-1-$O.json run-1-$O.md " ] &&
	ok "another database's reports in the shared folder stay, though our run 1 is old" ||
	not_ok "other instance" "$left"
echo '{"reports": {"keep_days": 0}}' >"$T/keep.json"
for ext in html md json; do printf 'report 1\n' >"$R/run-1-$I.$ext"; done
run pr --config "$T/keep.json" retention --at "$AT" --json
[ $RC -eq 0 ] && [ "$(jq -r .reports_deleted <<<"$OUT")" = 0 ] && [ -e "$R/run-1-$I.md" ] &&
	ok "keep_days 0 keeps every report" || not_ok "keep 0" "rc=$RC $OUT"
finish
