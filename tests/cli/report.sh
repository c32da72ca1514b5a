#!/bin/bash
# Reports, diff and export from the command line: a known regression in a
# small service with a hostile frame name, reported as HTML, Markdown and
# JSON; diff of two releases; exports that round-trip through ingest.
. "$(dirname "$0")/lib.sh"
fresh_db cli_report
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_report
rm -rf "$T" && mkdir -p "$T"

pr --quiet service add web && pr --quiet service enable web
while read -r f rel at; do
	pr --quiet ingest "$f" --service web --release "$rel" --time "$at" --host "h-$rel" --type cpu --commit 0123abcd
done < <(bash "$PROFREG_TEST_DATA/reports/web.sh" "$T/caps")

run pr analyze --service web --release v2 --at 2026-03-11T00:00:00Z --min-captures 5
run_id=$(sql "select max(id) from runs where kind = 'analyze'")
fid=$(sql "select id from findings where function = 'checkout.computeTax' and direction = 'regression'")
[ -n "$fid" ] && ok "the known regression is found (finding $fid, run $run_id)" || not_ok "analyze" "$OUT $ERR"

run pr report --run "$run_id"
inst=$(sql "select left(replace(id::text, '-', ''), 8) from instance")
html=$HOME_DIR/reports/run-$run_id-$inst.html
[ $RC -eq 0 ] && [ "$OUT" = "$html" ] && [ -s "$html" ] && ok "report --run writes run-ID-INSTANCE.html in the reports directory and prints its path" || not_ok "report --run" "rc=$RC out=$OUT $ERR"
[ -s "${html%.html}.md" ] && [ -s "${html%.html}.json" ] && ok "beside it run-ID.md and run-ID.json, as nightly writes them" || not_ok "md and json beside"
grep -q "id=\"finding-$fid\"" "$html" && ok "each finding's section has the anchor #finding-ID" || not_ok "anchor"
grep -q '<th>judged at</th><td>2026-03-11T00:00:00Z' "$html" &&
	grep -q '"judged_at": "2026-03-11T00:00:00Z"' "${html%.html}.json" &&
	grep -q 'judged at 2026-03-11T00:00:00Z' "${html%.html}.md" &&
	ok "the report says the time the run judged at (--at), not only when it ran" ||
	not_ok "judged at" "$(grep -o '<th>judged.\{0,60\}' "$html")"
grep -q '<svg class="flame"' "$html" && grep -q 'data-name="checkout.computeTax"' "$html" && ok "the report draws a differential flame graph with the regressed frame" || not_ok "flame graph"
grep -q '<svg class="spark"' "$html" && grep -q 'class="band"' "$html" && ok "the report draws the function's history with the baseline band" || not_ok "sparkline"
! grep -q '<script>alert' "$html" && grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$html" && ok "a hostile function name is escaped in the HTML" || not_ok "html escaping"
! grep -Eq '(src|href)="(https?:)?//' "$html" && ok "the HTML fetches nothing from the network" || not_ok "self-contained"
key=$(sql "select blob_key from profiles where release = 'v2' order by id limit 1")
grep -q "$key" "$html" && grep -q "profreg finding show $fid" "$html" && ok "the report lists the pinned captures' blob keys and how to reproduce" || not_ok "evidence"
# The regressed frame carries the largest growth.
top=$(grep -o 'data-name="[^"]*" data-delta="[^"]*"' "$html" | sed 's/data-name="\([^"]*\)" data-delta="\(.*\)"/\2 \1/' | sort -g -r | head -n 1)
[ "${top#* }" = checkout.computeTax ] && ok "the regressed frame has the largest share growth" || not_ok "reddest" "$top"

run pr report --run "$run_id" --format md --out -
[ $RC -eq 0 ] && grep -q '| checkout.computeTax |' <<<"$OUT" && grep -q 'web | \\<script\\>alert' <<<"$OUT" && ! grep -q '[^\\]<' <<<"$OUT" && ok "Markdown: the findings table, no raw HTML" || not_ok "md" "$OUT"
run pr report --run "$run_id" --out "$T/r.json"
[ $RC -eq 0 ] && grep -q '"schema_version": 1' "$T/r.json" && grep -q '"function": "checkout.computeTax"' "$T/r.json" && ok "JSON (chosen by the .json extension) has a schema_version and the findings" || not_ok "json" "$ERR"
# The report's finding is the one finding schema, plus what only the report knows.
run pr report --run "$run_id" --format json --out -
# Numbers compared to 8 significant digits: the report prints them with more.
digits='walk(if type == "number" and . != floor then tostring | .[0:9] else . end)'
rep=$(jq -S -c --argjson id "$fid" '.findings[] | select(.id == $id) | del(.status, .release, .commit,
	.captures, .history, .band, .suspects, .suspect_note, .flame, .flame_note, .flame_same_as,
	.fixed_by, .incident_lead, .baseline_captures_deleted, .current_captures_deleted,
	.captures_note) | '"$digits" <<<"$OUT")
run pr finding show "$fid" --json
show=$(jq -S -c 'del(.status, .reproduced, .not_reproduced, .captures_left) | '"$digits" <<<"$OUT")
[ -n "$rep" ] && [ "$rep" = "$show" ] && [[ $rep == *'"schema_version":2'* ]] &&
	ok "the report's finding is the same object finding show prints" || not_ok "one finding schema" "$rep / $show"
run pr report --finding "$fid" --out "$T/f.html"
[ $RC -eq 0 ] && grep -q "id=\"finding-$fid\"" "$T/f.html" && ok "report --finding" || not_ok "report --finding" "$ERR"
run pr report --service web --release v2 --format md --out -
[ $RC -eq 0 ] && grep -q 'checkout.computeTax' <<<"$OUT" && ok "report --service --release" || not_ok "report release" "$ERR"
# v1 was never judged (it is the baseline): no report may say nothing moved in it.
run pr report --service web --release v1 --format md --out -
[ $RC -eq 0 ] && grep -q 'no run has judged it' <<<"$OUT" &&
	! grep -q 'self share moved beyond the margin' <<<"$OUT" &&
	ok "Markdown of a release never analysed says so, not that nothing moved" ||
	not_ok "md of a release never analysed" "$OUT"
run pr report --service web --release v1 --out "$T/v1.html"
[ $RC -eq 0 ] && grep -q 'no run has judged it' "$T/v1.html" &&
	! grep -q 'self share moved beyond the margin' "$T/v1.html" &&
	ok "so does its HTML" || not_ok "html of a release never analysed" "$ERR"
run pr report --service web --release v22 --out "$T/v22.html"
[ $RC -eq 4 ] && [[ $ERR == *"service 'web' has no release 'v22' (did you mean 'v2'?)" ]] && [ ! -e "$T/v22.html" ] &&
	ok "a release the service never had is exit 4, named with the close one" || not_ok "unknown release" "rc=$RC $ERR"
run pr report --service web --release '' --out "$T/empty.html"
[ $RC -eq 2 ] && [ ! -e "$T/empty.html" ] && ok "an empty --release is a usage error" || not_ok "empty release" "rc=$RC $ERR"
printf 'main;slash 1\n' >"$T/slash.folded"
printf 'main;under 1\n' >"$T/under.folded"
pr --quiet ingest "$T/slash.folded" --service web --release a/b --time 2026-03-12T00:00:00Z --type cpu
pr --quiet ingest "$T/under.folded" --service web --release a_b --time 2026-03-12T00:00:00Z --type cpu
run pr report --service web --release a/b --format md
slash=$OUT
run pr report --service web --release a_b --format md
[ $RC -eq 0 ] && [[ $slash == */release-web-a~2Fb-*.md ]] && [[ $OUT == */release-web-a_b-*.md ]] &&
	[ -s "$slash" ] && [ -s "$OUT" ] && ok "releases 'a/b' and 'a_b' get a report file each" ||
	not_ok "release file names" "$slash" "$OUT" "$ERR"
run pr report --finding 99999
[ $RC -eq 4 ] && grep -q 'finding 99999 not found' <<<"$ERR" && ok "an unknown finding is exit 4 with a reason" || not_ok "unknown finding" "rc=$RC $ERR"
run pr report --run 1 --finding 1
[ $RC -eq 2 ] && ok "two modes at once is a usage error" || not_ok "usage" "rc=$RC"
run pr report --run "$run_id" --format pdf
[ $RC -eq 2 ] && ok "an unknown format is a usage error" || not_ok "format" "rc=$RC"

run pr diff --base 'service=web,release=v1' --target 'service=web,release=v2' --out "$T/diff.html"
[ $RC -eq 0 ] && [ -s "$T/diff.html" ] && grep -q '<svg class="flame"' "$T/diff.html" && ok "diff writes the differential flame graph" || not_ok "diff" "rc=$RC $ERR"
grep -A3 '<td class="num">1</td>' "$T/diff.html" | grep -q 'checkout.computeTax' && grep -q 'regression' "$T/diff.html" && ok "diff ranks the regressed function first, with the analysis' verdict" || not_ok "diff table"
! grep -q '<script>alert' "$T/diff.html" && ok "diff escapes hostile names" || not_ok "diff escaping"
ids=$(sql "select string_agg(id::text, ',' order by id) from profiles where release = 'v1'")
run pr diff --base "id=$ids" --target 'service=web,commit=0123,release=v2' --out - --format json
[ $RC -eq 0 ] && grep -q '"base_captures": 10' <<<"$OUT" && grep -q '"target_captures": 3' <<<"$OUT" && ok "diff selects by capture ids and by commit" || not_ok "diff ids" "$ERR"
# Captures on both sides cannot be tested against themselves: the note says
# so, not that the baseline (10 captures) is too thin.
one=$(sql "select max(id) from profiles where release = 'v1'")
for tgt in 'service=web,release=v1' "id=$one"; do
	run pr diff --base 'service=web,release=v1' --target "$tgt" --out - --format json
	[ $RC -eq 0 ] && [[ $(jq -r .note <<<"$OUT") == "Shares only: "*" on both sides, and no test can compare a capture with itself." ]] &&
		ok "diff of overlapping sides ($tgt) says they overlap" || not_ok "diff overlap $tgt" "rc=$RC $ERR" "$(jq -r .note <<<"$OUT")"
done
run pr diff --base 'service=web,release=v1' --target 'service=web,release=v2' --host h-v1 --out /dev/null
[ $RC -eq 4 ] && grep -q 'matches no capture' <<<"$ERR" && ok "a selection that matches nothing is exit 4 with a reason" || not_ok "diff empty" "rc=$RC $ERR"
run pr diff --base 'service=web,release=v1' --target 'service=web,release=v22,host=h-v2-web-frontend'
[ $RC -eq 4 ] && [[ $ERR == *"'service=web,release=v22,host=h-v2-web-frontend' matches no capture:"* ]] &&
	[[ $ERR == *"service 'web' has no release 'v22' (did you mean 'v2'?)"* ]] && [[ $ERR != *"type="* ]] &&
	ok "a mistyped release in a selection is named, with the close one, the selection whole" ||
	not_ok "diff release typo" "rc=$RC $ERR"
for c in "host=nohost|: none on host 'nohost'" "commit=ffff|: none with commit 'ffff'" \
	"since=2026-03-10T00:00:00Z,until=2026-03-01T00:00:00Z|: since 2026-03-10T00:00:00Z is not before until 2026-03-01T00:00:00Z" \
	"type=heap|: none of type 'heap'" "since=2030-01-01T00:00:00Z|: none in the time range (since 2030-01-01T00:00:00Z, until any)"; do
	run pr diff --base 'service=web,release=v1' --target "service=web,release=v2,${c%%|*}" --out "$T/e.html"
	[ $RC -eq 4 ] && [[ $ERR == *"matches no capture${c#*|}" ]] && [[ $ERR != *"add type="* ]] &&
		ok "an empty selection names what emptied it (${c%%|*})" || not_ok "emptied by ${c%%|*}" "rc=$RC $ERR"
done
# The epoch is a time like any other, not "no bound".
run pr profiles list --service web --until 1970-01-01T00:00:00Z --json
[ $RC -eq 0 ] && [ "$(jq '.captures | length' <<<"$OUT")" = 0 ] &&
	ok "profiles list --until the epoch lists nothing" || not_ok "epoch profiles" "rc=$RC $ERR $(head -c 200 <<<"$OUT")"
run pr export 'service=web,release=v1,until=1970-01-01T00:00:00Z' --format folded --out "$T/epoch.folded"
[ $RC -eq 4 ] && [[ $ERR == *"none in the time range (since any, until 1970-01-01T00:00:00Z)"* ]] &&
	ok "a selection until the epoch matches nothing" || not_ok "epoch selection" "rc=$RC $ERR"
run pr diff --base 'service=web,relase=v1' --target 'service=web'
[ $RC -eq 2 ] && grep -q "unknown key 'relase'" <<<"$ERR" && ok "a bad selection is a usage error naming the key" || not_ok "diff bad selection" "rc=$RC $ERR"

# A capture the flame graph cannot read: the JSON says why, as the HTML does.
k=$(sql "select blob_key from profiles where release = 'v2' order by id limit 1")
bf="$HOME_DIR/blobs/sha256/${k:0:2}/${k:2}.zst"
mv "$bf" "$T/held.zst"
run pr report --finding "$fid" --format json --out -
note=$(jq -r '.findings[0].flame_note // ""' <<<"$OUT")
[ $RC -eq 0 ] && [ "$(jq -c '.findings[0].flame' <<<"$OUT")" = null ] && [[ $note == "No flame graph: "* ]] &&
	ok "a flame graph that could not be read is null in the JSON, with the reason ($note)" ||
	not_ok "flame note in JSON" "rc=$RC note=$note $ERR"
mv "$T/held.zst" "$bf"
run pr report --finding "$fid" --format json --out -
[ $RC -eq 0 ] && [ "$(jq -c '.findings[0].flame_note' <<<"$OUT")" = null ] &&
	[ "$(jq '.findings[0].flame | length' <<<"$OUT")" -gt 0 ] &&
	ok "with the capture back, the graph and no note" || not_ok "flame back" "rc=$RC"

# Export, then ingest again: the same per-function self values.
pr --quiet service add back && pr --quiet service enable back
cid=$(sql "select id from profiles where release = 'v2' order by id limit 1")
want=$(sql "select string_agg(f.name || '=' || pf.self_value, ' ' order by f.name) from profile_functions pf join functions f on f.id = pf.function_id where pf.profile_id = $cid and pf.self_value > 0")
for fmt in folded pprof; do
	run pr export "$cid" --format $fmt --out "$T/e.$fmt"
	[ $RC -eq 0 ] || not_ok "export $fmt" "$ERR"
	run pr ingest "$T/e.$fmt" --service back --release "$fmt" --type cpu --time 2026-03-10T00:00:00Z --json
	nid=$(sql "select id from profiles where service_id = (select id from services where name = 'back') and release = '$fmt'")
	got=$(sql "select string_agg(f.name || '=' || pf.self_value, ' ' order by f.name) from profile_functions pf join functions f on f.id = pf.function_id where pf.profile_id = $nid and pf.self_value > 0")
	[ -n "$want" ] && [ "$got" = "$want" ] && ok "export $fmt then ingest gives the same per-function self values" || not_ok "round trip $fmt" "want=$want" "got=$got"
done
run pr export 'service=web,release=v2' --format speedscope --out "$T/e.speedscope.json"
[ $RC -eq 0 ] && grep -q '"type":"sampled"' "$T/e.speedscope.json" && grep -q 'speedscope.app/file-format-schema.json' "$T/e.speedscope.json" && ok "export speedscope of a merged selection" || not_ok "speedscope" "$ERR"
run pr export 'service=web,release=v2' --format folded --out -
total=$(awk '{s += $NF} END {print s}' <<<"$OUT")
[ "$total" = "$(sql "select sum(total_value) from profiles where release = 'v2' and service_id = (select id from services where name = 'web')")" ] && ok "a merged export holds every capture's samples" || not_ok "merged total" "$total"
if command -v go >/dev/null 2>&1; then
	run env HOME="$T" GOFLAGS=-mod=mod timeout 120 go tool pprof -top "$T/e.pprof"
	[ $RC -eq 0 ] && grep -q 'checkout.computeTax' <<<"$OUT" && ok "go tool pprof reads the pprof export" || not_ok "go tool pprof" "$ERR"
fi
run pr export 99999
[ $RC -eq 4 ] && ok "exporting a missing capture is exit 4" || not_ok "export missing" "rc=$RC"
run pr export 1 --format svg
[ $RC -eq 2 ] && ok "an unknown export format is a usage error" || not_ok "export format" "rc=$RC"
finish
