#!/bin/bash
# A regression on a quieter night. Captures with durations give each
# function's rate (per second of capture), and a share that rose while
# the rate did not is a relative shift: something else got cheaper. On a
# night with a quarter less traffic every rate falls by a quarter, and a
# function that costs 1.5 times as much per request kept about its old
# rate: its rise was called a shift and paged no one. Rates are now read
# against the service's traffic (the median move of its functions' rates).
# A function pushed up only because another got cheaper is still a shift,
# on a busier night too.
. "$(dirname "$0")/lib.sh"
fresh_db cli_quiet_night
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_quiet_night
rm -rf "$T" && mkdir -p "$T"
pr --quiet service add quiet --enable
pr --quiet service add cheaper --enable
pr --quiet service add busier --enable

# capture FILE SEED LOAD SLOW CHEAP: a speedscope CPU profile of 60 s
# (10 ms samples) of 20 functions at traffic LOAD, f03 costing SLOW times
# as much and f00 CHEAP times as much per request.
capture() {
	awk -v seed="$2" -v load="$3" -v slow="$4" -v cheap="$5" 'function gauss() {
		return sqrt(-2 * log(1 - rand())) * cos(6.283185307 * rand()) }
	BEGIN {
		srand(seed)
		for (i = 0; i < 20; i++) { w[i] = 1 / (i + 1) ^ 0.9; s += w[i] }
		for (i = 0; i < 20; i++) {
			mu = 1200 * load / 100 * w[i] / s * exp(0.05 * gauss())
			mu *= (i == 3 ? slow : 1) * (i == 0 ? cheap : 1)
			printf "f%02d %d\n", i, int(mu + sqrt(mu) * gauss() + 0.5)
		}
	}' | speedscope_cpu >"$1"
}
man=$T/manifest.jsonl
: >"$man"
seed=1
for svc in quiet cheaper busier; do
	for d in $(seq 13 -1 2); do
		for h in 3 9; do
			seed=$((seed + 1))
			load=$(awk -v s=$seed 'BEGIN { srand(s); print 100 * exp(0.3 * (rand() - 0.5) * 3.4) }')
			f=$T/$svc-b-$d-$h.json
			capture "$f" "$seed" "$load" 1 1
			printf '{"path": "%s", "service": "%s", "release": "v1", "time": "%s", "tags": {"load": "%.2f"}}\n' \
				"$f" "$svc" "$(date -u -d "2026-03-15T00:00:00Z - $d days + $h hours" \
				+%Y-%m-%dT%H:%M:%SZ)" "$load" >>"$man"
		done
	done
	for i in 1 2 3 4; do
		seed=$((seed + 1))
		f=$T/$svc-c-$i.json
		case $svc in
		quiet) load=75 slow=1.5 cheap=1 ;;
		cheaper) load=100 slow=1 cheap=0.5 ;;
		*) load=150 slow=1 cheap=0.5 ;;
		esac
		capture "$f" "$seed" "$load" "$slow" "$cheap"
		printf '{"path": "%s", "service": "%s", "release": "v2", "time": "2026-03-15T0%d:00:00Z", "tags": {"load": "%s"}}\n' \
			"$f" "$svc" "$((i + 1))" "$load" >>"$man"
	done
done
run pr --quiet ingest --manifest "$man"
[ $RC -eq 0 ] && ok "two services of speedscope captures with durations ingest" || not_ok "ingest" "$ERR"

run pr analyze --all-services --release v2 --at 2026-03-15T12:00:00Z --dry-run --json
dir() { jq -r --arg s "$1" --arg f "$2" '[.findings[] | select(.service == $s and
	.function == $f) | .direction] | join(",")' <<<"$OUT"; }
[ $RC -eq 0 ] && [ "$(dir quiet f03)" = regression ] &&
	ok "a function 1.5 times costlier per request, judged at a quarter less traffic, is a regression" ||
	not_ok "quiet night" "rc=$RC f03: '$(dir quiet f03)' $(jq -c '[.findings[] |
		{service, function, direction, severity}]' <<<"$OUT") $ERR"
ups=$(jq '[.findings[] | select(.service == "cheaper" and .function != "f00" and
	.direction == "regression")] | length' <<<"$OUT")
[ "$(dir cheaper f00)" = improvement ] && [ "$ups" = 0 ] &&
	ok "a function half as costly is the improvement, and what it pushed up is no regression" ||
	not_ok "cheaper" "f00: '$(dir cheaper f00)', $ups regressions $(jq -c '[.findings[] |
		select(.service == "cheaper") | {function, direction}]' <<<"$OUT")"
ups=$(jq '[.findings[] | select(.service == "busier" and .function != "f00" and
	.direction == "regression")] | length' <<<"$OUT")
[ "$(dir busier f00)" = improvement ] && [ "$ups" = 0 ] &&
	ok "on a night half as busy again, what the cheaper function pushed up is no regression" ||
	not_ok "busier" "f00: '$(dir busier f00)', $ups regressions $(jq -c '[.findings[] |
		select(.service == "busier") | {function, direction, severity}]' <<<"$OUT")"
finish
