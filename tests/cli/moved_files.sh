#!/bin/bash
# A Node service deployed into a folder of each release's own
# (/srv/app/releases/vN/..., as Capistrano does): every file moves with
# every release. Its anonymous functions share one name across files, so
# each gone function once had several partners, none was paired, and the
# same code was a critical regression from nothing. Here v2 doubles the
# anonymous function of lib/util.js and changes nothing else: one
# regression, in its new file, which `finding show` names; no "(was".
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_moved_files
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_moved_files
pr --quiet db init

python3 - "$T" <<'PY'
import json, random, sys
out = sys.argv[1]
random.seed(3)
fns = [("handle", "app.js", 3000), ("", "app.js", 2500), ("", "lib/util.js", 2000),
       ("parse", "lib/util.js", 1500), ("", "lib/db.js", 1200), ("query", "lib/db.js", 900),
       ("render", "views/page.js", 700), ("", "views/page.js", 500)]
man = open(out + "/manifest.jsonl", "w")
for k in range(32):
    cur = k >= 28
    rel = "v2" if cur else "v1"
    nodes = [{"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "",
              "lineNumber": -1, "columnNumber": -1}, "hitCount": 0,
              "children": list(range(2, len(fns) + 2))}]
    for i, (name, f, w) in enumerate(fns):
        if cur and f == "lib/util.js" and name == "":
            w *= 2
        nodes.append({"id": i + 2, "callFrame": {"functionName": name, "scriptId": str(i + 9),
                      "url": "file:///srv/app/releases/%s/%s" % (rel, f),
                      "lineNumber": 3 * i, "columnNumber": 4},
                      "hitCount": int(w * random.uniform(0.95, 1.05))})
    p = "%s/c%02d.cpuprofile" % (out, k)
    json.dump({"nodes": nodes, "startTime": 0, "endTime": 10000000}, open(p, "w"))
    t = ("2026-03-%02dT%02d:00:00Z" % (1 + k // 2, 3 + 6 * (k % 2)) if not cur else
         "2026-03-15T%02d:00:00Z" % (2 + 4 * (k - 28)))
    man.write(json.dumps({"path": p, "service": "shop", "release": rel, "time": t,
                          "type": "cpu"}) + "\n")
PY
pr --quiet service add shop && pr --quiet service enable shop
pr --quiet ingest --manifest "$T/manifest.jsonl" >/dev/null

run pr analyze --service shop --release v2 --at 2026-03-16T00:00:00Z
n=$(sql "select count(*) from findings where direction = 'regression'")
fid=$(sql "select id from findings where direction = 'regression'
	and function = '(anonymous)' and function_id in
	(select id from functions where file = 'file:///srv/app/releases/v2/lib/util.js')")
[ "$RC" -eq 0 ] && [ "$n" = 1 ] && [ -n "$fid" ] && ! grep -q "(was" <<<"$OUT" &&
	ok "a release in a folder of its own: only the function that doubled, in its new file" ||
	not_ok "moved files" "rc=$RC n=$n $OUT $ERR $(sql "select function, direction from findings")"

run pr finding show "$fid"
grep -q "^file      file:///srv/app/releases/v2/lib/util.js$" <<<"$OUT" &&
	ok "finding show names the function's file: which (anonymous) it is" ||
	not_ok "show file" "rc=$RC $OUT $ERR"
finish
