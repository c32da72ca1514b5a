#!/bin/bash
# post-deploy as a CI step: exit codes for pass, regression, bad ref and a
# missing database; the Markdown summary; the deploy and the commit range
# from a real git repository; evidence tagged with the deploy's commit;
# an unreachable pager does not hold the step for more than its deadline.
. "$(dirname "$0")/lib.sh"
fresh_db cli_postdeploy
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_postdeploy
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 3 --functions 60 --factors 2 \
	--bands 10-30 --regressed 0.34 --seed 31 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
bad=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
good=$(grep '"regressed":false' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"

# A repository with two releases and commits between them.
R=$T/repo
git init -q "$R"
g() { git -C "$R" -c user.name=Alice -c user.email=a@example.com "$@"; }
echo one >"$R/ledger.go" && g add . && g commit -qm "ledger: first" && g tag v2
echo two >>"$R/ledger.go" && g commit -qam "ledger: batch the writes"
echo three >"$R/api.go" && g add . && g commit -qm "api: add an endpoint" && g tag -a "$rel" -m "release $rel"
sha=$(g rev-parse HEAD)

# A summary file that cannot be written is a usage error before anything is recorded.
mkdir -p "$T/summary-dir"
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 --at "$at" \
	--summary "$T/summary-dir"
[ $RC -eq 2 ] && [[ $ERR == *"cannot open '$T/summary-dir' for the summary"* ]] &&
	[ "$(sql "select count(*) from deploys")" = 0 ] && [ "$(sql "select count(*) from runs")" = 0 ] &&
	ok "--summary a directory: exit 2 before the deploy is recorded" || not_ok "summary dir" "rc=$RC $ERR"
run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 --at "$at"
echo "$OUT" >"$T/bad.md"
[ $RC -eq 1 ] && ok "a regression at or above the gate is exit 1" || not_ok "gate exit" "rc=$RC $ERR"
[[ $OUT == *"Verdict: FAIL"* ]] && [[ $OUT == *"| critical | regression |"* ]] && ok "the Markdown summary gives the verdict and the ranked findings" || not_ok "markdown" "$OUT"
# Capture counts as the report's column gives them: baseline, then current.
row=$(grep -m 1 '^| critical | regression |' <<<"$OUT")
nb=$(sql "select count(*) from profiles p join services s on s.id = p.service_id
          where s.name = '$bad' and p.release <> '$rel'")
nc=$(sql "select count(*) from profiles p join services s on s.id = p.service_id
          where s.name = '$bad' and p.release = '$rel'")
[[ $OUT == *"| q | captures b/c |"* ]] && [[ $row == *"| $nb/$nc |" ]] && [ "$nb" != "$nc" ] &&
	ok "the summary's captures column is baseline/current, as in the reports" ||
	not_ok "captures b/c" "$nb/$nc: $row"
v2sha=$(g rev-parse v2)
[[ $OUT == *"commits since \`${v2sha:0:12}\` (--previous)"* ]] && [[ $OUT != *"previous deploy"* ]] &&
	ok "a range started with --previous is not called the previous deploy's" ||
	not_ok "--previous wording" "$(grep -m 2 -i 'commit' <<<"$OUT")"
[[ $OUT == *"ledger: batch the writes"* ]] && [[ $OUT == *"api: add an endpoint"* ]] && [[ $OUT != *"ledger: first"* ]] && ok "the commit range runs from the previous release to this one" || not_ok "commit range" "$OUT"
[ "$(sql "select commit_sha from deploys d join services s on s.id=d.service_id where s.name='$bad'")" = "$sha" ] && ok "the deploy is recorded with the annotated tag peeled to its commit" || not_ok "deploy row"
[ "$(sql "select count(*) from profiles where tags->>'commit'='$sha' and retention_class='forensic'")" -ge 1 ] && ok "the evidence is tagged with the deploy's commit" || not_ok "evidence tags"
prid=$(sql "select max(id) from runs where kind='post-deploy'")
inst=$(sql "select left(replace(id::text, '-', ''), 8) from instance")
[[ $OUT == *"Report: \`$HOME_DIR/reports/run-$prid-$inst.html\`"* ]] && [ -s "$HOME_DIR/reports/run-$prid-$inst.html" ] &&
	grep -q "Suspect\|suspect" "$HOME_DIR/reports/run-$prid-$inst.html" &&
	ok "post-deploy writes the run's report and prints its path" || not_ok "post-deploy report" "run=$prid $OUT"

run pr post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 --at "$at" --gate critical --json
[ $RC -eq 1 ] && [[ $OUT == *'"verdict": "fail"'* ]] && ok "--json gives the same verdict" || not_ok "json" "rc=$RC"
[ "$(sql "select count(*) from deploys")" = 1 ] && ok "a retried CI job records the deploy once" || not_ok "deploy twice"
# The shifts a 2x regression causes in every other share: one line, not a row each.
nshift=$(grep -o '"direction": "relative_shift"' <<<"$OUT" | wc -l)
[ "$nshift" -gt 0 ] && ! grep -q '| relative_shift |' "$T/bad.md" &&
	grep -q "^$nshift functions\? moved only because the findings above did (relative shifts" "$T/bad.md" &&
	ok "relative shifts are one line under the findings ($nshift of them), each still in --json" ||
	not_ok "relative shifts folded" "shifts=$nshift $(cat "$T/bad.md")"

# The fleet's captures carry the simulator's commits, not the repository's:
# the build deployed was never measured, and a clean verdict on another
# build's captures is no pass.
gcommit=$(grep "\"service\":\"$good\",\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" |
	head -n 1 | sed 's/.*"commit":"\([0-9a-f]*\)".*/\1/')
run pr post-deploy --service "$good" --release "$rel" --commit "${sha:0:10}" --repo "$R" --at "$at"
[ $RC -eq 5 ] && [[ $OUT == *"**Verdict: inconclusive**"* ]] &&
	[[ $OUT == *"release '$rel' was deployed as commit $sha, but the captures judged are of commit $gcommit (capture "* ]] &&
	[[ $ERR == *"release '$rel' of service '$good' was captured as commit $gcommit"* ]] &&
	[[ $ERR == *"not the deployed $sha"* ]] &&
	ok "a release captured only as another commit than the one deployed is inconclusive, and said so" ||
	not_ok "other build" "rc=$RC $OUT $ERR"
run pr post-deploy --service "$good" --release "$rel" --commit "$gcommit" --at "$at" --json
[ $RC -eq 0 ] && [[ $ERR != *"captured as commit"* ]] &&
	[ "$(printf '%s' "$OUT" | jq -r .captured_commit)" = null ] &&
	ok "a release captured as the deployed commit needs no such note" ||
	not_ok "same build" "rc=$RC $ERR"
run pr post-deploy --service "$good" --release "$rel" --commit "$gcommit" --at "$at"
[ $RC -eq 0 ] && [[ $OUT == *"Verdict: pass"* ]] && ok "a clean release passes with exit 0" || not_ok "pass" "rc=$RC $OUT"
# Without a regression the verdict says so, not "0 regressions below the gate".
[[ $OUT == *"**Verdict: pass** - no regression"* ]] && [[ $OUT != *"0 regressions"* ]] &&
	ok "a release without a regression passes as such" || not_ok "no regression" "$OUT"

# A passing release whose report cannot be written is exit 3, said in a line.
: >"$T/notadir"
printf '{"reports": {"dir": "%s/notadir"}}' "$T" >"$T/badreports.json"
run pr --config "$T/badreports.json" post-deploy --service "$good" --release "$rel" --commit "$gcommit" \
	--at "$at"
[ $RC -eq 3 ] && [[ $OUT == *"Verdict: pass"* ]] && [[ $ERR == *"report not written"* ]] &&
	ok "a pass whose report cannot be written exits 3 and says why" ||
	not_ok "post-deploy report not written" "rc=$RC $ERR"

# Another collection holding the lock (a nightly, a second gate) is not a
# release profreg has never seen: exit 3, saying so, not exit 4.
mkdir -p "$T/drop-empty"
printf '{"services": {"%s": {"source": {"dir": "%s/drop-empty"}}}}' "$good" "$T" >"$T/src.json"
psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-collect:$good')), pg_sleep(6)" \
	>/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted
		and database = (select oid from pg_database where datname = current_database())")" -ge 1 ] && break
	sleep 0.1
done
run pr --config "$T/src.json" post-deploy --service "$good" --release v-next --commit "$gcommit" \
	--at "$at" --wait 1s
wait "$holder" 2>/dev/null
[ $RC -eq 3 ] && [[ $ERR == *"another collection"*"held its lock"* ]] &&
	ok "a gate whose collection is locked out exits 3 and says why" ||
	not_ok "collect lock" "rc=$RC $ERR"

run pr post-deploy --service "$good" --release "$rel" --commit no-such-ref --repo "$R" --at "$at"
[ $RC -eq 4 ] && [[ $ERR == *"no-such-ref"* ]] && ok "a ref that does not resolve is exit 4" || not_ok "bad ref" "rc=$RC $ERR"
run pr post-deploy --service "$good" --release "$rel" --commit main --at "$at"
[ $RC -eq 4 ] && [[ $ERR == *"without a repository"* ]] && ok "without a repository only a full SHA is accepted" || not_ok "no repo" "rc=$RC $ERR"
run "$PROFREG_BIN" --db "host=$T/nosuch dbname=x" --home "$HOME_DIR" post-deploy --service "$good" --release "$rel" --commit "$sha"
[ $RC -eq 3 ] && ok "a missing database is exit 3" || not_ok "no database" "rc=$RC $ERR"
run pr post-deploy --service "$good" --release "$rel"
[ $RC -eq 2 ] && ok "a missing --commit is exit 2" || not_ok "usage" "rc=$RC"
# One value an option that takes one: the last one winning judged another
# service than the one meant, and passed.
run pr post-deploy --service "$bad" --service "$good" --release "$rel" --commit "$sha"
[ $RC -eq 2 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"'--service' is given twice ('$bad' and '$good'): give it once"* ]] &&
	ok "an option given twice with two values is a usage error" || not_ok "twice" "rc=$RC $ERR"
run pr post-deploy --service "$good" --service "$good" --release "$rel" --commit "$sha" --at "$at"
[ $RC -ne 2 ] && [[ $ERR != *"given twice"* ]] && [[ $OUT == *"Verdict"* ]] &&
	ok "... the same value twice is harmless" || not_ok "same twice" "rc=$RC $ERR"
run pr post-deploy --help
[ $RC -eq 0 ] && ok "post-deploy --help" || not_ok "help"

# A pager that never answers must not hold the CI step: post-deploy sends
# only its own run's pages, within 30 s; the rest stays pending.
PD_SERVER=${PD_SERVER:-$BUILD/servers/pd_server}
if [ -x "$PD_SERVER" ]; then
	"$PD_SERVER" --port-file "$T/pd.port" --log "$T/pd.log" --script "" --then hang --timeout 200 &
	srv=$!
	trap 'kill $srv 2>/dev/null' EXIT
	for _ in $(seq 100); do [ -s "$T/pd.port" ] && break; sleep 0.05; done
	cat >"$T/page.json" <<EOF
{"paging": {"min_severity": "high", "max_attempts": 3, "backoff_ms": 20, "connect_timeout_ms": 2000,
  "timeout_ms": 20000,
  "targets": {"pd": {"type": "pagerduty", "url": "http://127.0.0.1:$(cat "$T/pd.port")", "secret_env": "PROFREG_TEST_PD_KEY"}},
  "default": ["pd"]}}
EOF
	export PROFREG_TEST_PD_KEY=0123456789abcdef0123456789abcdef
	# Another service's page waiting in the outbox: not this step's business.
	sql "insert into pages (service_id, dedup_key, target, event, detail)
	     select id, 'other-service-page', 'pd', 'trigger', '{}' from services where name = '$good'" >/dev/null
	t0=$(date +%s)
	run pr --config "$T/page.json" post-deploy --service "$bad" --release "$rel" --commit "$rel" --repo "$R" --previous v2 --at "$at"
	secs=$(( $(date +%s) - t0 ))
	mine=$(sql "select count(*) from pages p join findings f on f.id = p.finding_id join services s on s.id = f.service_id
	            where s.name = '$bad' and p.status = 'pending' and p.attempts >= 1")
	[ $RC -eq 1 ] && [ "$secs" -lt 45 ] && [ "$mine" -ge 1 ] && ok "a hanging pager: post-deploy returns in ${secs} s, its page left pending" || not_ok "post-deploy deadline" "rc=$RC secs=$secs pending-tried=$mine $(sql "select id, status, attempts, last_error from pages") $ERR"
	[[ $ERR == *"deadline"* ]] && ok "it warns that the rest waits in the outbox" || not_ok "deadline warning" "$ERR"
	[ "$(sql "select status || ' ' || attempts from pages where dedup_key = 'other-service-page'")" = "pending 0" ] && ok "another service's pending page is left to the next flush" || not_ok "scope" "$(sql "select status, attempts, last_error from pages where dedup_key = 'other-service-page'")"
	kill $srv 2>/dev/null
	unset PROFREG_TEST_PD_KEY
else
	not_ok "pd_server is built ($PD_SERVER)"
fi
# A release name of 243 bytes, most of them two-byte characters: the run's title is
# longer than a fixed buffer, and was cut in the middle of a character,
# so the JSON report could not be written ("out of memory").
long="rrr$(printf 'é%.0s' $(seq 120))"
mkdir -p "$T/long"
grep "\"service\":\"$good\"" "$T/fleet/manifest.jsonl" | grep "\"release\":\"$rel\"" | head -n 3 |
	while read -r line; do
		path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$line")
		{ cat "$T/fleet/$path"; echo "main;long.release 1"; } >"$T/long/$(basename "$path")"
		when=$(sed 's/.*"time":"\([^"]*\)".*/\1/' <<<"$line")
		pr --quiet ingest "$T/long/$(basename "$path")" --service "$good" --release "$long" \
			--type cpu --time "$when"
	done
run pr post-deploy --service "$good" --release "$long" --commit "$rel" --repo "$R" --previous v2 --at "$at"
lrid=$(sql "select max(id) from runs where kind='post-deploy'")
[ $RC -eq 0 ] && [[ $ERR != *"JSON report"* ]] && ls "$HOME_DIR"/reports/run-"$lrid"-*.json >/dev/null 2>&1 &&
	ok "a run whose release name is 243 bytes writes its JSON report" || not_ok "long release report" "rc=$RC $ERR"
run pr report --run "$lrid" --format json --out -
[ $RC -eq 0 ] && [ "$(jq -r .title <<<"$OUT")" = "profreg post-deploy run $lrid: $good $long (pass)" ] &&
	ok "its title keeps the whole name" || not_ok "long title" "rc=$RC $ERR $(jq -r .title <<<"$OUT" 2>&1 | head -c 300)"

# A drop folder whose only file is bad (no release in its sidecar): the
# collection failed, which is exit 3, naming it, with the closest release
# (a bumped version is always close to the last one). Beside a good file
# the collection went through, and a name close to a known one is the
# typo it looks like: exit 4, the hint and what the collection said.
mkdir -p "$T/drop-bad"
printf 'main;x 1\n' >"$T/drop-bad/x.folded"
printf '{}' >"$T/drop-bad/x.folded.json"
printf '{"services": {"%s": {"source": {"dir": "%s/drop-bad"}}}}' "$good" "$T" >"$T/srcbad.json"
run pr --config "$T/srcbad.json" post-deploy --service "$good" --release "${rel}x" --commit "$gcommit" \
	--at "$at"
[ $RC -eq 3 ] && [[ $ERR == *"did you mean '$rel'"*"the collection failed: drop folder"* ]] &&
	ok "no captures after a collection that failed is exit 3, naming the failure" ||
	not_ok "failed collection" "rc=$RC $ERR"
printf 'main;y 1\n' >"$T/drop-bad/y.folded"
printf '{"release": "zz-extra"}' >"$T/drop-bad/y.folded.json"
run pr --config "$T/srcbad.json" post-deploy --service "$good" --release "${rel}x" --commit "$gcommit" \
	--at "$at"
[ $RC -eq 4 ] && [[ $ERR == *"did you mean '$rel'"* ]] &&
	[[ $ERR == *"(the collection said: drop folder"*")" ]] &&
	ok "a release name close to a known one is exit 4 with the hint when the collection went through" ||
	not_ok "typo beside a bad file" "rc=$RC $ERR"

finish
