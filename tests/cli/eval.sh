#!/bin/bash
# The scorer behind `make eval` (tests/eval/eval): exact counts on a tiny
# hand-made truth and findings pair (true and false findings, misses, a
# relative shift, skipped services, tests that were not significant), the
# naive rule on a tiny database filled through `profreg ingest` (window,
# floor, functions rising from zero), the JSON summary, and clear errors
# for broken inputs.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
E=${BUILD:-build}/eval/eval
T=$PROFREG_TEST_TMP/cli_eval
rm -rf "$T" && mkdir -p "$T"

if [ ! -x "$E" ]; then
	not_ok "the scorer is built" "missing $E (make $E)"
	finish
	exit 1
fi
ok "the scorer is built"

# --- scoring findings against the truth -----------------------------------
# r1 regressed (2x, 1-10%) and is found, plus one false finding beside it;
# r2 regressed (1.1x) and was called a relative shift: a miss; r3 regressed
# but analyze skipped it: a miss. n1..n3 are null: n1 has two false
# findings, n2 an improvement, n3 was skipped and its one test was not
# significant (as --all-tests lists it), so it is neither found nor a
# null service-night.
cat >"$T/truth.jsonl" <<'EOF'
{"service":"r1","regressed":true,"function":"pay.(*Book).Post","factor":2,"baseline_share":0.05,"current_share":0.095,"band":"1-10%","current_release":"v3","at":"2026-01-16T00:00:00Z"}
{"service":"r2","regressed":true,"function":"g.slow","factor":1.1,"baseline_share":0.005,"current_share":0.0055,"band":"0.1-1%","current_release":"v3","at":"2026-01-16T00:00:00Z"}
{"service":"r3","regressed":true,"function":"h","factor":2,"baseline_share":0.004,"current_share":0.008,"band":"0.1-1%","current_release":"v3","at":"2026-01-16T00:00:00Z"}
{"service":"n1","regressed":false,"function":null,"factor":null,"baseline_share":null,"current_share":null,"band":null,"current_release":"v3","at":"2026-01-16T00:00:00Z"}
{"service":"n2","regressed":false,"function":null,"factor":null,"baseline_share":null,"current_share":null,"band":null,"current_release":"v3","at":"2026-01-16T00:00:00Z"}
{"service":"n3","regressed":false,"function":null,"factor":null,"baseline_share":null,"current_share":null,"band":null,"current_release":"v3","at":"2026-01-16T00:00:00Z"}
EOF

# finding SERVICE FUNCTION DIRECTION [EXTRA]: one finding with every key.
finding() {
	printf '{"service":"%s","type":"cpu","function":"%s","file":"","direction":"%s",' "$1" "$2" "$3"
	printf '"baseline_share":0.05,"current_share":0.1,"delta":0.05,"rel_delta":1,'
	printf '"ci_low":0.04,"ci_high":0.06,"p_value":1e-9,"q_value":1e-7,"score":4,'
	printf '"severity":"high","baseline_captures":28,"current_captures":4,'
	printf '"current_release":"v3","baseline_releases":["v1","v2"]%s}' "${4:-}"
}
findings() { # FINDING... ; the insufficient list comes from $INSUFFICIENT
	local sep=""
	printf '{"services":6,"findings":['
	for f in "$@"; do
		printf '%s%s' "$sep" "$f"
		sep=","
	done
	printf '],"insufficient":[%s]}\n' "${INSUFFICIENT-}"
}
INSUFFICIENT='{"service":"r3","type":"cpu","reason":"too few"},{"service":"n3","type":"cpu","reason":"too few"}'
findings "$(finding r1 'pay.(*Book).Post' regression)" \
	"$(finding r1 other.fn regression)" \
	"$(finding r2 g.slow relative_shift)" \
	"$(finding n1 x regression)" \
	"$(finding n1 y regression)" \
	"$(finding n2 z improvement)" \
	"$(finding n3 w regression ',"significant":false')" \
	"$(finding n2 heapy regression | sed 's/"type":"cpu"/"type":"heap"/')" >"$T/findings.json"

run "$E" --truth "$T/truth.jsonl" --findings "$T/findings.json" --label tiny --setting "4 current" --list 5
[ $RC -eq 0 ] && ok "the scorer runs without a database" || not_ok "scorer runs" "rc=$RC $ERR"
line() { grep -F -- "$1" <<<"$OUT" | head -n 1 | tr -s ' '; }
[ "$(line '  1-10%')" = " 1-10% - 1/1 (100%) 1/1 (100%)" ] &&
	ok "recall cell: the found 2x regression is 1/1" || not_ok "recall 1-10%" "$(line '  1-10%')"
[ "$(line '  0.1-1%')" = " 0.1-1% 0/1 (0%) 0/1 (0%) 0/2 (0%)" ] &&
	ok "recall cells: the relative shift and the skipped service are misses" ||
	not_ok "recall 0.1-1%" "$(line '  0.1-1%')"
[ "$(line '  all   ')" = " all 0/1 (0%) 1/2 (50%) 1/3 (33%)" ] &&
	ok "recall totals per factor and overall" || not_ok "recall all" "$(line '  all   ')"
[ "$(line 'null service-nights')" = " null service-nights 2 - -" ] &&
	ok "skipped null services are not null service-nights" || not_ok "null nights" "$(line 'null service-nights')"
[ "$(line 'false findings on null')" = " false findings on null services 2 - -" ] &&
	ok "false findings on null services" || not_ok "false on null" "$(line 'false findings on null')"
[ "$(line 'per 1,000')" = " per 1,000 null service-nights 1000.0 - -" ] &&
	ok "false findings per 1,000 null service-nights" || not_ok "per 1000" "$(line 'per 1,000')"
[ "$(line '95% upper bound')" = " 95% upper bound per 1,000 3147.9 - -" ] &&
	ok "the 95% upper bound of the false-finding rate (2 events in 2 nights)" ||
	not_ok "upper bound" "$(line '95% upper bound')"
[ "$(line 'null service-nights <= 1')" = " false findings per 1,000 null service-nights <= 1 1000.0 NOT met" ] &&
	[ "$(line 'recall 100% at')" = " recall 100% at >= 1.5x for a 1-10% share 1/1 met" ] &&
	[ "$(line 'precision >= 98%')" = " precision >= 98% 25.0% NOT met" ] &&
	ok "issue 3's targets are checked" || not_ok "targets" "$OUT"
[ "$(line 'null services with')" = " null services with >= 1 false finding 1 - -" ] &&
	ok "null services with a false finding" || not_ok "null with false" "$(line 'null services with')"
[ "$(line 'false findings in regressed')" = " false findings in regressed services 1 - -" ] &&
	ok "false findings beside a real regression" || not_ok "false in regressed" "$(line 'false findings in regressed')"
[ "$(line 'precision (true')" = " precision (true / all) 25.0% - -" ] &&
	ok "precision: 1 true of 4 regression findings" || not_ok "precision" "$(line 'precision (true')"
[[ $OUT == *"1 relative_shift (0 on null services), 1 improvement"* ]] &&
	[[ $OUT == *"regressed functions called relative_shift: 1"* ]] &&
	ok "relative shifts and improvements are counted apart" || not_ok "other directions" "$OUT"
[[ $OUT == *"(1 non-significant tests ignored)"* ]] &&
	ok "tests marked not significant are ignored" || not_ok "not significant" "$OUT"
[[ $OUT == *"(1 findings of types other than cpu ignored)"* ]] &&
	ok "findings of another profile type are ignored" || not_ok "other type" "$OUT"
[[ $OUT == *"naive +10% rule: not computed (no --db)"* ]] &&
	ok "without --db the naive rule is marked not computed" || not_ok "naive without db" "$OUT"
sm=$(sed -n '/^== smallest factor/,/^== false/p' <<<"$OUT" | grep -A4 'profreg analyze' | tr -s ' ')
[[ $sm == *" 0.1-1% none"* ]] && [[ $sm == *" 1-10% 2x"* ]] &&
	ok "smallest factor with 80% recall per band" || not_ok "smallest factor" "$sm"
[[ $OUT == *"false regression findings of profreg analyze: 3 =="* ]] &&
	[ "$(sed -n '/^== false regression/,/^== regressions/p' <<<"$OUT" | grep -cE '^  tiny +(r1|n1) ')" = 3 ] &&
	ok "the false findings are listed" || not_ok "false list" "$OUT"
[[ $OUT == *"regressions profreg analyze missed: 2 =="* ]] &&
	[[ $OUT == *"skipped: too little data"* ]] && [[ $OUT == *"reported as relative_shift"* ]] &&
	ok "the misses are listed with their reason" || not_ok "miss list" "$OUT"

# A miss whose test did not pass (--all-tests lists it) shows that test's
# look, p, sequential p, q and Mann-Whitney p: why it was missed.
head -n 1 "$T/truth.jsonl" >"$T/truth_miss.jsonl"
INSUFFICIENT='' findings "$(finding r1 'pay.(*Book).Post' regression \
	',"significant":false,"look":2,"p_seq":0.0123,"mw_p":0.0456' |
	sed 's/"p_value":1e-9,"q_value":1e-7/"p_value":0.00321,"q_value":0.234/')" >"$T/miss.json"
run "$E" --truth "$T/truth_miss.jsonl" --findings "$T/miss.json" --label tiny --list 5
miss=$(sed -n '/^== regressions profreg analyze missed: 1 ==/,$p' <<<"$OUT" | grep -E '^  tiny +r1 ')
[[ $miss == *"look 2 p 0.0032 p_seq 0.012 q 0.23 mw 0.046"* ]] &&
	ok "a miss shows its test's p and q" || not_ok "miss p and q" "rc=$RC $OUT"

# A hostile name is listed escaped: no raw control byte reaches the terminal.
findings "$(finding n1 'evil\u001b[2J\u0007name' regression)" >"$T/hostile.json"
run "$E" --truth "$T/truth.jsonl" --findings "$T/hostile.json"
[ $RC -eq 0 ] && [[ $OUT == *'evil\x1b[2J\x07name'* ]] && ! grep -q $'[\x01-\x08\x0b-\x1f]' <<<"$OUT" &&
	ok "control characters in names are escaped in the lists" || not_ok "hostile name" "rc=$RC $ERR"

# Nights of one fleet (--sequence): a false finding reported on two nights
# counts once; every night of every judged null service is a null
# service-night; a true finding counts once, on its first night.
findings "$(finding r1 'pay.(*Book).Post' regression)" "$(finding n1 x regression)" >"$T/night1.json"
findings "$(finding r1 'pay.(*Book).Post' regression)" "$(finding n1 x regression)" \
	"$(finding n2 y regression)" >"$T/night2.json"
run "$E" --truth "$T/truth.jsonl" --findings "$T/night1.json" --label s.n1 --setting "night 1" \
	--sequence s --truth "$T/truth.jsonl" --findings "$T/night2.json" --label s.n2 \
	--setting "night 2" --sequence s
seq_line() { sed -n '/^== all nights together/,/^== targets/p' <<<"$OUT" | grep -F -- "$1" | head -n 1 | tr -s ' '; }
[ $RC -eq 0 ] && [ "$(seq_line 'null service-nights')" = " null service-nights 4" ] &&
	[ "$(seq_line 'distinct false findings on null')" = " distinct false findings on null services 2" ] &&
	[ "$(seq_line 'distinct true findings')" = " distinct true findings 1" ] &&
	[ "$(seq_line 'null services with')" = " null services with >= 1 false finding 2" ] &&
	ok "over the nights of one fleet a finding counts once and every night counts" ||
	not_ok "sequence" "rc=$RC $(sed -n '/^== all nights together/,/^== false/p' <<<"$OUT")"
[[ $OUT == *"x1.25, 1-10%, night 1 (4 captures) >= 80%"* ]] &&
	[[ $OUT == *"false findings <= 1 per 1,000 null nights (95% bound)"* ]] &&
	ok "issue 18's targets are printed for night settings" || not_ok "targets 18" "$OUT"
# Pages: a regression finding pages once it was ever confirmed (now, or in
# its history before it went away); a candidate does not page.
cat >"$T/states.json" <<'EOF2'
[{"service":"r1","function":"pay.(*Book).Post","direction":"regression","state":"confirmed","states":[]},
 {"service":"n1","function":"x","direction":"regression","state":"went_away",
  "states":[{"state":"candidate"},{"state":"confirmed"},{"state":"went_away"}]},
 {"service":"n2","function":"y","direction":"regression","state":"candidate","states":[{"state":"candidate"}]},
 {"service":"r1","function":"other.fn","direction":"regression","state":"confirmed","states":[]},
 {"service":"n2","function":"z","direction":"improvement","state":"confirmed","states":[]}]
EOF2
run "$E" --truth "$T/truth.jsonl" --findings "$T/night1.json" --label s.n1 --setting "night 1" \
	--sequence s --truth "$T/truth.jsonl" --findings "$T/night2.json" --label s.n2 \
	--setting "night 2" --sequence s --states "$T/states.json"
[ $RC -eq 0 ] && [ "$(seq_line 'false pages on null')" = " false pages on null services 1" ] &&
	[ "$(seq_line 'false pages in regressed')" = " false pages in regressed services 1" ] &&
	[ "$(seq_line 'true pages')" = " true pages 1" ] &&
	ok "--states counts pages: findings ever confirmed, regressions only" ||
	not_ok "pages" "rc=$RC $(sed -n '/^== all nights together/,/^== targets/p' <<<"$OUT")"
printf '{"findings": []}' >"$T/states-bad.json"
run "$E" --truth "$T/truth.jsonl" --findings "$T/night1.json" --states "$T/states-bad.json"
[ $RC -eq 4 ] && [[ $ERR == *"states-bad.json': not an array of findings"* ]] &&
	ok "states that are not a list of findings are refused, named" || not_ok "bad states" "rc=$RC $ERR"
run "$E" --truth "$T/truth.jsonl" --findings "$T/night1.json" --label s.n1 --sequence s --json
[ $RC -eq 0 ] && [[ $OUT == *'"all_nights"'* ]] && [[ $OUT == *'"null_service_nights": 2'* ]] &&
	ok "the JSON summary has the all-nights figures" || not_ok "sequence json" "rc=$RC $OUT"
run "$E" --sequence s --truth "$T/truth.jsonl" --findings "$T/night1.json"
[ $RC -eq 2 ] && [[ $ERR == *"'--sequence' must follow a --truth"* ]] &&
	ok "--sequence before any --truth is a usage error" || not_ok "sequence usage" "rc=$RC $ERR"

# Two fleets in one setting add up; a fleet in another setting stays apart.
run "$E" --truth "$T/truth.jsonl" --findings "$T/findings.json" --label one --setting s4 \
	--truth "$T/truth.jsonl" --findings "$T/findings.json" --label two --setting s4 \
	--truth "$T/truth.jsonl" --findings "$T/findings.json" --label three --setting s12
[ $RC -eq 0 ] && [[ $OUT == *"== s4 (fleets: one, two) =="* ]] && [[ $OUT == *"== s12 (fleets: three) =="* ]] &&
	[ "$(grep -c 'null service-nights  *4 ' <<<"$OUT")" = 1 ] &&
	[ "$(grep -c 'null service-nights  *2 ' <<<"$OUT")" = 1 ] &&
	ok "fleets of one setting are pooled" || not_ok "pooling" "rc=$RC $OUT"

# The JSON summary carries the same numbers.
run "$E" --truth "$T/truth.jsonl" --findings "$T/findings.json" --json --json-out "$T/summary.json"
block=$(sed -n '/"profreg": {/,/"naive": /p' <<<"$OUT")
if [ $RC -eq 0 ] && grep -q '"false_on_null": 2' <<<"$block" && grep -q '"null_service_nights": 2' <<<"$block" &&
	grep -q '"precision": 0.25' <<<"$block" && grep -q '"false_in_regressed": 1' <<<"$block" &&
	grep -q '"naive": null' <<<"$OUT" && cmp -s <(printf '%s\n' "$OUT") "$T/summary.json"; then
	ok "--json prints the summary and --json-out writes the same"
else
	not_ok "--json summary" "rc=$RC $ERR" "$block"
fi

# --- the naive rule, from a database filled through the CLI ---------------
# r1 regressed (f.slow 2x). Its baseline is B1 and B2 (v1, hours before the
# first current capture); B0 is 20 days older, outside the 14-day window,
# and would hide the regression if it were counted. Current (v2): C1, C2.
#   f.slow  base 0.10     current 0.20    flagged, true
#   a       base 0.45     current 0.405   not flagged
#   t       base 0.0005   current 0.0008  flagged, false; under the 0.1% floor
#   c.new   base 0        current 0.0005  rose from zero: not flagged
# n1 is null: x base 0.55, current 0.67 (flagged, false; above the floor).
fresh_db cli_eval
pr --quiet db init
for s in r1 n1; do
	pr --quiet service add $s && pr --quiet service enable $s
done
printf 'main;f.slow 5000\nmain;a 5000\n' >"$T/B0.folded"
printf 'main;f.slow 1000\nmain;a 5000\nmain;b 3995\nmain;t 5\n' >"$T/B1.folded"
printf 'main;f.slow 1000\nmain;a 4000\nmain;b 4995\nmain;t 5\n' >"$T/B2.folded"
printf 'main;f.slow 2000\nmain;a 4000\nmain;b 3982\nmain;t 8\nmain;c.new 10\n' >"$T/C1.folded"
printf 'main;f.slow 2000\nmain;a 4100\nmain;b 3892\nmain;t 8\n' >"$T/C2.folded"
printf 'main;x 500\nmain;y 500\n' >"$T/N1.folded"
printf 'main;x 600\nmain;y 400\n' >"$T/N2.folded"
printf 'main;x 700\nmain;y 300\n' >"$T/N3.folded"
printf 'main;x 640\nmain;y 360\n' >"$T/N4.folded"
loaded=0
ing() { # FILE SERVICE RELEASE TIME
	pr --quiet ingest "$T/$1.folded" --service "$2" --release "$3" --time "$4" --type cpu \
		--format folded && loaded=$((loaded + 1))
}
ing B0 r1 v0 2025-12-27T00:00:00Z
ing B1 r1 v1 2026-01-15T20:00:00Z
ing B2 r1 v1 2026-01-15T22:00:00Z
ing C1 r1 v2 2026-01-16T01:00:00Z
ing C2 r1 v2 2026-01-16T03:00:00Z
ing N1 n1 v1 2026-01-15T20:00:00Z
ing N2 n1 v1 2026-01-15T22:00:00Z
ing N3 n1 v2 2026-01-16T01:00:00Z
ing N4 n1 v2 2026-01-16T03:00:00Z
[ $loaded = 9 ] && ok "the tiny fleet is ingested" || not_ok "ingest" "$loaded of 9"

cat >"$T/truth2.jsonl" <<'EOF'
{"service":"r1","regressed":true,"function":"f.slow","factor":2,"baseline_share":0.1,"current_share":0.18,"band":"10-30%","current_release":"v2","at":"2026-01-17T00:00:00Z"}
{"service":"n1","regressed":false,"function":null,"factor":null,"baseline_share":null,"current_share":null,"band":null,"current_release":"v2","at":"2026-01-17T00:00:00Z"}
EOF
printf '{"findings":[],"insufficient":[]}\n' >"$T/empty.json"
run "$E" --truth "$T/truth2.jsonl" --findings "$T/empty.json" --db "$DB"
row() { grep -F -- "$1" <<<"$OUT" | head -n 1 | tr -s ' '; }
[ $RC -eq 0 ] && ok "the naive rule runs on the database" || not_ok "naive runs" "rc=$RC $ERR"
[ "$(sed -n '/naive +10% rule$/,/^$/p' <<<"$OUT" | grep -F '10-30%' | head -n 1 | tr -s ' ')" = " 10-30% 1/1 (100%) 1/1 (100%)" ] &&
	ok "naive: the regression is found (the old capture is outside the window)" ||
	not_ok "naive recall" "$OUT"
[ "$(row 'false findings on null')" = " false findings on null services 0 1 1" ] &&
	ok "naive: one false finding on the null service" || not_ok "naive false null" "$(row 'false findings on null')"
[ "$(row 'false findings in regressed')" = " false findings in regressed services 0 1 0" ] &&
	ok "naive: the tiny function is flagged, and the floor drops it" ||
	not_ok "naive floor" "$(row 'false findings in regressed')"
[ "$(row 'precision (true')" = " precision (true / all) - 33.3% 50.0%" ] &&
	ok "naive precision, and none for profreg without findings" || not_ok "naive precision" "$(row 'precision (true')"
[ "$(row '95% upper bound')" = " 95% upper bound per 1,000 2995.7 4743.9 4743.9" ] &&
	ok "the upper bound for 0 and 1 false findings in 1 night" || not_ok "bounds" "$(row '95% upper bound')"
[[ $(row 'null service-nights <= 1') == *" 0.0 met, not yet shown: 95% upper bound 2995.7" ]] &&
	ok "a zero rate over few nights is flagged as not yet shown" || not_ok "not yet shown" "$(row 'null service-nights <= 1')"
[ "$(row 'null service-nights')" = " null service-nights 1 1 1" ] &&
	ok "naive: null service-nights" || not_ok "naive nights" "$(row 'null service-nights')"
[[ $OUT == *"naive rule: 1 function(s) rose from a zero baseline share (not flagged)"* ]] &&
	ok "naive: a function rising from zero is counted, not flagged" || not_ok "naive new" "$OUT"
run "$E" --truth "$T/truth2.jsonl" --findings "$T/empty.json" --db "$DB" --window-days 30
[ "$(sed -n '/naive +10% rule$/,/^$/p' <<<"$OUT" | grep -F '10-30%' | head -n 1 | tr -s ' ')" = " 10-30% 0/1 (0%) 0/1 (0%)" ] &&
	ok "naive: a 30-day window takes in the old capture and hides the regression" ||
	not_ok "naive window" "$OUT"

# --- broken inputs ----------------------------------------------------------
bad() { # DESCRIPTION EXIT EXPECTED-IN-MESSAGE ARGS...
	local desc=$1 want_rc=$2 want=$3
	shift 3
	run "$E" "$@"
	if [ $RC -eq "$want_rc" ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] && [[ $ERR == *"$want"* ]] &&
		[ -z "$OUT" ]; then
		ok "$desc: exit $want_rc, one line"
	else
		not_ok "$desc: exit $want_rc, one line" "rc=$RC stderr: $ERR" "stdout: ${OUT:0:200}"
	fi
}
score() { # FINDINGS-JSON DESCRIPTION EXIT EXPECTED
	printf '%s\n' "$1" >"$T/bad.json"
	bad "$2" "$3" "$4" --truth "$T/truth.jsonl" --findings "$T/bad.json"
}
INSUFFICIENT=""
score "$(findings "$(finding svc-999 f regression)")" "a service the truth lacks" 4 \
	"finding 0 names service 'svc-999', which truth"
score "$(findings "$(finding n1 f regression)" "$(finding n2 g regression)" "$(finding n1 f regression)")" \
	"the same finding twice" 4 "findings 0 and 2 are the same (service 'n1', function 'f', direction 'regression')"
findings "$(finding n1 f regression)" "$(finding n1 f relative_shift)" >"$T/two.json"
run "$E" --truth "$T/truth.jsonl" --findings "$T/two.json"
[ $RC -eq 0 ] && [ "$(line 'false findings on null')" = " false findings on null services 1 - -" ] &&
	ok "one function in two directions is not a duplicate" || not_ok "two directions" "rc=$RC $ERR"
score "$(findings "$(finding n1 f regression | sed 's/"direction":"regression",//')")" \
	"a finding without a direction" 4 "finding 0: missing key 'direction'"
score "$(findings "$(finding n1 f regression | sed 's/"q_value":1e-7,//')")" \
	"a finding without q_value" 4 "finding 0: missing key 'q_value'"
score "$(findings "$(finding n1 f regression | sed 's/"delta":0.05/"delta":"big"/')")" \
	"a number given as a string" 4 "'delta' is a string, not a number or null"
score "$(findings "$(finding n1 f sideways)")" "an unknown direction" 4 "unknown direction 'sideways'"
score "$(findings "$(finding n1 "$(printf 'a\\u001b[31mb')" regression)" "$(finding n1 "$(printf 'a\\u001b[31mb')" regression)")" \
	"a control character in a name is not echoed" 4 "function 'a?[31mb'"
score '{"findings":[]}' "no insufficient list" 4 "'insufficient' is missing or not an array"
score '{"findings":{},"insufficient":[]}' "findings not an array" 4 "'findings' is missing or not an array"
score '[1,2]' "an array instead of an object" 4 "is an array, not an object"
score '{"findings":[7],"insufficient":[]}' "a finding that is not an object" 4 "finding 0 is an integer"
score '{"findings":[],"insufficient":["ghost"]}' "an unknown skipped service" 4 "names service 'ghost'"
score '{"findings": [' "truncated JSON" 4 "cannot parse findings"

bad "a missing findings file" 4 "cannot open findings '$T/nope.json'" --truth "$T/truth.jsonl" --findings "$T/nope.json"
bad "a missing truth file" 4 "cannot open truth '$T/nope.jsonl'" --truth "$T/nope.jsonl" --findings "$T/findings.json"
sed '2s/"regressed":true,//' "$T/truth.jsonl" >"$T/t-bad.jsonl"
bad "a truth line without 'regressed'" 4 "line 2: missing key 'regressed'" --truth "$T/t-bad.jsonl" --findings "$T/findings.json"
sed '2s/"function":"g.slow",//' "$T/truth.jsonl" >"$T/t-bad.jsonl"
bad "a regressed truth line without its function" 4 "line 2: regressed service without 'function'" \
	--truth "$T/t-bad.jsonl" --findings "$T/findings.json"
{ cat "$T/truth.jsonl"; head -n 1 "$T/truth.jsonl"; } >"$T/t-bad.jsonl"
bad "a service twice in the truth" 4 "service 'r1' appears twice" --truth "$T/t-bad.jsonl" --findings "$T/findings.json"
sed '3s/"v3"/"v4"/' "$T/truth.jsonl" >"$T/t-bad.jsonl"
bad "two current releases in one truth" 4 "line 3: current_release 'v4' differs" --truth "$T/t-bad.jsonl" --findings "$T/findings.json"
printf 'not json\n' >"$T/t-bad.jsonl"
bad "a truth line that is not JSON" 4 "line 1:" --truth "$T/t-bad.jsonl" --findings "$T/findings.json"
: >"$T/t-empty.jsonl"
bad "an empty truth" 4 "lists no services" --truth "$T/t-empty.jsonl" --findings "$T/findings.json"
bad "an unreachable database" 3 "cannot connect to the database of fleet 'fleet1'" \
	--truth "$T/truth.jsonl" --findings "$T/findings.json" --db "host=$T/no-such-socket-dir dbname=x"

bad "no fleet" 2 "no fleet given"
bad "--findings before --truth" 2 "'--findings' must follow a --truth" --findings "$T/findings.json"
bad "a truth without findings" 2 "has no --findings" --truth "$T/truth.jsonl"
bad "an unknown option" 2 "unknown option '--bogus'" --bogus
bad "a bad --list" 2 "'--list x'" --truth "$T/truth.jsonl" --findings "$T/findings.json" --list x
bad "two fleets with one label" 2 "two fleets are labelled 'a'" \
	--truth "$T/truth.jsonl" --findings "$T/findings.json" --label a \
	--truth "$T/truth.jsonl" --findings "$T/findings.json" --label a
run "$E" --help
[ $RC -eq 0 ] && [[ $OUT == *"--setting NAME"* ]] && ok "--help" || not_ok "--help" "rc=$RC"

finish
