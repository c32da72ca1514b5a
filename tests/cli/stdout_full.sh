#!/bin/bash
# Standard output that cannot be written (a full disk: /dev/full) is one
# error line, exit 3: the line saying why, never a second one after it
# ("cannot write to standard output: Success").
. "$(dirname "$0")/lib.sh"
fresh_db cli_stdout_full
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_stdout_full
rm -rf "$T" && mkdir -p "$T"

pr --quiet service add web --team a && pr --quiet service enable web
printf 'main;a 60\nmain;b 40\n' >"$T/v1.folded"
printf 'main;a 30\nmain;b 70\n' >"$T/v2.folded"
pr --quiet ingest "$T/v1.folded" --service web --release v1 --time 2026-03-01T00:00:00Z
pr --quiet ingest "$T/v2.folded" --service web --release v2 --time 2026-03-02T00:00:00Z
pr --quiet token create --team a >/dev/null
id=$(sql "select id from profiles where release = 'v1'")
pr --quiet analyze --service web --release v2 >/dev/null 2>&1
run_id=$(sql "select max(id) from runs where kind = 'analyze'")

# full CMD...: run CMD with standard output on /dev/full; one line, exit 3.
full() {
	local desc="$*"
	"$@" >/dev/full 2>"$T/err"
	RC=$?
	ERR=$(cat "$T/err")
	if [ $RC -eq 3 ] && [ "$(wc -l <"$T/err")" = 1 ] && [[ $ERR != *Success* ]] &&
		[[ $ERR == *"No space left"* ]]; then
		ok "$desc > /dev/full: one line"
	else
		not_ok "$desc > /dev/full" "rc=$RC" "$ERR"
	fi
}
full pr export "$id" --format folded
full pr export "$id" --format folded --out -
full pr diff --base "id=$id" --target 'service=web,release=v2' --out -
full pr report --run "$run_id" --format md --out -
full pr retention --dry-run
full pr blobs check
full pr token list
full pr profiles list
finish
