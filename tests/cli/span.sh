#!/bin/bash
# profreg span: from a slow span to its profile. A real Go profile whose
# samples carry span_id and trace_id labels (runtime/pprof.Do): the span's
# flame graph holds only that span's stacks; a trace id selects the
# trace's; a window no capture covers, an unknown span and a profile
# format without labels each say so.
. "$(dirname "$0")/lib.sh"
fresh_db cli_span
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_span
rm -rf "$T" && mkdir -p "$T"
D=$PROFREG_TEST_DATA
pr --quiet service add pay && pr --quiet service enable pay
run pr ingest "$D/pprof/go-spans.pb.gz" --service pay --release v1 --host web-1 --json
at=$(jq -r .results[0].captured_at <<<"$OUT" 2>/dev/null)
[ -z "$at" ] || [ "$at" = null ] && at=$(sql "select to_char(captured_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from profiles limit 1")
start=$(date -u -d "$at + 1 second" +%Y-%m-%dT%H:%M:%SZ)

cur() { jq -r --arg n "$2" '[.diff.flame[] | select(.name == $n) | .current] | add // 0' "$1"; }
base() { jq -r --arg n "$2" '[.diff.flame[] | select(.name == $n) | .baseline] | add // 0' "$1"; }

run pr span --service pay --host web-1 --start "$start" --duration 500ms --span-id 00f067aa0ba902b7 \
	--format json --out "$T/span.json"
[ $RC -eq 0 ] && [[ $ERR == *"stack records (each of one or more samples) of 1 captures carry span id '00f067aa0ba902b7'"* ]] &&
	ok "the span's samples are found in the capture covering it" || not_ok "span" "rc=$RC $ERR"
awk -v c="$(cur "$T/span.json" main.checkout)" -v s="$(cur "$T/span.json" main.search)" \
	-v b="$(base "$T/span.json" main.search)" 'BEGIN { exit !(c > 0.99 && s == 0 && b > 0) }' &&
	ok "its flame graph holds only the span's function, against the whole capture" ||
	not_ok "span frames" "$(head -c 600 "$T/span.json")"
run pr span --service pay --host web-1 --start "$start" --duration 500ms \
	--trace-id 0af7651916cd43dd8448eb211c80319c --format json --out "$T/trace.json"
awk -v c="$(cur "$T/trace.json" main.checkout)" -v s="$(cur "$T/trace.json" main.search)" \
	'BEGIN { exit !(c == 0 && s > 0.99) }' && [ $RC -eq 0 ] &&
	ok "a trace id selects that trace's spans" || not_ok "trace" "rc=$RC $ERR"
run pr span --service pay --host web-1 --start "$start" --duration 500ms --span-id ffffffffffffffff --out "$T/none.html"
[ $RC -eq 4 ] && [[ $ERR == *"has a sample labelled span id 'ffffffffffffffff'"* ]] && [ ! -e "$T/none.html" ] &&
	ok "an id no sample carries is exit 4, nothing written" || not_ok "unknown span" "rc=$RC $ERR"
run pr span --service pay --host web-2 --start "$start" --duration 500ms --span-id 00f067aa0ba902b7 --out "$T/x.html"
[ $RC -eq 4 ] && [[ $ERR == *"no capture of type 'cpu' of service 'pay' on host 'web-2' covers"* ]] &&
	ok "a window no capture covers is exit 4" || not_ok "no capture" "rc=$RC $ERR"
run pr span --service pay --host web-1 --start "$start" --duration 500ms --span-id 00f067aa0ba902b7 --out "$T/span.html"
[ $RC -eq 0 ] && grep -q 'data-name="main.checkout"' "$T/span.html" && ok "the HTML page draws it" || not_ok "html" "$ERR"
printf 'main;checkout 10\nmain;search 5\n' >"$T/f.folded"
pr --quiet ingest "$T/f.folded" --service pay --release v1 --host web-3 --time "$start"
run pr span --service pay --host web-3 --start "$start" --duration 500ms --span-id 00f067aa0ba902b7 --out "$T/f.html"
[ $RC -eq 0 ] && [[ $ERR == *"format carries no labels"* ]] && ok "a format without labels gives the window and says so" ||
	not_ok "no labels" "rc=$RC $ERR"
! grep -q '00f067aa0ba902b7' <<<"$(sql "select tags::text from profiles") $(sql "select name from functions")" &&
	ok "no label value is stored in the index" || not_ok "label stored"
run pr report --span --service pay --host web-1 --start "$start" --duration 500ms \
	--span-id 00f067aa0ba902b7 --format json --out "$T/report-span.json"
[ $RC -eq 0 ] && [ "$(jq -S 'del(.generated_at)' "$T/span.json")" = "$(jq -S 'del(.generated_at)' "$T/report-span.json")" ] &&
	ok "report --span writes what span writes" || not_ok "report --span" "rc=$RC $ERR"
pr --quiet ingest "$D/pprof/go-heap.pb.gz" --service pay --release v1 --host web-1 --time "$at"
run pr span --service pay --host web-1 --start "$start" --duration 500ms --span-id 00f067aa0ba902b7 \
	--format json --out "$T/span-heap.json"
[ $RC -eq 0 ] && [ "$(jq -S 'del(.generated_at)' "$T/span.json")" = "$(jq -S 'del(.generated_at)' "$T/span-heap.json")" ] &&
	ok "a heap capture of the same host stays out of a CPU span's graph" || not_ok "span type" "rc=$RC $ERR"
run pr span --service pay --host web-1 --start "$start" --duration 500ms --type heap --format json --out "$T/heap.json"
[ $RC -eq 0 ] && [ "$(jq .diff.base_captures "$T/heap.json")" = 1 ] && [ "$(base "$T/heap.json" main.search)" = 0 ] &&
	ok "--type heap draws the heap capture alone" || not_ok "span --type heap" "rc=$RC $ERR $(head -c 300 "$T/heap.json")"
# libdatadog's profilers (Python, Ruby, PHP, .NET) write span ids as
# numeric labels; the span's one stack record holds 30 of the 100 samples.
python3 "$(dirname "$0")/../support/dd_pprof.py" "$T/dd.pb.gz" "$(date -u -d "$start" +%s)000000000"
# Its columns are "cpu-samples" and "cpu-time": a CPU profile, its value
# the CPU time, its samples the count column's (30 + 70), with no --type.
run pr --quiet ingest "$T/dd.pb.gz" --service pay --release v1 --host web-dd
[ $RC -eq 0 ] && [ "$(sql "select profile_type || ' ' || value_type || ' ' || sample_count || ' ' ||
	total_value from profiles where host = 'web-dd'")" = "cpu cpu-time 100 1000000000" ] &&
	ok "a libdatadog CPU profile (cpu-time, cpu-samples) is a CPU capture of its CPU time" ||
	not_ok "libdatadog types" "rc=$RC $ERR $(sql "select profile_type, value_type, sample_count
		from profiles where host = 'web-dd'")"
run pr span --service pay --host web-dd --start "$start" --duration 500ms --span-id 12345 \
	--format json --out "$T/dd.json"
[ $RC -eq 0 ] && [[ $ERR == *"1 stack records (each of one or more samples) of 1 captures carry span id '12345'"* ]] &&
	awk -v c="$(cur "$T/dd.json" charge)" -v i="$(cur "$T/dd.json" idle_work)" \
		-v b="$(base "$T/dd.json" idle_work)" 'BEGIN { exit !(c > 0.99 && i == 0 && b > 0.6) }' &&
	ok "a numeric span id label (Datadog's Python, Ruby, PHP, .NET) selects its span" ||
	not_ok "numeric span id" "rc=$RC $ERR $(head -c 600 "$T/dd.json")"
run pr span --service pay --host web-dd --start "$start" --duration 500ms --span-id 999 --out "$T/dd-root.html"
[ $RC -eq 0 ] && ok "so does a numeric local root span id" || not_ok "numeric root span" "rc=$RC $ERR"
run pr span --service pay --host web-dd --start "$start" --duration 500ms --span-id 1234 --out "$T/dd-none.html"
[ $RC -eq 4 ] && ok "another number is not the span's" || not_ok "numeric other" "rc=$RC $ERR"
run pr span --service pay --host web-1 --start "$start"
[ $RC -eq 2 ] && ok "a missing --duration is a usage error" || not_ok "usage" "rc=$RC"
for d in 0 -0 0x10 1e3 " 5" 1.; do
	run pr span --service pay --host web-1 --start "$start" --duration "$d" --out "$T/bad.html"
	[ $RC -eq 2 ] && [[ $ERR == *"'--duration $d' is not a duration above 0"* ]] && [ ! -e "$T/bad.html" ] &&
		ok "--duration '$d' is a usage error" || not_ok "duration '$d'" "rc=$RC $ERR"
done
finish
