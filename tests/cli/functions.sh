#!/bin/bash
# profreg functions: the captures where a function took at least a share
# of self time, against a count made from the folded files themselves;
# exact, prefix and regular-expression names; aggregates per release and
# per day; a bad pattern and an unknown service.
. "$(dirname "$0")/lib.sh"
fresh_db cli_functions
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_functions
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 2 --functions 40 --factors 2 --bands 10-30 \
	--regressed 0.5 --seed 71 >"$T/gen.txt"
svc=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | sed 's/.*"service":"\([^"]*\)".*/\1/')
fn=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | sed 's/.*"function":"\([^"]*\)".*/\1/')
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"

# The count by hand: the function's self share in each of the service's
# files (the leaf of a folded line is its last frame), read with awk.
share() { awk -v f="$fn" '{ n = $NF; total += n; k = split($1, fr, ";"); if (fr[k] == f) self += n }
	END { printf "%.6f\n", total ? self / total : 0 }' "$1"; }
grep "\"service\":\"$svc\"" "$T/fleet/manifest.jsonl" | while IFS= read -r line; do
	path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$line")
	rel=$(sed 's/.*"release":"\([^"]*\)".*/\1/' <<<"$line")
	echo "$rel $(share "$T/fleet/$path")"
done >"$T/shares.txt"
# A threshold between the baseline and the regressed shares: some pass, some not.
min=$(awk '{ print $2 }' "$T/shares.txt" | sort -n | awk '{ a[NR] = $1 } END { print a[int(NR * 0.7)] }')
pct=$(awk -v m="$min" 'BEGIN { printf "%.4f", 100 * m }')
expect=$(awk -v m="$min" '$2 >= m - 1e-9 { n[$1]++ } END { for (r in n) print r, n[r] }' "$T/shares.txt" | sort)
total=$(awk -v m="$min" '$2 >= m - 1e-9' "$T/shares.txt" | wc -l)

run pr functions --name "$fn" --service "$svc" --min-self "$pct%" --since 2025-01-01 --json
got=$(jq -r '.rows | length' <<<"$OUT")
[ $RC -eq 0 ] && [ "$got" = "$total" ] && [ "$total" -gt 0 ] &&
	ok "the captures at or above ${pct}% match a count from the files ($total)" || not_ok "list" "rc=$RC got=$got want=$total $ERR"
[ "$(jq -r '[.rows[].service] | unique | join(",")' <<<"$OUT")" = "$svc" ] &&
	[ "$(jq -r '[.rows[] | select(.self_share < '"$min"' - 1e-9)] | length' <<<"$OUT")" = 0 ] &&
	ok "every row is the service's and at or above the share" || not_ok "rows" "$OUT"
run pr functions --name "$fn" --service "$svc" --min-self "$pct%" --since 2025-01-01 --by release --json
got=$(jq -r '.rows[] | "\(.release) \(.captures)"' <<<"$OUT" | sort)
[ $RC -eq 0 ] && [ "$got" = "$expect" ] && ok "--by release counts the same captures per release" ||
	not_ok "by release" "got=$got want=$expect"
want_max=$(awk -v m="$min" '$2 >= m - 1e-9 { print $2 }' "$T/shares.txt" | sort -n | tail -n 1)
got_max=$(jq -r '[.rows[].max_self_share] | max' <<<"$OUT")
awk -v a="$want_max" -v b="$got_max" 'BEGIN { exit !(a - b < 1e-5 && b - a < 1e-5) }' &&
	ok "and the largest share matches the files' ($want_max)" || not_ok "max share" "$want_max vs $got_max"
run pr functions --name "$fn" --service "$svc" --since 2025-01-01 --by day --json
[ $RC -eq 0 ] && [ "$(jq '[.rows[].captures] | add' <<<"$OUT")" = "$(wc -l <"$T/shares.txt")" ] &&
	ok "--by day with no minimum counts every capture of the service" || not_ok "by day" "$OUT"

prefix=${fn:0:4}
run pr functions --name "$prefix" --match prefix --since 2025-01-01 --limit 100000 --json
[ $RC -eq 0 ] && [ "$(jq '.functions' <<<"$OUT")" -ge 1 ] &&
	[ "$(jq -r --arg p "$prefix" '[.rows[].function | startswith($p)] | all' <<<"$OUT")" = true ] &&
	ok "a prefix matches only names that start with it" || not_ok "prefix" "$ERR"
run pr functions --name "^$(sed 's/[][\\.*^$(){}|+?]/\\&/g' <<<"$fn")\$" --match regex --service "$svc" \
	--min-self "$pct%" --since 2025-01-01 --json
[ $RC -eq 0 ] && [ "$(jq -r '.rows | length' <<<"$OUT")" = "$total" ] && ok "an anchored regular expression finds the same captures" ||
	not_ok "regex" "rc=$RC $ERR"
# A few matched functions and many take two ways through the stored
# values; both must list what the view of one row per capture and
# function holds: every function of the fleet, and then one alone.
for pat in . "^$(sed 's/[][\\.*^$(){}|+?]/\\&/g' <<<"$fn")\$"; do
	run pr functions --name "$pat" --match regex --min-self 2% --since 2025-01-01 \
		--limit 100000 --json
	# Shares in parts per billion: JSON and SQL print a double differently.
	got=$(jq -r '.rows[] | [.capture_id, .function, (.self_share * 1e9 | round),
		(.total_share * 1e9 | round)] | map(tostring) | join(" ")' <<<"$OUT" | sort)
	want=$(sql "select pf.profile_id || ' ' || f.name || ' ' || round(pf.self_share * 1e9)
		|| ' ' || round(pf.total_share * 1e9) from profile_functions pf
		join functions f on f.id = pf.function_id
		where not f.synthetic and f.name ~ '$pat' and pf.self_share >= 0.02" | sort)
	[ $RC -eq 0 ] && [ -n "$got" ] && [ "$got" = "$want" ] &&
		ok "'$pat' lists the rows the per-function view holds ($(wc -l <<<"$got"))" ||
		not_ok "pattern $pat" "rc=$RC $ERR $(diff <(echo "$got") <(echo "$want") | head -5)"
done
run pr functions --name "(unclosed" --match regex
[ $RC -eq 2 ] && [[ $ERR == *"'(unclosed' is not a valid pattern"* ]] && ok "a bad regular expression is a usage error" || not_ok "bad regex" "rc=$RC $ERR"
run pr functions --name "$fn" --service "${svc}x"
[ $RC -eq 4 ] && [[ $ERR == *"did you mean '$svc'"* ]] && ok "an unknown service is exit 4" || not_ok "unknown service" "rc=$RC $ERR"
run pr functions --name "$fn" --service "$svc" --since 2025-01-01
[ $RC -eq 0 ] && [ "$(LC_ALL=C.UTF-8 wc -L <<<"$OUT")" -le 80 ] && [[ $OUT == *"$svc"* ]] &&
	ok "the table fits 80 columns" || not_ok "table" "$OUT"
run pr functions --name nosuch.function
[ $RC -eq 0 ] && [[ $ERR == *"no stored function is named 'nosuch.function' (--match prefix"* ]] &&
	ok "no match says so, and how to look for part of a name" || not_ok "no match" "rc=$RC $ERR"
run pr functions --name nosuch. --match prefix
[ $RC -eq 0 ] && [[ $ERR == *"no stored function's name starts with 'nosuch.'"* ]] &&
	ok "no prefix match says so" || not_ok "no prefix match" "rc=$RC $ERR"
run pr functions --name "$fn" --service "$svc" --min-self 100% --since 2025-01-01
[ $RC -eq 0 ] && [[ $ERR == *"1 function name matched; no capture in the window met --min-self"* ]] &&
	ok "a name that matched but no capture over --min-self says that instead" ||
	not_ok "min-self" "rc=$RC $ERR"
run "$PROFREG_BIN" functions --help
[ $RC -eq 0 ] && ok "functions --help" || not_ok "help"
finish
