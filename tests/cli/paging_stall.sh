#!/bin/bash
# A paging target that takes every request and never answers
# (tests/support/stall_http.py on loopback): once it has answered none of
# max_attempts requests in a row, a flush sends it nothing more, where
# each of its pages used to get all its attempts, a timeout each. Its
# pages stay pending for the next flush, none lost or failed, and the
# flush says why; the token appears nowhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"

T=$PROFREG_TEST_TMP/paging_stall
rm -rf "$T"
mkdir -p "$T"
python3 "$(dirname "$0")/../support/stall_http.py" --port-file "$T/hook.port" \
	--log "$T/hook.log" --timeout 60 &
STALL=$!
trap 'kill $STALL 2>/dev/null' EXIT
wait_port "$T/hook.port" || not_ok "the stalling server starts"

export HOOK_TOKEN=hook-SECRET-token-0123456789
fresh_db paging_stall
cat >"$T/cfg.json" <<EOC
{"paging": {"min_severity": "high", "backoff_ms": 20, "max_backoff_ms": 2000,
            "connect_timeout_ms": 1000, "timeout_ms": 1000, "max_attempts": 2,
            "targets": {"hook": {"type": "webhook", "secret_env": "HOOK_TOKEN",
                                 "url": "http://127.0.0.1:$(cat "$T/hook.port")/hook"}},
            "default": ["hook"]}}
EOC
P() { pr --config "$T/cfg.json" "$@"; }
P db init >/dev/null 2>&1
P service add checkout >/dev/null
# Three pages waiting in the outbox (the detail a page event needs).
for k in 1 2 3; do
	sql "insert into pages (service_id, dedup_key, target, event, detail)
	     select id, 'profreg-k$k', 'hook', 'trigger',
	            '{\"dedup_key\": \"profreg-k$k\", \"service\": \"checkout\", \"severity\": \"high\",
	              \"function\": \"f$k\", \"type\": \"cpu\", \"release\": \"v2\"}'
	     from services where name = 'checkout'" >/dev/null
done

start=$(date +%s%N)
run P page flush
took_ms=$((($(date +%s%N) - start) / 1000000))
sent=$(wc -l <"$T/hook.log")
[ $RC -eq 3 ] && [ "$sent" = 2 ] &&
	grep -q "target 'hook' answered none of 2 requests in a row: nothing more was sent to it, its pages wait for the next flush" <<<"$OUT$ERR" &&
	ok "after 2 requests without an answer the target is sent nothing more ($sent requests, ${took_ms} ms)" ||
	not_ok "stalled target" "rc=$RC $sent requests, ${took_ms} ms" "$OUT" "$ERR"
[ "$(sql "select count(*) from pages where status = 'pending'")" = 3 ] &&
	[ "$(sql "select max(attempts) from pages")" -le 1 ] &&
	ok "its three pages stay pending for the next flush, none failed" ||
	not_ok "pages" "$(sql "select id, status, attempts, last_error from pages")"
! grep -q "hook-SECRET" <<<"$OUT$ERR$(sql "select * from pages")" &&
	ok "the token appears in no output and no page row" || not_ok "token shown"

finish
