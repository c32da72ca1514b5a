#!/bin/bash
# An error is said once, in one line, with the README's exit code, and
# nothing ahead of it that did not happen: blobs check with a --service
# that is no service checked no blob; an empty --db is a usage error for
# the db commands that open no database too.
. "$(dirname "$0")/lib.sh"
fresh_db cli_errors_once
T=$PROFREG_TEST_TMP/cli_errors_once
rm -rf "$T" && mkdir -p "$T"
pr --quiet service add web && pr --quiet service enable web
printf 'main;a 60\nmain;b 40\n' >"$T/v1.folded"
pr --quiet ingest "$T/v1.folded" --service web --release v1

run pr blobs check --service nosuch
[ $RC -eq 4 ] && [ "$ERR" = "profreg blobs check: service 'nosuch' not found" ] &&
	ok "blobs check --service nosuch: the one real error, exit 4" ||
	not_ok "blobs check nosuch" "rc=$RC" "$ERR"
run pr blobs check --service web
[ $RC -eq 0 ] && [ -z "$ERR" ] && ok "blobs check --service web still checks" ||
	not_ok "blobs check web" "rc=$RC" "$ERR"
for sub in status start stop; do
	run "$PROFREG_BIN" --db '' --home "$HOME_DIR" db $sub
	[ $RC -eq 2 ] && [ "$ERR" = "profreg db $sub: '--db' is empty: give a connection string (an unset secret?)" ] &&
		[ -z "$OUT" ] && ok "db $sub --db '': usage error, exit 2" ||
		not_ok "db $sub --db ''" "rc=$RC" "$OUT" "$ERR"
done
finish
