#!/bin/bash
# Hostile local inputs fail cleanly: every path a command reads, named on
# the command line or in a file it reads, gives one line naming the input
# and why, a non-zero exit, and nothing stored; nothing waits for ever on
# a FIFO or reads a device or a kernel file.
. "$(dirname "$0")/lib.sh"
fresh_db cli_hostile
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_hostile
rm -rf "$T" && mkdir -p "$T"

# prt CMD...: pr under a timeout, standard input from /dev/null; 124 means it waited.
prt() {
	timeout 10 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" "$@" </dev/null
}
# one_line: ERR is a single line.
one_line() { [ -n "$ERR" ] && [ "$(grep -c . <<<"$ERR")" -eq 1 ]; }
captures() { sql 'select count(*) from profiles'; }

printf 'main;a 60\nmain;b 30\n' >"$T/small.folded"
run pr service add checkout --enable
[ $RC -eq 0 ] && ok "service add" || not_ok "service add" "$ERR"
mkfifo "$T/in.fifo"
mkdir "$T/folder.folded"

# 1. Only regular files are read; the rest is refused by name and kind.
run prt ingest "$T/in.fifo" --service checkout --release v1
[ $RC -eq 4 ] && one_line && [[ $ERR == *"cannot read '$T/in.fifo': not a regular file (a FIFO"* ]] &&
	ok "ingest of a FIFO with no writer is refused at once" || not_ok "fifo ingest" "rc=$RC $ERR"
run prt ingest "$T/folder.folded" --service checkout --release v1
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'$T/folder.folded': not a regular file (a directory)"* ]] &&
	ok "ingest of a directory names it as one" || not_ok "dir ingest" "rc=$RC $ERR"
run prt ingest /dev/zero --service checkout --release v1
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'/dev/zero': not a regular file (a character device)"* ]] &&
	ok "ingest of /dev/zero is refused, not read to the limit" || not_ok "zero ingest" "rc=$RC $ERR"
run prt ingest /proc/self/status --service checkout --release v1
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'/proc/self/status': a kernel file (/proc)"* ]] &&
	ok "ingest of a /proc file is refused" || not_ok "proc ingest" "rc=$RC $ERR"
OUT=$(printf 'main;piped 1\n' | timeout 10 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" \
	ingest /dev/stdin --service checkout --release v1 2>"$T/err")
RC=$? ERR=$(cat "$T/err")
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'/dev/stdin': not a regular file (a FIFO or a pipe; a pipe is read as '-')"* ]] &&
	ok "/dev/stdin from a pipe is refused, pointing at '-'" || not_ok "/dev/stdin" "rc=$RC $ERR"
OUT=$(printf 'main;piped 1\n' | timeout 10 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" \
	ingest - --service checkout --release v1 2>"$T/err")
RC=$? ERR=$(cat "$T/err")
[ $RC -eq 0 ] && [[ $OUT == *"'-': stored as capture"* ]] && ok "'-' reads a pipe" || not_ok "- ingest" "rc=$RC $ERR"
[ "$(captures)" = 1 ] && ok "only the piped capture was stored" || not_ok "captures" "$(captures)"
run prt ingest --manifest "$T/in.fifo"
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'$T/in.fifo': not a regular file (a FIFO"* ]] &&
	ok "a FIFO as the manifest is refused at once" || not_ok "fifo manifest" "rc=$RC $ERR"
run prt service import "$T/in.fifo"
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'$T/in.fifo': not a regular file (a FIFO"* ]] &&
	ok "a FIFO as the service catalogue is refused at once" || not_ok "fifo import" "rc=$RC $ERR"

# 2. A file that is not there is "not found" (exit 4), like a missing capture, not a
# failure of the machine (exit 3).
run prt ingest "$T/nosuch.folded" --service checkout --release v1
[ $RC -eq 4 ] && one_line && [[ $ERR == *"cannot read '$T/nosuch.folded': No such file or directory"* ]] &&
	ok "ingest of a missing file is exit 4" || not_ok "missing ingest" "rc=$RC $ERR"
run prt ingest "$T/small.folded" "$T/nosuch.folded" --service checkout --release v1
[ $RC -eq 4 ] && [[ $ERR == *"'$T/nosuch.folded': No such file"* ]] && [[ $OUT == *"1 stored"* ]] &&
	ok "a missing file among others is exit 4, the others stored" || not_ok "missing among" "rc=$RC $OUT $ERR"
run prt ingest --manifest "$T/nosuch.jsonl"
[ $RC -eq 4 ] && one_line && [[ $ERR == *"'$T/nosuch.jsonl': No such file"* ]] &&
	ok "a missing manifest is exit 4" || not_ok "missing manifest" "rc=$RC $ERR"
printf '{"path": "nosuch.folded", "service": "checkout", "release": "v1"}\n' >"$T/gone.jsonl"
run prt ingest --manifest "$T/gone.jsonl"
[ $RC -eq 4 ] && one_line && [[ $ERR == *"line 1 of '$T/gone.jsonl': cannot read '$T/nosuch.folded'"* ]] &&
	ok "a manifest line naming a missing file is exit 4" || not_ok "missing line" "rc=$RC $ERR"
run prt --config "$T/nosuch.json" service list
[ $RC -eq 2 ] && one_line && [[ $ERR == *"cannot read config '$T/nosuch.json': No such file"* ]] &&
	ok "a missing --config stays a usage error" || not_ok "missing config" "rc=$RC $ERR"

# --config: read through the same check, by every command.
for cmd in "service list" "config check" "ingest $T/small.folded --service checkout --release v2"; do
	# shellcheck disable=SC2086 # the command's words
	run prt --config "$T/in.fifo" $cmd
	[ $RC -eq 2 ] && one_line && [[ $ERR == *"cannot read config '$T/in.fifo': not a regular file (a FIFO"* ]] &&
		ok "--config naming a FIFO: $cmd is a usage error at once" ||
		not_ok "--config fifo: $cmd" "rc=$RC $ERR"
done
run prt --config /dev/null service list
[ $RC -eq 2 ] && one_line && [[ $ERR == *"cannot read config '/dev/null': not a regular file (a character device)"* ]] &&
	ok "--config /dev/null is refused" || not_ok "--config /dev/null" "rc=$RC $ERR"
[ "$(captures)" = 2 ] && ok "refused inputs stored nothing" || not_ok "captures" "$(captures)"

# 3. A function name's control characters never reach the terminal through export.
printf 'main;\033]0;owned\007\033[2J;x 5\n' >"$T/esc.folded"
run prt ingest "$T/esc.folded" --service checkout --release esc --format folded
[ $RC -eq 0 ] && ok "a name with escape sequences is stored" || not_ok "esc ingest" "rc=$RC $ERR"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" export service=checkout,release=esc >"$T/esc.out"
[ "$(LC_ALL=C tr -d '\n -~' <"$T/esc.out" | wc -c)" = 0 ] &&
	grep -qF 'main;\x1b]0;owned\x07\x1b[2J;x 5' "$T/esc.out" &&
	ok "export writes a name's control characters as \\xNN" || not_ok "export esc" "$(od -c "$T/esc.out" | head -3)"

# 4. A manifest line "-" is the file named "-" beside the manifest, not standard input.
mkdir -p "$T/m"
printf 'main;dashfile 3\n' >"$T/m/-"
printf '{"path": "-", "service": "checkout", "release": "dash"}\n' >"$T/m/dash.jsonl"
OUT=$(printf 'main;fromstdin 1\n' | timeout 10 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" \
	ingest --manifest "$T/m/dash.jsonl" 2>"$T/err")
RC=$? ERR=$(cat "$T/err")
[ $RC -eq 0 ] && [[ $OUT == *"'$T/m/-': stored as capture"* ]] &&
	[ "$(sql "select count(*) from functions where name = 'dashfile'")" = 1 ] &&
	[ "$(sql "select count(*) from functions where name = 'fromstdin'")" = 0 ] &&
	ok "a manifest line '-' reads the file named '-'" || not_ok "manifest dash" "rc=$RC $OUT $ERR"
OUT=$(timeout 10 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest --manifest - \
	<"$T/m/dash.jsonl" 2>"$T/err")
RC=$? ERR=$(cat "$T/err")
[ $RC -eq 4 ] && [[ $ERR == *"line 1 of '-': cannot read './-': No such file"* ]] &&
	ok "a manifest on standard input does not read itself as a profile" ||
	not_ok "manifest on stdin" "rc=$RC $OUT $ERR"

# 5. ingest --json names a path that is not UTF-8 too, its stray bytes as \xNN.
bad=$T/$'bad\xffname.folded'
printf 'main;latin 4\n' >"$bad"
run prt --json ingest "$bad" "$T/"$'gone\xfe.folded' --service checkout --release latin
[ $RC -eq 4 ] && jq -e --arg p "$T/bad\\xffname.folded" --arg g "$T/gone\\xfe.folded" \
	'.stored == 1 and .failed == 1 and (.captures | length) == 2 and
	 .captures[0].path == $p and .captures[0].status == "stored" and .captures[1].path == $g and
	 (.captures[1].error | contains($g))' <<<"$OUT" >/dev/null &&
	ok "ingest --json lists a non-UTF-8 path, its bytes escaped" || not_ok "json path" "rc=$RC $OUT $ERR"

# 7. Standard input is read once: '-' twice is refused before anything is read or stored.
before=$(captures)
for jobs in 1 2; do
	OUT=$(printf 'main;twice 1\n' | timeout 10 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" \
		ingest - "$T/small.folded" - --service checkout --release twice --jobs $jobs 2>"$T/err")
	RC=$? ERR=$(cat "$T/err")
	[ $RC -eq 2 ] && one_line && [[ $ERR == *"'-' (standard input) is given more than once"* ]] &&
		[ "$(captures)" = "$before" ] && [ -z "$OUT" ] &&
		ok "'-' given twice is a usage error, nothing stored (--jobs $jobs)" ||
		not_ok "- twice, --jobs $jobs" "rc=$RC $OUT $ERR"
done

# 8. Numbers and values on the command line: digits only; suffixes on sizes alone.
run prt ingest "$T/small.folded" --service checkout --release v1 --max-input-bytes " -1"
[ $RC -eq 2 ] && one_line && [[ $ERR == *"'--max-input-bytes  -1' needs a whole number"* ]] &&
	ok "a negative size behind a blank is refused, not read as the largest" ||
	not_ok "blank negative" "rc=$RC $ERR"
run prt ingest "$T/small.folded" --service checkout --release v1 --max-depth 1k
[ $RC -eq 2 ] && one_line && [[ $ERR == *"'--max-depth 1k' is not a whole number from 1 to"* ]] &&
	ok "a count with a size suffix is refused" || not_ok "count suffix" "rc=$RC $ERR"
printf 'main;sized 1\n' >"$T/sized.folded"
run prt ingest "$T/sized.folded" --service checkout --release sized --max-input-bytes 1K
[ $RC -eq 0 ] && ok "a size keeps its K suffix" || not_ok "size suffix" "rc=$RC $ERR"
for cmd in "finding show" "finding resolve" "profile show"; do
	run prt $cmd 1k
	[ $RC -eq 2 ] && one_line && [[ $ERR == *"ID '1k' is not a whole number"* ]] &&
		ok "$cmd 1k is refused, not taken as another ID" || not_ok "$cmd 1k" "rc=$RC $ERR"
done
run timeout 10 "$PROFREG_BIN" --db "$DB" --home "" service list
[ $RC -eq 2 ] && one_line && [[ $ERR == *"'--home' is empty"* ]] &&
	ok "an empty --home is refused, not read as ./var" || not_ok "empty home" "rc=$RC $ERR"
OUT=$(PROFREG_HOME= timeout 10 "$PROFREG_BIN" --db "$DB" service list 2>"$T/err")
RC=$? ERR=$(cat "$T/err")
[ $RC -eq 2 ] && one_line && [[ $ERR == *"PROFREG_HOME is set but empty"* ]] &&
	ok "an empty PROFREG_HOME is refused, not read as ./var" || not_ok "empty PROFREG_HOME" "rc=$RC $ERR"
printf 'main;longname 1\n' >"$T/longname.folded"
run prt ingest "$T/longname.folded" --service checkout --release sized --max-string-length 1K
[ $RC -eq 0 ] && ok "--max-string-length, a size in bytes, takes K" || not_ok "string length K" "rc=$RC $ERR"
printf '{"serve": {"listen": "127.0.0.1:80800"}}' >"$T/port.json"
run prt --config "$T/port.json" config check
[ $RC -eq 2 ] && one_line && [[ $ERR == *"serve.listen"*"port must be a number from 0 to 65535"* ]] &&
	ok "config check refuses a port above 65535" || not_ok "config port" "rc=$RC $ERR"
for l in 127.0.0.1:65536 127.0.0.1:1x 127.0.0.1:; do
	run prt serve --listen $l
	[ $RC -eq 2 ] && one_line && [[ $ERR == *"'$l': the port must be"* ]] &&
		ok "serve --listen $l is refused, not wrapped to another port" ||
		not_ok "listen $l" "rc=$RC $ERR"
done
# A real Go CPU profile that says it covers 2^63 - 1 ns (292 years): a
# field written twice keeps the last value, so one more duration_nanos
# at the end of the message is enough. Refused, naming it; the same
# profile with its own duration is stored.
python3 - "$PROFREG_TEST_DATA/pprof/go-cpu.pb.gz" "$T/forever.pb.gz" <<'PY'
import gzip, sys
raw = gzip.open(sys.argv[1]).read()
v, tail = (1 << 63) - 1, b""
while True:
    b = v & 0x7F
    v >>= 7
    if v:
        tail += bytes([b | 0x80])
    else:
        tail += bytes([b])
        break
open(sys.argv[2], "wb").write(gzip.compress(raw + b"\x50" + tail))
PY
n=$(captures)
run prt ingest "$T/forever.pb.gz" --service checkout --release v1
[ $RC -eq 4 ] && one_line && [[ $ERR == *"forever.pb.gz"*"covers 106752 days"*"more than a capture's 31"* ]] &&
	[ "$(captures)" = "$n" ] && ok "a profile that says it covers 292 years is refused, naming it" ||
	not_ok "absurd duration" "rc=$RC $ERR"
run prt ingest "$PROFREG_TEST_DATA/pprof/go-cpu.pb.gz" --service checkout --release v1
[ $RC -eq 0 ] && ok "the same profile with its own duration is stored" || not_ok "own duration" "rc=$RC $ERR"
finish
