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

# Which folders a folder may include, besides itself.
allowed() {
	case $1 in
	common) echo "" ;;
	stats) echo "" ;;
	pipeline) echo "common" ;;
	baselines) echo "common pipeline stats" ;;
	reports) echo "common pipeline stats" ;;
	jobs) echo "common pipeline stats baselines reports" ;;
	jobs/cli) echo "common pipeline stats baselines reports jobs" ;;
	esac
}
bad=""
for f in $(src common stats pipeline baselines reports jobs | grep -E '\.[ch]$'); do
	dir=$(dirname "$f")
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		idir=$(dirname "$inc")
		[ "$idir" = "$dir" ] && continue
		case " $(allowed "$dir") " in *" $idir "*) continue ;; esac
		bad="$bad $f->$inc"
	done
done
[ -z "$bad" ] && ok "include arrows point one way between folders" || not_ok "arrows up" "$bad"

# Modules (a .c and its .h are one) and the modules each includes; tsort
# fails on a circle.
for f in $(src common stats pipeline baselines reports jobs | grep -E '\.[ch]$'); do
	from=${f%.*}
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		to=${inc%.*}
		[ "$to" = "$from" ] || echo "$from $to"
	done
	echo "$from $from"
done >"$T/edges"
if tsort "$T/edges" >/dev/null 2>"$T/tsort.err"; then
	ok "no two modules include each other, directly or round a circle"
else
	not_ok "include cycle" "$(head -n 8 "$T/tsort.err")"
fi

long=$(for f in $(src '*.c' '*.h'); do
	expand -t 8 "$f" | awk -v f="$f" 'length($0) > 100 { printf "%s:%d\n", f, NR }'
done | head -n 20)
[ -z "$long" ] && ok "every line of C fits 100 columns" || not_ok "lines over 100 columns" $long
finish
