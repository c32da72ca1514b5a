#!/bin/bash
# An error is said once, in one line, with the README's exit code, and
# nothing ahead of it that did not happen: blobs check with a --service
# that is no service checked no blob; an empty --db is a usage error for
# the db commands that open no database too, and so is a PROFREG_DB set
# but empty; service add and import make no cluster and no schema; tasks
# exits 0.
. "$(dirname "$0")/lib.sh"
fresh_db cli_errors_once
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_errors_once
rm -rf "$T" && mkdir -p "$T"
# A command that made a cluster where it must not leaves no server behind.
trap '[ -e "$T/fresh/pg" ] && "$PROFREG_BIN" --home "$T/fresh" db stop >/dev/null 2>&1' EXIT
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

# Only db init creates a cluster or a schema: service add and service
# import fail on a home without a cluster and on a database without a
# schema, leaving neither behind.
echo '{"name": "web2", "team": "t"}' >"$T/cat.jsonl"
for cmd in "service add web2 --team t" "service import $T/cat.jsonl"; do
	name=$(cut -d' ' -f1-2 <<<"$cmd")
	run "$PROFREG_BIN" --home "$T/fresh" $cmd
	[ $RC -eq 3 ] && [[ $ERR == "profreg $name: no database"* ]] && [ "$(wc -l <<<"$ERR")" = 1 ] &&
		[ ! -e "$T/fresh/pg" ] && ok "$name on a home without a cluster: no database, exit 3, no cluster made" ||
		not_ok "$cmd on a fresh home" "rc=$RC" "$ERR" "$(ls "$T/fresh" 2>&1)"
done
psql "$PROFREG_TEST_DB" -qAt -c "DROP DATABASE IF EXISTS cli_errors_once_empty" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "CREATE DATABASE cli_errors_once_empty" >/dev/null
for cmd in "service add web2 --team t" "service import $T/cat.jsonl"; do
	run "$PROFREG_BIN" --db "$PROFREG_TEST_DB dbname=cli_errors_once_empty" --home "$HOME_DIR" $cmd
	[ $RC -eq 3 ] && [[ $ERR == *"holds no profreg schema"* ]] &&
		[ "$(psql "$PROFREG_TEST_DB dbname=cli_errors_once_empty" -qAt -c "select count(*) from pg_tables where schemaname = 'public'")" = 0 ] &&
		ok "$(cut -d' ' -f1-2 <<<"$cmd") on a database without a schema: exit 3, none made" ||
		not_ok "$cmd on an empty database" "rc=$RC" "$ERR"
done

# PROFREG_DB set but empty (an unset secret) is refused as an empty --db
# is, not taken for the private cluster.
OUT=$(PROFREG_DB= "$PROFREG_BIN" --home "$HOME_DIR" service list 2>"$T/err")
RC=$? ERR=$(cat "$T/err")
[ $RC -eq 2 ] && [ "$ERR" = "profreg service list: PROFREG_DB is set but empty: give a connection string, or unset it" ] &&
	[ -z "$OUT" ] && ok "PROFREG_DB set but empty: usage error, exit 2, one line" ||
	not_ok "empty PROFREG_DB" "rc=$RC" "$OUT" "$ERR"

run pr tasks
[ $RC -eq 0 ] && [ -z "$ERR" ] && [[ $OUT == *ID*RUN*SERVICE* ]] && ok "tasks lists and exits 0" ||
	not_ok "tasks" "rc=$RC" "$OUT" "$ERR"
finish
