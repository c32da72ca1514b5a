#!/bin/bash
# What a capture says of itself that cannot be so: a capture time before
# 2000 (a pprof time_nanos written in seconds reads as 1970, and
# retention would delete the capture on its next run) is refused, exit 4,
# in one line naming the file and the time; nothing is stored. So is a
# duration of more than 31 days, its message saying the unit.
. "$(dirname "$0")/lib.sh"
fresh_db cli_ingest_dates
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_ingest_dates
rm -rf "$T" && mkdir -p "$T"
DD=$(dirname "$0")/../support/dd_pprof.py
pr --quiet service add pay && pr --quiet service enable pay

now=$(date -u +%s)
python3 "$DD" "$T/secs.pb.gz" "$now"
run pr ingest "$T/secs.pb.gz" --service pay --release v1 --type cpu
[ $RC -eq 4 ] && [ "$(wc -l <<<"$ERR")" = 1 ] && [[ $ERR == *"'$T/secs.pb.gz'"* ]] &&
	[[ $ERR == *"its capture time $(date -u -d "@$((now / 1000000000))" +%Y-%m-%dT%H:%M:%S)"* ]] &&
	[[ $ERR == *"is before 2000-01-01T00:00:00Z (the profile's own time, written in seconds, not nanoseconds; --time sets it)"* ]] &&
	ok "a pprof whose time_nanos is in seconds is refused, exit 4, naming it" || not_ok "seconds" "rc=$RC $ERR"
run pr ingest "$T/secs.pb.gz" --service pay --release v1 --type cpu --time 0001-01-01T00:00:00Z
[ $RC -eq 4 ] && [[ $ERR == *"'$T/secs.pb.gz'"*"its capture time 0001-01-01T00:00:00Z is before 2000-01-01T00:00:00Z" ]] &&
	ok "--time 0001-01-01T00:00:00Z is refused" || not_ok "--time 0001" "rc=$RC $ERR"
run pr ingest "$T/secs.pb.gz" --service pay --release v1 --type cpu --time 1999-12-31T23:59:59Z
[ $RC -eq 4 ] && [[ $ERR == *"its capture time 1999-12-31T23:59:59Z is before"* ]] &&
	ok "a second before 2000 is refused" || not_ok "1999" "rc=$RC $ERR"
printf 'main;a 1\n' >"$T/old.folded"
touch -d 1980-01-01T00:00:00Z "$T/old.folded"
run pr ingest "$T/old.folded" --service pay --release v1
[ $RC -eq 4 ] && [[ $ERR == *"'$T/old.folded'"*"its capture time 1980-01-01T00:00:00Z is before 2000-01-01T00:00:00Z (the file's time; --time sets it)" ]] &&
	ok "a file dated 1980 (a zip's dates) is refused, --time named" || not_ok "mtime 1980" "rc=$RC $ERR"
[ "$(sql 'select count(*) from profiles')" = 0 ] && ok "nothing was stored" || not_ok "rows stored"
run pr ingest "$T/secs.pb.gz" --service pay --release v1 --type cpu --time 2000-01-01T00:00:00Z
[ $RC -eq 0 ] && [ "$(sql "select count(*) from profiles where captured_at = '2000-01-01T00:00:00Z'")" = 1 ] &&
	ok "2000-01-01T00:00:00Z itself is stored" || not_ok "2000" "rc=$RC $ERR"
python3 "$DD" "$T/long.pb.gz" "${now}000000000" 9000000000000000000
run pr ingest "$T/long.pb.gz" --service pay --release v1 --type cpu
[ $RC -eq 4 ] && [ "$(wc -l <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"'$T/long.pb.gz'"*"it says it covers 104167 days (duration 9000000000000000000 ns), more than a capture's 31 days" ]] &&
	ok "a duration of 104167 days is refused, the limit said in days" || not_ok "31 days" "rc=$RC $ERR"
finish
