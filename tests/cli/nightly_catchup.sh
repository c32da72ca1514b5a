#!/bin/bash
# A nightly after the machine was down catches up the nights it missed:
# a release that ran five nights while no nightly ran (v3, each service
# one function twice its share) was judged first at its fifth look, past
# the four that spend alpha, and its regressions were never found. Now
# the missed nights are run first, each its own run, and the findings,
# their states and the pages equal those of a machine that never went
# down; a second nightly the same night adds nothing. --no-catch-up and
# an --at in the past judge their night alone; missed nights older than
# the baseline window are named, not run; a night whose run was
# interrupted is run again; a nightly spread over workers catches up too.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_nightly_catchup
rm -rf "$T" && mkdir -p "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

webhook_start
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 3 --functions 40 --factors 2 --bands 10-30 \
	--regressed 1 --seed 5 --nights 5 >"$T/gen.txt"
# The baseline ends, and v3 starts, at night 0; it runs nights 1 to 5.
n0=$(sed -n 's/^night: \([^ ]*\) to .*/\1/p' "$T/gen.txt")
n5=$(sed -n 's/^at_night_5: //p' "$T/gen.txt")
day() { date -u -d "${n0%T*} + $1 days" +%Y-%m-%dT00:00:00Z; }

# cfg FILE [ANALYSIS]: drop folders under $T/drop-$DBNAME, paging to the hook.
cfg() {
	{
		echo '{"services": {'
		sep=""
		while read -r s; do
			printf '%s"%s": {"team": "t", "source": {"dir": "%s"}}' "$sep" "$s" "$DROP/$s"
			sep=","
		done <"$T/fleet/services.txt"
		echo '},'
		echo "\"paging\": {\"min_severity\": \"high\", \"backoff_ms\": 20, \"timeout_ms\": 3000,"
		echo " \"targets\": {\"hook\": {\"type\": \"webhook\","
		echo "  \"url\": \"http://127.0.0.1:$PORT/hook\"}},"
		echo " \"default\": [\"hook\"]},"
		echo "\"workers\": {\"lease_s\": 5, \"poll_ms\": 100}${2:+, \"analysis\": $2}}"
	} >"$1"
}

# world NAME [ANALYSIS]: a fresh database, its drop folders and config.
world() {
	fresh_db "cli_nightly_catchup_$1"
	pr --quiet db init
	DROP=$T/drop-$1
	CFG=$T/$1.json
	while read -r s; do
		mkdir -p "$DROP/$s"
		pr --quiet service add "$s" && pr --quiet service enable "$s"
	done <"$T/fleet/services.txt"
	cfg "$CFG" "${2:-}"
}

# drop_before TIME: the captures taken before TIME into the drop folders,
# each with its sidecar, as the services would have written them.
drop_before() {
	python3 - "$T/fleet" "$DROP" "$1" <<'EOF'
import json, os, shutil, sys
src, drop, to = sys.argv[1:]
for line in open(os.path.join(src, 'manifest.jsonl')):
    m = json.loads(line)
    f = os.path.join(drop, m['service'], os.path.basename(m['path']))
    if m['time'] >= to or os.path.exists(f + '.json'):
        continue
    shutil.copyfile(os.path.join(src, m['path']), f)
    meta = {k: v for k, v in m.items() if k not in ('path', 'service')}
    with open(f + '.json', 'w') as out:
        json.dump(meta, out)
EOF
}

nightly() { run pr --config "$CFG" nightly "$@"; }
runs() { sql "select count(*) from runs where kind = 'nightly' $1"; }
triggers() { sql "select count(*) from pages where event = 'trigger'"; }
# What a machine's nights found: each regression of v3, its state, its pages.
outcome() {
	sql "select s.name || ' ' || f.function || ' ' || f.state || ' ' || f.status || ' ' ||
		(select count(*) from pages p where p.finding_id = f.id and p.event = 'trigger')
		from findings f join services s on s.id = f.service_id
		where f.direction = 'regression' and f.current_release = 'v3' order by 1"
}

# 1. The machine that never went down: nights 0 to 5, each in turn.
world ref
for k in 0 1 2 3 4 5; do
	drop_before "$(day "$k")"
	nightly --quiet --at "$(day "$k")"
done
ref=$(outcome)
nreg=$(grep -c '"regressed":true' "$T/fleet/truth.jsonl")
[ "$(grep -c . <<<"$ref")" = "$nreg" ] &&
	[ "$(grep -c ' confirmed open 1$' <<<"$ref")" = "$nreg" ] &&
	ok "a machine never down confirms and pages each of the $nreg regressions once" ||
	not_ok "reference nights" "$ref"

# 2. The machine ran night 0, was down nights 1 to 4, and runs night 5.
world down
drop_before "$(day 0)"
nightly --at "$(day 0)"
drop_before "$n5"
: >"$T/hook.log"
nightly --at "$n5"
[ $RC -eq 0 ] && [ "$(grep -c '^caught up the missed night to ' <<<"$OUT")" = 4 ] &&
	[[ $OUT == *"caught up the missed night to $(day 1): run "* ]] &&
	[[ $OUT == *"caught up the missed night to $(day 4): run "* ]] &&
	[[ $OUT == *"nightly run at $n5: 3 services analysed"* ]] &&
	ok "the nightly after four missed nights runs each first, one line each, and exits 0" ||
	not_ok "catch-up run" "rc=$RC $OUT $ERR"
got=$(outcome)
[ "$got" = "$ref" ] &&
	ok "its regressions, their states and pages equal the machine's that never went down" ||
	not_ok "catch-up outcome" "got: $got" "ref: $ref"
[ "$(triggers)" = "$nreg" ] && [ "$(grep -c 'trigger' "$T/hook.log")" = "$nreg" ] &&
	ok "each regression is paged once" ||
	not_ok "catch-up pages" "triggers $(triggers) $(cat "$T/hook.log")"
[ "$(runs)" = 6 ] && [ "$(runs "and detail ->> 'catch_up' = 'true'")" = 4 ] &&
	[ "$(sql "select string_agg(detail ->> 'at', ' ' order by id) from runs
		where kind = 'nightly'")" = "$(day 0) $(day 1) $(day 2) $(day 3) $(day 4) $n5" ] &&
	[ "$(sql "select jsonb_array_length(detail -> 'caught_up_runs') from runs
		where kind = 'nightly' order by id desc limit 1")" = 4 ] &&
	ok "each missed night is its own run, in order, marked a catch-up" ||
	not_ok "catch-up runs" "$(sql "select id, status, detail ->> 'at', detail ->> 'catch_up'
		from runs where kind = 'nightly' order by id")"
[ "$(ls "$HOME_DIR"/reports/run-*.html | wc -l)" = 6 ] &&
	ok "each night writes its report" || not_ok "catch-up reports" "$(ls "$HOME_DIR/reports")"
nf=$(sql "select count(*) from findings")
np=$(sql "select count(*) from pages")
nightly --quiet --at "$n5"
[ $RC -eq 0 ] && [ -z "$OUT$ERR" ] && [ "$(runs)" = 7 ] &&
	[ "$(sql "select count(*) from findings")" = "$nf" ] &&
	[ "$(sql "select count(*) from pages")" = "$np" ] &&
	ok "a second nightly the same night catches up nothing and adds nothing" ||
	not_ok "second nightly" "rc=$RC runs $(runs) $OUT $ERR"

# 3. A quiet nightly that catches up prints nothing when all is well.
world quiet
drop_before "$(day 0)"
nightly --quiet --at "$(day 0)"
drop_before "$n5"
nightly --quiet --at "$n5"
[ $RC -eq 0 ] && [ -z "$OUT$ERR" ] && [ "$(runs)" = 6 ] && [ "$(outcome)" = "$ref" ] &&
	ok "under --quiet the catch-up prints nothing and finds the same" ||
	not_ok "quiet catch-up" "rc=$RC runs $(runs) $OUT $ERR"

# 4. --no-catch-up judges its night alone, and so does a past --at.
world alone
drop_before "$(day 0)"
nightly --quiet --at "$(day 0)"
drop_before "$n5"
nightly --no-catch-up --at "$n5"
[ $RC -eq 0 ] && [[ $OUT != *"caught up"* ]] && [ "$(runs)" = 2 ] &&
	ok "--no-catch-up runs its own night only" || not_ok "--no-catch-up" "rc=$RC $OUT $ERR"
nightly --at "$(day 3)"
[ $RC -eq 0 ] && [[ $OUT != *"caught up"* ]] && [ "$(runs)" = 3 ] &&
	[ "$(runs "and detail ? 'catch_up'")" = 0 ] &&
	ok "a night before the newest finished one runs alone, catching up nothing before it" ||
	not_ok "past --at" "rc=$RC runs $(runs) $OUT $ERR"
nightly --at "$n5" --service svc-000
nightly --at "$(day 7)" --service svc-000
[ "$(runs)" = 5 ] && [[ $OUT != *"caught up"* ]] &&
	ok "a nightly of some services catches up nothing" || not_ok "--service" "runs $(runs) $OUT"

# 5. A night whose run was interrupted (the machine stopped mid-run) is
# run again by the next one; a run of some services is not the fleet's.
nightly --quiet --at "$(day 6)"
sql "update runs set status = 'interrupted' where id = (select max(id) from runs)" >/dev/null
nightly --at "$(day 7)"
[[ $OUT == *"caught up the missed night to $(day 6): run "* ]] &&
	[ "$(grep -c '^caught up' <<<"$OUT")" = 1 ] &&
	ok "a night whose run was interrupted is caught up by the next" ||
	not_ok "interrupted night" "rc=$RC $OUT $ERR"

# 6. Missed nights older than the baseline window are named, not run.
world window '{"window_days": 2, "min_captures": 2}'
drop_before "$(day 0)"
nightly --quiet --at "$(day 0)"
drop_before "$n5"
nightly --quiet --at "$n5"
[ "$(runs)" = 4 ] && [ "$(runs "and detail ->> 'catch_up' = 'true'")" = 2 ] &&
	[[ $ERR == *"2 missed nights, to $(day 1) through $(day 2), older than the baseline window"* ]] &&
	[ "$(sql "select detail -> 'not_caught_up' ->> 'nights' from runs
		where kind = 'nightly' order by id desc limit 1")" = 2 ] &&
	ok "missed nights past the baseline window are said even under --quiet, not run" ||
	not_ok "window bound" "rc=$RC runs $(runs) $OUT $ERR"

# 7. A nightly spread over workers (the coordinator working every task)
# catches up the same way.
world workers
drop_before "$(day 0)"
nightly --quiet --workers --at "$(day 0)"
drop_before "$n5"
nightly --quiet --workers --at "$n5"
[ $RC -eq 0 ] && [ "$(runs)" = 6 ] && [ "$(outcome)" = "$ref" ] &&
	[ "$(sql "select count(distinct run_id) from tasks")" -ge 5 ] &&
	ok "a nightly over workers catches up, finding the same" ||
	not_ok "workers catch-up" "rc=$RC runs $(runs) $(outcome) $ERR"

run "$PROFREG_BIN" nightly --help
[ $RC -eq 0 ] && [[ $OUT == *"--no-catch-up"* ]] && [[ $OUT == *"without a zone, UTC"* ]] &&
	ok "nightly --help names --no-catch-up and the zone of --at" || not_ok "help" "$OUT"
finish
