#!/bin/bash
# End to end: a small simulated fleet with known regressions, ingested and
# analysed; regressions found, null services quiet, runs reproducible,
# findings never duplicated, thin baselines reported, evidence and
# regressed releases kept out of baselines; paging only with --page.
. "$(dirname "$0")/lib.sh"
fresh_db cli_analyze
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_analyze
rm -rf "$T" && mkdir -p "$T"

# service|function|direction for every finding in analyze --json output.
findings() {
	awk -F'"' '/^      "service": /{s=$4} /^      "function": /{f=$4}
		/^      "direction": /{print s "|" f "|" $4}' "$1"
}

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 8 --functions 60 --factors 2,1.5 \
	--bands 1-10,10-30 --regressed 0.5 --seed 11 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
run pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"
[ $RC -eq 0 ] && ok "the fleet ingests" || not_ok "fleet ingest" "$ERR"

run pr analyze --all-services --release "$rel" --at "$at" --json
echo "$OUT" >"$T/a1.json"
[ $RC -eq 0 ] && ok "analyze --all-services runs" || not_ok "analyze" "rc=$RC $ERR"
findings "$T/a1.json" >"$T/f1.txt"

# Every injected regression is found, as a regression of that function.
missed=0
while IFS= read -r line; do
	svc=$(sed 's/.*"service":"\([^"]*\)".*/\1/' <<<"$line")
	fn=$(sed 's/.*"function":"\([^"]*\)".*/\1/' <<<"$line")
	grep -qF "$svc|$fn|regression" "$T/f1.txt" || { missed=$((missed + 1)); echo "# missed $svc $fn"; }
done < <(grep '"regressed":true' "$T/fleet/truth.jsonl")
nreg=$(grep -c '"regressed":true' "$T/fleet/truth.jsonl")
[ "$missed" = 0 ] && [ "$nreg" -ge 3 ] && ok "every injected 1.5x and 2x regression is found ($nreg)" || not_ok "regressions missed: $missed"

# Null services raise no regression.
false=0
while read -r s; do
	grep -q "\"service\":\"$s\",\"regressed\":false" "$T/fleet/truth.jsonl" || continue
	if grep -q "^$s|.*|regression$" "$T/f1.txt"; then false=$((false + 1)); echo "# false finding in $s"; fi
done <"$T/fleet/services.txt"
[ "$false" = 0 ] && ok "null services raise no regression" || not_ok "false findings: $false"

n1=$(sql "select count(*) from findings")
run pr analyze --all-services --release "$rel" --at "$at" --json
echo "$OUT" >"$T/a2.json"
[ "$(sql "select count(*) from findings")" = "$n1" ] && ok "re-running the same analysis adds no finding" || not_ok "findings duplicated"
if diff <(grep -v '"run_id"\|"id"\|_seconds"' "$T/a1.json") <(grep -v '"run_id"\|"id"\|_seconds"' "$T/a2.json") >/dev/null; then
	ok "re-running with the same --at gives the same numbers"
else
	not_ok "re-run differs" "$(diff <(grep -v '"run_id"\|"id"\|_seconds"' "$T/a1.json") <(grep -v '"run_id"\|"id"\|_seconds"' "$T/a2.json") | head -8)"
fi
[ "$(sql "select count(*) from runs where kind='analyze' and status='ok'")" = 2 ] && ok "each run is recorded" || not_ok "run records"
# --wide gives the capture counts baseline first, as the reports do.
run pr analyze --all-services --release "$rel" --at "$at" --dry-run --wide
bc=$(jq -r '[.findings[] | select(.direction == "regression")][0]
	| "\(.baseline_captures)/\(.current_captures)"' "$T/a1.json")
[ $RC -eq 0 ] && [[ $OUT == *"CAPTURES B/C"* ]] && [[ $(grep -m 1 ' regression ' <<<"$OUT") == *" $bc" ]] &&
	[ "${bc%/*}" != "${bc#*/}" ] && ok "analyze --wide: captures baseline/current ($bc)" ||
	not_ok "analyze --wide captures" "$bc $OUT"

# --min-share is the floor under which a function is not tested at all.
tests_of() { grep -o '"tests": [0-9]*' "$1" | grep -o '[0-9]*$'; }
run pr analyze --all-services --release "$rel" --at "$at" --json --dry-run --min-share 2
echo "$OUT" >"$T/floor.json"
t_def=$(tests_of "$T/a1.json")
t_floor=$(tests_of "$T/floor.json")
[ $RC -le 1 ] && [ -n "$t_floor" ] && [ "$t_floor" -gt 0 ] && [ "$t_floor" -lt "$t_def" ] &&
	ok "--min-share 2 tests fewer functions ($t_floor of $t_def)" ||
	not_ok "min-share floor" "rc=$RC tests $t_floor of $t_def $ERR"
run pr analyze --all-services --release "$rel" --at "$at" --dry-run --min-share lots
[ $RC -eq 2 ] && [[ $ERR == *"min-share"* ]] && ok "a bad --min-share is a usage error" ||
	not_ok "bad min-share" "rc=$RC $ERR"

# Paging: an analysis by hand stores its findings but pages no one unless
# --page is given (a loose --fdr or a past --at must not wake on-call).
cat >"$T/page.json" <<EOF
{"paging": {"min_severity": "low", "max_attempts": 1, "backoff_ms": 10, "connect_timeout_ms": 500,
  "targets": {"pd": {"type": "pagerduty", "url": "http://127.0.0.1:9", "secret_env": "PROFREG_TEST_PD_KEY"}},
  "default": ["pd"]},
 "reports": {"base_url": "https://reports.example/profreg"}}
EOF
export PROFREG_TEST_PD_KEY=0123456789abcdef0123456789abcdef
run pr --config "$T/page.json" analyze --all-services --release "$rel" --at "$at" --fdr 0.5 --json
nf=$(grep -c '"direction": "regression"' <<<"$OUT")
[ $RC -eq 0 ] && [ "$nf" -gt 0 ] && [ "$(sql "select count(*) from pages")" = 0 ] && ok "analyze stores $nf regressions and enqueues no page without --page" || not_ok "analyze pages no one" "rc=$RC findings=$nf pages=$(sql "select count(*) from pages") $ERR"
run pr --config "$T/page.json" analyze --all-services --release "$rel" --at "$at" --page
[ $RC -eq 0 ] && [ "$(sql "select count(*) from pages")" -gt 0 ] && [[ $OUT == *"pages: "*" enqueued"* ]] && ok "analyze --page enqueues the pages (and tries to send them)" || not_ok "analyze --page" "rc=$RC pages=$(sql "select count(*) from pages") $OUT $ERR"
# Each page links to the run's report: written, so that the link leads somewhere.
link=$(sql "select detail ->> 'link' from pages order by id limit 1")
html=$(sed -n 's/^report: //p' <<<"$OUT")
[ -n "$html" ] && [ -f "$html" ] && [[ $link == "https://reports.example/profreg/$(basename "$html")#finding-"* ]] &&
	grep -q "id=\"${link##*#}\"" "$html" &&
	ok "analyze --page writes the run's report that its pages link to" || not_ok "page link" "link=$link html=$html $OUT"
# A blob store this runner cannot open costs the report, never the pages.
mkdir -p "$T/noblobs" && : >"$T/noblobs/blobs"
run "$PROFREG_BIN" --db "$DB" --home "$T/noblobs" --config "$T/page.json" analyze --all-services \
	--release "$rel" --at "$at" --page
[ $RC -eq 0 ] && [[ $ERR == *"no report and no incidents"* ]] && [[ $OUT == *"pages: "* ]] &&
	[[ $OUT != *"report: "* ]] &&
	ok "analyze --page without a usable blob store still pages, and says what it left out" ||
	not_ok "page without blobs" "rc=$RC $OUT $ERR"
run pr --config "$T/page.json" analyze --all-services --release "$rel" --at "$at" --page --dry-run
[ $RC -eq 2 ] && ok "--page with --dry-run is a usage error" || not_ok "page dry-run" "rc=$RC"
unset PROFREG_TEST_PD_KEY

[ "$(sql "select count(distinct capture_set) from baselines")" = "$(sql "select count(*) from baselines")" ] && ok "an unchanged baseline is stored once" || not_ok "baselines duplicated"
[ "$(sql "select count(*) from findings where direction='regression' and jsonb_array_length(detail->'captures'->'baseline') >= 8")" -gt 0 ] && ok "findings keep the captures they came from" || not_ok "finding detail"

# One new capture against a short baseline: the prediction test decides,
# and Mann-Whitney, which cannot reach significance there, does not veto.
svc1=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | grep '"factor":2' | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
fn1=$(grep "\"service\":\"$svc1\"" "$T/fleet/truth.jsonl" | sed 's/.*"function":"\([^"]*\)".*/\1/')
t1=$(sql "select to_char(min(captured_at) at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from profiles p join services s on s.id=p.service_id where s.name='$svc1' and release='$rel'")
run pr analyze --service "$svc1" --since "$t1" --until "$(date -u -d "$t1 + 1 second" +%Y-%m-%dT%H:%M:%SZ)" --window 5d --at "$at" --json --dry-run
[[ $OUT == *'"current_captures": 1'* ]] && [[ $OUT == *'"baseline_captures": 10'* ]] && findings <(echo "$OUT") | grep -qF "$svc1|$fn1|regression" && ok "one capture against ten finds a 2x regression" || not_ok "single capture" "$svc1 $fn1 $OUT"

run pr analyze --service "$svc1" --since "$t1" --until "$t1" --at "$at" --dry-run
[ $RC -eq 2 ] && [[ $ERR == *"'--until $t1' is not after '--since $t1'"* ]] &&
	ok "an empty or inverted --since/--until range is a usage error" || not_ok "inverted range" "rc=$RC $ERR"

# Too little history is reported, never guessed.
run pr analyze --all-services --release "$rel" --at "$at" --window 1d --json --dry-run
[[ $OUT == *'insufficient baseline'* ]] && [ "$(findings <(echo "$OUT") | wc -l)" = 0 ] && ok "a thin baseline is reported as insufficient" || not_ok "insufficient" "$OUT"

# A release with an open regression is not baseline for the next one.
svc=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
before=$(sql "select captures from baselines b join services s on s.id=b.service_id where s.name='$svc' order by b.id desc limit 1")
printf 'main;x 10\n' >"$T/next.folded"
pr --quiet ingest "$T/next.folded" --service "$svc" --release next --time "$at"
run pr analyze --service "$svc" --release next --at "$at" --window 30d --json --dry-run
used=$(sed -n 's/^ *"baseline_captures": \([0-9]*\).*/\1/p' <<<"$OUT" | head -n 1)
cur=$(sql "select count(*) from profiles p join services s on s.id=p.service_id where s.name='$svc' and release='$rel'")
total=$(sql "select count(*) from profiles p join services s on s.id=p.service_id where s.name='$svc' and release<>'next'")
[ -n "$used" ] && [ "$used" = $((total - cur)) ] && ok "captures of a release with an open regression are not baseline" || not_ok "open regression excluded" "used=$used total=$total cur=$cur before=$before"

# Incident captures are not baseline either.
sql "update profiles set tags = tags || '{\"incident\":\"INC-1\"}' where id in (select p.id from profiles p join services s on s.id=p.service_id where s.name='$svc' and release<>'$rel' and release<>'next' order by captured_at limit 3)" >/dev/null
run pr analyze --service "$svc" --release next --at "$at" --window 30d --json --dry-run
used2=$(sed -n 's/^ *"baseline_captures": \([0-9]*\).*/\1/p' <<<"$OUT" | head -n 1)
[ -n "$used2" ] && [ "$used2" = $((used - 3)) ] && ok "incident captures are not baseline" || not_ok "incident excluded" "used2=$used2 used=$used"

run pr baseline show --service svc-000 --at "$at" --json
[ $RC -eq 0 ] && [[ $OUT =~ '"captures": '[1-9][0-9] ]] && [[ $OUT == *'"mean_share"'* ]] && ok "baseline show summarises the window" || not_ok "baseline show" "rc=$RC $ERR"
run pr baseline show --service svc-000 --at "$at"
[ $RC -eq 0 ] && [[ $OUT != *nan* ]] && [[ $OUT == *RATE* ]] &&
	ok "baseline show prints no nan for the rate folded captures do not have" ||
	not_ok "baseline show nan" "$(grep -m1 nan <<<"$OUT")"
run pr baseline show --service svc-000 --at "$at" --window 1d
[[ $ERR == *"insufficient baseline"* ]] && ok "baseline show warns about a thin window" || not_ok "baseline show thin" "$ERR"

# Something got cheaper: the other functions' shares rise, their absolute
# rates do not. That is a relative shift, never a regression.
fresh_db cli_analyze_shift
pr --quiet db init
"$BUILD/sim/fleetgen" --out "$T/shift" --services 6 --functions 60 --regressed 0 --improved 1 \
	--improve-factors 0.5 --seed 12 >"$T/shift.txt"
at2=$(sed -n 's/^at: //p' "$T/shift.txt")
rel2=$(sed -n 's/^release: //p' "$T/shift.txt")
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/shift/services.txt"
pr --quiet ingest --manifest "$T/shift/manifest.jsonl"
run pr analyze --all-services --release "$rel2" --at "$at2" --json --dry-run
echo "$OUT" >"$T/shift.json"
findings "$T/shift.json" >"$T/shift.txt.f"
nreg=$(grep -c '|regression$' "$T/shift.txt.f")
nshift=$(grep -c '|relative_shift$' "$T/shift.txt.f")
nimp=$(grep -c '|improvement$' "$T/shift.txt.f")
[ "$nreg" = 0 ] && [ "$nshift" -gt 0 ] && [ "$nimp" -gt 0 ] && ok "a cheaper function makes relative shifts and an improvement, no regression ($nshift shifts, $nimp improvements)" || not_ok "relative shift guard" "regressions=$nreg shifts=$nshift improvements=$nimp"

run pr analyze --service nosuch --release "$rel"
[ $RC -eq 4 ] && ok "analyzing an unknown service is exit 4" || not_ok "unknown service" "rc=$RC"
run pr analyze --all-services
[ $RC -eq 2 ] && ok "analyze without a selection is a usage error" || not_ok "usage" "rc=$RC"

# One release name for every deploy: the skip says why there is no baseline.
pr --quiet service add samename --enable
for d in 01 02 03 04 05 06 07 08 09 10; do
	printf 'main;f %d\nmain;g 5\n' "$((10#$d + 10))" >"$T/same-$d.folded"
	pr --quiet ingest "$T/same-$d.folded" --service samename --release prod \
		--time "2026-01-${d}T10:00:00Z"
done
run pr analyze --service samename --release prod --at 2026-01-11T00:00:00Z --dry-run
[ $RC -eq 0 ] && [[ $OUT == *"insufficient baseline: 0 eligible cpu captures"* ]] &&
	[[ $OUT == *"the release alone has 10 captures from then on: the baseline is earlier"* ]] &&
	[[ $OUT == *"as for a service's first release"* ]] && [[ $OUT == *"every deploy reuses"* ]] &&
	ok "no earlier release: the skip names a first release and a reused name as the reasons" ||
	not_ok "reused release name" "rc=$RC $OUT $ERR"
run pr analyze --service samename --release prod --at 2026-01-03T00:00:00Z --dry-run
[[ $OUT == *"insufficient baseline: 0 eligible"* ]] && [[ $OUT != *"the release alone"* ]] &&
	ok "a young release without a baseline gets no such hint" || not_ok "young release" "$OUT"
# A new release after a thin baseline of another: not a reused name.
pr --quiet service add thin --enable
for d in 01 02 03 04 05 06 07 08 09 10 11 12; do
	printf 'main;f %d\nmain;g 5\n' "$((10#$d + 10))" >"$T/thin-$d.folded"
	pr --quiet ingest "$T/thin-$d.folded" --service thin --release "$([ $d -le 03 ] && echo v1 || echo v2)" \
		--time "2026-01-${d}T10:00:00Z"
done
run pr analyze --service thin --release v2 --at 2026-01-13T00:00:00Z --dry-run
[ $RC -eq 0 ] && [[ $OUT == *"insufficient baseline: 3 eligible"* ]] && [[ $OUT != *"the release alone"* ]] &&
	ok "a new release after a thin baseline is not said to reuse its name" || not_ok "thin baseline hint" "$OUT"

# A release rolled back to is not one name reused by every deploy: the
# skip names the release that ran among its captures.
pr --quiet service add rolled --enable
for d in 01 02 03 04 05 06 07 08 09 10; do
	r=v1
	case $d in 06 | 07) r=v2 ;; esac
	printf 'main;f %d\nmain;g 5\n' "$((10#$d + 10))" >"$T/rolled-$d.folded"
	pr --quiet ingest "$T/rolled-$d.folded" --service rolled --release $r \
		--time "2026-01-${d}T10:00:00Z"
done
run pr analyze --service rolled --release v1 --at 2026-01-11T00:00:00Z --dry-run
[ $RC -eq 0 ] && [[ $OUT == *"insufficient baseline: 0 eligible cpu captures"* ]] &&
	[[ $OUT == *"release 'v2' ran among its captures (a rollback"* ]] &&
	[[ $OUT != *"every deploy reuses"* ]] &&
	ok "a release rolled back to names the release between, not a reused name" ||
	not_ok "rollback" "rc=$RC $OUT $ERR"

# A method renamed by the release, and twice as costly: one regression, under its new name.
pr --quiet service add renamer --enable
for i in $(seq 0 31); do
	rel=v1 name=parseKey cost=$((400 + (i * 37) % 40))
	if [ "$i" -ge 28 ]; then rel=v2 name=parseCacheKey cost=$((cost * 2)); fi
	printf 'main;Cache.%s %d\nmain;Cache.put %d\nmain;Server.serve %d\n' \
		"$name" "$cost" "$((3000 + (i * 53) % 90))" "$((6000 + (i * 71) % 120))" \
		>"$T/ren-$i.folded"
	day=$((1 + i / 2))
	[ "$i" -ge 28 ] && day=16
	pr --quiet ingest "$T/ren-$i.folded" --service renamer --release $rel \
		--time "$(printf '2026-02-%02dT%02d:00:00Z' "$day" $((2 + i % 2 * 10 + i % 4)))"
done
run pr analyze --service renamer --release v2 --at 2026-02-17T00:00:00Z --json --dry-run
[ "$(jq -r '[.findings[] | .function + "|" + (.renamed_from // "-") + "|" + .direction]
	| join(",")' <<<"$OUT")" = "Cache.parseCacheKey|Cache.parseKey|regression" ] &&
	ok "a renamed and slower method is one regression that names its old name" ||
	not_ok "renamed method" "$OUT $ERR"
run pr analyze --service renamer --release v2 --at 2026-02-17T00:00:00Z --dry-run
[[ $OUT == *"renamed: Cache.parseCacheKey was Cache.parseKey"* ]] &&
	ok "the text output says what the function was called" || not_ok "renamed text" "$OUT"
pr --quiet analyze --service renamer --release v2 --at 2026-02-17T00:00:00Z
fid=$(sql "select id from findings f where f.function = 'Cache.parseCacheKey'")
run pr report --finding "$fid" --format json --out -
base=$(jq -r '[.findings[0].history[] | select(.current == false) | .share] | min' <<<"$OUT")
[ -n "$fid" ] && [ "$(jq -r '.findings[0].renamed_from' <<<"$OUT")" = Cache.parseKey ] &&
	awk -v b="$base" 'BEGIN { exit !(b > 0.03) }' &&
	ok "a renamed finding's report draws its baseline from the old name" ||
	not_ok "renamed report" "fid=$fid base=$base $OUT $ERR"

run pr analyze --help
[ $RC -eq 0 ] && [[ $OUT == *"--page"* ]] && ok "analyze --help (names --page)" || not_ok "analyze --help"
finish
