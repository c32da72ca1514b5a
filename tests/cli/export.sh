#!/bin/bash
# Exports of real Go profiles: pprof keeps line numbers, mappings and
# locations (go tool pprof -lines and -raw show the same as on the
# original), folded is one line per distinct stack with sample counts or
# the profile's unit, speedscope keeps the unit; each format round-trips
# through ingest (speedscope, which profreg does not ingest, through jq)
# with the same per-function values.
. "$(dirname "$0")/lib.sh"
fresh_db cli_export
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_export
rm -rf "$T" && mkdir -p "$T"
D=$PROFREG_TEST_DATA/pprof

pr --quiet service add go && pr --quiet service enable go
pr --quiet service add back && pr --quiet service enable back
pr --quiet ingest "$D/go-cpu.pb.gz" --service go --release r1 --type cpu --time 2026-03-01T00:00:00Z --host a
pr --quiet ingest "$D/go-spans.pb.gz" --service go --release r1 --type cpu --time 2026-03-01T01:00:00Z --host b
pr --quiet ingest "$D/go-heap.pb.gz" --service go --release r1 --type heap --time 2026-03-01T00:00:00Z --host a
cpu=$(sql "select id from profiles where host = 'a' and profile_type = 'cpu'")
heap=$(sql "select id from profiles where profile_type = 'heap'")
[ -n "$cpu" ] && [ -n "$heap" ] && ok "real Go profiles ingested (cpu $cpu, heap $heap)" || not_ok "ingest" "$cpu $heap"

selfs() { # capture id: "name=self ..." from the index
	sql "select string_agg(f.name || '=' || pf.self_value, ' ' order by f.name, pf.self_value) from profile_functions pf join functions f on f.id = pf.function_id where pf.profile_id = $1 and pf.self_value > 0"
}

run pr export "$cpu" --format pprof --out "$T/cpu.pb.gz"
[ $RC -eq 0 ] && grep -q 'with lines and mappings' <<<"$ERR" && ok "a pprof capture exports as pprof with lines and mappings" || not_ok "export pprof" "rc=$RC $ERR"
if command -v go >/dev/null 2>&1; then
	gp() { env HOME="$T" GOFLAGS=-mod=mod timeout 120 go tool pprof "$@" 2>/dev/null; }
	want=$(gp -lines -top "$D/go-cpu.pb.gz" | sed -n '/flat%/,$p')
	got=$(gp -lines -top "$T/cpu.pb.gz" | sed -n '/flat%/,$p')
	[ -n "$got" ] && grep -Eq 'main\.burnHalf .*main\.go:[0-9]+' <<<"$got" && [ "$got" = "$want" ] &&
		ok "go tool pprof -lines -top on the export shows file:line, as on the original" ||
		not_ok "pprof -lines" "want: $(head -3 <<<"$want")" "got: $(head -3 <<<"$got")"
	want=$(gp -raw "$D/go-cpu.pb.gz" | sed -n '/^Mappings/,$p')
	got=$(gp -raw "$T/cpu.pb.gz" | sed -n '/^Mappings/,$p')
	[ -n "$got" ] && grep -q 'pprofgen' <<<"$got" && [ "$got" = "$want" ] &&
		ok "go tool pprof -raw shows the mapping's file and range" || not_ok "pprof -raw" "$got"
	run gp -list 'main.burnHalf' "$T/cpu.pb.gz"
	grep -q 'main.go' <<<"$OUT" && ok "go tool pprof -list finds the source lines' file" || not_ok "pprof -list" "$OUT"
fi
run pr ingest "$T/cpu.pb.gz" --service back --release pprof --type cpu --time 2026-03-02T00:00:00Z
nid=$(sql "select id from profiles where release = 'pprof'")
[ -n "$nid" ] && [ "$(selfs "$nid")" = "$(selfs "$cpu")" ] && ok "pprof export then ingest: the same per-function self values" || not_ok "round trip pprof" "$(selfs "$cpu")" "$(selfs "${nid:-0}")"
# Labels (span ids) never leave.
spans=$(sql "select id from profiles where host = 'b'")
run pr export "$spans" --format pprof --out "$T/spans.pb.gz"
gzip -dc "$D/go-spans.pb.gz" | grep -aq '4bf92f3577b34da6a3ce929d0e0e4736' &&
	! gzip -dc "$T/spans.pb.gz" | grep -aEq 'span_id|trace_id|4bf92f3577b34da6a3ce929d0e0e4736' &&
	ok "the pprof export carries no label keys or values" || not_ok "labels"

# Folded: one line per distinct stack, sample counts by default.
run pr export "$cpu" --format folded --out "$T/cpu.folded"
lines=$(wc -l <"$T/cpu.folded")
distinct=$(sed 's/ [0-9]*$//' "$T/cpu.folded" | sort -u | wc -l)
samples=$(sql "select sample_count from profiles where id = $cpu")
sum=$(awk '{s += $NF} END {print s}' "$T/cpu.folded")
[ $RC -eq 0 ] && [ "$lines" = "$distinct" ] && ok "folded: one line per distinct stack ($lines)" || not_ok "folded distinct" "$lines / $distinct"
[ "$sum" = "$samples" ] && grep -q '(samples, count)' <<<"$ERR" && ok "folded: integer sample counts by default ($sum samples)" || not_ok "folded samples" "$sum / $samples $ERR"
run pr export "$cpu" --format folded --value unit --out "$T/cpu-ns.folded"
sum=$(awk '{s += $NF} END {print s}' "$T/cpu-ns.folded")
[ "$sum" = "$(sql "select total_value from profiles where id = $cpu")" ] && grep -q '(cpu, nanoseconds)' <<<"$ERR" && ok "folded --value unit: the profile's nanoseconds" || not_ok "folded unit" "$sum $ERR"
run pr ingest "$T/cpu-ns.folded" --service back --release folded --type cpu --time 2026-03-03T00:00:00Z
nid=$(sql "select id from profiles where release = 'folded'")
strip() { tr ' ' '\n' | sort; }
[ -n "$nid" ] && [ "$(selfs "$nid" | strip)" = "$(selfs "$cpu" | strip)" ] && ok "folded export then ingest: the same per-function self values" || not_ok "round trip folded" "$(selfs "${nid:-0}")"
run pr export "$heap" --format folded --value samples --out "$T/heap.folded"
[ $RC -eq 0 ] && grep -q '(inuse_objects, count)' <<<"$ERR" && ok "heap as samples: the object counts" || not_ok "heap samples" "$ERR"
run pr export "$cpu" --format folded --value bytes
[ $RC -eq 2 ] && grep -q "'--value bytes' is not samples or unit" <<<"$ERR" && ok "an unknown --value is a usage error" || not_ok "value usage" "rc=$RC $ERR"

# Speedscope keeps the unit, and its weights give the same self values.
run pr export "$cpu" --format speedscope --out "$T/cpu.speedscope.json"
unit=$(jq -r '.profiles[0].unit' "$T/cpu.speedscope.json")
got=$(jq -r '.shared.frames as $f | .profiles[0] | [.samples, .weights] | transpose
	| map({n: $f[.[0][-1]].name, w: .[1]}) | group_by(.n) | map("\(.[0].n)=\(map(.w) | add)")
	| .[]' "$T/cpu.speedscope.json" | sort)
[ "$unit" = nanoseconds ] && ok "speedscope keeps the unit (nanoseconds)" || not_ok "speedscope unit" "$unit"
want=$(sql "select f.name || '=' || sum(pf.self_value) from profile_functions pf join functions f on f.id = pf.function_id where pf.profile_id = $cpu and pf.self_value > 0 group by f.name" | sort)
[ -n "$got" ] && [ "$got" = "$want" ] && ok "speedscope weights give the same per-function self values" || not_ok "speedscope round trip" "$got" "$want"
run pr export "$cpu" --format speedscope --value samples --out "$T/s.json"
[ "$(jq -r '.profiles[0].unit' "$T/s.json")" = none ] && ok "speedscope of sample counts has unit none" || not_ok "speedscope samples"

# Merged selection: one pprof with both captures' locations.
run pr export 'service=go,release=r1' --format pprof --out "$T/merged.pb.gz"
[ $RC -eq 0 ] && grep -q 'exported 2 captures' <<<"$ERR" && ok "a merged pprof selection keeps lines and mappings" || not_ok "merged" "$ERR"

# A system_name that differs from the name and a mapping named by a command
# line: neither leaves as it came (a card number in either).
python3 "$D/mkcard.py" >"$T/card.pb.gz"
pr --quiet ingest "$T/card.pb.gz" --service back --release card --type cpu --time 2026-03-04T00:00:00Z
cid=$(sql "select id from profiles where release = 'card'")
run pr export "$cid" --format pprof --out "$T/card-out.pb.gz"
[ $RC -eq 0 ] && [ -s "$T/card-out.pb.gz" ] && ! gzip -dc "$T/card-out.pb.gz" | grep -aq 'card=' && ! gzip -dc "$T/card-out.pb.gz" | grep -aq 'bin 4111' &&
	gzip -dc "$T/card-out.pb.gz" | grep -aq '/app/bin' &&
	ok "pprof export: system_name is the name, the mapping file loses its arguments" ||
	not_ok "card" "rc=$RC $ERR" "$(gzip -dc "$T/card-out.pb.gz" | strings | grep -a card)"
# A build id goes out only when it looks like one: 'buildid-4111...' is
# dropped, the second mapping's 40 hex digits stay.
gzip -dc "$T/card-out.pb.gz" >"$T/card-out.pb"
! grep -aq 'buildid-' "$T/card-out.pb" && ! grep -aq '4111111111111' "$T/card-out.pb" &&
	grep -aq '5d2b9c6f0e8a41b7c3d9e2f1a0b4c8d7e6f5a493' "$T/card-out.pb" &&
	ok "pprof export: a build id that is no hex or Go build id is dropped" ||
	not_ok "card build id" "$(strings "$T/card-out.pb" | grep -a -e 4111 -e 5d2b)"

# A selection mixing a pprof (cpu/nanoseconds) and a folded file (samples/count).
pr --quiet ingest "$D/demo-v1-cpu.pb.gz" --service go --release mix --type cpu --time 2026-03-02T00:00:00Z --host a
samples=$(sql "select sample_count from profiles where release = 'mix'")
printf 'main;extra 3\n' >"$T/extra.folded"
pr --quiet ingest "$T/extra.folded" --service go --release mix --type cpu --time 2026-03-02T01:00:00Z --host a
for f in pprof folded; do
	run pr export 'service=go,release=mix' --format $f --value unit --out "$T/mix.$f"
	[ $RC -eq 4 ] && [[ $ERR == *"(cpu/nanoseconds) with capture "*" (samples/count): their values are not in the same unit"* ]] &&
		[ ! -e "$T/mix.$f" ] && ok "$f: nanoseconds and counts are not added up" || not_ok "mixed units $f" "rc=$RC $ERR"
done
run pr export 'service=go,release=mix' --format folded --value samples --out "$T/mix.folded"
sum=$(awk '{s += $NF} END {print s}' "$T/mix.folded")
[ $RC -eq 0 ] && [ -n "$samples" ] && [ "$sum" = $((samples + 3)) ] && ok "--value samples merges their sample counts" || not_ok "mixed samples" "rc=$RC $sum $ERR"

# A selection past the 2,000 captures one may hold is refused with its count,
# never cut to the newest 2,000: 2,001 rows (one real, 2,000 copies of its row).
pr --quiet service add big && pr --quiet service enable big
pr --quiet ingest "$T/extra.folded" --service big --release v1 --type cpu --time 2026-03-01T00:00:00Z --host a
sql "insert into profiles (service_id, profile_type, release, host, captured_at, value_type, value_unit,
	total_value, sample_count, blob_key, format)
	select service_id, profile_type, release, host, captured_at + g * interval '1 minute', value_type,
	value_unit, total_value, sample_count, encode(sha256(g::text::bytea), 'hex'), format
	from profiles, generate_series(1, 2000) g where release = 'v1' and host = 'a'
	and service_id = (select id from services where name = 'big')" >/dev/null
run pr export service=big --format folded --out "$T/big.folded"
[ $RC -eq 4 ] && [[ $ERR == *"selection 'service=big' matches 2001 captures, more than the 2000 one selection may hold: narrow it"* ]] &&
	[ ! -e "$T/big.folded" ] && ok "export of 2001 captures is refused with the count" || not_ok "export cap" "rc=$RC $ERR"
run pr diff --base service=big,release=v1 --target service=big,until=2026-03-01T00:30:00Z --format json --out "$T/big.json"
[ $RC -eq 4 ] && [[ $ERR == *"selection 'service=big,release=v1' matches 2001 captures"* ]] &&
	ok "so is a diff side of 2001 captures" || not_ok "diff cap" "rc=$RC $ERR"
# Capture ids select exactly those captures: one that does not exist
# refuses the selection (exit 4) rather than exporting or comparing the rest.
run pr export "id=$cpu,99999" --format folded --out "$T/ids.folded"
[ $RC -eq 4 ] && [ "$ERR" = "profreg export: capture 99999 not found" ] && [ ! -e "$T/ids.folded" ] &&
	ok "export of capture ids with one missing is exit 4 naming it" || not_ok "export missing id" "rc=$RC $ERR"
run pr diff --base "id=$cpu,$cpu,99999" --target "id=$spans" --out "$T/ids.html"
[ $RC -eq 4 ] && [ "$ERR" = "profreg diff: capture 99999 not found" ] && [ ! -e "$T/ids.html" ] &&
	ok "diff of capture ids with one missing is exit 4 naming it" || not_ok "diff missing id" "rc=$RC $ERR"
# One id alone, with or without id=, that does not exist: the same words.
for sel in 99999 id=99999 "id=99999,99998"; do
	run pr export "$sel" --format folded --out "$T/ids.folded"
	[ $RC -eq 4 ] && [ "$ERR" = "profreg export: capture 99999 not found" ] && [ ! -e "$T/ids.folded" ] &&
		ok "export $sel of no capture is exit 4 naming it" || not_ok "export $sel" "rc=$RC $ERR"
done
run pr export "id=$cpu,$heap,type=cpu" --format folded --out "$T/ids.folded"
[ $RC -eq 4 ] && [ "$ERR" = "profreg export: selection 'id=$cpu,$heap,type=cpu' matches no capture $heap" ] &&
	ok "a capture id the other filters leave out is named with the selection" || not_ok "id filtered out" "rc=$RC $ERR"
finish
