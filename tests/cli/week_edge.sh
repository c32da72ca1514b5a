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

# The captures, written by one awk (a few processes per capture made this
# test slow): for each service, 14 days to Thursday 19 November 2026, 4
# captures a day, three releases each on two hosts; then Sunday 22
# November, 13:00 to 19:00, the weekend's last hours, as release v2.
# Each capture is a speedscope CPU profile of 60 s (10 ms samples) of 12
# functions at a traffic load drawn from its seed, each function COST
# times as costly: 1 on weekdays, 1.3 at weekends, 1.95 for the slower
# services' v2.
man=$T/manifest.jsonl
for svc in null-0 null-1 null-2 null-3 null-4 null-5 slower-0 slower-1; do
	pr --quiet service add "$svc" --enable
done
awk -v dir="$T" -v man="$man" 'function gauss() {
		return sqrt(-2 * log(1 - rand())) * cos(6.283185307 * rand()) }
	function drawload(seed) {
		srand(seed)
		return sprintf("%.2f", 100 * exp(0.3 * (rand() - 0.5) * 3.4))
	}
	function capture(file, seed, load, cost, i, k, s, c, mu, n, w, sep) {
		srand(seed)
		for (i = 0; i < 12; i++) { w[i] = 1 / (i + 1); s += w[i] }
		c = cost * exp(0.05 * gauss())
		for (i = 0; i < 12; i++) {
			mu = 1200 * load / 100 * c * w[i] / s * exp(0.05 * gauss())
			n[i] = int(mu + sqrt(mu) * gauss() + 0.5)
		}
		printf "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\"," >file
		printf " \"shared\": {\"frames\": [{\"name\": \"main\"}" >file
		for (i = 0; i < 12; i++) printf ", {\"name\": \"f%02d\"}", i >file
		printf "]}, \"profiles\": [{\"type\": \"sampled\", \"name\": \"t\"," >file
		printf " \"unit\": \"nanoseconds\", \"startValue\": 0, \"endValue\": 60000000000," >file
		printf " \"samples\": [" >file
		sep = ""
		for (i = 0; i < 12; i++)
			for (k = 0; k < n[i]; k++) { printf "%s[0, %d]", sep, i + 1 >file; sep = ", " }
		printf "], \"weights\": [" >file
		sep = ""
		for (i = 0; i < 12; i++)
			for (k = 0; k < n[i]; k++) { printf "%s10000000", sep >file; sep = ", " }
		print "]}]}" >file
		close(file)
	}
	BEGIN {
		seed = 100
		split("null-0 null-1 null-2 null-3 null-4 null-5 slower-0 slower-1", svcs, " ")
		for (v = 1; v <= 8; v++) {
			svc = svcs[v]
			for (d = 6; d <= 19; d++) {
				# 22 November 2026 is a Sunday: day 6 and 7 of the week are the weekend.
				dow = ((d - 22) % 7 + 7) % 7
				if (dow == 0) dow = 7
				for (h = 2; h <= 20; h += 6) {
					seed++
					at = sprintf("2026-11-%02dT%02d:00:00Z", d, h)
					l = drawload(seed)
					f = sprintf("%s/%s-%d-%d.json", dir, svc, d, h)
					capture(f, seed, l, dow >= 6 ? 1.3 : 1)
					printf "{\"path\": \"%s\", \"service\": \"%s\", \"release\": \"b%d\", \"host\": \"h%d\", \"time\": \"%s\", \"tags\": {\"load\": \"%s\"}}\n", f, svc, int((d - 6) / 5) + 1, int(h / 6) % 2, at, l >man
				}
			}
			for (h = 13; h <= 19; h += 2) {
				seed++
				l = drawload(seed)
				f = sprintf("%s/%s-22-%d.json", dir, svc, h)
				capture(f, seed, l, svc ~ /^slower-/ ? 1.95 : 1.3)
				printf "{\"path\": \"%s\", \"service\": \"%s\", \"release\": \"v2\", \"host\": \"h%d\", \"time\": \"2026-11-22T%02d:00:00Z\", \"tags\": {\"load\": \"%s\"}}\n", f, svc, h % 2, h, l >man
			}
		}
	}'
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
