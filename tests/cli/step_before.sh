#!/bin/bash
# A service judged for the first time, with history: release v2, which no
# run judged, made the function lookup cost 2.5 times what it did in v1
# (a code path that calls it more), and v3, judged now, keeps it so. The
# baseline leaned on v1's many captures, and v3 was a critical regression
# of a rise it did not make. Now it is no finding; and in the same v3 a
# function whose cost doubled (d) is still found: lookup's releases, far
# apart, do not blind the rest of the service.
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/cli_step_before
rm -rf "$T" && mkdir -p "$T"

# capture FILE SEED L [D]: 20,000 samples; lookup at L times 8%, d at D
# times 10% (default 1), 44 others.
capture() {
	awk -v seed="$2" -v lx="$3" -v dx="${4:-1}" 'BEGIN {
		srand(seed)
		split("0.3 0.25 0.2 0.1 0.05 0.08", w, " ")
		split("main;serve;a main;serve;b main;serve;c main;d main;e main;serve;lookup", f, " ")
		w[6] *= lx
		w[4] *= dx
		for (i = 7; i <= 46; i++) { w[i] = 0.01; f[i] = "main;serve;lib" i }
		for (i = 1; i <= 46; i++) { w[i] *= 0.92 + 0.16 * rand(); t += w[i] }
		for (i = 1; i <= 46; i++) print f[i] " " int(20000 * w[i] / t + 0.5)
	}' >"$1"
}
# setup DB D: v1 (10 days, 2 a day), v2 (4 captures, lookup 2.5x), v3 (4, lookup
# 2.5x, d D times).
setup() {
	local man=$T/$1.jsonl d h i
	fresh_db "$1"
	pr --quiet db init
	pr --quiet service add svc --enable
	: >"$man"
	for d in $(seq 12 -1 3); do
		for h in 3 15; do
			capture "$T/$1-b-$d-$h.folded" "$((d * 100 + h))" 1
			printf '{"path": "%s", "service": "svc", "release": "v1", "time": "%s"}\n' \
				"$T/$1-b-$d-$h.folded" "$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" \
				+%Y-%m-%dT%H:%M:%SZ)" >>"$man"
		done
	done
	for i in 1 2 3 4; do
		capture "$T/$1-s-$i.folded" "$((700 + i))" 2.5
		printf '{"path": "%s", "service": "svc", "release": "v2", "time": "2026-03-13T0%d:00:00Z"}\n' \
			"$T/$1-s-$i.folded" "$i" >>"$man"
		capture "$T/$1-c-$i.folded" "$((900 + i))" 2.5 "$2"
		printf '{"path": "%s", "service": "svc", "release": "v3", "time": "2026-03-15T0%d:00:00Z"}\n' \
			"$T/$1-c-$i.folded" "$i" >>"$man"
	done
	pr --quiet ingest --manifest "$man"
}

setup cli_step_before 1
run pr analyze --service svc --release v3 --at 2026-03-15T12:00:00Z --json
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.function == "lookup")] | length' <<<"$OUT")" = 0 ] &&
	ok "a rise that came with the unjudged release before, kept since, is no finding" ||
	not_ok "kept" "rc=$RC $(jq -c '[.findings[] | {function, direction, severity,
		baseline_share, current_share}]' <<<"$OUT" 2>/dev/null) $ERR"

setup cli_step_before_2 2
run pr analyze --service svc --release v3 --at 2026-03-15T12:00:00Z --json
[ $RC -eq 0 ] && [ "$(jq -c '[.findings[] | select(.direction == "regression") |
	.function]' <<<"$OUT")" = '["d"]' ] &&
	ok "beside it, a function whose cost doubled is found, and nothing else" ||
	not_ok "d" "rc=$RC $(jq -c '[.findings[] | {function, direction, severity}]' <<<"$OUT") $ERR"
finish
