#!/bin/bash
# The README's CI step, crontab line and systemd unit, run as written:
# each block is read out of README.md (only the paths it names are
# pointed at this test's folders), so a change to the README that breaks
# them fails here. The CI step runs under `bash -e`, as CI runs it: a
# regression, an unknown service, a missing database and an unset secret
# fail the step; a clean release passes. The configuration files the
# README and docs/sources.md show pass `config check`, and the error
# lines and the new database's figures the README quotes are the ones
# profreg prints.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$PROFREG_TEST_TMP/cli_readme
rm -rf "$T" && mkdir -p "$T/bin"
ln -s "$PROFREG_BIN" "$T/bin/profreg"

# The `run: |` block of the CI step, dedented.
ci=$(awk '/^- name: profile regression gate$/ {f = 1} f && /^```/ {exit}
	f && run {sub(/^    /, ""); print} f && /^  run: \|$/ {run = 1}' "$ROOT/README.md")
[ -n "$ci" ] && [[ $ci == *"post-deploy"* ]] && ok "the README has a CI step" || not_ok "CI step" "$ci"
[[ $ci != *"| tee"* ]] && ok "the CI step pipes into nothing that could hide its status" || not_ok "tee" "$ci"

# One simulated fleet; the regressed service and a null one become
# "checkout" in two databases, with the new release named by a commit.
"$BUILD/sim/fleetgen" --out "$T/fleet" --services 2 --functions 50 --factors 2 --bands 10-30 \
	--regressed 0.5 --seed 41 >"$T/gen.txt"
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
bad=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | sed 's/.*"service":"\([^"]*\)".*/\1/')
good=$(grep '"regressed":false' "$T/fleet/truth.jsonl" | sed 's/.*"service":"\([^"]*\)".*/\1/')
R=$T/repo
git init -q "$R"
echo one >"$R/main.go"
git -C "$R" -c user.name=Ci -c user.email=ci@example.com add .
git -C "$R" -c user.name=Ci -c user.email=ci@example.com commit -qm "the release"
sha=$(git -C "$R" rev-parse HEAD)

setup_db() { # NAME SERVICE-FROM-FLEET
	fresh_db "$1"
	pr --quiet db init
	pr --quiet service add checkout && pr --quiet service enable checkout
	# The new release's captures carry the commit CI deploys, as an
	# agent stamping GITHUB_SHA's build does.
	grep "\"service\":\"$2\"" "$T/fleet/manifest.jsonl" |
		sed -e "/\"release\":\"$rel\"/ s/\"commit\":\"[0-9a-f]*\"/\"commit\":\"$sha\"/" \
			-e "s/\"service\":\"$2\"/\"service\":\"checkout\"/; s/\"release\":\"$rel\"/\"release\":\"$sha\"/" \
			>"$T/fleet/m-$1.jsonl"
	pr --quiet ingest --manifest "$T/fleet/m-$1.jsonl"
}
setup_db cli_readme_bad "$bad"
DB_BAD=$DB
setup_db cli_readme_good "$good"
DB_GOOD=$DB
fresh_db cli_readme_empty
pr --quiet db init
DB_EMPTY=$DB

step() { # PROFREG_DB: runs the CI block as GitHub Actions does (bash -e, no pipefail)
	: >"$T/summary.md"
	(cd "$R" && env PATH="$T/bin:/usr/bin:/bin" HOME="$T" GITHUB_SHA="$sha" \
		GITHUB_STEP_SUMMARY="$T/summary.md" PROFREG_DB="$1" RUNNER_TEMP="$T/runner" \
		bash -e -c "$ci") >"$T/step.out" 2>"$T/step.err"
	RC=$?
}

step "$DB_BAD"
[ $RC -eq 1 ] && grep -q 'Verdict: FAIL' "$T/summary.md" && ok "the step fails on a real regression, the summary says why" ||
	not_ok "regression" "rc=$RC $(cat "$T/step.err")"
step "$DB_GOOD"
[ $RC -eq 0 ] && grep -q 'Verdict: pass' "$T/summary.md" && ok "the step passes a clean release" ||
	not_ok "clean" "rc=$RC $(cat "$T/step.err") $(cat "$T/summary.md")"
step "$DB_EMPTY"
[ $RC -eq 4 ] && grep -q "service 'checkout' not found" "$T/step.err" && ok "the step fails when the service is not registered" ||
	not_ok "no service" "rc=$RC $(cat "$T/step.err")"
step "$PROFREG_TEST_DB dbname=cli_readme_no_such_db"
[ $RC -eq 3 ] && ok "the step fails when the database is not there" || not_ok "no database" "rc=$RC $(cat "$T/step.err")"
step ""
[ $RC -ne 0 ] && grep -q "'--db' is empty" "$T/step.err" && ok "the step fails when the secret is unset" ||
	not_ok "unset secret" "rc=$RC $(cat "$T/step.err")"
step "host=/tmp password=hunter2 junk"
[ $RC -eq 2 ] && grep -q "connection string is not valid" "$T/step.err" &&
	! grep -q hunter2 "$T/step.err" &&
	ok "a malformed secret is a usage error (2) that does not show its password" ||
	not_ok "malformed secret" "rc=$RC $(cat "$T/step.err")"
[ ! -e "$R/var" ] && [ "$(git -C "$R" status --porcelain)" = "" ] &&
	ok "the step writes nothing into the checkout" || not_ok "checkout written" "$(git -C "$R" status --porcelain)"

# The crontab line, run as cron runs it: sh, a bare PATH, no profreg
# environment. The home gets its private cluster from `db init` first.
cron=$(grep -E '^30 2 \* \* \*' "$ROOT/README.md" | head -n 1)
cmd=$(sed -E 's/^([^ ]+ +){5}//' <<<"$cron")
[[ $cmd == /* ]] && ok "the crontab line names the binary by its full path" || not_ok "cron path" "$cmd"
H=$T/state
cmd=${cmd//\/usr\/local\/bin\/profreg/$PROFREG_BIN}
cmd=${cmd//\/var\/lib\/profreg/$H}
cmd=${cmd//\/etc\/profreg.json/$T/profreg.json}
printf '{"services": {"checkout": {"team": "payments"}}}\n' >"$T/profreg.json"
"$PROFREG_BIN" --home "$H" --quiet db init >/dev/null 2>&1
"$PROFREG_BIN" --home "$H" --quiet service add checkout >/dev/null
"$PROFREG_BIN" --home "$H" --quiet service enable checkout >/dev/null
"$PROFREG_BIN" --home "$H" --quiet ingest --manifest "$T/fleet/m-cli_readme_good.jsonl" >/dev/null
at_night() { # the simulated night is in the past: run cron's command as of then
	at=$(sed -n 's/^at: //p' "$T/gen.txt")
	env -i HOME="$T" LOGNAME=root PATH=/usr/bin:/bin SHELL=/bin/sh /bin/sh -c "$cmd --at $at" \
		>"$T/cron.out" 2>"$T/cron.err"
	RC=$?
}
at_night
[ $RC -eq 0 ] && [ ! -s "$T/cron.out" ] && [ ! -s "$T/cron.err" ] && ok "a good night under cron prints nothing (no mail)" ||
	not_ok "cron quiet" "rc=$RC out=$(cat "$T/cron.out") err=$(cat "$T/cron.err")"
[ "$("$PROFREG_BIN" --home "$H" runs list --json | jq -r '.runs[0].status')" = ok ] &&
	ok "the cron night is recorded as ok" || not_ok "cron run"
printf '{"services": {"checkout": {"team": "payments", "source": {"dir": "%s/gone"}}}}\n' "$T" >"$T/profreg.json"
at_night
[ $RC -eq 3 ] && [ ! -s "$T/cron.out" ] && grep -q "service 'checkout' failed" "$T/cron.err" &&
	ok "a failed night under cron exits 3 and says why on stderr (mailed)" ||
	not_ok "cron failure" "rc=$RC out=$(cat "$T/cron.out") err=$(cat "$T/cron.err")"

# The systemd unit's Environment= and ExecStart=, with nothing else.
env_line=$(sed -n 's/^Environment=//p' "$ROOT/README.md" | head -n 1)
exec_line=$(sed -n 's/^ExecStart=//p' "$ROOT/README.md" | head -n 1)
[[ $exec_line == /* ]] && [ -n "$env_line" ] && ok "the systemd unit names the binary by its full path" || not_ok "unit" "$exec_line"
printf '{"services": {"checkout": {"team": "payments"}}}\n' >"$T/profreg.json"
exec_line=${exec_line//\/usr\/local\/bin\/profreg/$PROFREG_BIN}
exec_line=${exec_line//\/etc\/profreg.json/$T/profreg.json}
env_line=${env_line//\/var\/lib\/profreg/$H}
# shellcheck disable=SC2086
env -i "$env_line" PATH=/usr/bin:/bin $exec_line --at "$(sed -n 's/^at: //p' "$T/gen.txt")" >"$T/unit.out" 2>&1
RC=$?
[ $RC -eq 0 ] && grep -q 'services analysed' "$T/unit.out" && ok "the systemd unit's command runs the night" ||
	not_ok "systemd" "rc=$RC $(cat "$T/unit.out")"

# A typo in --home is an error, not a new empty world.
run "$PROFREG_BIN" --home "$H-typo" --config "$T/profreg.json" nightly
[ $RC -eq 3 ] && [[ $ERR == *"no database"*"db init"* ]] && [ ! -e "$H-typo" ] &&
	ok "a typo in --home fails (exit 3) and creates nothing" || not_ok "home typo" "rc=$RC $ERR $(ls "$H-typo" 2>&1)"
for c in "post-deploy --service checkout --release v1 --commit $sha" "analyze --all-services --since 1d" \
	"report --run 1" "retention" "page flush" "profiles list" "service enable checkout"; do
	# shellcheck disable=SC2086
	run "$PROFREG_BIN" --home "$H-typo" $c
	[ $RC -eq 3 ] && [ ! -e "$H-typo" ] && [[ $ERR == *"no database"* ]] &&
		ok "${c%% *} with a typo in --home fails and creates nothing" || not_ok "${c%% *} creates nothing" "rc=$RC $ERR"
done
# The configuration files the README and docs/sources.md show pass
# `config check` as written, with their paths moved under $T/fs (the
# folders, repository and owner-only secret files they name made there).
F=$T/fs
mkdir -p "$F/var/spool/profreg/checkout" "$F/var/lib/profreg/reports" "$F/etc/prometheus/sd" \
	"$F/etc/profreg"
git init -q "$F/srv/git/checkout"
echo '[{"targets": ["10.0.0.5:6060"], "labels": {"release": "v1"}}]' >"$F/etc/prometheus/sd/checkout.json"
: >"$F/etc/profreg/ca.pem"
for f in pyroscope.password drops.secret; do
	echo secret >"$F/etc/profreg/$f" && chmod 600 "$F/etc/profreg/$f"
done
n=0
for doc in README.md docs/sources.md; do
	awk -v dir="$T" -v tag="$(basename "$doc" .md)" '/^```json$/ {n++; f = dir "/cfg-" tag "-" n ".json"; next}
		/^```$/ {f = ""; next} f {print > f}' "$ROOT/$doc"
done
for c in "$T"/cfg-*.json; do
	# A JSON block that is a configuration file has a section at its top.
	grep -q '"services"\|"limits"\|"collect"' "$c" || continue
	sed -i "s#\"/\(var\|srv\|etc\)/#\"$F/\1/#g" "$c"
	n=$((n + 1))
	run env PROFREG_PD_KEY=k PROFREG_CHECKOUT_PPROF_TOKEN=t PROFREG_PARCA_TOKEN=t DROPS_KEY_ID=k \
		"$PROFREG_BIN" --home "$H" config check --config "$c"
	[ $RC -eq 0 ] && [[ $OUT == *"is valid"* ]] && ok "the example $(basename "$c") passes config check" ||
		not_ok "example $(basename "$c")" "rc=$RC $ERR" "$(cat "$c")"
done
[ $n -ge 4 ] && ok "$n configuration examples checked" || not_ok "configuration examples" "$n"

# The one-line errors the README quotes are the ones profreg prints.
quoted() { tr '\n' ' ' <"$ROOT/README.md" | sed 's/  */ /g' | grep -qF -- "$1"; }
run "$PROFREG_BIN" --db "$DB_GOOD" service add payments-api
run "$PROFREG_BIN" --db "$DB_GOOD" profiles list --service paymnts-api
msg=${ERR#profreg profiles list: }
[ $RC -eq 4 ] && quoted "$msg" && ok "an unknown service's message is the README's" || not_ok "service msg" "rc=$RC $ERR"
run "$PROFREG_BIN" --db "$DB_GOOD" profiles list --servce checkout
msg=${ERR#profreg profiles list: }
[ $RC -eq 2 ] && quoted "$msg" && ok "a mistyped option's message is the README's" || not_ok "option msg" "rc=$RC $ERR"
head -c 100 "$PROFREG_TEST_DATA/pprof/go-cpu.pb.gz" >"$T/cpu.pb.gz"
run "$PROFREG_BIN" --db "$DB_GOOD" ingest "$T/cpu.pb.gz" --service checkout --release v9
msg=${ERR//$T\//}
[ $RC -eq 4 ] && quoted "\`$msg\`" && ok "a truncated profile's message is the README's" ||
	not_ok "ingest msg" "rc=$RC $ERR"
# A typo in --config fails the commands that read no configuration too.
for c in "profiles list" "service list" "runs list"; do
	# shellcheck disable=SC2086
	run "$PROFREG_BIN" --home "$H" --config "$T/profreg.jsn" $c
	[ $RC -eq 2 ] && [[ $ERR == *"cannot read config '$T/profreg.jsn'"* ]] && [ -z "$OUT" ] &&
		ok "${c%% *} with a typo in --config fails" || not_ok "${c%% *} --config typo" "rc=$RC $OUT $ERR"
done
"$PROFREG_BIN" --home "$H" --quiet db stop >/dev/null 2>&1
# The figures the README quotes for a new database are the ones db init prints.
fresh_db cli_readme_new
run pr db init
applied=$(grep -o 'applied [0-9]* database migrations' <<<"$ERR")
[ $RC -eq 0 ] && [ -n "$applied" ] && quoted "(\"$applied\", then \"$OUT\")" &&
	ok "a new database's migrations and version are the README's" ||
	not_ok "migration figures" "rc=$RC $OUT $ERR"
finish
