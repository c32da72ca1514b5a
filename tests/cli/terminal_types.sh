#!/bin/bash
# The terminal names each finding's profile type when a service has more
# than one: the nightly's summary lines, `finding list`, `functions` (and
# --by release) and post-deploy's summary. A share of heap bytes in use
# beside a share of CPU time, unlabelled, reads as the same measure.
# The same captures are ingested as both types, so both find the one
# regression; then a service whose heap regressed and CPU did not.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_terminal_types
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 1 --functions 30 --factors 2 \
	--bands 10-30 --regressed 1 --seed 5 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
fn=$(sed -n 's/.*"function":"\([^"]*\)".*/\1/p' "$T/fleet/truth.jsonl" | head -n 1)
# One file is one capture: the heap copies differ by a stack of one sample.
mkdir -p "$T/fleet/heap"
for f in "$T"/fleet/svc-000/*.folded; do
	{ cat "$f"; echo 'main;heap.copy 1'; } >"$T/fleet/heap/$(basename "$f")"
done
sed 's/"type":"cpu"/"type":"heap"/; s#"svc-000/#"heap/#' "$T/fleet/manifest.jsonl" >"$T/fleet/heap.jsonl"
echo '{"services": {"svc-000": {"types": ["cpu", "heap"]}}}' >"$T/profreg.json"

# fits FILE: every line at most 80 display columns (U+2026 is one).
fits() { [ "$(LC_ALL=C.UTF-8 wc -L <"$1")" -le 80 ]; }
[ "$(printf 'a\xe2\x80\xa6\n' >"$T/w.txt"; LC_ALL=C.UTF-8 wc -L <"$T/w.txt")" = 2 ] ||
	not_ok "the C.UTF-8 locale measures display columns"

fresh_db cli_terminal_types
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"
pr --quiet ingest --manifest "$T/fleet/heap.jsonl"

run pr --config "$T/profreg.json" nightly --at "$at"
grep -qE "^[a-z]+ +regression +svc-000: .* heap: $fn$" <<<"$OUT" &&
	grep -qE "^[a-z]+ +regression +svc-000: .* cpu: $fn$" <<<"$OUT" &&
	ok "the nightly's summary names each regression's type" || not_ok "nightly" "rc=$RC $OUT"

fid() { sql "select id from findings where function = '$fn' and profile_type = '$1'"; }
run pr finding list
echo "$OUT" >"$T/list.txt"
head -n 1 "$T/list.txt" | grep -qE "^ *ID +STATE +SEVERITY +SERVICE +TYPE +FUNCTION" &&
	grep -qE "^ *$(fid heap) .* svc-000 +heap " "$T/list.txt" &&
	grep -qE "^ *$(fid cpu) .* svc-000 +cpu " "$T/list.txt" &&
	fits "$T/list.txt" && ok "finding list has a TYPE column, within 80 columns" ||
	not_ok "finding list" "rc=$RC $OUT"

run pr functions --name "$fn" --service svc-000 --since 2026-01-01T00:00:00Z
echo "$OUT" >"$T/fn.txt"
head -n 1 "$T/fn.txt" | grep -qE "^TIME +SERVICE +TYPE +RELEASE" &&
	grep -qE "svc-000 +heap +v1 " "$T/fn.txt" && grep -qE "svc-000 +cpu +v1 " "$T/fn.txt" &&
	fits "$T/fn.txt" && ok "functions has a TYPE column, within 80 columns" ||
	not_ok "functions" "rc=$RC $OUT"
run pr functions --name "$fn" --service svc-000 --since 2026-01-01T00:00:00Z --by release
echo "$OUT" >"$T/fnr.txt"
head -n 1 "$T/fnr.txt" | grep -qE "^SERVICE +TYPE +GROUP" &&
	[ "$(grep -cE "svc-000 +(cpu|heap) +$rel " "$T/fnr.txt")" = 2 ] && fits "$T/fnr.txt" &&
	ok "functions --by release tells a release's cpu row from its heap row" ||
	not_ok "functions --by release" "rc=$RC $OUT"
run pr functions --name "$fn" --service svc-000 --since 2026-01-01T00:00:00Z --type cpu
! head -n 1 <<<"$OUT" | grep -q TYPE && ok "one type, no TYPE column" || not_ok "one type" "$OUT"

# Heap regressed, CPU did not: the CPU captures of the release are copies
# of the release before's. post-deploy judges both and finds heap alone.
python3 - "$T/fleet" <<'PY'
import json, sys
src = sys.argv[1]
man = [json.loads(l) for l in open(src + '/manifest.jsonl')]
before = [m['path'] for m in man if m['release'] == 'v2'][-4:]
cur = [m for m in man if m['release'] == 'v3']
with open(src + '/cpu-flat.jsonl', 'w') as f:
    for m in man:
        if m['release'] == 'v3':
            k = cur.index(m)
            p = '%s/flat%d.folded' % (src, k)
            data = open(src + '/' + before[k % len(before)]).read()
            open(p, 'w').write(data + 'main;flat.pad%d 1\n' % k)
            m = dict(m, path=p)
        f.write(json.dumps(m) + '\n')
PY
fresh_db cli_terminal_types_heap
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/cpu-flat.jsonl"
pr --quiet ingest --manifest "$T/fleet/heap.jsonl"
sha=$(grep "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" | head -n 1 |
	sed 's/.*"commit":"\([^"]*\)".*/\1/')
run pr --config "$T/profreg.json" post-deploy --service svc-000 --release "$rel" --commit "$sha" \
	--at "$at"
[ "$(sql "select string_agg(distinct profile_type, ',') from findings
	where direction = 'regression'")" = heap ] &&
	grep -q "| heap: $fn |" <<<"$OUT" &&
	ok "post-deploy names heap findings when cpu was judged too" ||
	not_ok "post-deploy heap only" "rc=$RC $OUT $ERR"
# A function named as a C++ template can be several KB long: the nightly's
# summary line cuts it in the middle, where it would make a line of KBs.
long="ns::Charge<$(printf 'std::vector<int>,%.0s' $(seq 150))>::run"
mkdir -p "$T/fleet/long"
for f in "$T"/fleet/svc-000/*.folded; do
	sed "s/;$fn /;$long /" "$f" >"$T/fleet/long/$(basename "$f")"
done
sed 's#"svc-000/#"long/#' "$T/fleet/manifest.jsonl" >"$T/fleet/long.jsonl"
fresh_db cli_terminal_types_long
pr --quiet db init
pr --quiet service add svc-000 && pr --quiet service enable svc-000
pr --quiet ingest --manifest "$T/fleet/long.jsonl"
run pr nightly --at "$at"
echo "$OUT" >"$T/long.txt"
[ $RC -eq 0 ] && grep -q 'regression .*ns::Charge<std::vector<int>,.*…' "$T/long.txt" &&
	[ "$(LC_ALL=C.UTF-8 wc -L <"$T/long.txt")" -le 250 ] &&
	[ "$(sql "select max(length(function)) from findings")" -gt 2500 ] &&
	ok "the nightly cuts a long function name on its summary line, not in the finding" ||
	not_ok "long name" "rc=$RC $(LC_ALL=C.UTF-8 wc -L <"$T/long.txt") $(head -c 600 "$T/long.txt")"
finish
