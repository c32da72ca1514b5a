#!/bin/bash
# A gate or a nightly stopped by SIGTERM (a CI job cancelled, systemd's
# stop, cron's end) says so in one line before it ends by the signal;
# before, it vanished with exit 143 and nothing on stderr.
. "$(dirname "$0")/lib.sh"
fresh_db cli_stopped_by_signal
T=$PROFREG_TEST_TMP/cli_stopped_by_signal
rm -rf "$T" && mkdir -p "$T"
pr --quiet db init
pr --quiet service add svc --enable

# Until the process is seen waiting (a bounded poll), then SIGTERM. The
# binary is started directly, not through pr(), so that $! is its own pid.
stop_when_waiting() { # $1: pid
	for _ in $(seq 100); do
		[ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = S ] && break
		sleep 0.1
	done
	sleep 0.5
	kill -TERM "$1"
	wait "$1"
}
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" post-deploy --service svc --release v9 --commit 0000000000000000000000000000000000000000 \
	--wait 60s >"$T/out" 2>"$T/err" &
stop_when_waiting $!
rc=$?
[ $rc -eq 143 ] &&
	grep -qx "profreg post-deploy: stopped by SIGTERM before it finished; the release is not passed" \
		"$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	ok "post-deploy stopped by SIGTERM says so, the release not passed, and ends by the signal" ||
	not_ok "post-deploy SIGTERM" "rc=$rc $(cat "$T/err")"

# Started ignoring SIGHUP (nohup), it goes on ignoring it.
(
	trap '' HUP
	exec "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" post-deploy --service svc --release v9 \
		--commit 0000000000000000000000000000000000000000 --wait 60s >"$T/out" 2>"$T/err"
) &
pid=$!
for _ in $(seq 100); do
	[ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = S ] && break
	sleep 0.1
done
sleep 0.5
kill -HUP "$pid"
sleep 1
kill -0 "$pid" 2>/dev/null && ok "a SIGHUP it was started ignoring is still ignored" ||
	not_ok "nohup" "$(cat "$T/err")"
kill -TERM "$pid" 2>/dev/null
wait "$pid"

# A nightly held up by a lock on the findings, then stopped.
psql "$DB" -qAt -c "begin" -c "lock table findings in access exclusive mode" \
	-c "select pg_sleep(20)" >/dev/null 2>&1 &
holder=$!
sleep 1
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" nightly --no-catch-up >"$T/out" 2>"$T/err" &
stop_when_waiting $!
rc=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
grep -q "^profreg nightly: stopped by SIGTERM before it finished; the next nightly marks its run interrupted$" "$T/err" &&
	[ $rc -eq 143 ] && ok "a nightly stopped by SIGTERM says so" ||
	not_ok "nightly SIGTERM" "rc=$rc $(cat "$T/err")"
