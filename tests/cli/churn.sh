#!/bin/bash
# Releases that change code: in the baseline releases code paths stop
# and start (three after v1 and three after v2; three start in v3 and
# three in v4; 0.05% to 6% each), and v5, judged, runs v4's code. Every
# other share moved from release to release, though no function got
# slower. Taken for noise between releases, the changed paths' own jumps
# made the service's release effect hundreds of times its captures'
# noise: a function doubled from 25%, and a path new in v3 doubled, were
# no findings. Now code that came or went within the baseline is left
# out of the other functions' shares and of the release effect: v5 with
# no change is no regression, and each doubling is found, with nothing
# else called a regression.
set -u
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_churn
rm -rf "$T" && mkdir -p "$T"

# capture FILE SEED REL A NEW: a folded capture of 20,000 samples of
# release REL (1-5): a at A times 25% and n1 at NEW times 6%, beside
# the paths of that release (from, until: the releases that run them)
# and 12 others of 2%; 10% noise a function.
capture() {
	local spec=() e name share from until m
	for e in a:0.25:1:99 b:0.15:1:99 c:0.1:1:99 d:0.05:1:99 \
		g1:0.06:1:2 g2:0.03:1:2 g3:0.005:1:2 g4:0.05:1:3 g5:0.02:1:3 g6:0.003:1:3 \
		n1:0.06:3:99 n2:0.02:3:99 n3:0.005:3:99 n4:0.03:4:99 n5:0.01:4:99 n6:0.0005:4:99; do
		IFS=: read -r name share from until <<<"$e"
		m=0
		if [ "$3" -ge "$from" ] && [ "$3" -lt "$until" ]; then
			case $name in a) m=$4 ;; n1) m=$5 ;; *) m=1 ;; esac
		fi
		spec+=("$name:$share:$m")
	done
	synth_capture "$1" "$2" 12 0.02 "${spec[@]}"
}

# fleet NAME A NEW: the baseline (14 days, two captures a day, a release
# every 4 days: v4 runs two), then 4 captures of v5 with a and n1 scaled;
# ingested into a database of its own. Leaves the analysis's JSON in $OUT.
fleet() {
	local man=$T/$1.jsonl d h f rel judged=5
	: >"$man"
	for d in $(seq 14 -1 1); do
		for h in 3 15; do
			f=$T/$1-b-$d-$h.folded
			rel=$(((14 - d) / 4 + 1))
			capture "$f" "$((d * 100 + h))" "$rel" 1 1
			printf '{"path": "%s", "service": "svc", "release": "v%d", "time": "%s"}\n' \
				"$f" "$rel" "$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" \
				+%Y-%m-%dT%H:%M:%SZ)" >>"$man"
		done
	done
	for i in 1 2 3 4; do
		f=$T/$1-c-$i.folded
		capture "$f" "$((9000 + i))" "$judged" "$2" "$3"
		printf '{"path": "%s", "service": "svc", "release": "v%d", "time": "2026-03-15T0%d:00:00Z"}\n' \
			"$f" "$judged" "$((i + 1))" >>"$man"
	done
	fresh_db "cli_churn_$1"
	pr --quiet db init
	pr --quiet service add svc --enable
	run pr --quiet ingest --manifest "$man"
	[ $RC -eq 0 ] || not_ok "ingest $1" "$ERR"
	run pr analyze --service svc --release "v$judged" --at 2026-03-15T12:00:00Z --dry-run --json
}
regressions() { jq -c '[.findings[] | select(.direction == "regression") | .function] | sort' <<<"$OUT"; }

fleet same 1 1
[ $RC -eq 0 ] && [ "$(regressions)" = "[]" ] &&
	ok "code that came and went in the baseline: the release that changed nothing is no regression" ||
	not_ok "no change" "rc=$RC $(jq -c '[.findings[] | {function, direction, baseline_share,
		current_share, p_value}]' <<<"$OUT" 2>/dev/null) $ERR"

fleet a2 2 1
[ $RC -eq 0 ] && [ "$(regressions)" = '["a"]' ] &&
	ok "a function doubled from 25% is found beside the changed code, and nothing else" ||
	not_ok "a doubled" "rc=$RC $(jq -c '[.findings[] | {function, direction, baseline_share,
		current_share, p_value}]' <<<"$OUT" 2>/dev/null) $ERR"

fleet new2 1 2
[ $RC -eq 0 ] && [ "$(regressions)" = '["n1"]' ] &&
	ok "code that came in v3, doubled in the judged release, is found, and nothing else" ||
	not_ok "n1 doubled" "rc=$RC $(jq -c '[.findings[] | {function, direction, baseline_share,
		current_share, p_value}]' <<<"$OUT" 2>/dev/null) $ERR"
# A simulated service (tests/data/folded/late-path) whose function
# inventory/ledger.Writer.Fetch came in v5, the last baseline release
# (four captures), at about 0.04%: each earlier release of six captures
# had fewer than 20 of its samples due, at its share in the releases
# that ran it diluted by the other releases' zeros, so none was left out
# of its baseline and it was a regression from 0.000% (p 2e-8). The four
# releases before v5, together, had some 250 due.
fresh_db cli_churn_late
pr --quiet db init
pr --quiet service add svc --enable
run pr --quiet ingest --manifest tests/data/folded/late-path/manifest.jsonl
run pr analyze --service svc --release v6 --at 2026-01-16T00:00:00Z --dry-run --json
[ $RC -eq 0 ] && [ "$(regressions)" = "[]" ] &&
	ok "a path that came in the last baseline release, steady since, is no regression" ||
	not_ok "late" "rc=$RC $(jq -c '[.findings[] | select(.direction == "regression") |
		{function, baseline_share, current_share, p_value}]' <<<"$OUT" 2>/dev/null) $ERR"
finish
