#!/bin/bash
# Code that came or went in the judged release. A release that stops a
# path of 25% raises every other share by a third, and one that starts a
# path of 40% of the code before lowers every other share by 29%, though
# no function got slower or faster. The dilution check re-tests only
# what was found, so a function 1.5 times as costly beside the new path
# (10% -> 10.7%) was no finding at all, and one beside the stopped path
# was judged to have doubled (10% -> 20%). Now
# such code is left out of every other function's share, as code that
# came or went within the baseline is: the stopped and the new path are
# judged on their own (an improvement to nothing, a regression from
# nothing), and every other function against the code both ran.
set -u
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_code_judged
rm -rf "$T" && mkdir -p "$T"

# capture FILE SEED OLD NEW A: a folded capture of 20,000 samples: the
# path old at OLD times 25%, fresh at NEW times 40% (0: absent) and a at A
# times 10%, beside b to e (15%, 8%, 5%, 4%) and 20 others of 1.65%; 10%
# noise a function.
capture() {
	synth_capture "$1" "$2" 20 0.0165 "a:0.1:$5" b:0.15 c:0.08 d:0.05 e:0.04 "old:0.25:$3" \
		"fresh:0.4:$4"
}

# fleet NAME OLD NEW A: the baseline (14 days, two captures a day, v1 then
# v2 from the eighth day) runs old and not fresh; v3, judged, 4 captures,
# runs them at OLD and NEW, a at A. Leaves the analysis's JSON in $OUT.
fleet() {
	local man=$T/$1.jsonl d h f rel
	: >"$man"
	for d in $(seq 14 -1 1); do
		for h in 3 15; do
			f=$T/$1-b-$d-$h.folded
			rel=$(((14 - d) / 7 + 1))
			capture "$f" "$((d * 100 + h))" 1 0 1
			printf '{"path": "%s", "service": "svc", "release": "v%d", "time": "%s"}\n' \
				"$f" "$rel" "$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" \
				+%Y-%m-%dT%H:%M:%SZ)" >>"$man"
		done
	done
	for i in 1 2 3 4; do
		f=$T/$1-c-$i.folded
		capture "$f" "$((9000 + i))" "$2" "$3" "$4"
		printf '{"path": "%s", "service": "svc", "release": "v3", "time": "2026-03-15T0%d:00:00Z"}\n' \
			"$f" "$((i + 1))" >>"$man"
	done
	fresh_db "cli_code_judged_$1"
	pr --quiet db init
	pr --quiet service add svc --enable
	run pr --quiet ingest --manifest "$man"
	[ $RC -eq 0 ] || not_ok "ingest $1" "$ERR"
	run pr analyze --service svc --release v3 --at 2026-03-15T12:00:00Z --dry-run --json
}
found() { jq -c --arg d "$1" '[.findings[] | select(.direction == $d) | .function] | sort' <<<"$OUT"; }
show() {
	echo "rc=$RC $(jq -c '[.findings[] | {function, direction, baseline_share, current_share,
		p_value}]' <<<"$OUT" 2>/dev/null) $ERR"
}

fleet new 1 1 1.5
[ $RC -eq 0 ] && [ "$(found regression)" = '["a","fresh"]' ] &&
	ok "a function 1.5 times as costly beside a new path of 40% is found, as is the path" ||
	not_ok "new path, a x1.5" "$(show)"

fleet new_null 1 1 1
[ $RC -eq 0 ] && [ "$(found regression)" = '["fresh"]' ] && [ "$(found improvement)" = '[]' ] &&
	ok "beside a new path of 40%, no other share's fall is an improvement" ||
	not_ok "new path: improvements" "$(show)"

fleet gone 0 0 1
[ $RC -eq 0 ] && [ "$(found regression)" = '[]' ] && [ "$(found improvement)" = '["old"]' ] &&
	ok "a path of 25% the judged release stopped is its only finding" ||
	not_ok "gone path" "$(show)"

fleet gone_a 0 0 1.5
[ $RC -eq 0 ] && [ "$(found regression)" = '["a"]' ] &&
	[ "$(jq '[.findings[] | select(.function == "a")][0].rel_delta < 0.75' <<<"$OUT")" = true ] &&
	ok "a function 1.5 times as costly beside a stopped path of 25% is found, against the code both ran" ||
	not_ok "gone path, a x1.5" "$(show)"
finish
