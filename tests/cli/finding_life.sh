#!/bin/bash
# A finding's life over several nights, paged to a loopback webhook
# (tests/servers/pd_server.c): one regression of release v3 pages once,
# however the nights go on.
#  - A fix (v4) rolled out to some hosts while v3 still runs on others
#    does not close v3's finding, nor does one capture of v4 judged by
#    an analyze by hand: closed, the next night found and paged it anew.
#  - A rollback to the release before closes the finding it undid.
#  - A night run again after the fix closed the finding links to it:
#    no second finding, no second page.
#  - A night run again after the finding was resolved by hand links to
#    it: no second finding, no second page. A night after the resolve
#    that finds the regression again pages it anew.
#  - A missed night filled in later (--at in the past) keeps a release
#    with an open regression out of the next release's baseline.
#  - A confirmed member of an incident pages when its lead is still a
#    candidate.
#  - An open alert of a disabled service is no longer re-fired.
#  - A regression rolled back, or fixed, and shipped again in a later
#    release is found and paged again: its release is no baseline.
#  - A regression first significant at its release's last planned look
#    (a canary's fourth night) is confirmed and pages.
#  - A release rolled back and rolled forward again pages its confirmed
#    regression at the new finding's first look.
#  - A release pinned on a host beside the regressed one is no rollback
#    on a night the regressed release goes uncaptured.
#  - A night run again after a rollback and a roll forward links to the
#    finding of that night: the open one of the roll forward gets no look
#    dated before its first, and is neither confirmed nor paged by it.
#  - The captures of the look that confirms a finding are its evidence
#    too, not only those of the look that found it.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_finding_life
rm -rf "$T" && mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

webhook_start
cat >"$T/cfg.json" <<EOF
{"paging": {"min_severity": "high", "backoff_ms": 20, "timeout_ms": 3000, "alert_hours": 48,
  "targets": {"hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook"},
              "am": {"type": "alertmanager", "url": "http://127.0.0.1:$PORT/"}},
  "default": ["hook"]}}
EOF

# One service, one function twice its share in v3 (v1 and v2 before 2026-01-11).
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 --bands 10-30 \
	--regressed 1 --seed 11 --days 10 --per-day 2 --current 3 --nights 4 >"$T/gen.txt"

# nights NAME SPEC...: $T/NAME/manifest.jsonl, the fleet's captures before
# 2026-01-11 and, for each SPEC DAY:RELEASE:KIND[:N[:HOSTS]] (KIND base:
# copies of v2's captures, reg: of v3's), N captures (3) on hosts of their
# own, named HOSTS-h0.. (the release's name unless given).
nights() {
	python3 - "${FLEET:-$T/fleet}" "$T/$1" "${@:2}" <<'EOF'
import itertools, json, os, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
man = [json.loads(l) for l in open(src + '/manifest.jsonl')]
lines = [dict(m, path=os.path.join(src, m['path'])) for m in man if m['time'] < '2026-01-11']
pool = {'base': itertools.cycle([m for m in man if m['release'] == 'v2']),
        'reg': itertools.cycle([m for m in man if m['release'] == 'v3'])}
k = 0
for spec in sys.argv[3:]:
    day, rel, kind, *rest = spec.split(':')
    n = int(rest[0]) if rest else 3
    hosts = rest[1] if len(rest) > 1 else rel
    for i in range(n):
        m = dict(next(pool[kind]))
        k += 1
        p = os.path.join(out, 'x%04d.folded' % k)
        data = open(os.path.join(src, m['path'])).read()
        open(p, 'w').write(data + 'padmain;pad%d 1\n' % k)
        m.update(path=p, release=rel, host='%s-h%d' % (hosts, i),
                 time='%sT%02d:%02d:00Z' % (day, 3 + i * (18 // n), k % 60),
                 commit=m.get('commit') if rel == m['release']
                 else (rel.encode().hex() + '0' * 40)[:40])
        lines.append(m)
with open(os.path.join(out, 'manifest.jsonl'), 'w') as f:
    for m in lines:
        f.write(json.dumps(m) + '\n')
EOF
}

# scenario NAME SPEC...: a fresh database with those captures; with INC
# set, only those before 2026-01-11, and each night ingests the captures
# taken before it first, as collection would have (a release that runs
# again later has no captures from the future).
scenario() {
	fresh_db "cli_finding_life_$1"
	pr --quiet db init
	nights "$@"
	pr --quiet service add svc-000 && pr --quiet service enable svc-000
	SC=$T/$1
	UPTO=
	ingest_before "${INC:+2026-01-11}"
}
# ingest_before [DAY]: the scenario's captures from UPTO to before DAY (all).
ingest_before() {
	jq -c --arg from "$UPTO" --arg to "${1:-9}" 'select(.time >= $from and .time < $to)' \
		"$SC/manifest.jsonl" >"$SC/part.jsonl"
	[ -s "$SC/part.jsonl" ] && pr --quiet ingest --manifest "$SC/part.jsonl" >/dev/null
	UPTO=$1
}
night() {
	[ -z "$INC" ] || ingest_before "$1"
	pr --config "${CFG:-$T/cfg.json}" nightly --at "$1T00:00:00Z" >>"$T/nights.txt" 2>&1
}
regs() { sql "select count(*) from findings where direction = 'regression' $1"; }
triggers() { sql "select count(*) from pages where event = 'trigger'"; }
resolves() { sql "select count(*) from pages where event = 'resolve'"; }

# 1. v3 regressed two nights (paged); v4, the fix, on three hosts while v3
# still runs on two, two nights more.
scenario part 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:base 2026-01-13:v3:reg:2 \
	2026-01-14:v4:base 2026-01-14:v3:reg:2
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15; do night $n; done
[ "$(regs)" = 1 ] && [ "$(regs "and status = 'open' and current_release = 'v3'")" = 1 ] &&
	ok "a fix on some hosts leaves the finding of the release still running open" ||
	not_ok "partial fix" "$(sql "select id, current_release, state, fixed_by from findings
		where direction = 'regression'")"
[ "$(triggers)" = 1 ] && [ "$(resolves)" = 0 ] &&
	ok "it pages once, and is not resolved" || not_ok "partial fix pages" \
	"triggers $(triggers) resolves $(resolves)"

# 1b. One capture of v4 on one host, v3 on three: an analyze of v4 by hand.
scenario one 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:base:1 2026-01-13:v3:reg:3
night 2026-01-12
night 2026-01-13
run pr --config "$T/cfg.json" analyze --service svc-000 --release v4 --at 2026-01-13T12:00:00Z
[ $RC -eq 0 ] && [ "$(regs "and status = 'open'")" = 1 ] && [ "$(resolves)" = 0 ] &&
	ok "one capture of a fix judged by an analyze closes nothing" ||
	not_ok "analyze one capture" "rc=$RC $(sql "select id, state, fixed_by from findings")"
night 2026-01-14
[ "$(regs)" = 1 ] && [ "$(triggers)" = 1 ] && ok "the next night pages nothing new" ||
	not_ok "after analyze" "regs $(regs) triggers $(triggers)"

# 2. v3 regressed two nights (paged), fixed by v4 the next two (resolved);
# then night 2 is run again, and the night after the last.
scenario rerun 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:base 2026-01-14:v4:base
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15; do night $n; done
[ "$(regs "and state = 'fixed'")" = 1 ] && [ "$(triggers)" = 1 ] && [ "$(resolves)" = 1 ] &&
	ok "a regression found, paged, fixed and resolved" ||
	not_ok "fixed" "$(sql "select id, current_release, state, fixed_by from findings")"
night 2026-01-13
night 2026-01-16
[ "$(regs)" = 1 ] && [ "$(regs "and state = 'fixed'")" = 1 ] &&
	ok "a night run again after the fix stores no second finding" ||
	not_ok "rerun findings" "$(sql "select id, current_release, state from findings")"
[ "$(triggers)" = 1 ] && [ "$(resolves)" = 1 ] && ok "and pages nothing" ||
	not_ok "rerun pages" "triggers $(triggers) resolves $(resolves)"
fifth=$(sql "select id from runs where kind = 'nightly' order by id offset 4 limit 1")
[ "$(sql "select count(*) from run_findings rf join findings f on f.id = rf.finding_id
	where rf.run_id = $fifth and f.state = 'fixed' and f.direction = 'regression'")" = 1 ] &&
	ok "the night run again records the finding it saw, as it is" || not_ok "run findings"

# 2a. v3 regressed two nights (paged), resolved by hand ("rolled back")
# at noon the day after, as the nights' times go; night 2 is run again.
# Then the regression is still there the nights after the resolve.
scenario resolved 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v3:reg 2026-01-14:v3:reg
night 2026-01-12
night 2026-01-13
fid=$(sql "select id from findings where direction = 'regression'")
pr --config "$T/cfg.json" --quiet finding resolve "$fid" --note "rolled back" >/dev/null 2>&1
sql "update findings set resolved_at = '2026-01-13T12:00:00Z' where id = $fid" >/dev/null
night 2026-01-13
[ "$(regs)" = 1 ] && [ "$(triggers)" = 1 ] &&
	[ "$(sql "select status from findings where id = $fid")" = resolved ] &&
	ok "a night run again after a resolve by hand links to the finding and pages nothing" ||
	not_ok "rerun after resolve" "triggers $(triggers) $(sql "select id, current_release, state,
		status from findings where direction = 'regression'")"
night 2026-01-14
night 2026-01-15
[ "$(regs)" = 2 ] && [ "$(triggers)" = 2 ] &&
	ok "a night after the resolve that finds the regression pages it again" ||
	not_ok "after resolve" "triggers $(triggers) $(sql "select id, current_release, state,
		status from findings where direction = 'regression'")"

# 2b. v3 regressed two nights (paged), then rolled back: v2 runs again
# on every host for two nights. The regression no longer runs.
scenario rollback 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v2:base 2026-01-14:v2:base
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15; do night $n; done
[ "$(regs "and state = 'fixed' and fixed_by = 'v2'")" = 1 ] && [ "$(triggers)" = 1 ] &&
	[ "$(resolves)" = 1 ] &&
	ok "a rollback closes the regression it undid, and resolves its page" ||
	not_ok "rollback" "$(sql "select id, current_release, state, fixed_by from findings
		where direction = 'regression'") triggers $(triggers) resolves $(resolves)"
[ "$(sql "select count(*) from finding_states s join findings f on f.id = s.finding_id
	where f.direction = 'regression' and s.reason like '%rolled back to%'")" = 1 ] &&
	ok "its history says it was rolled back" ||
	not_ok "rollback reason" "$(sql "select s.* from finding_states s")"

# 4. v3 regressed, v4 too; nights 2 and 3 are filled in later, in order,
# after the run of night 1 stored v3's finding (created now, in 2026-12).
scenario backfill 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:reg 2026-01-14:v4:reg
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15; do night $n; done
[ "$(regs "and current_release = 'v4'")" = 1 ] &&
	[ "$(sql "select count(*) from findings where current_release = 'v4'
		and 'v3' = any(baseline_releases)")" = 0 ] &&
	ok "a release with an open regression is no baseline of the next, nights filled in later" ||
	not_ok "backfill baseline" "$(sql "select id, current_release, baseline_releases
		from findings
		where direction = 'regression'")"

# 3. svc.handler and svc.parse (one call path) rise 1.6x together on night
# 1: one incident, handler its lead. Then handler is back to normal and
# parse stays: parse is confirmed on night 2 while handler, the lead, is
# still a candidate. The incident pages through parse that night.
fresh_db cli_finding_life_incident
pr --quiet db init
mkdir -p "$T/inc"
python3 - "$T/inc" 2026-01-11:v3:1.6:1.6:3 2026-01-12:v3:1:1.6:4 <<'EOF'
import json, random, sys
out = sys.argv[1]
random.seed(4)
base = {'main;svc.work%d' % i: random.randint(200, 1500) for i in range(20)}
base['main;svc.handler'] = 1500
base['main;svc.handler;svc.parse'] = 2000
lines = []
def cap(day, rel, hx, px, hour, host):
    p = '%s/c%04d.folded' % (out, len(lines))
    with open(p, 'w') as f:
        for st, w in base.items():
            m = hx if st == 'main;svc.handler' else px if st.endswith('svc.parse') else 1
            f.write('%s %d\n' % (st, max(1, int(w * m * random.gauss(1, 0.08)))))
    lines.append(dict(path=p, service='inc', release=rel, host=host, type='cpu',
                      format='folded', commit=(rel.encode().hex() + '0' * 40)[:40],
                      time='%sT%02d:%02d:00Z' % (day, hour, len(lines) % 60)))
for d in range(1, 11):
    for h in (3, 15):
        cap('2026-01-%02d' % d, 'v1' if d <= 7 else 'v2', 1, 1, h, 'h%d' % ((d + h) % 4))
for spec in sys.argv[2:]:
    day, rel, hx, px, n = spec.split(':')
    for i in range(int(n)):
        cap(day, rel, float(hx), float(px), 1 + i * (22 // int(n)), 'h%d' % (i % 4))
with open(out + '/manifest.jsonl', 'w') as f:
    f.write(''.join(json.dumps(l) + '\n' for l in lines))
EOF
pr --quiet service add inc && pr --quiet service enable inc
pr --quiet ingest --manifest "$T/inc/manifest.jsonl" >/dev/null
night 2026-01-12
[ "$(sql "select count(distinct incident_id) from findings where function in
	('svc.handler', 'svc.parse')")" = 1 ] && [ "$(triggers)" = 0 ] &&
	ok "night 1: handler and parse, one incident of candidates, not paged" ||
	not_ok "incident night 1" "$(sql "select id, function, state, incident_id from findings
		where direction = 'regression'") triggers $(triggers)"
night 2026-01-13
[ "$(sql "select state from findings where function = 'svc.handler'")" = candidate ] &&
	[ "$(sql "select state from findings where function = 'svc.parse'")" = confirmed ] &&
	[ "$(sql "select count(*) from pages p join findings f on f.id = p.finding_id
		where p.event = 'trigger' and f.function = 'svc.parse'")" = 1 ] &&
	ok "night 2: parse confirmed pages, its lead still a candidate" ||
	not_ok "incident night 2" "$(sql "select id, function, state, incident_id from findings
		where direction = 'regression'") $(sql "select * from finding_groups")"

# 5. A disabled service's open alert is not re-fired (Alertmanager target).
scenario disabled 2026-01-11:v3:reg 2026-01-12:v3:reg
jq '.paging.default = ["am"]' "$T/cfg.json" >"$T/cfg-am.json"
pr --config "$T/cfg-am.json" nightly --at 2026-01-12T00:00:00Z >/dev/null 2>&1
pr --config "$T/cfg-am.json" nightly --at 2026-01-13T00:00:00Z >/dev/null 2>&1
pr --quiet service disable svc-000
sleep 1.1
r0=$(sql "select coalesce(sum(refreshes), -1) from pages where event = 'trigger'")
run pr --config "$T/cfg-am.json" page flush
[ "$(sql "select count(*) from pages where event = 'trigger' and status = 'sent'")" = 1 ] &&
	[ "$(sql "select sum(refreshes) from pages where event = 'trigger'")" = "$r0" ] &&
	ok "a disabled service's open alert is not re-fired" ||
	not_ok "disabled refresh" \
		"rc=$RC before $r0 $(sql "select id, status, refreshes from pages")"

# 6. v3 regressed two nights (paged), rolled back to v2 (closed, resolved);
# then v4 ships the same regression. v3 is no baseline of v4: the rise is
# found and paged anew, against v1 and v2.
scenario reship 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v2:base 2026-01-14:v2:base \
	2026-01-15:v4:reg 2026-01-16:v4:reg
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15 2026-01-16 2026-01-17; do night $n; done
[ "$(regs "and current_release = 'v4' and not 'v3' = any(baseline_releases)")" = 1 ] &&
	[ "$(triggers)" = 2 ] &&
	ok "a regression rolled back and shipped again in a later release pages again" ||
	not_ok "reship after rollback" "triggers $(triggers) $(sql "select id, current_release,
		state, baseline_releases from findings where direction = 'regression'")"

# 6b. v3 regressed (paged), fixed by v4, then v5 brings the rise back.
scenario undone 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v4:base 2026-01-14:v4:base \
	2026-01-15:v5:reg 2026-01-16:v5:reg
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15 2026-01-16 2026-01-17; do night $n; done
[ "$(regs "and current_release = 'v5' and not 'v3' = any(baseline_releases)")" = 1 ] &&
	[ "$(triggers)" = 2 ] &&
	ok "a fix undone by a later release pages again" ||
	not_ok "fix undone" "triggers $(triggers) $(sql "select id, current_release, state,
		baseline_releases from findings where direction = 'regression'")"

# 7. A high regression (x1.5 at 1-10%) in a canary: v3 on one host for
# three nights beside v2 on three, then on every host. It is first
# significant on its fourth night, the last planned look.
"$BUILD/sim/fleetgen" --out "$T/fleet7" --services 1 --functions 30 --factors 1.5 \
	--bands 1-10 --regressed 1 --seed 7 --days 10 --per-day 2 --current 3 --nights 4 >/dev/null
FLEET=$T/fleet7
scenario canary 2026-01-11:v3:reg:1:can 2026-01-11:v2:base:3:old 2026-01-12:v3:reg:1:can \
	2026-01-12:v2:base:3:old 2026-01-13:v3:reg:1:can 2026-01-13:v2:base:3:old \
	2026-01-14:v3:reg:4 2026-01-15:v3:reg:4
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15 2026-01-16; do night $n; done
[ "$(regs "and state = 'confirmed'")" = 1 ] && [ "$(triggers)" = 1 ] &&
	[ "$(sql "select count(*) from finding_states where state = 'confirmed'
		and reason like '%look 4, the last planned%'")" = 1 ] &&
	ok "a regression first significant at the last planned look is confirmed and pages" ||
	not_ok "last look" "triggers $(triggers) $(sql "select f.id, f.state, l.look,
		l.significant from findings f join finding_looks l on l.finding_id = f.id
		where f.direction = 'regression'")"

# 8. A medium regression (x1.5 at 1-10%) in v3, confirmed on two looks and
# paged, rolled back to v2 for two nights, then v3 again: the new finding
# of the same function is the same regression, confirmed at once.
"$BUILD/sim/fleetgen" --out "$T/fleet5" --services 1 --functions 30 --factors 1.5 \
	--bands 1-10 --regressed 1 --seed 5 --days 10 --per-day 2 --current 3 --nights 4 >/dev/null
FLEET=$T/fleet5
jq '.paging.min_severity = "medium"' "$T/cfg.json" >"$T/cfg-med.json"
CFG=$T/cfg-med.json INC=1
scenario forward 2026-01-11:v3:reg 2026-01-12:v3:reg 2026-01-13:v2:base 2026-01-14:v2:base \
	2026-01-15:v3:reg 2026-01-16:v3:reg
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15; do night $n; done
[ "$(regs "and state = 'fixed'")" = 1 ] && [ "$(triggers)" = 1 ] && [ "$(resolves)" = 1 ] &&
	ok "a medium regression confirmed, paged and rolled back" ||
	not_ok "forward rollback" "triggers $(triggers) resolves $(resolves) $(sql "select id,
		current_release, state, fixed_by from findings where direction = 'regression'")"
night 2026-01-16
[ "$(regs "and status = 'open' and state = 'confirmed'")" = 1 ] && [ "$(triggers)" = 2 ] &&
	ok "rolled forward to the same release, its regression pages at its first look" ||
	not_ok "roll forward" "triggers $(triggers) $(sql "select id, current_release, state,
		fixed_by from findings where direction = 'regression'")
		$(sql "select finding_id, look, significant from finding_looks")"
# 8b. Night 2 run again: the regression as it was then is the closed
# finding's; the open one, found after the roll forward, gets no look
# dated before its first, and nothing pages.
INC= night 2026-01-13
last=$(sql "select max(id) from runs where kind = 'nightly'")
[ "$(sql "select count(*) from finding_looks l join findings f on f.id = l.finding_id
	where f.status = 'open' and l.analysed_at < '2026-01-16'")" = 0 ] &&
	[ "$(sql "select count(*) from run_findings rf join findings f on f.id = rf.finding_id
		where rf.run_id = $last and f.state = 'fixed'")" = 1 ] && [ "$(triggers)" = 2 ] &&
	ok "a night run again after a roll forward links to the finding of that night" ||
	not_ok "rerun after roll forward" "triggers $(triggers) $(sql "select finding_id, look,
		analysed_at from finding_looks order by finding_id, analysed_at")"
unset FLEET CFG INC

# 9. v3 regressed (critical, paged) while v2 stays on one pinned host,
# captured once a night beside it; v3's captures miss one night. v2 never
# stopped: nothing is rolled back, the finding stays open, paged once.
INC=1
scenario pinned 2026-01-11:v3:reg 2026-01-11:v2:base:1:pin 2026-01-12:v3:reg \
	2026-01-12:v2:base:1:pin 2026-01-13:v2:base:1:pin 2026-01-14:v3:reg \
	2026-01-14:v2:base:1:pin 2026-01-15:v3:reg 2026-01-15:v2:base:1:pin
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15 2026-01-16; do night $n; done
[ "$(regs)" = 1 ] && [ "$(regs "and status = 'open'")" = 1 ] && [ "$(triggers)" = 1 ] &&
	[ "$(resolves)" = 0 ] &&
	ok "a night without captures of a regressed release beside a pinned host is no rollback" ||
	not_ok "pinned gap" "triggers $(triggers) resolves $(resolves) $(sql "select id,
		current_release, state, fixed_by from findings where direction = 'regression'")"

# 9b. The same with two captures a night on two pinned hosts.
scenario pinned2 2026-01-11:v3:reg 2026-01-11:v2:base:2:pin 2026-01-12:v3:reg \
	2026-01-12:v2:base:2:pin 2026-01-13:v2:base:2:pin 2026-01-14:v3:reg \
	2026-01-14:v2:base:2:pin 2026-01-15:v3:reg 2026-01-15:v2:base:2:pin
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15 2026-01-16; do night $n; done
[ "$(regs "and status = 'open'")" = 1 ] && [ "$(triggers)" = 1 ] && [ "$(resolves)" = 0 ] &&
	ok "nor when the pinned release has two captures that night: it never stopped" ||
	not_ok "pinned gap 2" "triggers $(triggers) resolves $(resolves) $(sql "select id,
		current_release, state, fixed_by from findings where direction = 'regression'")"
unset INC

# 10. v3 regressed one night (a candidate), rolled back to v2 (closed),
# rolled forward: a new candidate. Night 1 run again is the closed
# finding's night: it neither confirms nor pages the new one.
FLEET=$T/fleet5 CFG=$T/cfg-med.json INC=1
scenario rerun2 2026-01-11:v3:reg 2026-01-12:v2:base 2026-01-13:v2:base 2026-01-14:v3:reg
for n in 2026-01-12 2026-01-13 2026-01-14 2026-01-15; do night $n; done
[ "$(regs "and status = 'open' and state = 'candidate'")" = 1 ] &&
	[ "$(regs "and state = 'fixed'")" = 1 ] && [ "$(triggers)" = 0 ] &&
	ok "a candidate rolled back, then found again in the release rolled forward" ||
	not_ok "candidate rolled forward" "$(sql "select id, current_release, state, fixed_by
		from findings where direction = 'regression'")"
INC= night 2026-01-12
[ "$(regs "and status = 'open' and state = 'candidate'")" = 1 ] && [ "$(triggers)" = 0 ] &&
	ok "a night run again before it neither confirms nor pages the open finding" ||
	not_ok "rerun before the open finding" "triggers $(triggers) $(sql "select finding_id,
		look, analysed_at from finding_looks order by finding_id, analysed_at")"
unset FLEET CFG INC

# 9. The look that confirms a finding (and pages) judged more captures
# than the look that found it: they are kept as its evidence too.
jq '. + {"analysis": {"confirm_critical": false}}' "$T/cfg.json" >"$T/cfg-looks.json"
scenario evidence 2026-01-11:v3:reg 2026-01-12:v3:reg
CFG=$T/cfg-looks.json night 2026-01-12
first=$(sql "select state from findings where direction = 'regression'")
CFG=$T/cfg-looks.json night 2026-01-13
[ "$first" = candidate ] &&
	[ "$(sql "select state from findings where direction = 'regression'")" = confirmed ] &&
	[ "$(sql "select count(*) from profiles where release = 'v3'
		and retention_class = 'forensic'")" = 6 ] &&
	ok "the captures of the look that confirmed a finding are its evidence too" ||
	not_ok "confirming look's evidence" "first $first $(sql "select id, retention_class
		from profiles where release = 'v3'") $(sql "select state from findings
		where direction = 'regression'")"
finish
