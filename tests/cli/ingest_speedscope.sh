#!/bin/bash
# End to end for speedscope files: py-spy's threads, an evented file and
# profreg's own export go in, detected or named with --format, and are
# stored with the functions and shares worked out by hand; malformed
# files are refused with exit 4 and one line naming them, writing nothing.
. "$(dirname "$0")/lib.sh"
fresh_db cli_ingest_speedscope
pr --quiet db init
D=$PROFREG_TEST_DATA/speedscope
T=$PROFREG_TEST_TMP/cli_ingest_speedscope
rm -rf "$T" && mkdir -p "$T"

run pr service add pyapp --enable
[ $RC -eq 0 ] && ok "service add --enable" || not_ok "service add" "$ERR"

# The self and total of function $2 (file $3) in capture $1, as "self total".
values() {
	sql "select pf.self_value || ' ' || pf.total_value from profile_functions pf
	     join functions f on f.id = pf.function_id
	     where pf.profile_id = $1 and f.name = '$2' and f.file = '$3'"
}

# py-spy: two threads merged, 0.01 s a sample, compute at two lines one function.
run pr ingest "$D/pyspy-threads.speedscope.json" --service pyapp --release v1
[ $RC -eq 0 ] && [[ $OUT == *"(speedscope, cpu, 12 samples, 7 functions)"* ]] &&
	ok "a py-spy file is detected and stored with its 12 samples" ||
	not_ok "ingest py-spy" "rc=$RC $OUT $ERR"
id=$(sql "select id from profiles order by id desc limit 1")
row=$(sql "select format, value_type, value_unit, total_value, sample_count, duration_ns
	   from profiles where id = $id")
[ "$row" = "speedscope|cpu|nanoseconds|120000000|12|70000000" ] &&
	ok "the capture is stored as speedscope, 120 ms of cpu in 12 samples over 70 ms" ||
	not_ok "capture row" "$row"
[ "$(values "$id" compute /app/calc.py)" = "80000000 80000000" ] &&
	[ "$(values "$id" main /app/main.py)" = "10000000 70000000" ] &&
	[ "$(values "$id" worker /app/main.py)" = "20000000 50000000" ] &&
	[ "$(values "$id" '<module>' /app/main.py)" = "0 70000000" ] &&
	ok "functions have the self and total time worked out by hand" ||
	not_ok "function values" "$(sql "select f.name, pf.self_value, pf.total_value
		from profile_functions pf join functions f on f.id = pf.function_id
		where pf.profile_id = $id")"
[ "$(sql "select count(*) from profile_functions pf join functions f on f.id = pf.function_id
	  where pf.profile_id = $id and f.name = 'compute'")" = 1 ] &&
	ok "a function at two lines is stored once" || not_ok "compute split by line"
run pr profile show "$id" --json
[[ $OUT == *'"name": "compute"'* ]] && [[ $OUT == *'"self_share": 0.666666'* ]] &&
	ok "profile show gives compute two thirds of the time" || not_ok "profile show" "$OUT"

# Evented, named with --format; and a file profreg exported.
run pr ingest "$D/evented.speedscope.json" --service pyapp --release v1 --format speedscope
[ $RC -eq 0 ] && [[ $OUT == *"(speedscope, cpu,"* ]] &&
	ok "an evented file goes in with --format" || not_ok "ingest evented" "rc=$RC $OUT $ERR"
id=$(sql "select id from profiles order by id desc limit 1")
[ "$(values "$id" render view.js)" = "5250000 5250000" ] &&
	[ "$(values "$id" handle app.js)" = "3750000 12500000" ] &&
	[ "$(sql "select total_value from profiles where id = $id")" = 15000000 ] &&
	ok "evented durations are replayed, idle time left out" ||
	not_ok "evented values" "$(values "$id" render view.js)"
gzip -c "$D/profreg-export.speedscope.json" >"$T/export.json.gz"
run pr ingest "$T/export.json.gz" --service pyapp --release v1
[ $RC -eq 0 ] && [[ $OUT == *"(speedscope, cpu, 38 samples, 9 functions)"* ]] &&
	ok "profreg's own export, gzipped, goes back in" || not_ok "ingest export" "rc=$RC $OUT $ERR"
id=$(sql "select id from profiles order by id desc limit 1")
[ "$(values "$id" serve '')" = "10 26" ] && [ "$(values "$id" '[unknown]' '')" = "3 10" ] &&
	ok "the export reads back as the folded capture it came from" ||
	not_ok "export values" "$(values "$id" serve '')"

# Bad input: exit 4, one line naming the file, nothing written.
before=$(sql 'select count(*) from profiles')
fn_before=$(sql 'select count(*) from profile_functions')
head -c 300 "$D/pyspy-threads.speedscope.json" >"$T/truncated.json"
# A file of frames a and b holding the profile $1.
doc() {
	printf '{"$schema":"https://www.speedscope.app/file-format-schema.json",%s,"profiles":[%s]}' \
		'"shared":{"frames":[{"name":"a"},{"name":"b"}]}' "$1"
}
P='"name":"t","startValue":0,"endValue":3'
doc '{"type":"evented",'"$P"',"unit":"none","events":[{"type":"O","frame":0,"at":0},
	{"type":"O","frame":1,"at":1},{"type":"C","frame":0,"at":2}]}' >"$T/mismatched.json"
doc '{"type":"sampled",'"$P"',"unit":"none","samples":[[0,5]],"weights":[1]}' >"$T/dangling.json"
doc '{"type":"sampled",'"$P"',"unit":"bytes","samples":[[0]],"weights":[64]}' >"$T/bytes.json"
doc '' >"$T/noprofiles.json"
for f in truncated.json mismatched.json dangling.json bytes.json noprofiles.json; do
	run pr ingest "$T/$f" --service pyapp --release v2
	lines=$(printf '%s\n' "$ERR" | grep -c .)
	if [ $RC -eq 4 ] && [ "$lines" = 1 ] && [[ $ERR == *"cannot parse '$T/$f'"* ]]; then
		ok "malformed $f: exit 4 and one line naming it"
	else
		not_ok "malformed $f" "rc=$RC lines=$lines" "$ERR"
	fi
done
run pr ingest "$T/mismatched.json" --service pyapp --release v2
[[ $ERR == *"event 2 closes frame 0, but the innermost open frame is 1 (opened by event 1)"* ]] &&
	ok "a mismatched close names the event" || not_ok "mismatched message" "$ERR"
run pr ingest "$PROFREG_TEST_DATA/v8/node-burn.cpuprofile" --service pyapp --release v2 \
	--format speedscope
[ $RC -eq 4 ] && [[ $ERR == *'no "shared" member: not a speedscope file'* ]] &&
	ok "a cpuprofile given --format speedscope is refused" || not_ok "forced format" "rc=$RC $ERR"
[ "$(sql 'select count(*) from profiles')" = "$before" ] &&
	[ "$(sql 'select count(*) from profile_functions')" = "$fn_before" ] &&
	ok "refused files leave the database unchanged" || not_ok "rows written by bad input"
finish
