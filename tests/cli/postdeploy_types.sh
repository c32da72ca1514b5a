#!/bin/bash
# post-deploy's Markdown summary of a service judged on cpu and heap names
# each row's type: a share of heap bytes in use beside a share of CPU
# time, unlabelled, read as the same measure. The same captures are
# ingested as both types, so both find the one regression.
. "$(dirname "$0")/lib.sh"
fresh_db cli_postdeploy_types
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_postdeploy_types
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 \
	--bands 10-30 --regressed 1 --seed 5 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
fn=$(sed -n 's/.*"function":"\([^"]*\)".*/\1/p' "$T/fleet/truth.jsonl" | head -n 1)
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"
# One file is one capture: the heap copies differ by a stack of one sample.
mkdir -p "$T/fleet/heap"
for f in "$T"/fleet/svc-000/*.folded; do
	{ cat "$f"; echo 'main;heap.copy 1'; } >"$T/fleet/heap/$(basename "$f")"
done
sed 's/"type":"cpu"/"type":"heap"/; s#"svc-000/#"heap/#' "$T/fleet/manifest.jsonl" >"$T/fleet/heap.jsonl"
pr --quiet ingest --manifest "$T/fleet/heap.jsonl"
sha=$(grep "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" | head -n 1 | sed 's/.*"commit":"\([^"]*\)".*/\1/')
echo '{"services": {"svc-000": {"types": ["cpu", "heap"]}}}' >"$T/profreg.json"

run pr --config "$T/profreg.json" post-deploy --service svc-000 --release "$rel" --commit "$sha" --at "$at"
[ "$(sql "select count(distinct profile_type) from findings where function = '$fn'")" = 2 ] &&
	ok "the regression is found in both types" || not_ok "findings" "rc=$RC $ERR"
grep -q "| cpu: $fn |" <<<"$OUT" && grep -q "| heap: $fn |" <<<"$OUT" &&
	ok "each row of the summary names its type" || not_ok "typed rows" "$OUT"
run pr report --run "$(sql "select max(id) from runs where kind = 'post-deploy'")" --format md --out -
grep -q "| heap: $fn" <<<"$OUT" && grep -q "| cpu: $fn" <<<"$OUT" &&
	ok "so does the run's Markdown report" || not_ok "typed report rows" "$OUT"

# A configuration that misspells the service judges it for cpu alone: its
# heap captures are said to go unjudged, with the name it resembles.
echo '{"services": {"svc-00O": {"types": ["cpu", "heap"]}}}' >"$T/typo.json"
run pr --config "$T/typo.json" post-deploy --service svc-000 --release "$rel" --commit "$sha" --at "$at"
[[ $ERR == *"service 'svc-000' is not in the configuration's services (did you mean 'svc-00O'?), so it is judged for cpu alone:"*"of other types (heap) were not judged"* ]] &&
	ok "a service the configuration misses, with heap captures, is said to be judged for cpu alone" ||
	not_ok "typo note" "rc=$RC $ERR"
finish
