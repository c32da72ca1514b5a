#!/bin/bash
# A night that closes a finding says so, by name and with why: its
# terminal output, `run show` (text and JSON) and the run's Markdown,
# HTML and JSON reports list it under "Closed this run". Before, the
# only trace was a count in the run's detail, and the report of that
# night read "0 regressions" as if nothing had happened.
# v3 regresses one function two nights, then v2 runs again (a rollback).
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_closed_findings
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_closed_findings
pr --quiet db init

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 --bands 10-30 \
	--regressed 1 --seed 11 --days 10 --per-day 2 --current 3 --nights 4 >"$T/gen.txt"
fn=$(sed -n 's/.*"function":"\([^"]*\)".*/\1/p' "$T/fleet/truth.jsonl" | head -n 1)
# The fleet's captures before 2026-01-11, then three a night: v3's (the
# regression) on the 11th and 12th, v2's again on the 13th and 14th.
python3 - "$T/fleet" "$T/n" <<'PY'
import itertools, json, os, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
man = [json.loads(l) for l in open(src + '/manifest.jsonl')]
lines = [dict(m, path=os.path.join(src, m['path'])) for m in man if m['time'] < '2026-01-11']
pool = {'v2': itertools.cycle([m for m in man if m['release'] == 'v2']),
        'v3': itertools.cycle([m for m in man if m['release'] == 'v3'])}
k = 0
for day, rel in (('11', 'v3'), ('12', 'v3'), ('13', 'v2'), ('14', 'v2')):
    for i in range(3):
        m = dict(next(pool[rel]))
        k += 1
        p = os.path.join(out, 'x%04d.folded' % k)
        open(p, 'w').write(open(os.path.join(src, m['path'])).read() + 'padmain;pad%d 1\n' % k)
        m.update(path=p, host='%s-h%d' % (rel, i),
                 time='2026-01-%sT%02d:%02d:00Z' % (day, 3 + i * 6, k % 60))
        lines.append(m)
with open(os.path.join(out, 'manifest.jsonl'), 'w') as f:
    f.write(''.join(json.dumps(m) + '\n' for m in lines))
PY
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/n/manifest.jsonl" >/dev/null
for n in 12 13 14 15; do pr nightly --at "2026-01-${n}T00:00:00Z" >"$T/night-$n.txt" 2>&1; done

fid=$(sql "select id from findings where direction = 'regression' and function = '$fn'")
sev=$(sql "select severity from findings where id = '$fid'")
rid=$(sql "select run_id from finding_states where finding_id = '$fid' and state = 'fixed'")
[ -n "$fid" ] && [ -n "$rid" ] && ok "the regression is found, and closed by a rollback" ||
	not_ok "closed" "$(sql "select id, function, state, fixed_by from findings")"
night=$(grep -l "run-$rid-" "$T"/night-*.txt)
why="rolled back to release 'v2'"
want=$(printf '  %-6s svc-000: %s of release %s (%s regression): %s' "$fid" "$fn" "'v3'" "$sev" \
	"$why")
n=$(sql "select count(*) from finding_states where run_id = $rid and state = 'fixed'")
grep -q "^closed by this run: $n findings\?$" "$night" &&
	[ "$(grep -A1 "^closed by this run" "$night" | tail -n 1 | cut -c1-${#want})" = "$want" ] &&
	ok "the night that closed it names it first and says why" ||
	not_ok "night output" "$want" "$(cat "$night")"
! grep -q "closed by this run" "$T/night-12.txt" &&
	ok "a night that closed nothing says nothing of it" ||
	not_ok "no closed" "$(cat "$T/night-12.txt")"

run pr run show "$rid"
grep -qF "$want" <<<"$OUT" && ok "run show lists it" || not_ok "run show" "rc=$RC $OUT $ERR"
run pr run show "$rid" --json
[ "$(jq -r ".closed[0].id, .closed[0].state, .closed[0].function" <<<"$OUT")" = \
	"$(printf '%s\nfixed\n%s' "$fid" "$fn")" ] &&
	jq -e ".closed[0].reason | startswith(\"$why\")" <<<"$OUT" >/dev/null &&
	ok "run show --json has it in closed" || not_ok "run show json" "rc=$RC $OUT $ERR"

run pr report --run "$rid" --format md --out -
mdfn=$(sed 's/[_*()]/\\&/g' <<<"$fn")
grep -qF "**Closed this run** ($n):" <<<"$OUT" &&
	grep -qF -- "- finding $fid, svc-000: $mdfn of release v3 ($sev regression): $why" \
		<<<"$OUT" && ok "the Markdown report lists it" || not_ok "md" "rc=$RC $OUT $ERR"
run pr report --run "$rid" --format json --out -
[ "$(jq -r '.closed | length' <<<"$OUT")" = "$n" ] &&
	[ "$(jq -r ".closed[0].id, .closed[0].release, .closed[0].direction" <<<"$OUT" |
		tr '\n' ' ')" = "$fid v3 regression " ] &&
	ok "the JSON report lists it" || not_ok "json" "rc=$RC $OUT $ERR"
run pr report --run "$rid" --format html --out -
grep -q '<section id="closed"><h2>Closed this run</h2>' <<<"$OUT" &&
	grep -q "<td class=\"num\">$fid</td>.*rolled back to release" <<<"$OUT" &&
	ok "the HTML report lists it" || not_ok "html" "rc=$RC $(grep -o 'id="closed".*' <<<"$OUT")"
run pr report --run "$(sql "select min(id) from runs where kind = 'nightly'")" --format json --out -
jq -e '.closed == []' <<<"$OUT" >/dev/null && ok "a run that closed nothing lists none" ||
	not_ok "json none" "$OUT"
grep -qF "**Closed this run** ($n):" "$HOME_DIR"/reports/run-"$rid"-*[0-9a-f].md &&
	ok "so does the Markdown report the night wrote" || not_ok "written md"
finish
