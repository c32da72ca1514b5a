#!/bin/bash
# A database restored from last night's dump is behind its reports
# folder: the runs sequence was dumped with it, so the next nightly took
# the id of a run that was lost and wrote its reports over that run's,
# which pages already sent link to. A new run now takes an id past every
# run-N-<this database> report in the folder and says so once; rewriting
# a known run's report (report --run) still overwrites it, as it should.
. "$(dirname "$0")/lib.sh"
fresh_db cli_restore_reports
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_restore_reports
rm -rf "$T" && mkdir -p "$T/keep"
R=$HOME_DIR/reports

pr --quiet service add web --team payments --enable
while read -r f rel at; do
	pr --quiet ingest "$f" --service web --release "$rel" --time "$at" --host "h-$rel" --type cpu
done < <(bash "$PROFREG_TEST_DATA/reports/web.sh" "$T/caps")
inst=$(sql "select left(replace(id::text, '-', ''), 8) from instance")

# Night 1 judges v1 alone; the dump is taken after it. Night 2 finds v2's rise.
run pr nightly --no-catch-up --at 2026-03-10T00:00:00Z
run1=$(sql "select max(id) from runs where kind = 'nightly'")
[ -n "$run1" ] && [ -s "$R/run-$run1-$inst.html" ] && [[ $ERR != *"behind its reports"* ]] &&
	ok "night 1 is run $run1 and writes its report, saying nothing of the folder" ||
	not_ok "night 1" "rc=$RC run=$run1 $ERR"
pg_dump -Fc "$DB" -f "$T/after1.dump"
run pr nightly --no-catch-up --at 2026-03-11T00:00:00Z
run2=$(sql "select max(id) from runs where kind = 'nightly'")
[ -n "$run2" ] && [ "$run2" -gt "$run1" ] && [ -s "$R/run-$run2-$inst.md" ] &&
	[ -s "$R/run-$run2-$inst-team-payments.html" ] &&
	grep -q computeTax "$R/run-$run2-$inst.md" && [[ $ERR != *"behind its reports"* ]] &&
	ok "night 2 is run $run2 and reports the rise" || not_ok "night 2" "rc=$RC run=$run2 $ERR"
names=$(cd "$R" && ls "run-$run2-$inst".* "run-$run2-$inst"-* 2>/dev/null)
for f in $names; do cp -p "$R/$f" "$T/keep/$f"; done

# Restored from the dump taken after night 1: run 2 is unknown, its files are not.
fresh_db cli_restore_reports_r
HOME_DIR=$PROFREG_TEST_TMP/home-cli_restore_reports
pg_restore --no-owner -d "$DB" "$T/after1.dump" 2>"$T/restore.err"
[ "$(sql "select count(*) from runs where id = $run2")" = 0 ] &&
	[ "$(sql "select left(replace(id::text, '-', ''), 8) from instance")" = "$inst" ] &&
	ok "the restored database lacks run $run2 and has the same instance" ||
	not_ok "restore" "$(cat "$T/restore.err")"

run pr nightly --no-catch-up --at 2026-03-12T00:00:00Z
run3=$(sql "select max(id) from runs where kind = 'nightly'")
same=yes
for f in $names; do cmp -s "$R/$f" "$T/keep/$f" || same="no: $f"; done
[ -n "$names" ] && [ "$same" = yes ] &&
	ok "run $run2's report files ($(wc -w <<<"$names")) are left as they were" ||
	not_ok "run $run2's files rewritten" "$same"
[ -n "$run3" ] && [ "$run3" -gt "$run2" ] && [ -s "$R/run-$run3-$inst.html" ] &&
	ok "the next run takes a new id ($run3) and writes its own report" ||
	not_ok "new id" "rc=$RC run=$run3 $ERR"
[[ $ERR == *"behind its reports folder"*"restored from a backup?"*"continue after $run2"* ]] &&
	[ "$(grep -c "behind its reports folder" <<<"$ERR")" = 1 ] &&
	ok "it says once that the database is behind its reports folder" || not_ok "stderr" "$ERR"
[ "$(sql "select count(*) from audit_log where action = 'blobs_held'
	and (detail->>'until_us')::bigint > (detail->>'newest_us')::bigint")" = 1 ] &&
	ok "it holds the blobs the database may have lost from the orphan sweep" ||
	not_ok "hold" "$(sql "select detail from audit_log where action = 'blobs_held'")"

# Past that, runs go on quietly; rewriting a known run's report is no new run.
run pr nightly --no-catch-up --at 2026-03-13T00:00:00Z
run4=$(sql "select max(id) from runs where kind = 'nightly'")
[ "$run4" -gt "$run3" ] && [[ $ERR != *"behind its reports"* ]] &&
	ok "the run after it says nothing more" || not_ok "quiet after" "run=$run4 $ERR"
printf 'stale\n' >"$R/run-$run1-$inst.md"
run pr report --run "$run1" --format md
[ $RC -eq 0 ] && [ "$OUT" = "$R/run-$run1-$inst.md" ] && ! grep -q stale "$R/run-$run1-$inst.md" &&
	[[ $ERR != *"behind its reports"* ]] &&
	ok "report --run $run1 still rewrites that run's report" || not_ok "report --run" "rc=$RC $OUT $ERR"

# A team's report alone, of a run this database never had, moves the ids too.
next=$((run4 + 5))
printf 'x\n' >"$R/run-$next-$inst-team-payments.html"
run pr nightly --no-catch-up --at 2026-03-13T12:00:00Z
run5=$(sql "select max(id) from runs where kind = 'nightly'")
[ "$run5" -gt "$next" ] && [ "$(cat "$R/run-$next-$inst-team-payments.html")" = x ] &&
	[[ $ERR == *"continue after $next"* ]] &&
	ok "a team report of a run it does not know moves the next id past it" ||
	not_ok "team file" "run=$run5 $ERR"

# Runs begun at the same time past such a file never share an id.
next=$((run5 + 20))
printf 'x\n' >"$R/run-$next-$inst.json"
for i in 1 2 3; do
	pr analyze --service web --release v2 --at 2026-03-11T00:00:00Z >"$T/a$i.out" 2>"$T/a$i.err" &
done
wait
ids=$(sql "select string_agg(id::text, ' ' order by id) from runs where kind = 'analyze'")
[ "$(wc -w <<<"$ids")" = 3 ] && [ "$(sql "select count(distinct id) from runs where kind = 'analyze'
	and id > $next")" = 3 ] && [ "$(cat "$T"/a*.err | grep -c 'behind its reports')" -ge 1 ] &&
	ok "three analyses begun at once take three ids past it ($ids)" ||
	not_ok "concurrent" "$ids $(cat "$T"/a*.err)"

# Another database's reports in the shared folder do not move this one's ids.
for ext in html md json; do printf 'x\n' >"$R/run-900-0000beef.$ext"; done
printf 'x\n' >"$R/run-950-$inst-notes.txt"
run pr nightly --no-catch-up --at 2026-03-14T00:00:00Z
run6=$(sql "select max(id) from runs where kind = 'nightly'")
[ "$run6" -gt "$run5" ] && [ "$run6" -lt 900 ] && [[ $ERR != *"behind its reports"* ]] &&
	ok "another database's run reports and other files leave the ids alone" ||
	not_ok "other files" "run=$run6 $ERR"

# A stray report far past any restore is named and left alone; the run goes on.
printf 'x\n' >"$R/run-99999999999-$inst.md"
run pr nightly --no-catch-up --at 2026-03-15T00:00:00Z
run7=$(sql "select max(id) from runs where kind = 'nightly'")
[ "$run7" -gt "$run6" ] && [ "$run7" -lt 900 ] &&
	[[ $ERR == *"run-99999999999-$inst"*"left alone"* ]] &&
	ok "a stray report far ahead is named in a warning and the night runs" ||
	not_ok "stray" "rc=$RC run=$run7 $ERR"
finish
