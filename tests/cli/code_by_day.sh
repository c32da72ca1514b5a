#!/bin/bash
# Code that came part-way through a release: a flag switched on, a path
# deployed without a new version. The baseline is one release of 14
# days; on its eighth day a path of 15% starts (flag), and the judged
# release runs it as the baseline's last week did. With releases as the
# only unit of code change, the path's baseline mixed a week of zeros
# with a week of 15% and the judged release was a critical regression
# of it; and every other share, diluted in half of the baseline's
# captures, judged against that mixture, could hide a rise. Now the
# captures before a function's first sample, where its share since would
# have put 20 or more in them together, are left out of its baseline,
# and code absent from such a run of captures is left out of the other
# functions' shares, as code that came or went between releases is.
set -u
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_code_by_day

rm -rf "$T" && mkdir -p "$T"

# capture FILE SEED FLAG A: a folded capture of 20,000 samples: the path
# flag at FLAG times 15% (0: absent) and a at A times 10%, beside b to e
# (15%, 8%, 5%, 4%) and 20 others of 2.9%; 10% noise a function.
capture() {
	synth_capture "$1" "$2" 20 0.029 "a:0.1:$4" b:0.15 c:0.08 d:0.05 e:0.04 "flag:0.15:$3"
}

# fleet NAME A: the baseline, v1 (14 days, two captures a day, flag on
# from the eighth day), then 4 captures of v2 with flag on and a at A.
# Leaves the analysis's JSON in $OUT.
fleet() {
	local man=$T/$1.jsonl d h f
	: >"$man"
	for d in $(seq 14 -1 1); do
		for h in 3 15; do
			f=$T/$1-b-$d-$h.folded
			capture "$f" "$((d * 100 + h))" "$((d <= 7))" 1
			printf '{"path": "%s", "service": "svc", "release": "v1", "time": "%s"}\n' \
				"$f" "$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" \
				+%Y-%m-%dT%H:%M:%SZ)" >>"$man"
		done
	done
	for i in 1 2 3 4; do
		f=$T/$1-c-$i.folded
		capture "$f" "$((9000 + i))" 1 "$2"
		printf '{"path": "%s", "service": "svc", "release": "v2", "time": "2026-03-15T0%d:00:00Z"}\n' \
			"$f" "$((i + 1))" >>"$man"
	done
	fresh_db "cli_code_by_day_$1"
	pr --quiet db init
	pr --quiet service add svc --enable
	run pr --quiet ingest --manifest "$man"
	[ $RC -eq 0 ] || not_ok "ingest $1" "$ERR"
	run pr analyze --service svc --release v2 --at 2026-03-15T12:00:00Z --dry-run --json
}
found() { jq -c --arg d "$1" '[.findings[] | select(.direction == $d) | .function] | sort' <<<"$OUT"; }
show() {
	echo "rc=$RC $(jq -c '[.findings[] | {function, direction, baseline_share, current_share,
		p_value}]' <<<"$OUT" 2>/dev/null) $ERR"
}

fleet same 1
[ $RC -eq 0 ] && [ "$(found regression)" = '[]' ] && [ "$(found improvement)" = '[]' ] &&
	ok "a path switched on in the middle of the baseline's release, steady since, is no finding" ||
	not_ok "same" "$(show)"
# Its baseline is the week that ran it (about 15%), not the mixture (2%).
run pr analyze --service svc --release v2 --at 2026-03-15T12:00:00Z --dry-run --json --all-tests
[ $RC -eq 0 ] &&
	[ "$(jq '[.findings[] | select(.function == "flag")][0] |
		.baseline_share > 0.12 and .baseline_captures == 14' <<<"$OUT")" = true ] &&
	ok "the path is judged against the captures since it came" ||
	not_ok "flag's baseline" "$(jq -c '[.findings[] | select(.function == "flag")]' <<<"$OUT") $ERR"

fleet a15 1.25
[ $RC -eq 0 ] && [ "$(found regression)" = '["a"]' ] &&
	ok "a function 1.25 times as costly beside it is found, and nothing else" ||
	not_ok "a x1.25" "$(show)"
finish
