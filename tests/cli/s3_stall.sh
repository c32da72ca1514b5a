#!/bin/bash
# An S3 blob store that takes every request and never answers
# (tests/support/stall_http.py on loopback): an ingest of four files
# stops at the first file whose blob cannot be stored, after its tries,
# and sends nothing for the files after it, which are reported as not
# tried; nothing is stored and the credentials appear nowhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

T=$PROFREG_TEST_TMP/s3_stall
rm -rf "$T"
mkdir -p "$T"
python3 "$(dirname "$0")/../support/stall_http.py" --port-file "$T/s3.port" \
	--log "$T/s3.log" --timeout 60 &
STALL=$!
trap 'kill $STALL 2>/dev/null' EXIT
wait_port "$T/s3.port" || not_ok "the stalling server starts"

export AWS_ACCESS_KEY_ID=AKIASTALLTEST0000001 AWS_SECRET_ACCESS_KEY=stall-SECRET-key-0123456789abcdef
unset AWS_SESSION_TOKEN
fresh_db s3_stall
cat >"$T/cfg.json" <<EOC
{"blobs": {"store": "s3", "endpoint": "http://127.0.0.1:$(cat "$T/s3.port")", "bucket": "stall",
           "region": "us-east-1", "addressing": "path", "timeout_ms": 1000,
           "connect_timeout_ms": 1000}}
EOC
P() { pr --config "$T/cfg.json" "$@"; }
P db init >/dev/null 2>&1
P service add checkout >/dev/null && P service enable checkout >/dev/null

D=$PROFREG_TEST_DATA/pprof
start=$(date +%s%N)
run P ingest --service checkout --release v1 "$D/go-cpu.pb.gz" "$D/go-heap.pb.gz" \
	"$D/demo-v1-cpu.pb.gz" "$D/demo-v2-cpu.pb.gz"
took_ms=$((($(date +%s%N) - start) / 1000000))
sent=$(wc -l <"$T/s3.log")
[ $RC -eq 3 ] && grep -q "stopped at file 1 of 4: .*no answer within 1000 ms (timeout); 0 ingested, 3 not tried" <<<"$ERR" &&
	ok "the ingest stops at the first blob the store does not take, the rest not tried (${took_ms} ms)" ||
	not_ok "stop" "rc=$RC $ERR"
# Three tries of the first file's blob in the batch, and three more when
# it is stored alone: the three files after it are never asked about.
[ "$sent" -le 6 ] && [ "$(grep -vc ' /stall/sha256/14/80c397f1' "$T/s3.log")" = 0 ] &&
	ok "only the first file's blob is asked for ($sent requests)" ||
	not_ok "requests" "$sent requests:" "$(cut -c1-90 "$T/s3.log")"
[ "$(sql "select count(*) from profiles")" = 0 ] && ok "nothing is stored" ||
	not_ok "stored" "$(sql "select count(*) from profiles")"
! grep -q "stall-SECRET" <<<"$OUT$ERR" && ok "the secret key appears in no output" ||
	not_ok "secret shown"

finish
