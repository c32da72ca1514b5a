#!/bin/bash
# A real `perf record -e sched:sched_switch` print (tests/data/perf/offcpu)
# counts context switches, not CPU time. It was stored as a cpu capture,
# 100% in __schedule, beside the service's real cpu captures. It is
# refused: exit 4, one line naming the file and the event, nothing stored.
. "$(dirname "$0")/lib.sh"
fresh_db cli_perf_offcpu
D=$(cd "$(dirname "$0")/../data/perf/offcpu" && pwd)
pr --quiet db init
pr --quiet service add waits --enable
run pr ingest "$D/v1-off-1.perf.gz" --service waits --release v1 --time 2026-11-20T01:00:00Z
[ $RC -eq 4 ] && [ "$(grep -c . <<<"$ERR")" -eq 1 ] &&
	grep -q "v1-off-1.perf.gz': its samples are 'sched:sched_switch' events, which count no CPU time" <<<"$ERR" &&
	ok "an off-CPU (sched_switch) recording is refused, naming its event" ||
	not_ok "offcpu refused" "rc=$RC $OUT $ERR"
[ "$(sql "select count(*) from profiles")" = 0 ] &&
	[ -z "$(find "$HOME_DIR" -type f -path '*blobs*' 2>/dev/null)" ] &&
	ok "and nothing of it is stored" ||
	not_ok "offcpu stored" "$(sql "select id, profile_type from profiles")"
