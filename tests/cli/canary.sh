#!/bin/bash
# Canary against control: the same window's captures of canary hosts
# judged against control hosts instead of the rolling baseline. Captures
# are made here (folded, with a host each, jittered shares from a fixed
# seed): control hosts web-3 to web-6 run v1 all morning, web-7 (a thin
# host) has two captures; canary hosts web-1 and web-2 run v2 (encode
# costs half as much again) from 00:00 to 06:00, then v3 (clean) from
# 07:00 to 12:00. A canary regression is found (analyze) and gates
# post-deploy (exit 1); a clean canary passes (exit 0); a thin control is
# inconclusive (exit 5) with its reason, and so are fewer canary captures
# than --min-captures; unknown hosts are a usage error naming them.
. "$(dirname "$0")/lib.sh"
fresh_db cli_canary
T=$PROFREG_TEST_TMP/cli_canary
rm -rf "$T" && mkdir -p "$T/c"
DAY=2026-11-30
AT=${DAY}T13:00:00Z
SHA=0123456789abcdef0123456789abcdef01234567

# capture HOST RELEASE HH:MM ENCODE_SHARE_PERMILLE SEED: one folded file and its manifest line.
capture() {
	local f="$T/c/$1-$2-${3/:/}.folded"
	awk -v enc="$4" -v seed="$5" 'BEGIN {
		srand(seed)
		j = 1 + (rand() - 0.5) * 0.04
		printf "main;serve;encode %d\n", enc * 10 * j
		printf "main;serve;handle %d\n", 5000 * (1 + (rand() - 0.5) * 0.04)
		printf "main;gc %d\n", 1500 * (1 + (rand() - 0.5) * 0.04)
		printf "main;io;read %d\n", 1500 * (1 + (rand() - 0.5) * 0.04)
	}' >"$f"
	printf '{"path": "%s", "service": "checkout", "release": "%s", "host": "%s", "time": "%sT%s:00Z", "type": "cpu"}\n' \
		"$f" "$2" "$1" "$DAY" "$3" >>"$T/manifest.jsonl"
}
seed=1
for h in 0 1 2 3 4 5 6 7 8 9 10 11; do
	hh=$(printf '%02d' "$h")
	for m in 00 30; do
		t="$hh:$m"
		for host in web-3 web-4 web-5 web-6; do capture "$host" v1 "$t" 200 $((seed++)); done
		if [ "$h" -lt 6 ]; then
			for host in web-1 web-2; do capture "$host" v2 "$t" 300 $((seed++)); done
		elif [ "$h" -ge 7 ]; then
			for host in web-1 web-2; do capture "$host" v3 "$t" 200 $((seed++)); done
		fi
	done
done
capture web-7 v1 01:00 200 $((seed++))
capture web-7 v1 02:00 200 $((seed++))
pr --quiet db init
pr --quiet service add checkout && pr --quiet service enable checkout
run pr --quiet ingest --manifest "$T/manifest.jsonl"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from profiles")" = 142 ] && ok "142 captures with hosts ingest" ||
	not_ok "ingest" "rc=$RC $ERR"

# The rolling baseline cannot judge v2: nothing of an earlier release precedes it.
run pr analyze --service checkout --release v2 --at "$AT" --dry-run --json
[ $RC -eq 0 ] && [ "$(jq '.findings | length' <<<"$OUT")" = 0 ] &&
	jq -r '.insufficient[0].reason' <<<"$OUT" | grep -q 'insufficient baseline' &&
	ok "against the rolling baseline v2 cannot be judged (nothing before it)" || not_ok "rolling" "rc=$RC $OUT"

run pr analyze --service checkout --release v2 --cohort 'web-[12]' --control 'web-3,web-4,web-5,web-6' \
	--at "$AT" --dry-run --gate high --json
enc=$(jq -c '[.findings[] | select(.function == "main;serve;encode" or .function == "encode")][0]' <<<"$OUT")
[ $RC -eq 1 ] && [ "$(jq -r .direction <<<"$enc")" = regression ] &&
	[ "$(jq -r .current_captures <<<"$enc")" = 24 ] && [ "$(jq -r .baseline_captures <<<"$enc")" = 48 ] &&
	[ "$(jq -r '.baseline_releases | join(",")' <<<"$enc")" = v1 ] &&
	ok "canary vs control finds encode's regression on the canary hosts (24 against 48 captures, gate exit 1)" ||
	not_ok "canary regression" "rc=$RC $enc $ERR"
echo "$OUT" >"$T/canary.json"

# The same cohorts written as host selectors, the control by negation.
run pr analyze --service checkout --release v2 --cohort 'host=web-[12]' \
	--control 'host=!web-[127]' --at "$AT" --dry-run --gate high --json
[ $RC -eq 1 ] && [ "$(jq -c '.findings' <<<"$OUT")" = "$(jq -c '.findings' "$T/canary.json")" ] &&
	ok "host=PATTERN and host=!PATTERN select the same cohorts" || not_ok "host= form" "rc=$RC $ERR"

# The control by default: every other host of the service (web-3 to web-7).
run pr analyze --service checkout --release v2 --cohort web-1,web-2 --at "$AT" --dry-run --json
[ $RC -eq 0 ] && [ "$(jq -r '[.findings[] | select(.direction == "regression")][0].baseline_captures' <<<"$OUT")" = 50 ] &&
	ok "without --control the control is the service's other hosts (50 captures, web-7's two included)" ||
	not_ok "default control" "rc=$RC $(head -c 600 <<<"$OUT") $ERR"

run pr analyze --service checkout --release v3 --cohort 'web-[12]' --at "$AT" --dry-run --gate high --json
[ $RC -eq 0 ] && [ "$(jq '[.findings[] | select(.direction == "regression")] | length' <<<"$OUT")" = 0 ] &&
	ok "a clean canary (v3) has no regression against its control" || not_ok "clean analyze" "rc=$RC $OUT"

run pr analyze --service checkout --release v2 --cohort 'web-[12]' --control web-7 --at "$AT" --dry-run
[ $RC -eq 5 ] && grep -q "insufficient control: 2 eligible cpu captures of the control hosts" <<<"$OUT$ERR" &&
	ok "a control of two captures is inconclusive (exit 5), saying why" || not_ok "thin control" "rc=$RC $OUT $ERR"

run pr analyze --service checkout --release v2 --cohort 'web-1,web-9,db-*' --at "$AT" --dry-run
[ $RC -eq 2 ] && grep -q "unknown hosts in the canary hosts: 'web-9', 'db-\*' (service 'checkout' has captures from: web-1, web-2" <<<"$ERR" &&
	ok "unknown canary hosts are a usage error naming them and the known ones" || not_ok "unknown hosts" "rc=$RC $ERR"
run pr analyze --service checkout --release v2 --cohort web-1 --control web-1,web-3 --at "$AT" --dry-run
[ $RC -eq 2 ] && grep -q "host 'web-1' is in both the canary and the control hosts" <<<"$ERR" &&
	ok "a host in both sets is a usage error" || not_ok "overlap" "rc=$RC $ERR"
run pr analyze --service checkout --release v2 --cohort 'web-1,' --at "$AT" --dry-run
[ $RC -eq 2 ] && grep -q "the canary hosts 'web-1,' hold an empty or overlong name" <<<"$ERR" &&
	ok "an empty name in a host list is a usage error" || not_ok "empty item" "rc=$RC $ERR"
# A host list's syntax is refused before post-deploy's --wait, not after it.
long=$(printf 'w%.0s' $(seq 300))
for spec in 'web-1,' 'host=' "web-1,$long"; do
	for side in canary control; do
		args=(--canary 'web-[12]')
		[ $side = canary ] && args=(--canary "$spec") || args+=(--control "$spec")
		SECONDS=0
		run timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" post-deploy \
			--service checkout --release v9 --commit "$SHA" "${args[@]}" --wait 20m
		[ $RC -eq 2 ] && [ $SECONDS -lt 10 ] && [ "$(wc -l <<<"$ERR")" = 1 ] &&
			grep -q "the $side hosts '.*' hold an empty or overlong name" <<<"$ERR" &&
			ok "post-deploy --$side '${spec:0:12}': exit 2 at once, before the wait" ||
			not_ok "post-deploy --$side '${spec:0:12}'" "rc=$RC after ${SECONDS}s" "$ERR"
	done
done
# Hosts whose names hold glob characters are named as written: a name that
# is a host selects it alone; escaped, a glob matches it literally.
pr --quiet service add globs && pr --quiet service enable globs
for host in 'web-[1]' web-1 'web*' web-2; do
	capture "$host" g1 10:00 200 $((seed++))
	pr --quiet ingest "$T/c/$host-g1-1000.folded" --service globs --release g1 --host "$host" \
		--time "${DAY}T10:00:00Z"
done
# COHORT|CONTROL|N: judged (exit 5, too thin) with N captures of the control
# hosts, so the two sets are apart: 'web-[1]' as a glob is web-1 too, 'web*'
# every host.
for c in 'web-[1]|web-1|1' 'web*||3' 'web*|web-2|1' 'web-\[1\]|web-1|1' \
	'host=!web-[1]|web-[1]|1'; do
	IFS='|' read -r cohort control n <<<"$c"
	run pr analyze --service globs --since "${DAY}T09:00:00Z" --cohort "$cohort" \
		${control:+--control "$control"} --at "${DAY}T11:00:00Z" --dry-run
	[ $RC -eq 5 ] && [[ $ERR == *"insufficient control: $n eligible cpu captures of the control"* ]] &&
		ok "--cohort '$cohort'${control:+ --control '$control'}: the hosts as named" ||
		not_ok "--cohort '$cohort' --control '$control'" "rc=$RC $ERR"
done
run pr analyze --service checkout --release v2 --control web-3 --at "$AT"
[ $RC -eq 2 ] && grep -q -- "--control needs --cohort" <<<"$ERR" && ok "--control without --cohort is a usage error" ||
	not_ok "control alone" "rc=$RC $ERR"

# post-deploy gates a canary deploy the same way.
run pr post-deploy --service checkout --release v3 --commit "$SHA" --canary 'web-[12]' --at "$AT"
[ $RC -eq 0 ] && [[ $OUT == *"Verdict: pass"* ]] &&
	[[ $OUT == *"Canary deploy: the release on the canary hosts web-1, web-2 against the control hosts web-3, web-4, web-5, web-6, web-7, over the same window"* ]] &&
	ok "post-deploy passes a clean canary (exit 0) and says which hosts it compared" ||
	not_ok "post-deploy clean" "rc=$RC $OUT $ERR"
# Its captures carry no commit: taken as the deployed build by their release
# name, which the gate says rather than reading as a checked build.
[[ $ERR == *"none of the 20 captures of release 'v3' judged carries a commit: they are taken as the deployed $SHA by their release name"* ]] &&
	ok "a gate on captures without a commit says they are the build by name only" ||
	not_ok "commitless note" "$ERR"
run pr post-deploy --service checkout --release v2 --commit "$SHA" --canary 'web-[12]' --control 'web-[3-6]' --at "$AT" --json
[ $RC -eq 1 ] && [ "$(jq -r .verdict <<<"$OUT")" = fail ] && [ "$(jq -c .hosts.control <<<"$OUT")" = '["web-3","web-4","web-5","web-6"]' ] &&
	[ "$(sql "select detail->'canary_hosts' from runs where kind = 'post-deploy' order by id desc limit 1")" = '["web-1", "web-2"]' ] &&
	ok "post-deploy fails a canary with a regression (exit 1) and records its host sets" ||
	not_ok "post-deploy regression" "rc=$RC $(head -c 800 <<<"$OUT") $ERR"
run pr post-deploy --service checkout --release v3 --commit "$SHA" --canary 'web-[12]' --control web-7 --at "$AT"
[ $RC -eq 5 ] && [[ $OUT == *"insufficient control"* ]] && ok "post-deploy with a thin control is inconclusive (exit 5) with the reason" ||
	not_ok "post-deploy thin control" "rc=$RC $OUT $ERR"
# --min-captures counts the canary's captures: web-1 holds 10 of v3's 20.
run pr post-deploy --service checkout --release v3 --commit "$SHA" --canary web-1 --min-captures 15 \
	--at "$AT"
[ $RC -eq 5 ] && [[ $OUT == *"only 10 of the 15 captures asked for (--min-captures) are on the canary"* ]] &&
	ok "post-deploy with fewer canary captures than --min-captures is inconclusive" ||
	not_ok "post-deploy thin canary" "rc=$RC $OUT $ERR"
run pr post-deploy --service checkout --release v3 --commit "$SHA" --canary web-8 --at "$AT"
[ $RC -eq 2 ] && grep -q "unknown host in the canary hosts: 'web-8'" <<<"$ERR" &&
	ok "post-deploy with an unknown canary host is a usage error naming it" || not_ok "post-deploy unknown" "rc=$RC $ERR"

# The rollout reached the control hosts: v4 (encode 1.5x) runs on every
# host from 12:00. The control's captures of v4 are no control: compared
# with them, v4 passed against itself.
: >"$T/manifest.jsonl"
for t in 12:00 12:15 12:30 12:45; do
	for host in web-1 web-2 web-3 web-4 web-5 web-6; do capture "$host" v4 "$t" 300 $((seed++)); done
done
pr --quiet ingest --manifest "$T/manifest.jsonl"
run pr post-deploy --service checkout --release v4 --commit "$SHA" --canary 'web-[12]' --at "$AT"
[ $RC -eq 5 ] && [[ $OUT == *"insufficient control"* ]] &&
	ok "a canary whose control hosts run the same release is inconclusive, not a pass" ||
	not_ok "control of the same release" "rc=$RC $(grep -m 2 -i 'verdict\|control' <<<"$OUT") $ERR"
finish
