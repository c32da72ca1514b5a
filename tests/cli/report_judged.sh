#!/bin/bash
# A run's report says what the run did not judge: a service analysed
# with a type or release left out lists that part, a post-deploy lists
# why its verdict is inconclusive, and no report of a run that left
# something unjudged, or judged nothing, says that nothing moved. The
# runs are recorded here as nightly and post-deploy record them: what is
# tested is the report, not the analysis.
. "$(dirname "$0")/lib.sh"
fresh_db cli_report_judged
T=$PROFREG_TEST_TMP/cli_report_judged
rm -rf "$T" && mkdir -p "$T"
clear="No function's self share moved beyond the margin"
pr --quiet db init
pr --quiet service add pdsvc --team pd && pr --quiet service enable pdsvc
why="heap release 'v2' not judged: insufficient baseline: 3 eligible heap captures (need 8)"

# A nightly run: pdsvc analysed (cpu judged), its heap not.
part=$(sql "insert into runs (kind, status, finished_at, detail) values ('nightly', 'ok', now(),
	jsonb_build_object('analysed', 1, 'failed', 0, 'skipped', 0,
	'services', jsonb_build_object('pdsvc', jsonb_build_object('status', 'analysed',
	'reason', \$w\$$why\$w\$)))) returning id")
run pr report --run "$part" --format md --out -
[ $RC -eq 0 ] && grep -qF -- "- partly judged: pdsvc: heap release 'v2' not judged: insufficient baseline" <<<"$OUT" &&
	! grep -qF "$clear" <<<"$OUT" && grep -q 'in what was judged' <<<"$OUT" &&
	ok "Markdown: a type not judged is listed, and the silence is not an all-clear" ||
	not_ok "md of a partly judged run" "rc=$RC $OUT $ERR"
run pr report --run "$part" --format json --out -
[ $RC -eq 0 ] && [ "$(jq -r '.partly_judged[0]' <<<"$OUT")" = "pdsvc: $why" ] &&
	jq -e '.note | test("in what was judged")' <<<"$OUT" >/dev/null &&
	ok "JSON: the part not judged is in partly_judged, and the note says so" ||
	not_ok "json of a partly judged run" "rc=$RC $OUT $ERR"
run pr report --run "$part" --out "$T/part.html"
[ $RC -eq 0 ] && grep -q 'Partly judged' "$T/part.html" && grep -qF "pdsvc: heap release &#39;v2&#39; not judged" "$T/part.html" &&
	! grep -qF "$clear" "$T/part.html" &&
	ok "HTML: the same, in its summary" || not_ok "html of a partly judged run" "rc=$RC $(grep -o 'pdsvc.\{0,80\}' "$T/part.html")"
run pr report --run "$part" --team pd --format md --out -
[ $RC -eq 0 ] && grep -qF -- "- partly judged: pdsvc: heap" <<<"$OUT" && ! grep -qF "$clear" <<<"$OUT" &&
	ok "the team's report of the run says it too" || not_ok "team md" "rc=$RC $OUT $ERR"

# A nightly run that analysed no service at all.
none=$(sql "insert into runs (kind, status, finished_at, detail) values ('nightly', 'incomplete', now(),
	jsonb_build_object('analysed', 0, 'failed', 1, 'skipped', 0,
	'services', jsonb_build_object('pdsvc', jsonb_build_object('status', 'failed',
	'reason', 'cannot read ''/nosuch''')))) returning id")
run pr report --run "$none" --format md --out -
[ $RC -eq 0 ] && grep -q 'No service was analysed in this run' <<<"$OUT" && ! grep -qF "$clear" <<<"$OUT" &&
	ok "a run that analysed no service says so, not that nothing moved" || not_ok "md of a run of nothing" "rc=$RC $OUT $ERR"

# A post-deploy of pdsvc, inconclusive: its heap was not judged.
pd=$(sql "insert into runs (kind, service_id, status, finished_at, detail) select 'post-deploy', id, 'ok', now(),
	jsonb_build_object('release', 'v2', 'verdict', 'inconclusive', 'findings', 0,
	'inconclusive_reasons', jsonb_build_array('heap: insufficient baseline (need 8)'))
	from services where name = 'pdsvc' returning id")
run pr report --run "$pd" --format md --out -
[ $RC -eq 0 ] && grep -qF -- "- partly judged: pdsvc: heap: insufficient baseline \(need 8\)" <<<"$OUT" &&
	! grep -qF "$clear" <<<"$OUT" &&
	ok "a post-deploy run's report gives the reasons its verdict is inconclusive" || not_ok "post-deploy md" "rc=$RC $OUT $ERR"
run pr report --run "$pd" --format json --out -
[ $RC -eq 0 ] && [ "$(jq -r '.partly_judged[0]' <<<"$OUT")" = "pdsvc: heap: insufficient baseline (need 8)" ] &&
	ok "and so does its JSON" || not_ok "post-deploy json" "rc=$RC $OUT"

# Everything judged, nothing found: the all-clear stays.
whole=$(sql "insert into runs (kind, status, finished_at, detail) values ('nightly', 'ok', now(),
	jsonb_build_object('analysed', 1, 'failed', 0, 'skipped', 0,
	'services', jsonb_build_object('pdsvc', jsonb_build_object('status', 'analysed')))) returning id")
run pr report --run "$whole" --format md --out -
[ $RC -eq 0 ] && grep -qF "$clear" <<<"$OUT" && ! grep -q 'partly judged' <<<"$OUT" &&
	ok "a run that judged everything and found nothing says nothing moved" || not_ok "md of a whole run" "rc=$RC $OUT"
finish
