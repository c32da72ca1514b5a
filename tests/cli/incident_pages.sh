#!/bin/bash
# One root cause pages once, and a page leads to its own team's findings
# only (pages to a loopback webhook, tests/servers/pd_server.c):
#  - post-deploy merges the regressions of one call path (decode and its
#    caller parse rise) into one incident, as the nightly does, and
#    pages once;
#  - the whole service's cost rising with one function joins that
#    function's incident as a member, not its lead: one page; a cost
#    rise with no function rising (everything slower) pages on its own;
#  - a page links to its team's report (run-ID-DB-team-TEAM.html), which
#    holds the finding's anchor and no other team's service, from the
#    nightly and from post-deploy;
#  - the report a page links to is on disk when the page is sent (the
#    receiver holds each page for a while, and the test looks for the
#    report while it does), from post-deploy and from the nightly.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_incident_pages
rm -rf "$T" && mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

webhook_start
BASE=https://profreg.example/reports
cat >"$T/cfg.json" <<EOF
{"paging": {"min_severity": "high", "backoff_ms": 20, "timeout_ms": 3000,
  "targets": {"hook": {"type": "webhook", "url": "http://127.0.0.1:$PORT/hook"}},
  "default": ["hook"]},
 "reports": {"base_url": "$BASE/"}}
EOF

# gen DIR SERVICE MODE: CPU pprof captures with durations and a load tag,
# two a day of v1 on 2026-01-01..10, four of v2 on 2026-01-11. v2 is,
# by MODE: path (parse 2x and decode, which it calls, 3x; the total
# kept), one (decode 8x, the rest as it was: the total +35%) or all
# (everything 1.4x, no share moves).
gen() {
	python3 - "$@" <<'EOF'
import datetime, gzip, json, os, random, sys
def varint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def fint(f, v): return varint(f << 3) + varint(v)
def fbytes(f, b): return varint((f << 3) | 2) + varint(len(b)) + b
def pprof(path, t_ns, stacks):
    strings, funcs, msg = [''], {}, b''
    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)
    for t, u in (('samples', 'count'), ('cpu', 'nanoseconds')):
        msg += fbytes(1, fint(1, s(t)) + fint(2, s(u)))
    for st, ns in stacks.items():
        ids = [funcs.setdefault(fr, len(funcs) + 1) for fr in st.split(';')[::-1]]
        msg += fbytes(2, fbytes(1, b''.join(map(varint, ids))) +
                      fbytes(2, varint(ns // 10**7) + varint(ns)))
    for fr, i in funcs.items():
        msg += fbytes(4, fint(1, i) + fbytes(4, fint(1, i) + fint(2, 1)))
        msg += fbytes(5, fint(1, i) + fint(2, s(fr)) + fint(3, s(fr)) + fint(4, s('main.go')))
    msg += b''.join(fbytes(6, x.encode()) for x in strings)
    msg += fint(9, t_ns) + fint(10, 10**10)
    msg += fbytes(11, fint(1, s('cpu')) + fint(2, s('nanoseconds'))) + fint(12, 10**7)
    with gzip.open(path, 'wb') as f:
        f.write(msg)
out, svc, mode = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
random.seed(18)
base = {'main;handler;parse': 0.10, 'main;handler;parse;decode': 0.05, 'main;handler': 0.05}
for i in range(30):
    base['main;work;pkg.W%02d' % i] = 0.80 / 30
with open(out + '/manifest.jsonl', 'w') as man:
    def cap(day, hour, rel, cur):
        fns = dict(base)
        if cur and mode == 'path':
            fns['main;handler;parse;decode'] *= 3
            fns['main;handler;parse'] *= 2
            z = sum(fns.values())
            fns = {k: v / z for k, v in fns.items()}
        elif cur and mode == 'one':
            fns['main;handler;parse;decode'] *= 8
        elif cur and mode == 'all':
            fns = {k: v * 1.4 for k, v in fns.items()}
        t = datetime.datetime(2026, 1, 1 + day, hour, tzinfo=datetime.timezone.utc)
        p = '%s/%s-%d-%d.pb.gz' % (out, rel, day, hour)
        pprof(p, int(t.timestamp()) * 10**9,
              {k: int(2 * 10**10 * v * random.uniform(0.97, 1.03)) for k, v in fns.items()})
        man.write(json.dumps({'path': p, 'service': svc, 'release': rel, 'type': 'cpu',
                              'commit': ('3' if rel == 'v1' else '4') * 40,
                              'host': 'h%d' % (hour % 3), 'tags': {'load': '20'},
                              'time': t.strftime('%Y-%m-%dT%H:%M:%SZ')}) + '\n')
    for d in range(10):
        for h in (3, 15):
            cap(d, h, 'v1', False)
    for h in (2, 8, 14, 20):
        cap(10, h, 'v2', True)
EOF
}

# add SERVICE TEAM MODE: the service, enabled, with its captures.
add() {
	gen "$T/$1" "$1" "$3"
	pr --quiet service add "$1" --team "$2" && pr --quiet service enable "$1"
	pr --quiet ingest --manifest "$T/$1/manifest.jsonl" >/dev/null
}
# The trigger events the webhook got since line $1 of its log, as JSON lines.
triggers_since() {
	tail -n +"$(($1 + 1))" "$T/hook.log" | jq -c 'select(.body.event == "trigger")'
}
# fid SERVICE FUNCTION: the regression's finding.
fid() { sql "select id from findings where service_id = (select id from services
	where name = '$1') and function = '$2' and direction = 'regression'"; }
# team_link TRIGGER TEAM SERVICE OTHER: the trigger links to the team's
# report of its run, which has the finding's anchor and not service OTHER.
team_link() {
	local f r inst file
	f=$(jq -r .body.finding_id <<<"$1")
	r=$(jq -r .body.run_id <<<"$1")
	inst=$(sql "select left(replace(id::text, '-', ''), 8) from instance")
	file=run-$r-$inst-team-$2.html
	[ "$(jq -r .body.link <<<"$1")" = "$BASE/$file#finding-$f" ] &&
		grep -q "id=\"finding-$f\"" "$HOME_DIR/reports/$file" &&
		grep -q "$3" "$HOME_DIR/reports/$file" &&
		{ [ -z "$4" ] || ! grep -q "$4" "$HOME_DIR/reports/$file"; }
}

# 1. post-deploy: decode and its caller parse rise; one incident, one page.
fresh_db cli_incident_pages_pd
pr --quiet db init
add spath payments path
seen=$(wc -l <"$T/hook.log")
commit=$(printf '4%.0s' {1..40})
run pr --config "$T/cfg.json" post-deploy --service spath --release v2 --commit "$commit" \
	--at 2026-01-12T00:00:00Z --json
inc=$(sql "select count(distinct incident_id) || '/' || count(incident_id) from findings
	where function in ('decode', 'parse') and direction = 'regression'")
trig=$(triggers_since "$seen")
[ $RC -eq 1 ] && [ "$inc" = 1/2 ] && [ "$(grep -c . <<<"$trig")" = 1 ] &&
	[ "$(sql "select count(*) from pages where event = 'trigger'")" = 1 ] &&
	[ "$(jq '[.findings[] | select(.direction == "regression" and .incident != null)]
		| length' <<<"$OUT")" = 2 ] &&
	ok "post-deploy: two regressions of one call path are one incident, paged once" ||
	not_ok "post-deploy incident" "rc=$RC incidents/members $inc $ERR" "$trig"
lead=$(sql "select g.lead_finding_id from finding_groups g join findings f on f.incident_id = g.id
	where f.function = 'decode' and f.direction = 'regression'")
member=$(sql "select f.id from findings f join finding_groups g on g.id = f.incident_id
	where f.direction = 'regression' and f.id <> g.lead_finding_id
	and f.function in ('decode', 'parse')")
run pr finding show "$member"
grep -q "^incident  [0-9]*, led by finding $lead, which holds its page$" <<<"$OUT" &&
	ok "finding show of a member names the lead that holds its page" ||
	not_ok "member show" "lead=$lead member=$member $OUT $ERR"
team_link "$trig" payments spath "" &&
	ok "post-deploy: the page links to the team's report, which has the finding" ||
	not_ok "post-deploy team link" "$(jq -r .body.link <<<"$trig")" "$(ls "$HOME_DIR/reports")"

# 2. A nightly: sone's decode rises 8x (the service's cost per unit of load
# +35%, all of it decode's); everything of sall is 1.4x slower.
fresh_db cli_incident_pages_cost
pr --quiet db init
add sone ledger one
add sall risk all
seen=$(wc -l <"$T/hook.log")
run pr --config "$T/cfg.json" nightly --at 2026-01-12T00:00:00Z
cost=$(fid sone '(whole service)')
decode=$(fid sone decode)
trig=$(triggers_since "$seen")
[ -n "$cost" ] && [ -n "$decode" ] &&
	[ "$(sql "select incident_id from findings where id = $cost")" = \
		"$(sql "select incident_id from findings where id = $decode")" ] &&
	[ "$(sql "select g.lead_finding_id from finding_groups g join findings f
		on f.incident_id = g.id where f.id = $cost")" = "$decode" ] &&
	ok "the whole-service cost joins the incident of the function that rose, not as its lead" ||
	not_ok "cost incident" "rc=$RC $(sql "select id, function, kind, incident_id from findings
		where direction = 'regression'") $(sql "select * from finding_groups")"
[ "$(jq -r 'select(.body.service == "sone") | .body.finding_id' <<<"$trig")" = "$decode" ] &&
	ok "and the incident pages once, through the function" ||
	not_ok "cost pages" "$trig"
allcost=$(fid sall '(whole service)')
[ -n "$allcost" ] && [ "$(sql "select coalesce(incident_id, 0) from findings
		where id = $allcost")" = 0 ] &&
	[ "$(jq -r 'select(.body.service == "sall") | .body.finding_id' <<<"$trig")" = "$allcost" ] &&
	ok "a cost rise with no function rising pages on its own" ||
	not_ok "cost alone" "$trig"
team_link "$(jq -c 'select(.body.service == "sone")' <<<"$trig")" ledger sone sall &&
	team_link "$(jq -c 'select(.body.service == "sall")' <<<"$trig")" risk sall sone &&
	ok "the nightly's pages link to each team's own report, which has the finding" ||
	not_ok "nightly team links" "$(jq -r .body.link <<<"$trig")" "$(ls "$HOME_DIR/reports")"
# analyze's table of a whole-service cost finding fits 80 columns; the
# cost in its unit is on a line of its own below it.
run pr analyze --service sall --release v2 --at 2026-01-12T00:00:00Z --dry-run
[ $RC -eq 0 ] && [ "$(LC_ALL=C.UTF-8 wc -L <<<"$OUT")" -le 80 ] &&
	grep -qE '^cost of sall: [0-9.]+ -> [0-9.]+ ms CPU per unit of load$' <<<"$OUT" &&
	grep -qE '^[a-z]+ +regression +sall +\(whole service\) +cost +\+[0-9.]+%' <<<"$OUT" &&
	ok "analyze's table of a cost finding fits 80 columns, its unit below" ||
	not_ok "analyze cost row" "rc=$RC $(LC_ALL=C.UTF-8 wc -L <<<"$OUT")" "$OUT"

# 3. The report is written before the page that links to it is sent: a
# receiver that holds each page 2.5 s; while it holds the first, the
# report the page links to must already be there.
# report_while_held CMD...: runs CMD in the background against the slow
# receiver; prints the link's file and whether it existed when the
# first page arrived ("there"/"missing").
report_while_held() {
	local log=$T/slow-$RANDOM.log pf=$T/slow-port-$RANDOM port pid spid i file state=none
	# Not on this function's output: $(...) would wait for the server to end.
	"${BUILD}/servers/pd_server" --port-file "$pf" --log "$log" --then delay:2500 \
		--timeout 120 >/dev/null 2>&1 &
	spid=$!
	for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.05; done
	port=$(cat "$pf")
	sed "s#127.0.0.1:$PORT#127.0.0.1:$port#" "$T/cfg.json" >"$T/slow.json"
	"$@" --config "$T/slow.json" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 400); do
		if [ -s "$log" ]; then
			file=$(head -1 "$log" | jq -r '.body.link' | sed 's#.*/##; s/#.*//')
			[ -s "$HOME_DIR/reports/$file" ] && state=there || state=missing
			break
		fi
		sleep 0.05
	done
	wait "$pid"
	kill "$spid" 2>/dev/null
	echo "$file $state"
}
fresh_db cli_incident_pages_order
pr --quiet db init
add sorder payments one
got=$(report_while_held pr post-deploy --service sorder --release v2 --commit "$commit" \
	--at 2026-01-12T00:00:00Z)
[ "${got#* }" = there ] &&
	ok "post-deploy: the report a page links to is written before the page is sent" ||
	not_ok "post-deploy report before page" "$got" "$(ls "$HOME_DIR/reports" 2>&1)"
fresh_db cli_incident_pages_order2
pr --quiet db init
add sorder payments one
got=$(report_while_held pr nightly --at 2026-01-12T00:00:00Z)
[ "${got#* }" = there ] &&
	ok "nightly: the report a page links to is written before the page is sent" ||
	not_ok "nightly report before page" "$got" "$(ls "$HOME_DIR/reports" 2>&1)"
finish
