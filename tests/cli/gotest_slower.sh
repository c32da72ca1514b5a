#!/bin/bash
# Real `go test -cpuprofile` captures of a benchmark whose release makes
# its dominant function, ComputeFee, do twice the work a call
# (tests/data/pprof/gotest-slower): about 90 samples a capture, so every
# other function's rate per second is a handful of samples' noise. Their
# median once set a traffic factor of 1.25, against which ComputeFee's
# rate (up 1.35x) had hardly moved: a relative shift of severity none,
# and `--gate low` passed the release. Now fewer than three functions
# with enough samples leave the traffic unknown, and it is a regression.
. "$(dirname "$0")/lib.sh"
fresh_db cli_gotest_slower
D=$(cd "$(dirname "$0")/../data/pprof/gotest-slower" && pwd)
pr --quiet db init
pr --quiet service add bench-pay --enable
for i in $(seq 1 8); do
	pr --quiet ingest "$D/base-0$i.pprof" --service bench-pay --release v1 --host h$i \
		--time "2026-11-2${i}T01:00:00Z"
done
for i in $(seq 1 4); do
	pr --quiet ingest "$D/slow-0$i.pprof" --service bench-pay --release v2 --host h$i \
		--time "2026-11-30T0${i}:30:00Z"
done
run pr --wide analyze --service bench-pay --release v2 --at 2026-12-01T00:00:00Z --dry-run \
	--gate low
[ $RC -eq 1 ] && grep -Eq "^(high|critical) +regression +bench-pay +v2 +example.com/pay.ComputeFee " <<<"$OUT" &&
	ok "a dominant function twice as slow in a benchmark's few samples is a regression, and fails the gate" ||
	not_ok "gotest slower" "rc=$RC $OUT $ERR"
