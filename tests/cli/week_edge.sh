#!/bin/bash
# A null release judged on a Sunday afternoon, in services whose cost per
# request is 1.3 times higher at weekends. The 14-day baseline ends on a
# Thursday and holds one weekend, so the week is only a hint, and the
# judged captures lie within 12 hours of the weekend's end: read as
# weekend they show nothing, read as weekday or left unadjusted they show
# a rise. A hint was held to the unadjusted values alone, and a null
# release raised critical cost findings; it is now held to both readings
# of the edge as well. The same services made 1.5 times costlier still
# are found.
. "$(dirname "$0")/lib.sh"
fresh_db cli_week_edge
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_week_edge
rm -rf "$T" && mkdir -p "$T"

# capture FILE SEED LOAD COST: a speedscope CPU profile of 60 s (10 ms
# samples) of 12 functions at traffic LOAD, each COST times as costly.
capture() {
	awk -v seed="$2" -v load="$3" -v cost="$4" 'function gauss() {
		return sqrt(-2 * log(1 - rand())) * cos(6.283185307 * rand()) }
	BEGIN {
		srand(seed)
		for (i = 0; i < 12; i++) { w[i] = 1 / (i + 1); s += w[i] }
		c = cost * exp(0.05 * gauss())
		for (i = 0; i < 12; i++) {
			mu = 1200 * load / 100 * c * w[i] / s * exp(0.05 * gauss())
			printf "f%02d %d\n", i, int(mu + sqrt(mu) * gauss() + 0.5)
		}
	}' | speedscope_cpu >"$1"
}
man=$T/manifest.jsonl
: >"$man"
seed=100
for svc in null-0 null-1 null-2 null-3 null-4 null-5 slower-0 slower-1; do
	pr --quiet service add "$svc" --enable
	# 14 days to Thursday 19 November 2026, 4 captures a day.
	# Three releases, each on two hosts.
	for d in $(seq 6 19); do
		for h in 2 8 14 20; do
			seed=$((seed + 1))
			at=$(printf '2026-11-%02dT%02d:00:00Z' "$d" "$h")
			dow=$(date -u -d "$at" +%u)
			cost=1
			[ "$dow" -ge 6 ] && cost=1.3
			load=$(awk -v s=$seed 'BEGIN { srand(s); printf "%.2f", 100 * exp(0.3 * (rand() - 0.5) * 3.4) }')
			capture "$T/$svc-$d-$h.json" "$seed" "$load" "$cost"
			printf '{"path": "%s", "service": "%s", "release": "b%d", "host": "h%d", "time": "%s", "tags": {"load": "%s"}}\n' \
				"$T/$svc-$d-$h.json" "$svc" "$(((d - 6) / 5 + 1))" "$((h / 6 % 2))" "$at" "$load" >>"$man"
		done
	done
	# Sunday 22 November, 13:00 to 19:00: the weekend's last hours.
	for h in 13 15 17 19; do
		seed=$((seed + 1))
		cost=1.3
		case $svc in slower-*) cost=1.95 ;; esac
		load=$(awk -v s=$seed 'BEGIN { srand(s); printf "%.2f", 100 * exp(0.3 * (rand() - 0.5) * 3.4) }')
		capture "$T/$svc-22-$h.json" "$seed" "$load" "$cost"
		printf '{"path": "%s", "service": "%s", "release": "v2", "host": "h%d", "time": "2026-11-22T%02d:00:00Z", "tags": {"load": "%s"}}\n' \
			"$T/$svc-22-$h.json" "$svc" "$((h % 2))" "$h" "$load" >>"$man"
	done
done
run pr --quiet ingest --manifest "$man"
[ $RC -eq 0 ] && ok "eight services of speedscope captures with load tags ingest" || not_ok "ingest" "$ERR"

run pr analyze --all-services --release v2 --at 2026-11-24T00:00:00Z --dry-run --json
nulls=$(jq '[.findings[] | select((.service | startswith("null")) and .direction == "regression")]
	| length' <<<"$OUT")
[ $RC -eq 0 ] && [ "$nulls" = 0 ] &&
	ok "no regression in six null services judged on a Sunday afternoon" ||
	not_ok "nulls" "rc=$RC $(jq -c '[.findings[] | select(.service | startswith("null")) |
		{service, function, direction, severity, p_value}]' <<<"$OUT") $ERR"
slow=$(jq '[.findings[] | select((.service | startswith("slower")) and .direction == "regression"
	and .function == "(whole service)")] | length' <<<"$OUT")
[ "$slow" = 2 ] && ok "the two services 1.5 times costlier per request are found" ||
	not_ok "slower" "$(jq -c '[.findings[] | select(.service | startswith("slower")) |
		{service, function, direction, severity, p_value}]' <<<"$OUT")"
finish
