#!/bin/bash
# Payment data in rejected input never reaches an error message: a
# folded, perf or speedscope line, a sidecar's or a manifest's field, and
# a profiled service's error answer holding a card number and a password
# give errors that name the file, the line and the reason, and hold
# neither; nothing of them is stored in runs.detail or collect_slots.
# Harmless words (an unknown unit) are still quoted.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh" # wait_port

T=$PROFREG_TEST_TMP/cli_redact
rm -rf "$T" && mkdir -p "$T/drop"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
CARD=4111111111111111
fresh_db cli_redact
pr --quiet db init
pr --quiet service add checkout && pr --quiet service enable checkout

# clean TEXT: holds neither the card number nor the password.
clean() { [[ $1 != *"$CARD"* && $1 != *hunter2* ]]; }

printf 'main;foo 10\nmain;foo card=%s password=hunter2\n' "$CARD" >"$T/b5.folded"
run pr ingest "$T/b5.folded" --service checkout --release v1 --format folded
[ $RC -ne 0 ] && [[ $ERR == *"b5.folded"*"line 2: no count at the end of the line"* ]] &&
	ok "a folded line without a count: the file, the line and the reason" ||
	not_ok "folded error" "rc=$RC $ERR"
clean "$OUT$ERR" && ok "the folded error holds no card number or password" ||
	not_ok "folded error is clean" "$ERR"

printf 'app 100 [000] 1.000001: 1 cpu-clock:\n\tcard=%s (x)\n\n' "$CARD" >"$T/b6.perf"
run pr ingest "$T/b6.perf" --service checkout --release v1 --format perf
[ $RC -ne 0 ] && [[ $ERR == *"b6.perf"*"line 2: frame line does not start with an address"* ]] &&
	ok "a perf frame without an address: the file, the line and the reason" ||
	not_ok "perf error" "rc=$RC $ERR"
clean "$OUT$ERR" && ok "the perf error holds no card number" || not_ok "perf error is clean" "$ERR"

# A service name, from a manifest line, the command line or a catalogue,
# and a perf event's name are any text of their file.
printf 'main;foo 10\n' >"$T/ok.folded"
printf '{"path": "%s/ok.folded", "service": "card %s cvv 737", "release": "v1"}\n' "$T" "$CARD" \
	>"$T/m.jsonl"
run pr ingest --manifest "$T/m.jsonl"
[ $RC -eq 4 ] && [[ $ERR == *"service 'card <"*" bytes>"*"not found"* ]] && clean "$OUT$ERR" &&
	ok "an unknown service name from a manifest is quoted without its numbers" ||
	not_ok "manifest service name" "rc=$RC $ERR"
run pr ingest "$T/ok.folded" --service "card $CARD" --release v1
[ $RC -ne 0 ] && clean "$OUT$ERR" && ok "... and from --service" || not_ok "--service name" "rc=$RC $ERR"
run pr ingest "$T/ok.folded" --service chekout --release v1
[ $RC -eq 4 ] && [[ $ERR == *"service 'chekout' not found (did you mean 'checkout'?)"* ]] &&
	ok "a valid unknown name is quoted as typed, with the suggestion" ||
	not_ok "typo quoted" "rc=$RC $ERR"
printf '{"name": "card %s"}\n' "$CARD" >"$T/cat.jsonl"
run pr service import "$T/cat.jsonl"
[ $RC -ne 0 ] && [[ $ERR == *"service name 'card <16 bytes>'"* ]] && clean "$OUT$ERR" &&
	ok "a catalogue's invalid service name is quoted without its numbers" ||
	not_ok "catalogue name" "rc=$RC $ERR"
for i in 1 2; do
	printf 'app 100 [000] 1.00000%d: 1 cvv=737/%s/:\n\t4005d6 main (/bin/app)\n\n' "$i" "$CARD"
done >"$T/ev.perf"
printf 'app 100 [000] 1.000003: 1 page-faults:\n\t4005d6 main (/bin/app)\n\n' >>"$T/ev.perf"
run pr ingest "$T/ev.perf" --service checkout --release v1 --format perf
[ $RC -eq 0 ] && [[ $ERR == *"only the events of '"*"' were kept"* ]] && clean "$OUT$ERR" &&
	ok "a perf event's name in the warning holds no card number" ||
	not_ok "perf event name" "rc=$RC $ERR"

ss() {
	printf '{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main"}]},"profiles":[{"type":"sampled","name":"t","unit":"%s","startValue":0,"endValue":1,"samples":[[0]],"weights":[1]}]}\n' "$1"
}
ss "password=hunter2 $CARD" >"$T/b7.speedscope.json"
run pr ingest "$T/b7.speedscope.json" --service checkout --release v1 --format speedscope
[ $RC -ne 0 ] && [[ $ERR == *"b7.speedscope.json"*"unknown unit"* ]] && clean "$OUT$ERR" &&
	ok "a speedscope unit with a password: named as unknown, not quoted" ||
	not_ok "speedscope error" "rc=$RC $ERR"
ss nanosecondz >"$T/b8.speedscope.json"
run pr ingest "$T/b8.speedscope.json" --service checkout --release v1 --format speedscope
[ $RC -ne 0 ] && [[ $ERR == *"unknown unit 'nanosecondz'"* ]] &&
	ok "a harmless unknown unit is still quoted" || not_ok "speedscope unit quoted" "rc=$RC $ERR"

# A manifest's line and a drop folder's sidecar.
printf 'main;a 1\n' >"$T/m1.folded"
printf '{"path": "m1.folded", "service": "checkout", "release": "m1", "commit": "card %s"}\n' \
	"$CARD" >"$T/m.jsonl"
run pr ingest --manifest "$T/m.jsonl"
[ $RC -ne 0 ] && [[ $ERR == *"line 1 of '$T/m.jsonl'"*"is not a hex SHA"* ]] &&
	clean "$OUT$ERR" && ok "a manifest's commit with a card number: line named, not quoted" ||
	not_ok "manifest commit" "rc=$RC $ERR"
printf '{"path": "m1.folded", "service": "checkout", "release": "m1", "tags": {"load": "password=hunter2"}}\n' \
	>"$T/t.jsonl"
run pr ingest --manifest "$T/t.jsonl"
[ $RC -ne 0 ] && [[ $ERR == *"line 1 of '$T/t.jsonl'"*"tag 'load'"* ]] && clean "$OUT$ERR" &&
	ok "a manifest's tag value with a password: tag named, not quoted" ||
	not_ok "manifest tag" "rc=$RC $ERR"

printf 'main;c 1\n' >"$T/drop/d.folded"
printf '{"release": "d1", "time": "card=%s password=hunter2"}\n' "$CARD" >"$T/drop/d.folded.json"
printf '{"services": {"checkout": {"sources": [{"type": "dir", "dir": "%s"}]}}}\n' "$T/drop" \
	>"$T/cfg.json"
run pr --config "$T/cfg.json" collect --service checkout
[[ $OUT$ERR == *"sidecar '$T/drop/d.folded.json'"*"is not an ISO 8601 time"* ]] &&
	ok "collect names the sidecar and the field" ||
	not_ok "collect errors" "rc=$RC $OUT $ERR"
clean "$OUT$ERR" && ok "collect prints no card number or password" ||
	not_ok "collect output is clean" "$OUT" "$ERR"

# A dropped file named by its producer after a customer: its failure
# names it with the card number and the address cut, in the output and
# in the run's record.
rm -f "$T/drop/d.folded" "$T/drop/d.folded.json"
bad="pay-$CARD-jane.doe@example.com.folded"
printf 'not a profile\n' >"$T/drop/$bad"
printf '{"release": "d1"}\n' >"$T/drop/$bad.json"
run pr --config "$T/cfg.json" collect --service checkout
detail=$(sql "select detail::text from runs where kind = 'collect' order by id desc limit 1")
[[ $OUT$ERR == *"pay-#"* ]] && clean "$OUT$ERR$detail" &&
	[[ $OUT$ERR$detail != *jane* ]] &&
	ok "a dropped file's failure names it without its card number or address" ||
	not_ok "dropped file name" "rc=$RC $OUT $ERR" "$detail"

# A profiled service whose error page echoes payment data.
PD=${PD_SERVER:-${BUILD:-build}/servers/pd_server}
"$PD" --port-file "$T/pd.port" --log "$T/pd.log" --timeout 120 \
	--then "body:card $CARD password=hunter2" &
PIDS="$PIDS $!"
wait_port "$T/pd.port" || not_ok "pd_server starts"
A=127.0.0.1:$(cat "$T/pd.port")
cat >"$T/http.json" <<EOF
{"collect": {"retries": 0},
 "services": {"checkout": {"types": ["cpu"], "sources": [{"type": "pprof_http", "seconds": 1,
   "targets": ["$A"]}]}}}
EOF
run pr --config "$T/http.json" collect --service checkout
[ -s "$T/pd.log" ] && [[ $OUT$ERR == *"'$A'"*"HTTP 500"* ]] &&
	ok "an endpoint's HTTP 500 is reported with the target and the status" ||
	not_ok "http error" "rc=$RC $OUT $ERR"
clean "$OUT$ERR" && ok "its body's card number and password are not printed" ||
	not_ok "http output is clean" "$OUT" "$ERR"
[ "$(sql "select count(*) from runs where detail::text like '%$CARD%' or detail::text like '%hunter2%'")" = 0 ] &&
	ok "runs.detail holds no card number or password" ||
	not_ok "runs.detail is clean" "$(sql "select detail from runs")"
[ "$(sql "select count(*) from collect_slots s where s::text like '%$CARD%' or s::text like '%hunter2%'")" = 0 ] &&
	ok "collect_slots holds no card number or password" ||
	not_ok "collect_slots is clean" "$(sql "select * from collect_slots")"
finish
