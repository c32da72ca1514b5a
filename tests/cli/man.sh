#!/bin/bash
# The manual page profreg(1): written by `profreg help --man` from the same
# tables as --help, so every command and subcommand is in it with its
# options; it renders without warnings; `make install` puts it in
# share/man/man1.
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_man
rm -rf "$T" && mkdir -p "$T"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

run "$PROFREG_BIN" help --man
[ $RC -eq 0 ] && head -n 3 <<<"$OUT" | grep -q '^\.TH PROFREG 1' && ok "profreg help --man writes a roff page" || not_ok "man" "rc=$RC $ERR"
printf '%s\n' "$OUT" >"$T/profreg.1"
missing=
while read -r cmd _; do
	[ "$cmd" = help ] && continue
	grep -q "^\\.SS \"profreg $cmd\"" "$T/profreg.1" || missing="$missing $cmd"
done < <("$PROFREG_BIN" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
[ -z "$missing" ] && ok "every command of --help has its section" || not_ok "missing commands" "$missing"
# Each command's text is its --help, to the line (roff-escaped dashes aside).
want=$("$PROFREG_BIN" export --help)
got=$(sed -n '/^\.SS "profreg export"/,/^\.fi/p' "$T/profreg.1" | sed '1,2d;$d' | sed 's/^\\&//; s/\\e/\\/g')
[ -n "$want" ] && [ "$got" = "$want" ] && ok "a command's section is its --help text" || not_ok "export section" "$got"
grep -q '^\.SS "profreg service add"' "$T/profreg.1" && grep -q -- '--value WHAT' "$T/profreg.1" &&
	ok "subcommands and new options are in it" || not_ok "subcommands"
if command -v man >/dev/null 2>&1; then
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$T/profreg.1" 2>&1 >"$T/man.txt")
	[ -z "$warn" ] && grep -q 'profreg - find performance regressions' "$T/man.txt" && ok "man renders it without warnings" || not_ok "man warnings" "$warn"
fi
if [ -f "$ROOT/Makefile" ] && [ -x "$PROFREG_BIN" ]; then
	bin=$(dirname "$PROFREG_BIN")
	# The build the suite runs: nothing is compiled again, and the binary
	# under test is never replaced by another build of it.
	run make -s -C "$ROOT" install PREFIX="$T/prefix" BIN="$bin" BUILD="${PROFREG_BUILD:-$T/build}"
	[ $RC -eq 0 ] && cmp -s "$T/prefix/share/man/man1/profreg.1" "$T/profreg.1" && [ -x "$T/prefix/bin/profreg" ] &&
		ok "make install puts the page in share/man/man1" || not_ok "install" "rc=$RC $ERR"
fi
finish
