#!/bin/bash
# The layout holds: the command line holds no SQL and no libpq; the
# folders' include arrows point one way (jobs/cli -> jobs -> baselines,
# reports -> pipeline -> common; stats on its own); no two modules
# include each other, directly or round a circle; lines fit 100 columns.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
T=$PROFREG_TEST_TMP/cli_structure
rm -rf "$T" && mkdir -p "$T"

src() { git ls-files "$@" 2>/dev/null || find "$@" -type f; }

sql=$(grep -nE '"[[:space:]]*(select|insert into|update [a-z_]+ set|delete from|with [a-z_]+ as) ' \
	jobs/cli/*.c 2>/dev/null)
libpq=$(grep -ln 'libpq-fe.h\|db_exec\|PGresult' jobs/cli/*.c jobs/cli/*.h 2>/dev/null)
[ -z "$sql" ] && ok "no command holds SQL" || not_ok "SQL in the command line" "$sql"
[ -z "$libpq" ] && ok "no command includes libpq or runs a statement" || not_ok "libpq in the command line" "$libpq"

# Every quoted include of the layout's folders, as "FILE INCLUDE" lines
# (one awk for all files: a process per include made this test slow).
src common stats pipeline baselines reports jobs | grep -E '\.[ch]$' >"$T/files"
xargs awk 'FNR == 1 { print FILENAME, FILENAME }
	/^#include "[^"]*"/ { split($0, q, "\""); print FILENAME, q[2] }' <"$T/files" >"$T/includes"

# Which folders a folder may include, besides itself.
bad=$(awk 'BEGIN {
		ok["pipeline"] = " common "
		ok["baselines"] = " common pipeline stats "
		ok["reports"] = " common pipeline stats "
		ok["jobs"] = " common pipeline stats baselines reports "
		ok["jobs/cli"] = " common pipeline stats baselines reports jobs "
	}
	function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
	$1 != $2 && dir($1) != dir($2) && index(ok[dir($1)], " " dir($2) " ") == 0 {
		printf " %s->%s", $1, $2
	}' "$T/includes")
[ -z "$bad" ] && ok "include arrows point one way between folders" || not_ok "arrows up" "$bad"

# Modules (a .c and its .h are one) and the modules each includes; tsort
# fails on a circle.
awk '{ from = $1; to = $2; sub(/\.[ch]$/, "", from); sub(/\.[ch]$/, "", to)
	if (from != to || $1 == $2) print from, to }' "$T/includes" >"$T/edges"
if tsort "$T/edges" >/dev/null 2>"$T/tsort.err"; then
	ok "no two modules include each other, directly or round a circle"
else
	not_ok "include cycle" "$(head -n 8 "$T/tsort.err")"
fi

# Columns as the editor shows them: a tab runs to the next multiple of 8.
long=$(src '*.c' '*.h' | xargs awk 'function cols(s, n, i, c) {
		n = 0
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			n = c == "\t" ? n - n % 8 + 8 : n + 1
		}
		return n
	}
	length($0) > 100 || (index($0, "\t") && cols($0) > 100) { printf "%s:%d\n", FILENAME, FNR }' |
	head -n 20)
[ -z "$long" ] && ok "every line of C fits 100 columns" || not_ok "lines over 100 columns" $long
finish
