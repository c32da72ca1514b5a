#!/bin/bash
# The fleet simulator (tests/sim/fleetgen): options and usage errors, the
# layout and format of what it writes, realism of the profiles, injected
# changes checked both by its own --verify and by an independent awk
# reading of the folded files, byte-identical output for the same seed,
# and --verify failing on a fleet that was tampered with.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
G=${BUILD:-build}/sim/fleetgen
T=$PROFREG_TEST_TMP/cli_fleetgen
rm -rf "$T" && mkdir -p "$T"

if [ ! -x "$G" ]; then
	not_ok "the generator is built" "missing $G (make $G)"
	finish
	exit 1
fi
ok "the generator is built"

# --- options ------------------------------------------------------------
run "$G" --help
missing=""
for o in out seed services functions days per-day current samples cv host-effect \
	hosts regressed factors bands improved improve-factors start release-every \
	load-cv mix-cv daily weekly skew churn verify verbose help; do
	grep -q -- "--$o" <<<"$OUT" || missing="$missing $o"
done
[ $RC -eq 0 ] && [ -z "$missing" ] && ok "--help lists every option" ||
	not_ok "--help lists every option" "rc=$RC missing:$missing"

bad_usage() { # DESCRIPTION EXPECTED-IN-MESSAGE ARGS...
	desc=$1 want=$2
	shift 2
	run "$G" "$@"
	if [ $RC -eq 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] && [[ $ERR == *"$want"* ]]; then
		ok "$desc: exit 2 with one line"
	else
		not_ok "$desc: exit 2 with one line" "rc=$RC stderr: $ERR"
	fi
}
bad_usage "an unknown option" "'--bogus'" --out "$T/x" --bogus
bad_usage "no --out" "--out" --services 3
bad_usage "a missing value" "'--services' needs a value" --out "$T/x" --services
bad_usage "a service count of zero" "--services" --out "$T/x" --services 0
bad_usage "a number with trailing junk" "'12abc'" --out "$T/x" --functions 12abc
bad_usage "a factor that is not a number" "'x'" --out "$T/x" --factors 1.1,x
bad_usage "a factor below one" "--factors" --out "$T/x" --factors 0.9
bad_usage "an empty list item" "empty item" --out "$T/x" --factors 1.1,,2
bad_usage "an upside-down band" "--bands" --out "$T/x" --bands 10-1
bad_usage "a band without a dash" "LOW-HIGH" --out "$T/x" --bands 5
bad_usage "fractions over one" "must not exceed 1" --out "$T/x" --regressed 0.8 --improved 0.5
bad_usage "an impossible date" "'2026-02-30'" --out "$T/x" --start 2026-02-30
bad_usage "a negative cv" "--cv" --out "$T/x" --cv -1
bad_usage "both --out and --verify" "not both" --out "$T/x" --verify "$T/y"
bad_usage "a stray argument" "'stray'" --out "$T/x" stray
[ ! -e "$T/x" ] && ok "a usage error writes nothing" || not_ok "a usage error writes nothing"

run "$G" --out /dev/null/fleet --services 1
[ $RC -eq 3 ] && [[ $ERR == *"/dev/null"* ]] && ok "an unwritable --out is exit 3 naming the path" ||
	not_ok "unwritable --out" "rc=$RC $ERR"

# --- a small fleet --------------------------------------------------------
A=$T/a
SMALL=(--services 6 --functions 60 --days 7 --per-day 2 --current 3 --samples 5000
	--start 2026-03-01 --seed 42)
run "$G" --out "$A" "${SMALL[@]}"
SUMMARY=$OUT
[ $RC -eq 0 ] && ok "generate a small fleet" || not_ok "generate a small fleet" "rc=$RC $ERR"
[[ $SUMMARY == *"at: 2026-03-09T00:00:00Z"* ]] && [[ $SUMMARY == *"release: v2"* ]] &&
	ok "the summary gives --at (end of the night after 7 days) and the current release" ||
	not_ok "summary" "$SUMMARY"

[ "$(cat "$A/services.txt")" = "$(printf 'svc-%03d\n' 0 1 2 3 4 5)" ] &&
	ok "services.txt names the services" || not_ok "services.txt" "$(cat "$A/services.txt")"
[ "$(wc -l <"$A/manifest.jsonl")" -eq $((6 * (7 * 2 + 3))) ] &&
	ok "the manifest has one line per capture" || not_ok "manifest lines" "$(wc -l <"$A/manifest.jsonl")"
[ "$(wc -l <"$A/truth.jsonl")" -eq 6 ] && ok "the truth has one line per service" ||
	not_ok "truth lines"

# Every manifest line in exactly the shape profreg's ingest reads.
LINE_RE='^\{"path":"svc-[0-9]{3}/c[0-9]{3}\.folded","service":"svc-[0-9]{3}","release":"v[0-9]+","commit":"[0-9a-f]{40}","host":"svc-[0-9]{3}-[0-9a-f]{6}-[0-9a-z]{5}","time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z","type":"cpu","format":"folded"\}$'
bad=$(grep -Evc "$LINE_RE" "$A/manifest.jsonl")
[ "$bad" -eq 0 ] && ok "every manifest line has path, service, release, commit, host, time, type" ||
	not_ok "manifest line shape" "$bad lines do not match"
bad=$(awk -F'"' '{ split($4, p, "/"); if (p[1] != $8 || index($20, $8) != 1) n++ } END { print n + 0 }' "$A/manifest.jsonl")
[ "$bad" -eq 0 ] && ok "each capture's path and host belong to its service" || not_ok "path/service" "$bad"

if python3 -c 1 >/dev/null 2>&1; then
	run python3 -c '
import json, sys
for name in sys.argv[1:]:
    for line in open(name):
        o = json.loads(line)
        assert isinstance(o, dict), name
' "$A/manifest.jsonl" "$A/truth.jsonl"
	[ $RC -eq 0 ] && ok "manifest and truth lines parse as JSON (python3)" || not_ok "json" "$ERR"
else
	ok "manifest and truth lines parse as JSON # SKIP no python3"
fi

missing=0
while read -r p; do
	[ -s "$A/$p" ] || missing=$((missing + 1))
done < <(sed 's/^{"path":"\([^"]*\)".*/\1/' "$A/manifest.jsonl")
[ $missing -eq 0 ] && ok "every listed capture exists and is not empty" || not_ok "missing captures" "$missing"
[ "$(find "$A" -name '*.folded' | wc -l)" -eq "$(wc -l <"$A/manifest.jsonl")" ] &&
	ok "no capture on disk is left out of the manifest" || not_ok "stray captures"

# Baseline captures before the night, current ones inside it, in order.
bad=$(awk -F'"' '
	{ svc = $8; rel = $12; t = $24 }
	rel == "v2" && (t < "2026-03-08T00:00:00Z" || t >= "2026-03-09T00:00:00Z") { n++ }
	rel != "v2" && (t < "2026-03-01T00:00:00Z" || t >= "2026-03-08T00:00:00Z") { n++ }
	svc == last && t <= lastt { n++ }
	{ last = svc; lastt = t }
	END { print n + 0 }' "$A/manifest.jsonl")
[ "$bad" -eq 0 ] && ok "capture times fall in their period, in order" || not_ok "capture times" "$bad"
[ "$(grep -c '"release":"v2"' "$A/manifest.jsonl")" -eq $((6 * 3)) ] &&
	ok "the night's captures carry the new release" || not_ok "current release count"

[ "$(grep -c '"regressed":true' "$A/truth.jsonl")" -eq 3 ] &&
	ok "--regressed 0.5 of 6 services regresses exactly 3" || not_ok "regressed count"
bad=$(grep '"regressed":true' "$A/truth.jsonl" |
	grep -Evc '"function":"[^"]+","factor":(1\.1|1\.25|1\.5|2),"baseline_share":[0-9.e-]+,"current_share":[0-9.e-]+,"band":"(0\.1-1|1-10|10-30)%"')
[ "$bad" -eq 0 ] && ok "each regressed service names its function, factor, shares and band" ||
	not_ok "truth fields" "$bad"
bad=$(grep '"regressed":false' "$A/truth.jsonl" | grep -vc '"function":null')
[ "$bad" -eq 0 ] && ok "a null service names no function" || not_ok "null truth" "$bad"

# --- realism ------------------------------------------------------------
# Folded lines: frames joined by ';', 3 to 20 deep, a positive count.
bad=$(cat "$A"/svc-*/*.folded | awk '
	!/ [1-9][0-9]*$/ { n++; next }
	{ sub(/ [0-9]+$/, ""); d = split($0, f, ";"); if (d < 3 || d > 20) n++ }
	END { print n + 0 }')
[ "$bad" -eq 0 ] && ok "every stack is 3 to 20 frames with a positive count" || not_ok "stack shape" "$bad"
# Several stacks end in the same function (a routine called from several
# places), in every service.
few=0
for s in "$A"/svc-*; do
	n=$(awk '{ sub(/ [0-9]+$/, ""); d = split($0, f, ";"); c[f[d]]++ }
		END { for (k in c) if (c[k] > 1) n++; print n + 0 }' "$s/c000.folded")
	[ "$n" -ge 1 ] || few=$((few + 1))
done
[ $few -eq 0 ] && ok "in every service some function ends several stacks" || not_ok "shared leaves" "$few"
# Heavy-tailed self time: the top tenth of functions holds most of it.
heavy=0 light=0
for s in "$A"/svc-*; do
	top=$(cat "$s"/c00*.folded | awk '{ c = $NF; sub(/ [0-9]+$/, ""); d = split($0, f, ";"); s[f[d]] += c; t += c }
		END { for (k in s) print s[k], t }' | sort -rn | awk '
		{ v[NR] = $1; t = $2 } END { k = int(NR / 10); if (k < 1) k = 1; for (i = 1; i <= k; i++) s += v[i]; printf "%d\n", 100 * s / t }')
	[ "$top" -ge 50 ] && heavy=$((heavy + 1))
	[ "$top" -lt 30 ] && light=$((light + 1))
done
[ $light -eq 0 ] && [ $heavy -ge 3 ] &&
	ok "self time is heavy-tailed (top tenth of functions >= 30% everywhere, >= 50% mostly)" ||
	not_ok "heavy tail" "heavy=$heavy light=$light"

# --- the injected changes -------------------------------------------------
run "$G" --verify "$A"
[ $RC -eq 0 ] && [[ $OUT == *"3 changes checked, 0 problems"* ]] &&
	ok "--verify finds every injected regression where the truth says" || not_ok "verify" "$OUT $ERR"

# Independently of --verify: two services regressed by 2x at a 10-30%
# share. A capture's sample count follows CPU cost, so the function's mean
# count per capture doubles; its share rises to 2s/(1+s) as truth says.
R=$T/r
run "$G" --out "$R" --services 2 --regressed 1 --factors 2 --bands 10-30 --days 7 --seed 3
[ $RC -eq 0 ] && ok "generate a fleet of 2x regressions" || not_ok "2x fleet" "$ERR"
for svc in svc-000 svc-001; do
	t=$(grep "\"service\":\"$svc\"" "$R/truth.jsonl")
	fn=$(sed 's/.*"function":"\([^"]*\)".*/\1/' <<<"$t")
	want=$(sed 's/.*"baseline_share":\([^,]*\),"current_share":\([^,]*\),.*/\2 \1/' <<<"$t" | awk '{ print $1 / $2 }')
	got=$(grep "\"service\":\"$svc\"" "$R/manifest.jsonl" | awk -F'"' '{ print $4, $12 }' |
		while read -r p rel; do
			awk -v fn="$fn" -v cur=$([ "$rel" = v2 ] && echo 1 || echo 0) '
				{ c = $NF; sub(/ [0-9]+$/, ""); d = split($0, f, ";"); t += c; if (f[d] == fn) x += c }
				END { print cur, x, t }' "$R/$p"
		done | awk '{ n[$1]++; x[$1] += $2; s[$1] += $2 / $3 }
			END { printf "%.4f %.4f\n", (x[1] / n[1]) / (x[0] / n[0]), (s[1] / n[1]) / (s[0] / n[0]) }')
	read -r count_ratio share_ratio <<<"$got"
	if awk -v c="$count_ratio" -v s="$share_ratio" -v w="$want" \
		'BEGIN { exit !(c > 1.85 && c < 2.15 && s / w > 0.93 && s / w < 1.07) }'; then
		ok "$svc: the function's count per capture doubled and its share rose as truth says"
	else
		not_ok "$svc: 2x regression in the data" "count ratio $count_ratio, share ratio $share_ratio, truth $want ($fn)"
	fi
done

# Improvements: a function gets cheaper; its count falls by the factor.
I=$T/i
run "$G" --out "$I" --services 4 --regressed 0 --improved 1 --improve-factors 0.5 --days 7 --seed 9
[ $RC -eq 0 ] && [ "$(grep -c '"improved_function":"' "$I/truth.jsonl")" -eq 4 ] &&
	[ "$(grep -c '"regressed":true' "$I/truth.jsonl")" -eq 0 ] &&
	ok "--improved names an improved function and no regression" || not_ok "improved truth" "$ERR"
run "$G" --verify "$I"
[ $RC -eq 0 ] && [[ $OUT == *"4 changes checked, 0 problems"* ]] &&
	ok "--verify finds every improvement" || not_ok "verify improved" "$OUT $ERR"

# Every noise source on at once still matches the truth.
N=$T/n
run "$G" --out "$N" --services 8 --functions 80 --host-effect 0.1 --mix-cv 0.2 --load-cv 0.15 \
	--cv 0.2 --improved 0.25 --days 7 --per-day 3 --seed 5
[ $RC -eq 0 ] && ok "generate with host effect, traffic mix and load noise" || not_ok "noisy fleet" "$ERR"
run "$G" --verify "$N"
[ $RC -eq 0 ] && ok "--verify passes on the noisy fleet" || not_ok "verify noisy" "$OUT $ERR"

# A day's mix shared by its captures: they agree with each other more than
# with another day's; the truth still holds; off, the fleet is as before.
D=$T/d
run "$G" --out "$D" --services 2 --functions 50 --regressed 0 --cv 0.06 --per-day 3 --daily 0.3 \
	--seed 11
[ $RC -eq 0 ] && grep -q '"daily":0.3' "$D/truth.jsonl" && ok "--daily is written to the truth" ||
	not_ok "daily truth" "$ERR"
# The share of c000's largest stack in each of the first 39 captures (13 days, three a day).
top=$(sort -t' ' -k2 -n -r "$D/svc-000/c000.folded" | head -n 1 | sed 's/ [0-9]*$//')
spread=$(for f in "$D"/svc-000/c0[0-3][0-9].folded; do
	[ "$f" = "$D/svc-000/c039.folded" ] && break
	awk -v k="$top" '{ n = $NF; t += n; sub(/ [0-9]+$/, ""); if ($0 == k) v = n }
		END { print v / t }' "$f"
done | awk '
	{ s[NR] = $1 }
	END { # within-day against between-day spread of the day means
		for (i = 1; i + 2 <= NR; i += 3) {
			m = (s[i] + s[i+1] + s[i+2]) / 3; dm[++nd] = m
			for (j = i; j < i + 3; j++) wss += (s[j] - m) ^ 2
		}
		for (k = 1; k <= nd; k++) gm += dm[k] / nd
		for (k = 1; k <= nd; k++) bss += (dm[k] - gm) ^ 2
		printf "%.6f %.6f\n", sqrt(wss / (2 * nd)), sqrt(bss / (nd - 1))
	}')
awk -v s="$spread" 'BEGIN { split(s, x, " "); exit !(x[2] > 2 * x[1] / sqrt(3)) }' &&
	ok "--daily: a day's captures agree more than days do (within, between: $spread)" ||
	not_ok "daily spread" "$spread"
run "$G" --verify "$D"
[ $RC -eq 0 ] && ok "--verify passes on a --daily fleet" || not_ok "verify daily" "$OUT $ERR"
run "$G" --out "$T/d0" "${SMALL[@]}" --daily 0
diff -r "$A" "$T/d0" >/dev/null && ok "--daily 0 gives the fleet without it, byte for byte" ||
	not_ok "daily 0" "$(diff -rq "$A" "$T/d0" | head -3)"

# Code that changes between baseline releases: the release after v1 drops
# code paths and adds functions, and the new release runs v2's code.
C=$T/churn
run "$G" --out "$C" --services 4 --functions 60 --regressed 0.5 --churn 2 --seed 9
[ $RC -eq 0 ] && grep -q '"churn":2' "$C/truth.jsonl" && ok "--churn is written to the truth" ||
	not_ok "churn truth" "$ERR"
leaves() { # SERVICE RELEASE: the leaf functions of its captures of that release
	grep "\"service\":\"$1\",\"release\":\"$2\"" "$C/manifest.jsonl" |
		sed 's/^{"path":"\([^"]*\)".*/\1/' | while read -r p; do
		sed 's/ [0-9]*$//; s/.*;//' "$C/$p"
	done | sort -u
}
churned=""
for s in svc-000 svc-001 svc-002 svc-003; do
	leaves $s v1 >"$T/l1"
	leaves $s v2 >"$T/l2"
	leaves $s v3 >"$T/l3"
	gone=$(comm -23 "$T/l1" "$T/l2" | wc -l) came=$(comm -13 "$T/l1" "$T/l2" | wc -l)
	new3=$(comm -13 "$T/l2" "$T/l3" | wc -l) back=$(comm -12 <(comm -23 "$T/l1" "$T/l2") "$T/l3" | wc -l)
	churned="$churned $s=$gone,$came,$new3,$back"
done
# Each service: at least the 2 paths gone and 2 functions come (a rare
# function of v1 may also be missing from v2's captures by chance), none
# new in v3 and none of the removed back.
awk -v c="$churned" 'BEGIN { n = split(c, x, " "); for (i = 1; i <= n; i++) {
	split(x[i], z, "="); split(z[2], y, ",")
	if (y[1] < 2 || y[2] != 2 || y[3] != 0 || y[4] != 0) exit 1 }
	exit n != 4 }' && ok "--churn 2: v2 drops 2 code paths and adds 2 functions; v3 runs v2's code" ||
	not_ok "churn in the captures" "$churned"
run "$G" --verify "$C"
[ $RC -eq 0 ] && ok "--verify passes on a fleet with churn" || not_ok "verify churn" "$OUT $ERR"
run "$G" --out "$T/c0" "${SMALL[@]}" --churn 0
diff -r "$A" "$T/c0" >/dev/null && ok "--churn 0 gives the fleet without it, byte for byte" ||
	not_ok "churn 0" "$(diff -rq "$A" "$T/c0" | head -3)"

# --- determinism ----------------------------------------------------------
run "$G" --out "$T/b" "${SMALL[@]}"
diff -r "$A" "$T/b" >/dev/null && ok "the same seed gives byte-identical output" ||
	not_ok "same seed, same bytes" "$(diff -rq "$A" "$T/b" | head -3)"
run "$G" --out "$T/c" "${SMALL[@]}" --seed 43
! cmp -s "$A/manifest.jsonl" "$T/c/manifest.jsonl" && ! cmp -s "$A/svc-000/c000.folded" "$T/c/svc-000/c000.folded" &&
	ok "another seed gives another fleet" || not_ok "seed has no effect"
run "$G" --out "$T/b" "${SMALL[@]}"
diff -r "$A" "$T/b" >/dev/null && ok "regenerating into the same directory gives the same fleet" ||
	not_ok "regenerate in place"

# --- --verify can fail ------------------------------------------------------
# Take the regression out of one service's current captures.
svc=$(grep '"regressed":true' "$T/b/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
fn=$(grep "\"service\":\"$svc\"" "$T/b/truth.jsonl" | sed 's/.*"function":"\([^"]*\)".*/\1/')
grep "\"service\":\"$svc\",\"release\":\"v2\"" "$T/b/manifest.jsonl" | sed 's/^{"path":"\([^"]*\)".*/\1/' |
	while read -r p; do
		awk -v fn="$fn" '{ l = $0; sub(/ [0-9]+$/, "", l); d = split(l, f, ";"); if (f[d] != fn) print }' \
			"$T/b/$p" >"$T/b/$p.new" && mv "$T/b/$p.new" "$T/b/$p"
	done
run "$G" --verify "$T/b"
[ $RC -eq 1 ] && [[ $ERR == *"$svc"* ]] && ok "--verify fails, naming the service, when a regression is missing" ||
	not_ok "verify catches a missing regression" "rc=$RC $ERR"
cp -r "$A" "$T/d"
sed -i '5s/"time":"/"time":"x/' "$T/d/manifest.jsonl"
run "$G" --verify "$T/d"
[ $RC -eq 1 ] && [[ $ERR == *"line 5"* ]] && ok "--verify fails on a bad manifest time, naming the line" ||
	not_ok "verify catches a bad time" "rc=$RC $ERR"
cp -r "$A" "$T/e"
sed -i '2s/}$/,/' "$T/e/manifest.jsonl"
run "$G" --verify "$T/e"
[ $RC -eq 1 ] && [[ $ERR == *"line 2: not a flat JSON object"* ]] &&
	ok "--verify fails on a manifest line that is not JSON" || not_ok "verify catches bad JSON" "rc=$RC $ERR"
run "$G" --verify "$T/nonexistent"
[ $RC -eq 1 ] && [[ $ERR == *"nonexistent"* ]] && ok "--verify of a missing directory fails naming it" ||
	not_ok "verify missing dir" "rc=$RC $ERR"

# --- speed ------------------------------------------------------------------
# 20 default-sized services (a tenth of the default fleet); generation
# scales linearly, so this bounds the full fleet at ten times as long.
start=$(date +%s%N)
run "$G" --out "$T/speed" --services 20
ms=$((($(date +%s%N) - start) / 1000000))
[ $RC -eq 0 ] && [ $ms -lt 5000 ] && ok "20 default services in ${ms} ms (under 5 s)" ||
	not_ok "speed" "rc=$RC ${ms} ms"

rm -rf "$T"
finish
