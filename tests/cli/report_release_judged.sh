#!/bin/bash
# A release's report without findings says whether a run judged it: a
# release manager asking whether v2 was checked read "either it was never
# analysed or nothing moved" for the release a gate had judged and passed
# as for the baseline's release no run had judged.
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_report_release_judged
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_report_release_judged
pr --quiet db init
python3 - "$T" <<'PY'
import json, os, random, sys
out = sys.argv[1]
rnd = random.Random(4)
funcs = {'main;handler;parse': 1500, 'main;handler;computeTax': 1000, 'main;handler;db': 2000,
         'main;idle': 2600, 'main;handler;auth': 500, 'main;handler;fmt': 400}
man, k = [], 0
for rel, days in (('v1', range(1, 8)), ('v2', [9])):
    tot = sum(funcs.values())
    for day in days:
        for i in range(4 if rel == 'v2' else 2):
            k += 1
            p = os.path.join(out, 'c%04d.folded' % k)
            open(p, 'w').write(''.join('%s %d\n' % (s, max(1, round(20000 * v / tot * rnd.gauss(1, 0.04))))
                                       for s, v in funcs.items()))
            man.append(dict(path=p, service='web', release=rel, host='h%d' % (k % 4),
                            commit=('a' if rel == 'v1' else 'b') * 40,
                            time='2026-03-%02dT%02d:00:00Z' % (day, 1 + 5 * i)))
open(os.path.join(out, 'manifest.jsonl'), 'w').write(''.join(json.dumps(m) + '\n' for m in man))
PY
pr --quiet service add web --enable
pr --quiet ingest --manifest "$T/manifest.jsonl"
run pr post-deploy --service web --release v2 --commit "$(printf 'b%.0s' $(seq 40))" \
	--at 2026-03-10T00:00:00Z
[ $RC -eq 0 ] && ok "the gate passes v2" || not_ok "gate" "rc=$RC $OUT $ERR"
run pr report --service web --release v2 --format md --out -
[ $RC -eq 0 ] && grep -q 'it was judged (cpu, first at 2026-03-10T00:00:00Z) and nothing moved' <<<"${OUT//\\/}" &&
	ok "the report of the release the gate judged says so" || not_ok "judged" "$OUT $ERR"
run pr report --service web --release v1 --format md --out -
[ $RC -eq 0 ] && grep -q 'no run has judged it' <<<"$OUT" &&
	ok "the report of the baseline's release says no run judged it" || not_ok "not judged" "$OUT $ERR"
finish
