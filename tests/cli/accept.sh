#!/bin/bash
# A rise accepted by hand (`finding resolve --accept`) is the new level:
#  - the release keeps running with it: no second finding pages;
#  - the next release with the same cost pages nothing, and its gate
#    passes, saying why;
#  - a release that rises beyond the accepted level pages;
#  - a plain resolve (not accepted) pages the next release again, as
#    before;
#  - what cannot be accepted is refused, naming the finding.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_accept
rm -rf "$T" && mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

webhook_start
cat >"$T/cfg.json" <<EOF
{"paging": {"min_severity": "high", "backoff_ms": 20, "timeout_ms": 3000, "alert_hours": 48,
  "targets": {"hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook"}},
  "default": ["hook"]}}
EOF

# Two fleets alike but for the factor of v3's regressed function (2x, 4x):
# the same baseline, the same function.
for f in 2 4; do
	"$BUILD/sim/fleetgen" --out "$T/fleet$f" --services 1 --functions 30 --factors $f \
		--bands 10-30 --regressed 1 --seed 11 --days 10 --per-day 2 --current 3 \
		--nights 4 >"$T/gen$f.txt"
done

# nights NAME SPEC...: $T/NAME/manifest.jsonl, the baseline before
# 2026-01-11 and, for each SPEC DAY:RELEASE:KIND (KIND base: copies of
# v2's captures; reg: of v3's at 2x; reg4: of v3's at 4x), 3 captures,
# each made unique by a stack of its own (the same bytes are one capture).
nights() {
	python3 - "$T/fleet2" "$T/fleet4" "$T/$1" "${@:2}" <<'EOF'
import itertools, json, os, sys
src, src4, out = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
man = [json.loads(l) for l in open(src + '/manifest.jsonl')]
man4 = [json.loads(l) for l in open(src4 + '/manifest.jsonl')]
lines = [dict(m, path=os.path.join(src, m['path'])) for m in man if m['time'] < '2026-01-11']
pool = {'base': itertools.cycle([(src, m) for m in man if m['release'] == 'v2']),
        'reg': itertools.cycle([(src, m) for m in man if m['release'] == 'v3']),
        'reg4': itertools.cycle([(src4, m) for m in man4 if m['release'] == 'v3'])}
k = 0
for spec in sys.argv[4:]:
    day, rel, kind = spec.split(':')
    for i in range(3):
        d, m = next(pool[kind])
        m = dict(m)
        k += 1
        p = os.path.join(out, 'x%04d.folded' % k)
        data = open(os.path.join(d, m['path'])).read()
        open(p, 'w').write(data + 'padmain;pad%d 1\n' % k)
        m.update(path=p, release=rel, host='%s-h%d' % (rel, i),
                 time='%sT%02d:%02d:00Z' % (day, 3 + i * 6, k % 60),
                 commit=(rel.encode().hex() + '0' * 40)[:40])
        lines.append(m)
with open(os.path.join(out, 'manifest.jsonl'), 'w') as f:
    for m in lines:
        f.write(json.dumps(m) + '\n')
EOF
}

scenario() {
	fresh_db "cli_accept_$1"
	pr --quiet db init
	nights "$@"
	pr --quiet service add svc-000 && pr --quiet service enable svc-000
	pr --quiet ingest --manifest "$T/$1/manifest.jsonl" >/dev/null
}
night() { pr --config "$T/cfg.json" nightly --at "$1T00:00:00Z" >>"$T/nights.txt" 2>&1; }
triggers() { sql "select count(*) from pages where event = 'trigger'"; }
v3id() {
	sql "select id from findings where direction = 'regression' and current_release = 'v3'
		order by id limit 1"
}

# 1. v3 doubles a function and pages; on-call accepts it (a new check on
# every request). v3 runs two nights more, then v4 ships with the same
# cost.
scenario same 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v3:reg 2026-01-14:v3:reg \
	2026-01-15:v4:reg 2026-01-16:v4:reg
night 2026-01-12
night 2026-01-13
fid=$(v3id)
[ -n "$fid" ] && [ "$(triggers)" = 1 ] && ok "v3's regression pages" ||
	not_ok "v3 pages" "triggers $(triggers) $(sql "select id, state from findings")"
run pr --config "$T/cfg.json" finding resolve "$fid" --accept --note "fraud check, by design"
[ $RC -eq 0 ] && [[ $OUT == "accepted finding $fid;"* ]] &&
	[ "$(sql "select state, accepted from findings where id = $fid")" = "resolved|t" ] &&
	ok "finding resolve --accept resolves the finding and accepts its rise" ||
	not_ok "accept" "rc=$RC out=$OUT err=$ERR"
[ "$(sql "select reason from finding_states where finding_id = $fid order by id desc limit 1")" \
	= "accepted by hand: fraud check, by design" ] &&
	[ "$(sql "select count(*) from audit_log where action = 'accept'
		and object = 'finding:$fid'")" = 1 ] &&
	ok "its history and the audit log say it was accepted" ||
	not_ok "accept history" "$(sql "select * from finding_states where finding_id = $fid")"
# At noon after the second night, as the nights' times go (--at).
resolved_at() { sql "update findings set resolved_at = '2026-01-13T12:00:00Z' where id = $1" >/dev/null; }
resolved_at "$fid"
for n in 2026-01-14 2026-01-15 2026-01-16 2026-01-17; do night $n; done
[ "$(triggers)" = 1 ] && ok "neither v3 running on nor v4 with the same cost pages again" ||
	not_ok "accepted level pages" "triggers $(triggers) $(sql "select id, current_release,
		state, status, carried_from, delta, ci_low from findings where direction =
		'regression'")"
[ "$(sql "select count(*) from findings where direction = 'regression' and status = 'open'
	and not exists (select 1 from findings a where a.id = findings.carried_from
	and a.accepted)")" = 0 ] &&
	ok "every later finding of the rise is carried from the accepted one" ||
	not_ok "carried from accepted" "$(sql "select id, current_release, carried_from
		from findings")"
grep -q 'within a rise accepted by hand' "$T/nights.txt" &&
	grep -q "fetchall (psycopg2/extras.py) (accepted level: finding $fid)" "$T/nights.txt" &&
	ok "the nightly says regressions were within an accepted rise" ||
	not_ok "nightly line" "$(tail -20 "$T/nights.txt")"
run pr --config "$T/cfg.json" analyze --service svc-000 --release v4 --gate high \
	--at 2026-01-17T00:00:00Z --json
[ $RC -eq 0 ] && ok "v4's gate passes: its rise is the accepted level" ||
	not_ok "v4 gate" "rc=$RC $(echo "$OUT" | head -c 600) $ERR"
run pr --config "$T/cfg.json" report --run "$(sql "select max(rf.run_id) from run_findings rf
	join findings f on f.id = rf.finding_id where f.carried_from = $fid")" \
	--format html --out "$T/same.html"
grep -q 'accepted by hand as the new level' "$T/same.html" &&
	ok "the report names the accepted level" || not_ok "report" "rc=$RC $ERR"
run pr --config "$T/cfg.json" report --run "$(sql "select max(rf.run_id) from run_findings rf
	join findings f on f.id = rf.finding_id where f.carried_from = $fid")" \
	--format md --out "$T/same.md"
grep -q "(accepted level: finding $fid)" "$T/same.md" &&
	ok "so does the Markdown report" || not_ok "md report" "rc=$RC $ERR $(cat "$T/same.md")"
run pr finding show "$(sql "select max(id) from findings where carried_from = $fid")"
grep -q "^carried   from finding $fid" <<<"$OUT" && grep -q '^baseline  releases \[' <<<"$OUT" &&
	ok "finding show names the finding it is carried from, and its baseline's releases" ||
	not_ok "finding show" "rc=$RC $OUT $ERR"

# 2. The same, but v4 quadruples the function: beyond what was accepted.
scenario beyond 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:reg4 2026-01-14:v4:reg4
night 2026-01-12
night 2026-01-13
fid=$(v3id)
pr --config "$T/cfg.json" --quiet finding resolve "$fid" --accept >/dev/null 2>&1
resolved_at "$fid"
for n in 2026-01-14 2026-01-15; do night $n; done
[ "$(triggers)" = 2 ] &&
	[ "$(sql "select count(*) from findings where current_release = 'v4'
		and direction = 'regression' and carried_from is null")" = 1 ] &&
	ok "a release rising beyond the accepted level pages" ||
	not_ok "beyond" "triggers $(triggers) $(sql "select id, current_release, state,
		carried_from, delta, ci_low from findings where direction = 'regression'")"

# 3. A plain resolve is no acceptance: v4 with the same cost pages.
scenario plain 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:reg 2026-01-14:v4:reg
night 2026-01-12
night 2026-01-13
fid=$(v3id)
pr --config "$T/cfg.json" --quiet finding resolve "$fid" --note "rolled back" >/dev/null 2>&1
resolved_at "$fid"
for n in 2026-01-14 2026-01-15; do night $n; done
[ "$(triggers)" = 2 ] && ok "after a plain resolve the next release with the rise pages" ||
	not_ok "plain resolve" "triggers $(triggers)"

# 4. Refusals: accepted twice, an improvement, an unknown id.
resolve_rows() { sql "select string_agg(status || ':' || attempts, ',') from pages
	where finding_id = $fid and event = 'resolve'"; }
before=$(resolve_rows)
run pr finding resolve "$fid" --accept
[ $RC -eq 0 ] && ok "a finding resolved by hand may be accepted later" ||
	not_ok "accept after resolve" "rc=$RC $ERR"
# Its page was resolved by the plain resolve: accepting it only marks it.
[ -n "$before" ] && [ "$(resolve_rows)" = "$before" ] &&
	ok "accepting a finding resolved by hand does not send its resolve again" ||
	not_ok "resolve again" "before $before after $(resolve_rows)"
run pr finding resolve "$fid" --accept
[ $RC -eq 4 ] && [[ $ERR == *"finding $fid is not a regression that is open or resolved by hand, and not yet accepted"* ]] &&
	ok "accepting twice is refused, naming the finding" || not_ok "twice" "rc=$RC $ERR"
run pr finding resolve 999999 --accept
[ $RC -eq 4 ] && [[ $ERR == *"finding 999999"* ]] && ok "an unknown finding is refused" ||
	not_ok "unknown" "rc=$RC $ERR"
finish
