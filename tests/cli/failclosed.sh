#!/bin/bash
# The gate and the jobs fail closed: post-deploy --wait judges the
# captures it waited for; inconclusive is not a pass; a release with no
# captures is refused; deploy history is ordered by deploy time; suspect
# commits are computed once and shown the same everywhere; a stored
# finding never changes; analyze --gate; unknown names are errors with a
# "did you mean"; service teams; refusals made up front; a capture
# stamped after "now", or of a type not judged, does not count towards
# --min-captures; a lock held elsewhere stops the gate at --deadline; a
# silent database server is noticed by TCP keepalives.
. "$(dirname "$0")/lib.sh"
fresh_db cli_failclosed
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_failclosed
rm -rf "$T" && mkdir -p "$T"

# The simulated night is yesterday, so that captures stamped "now" have
# the baseline of the 14 days before them.
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 3 --functions 60 --factors 2 --bands 10-30 \
	--regressed 0.34 --seed 51 --start "$(date -u -d '-15 days' +%Y-%m-%d)" >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
bad=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
fn=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"function":"\([^"]*\)".*/\1/')
good=$(grep '"regressed":false' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
# The baseline now; the new release's captures arrive later.
grep -v "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" >"$T/fleet/base.jsonl"
grep "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" >"$T/fleet/cur.jsonl"
pr --quiet ingest --manifest "$T/fleet/base.jsonl"

R=$T/repo
git init -q "$R"
g() { git -C "$R" -c user.name=Alice -c user.email=a@example.com "$@"; }
echo a >"$R/a.go" && g add . && g commit -qm "first" && g tag v1
echo b >"$R/b.go" && g add . && g commit -qm "second" && g tag v2
echo c >"$R/c.go" && g add . && g commit -qm "third" && g tag "$rel"

# 1. --wait: the captures delivered during the wait are the ones judged.
# They arrive stamped with the time they arrive, after the step started.
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 --at "$at" \
	--on-inconclusive pass
[ $RC -eq 4 ] && [[ $ERR == *"no captures of release '$rel'"* ]] && ok "a release with no captures is refused (exit 4)" ||
	not_ok "no captures" "rc=$RC $ERR"
[ "$(sql "select count(*) from deploys")" = 0 ] && ok "a refused release records no deploy" || not_ok "deploy recorded"
grep "\"service\":\"$bad\"" "$T/fleet/cur.jsonl" >"$T/fleet/cur-bad.jsonl"
pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 \
	--wait 60s --min-captures 4 >"$T/wait.out" 2>"$T/wait.err" &
pd=$!
sleep 2
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sed "s/\"time\":\"[^\"]*\"/\"time\":\"$now\"/" "$T/fleet/cur-bad.jsonl" >"$T/fleet/cur-now.jsonl"
pr --quiet ingest --manifest "$T/fleet/cur-now.jsonl"
wait $pd
RC=$?
[ $RC -eq 1 ] && grep -q 'Verdict: FAIL' "$T/wait.out" && grep -q "$fn" "$T/wait.out" &&
	ok "post-deploy --wait judges the captures that arrived during the wait" ||
	not_ok "wait" "rc=$RC $(cat "$T/wait.out" "$T/wait.err")"

# 3. Inconclusive fails closed, with its own exit code and the reason.
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 --min-captures 6
[ $RC -eq 1 ] && ok "a regression fails the gate even with fewer captures than asked for" || not_ok "fail wins" "rc=$RC"
grep "\"service\":\"$good\"" "$T/fleet/cur.jsonl" | sed "s/\"time\":\"[^\"]*\"/\"time\":\"$now\"/" >"$T/fleet/cur-good.jsonl"
pr --quiet ingest --manifest "$T/fleet/cur-good.jsonl"
run pr post-deploy --service "$good" --release "$rel" --commit "$rel" --repo "$R" --min-captures 6
[ $RC -eq 5 ] && [[ $OUT == *"Verdict: inconclusive"* ]] && [[ $OUT == *"only 4 of the 6 captures"* ]] &&
	ok "too few captures is inconclusive: exit 5, and the summary says why" || not_ok "inconclusive" "rc=$RC $OUT $ERR"
run pr post-deploy --service "$good" --release "$rel" --commit "$rel" --repo "$R" --min-captures 6 --on-inconclusive pass
[ $RC -eq 0 ] && [[ $OUT == *"passed by --on-inconclusive pass"* ]] && ok "--on-inconclusive pass makes it exit 0" ||
	not_ok "inconclusive pass" "rc=$RC $OUT"
printf '{"analysis": {"min_captures": 200}}' >"$T/thin.json"
run pr --config "$T/thin.json" post-deploy --service "$good" --release "$rel" --commit "$rel" --repo "$R"
[ $RC -eq 5 ] && [[ $OUT == *"insufficient baseline"* ]] && ok "too thin a baseline is inconclusive (exit 5)" ||
	not_ok "thin baseline" "rc=$RC $OUT $ERR"
# A build without its symbols: half of every stack's leaf becomes "[unknown]".
sleep 1
later=$(date -u +%Y-%m-%dT%H:%M:%SZ)
while IFS= read -r line; do
	path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$line")
	awk 'NR % 2 { sub(/;[^;]* /, ";[unknown] ") } { print }' "$T/fleet/$path" \
		>"$T/fleet/$path.stripped"
	sed -e "s#\"path\":\"$path\"#\"path\":\"$path.stripped\"#" \
		-e "s/\"release\":\"$rel\"/\"release\":\"stripped\"/" \
		-e 's/"commit":"[^"]*",//' -e "s/\"time\":\"[^\"]*\"/\"time\":\"$later\"/" <<<"$line"
done <"$T/fleet/cur-good.jsonl" >"$T/fleet/cur-stripped.jsonl"
pr --quiet ingest --manifest "$T/fleet/cur-stripped.jsonl"
run pr post-deploy --service "$good" --release stripped --commit "$rel" --repo "$R"
[ $RC -eq 5 ] && [[ $OUT == *"Verdict: inconclusive"* ]] && [[ $OUT == *"release lost its symbols"* ]] &&
	ok "a release without its symbols is inconclusive (exit 5), not a page of [unknown]" ||
	not_ok "stripped release" "rc=$RC $OUT $ERR"
run pr post-deploy --service "$good" --release "${rel}x" --commit "$rel" --repo "$R"
[ $RC -eq 4 ] && [[ $ERR == *"did you mean '$rel'?"* ]] && ok "a wrong --release is refused with the close name" ||
	not_ok "wrong release" "rc=$RC $ERR"

# 5. Collection problems are shown, not swallowed.
# The commit its captures carry: a pass judged on another build's is inconclusive.
gsha=$(head -n 1 "$T/fleet/cur-good.jsonl" | sed 's/.*"commit":"\([0-9a-f]*\)".*/\1/')
printf '{"services": {"%s": {"source": {"dir": "%s/no-such-folder"}}}}' "$good" "$T" >"$T/gone.json"
run pr --config "$T/gone.json" post-deploy --service "$good" --release "$rel" --commit "$gsha"
[ $RC -eq 0 ] && [[ $OUT == *"Collection problems"*"no-such-folder"* ]] && [[ $ERR == *"collection: drop folder"* ]] &&
	ok "post-deploy reports its service's collection failures" || not_ok "collection" "rc=$RC $OUT $ERR"

# 7. Deploys in deploy time: a re-run keeps its range; list and delete.
sql "delete from deploys" >/dev/null
sha1=$(g rev-parse v1)
sha2=$(g rev-parse v2)
sql "insert into deploys (service_id, release, commit_sha, deployed_at)
     select id, 'v1', '$sha1', now() - interval '2 days' from services where name = '$good'" >/dev/null
run pr post-deploy --service "$good" --release "$rel" --commit "$rel" --repo "$R"
first=$(sql "select previous_commit_sha from deploys where release = '$rel'")
sql "insert into deploys (service_id, release, commit_sha, deployed_at)
     select id, 'v9', '$sha2', now() + interval '1 hour' from services where name = '$good'" >/dev/null
run pr post-deploy --service "$good" --release "$rel" --commit "$rel" --repo "$R" --json
[ "$first" = "$sha1" ] && [ "$(jq -r .previous_commit <<<"$OUT")" = "$sha1" ] &&
	ok "a re-run keeps its commit range though a later deploy exists" || not_ok "re-run range" "first=$first $OUT"
run pr deploy list --service "$good" --json
[ $RC -eq 0 ] && [ "$(jq -r '.deploys[0].release' <<<"$OUT")" = v9 ] && [ "$(jq '.deploys | length' <<<"$OUT")" = 3 ] &&
	ok "deploy list, newest first by deploy time" || not_ok "deploy list" "$OUT"
did=$(sql "select id from deploys where release = 'v9'")
run pr deploy delete "$did"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from deploys where id = $did")" = 0 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'deploy.delete' and detail->>'release' = 'v9'")" = 1 ] &&
	ok "deploy delete removes a mistaken deploy, audited" || not_ok "deploy delete" "rc=$RC $ERR"
run pr deploy delete "$did"
[ $RC -eq 4 ] && ok "deleting it twice is exit 4" || not_ok "delete twice" "rc=$RC"

# 8. Suspects: computed once, the same in the summary, --json and reports.
pr --quiet post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 \
	>/dev/null 2>&1
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v1 --json
prid=$(jq -r .run_id <<<"$OUT")
json_note=$(jq -r '[.findings[] | select(.direction == "regression")][0].suspects | (.commits | length | tostring) + " " + (.note // "")' <<<"$OUT")
run pr report --run "$prid" --format json --out -
rep_note=$(jq -r '[.findings[] | select(.direction == "regression")][0] | ((.suspects // []) | length | tostring) + " " + (.suspect_note // "")' <<<"$OUT")
[ -n "$json_note" ] && [ "$json_note" = "$rep_note" ] && [[ $json_note != *"not computed"* ]] &&
	ok "post-deploy --json and the run's report give the same suspects ($json_note)" || not_ok "suspects agree" "json=$json_note report=$rep_note"
fid=$(sql "select f.id from findings f join services s on s.id = f.service_id where s.name = '$bad' and direction = 'regression' limit 1")
run pr report --finding "$fid" --format json --out -
fin_note=$(jq -r '.findings[0] | ((.suspects // []) | length | tostring) + " " + (.suspect_note // "")' <<<"$OUT")
[ "$fin_note" = "$rep_note" ] && ok "the finding's own report shows the stored suspects too" || not_ok "finding suspects" "$fin_note"

# 9. A stored finding never changes: a nightly whose window mixes two
# releases (a capture of an earlier release arrives an hour before the
# new ones) sees it again and leaves it as it was.
before=$(sql "select current_release, current_captures, detail->'captures', baseline_share, current_share from findings where id = $fid")
mkdir -p "$T/mix"
one=$(grep "\"service\":\"$bad\"" "$T/fleet/base.jsonl" | tail -n 1)
path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$one")
{ cat "$T/fleet/$path"; echo "main;mixed 1"; } >"$T/mix/old.folded"
sed "s|\"path\":\"[^\"]*\"|\"path\":\"old.folded\"|; s/\"time\":\"[^\"]*\"/\"time\":\"$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)\"/" \
	<<<"$one" >"$T/mix/m.jsonl"
pr --quiet ingest --manifest "$T/mix/m.jsonl"
printf '{"analysis": {"window_days": 400}, "retention": {"summary_days": 500}}' >"$T/wide.json"
pr --config "$T/wide.json" --quiet nightly --service "$bad" --at "$(date -u -d '+1 minute' +%Y-%m-%dT%H:%M:%SZ)" \
	--night 90m >/dev/null 2>&1
nrid=$(sql "select max(id) from runs where kind = 'nightly'")
after=$(sql "select current_release, current_captures, detail->'captures', baseline_share, current_share from findings where id = $fid")
[ "$(sql "select count(*) from run_findings where run_id = $nrid and finding_id = $fid")" = 1 ] && [ -n "$before" ] &&
	[ "$before" = "$after" ] && ok "a later run sees a stored finding again and never rewrites it" ||
	not_ok "finding rewritten" "run=$nrid $before / $after"

# 10. analyze --gate agrees with the exit-code table.
run pr analyze --service "$bad" --release "$rel" --dry-run
[ $RC -eq 0 ] && ok "analyze without --gate exits 0 with findings" || not_ok "analyze" "rc=$RC"
run pr analyze --service "$bad" --release "$rel" --dry-run --gate high
[ $RC -eq 1 ] && ok "analyze --gate high exits 1 on a critical regression" || not_ok "analyze gate" "rc=$RC"
run pr analyze --service "$good" --release "$rel" --dry-run --gate high
[ $RC -eq 0 ] && ok "analyze --gate passes a clean release" || not_ok "analyze gate clean" "rc=$RC $OUT"
run pr analyze --service "$good" --release "${rel}x" --dry-run --gate high
[ $RC -eq 4 ] && [[ $ERR == *"no cpu captures of release '${rel}x' of service '$good' (did you mean '$rel'?)"* ]] &&
	ok "analyze --gate refuses a release with no captures (exit 4)" || not_ok "gate no release" "rc=$RC $OUT $ERR"
run pr analyze --all-services --release "${rel}x" --dry-run
[ $RC -eq 4 ] && [[ $ERR == *"no cpu captures of release '${rel}x' in any enabled service"* ]] &&
	ok "analyze --all-services refuses a release no service has (exit 4)" || not_ok "all no release" "rc=$RC $ERR"
run pr analyze --service "$good" --since 2001-01-01T00:00:00Z --until 2001-01-02T00:00:00Z --dry-run
[ $RC -eq 4 ] && [[ $ERR == *"no cpu captures of service '$good' in the selected time range"* ]] &&
	ok "analyze refuses a time range with no captures (exit 4)" || not_ok "empty range" "rc=$RC $ERR"
run pr analyze --service "$good" --release "$rel" --dry-run --gate high --min-captures 200
[ $RC -eq 5 ] && [[ $ERR == *"inconclusive: $good/cpu: insufficient baseline"* ]] &&
	ok "analyze --gate that cannot judge is inconclusive (exit 5)" || not_ok "gate thin" "rc=$RC $OUT $ERR"
run pr analyze --all-services --release "$rel" --dry-run --gate critical
[ $RC -eq 1 ] && ok "analyze --all-services --gate fails on the regressed service" || not_ok "all gate" "rc=$RC $ERR"

# 11. Unknown names are errors that point at the close name.
typo=${bad/svc-/svc_}
run pr profiles list --service "$typo"
[ $RC -eq 4 ] && [[ $ERR == *"service '$typo' not found (did you mean '$bad'?)"* ]] && ok "profiles list: unknown service, exit 4, did you mean" ||
	not_ok "profiles typo" "rc=$RC $ERR"
run pr post-deploy --service "$typo" --release "$rel" --commit "$rel" --repo "$T/no-repo"
[ $RC -eq 4 ] && [[ $ERR == *"did you mean '$bad'"* ]] && [[ $ERR != *"repo"* ]] && ok "post-deploy blames the service, not the repository" ||
	not_ok "post-deploy typo" "rc=$RC $ERR"
run pr diff --base "service=$typo,release=v1" --target "service=$bad,release=$rel" --out -
[ $RC -eq 4 ] && [[ $ERR == *"did you mean '$bad'"* ]] && ok "diff: unknown service, did you mean" || not_ok "diff typo" "rc=$RC $ERR"
run pr nightly --service "$typo"
[ $RC -eq 4 ] && [[ $ERR == *"did you mean '$bad'"* ]] && ok "nightly --service: unknown service is exit 4" || not_ok "nightly typo" "rc=$RC $ERR"

# 12. Teams: from the config, idempotent add, service set.
printf '{"services": {"ledger": {"team": "payments"}}}' >"$T/team.json"
run pr --config "$T/team.json" service add ledger
[ $RC -eq 0 ] && [ "$(sql "select team from services where name = 'ledger'")" = payments ] && ok "service add takes the team from the config" ||
	not_ok "config team" "rc=$RC $ERR"
run pr --config "$T/team.json" service add ledger
[ $RC -eq 0 ] && [[ $OUT == *"already exists"* ]] && ok "adding it again with nothing different is exit 0" || not_ok "add twice" "rc=$RC $ERR"
run pr service add ledger --team risk
[ $RC -eq 4 ] && [[ $ERR == *"team 'payments'"*"service set ledger --team risk"* ]] && ok "adding it with another team is refused, naming service set" ||
	not_ok "add other team" "rc=$RC $ERR"
run pr service set ledger --team risk
[ $RC -eq 0 ] && [ "$(sql "select team from services where name = 'ledger'")" = risk ] &&
	[ "$(sql "select count(*) from audit_log where action = 'service.set'")" = 1 ] && ok "service set changes the team, audited" ||
	not_ok "service set" "rc=$RC $ERR"

# 19. Refusals made before any work.
printf '{"retention": {"after_nightly": true}}' >"$T/ret.json"
n=$(sql "select count(*) from runs")
run pr --config "$T/ret.json" nightly --at 9999-01-01T00:00:00Z
[ $RC -eq 2 ] && [ "$(sql "select count(*) from runs")" = "$n" ] && ok "nightly --at in the far future with retention is refused up front" ||
	not_ok "at 9999" "rc=$RC $ERR"
run pr analyze --service "$bad" --release "$rel" --window 99999999d
[ $RC -eq 2 ] && [[ $ERR == *"--window 99999999d"* ]] && [[ $ERR != *"database"* ]] && ok "an absurd --window is a usage error" ||
	not_ok "window" "rc=$RC $ERR"
printf '{"services": {"x y": {}}}' >"$T/name.json"
run pr config check "$T/name.json"
[ $RC -eq 2 ] && [[ $ERR == *"not a valid service name"* ]] && ok "the config refuses a service name the CLI refuses" || not_ok "config name" "rc=$RC $ERR"

# 23. A gate answers in bounded time: another session holding a lock the
# step needs does not hang it; at --deadline it stops with exit 3 and the
# reason, never a pass, and the next run judges the release.
psql "$DB" -qAt -c "begin; lock table findings in access exclusive mode; select pg_sleep(120)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do
	[ "$(sql "select count(*) from pg_locks l join pg_class c on c.oid = l.relation
		where c.relname = 'findings' and l.mode = 'AccessExclusiveLock' and l.granted")" = 1 ] && break
	sleep 0.1
done
t0=$(date +%s)
run timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" post-deploy --service "$bad" --release "$rel" \
	--commit "$rel" --repo "$R" --previous v2 --deadline 3s --on-inconclusive pass
took=$(($(date +%s) - t0))
[ $RC -eq 3 ] && [ "$took" -le 20 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"no verdict within the deadline (--deadline 3s)"*"the release is not passed"* ]] &&
	ok "a lock held by another session stops post-deploy at --deadline with exit 3 (${took} s)" ||
	not_ok "deadline" "rc=$RC after ${took} s: $ERR"
stuck=$(sql "select id from runs where kind = 'post-deploy' and status = 'running'")
kill "$holder" 2>/dev/null
sql "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database()
	and application_name = 'psql' and pid <> pg_backend_pid()" >/dev/null
wait "$holder" 2>/dev/null
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2
[ $RC -eq 1 ] && [[ $OUT == *"Verdict: FAIL"* ]] && [ -n "$stuck" ] &&
	[ "$(sql "select status from runs where id = ${stuck:-0}")" = interrupted ] &&
	ok "once the lock is gone the next run judges the release and marks the stopped run interrupted" ||
	not_ok "after the deadline" "rc=$RC stuck=$stuck $ERR $(sql "select id, status from runs")"
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --wait 10m --deadline 5m
[ $RC -eq 2 ] && [[ $ERR == *"'--deadline 5m' leaves no time after '--wait'"* ]] &&
	ok "a --deadline within --wait is a usage error" || not_ok "deadline usage" "rc=$RC $ERR"

# 24. A database server that goes silent over TCP (a host down, a network
# cut) is noticed in about a minute, not the kernel's 2 hours: the
# connection probes after 30 s of silence; the caller's conninfo overrides.
# A loopback server that accepts and never answers stands in for it.
PD_SERVER=${PD_SERVER:-$BUILD/servers/pd_server}
"$PD_SERVER" --port-file "$T/silent.port" --log "$T/silent.log" --script hang --then hang --timeout 60 &
silent=$!
for _ in $(seq 100); do [ -s "$T/silent.port" ] && break; sleep 0.05; done
sp=$(cat "$T/silent.port")
# keepalive_timer CONNINFO_EXTRA: the keepalive timer of a connection being made.
keepalive_timer() {
	"$PROFREG_BIN" --db "host=127.0.0.1 port=$sp user=x dbname=x $1" service list >/dev/null 2>&1 &
	local job=$! t=""
	for _ in $(seq 50); do
		t=$(ss -tnoH state established "( dport = :$sp )" | sed -n 's/.*timer:(keepalive,\([^,]*\),.*/\1/p')
		[ -n "$t" ] && break
		sleep 0.1
	done
	kill "$job" 2>/dev/null
	wait "$job" 2>/dev/null
	echo "$t"
}
t=$(keepalive_timer "")
[[ $t =~ ^[0-9]+sec$ ]] && [ "${t%sec}" -le 30 ] &&
	ok "a TCP connection to the database probes a silent server after 30 s ($t left)" ||
	not_ok "keepalive" "timer: '$t'"
t=$(keepalive_timer "keepalives_idle=600")
[[ $t == 9min* || $t == 10min* ]] && ok "keepalives_idle in the conninfo overrides it ($t left)" ||
	not_ok "keepalive override" "timer: '$t'"
kill "$silent" 2>/dev/null
wait "$silent" 2>/dev/null

# 20. Without a repository the summary says so once, not again under a
# suspect line that said it. V8 profiles name each function's file.
cpuprof() { # A B: A samples in compute (app/tax.js), B in other (app/x.js)
	local s d
	s=$( (for _ in $(seq "$1"); do echo 2; done; for _ in $(seq "$2"); do echo 3; done) | paste -sd,)
	d=$(for _ in $(seq $(($1 + $2))); do echo 1000; done | paste -sd,)
	printf '{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"",'
	printf '"lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2,3]},'
	printf '{"id":2,"callFrame":{"functionName":"compute","scriptId":"1","url":"file:///app/tax.js",'
	printf '"lineNumber":1,"columnNumber":1},"hitCount":%d},' "$1"
	printf '{"id":3,"callFrame":{"functionName":"other","scriptId":"1","url":"file:///app/x.js",'
	printf '"lineNumber":9,"columnNumber":1},"hitCount":%d}],' "$2"
	printf '"startTime":0,"endTime":%d,"samples":[%s],"timeDeltas":[%s]}\n' $((($1 + $2) * 1000)) "$s" "$d"
}
fresh_db cli_failclosed_norepo
pr --quiet db init && pr --quiet service add jsx --enable
for i in 1 2 3 4 5 6 7 8; do
	cpuprof $((100 + i * 3)) $((300 - i * 2)) >"$T/b$i.cpuprofile"
	pr --quiet ingest "$T/b$i.cpuprofile" --service jsx --release v1 --host "h$i" \
		--time "$(date -u -d "-$((i + 2)) days" +%Y-%m-%dT%H:%M:%SZ)"
done
for i in 1 2 3; do
	cpuprof $((200 + i * 4)) $((300 - i * 3)) >"$T/c$i.cpuprofile"
	pr --quiet ingest "$T/c$i.cpuprofile" --service jsx --release v2 --host "g$i"
done
run pr post-deploy --service jsx --release v2 --commit "$sha2"
[ $RC -eq 1 ] && [[ $OUT == *"Suspect commits for compute (file:///app/tax.js): No repository configured"* ]] &&
	[ "$(grep -c "No repository configured" <<<"$OUT")" = 1 ] &&
	ok "no repository: said once in the summary" || not_ok "no repository" "rc=$RC $ERR" "$OUT"

# 21. A capture stamped after "now" (a host's clock ahead) is not judged
# by the analysis, so it does not count towards --min-captures either: a
# gate that judged one capture must not pass as the four asked for.
fresh_db cli_failclosed_skew
pr --quiet db init && pr --quiet service add jsx --enable
for i in 1 2 3 4 5 6 7 8; do
	pr --quiet ingest "$T/b$i.cpuprofile" --service jsx --release v1 --host "h$i" \
		--time "$(date -u -d "-$((i + 2)) days" +%Y-%m-%dT%H:%M:%SZ)"
done
for i in 1 2 3 4; do
	cpuprof $((101 + i * 3)) $((299 - i * 2)) >"$T/s$i.cpuprofile"
	when=$([ $i = 1 ] && echo now || echo '+3 hours')
	pr --quiet ingest "$T/s$i.cpuprofile" --service jsx --release v2 --host "g$i" \
		--time "$(date -u -d "$when" +%Y-%m-%dT%H:%M:%SZ)"
done
run pr post-deploy --service jsx --release v2 --commit "$sha2" --min-captures 4
[ $RC -eq 5 ] && [[ $OUT == *"Verdict: inconclusive"* ]] &&
	[[ $OUT == *"only 1 of the 4 captures asked for"*"3 more are stamped after it"* ]] &&
	ok "captures stamped in the future do not count towards --min-captures" ||
	not_ok "future captures" "rc=$RC $ERR" "$OUT"
# A clock a few seconds ahead: the wait lasts until they are due, then judges all four.
for i in 1 2 3 4; do
	cpuprof $((210 + i * 4)) $((290 - i * 3)) >"$T/r$i.cpuprofile"
	pr --quiet ingest "$T/r$i.cpuprofile" --service jsx --release v3 --host "g$i" \
		--time "$(date -u -d "+$((i == 1 ? 0 : 7)) seconds" +%Y-%m-%dT%H:%M:%SZ)"
done
run pr post-deploy --service jsx --release v3 --commit "$sha2" --min-captures 4 --wait 40s --json
[ $RC -eq 1 ] && [ "$(jq '[.findings[] | select(.direction == "regression")][0].current_captures' \
	<<<"$OUT")" = 4 ] && ok "the wait lasts until captures stamped a little ahead are due" ||
	not_ok "captures due during the wait" "rc=$RC $ERR" "$OUT"

# 22. --min-captures counts what is judged: a service without types in the
# configuration is judged on cpu, so two cpu and two heap captures are not
# the four captures asked for.
for i in 1 2; do
	cpuprof $((120 + i * 5)) $((280 - i * 4)) >"$T/t$i.cpuprofile"
	pr --quiet ingest "$T/t$i.cpuprofile" --service jsx --release v4 --host "k$i" \
		--time "$(date -u -d "-$i minutes" +%Y-%m-%dT%H:%M:%SZ)"
done
for f in go-heap go119-heap; do
	pr --quiet ingest "$PROFREG_TEST_DATA/pprof/$f.pb.gz" --service jsx --release v4 --type heap \
		--host "k-$f" --time "$(date -u -d "-1 minute" +%Y-%m-%dT%H:%M:%SZ)"
done
run pr post-deploy --service jsx --release v4 --commit "$sha2" --min-captures 4
[ $RC -eq 5 ] && [[ $OUT == *"Verdict: inconclusive"* ]] &&
	[[ $OUT == *"only 2 of the 4 captures asked for (--min-captures) are of a type the analysis judged (4 captures of the release in all)"* ]] &&
	ok "captures of a type not judged do not count towards --min-captures" ||
	not_ok "types judged" "rc=$RC $ERR" "$OUT"

# 4. No enabled service: the night is not a success.
fresh_db cli_failclosed_empty
pr --quiet db init
run pr nightly
[ $RC -eq 3 ] && [[ $ERR == *"no service was analysed"* ]] && ok "a nightly that analyses nothing exits 3" || not_ok "empty night" "rc=$RC $ERR"
[ "$(sql "select status from runs where kind = 'nightly'")" = incomplete ] && ok "and is recorded as incomplete" || not_ok "empty night record"
finish
