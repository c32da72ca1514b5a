#!/bin/bash
# A closed finding whose baseline retention collected: once a finding
# closes, the pins on its baseline captures lift and retention may cut
# them to a summary or delete them; its current captures stay forensic.
# `finding show` and `report --finding` then say which of its captures
# are left and why the comparison cannot be reproduced. Before, show
# printed "the pinned captures no longer hold this function" (the
# current captures still held it) and the report drew a differential
# flame graph against no baseline: every frame "baseline 0.000%", new.
# v3 regresses one function two nights, then v2 runs again (a rollback).
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_evidence_gone
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_evidence_gone
pr --quiet db init

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 --bands 10-30 \
	--regressed 1 --seed 11 --days 10 --per-day 2 --current 3 --nights 4 >"$T/gen.txt"
fn=$(sed -n 's/.*"function":"\([^"]*\)".*/\1/p' "$T/fleet/truth.jsonl" | head -n 1)
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
for n in 12 13 14 15; do pr nightly --at "2026-01-${n}T00:00:00Z" >>"$T/nights.txt" 2>&1; done

fid=$(sql "select id from findings where direction = 'regression' and function = '$fn'")
ids() { sql "select string_agg(x, ',') from jsonb_array_elements_text(
	(select detail -> 'captures' -> '$1' from findings where id = '$fid')) x"; }
nb=$(sql "select jsonb_array_length(detail -> 'captures' -> 'baseline') from findings
	where id = '$fid'")
nc=$(sql "select jsonb_array_length(detail -> 'captures' -> 'current') from findings
	where id = '$fid'")
[ -n "$fid" ] && [ "$(sql "select status from findings where id = '$fid'")" = resolved ] &&
	[ "$nb" -gt 2 ] && [ "$nc" -gt 0 ] && ok "the regression is found and closed by a rollback" ||
	not_ok "closed" "$(sql "select id, function, state, status from findings")"
run pr finding show "$fid"
grep -q "^reproduced [0-9.]*% -> " <<<"$OUT" && ! grep -q "^captures" <<<"$OUT" &&
	ok "with its captures all there it reproduces, and says nothing of them" ||
	not_ok "show whole" "rc=$RC $OUT $ERR"

closed=$(sql "select to_char(to_timestamp((detail ->> 'closed_at_us')::bigint / 1e6)
	at time zone 'UTC', 'YYYY-MM-DD') from findings where id = '$fid'")

# 1. Retention cuts the baseline to summaries of the top two functions.
echo '{"retention": {"hot_days": 1, "summary_days": 3650, "summary_top": 2}}' >"$T/cut.json"
run pr --config "$T/cut.json" retention --at 2026-02-01T00:00:00Z
[ $RC -eq 0 ] && [ "$(sql "select count(*) from profiles where id in ($(ids baseline))
	and retention_class = 'summary'")" = "$nb" ] &&
	[ "$(sql "select count(*) from profiles where id in ($(ids current))
	and retention_class = 'forensic' and blob_deleted_at is null")" = "$nc" ] &&
	ok "retention cuts the closed finding's baseline to summaries, not its evidence" ||
	not_ok "cut" "rc=$RC $ERR $(sql "select id, retention_class from profiles")"
run pr finding show "$fid"
grep -qF "captures  $nb of $nb baseline and $nc of $nc current captures left; the $nb baseline captures were cut to a summary by retention after the finding closed on $closed" <<<"$OUT" &&
	! grep -q "no longer hold this function" <<<"$OUT" &&
	ok "finding show says its baseline was cut to summaries" ||
	not_ok "show cut" "rc=$RC $OUT $ERR"
run pr report --finding "$fid" --format html --out -
grep -qF "baseline captures were cut to a summary" <<<"$OUT" &&
	! grep -q 'baseline 0\.000%' <<<"$OUT" &&
	ok "the report says so where the flame graph would be" ||
	not_ok "report cut" "rc=$RC $ERR $(grep -o '<h3>Differential.*' <<<"$OUT" | head -n 3)"

# 2. Retention deletes the baseline outright.
echo '{"retention": {"hot_days": 1, "summary_days": 15}}' >"$T/del.json"
run pr --config "$T/del.json" retention --at 2026-03-01T00:00:00Z
[ $RC -eq 0 ] && [ "$(sql "select count(*) from profiles where id in ($(ids baseline))")" = 0 ] &&
	[ "$(sql "select count(*) from profiles where id in ($(ids current))")" = "$nc" ] &&
	ok "retention deletes the closed finding's baseline, not its evidence" ||
	not_ok "delete" "rc=$RC $ERR"
run pr finding show "$fid"
[ $RC -eq 0 ] &&
	grep -qx "captures  0 of $nb baseline and $nc of $nc current captures left" <<<"$OUT" &&
	grep -qF "reproduced: cannot be, the $nb baseline captures were deleted by retention after the finding closed on $closed" <<<"$OUT" &&
	! grep -q "no longer hold this function" <<<"$OUT" &&
	ok "finding show says the baseline was deleted, not that the captures lack the function" ||
	not_ok "show deleted" "rc=$RC $OUT $ERR"
run pr finding show "$fid" --json
[ "$(jq -r '.captures_left.baseline.stored, .captures_left.baseline.left, .captures_left.current.left,
	.reproduced' <<<"$OUT" | tr '\n' ' ')" = "$nb 0 $nc null " ] &&
	jq -e '.not_reproduced | test("deleted by retention")' <<<"$OUT" >/dev/null &&
	ok "--json counts what is left and says why it is not reproduced" ||
	not_ok "show json" "rc=$RC $OUT $ERR"
run pr report --finding "$fid" --format html --out -
want="The $nb baseline captures were deleted by retention after the finding closed on $closed: no differential flame graph"
[ $RC -eq 0 ] && grep -qF "$want" <<<"$OUT" && ! grep -q 'baseline 0\.000%' <<<"$OUT" &&
	ok "the report says so where the flame graph would be, and draws none" ||
	not_ok "report deleted" "rc=$RC $ERR $(grep -o '<h3>Differential.*' <<<"$OUT" | head -n 3)"
grep -qF "<summary>0 of $nb baseline and $nc of $nc current captures left" <<<"$OUT" &&
	ok "the captures table says how many of each side are left" ||
	not_ok "report table" "$(grep -o '<h3>Captures.*' <<<"$OUT" | head -n 3)"
run pr report --finding "$fid" --format json --out -
jq -e ".findings[0].flame == null and .findings[0].baseline_captures_deleted == $nb and
	(.findings[0].flame_note | startswith(\"The $nb baseline captures were deleted\"))" \
	<<<"$OUT" >/dev/null && ok "so does the JSON report" ||
	not_ok "report json" "rc=$RC $(jq -c '.findings[0] | del(.points, .captures)' <<<"$OUT")"
finish
