#!/bin/bash
# A code path added in the baseline: release v1 never ran the function
# newpath, v2 added it at about 15% of the time, and v3, judged, runs it
# as v2 did. v1's captures hold no sample of it, values of 0 that vary
# by nothing, so their mean outweighed v2's (the baseline read 0.0002%,
# v3 was a critical regression), and newpath's two releases, far apart,
# made every function's release effect as large (nothing else could be
# found). Now newpath's releases have a spread of their own: v3 is no
# finding; v3 with newpath doubled is; and a doubled function beside it
# is found as it would be without newpath.
set -u
. "$(dirname "$0")/lib.sh"
fresh_db cli_code_came
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_code_came
rm -rf "$T" && mkdir -p "$T"
pr --quiet service add svc --enable

# capture FILE SAMPLES SEED NEW [D]: a folded capture of SAMPLES samples,
# the function newpath at NEW times 15% (0: absent) and d at D times 10%
# (default 1) beside 44 others, 10% noise a function.
capture() {
	awk -v n="$2" -v seed="$3" -v new="$4" -v dx="${5:-1}" 'BEGIN {
		srand(seed)
		split("0.3 0.25 0.2 0.1 0.05 0.15", w, " ")
		split("main;serve;a main;serve;b main;serve;c main;d main;e main;serve;newpath", f, " ")
		w[6] *= new
		w[4] *= dx
		for (i = 7; i <= 46; i++) { w[i] = 0.01; f[i] = "main;serve;lib" i }
		for (i = 1; i <= 46; i++) { w[i] *= 0.9 + 0.2 * rand(); t += w[i] }
		for (i = 1; i <= 46; i++) {
			c = int(n * w[i] / t + 0.5)
			if (c > 0) print f[i] " " c
		}
	}' >"$1"
}
man=$T/manifest.jsonl
: >"$man"
for d in $(seq 14 -1 1); do
	for h in 3 15; do
		f=$T/b-$d-$h.folded
		rel=v1 new=0
		[ "$d" -le 4 ] && rel=v2 new=1
		capture "$f" 20000 "$((d * 100 + h))" "$new"
		printf '{"path": "%s", "service": "svc", "release": "%s", "time": "%s"}\n' "$f" \
			"$rel" "$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" \
			+%Y-%m-%dT%H:%M:%SZ)" >>"$man"
	done
done
for i in 1 2 3 4; do
	f=$T/c-$i.folded
	capture "$f" 20000 "$((9000 + i))" 1
	printf '{"path": "%s", "service": "svc", "release": "v3", "time": "2026-03-15T0%d:00:00Z"}\n' \
		"$f" "$((i + 1))" >>"$man"
done
run pr --quiet ingest --manifest "$man"
[ $RC -eq 0 ] && ok "28 baseline captures and 4 judged ingest" || not_ok "ingest" "$ERR"

run pr analyze --service svc --release v3 --at 2026-03-15T12:00:00Z --dry-run --json
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.function == "newpath")] | length' <<<"$OUT")" = 0 ] &&
	ok "a function that runs as it did since the release that added it is no finding" ||
	not_ok "newpath" "rc=$RC $(jq -c '[.findings[] | {function, direction, severity,
		baseline_share, current_share}]' <<<"$OUT" 2>/dev/null) $ERR"

# The same with newpath doubled in the judged release: found.
for i in 1 2 3 4; do capture "$T/c-$i.folded" 20000 "$((9000 + i))" 2; done
fresh_db cli_code_came_2
pr --quiet db init
pr --quiet service add svc --enable
run pr --quiet ingest --manifest "$man"
run pr analyze --service svc --release v3 --at 2026-03-15T12:00:00Z --dry-run --json
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.function == "newpath" and
	.direction == "regression")] | length' <<<"$OUT")" = 1 ] &&
	ok "newpath doubled in the judged release is found" ||
	not_ok "doubled" "rc=$RC $(jq -c '[.findings[] | {function, direction}]' <<<"$OUT") $ERR"

# newpath as in v2, and d (10%) 1.5 times as costly: d is found.
for i in 1 2 3 4; do capture "$T/c-$i.folded" 20000 "$((9000 + i))" 1 1.5; done
fresh_db cli_code_came_3
pr --quiet db init
pr --quiet service add svc --enable
run pr --quiet ingest --manifest "$man"
run pr analyze --service svc --release v3 --at 2026-03-15T12:00:00Z --dry-run --json
[ $RC -eq 0 ] && [ "$(jq -c '[.findings[] | select(.direction == "regression") |
	.function]' <<<"$OUT")" = '["d"]' ] &&
	ok "beside it, a function 1.5 times as costly is found, and nothing else" ||
	not_ok "d" "rc=$RC $(jq -c '[.findings[] | {function, direction, severity}]' <<<"$OUT") $ERR"
finish
