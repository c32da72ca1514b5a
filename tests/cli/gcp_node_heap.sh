#!/bin/bash
# Real heap profiles of Google's pprof-nodejs (npm `pprof`, Cloud
# Profiler's Node agent), whose columns are objects/count and space/bytes
# (tests/data/pprof/gcp-node): ingest refused every one as of no sample
# type it analyses. Now each is a heap capture, and a release whose keepBig
# retains twice the memory is its one regression.
. "$(dirname "$0")/lib.sh"
fresh_db cli_gcp_node_heap
D=$(cd "$(dirname "$0")/../data/pprof/gcp-node" && pwd)
pr --quiet db init
pr --quiet service add node-ledger --enable
for i in $(seq 1 8); do
	run pr ingest "$D/heap-v1-0$i.pb.gz" --service node-ledger --release v1 --host h$i \
		--time "2026-11-2${i}T1$((i % 2)):00:00Z"
	[ $RC -eq 0 ] && grep -q "(pprof, heap, " <<<"$OUT" ||
		not_ok "heap-v1-0$i is a heap capture" "rc=$RC $OUT $ERR"
done
for i in $(seq 1 4); do
	pr --quiet ingest "$D/heap-v2-0$i.pb.gz" --service node-ledger --release v2 --host h$i \
		--time "2026-11-30T1$((i % 2)):0$i:00Z"
done
[ "$(sql "select count(*) from profiles where profile_type = 'heap'")" = 12 ] &&
	ok "Google pprof-nodejs heap profiles are heap captures" ||
	not_ok "gcp heap captures" "$(sql "select count(*), profile_type from profiles group by 2")"
run pr --wide analyze --service node-ledger --release v2 --type heap \
	--at 2026-12-01T00:00:00Z --dry-run --gate low
[ $RC -eq 1 ] && grep -Eq "^(high|critical) +regression +node-ledger +v2 +keepBig " <<<"$OUT" &&
	[ "$(grep -Ec '^[a-z]+ +regression ' <<<"$OUT")" = 1 ] &&
	ok "keepBig retaining twice the memory is the one regression" ||
	not_ok "gcp heap regression" "rc=$RC $OUT $ERR"
finish
