#!/bin/bash
# --out never replaces what is not a regular file: export, report and diff
# write a FIFO and a character device in place, write /dev/stdout to the
# process' standard output, refuse a symbolic link and a directory by
# name and leave them as they were, and still write a new path or a
# regular file whole.
. "$(dirname "$0")/lib.sh"
fresh_db cli_out
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_out
rm -rf "$T" && mkdir -p "$T"

pr --quiet service add web && pr --quiet service enable web
printf 'main;a 60\nmain;b 40\n' >"$T/v1.folded"
printf 'main;a 30\nmain;b 70\n' >"$T/v2.folded"
pr --quiet ingest "$T/v1.folded" --service web --release v1 --time 2026-03-01T00:00:00Z
pr --quiet ingest "$T/v2.folded" --service web --release v2 --time 2026-03-02T00:00:00Z
id=$(sql "select id from profiles where release = 'v1'")
want=$(pr export "$id" --format folded --out -)
[ -n "$want" ] && ok "export to standard output (the reference)" || not_ok "export -" "$want"

# A FIFO with a reader: the reader gets the export, the FIFO stays a FIFO.
mkfifo "$T/fifo"
timeout 20 cat "$T/fifo" >"$T/fifo.got" &
reader=$!
run timeout 20 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" export "$id" --out "$T/fifo"
wait $reader
[ $RC -eq 0 ] && [ "$(cat "$T/fifo.got")" = "$want" ] && ok "export --out FIFO: the reader gets every line" || not_ok "export to a FIFO" "rc=$RC $ERR" "$(cat "$T/fifo.got")"
[ -p "$T/fifo" ] && ok "the FIFO is still a FIFO" || not_ok "FIFO replaced" "$(ls -l "$T/fifo")"

# A character device: a private copy of /dev/null first (root may make
# one), so code that replaces device nodes cannot damage the machine's;
# the real /dev/null is tried only when the copy survived.
if mknod "$T/null" c 1 3 2>/dev/null; then
	run pr export "$id" --out "$T/null"
	[ $RC -eq 0 ] && [ -c "$T/null" ] && ok "export --out a character device writes into it and leaves it a device" || not_ok "private null device" "rc=$RC $ERR" "$(ls -l "$T/null")"
	run pr diff --base "id=$id" --target 'service=web,release=v2' --out "$T/null"
	[ $RC -eq 0 ] && [ -c "$T/null" ] && ok "diff --out a character device leaves it a device" || not_ok "diff to a device" "rc=$RC $ERR"
fi
if [ ! -e "$T/null" ] || [ -c "$T/null" ]; then
	run pr export "$id" --out /dev/null
	[ $RC -eq 0 ] && [ -c /dev/null ] && ok "export --out /dev/null: /dev/null is still a character device (uid $(id -u))" || not_ok "/dev/null" "rc=$RC $ERR" "$(ls -l /dev/null)"
	run pr report --service web --release v2 --format md --out /dev/null
	[ $RC -eq 0 ] && [ -c /dev/null ] && ok "report --out /dev/null leaves it a character device" || not_ok "report /dev/null" "rc=$RC $ERR"
fi

# A symbolic link is refused by name; the link and its target stay.
echo kept >"$T/target"
ln -s "$T/target" "$T/link"
links_replaced=0
for cmd in "export $id --format folded" "report --service web --release v2 --format md" \
	"diff --base id=$id --target service=web,release=v2"; do
	# shellcheck disable=SC2086
	run pr $cmd --out "$T/link"
	lines=$(printf '%s\n' "$ERR" | grep -c .)
	if [ $RC -eq 2 ] && [ "$lines" = 1 ] && [[ $ERR == *"'$T/link'"*"symbolic link"* ]]; then
		ok "${cmd%% *} --out a symlink: exit 2, one line naming it"
	else
		not_ok "${cmd%% *} --out a symlink" "rc=$RC lines=$lines" "$ERR"
	fi
	if [ -L "$T/link" ] && [ "$(cat "$T/target")" = kept ]; then
		ok "${cmd%% *}: the link and its target are untouched"
	else
		not_ok "${cmd%% *} link replaced" "$(ls -l "$T")"
		rm -f "$T/link" && ln -s "$T/target" "$T/link" && links_replaced=1
	fi
done

# /dev/stdout is this process' standard output: a pipe, then a file. It
# is a symbolic link in /dev: tried only when no link above was replaced.
if [ "$links_replaced" = 0 ]; then
	run pr export "$id" --out /dev/stdout
	[ $RC -eq 0 ] && [ "$OUT" = "$want" ] && ok "export --out /dev/stdout into a pipe" || not_ok "/dev/stdout pipe" "rc=$RC $ERR"
	pr export "$id" --out /dev/stdout >"$T/stdout.folded" 2>"$T/stdout.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(cat "$T/stdout.folded")" = "$want" ] && [ -f "$T/stdout.folded" ] && ok "export --out /dev/stdout redirected to a file" || not_ok "/dev/stdout file" "rc=$rc $(cat "$T/stdout.err")"
fi

# A directory is refused by name and stays a directory.
mkdir "$T/dir"
run pr export "$id" --out "$T/dir"
[ $RC -eq 2 ] && [[ $ERR == *"'$T/dir': it is a directory"* ]] && [ -d "$T/dir" ] && ok "export --out a directory: exit 2, 'it is a directory'" || not_ok "directory" "rc=$RC $ERR"

# A new path and a regular file are written whole, as before.
run pr export "$id" --out "$T/new.folded"
[ $RC -eq 0 ] && [ "$(cat "$T/new.folded")" = "$want" ] && ok "export --out a new path" || not_ok "new path" "rc=$RC $ERR"
echo old >"$T/old.md"
run pr report --service web --release v2 --format md --out "$T/old.md"
[ $RC -eq 0 ] && [ -f "$T/old.md" ] && ! grep -qx old "$T/old.md" && grep -q 'web' "$T/old.md" && ok "report --out an existing regular file replaces it" || not_ok "regular file" "rc=$RC $ERR"
[ -z "$(find "$T" -name '*.tmp.*')" ] && ok "no temporary file is left behind" || not_ok "temporary files" "$(find "$T" -name '*.tmp.*')"
finish
