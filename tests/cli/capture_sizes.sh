#!/bin/bash
# Captures of very different sizes: a baseline of small captures (500
# samples) and a release judged on large ones (20,000), nothing changed.
# Functions of 0.03-0.1% hold under one sample a small capture, where the
# VST reads low, so against large captures every small function looked
# costlier: false regressions in a null service. Each capture's value is
# now corrected for its size, and no small function is a finding; a
# function that did double still is.
. "$(dirname "$0")/lib.sh"
fresh_db cli_capture_sizes
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_capture_sizes
rm -rf "$T" && mkdir -p "$T"
pr --quiet service add svc --enable

# capture FILE SAMPLES SEED DOUBLED: a folded capture of SAMPLES samples
# drawn from fixed shares (six functions of 0.03-0.1%, one of 5% that
# DOUBLED=1 doubles, the rest in two big ones), 10% noise a function.
capture() {
	awk -v n="$2" -v seed="$3" -v doubled="$4" 'BEGIN {
		srand(seed)
		split("0.001 0.0008 0.0006 0.0005 0.0004 0.0003 0.05 0.5", w, " ")
		w[7] *= doubled ? 2 : 1
		for (i = 1; i <= 8; i++) { w[i] *= 0.9 + 0.2 * rand(); t += w[i] }
		t += 0.5 * (0.9 + 0.2 * rand()) # main;big2, what is left
		for (k = 1; k <= n; k++) {
			u = rand() * t; c = 0
			for (i = 1; i <= 8 && u > w[i]; i++) u -= w[i]
			cnt[i]++
		}
		for (i = 1; i <= 6; i++) if (cnt[i]) print "main;serve;small" i " " cnt[i]
		if (cnt[7]) print "main;serve;mid " cnt[7]
		if (cnt[8]) print "main;big " cnt[8]
		if (cnt[9]) print "main;big2 " cnt[9]
	}' >"$1"
}
man=$T/manifest.jsonl
: >"$man"
for d in $(seq 14 -1 1); do
	for h in 2 6 10 14; do
		f=$T/b-$d-$h.folded
		capture "$f" 500 "$((d * 100 + h))" 0
		printf '{"path": "%s", "service": "svc", "release": "v1", "time": "%s"}\n' "$f" \
			"$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" +%Y-%m-%dT%H:%M:%SZ)" >>"$man"
	done
done
for i in 1 2 3 4; do
	f=$T/c-$i.folded
	capture "$f" 20000 "$((9000 + i))" "${DOUBLED:-0}"
	printf '{"path": "%s", "service": "svc", "release": "v2", "time": "2026-03-15T0%d:00:00Z"}\n' \
		"$f" "$((i + 1))" >>"$man"
done
run pr --quiet ingest --manifest "$man"
[ $RC -eq 0 ] && ok "56 captures of 500 samples and 4 of 20,000 ingest" || not_ok "ingest" "$ERR"

run pr analyze --service svc --release v2 --at 2026-03-15T12:00:00Z --dry-run --json
small=$(jq '[.findings[] | select(.function | startswith("small"))] | length' <<<"$OUT")
[ $RC -eq 0 ] && [ "$small" = 0 ] &&
	ok "no function of 0.03-0.1% is a finding against a baseline of small captures" ||
	not_ok "small functions" "rc=$RC $(jq -c '[.findings[] | {function, direction,
		baseline_share, current_share, p_value}]' <<<"$OUT" 2>/dev/null) $ERR"

# The same with mid doubled in the large captures: still found.
for i in 1 2 3 4; do capture "$T/c-$i.folded" 20000 "$((9000 + i))" 1; done
fresh_db cli_capture_sizes_2
pr --quiet db init
pr --quiet service add svc --enable
run pr --quiet ingest --manifest "$man"
run pr analyze --service svc --release v2 --at 2026-03-15T12:00:00Z --dry-run --json
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.function == "mid" and
	.direction == "regression")] | length' <<<"$OUT")" = 1 ] &&
	[ "$(jq '[.findings[] | select(.function | startswith("small"))] | length' <<<"$OUT")" = 0 ] &&
	ok "a 5% function that doubles is found, and still no small one" ||
	not_ok "doubled" "rc=$RC $(jq -c '[.findings[] | {function, direction}]' <<<"$OUT") $ERR"
finish
