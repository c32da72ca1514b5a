#!/bin/bash
# Real CPU profiles of @datadog/pprof (collectCpuTime, as Datadog's Node
# tracer records them) of a program whose release makes its dominant
# function, hot, do twice the work (tests/data/pprof/dd-node). Each
# profile holds a record "Non JS threads activity" with CPU time and no
# sample; the sample count was refused for it, so a capture of 1,500
# samples counted its 6 records, and a noise floor that wide left hot
# going from 53% to 68% of the CPU without a finding.
. "$(dirname "$0")/lib.sh"
fresh_db cli_dd_node_cpu
D=$(cd "$(dirname "$0")/../data/pprof/dd-node" && pwd)
pr --quiet db init
pr --quiet service add node-pay --enable
for i in $(seq 1 8); do
	pr --quiet ingest "$D/cpu-v1-0$i.pb.gz" --service node-pay --release v1 --host h$i \
		--time "2026-11-2${i}T0$((i % 4)):00:00Z"
done
for i in $(seq 1 4); do
	pr --quiet ingest "$D/cpu-v2-0$i.pb.gz" --service node-pay --release v2 --host h$i \
		--time "2026-11-30T0${i}:30:00Z"
done
run pr --json profiles list --service node-pay
[ $RC -eq 0 ] && grep -q '"sample_count": 1658,' <<<"$OUT" &&
	ok "a Datadog Node CPU profile counts its samples, not its records" ||
	not_ok "dd node samples" "rc=$RC $OUT $ERR"
run pr --wide analyze --service node-pay --release v2 --at 2026-12-01T00:00:00Z --dry-run \
	--gate low
[ $RC -eq 1 ] && grep -Eq "^(high|critical) +regression +node-pay +v2 +hot " <<<"$OUT" &&
	[ "$(grep -Ec '^[a-z]+ +regression ' <<<"$OUT")" = 1 ] &&
	ok "hot twice as slow in Datadog's Node CPU profiles is the one regression" ||
	not_ok "dd node regression" "rc=$RC $OUT $ERR"
finish
