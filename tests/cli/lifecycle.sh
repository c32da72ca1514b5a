#!/bin/bash
# Findings with a life, end to end through the command line: a release
# that runs two nights is judged by `profreg nightly` on each with its
# captures so far; `finding list` shows the states and their history
# (and refuses an unknown state), `finding show` prints the history, the
# run's JSON and Markdown reports carry each finding's state, and the
# run records how many went away or were fixed.
. "$(dirname "$0")/lib.sh"
fresh_db cli_lifecycle
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_lifecycle
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 4 --functions 40 --factors 1.5,2 \
	--bands 10-30 --regressed 0.5 --nights 2 --seed 7 >"$T/gen.txt"
n1=$(sed -n 's/^at_night_1: //p' "$T/gen.txt")
n2=$(sed -n 's/^at_night_2: //p' "$T/gen.txt")
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done \
	<"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"
[ -n "$n1" ] && [ -n "$n2" ] && ok "a fleet whose new release runs two nights" ||
	not_ok "fleet" "$(cat "$T/gen.txt")"

# Night 1: the regressions are found and stored, each with a state.
run pr nightly --at "$n1" --json
regs=$(sql "select count(*) from findings where direction = 'regression'")
[ $RC -eq 0 ] && [ "$regs" -ge 2 ] &&
	[ "$(sql "select count(*) from findings where direction = 'regression'
		and state in ('candidate', 'confirmed')")" = "$regs" ] &&
	ok "night 1 stores $regs regressions, each a candidate or confirmed" ||
	not_ok "night 1" "rc=$RC regs=$regs $ERR"
[ "$(sql "select count(*) from finding_looks l join findings f on f.id = l.finding_id
	where f.direction = 'regression' and l.look = 1")" = "$regs" ] &&
	ok "each has its first look recorded" || not_ok "looks 1"

# Night 2: the same release, all of its captures so far, one look more.
run pr nightly --at "$n2" --json
[ $RC -eq 0 ] && [ "$(sql "select count(*) from findings where direction = 'regression'")" = "$regs" ] &&
	ok "night 2 adds no second finding for the same regressions" || not_ok "night 2" "rc=$RC $ERR"
[ "$(sql "select count(*) from findings where direction = 'regression' and state = 'confirmed'")" = "$regs" ] &&
	ok "after two significant looks every regression is confirmed" ||
	not_ok "confirmed" "$(sql "select function, state from findings where direction = 'regression'")"
[ "$(sql "select count(*) from finding_looks l join findings f on f.id = l.finding_id
	where f.direction = 'regression' and l.look = 2 and l.significant")" = "$regs" ] &&
	ok "night 2 is look 2 for each of them" || not_ok "looks 2"
[ "$(sql "select detail ? 'went_away' and detail ? 'fixed' from runs where kind = 'nightly'
	order by id desc limit 1")" = t ] &&
	ok "the run records how many findings went away or were fixed" || not_ok "run detail"

run pr finding list --state confirmed --wide
[ $RC -eq 0 ] && [ "$(grep -c ' confirmed ' <<<"$OUT")" -ge "$regs" ] &&
	ok "finding list --state confirmed lists them" || not_ok "list" "rc=$RC $OUT $ERR"
run pr finding list --json
[ $RC -eq 0 ] && python3 -c '
import json, sys
l = json.load(sys.stdin)
reg = [f for f in l if f["direction"] == "regression"]
assert reg and all(f["states"] and f["states"][-1]["state"] == "confirmed" for f in reg)
assert all(f["looks"] >= 2 for f in reg)
' <<<"$OUT" && ok "finding list --json gives each state history" || not_ok "list json" "rc=$RC $OUT"
run pr finding list --state bogus
[ $RC -eq 2 ] && [[ $ERR == *"unknown state 'bogus'"* ]] &&
	ok "an unknown state is a usage error" || not_ok "bogus state" "rc=$RC $ERR"
run pr finding list --help
[ $RC -eq 0 ] && [[ $OUT == *"--state"* ]] && ok "finding list --help" || not_ok "help"

fid=$(sql "select id from findings where direction = 'regression' order by id limit 1")
run pr finding show "$fid"
[ $RC -eq 0 ] && [[ $OUT == *"states"* ]] && [[ $OUT == *"confirmed"* ]] &&
	ok "finding show prints the state history" || not_ok "show" "rc=$RC $OUT $ERR"

rid=$(sql "select id from runs where kind = 'nightly' order by id desc limit 1")
run pr report --run "$rid" --format json --out -
[ $RC -eq 0 ] && python3 -c '
import json, sys
r = json.load(sys.stdin)
reg = [f for f in r["findings"] if f["direction"] == "regression"]
assert reg and all(f["state"] == "confirmed" and f["states"] for f in reg)
' <<<"$OUT" && ok "the JSON report carries states and their history" || not_ok "report json" "rc=$RC"
run pr report --run "$rid" --format md --out -
[ $RC -eq 0 ] && [[ $OUT == *"| state |"* ]] && [[ $OUT == *"| confirmed |"* ]] &&
	ok "the Markdown report has a state column" || not_ok "report md" "rc=$RC"

# Only a run that judges a finding as it was judged may close it. Each of
# these analyses sees it differently and, stored (no --dry-run), closed a
# confirmed and paged regression that was still there.
open_now() { sql "select count(*) from findings where direction = 'regression' and status = 'open'"; }
svc=$(sql "select s.name from findings f join services s on s.id = f.service_id
	where f.direction = 'regression' order by f.id limit 1")
rel=$(sql "select current_release from findings where direction = 'regression' order by id limit 1")
nopen=$(open_now)
third=$(sql "select to_char(captured_at at time zone 'UTC' + interval '1 second',
	'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from profiles p join services s on s.id = p.service_id
	where s.name = '$svc' and release = '$rel' order by captured_at offset 2 limit 1")
run pr analyze --all-services --release "$rel" --at "$third"
[ $RC -eq 0 ] && [ "$(open_now)" = "$nopen" ] &&
	ok "an analysis with --at in the past (3 captures of the release) closes nothing" ||
	not_ok "past --at" "rc=$RC open $(open_now) of $nopen $ERR"
run pr analyze --service "$svc" --release "$rel" --at "$n2" --rel-margin 0.9
[ $RC -eq 0 ] && [ "$(open_now)" = "$nopen" ] &&
	ok "an analysis with other margins closes nothing" ||
	not_ok "other margins" "rc=$RC open $(open_now) of $nopen"
run pr analyze --service "$svc" --release "$rel" --at "$n2" --min-share 90
[ $RC -eq 0 ] && [ "$(open_now)" = "$nopen" ] &&
	ok "an analysis that does not test the function closes nothing" ||
	not_ok "untested" "rc=$RC open $(open_now) of $nopen"
[ "$(sql "select count(*) from finding_states where state = 'went_away'")" = 0 ] &&
	ok "no finding went away" || not_ok "went away" "$(sql "select reason from finding_states where state = 'went_away'")"

# Raised with --fdr alone, the family took in regressions past q 0.05 that
# severity's own bound then called "none": never paged, never gated. (No
# margins, so that this fleet's small changes count too.)
run pr analyze --all-services --release "$rel" --at "$n2" --fdr 0.5 --rel-margin 0 \
	--abs-margin 0 --dry-run --json
[ $RC -eq 0 ] && python3 -c '
import json, sys
r = json.load(sys.stdin)
reg = [f for f in r["findings"] if f["direction"] == "regression"]
assert any(f["q_value"] > 0.05 for f in reg), "no regression past q 0.05 to show it"
assert all(f["severity"] != "none" for f in reg), [f for f in reg if f["severity"] == "none"]
' <<<"$OUT" && ok "at a raised fdr every regression found has a severity" ||
	not_ok "severity at fdr 0.5" "rc=$RC $(head -c 300 <<<"$OUT")"
finish
