#!/bin/bash
# A missed night that closes a finding says so. computeTax of v2 rises on
# its first night only and goes away after; the nightly of 03-09 finds
# it, two nights are missed, and the nightly of 03-12 catches up 03-10
# (which closes it: went away) and 03-11. The catch-up's output said "0
# findings" for each missed night and its JSON's "closed" was empty: the
# closing was in no output at all.
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_catchup_closed
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_catchup_closed
pr --quiet db init
python3 - "$T" <<'PY'
import json, os, random, sys
out = sys.argv[1]
rnd = random.Random(9)
funcs = {'main;handler;parse': 1500, 'main;handler;computeTax': 1000, 'main;handler;validate': 800,
         'main;handler;log': 600, 'main;handler;db': 2000, 'main;idle': 2600,
         'main;handler;auth': 500, 'main;handler;fmt': 400}
phases = [('v1', ['2026-03-%02d' % d for d in range(1, 8)], 2, 1.0),
          ('v2', ['2026-03-08'], 2, 1.35), ('v2', ['2026-03-09', '2026-03-10', '2026-03-11'], 3, 0.97)]
man, k = [], 0
for rel, days, per_day, f in phases:
    w = dict(funcs)
    w['main;handler;computeTax'] *= f
    tot = sum(w.values())
    for di, day in enumerate(days):
        for i in range(per_day):
            k += 1
            p = os.path.join(out, 'c%04d.folded' % k)
            open(p, 'w').write(''.join('%s %d\n' % (s, max(1, round(20000 * v / tot * rnd.gauss(1, 0.04))))
                                       for s, v in w.items()))
            man.append(dict(path=p, service='pay-api', release=rel, host='%s-h%d' % (rel, (di * 2 + i) % 4),
                            time='%sT%02d:%02d:00Z' % (day, 1 + i * (20 // per_day), k % 60)))
open(os.path.join(out, 'manifest.jsonl'), 'w').write(''.join(json.dumps(m) + '\n' for m in man))
PY
pr --quiet service add pay-api --enable
pr --quiet ingest --manifest "$T/manifest.jsonl"
pr --quiet nightly --at 2026-03-09T00:00:00Z
fid=$(sql "select id from findings where function = 'computeTax' and direction = 'regression'")
run pr nightly --at 2026-03-12T00:00:00Z
rid=$(sql "select run_id from finding_states where finding_id = '$fid' and state = 'went_away'")
[ -n "$fid" ] && [ -n "$rid" ] &&
	grep -A1 "^closed by run $rid: 1 finding$" <<<"$OUT" | grep -q "pay-api: computeTax of release 'v2' (.*): went away" &&
	ok "a missed night's run that closed a finding names it in the catch-up's output" ||
	not_ok "catch-up text" "fid=$fid rid=$rid $OUT $ERR"
fresh_db cli_catchup_closed_json
pr --quiet db init
pr --quiet service add pay-api --enable
pr --quiet ingest --manifest "$T/manifest.jsonl"
pr --quiet nightly --at 2026-03-09T00:00:00Z
run pr nightly --at 2026-03-12T00:00:00Z --json
jq -e '[.caught_up.nights[] | .closed[] | select(.function == "computeTax" and .state == "went_away")]
	| length == 1' <<<"$OUT" >/dev/null &&
	ok "and its JSON lists it under the missed night's run" ||
	not_ok "catch-up json" "$(jq -c '.caught_up' <<<"$OUT" 2>&1) $ERR"
finish
