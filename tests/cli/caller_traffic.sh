#!/bin/bash
# Traffic to one caller is not a regression of the functions under it.
# A service of three endpoints, each with its own code and eight
# functions below it (folded stacks written here, Poisson counts, a
# fixed seed). A release that changed nothing is judged on two nights
# when one endpoint took 2.5 times its usual requests: every function
# under it rose alike, and each of them, the largest from 12% to 24%,
# was a regression, the largest critical. Judged within that endpoint
# (their self over its total), they moved by nothing: no regression of
# medium or above, and a note says why. Each endpoint's traffic varies
# 15% from capture to capture, as a day's mix does, which is how the
# functions under it are known to be its. The same endpoint with one of
# its functions twice as slow, and its traffic as usual, is still a
# regression; so is a function three times slower under another
# endpoint on the day the first took 2.5 times its requests (the totals
# alone say only that the busy endpoint is big enough to hold it).
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_caller_traffic
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_caller_traffic
pr --quiet db init
python3 - "$T" <<'PY'
import json, math, os, random, sys
out = sys.argv[1]
rng = random.Random(7)
def poisson(lam):
    if lam > 50:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    l, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= l:
            return k
        k += 1
# endpoint -> (own cost, {function: cost}); function names carry the endpoint's letter
tree = {e: (4.0, {'pay/%s.step%d' % (e, i): w for i, w in enumerate([30, 12, 9, 7, 5, 4, 3, 2])})
        for e in 'abc'}
def capture(path, traffic, slow):
    lines = []
    for e, (own, fns) in sorted(tree.items()):
        t = traffic.get(e, 1.0) * rng.lognormvariate(0, 0.15)
        lines.append('main;api.handle_%s %d' % (e, poisson(60 * own * t)))
        for f, w in fns.items():
            n = poisson(60 * w * t * slow.get(f, 1.0) * rng.lognormvariate(0, 0.08))
            lines.append('main;api.handle_%s;%s %d' % (e, f, n))
    open(path, 'w').write('\n'.join(lines) + '\n')
for name, traffic, slow in (('traffic', {'a': 2.5}, {}), ('slow', {}, {'pay/a.step0': 2.0}),
                            ('beside', {'a': 2.5}, {'pay/b.step3': 3.0})):
    d = os.path.join(out, name)
    os.makedirs(d)
    man = []
    for day in range(14):
        for h in (3, 15):
            p = os.path.join(d, 'b%02d%02d.folded' % (day, h))
            capture(p, {}, {})
            man.append({'path': p, 'service': 'svc-' + name, 'release': 'v1',
                        'host': 'h%d' % (day % 4), 'time': '2026-03-%02dT%02d:00:00Z' % (day + 1, h)})
    for day in (15, 16):
        for h in (1, 7, 13, 19):
            p = os.path.join(d, 'c%02d%02d.folded' % (day, h))
            capture(p, traffic, slow)
            man.append({'path': p, 'service': 'svc-' + name, 'release': 'v2',
                        'host': 'h%d' % (h % 4), 'time': '2026-03-%02dT%02d:00:00Z' % (day, h)})
    with open(os.path.join(d, 'manifest.jsonl'), 'w') as f:
        f.write(''.join(json.dumps(m) + '\n' for m in man))
PY
for s in traffic slow beside; do
	pr --quiet service add svc-$s --enable
	pr --quiet ingest --manifest "$T/$s/manifest.jsonl"
done
run pr --wide analyze --service svc-traffic --release v2 --at 2026-03-17T00:00:00Z --dry-run \
	--gate medium
[ $RC -eq 0 ] && ! grep -Eq "^(medium|high|critical) +regression" <<<"$OUT" &&
	grep -q "moved with the rest of a caller's subtree and its own code (such as api.handle_a)" <<<"$ERR" &&
	ok "an endpoint's traffic raises no regression under it, and a note says why" ||
	not_ok "caller traffic" "rc=$RC $OUT $ERR"
run pr --wide analyze --service svc-slow --release v2 --at 2026-03-17T00:00:00Z --dry-run \
	--gate medium
[ $RC -eq 1 ] && grep -Eq "^(medium|high|critical) +regression +svc-slow +v2 +pay/a.step0 " <<<"$OUT" &&
	ok "a function of that endpoint twice as slow is still a regression" ||
	not_ok "slow step" "rc=$RC $OUT $ERR"
run pr --wide analyze --service svc-beside --release v2 --at 2026-03-17T00:00:00Z --dry-run \
	--gate medium
[ $RC -eq 1 ] && grep -Eq "^(medium|high|critical) +regression +svc-beside +v2 +pay/b.step3 " <<<"$OUT" &&
	! grep -Eq "^(medium|high|critical) +regression +svc-beside +v2 +pay/a" <<<"$OUT" &&
	ok "a function slower under another endpoint the same day is still a regression" ||
	not_ok "beside" "rc=$RC $OUT $ERR"
