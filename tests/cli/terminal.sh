#!/bin/bash
# What reaches a terminal: control, C1 and bidirectional characters in
# function names are shown escaped by profile show; every message goes
# to standard error in one write(2); the tables of profiles list, profile
# show, service list, runs list and page list fit 80 columns on a fixture
# of long names, and --wide shows them whole; `profreg help` is
# `profreg --help`.
. "$(dirname "$0")/lib.sh"
fresh_db cli_terminal
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_terminal
rm -rf "$T" && mkdir -p "$T"

# Display columns of the widest line of standard input (escapes are
# ASCII; U+2026 and the names below are one column a character).
widest() { LC_ALL=C.UTF-8 wc -L; }
[ "$(printf 'a\xe2\x80\xa6\n' | widest)" = 2 ] && ok "the C.UTF-8 locale measures display columns" || not_ok "C.UTF-8 locale" "wc -L counts bytes: the widths below mean nothing"

svc=payments-checkout-$(printf 'service%.0s' {1..14})   # 116 characters
team=team-$(printf 'ledger%.0s' {1..10})
rel=v2026.03.11-$(printf 'rc%.0s' {1..40})
host=web-$(printf 'eu-west-1a-%.0s' {1..8})
fn=checkout.'(*Ledger)'.$(printf 'reconcilePending%.0s' {1..8}).batchWrite
pr --quiet service add "$svc" --team "$team" && pr --quiet service enable "$svc"
pr --quiet service add web && pr --quiet service enable web

# Function names a terminal would act on: C1 CSI, OSC and ST, a
# right-to-left override, a line separator, ESC (folded names cannot hold
# ';', so the OSC has no parameter separator).
printf 'main;%s 40\nmain;csi\xc2\x9b2Jx 20\nmain;osc\xc2\x9d0 pwned\xc2\x9cy 15\nmain;rlo\xe2\x80\xaecod.exe 10\nmain;ls\xe2\x80\xa8forged 10\nmain;esc\x1b[31mred 5\n' "$fn" >"$T/names.folded"
pr --quiet ingest "$T/names.folded" --service "$svc" --release "$rel" --host "$host" --format folded --time 2026-03-11T00:00:00Z
id=$(sql "select max(id) from profiles")
[ -n "$id" ] && ok "a profile with hostile and long names is stored (capture $id)" || not_ok "ingest names"

# 1. profile show escapes what a terminal would act on.
run pr profile show "$id"
[ $RC -eq 0 ] && [[ $OUT == *'csi\u{009b}2Jx'* ]] && [[ $OUT == *'osc\u{009d}0 pwned\u{009c}y'* ]] && ok "profile show: C1 CSI, OSC and ST as \\u{009b}, \\u{009d}, \\u{009c}" || not_ok "C1 escapes" "$OUT"
[[ $OUT == *'rlo\u{202e}cod.exe'* ]] && [[ $OUT == *'ls\u{2028}forged'* ]] && ok "profile show: U+202E and U+2028 as \\u{202e}, \\u{2028}" || not_ok "bidi and separator escapes" "$OUT"
[[ $OUT == *'esc\x1b[31mred'* ]] && ok "profile show: ESC as \\x1b" || not_ok "C0 escape" "$OUT"
raw=$(printf '%s\n' "$OUT" | LC_ALL=C grep -cP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]')
[ "$raw" = 0 ] && ok "profile show prints no raw control, C1 or bidi character" || not_ok "raw bytes in profile show" "$raw lines"

# 2. Every message is one write(2) to standard error.
# LeakSanitizer cannot work under ptrace: these runs of a `make asan`
# build skip the leak check (every other run keeps it).
traced() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=write,writev -o "$T/strace" "$@"
}
# writes(FILE): write calls to fd 2 that strace logged in FILE.
writes() { grep -cE '^[0-9]+ +writev?\(2,' "$1"; }
if ! command -v strace >/dev/null 2>&1; then
	not_ok "strace is needed to count write calls (make deps installs it)"
elif ! strace -qq -e trace=write -o /dev/null true 2>/dev/null; then
	not_ok "strace cannot trace here (is ptrace forbidden?): write calls not counted"
else
	bad=$T/$(printf 'no\xc2\x9bsuch\x1b[2J\xe2\x80\xaefile').folded
	run traced "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest "$bad" --service web --release v1
	n=$(writes "$T/strace")
	[ $RC -ne 0 ] && [ "$n" = 1 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] && ok "an error is one line in one write ($n)" || not_ok "error writes" "rc=$RC writes=$n" "$ERR"
	[[ $ERR == *'no\u{009b}such\x1b[2J\u{202e}file'* ]] && ok "the error's quoted path is escaped in that write" || not_ok "error escaping" "$ERR"
	run traced "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest --no-such-option
	n=$(writes "$T/strace")
	[ $RC -eq 2 ] && [ "$n" = 1 ] && ok "a usage error is one write" || not_ok "usage error writes" "rc=$RC writes=$n" "$ERR"
	: >"$T/empty.folded"
	printf 'main;a 1\n' >"$T/one.folded"
	cat >"$T/manifest.jsonl" <<JSON
{"path": "missing-1.folded", "service": "web", "release": "m"}
not json
{"path": "one.folded", "service": "web"}
{"path": "empty.folded", "service": "web", "release": "m", "format": "folded"}
JSON
	run traced "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest --manifest "$T/manifest.jsonl"
	n=$(writes "$T/strace")
	lines=$(printf '%s\n' "$ERR" | grep -c .)
	[ "$lines" -ge 4 ] && [ "$n" = "$lines" ] && [[ $ERR == *"warning: "* ]] && ok "errors and a warning from a manifest: one write per line ($n writes, $lines lines)" || not_ok "manifest writes" "writes=$n lines=$lines" "$ERR"
fi

# 3. Tables fit 80 columns; --wide shows every name whole.
sql "select setval('runs_id_seq', 99990)" >/dev/null
sql "insert into runs (kind, status, detail, finished_at) values ('post-deploy', 'ok', '{\"findings\": 12, \"failed\": 1}', now() + interval '75 seconds'), ('nightly', 'running', '{}', null), ('analyze', 'failed', '{}', now() + interval '3 hours')"
svc_id=$(sql "select id from services where name = '$svc'")
sql "insert into pages (service_id, dedup_key, status, target, event, attempts, last_error, sent_at, detail) values ($svc_id, 'k1', 'failed', 'pagerduty-payments-europe-west-primary-escalation', 'trigger', 5, 'HTTP 400: Invalid routing key; the integration was deleted or its key is wrong', now(), jsonb_build_object('service', '$svc', 'function', '$fn')), ($svc_id, 'k2', 'cancelled', 'am', 'resolve', 0, null, null, '{}')"
for cmd in "profiles list" "profile show $id" "service list" "runs list" "page list"; do
	# shellcheck disable=SC2086
	run pr $cmd
	w=$(printf '%s\n' "$OUT" | widest)
	[ $RC -eq 0 ] && [ "$(printf '%s\n' "$OUT" | grep -c .)" -ge 2 ] && [ "$w" -le 80 ] && ok "$cmd: every line fits 80 columns ($w)" || not_ok "$cmd is $w columns" "rc=$RC $ERR" "$OUT"
done
run pr profiles list
[[ $OUT == *"…"* ]] && [[ $OUT != *"$svc"* ]] && [[ $OUT != *"$rel"* ]] && ok "profiles list shortens long names with an ellipsis" || not_ok "ellipsis" "$OUT"
run pr profiles list --wide
[[ $OUT == *"$svc"* ]] && [[ $OUT == *"$rel"* ]] && [[ $OUT == *"$host"* ]] && ok "profiles list --wide shows service, release and host whole" || not_ok "profiles list --wide" "$OUT"
run pr profile show "$id"
[[ $OUT == *"checkout.(*Ledger).re"*"…"*"Pending.batchWrite"* ]] && [[ $OUT != *"$fn"* ]] && ok "profile show keeps a long function name's head and tail" || not_ok "profile show ellipsis" "$OUT"
run pr profile show "$id" --wide
[[ $OUT == *"$fn"* ]] && ok "profile show --wide shows the function name whole" || not_ok "profile show --wide" "$OUT"
run pr --wide service list
[[ $OUT == *"$svc"*"$team"* ]] && ok "--wide before the command: service list shows service and team whole" || not_ok "service list --wide" "$OUT"
run pr runs list --wide
[[ $OUT == *FINISHED* ]] && [ "$(grep -c '99991 post-deploy ok' <<<"$OUT")" = 1 ] && ok "runs list --wide adds when each run finished" || not_ok "runs list --wide" "$OUT"
run pr runs list
[[ $OUT == *"1m15s"* ]] && [[ $OUT == *"3h00m"* ]] && ok "runs list shows how long each run took" || not_ok "runs list duration" "$OUT"
run pr page list --wide
[[ $OUT == *"$fn"* ]] && [[ $OUT == *"pagerduty-payments-europe-west-primary-escalation"* ]] && [[ $OUT == *"its key is wrong"* ]] && ok "page list --wide shows target, function and error whole" || not_ok "page list --wide" "$OUT"

# 4. `profreg help` is `profreg --help`, to the byte.
"$PROFREG_BIN" help >"$T/help" 2>&1
rc1=$?
"$PROFREG_BIN" --help >"$T/dash-help" 2>&1
rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s "$T/help" "$T/dash-help" && grep -q 'global options' "$T/help" && grep -q '^commands:' "$T/help" && ok "profreg help and profreg --help print the same text" || not_ok "help differs" "$(diff "$T/help" "$T/dash-help")"
run "$PROFREG_BIN" help ingest
[ $RC -eq 0 ] && [[ $OUT == "usage: profreg ingest"* ]] && ok "profreg help COMMAND is COMMAND --help" || not_ok "help ingest" "rc=$RC $OUT"
run "$PROFREG_BIN" help runs list
sub=$OUT
run "$PROFREG_BIN" runs list --help
[ $RC -eq 0 ] && [[ $sub == "usage: profreg runs list"* ]] && [ "$sub" = "$OUT" ] &&
	ok "profreg help GROUP COMMAND is GROUP COMMAND --help" || not_ok "help runs list" "$sub"
finish
