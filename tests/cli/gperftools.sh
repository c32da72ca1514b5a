#!/bin/bash
# Real gperftools 2.10 profiles of one C program (tests/data/gperftools,
# pay.c), a release whose compute_fee does twice the work and whose
# retain_ledger keeps twice the memory.
# - CPU, as google-pprof --collapsed writes it: every name carries the
#   function's address, which the next build moves. Each function was
#   new in the release: four regressions of new names (three critical)
#   and four of the old ones gone. Now the address is dropped: one
#   regression, compute_fee.
# - Heap, converted with go tool pprof -proto: retain_ledger doubled its
#   bytes beside a session cache that held its own, and, re-tested
#   without the cache's falling share, was called a relative shift. Its
#   own bytes rose: it is the regression.
. "$(dirname "$0")/lib.sh"
fresh_db cli_gperftools
D=$(cd "$(dirname "$0")/../data/gperftools" && pwd)
pr --quiet db init
pr --quiet service add pay --enable
for i in $(seq 1 8); do
	pr --quiet ingest "$D/cpu-v1-$i.collapsed" --service pay --release v1 --host h$i \
		--time "2026-11-2${i}T01:00:00Z"
	pr --quiet ingest "$D/heap-v1-$i.pb.gz" --service pay --release v1 --host h$i --type heap \
		--time "2026-11-2${i}T01:00:00Z"
done
for i in $(seq 1 4); do
	pr --quiet ingest "$D/cpu-v2-$i.collapsed" --service pay --release v2 --host h$i \
		--time "2026-11-30T0${i}:30:00Z"
	pr --quiet ingest "$D/heap-v2-$i.pb.gz" --service pay --release v2 --host h$i --type heap \
		--time "2026-11-30T0${i}:30:00Z"
done
run pr --wide analyze --service pay --release v2 --at 2026-12-01T00:00:00Z --dry-run
regs=$(grep -E "^[a-z]+ +regression " <<<"$OUT")
[ $RC -eq 0 ] && [ "$(grep -c . <<<"$regs")" -eq 1 ] &&
	grep -Eq "^critical +regression +pay +v2 +compute_fee " <<<"$regs" && ! grep -q '<0000' <<<"$OUT" &&
	ok "google-pprof --collapsed captures: one regression, compute_fee, named without its address" ||
	not_ok "gperftools cpu" "rc=$RC $OUT $ERR"
run pr --wide analyze --service pay --release v2 --type heap --at 2026-12-01T00:00:00Z --dry-run
grep -Eq "^(high|critical) +regression +pay +v2 +retain_ledger " <<<"$OUT" &&
	! grep -q "relative_shift.*retain_ledger" <<<"$OUT" &&
	ok "a heap site whose bytes doubled is the regression, not a relative shift" ||
	not_ok "gperftools heap" "rc=$RC $OUT $ERR"
