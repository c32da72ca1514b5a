#!/bin/bash
# A password given in --db is wiped from the process's own arguments once
# the connection string is copied: /proc/PID/cmdline, which every local
# user can read, would show it for the whole life of serve, worker or
# nightly. Both forms of a connection string, --db VALUE and --db=VALUE;
# serve still connects with the password it copied.
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/db_cmdline
rm -rf "$T"
mkdir -p "$T"
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

fresh_db db_cmdline
pr db init >/dev/null 2>&1
cat >"$T/cfg.json" <<JSON
{"serve": {"listen": "127.0.0.1:0"}}
JSON

# serve_shows DB-ARGUMENT...: start serve with these arguments before
# the command, wait until it listens, and set CMDLINE to what
# /proc/PID/cmdline shows (NULs as spaces); stop it again.
serve_shows() {
	rm -f "$T/s.port"
	"$PROFREG_BIN" "$@" --home "$HOME_DIR" --config "$T/cfg.json" serve \
		--port-file "$T/s.port" >"$T/s.out" 2>"$T/s.err" &
	SPID=$!
	PIDS="$PIDS $SPID"
	for _ in $(seq 100); do [ -s "$T/s.port" ] && break; sleep 0.1; done
	CMDLINE=$(tr '\0' ' ' <"/proc/$SPID/cmdline" 2>/dev/null)
	LISTENS=$([ -s "$T/s.port" ] && echo yes)
	kill -TERM "$SPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
}

# The server trusts local connections: any password connects.
serve_shows --db "$DB password=hunter2db"
[ "$LISTENS" = yes ] && [[ $CMDLINE == *"dbname=db_cmdline password=*** "* ]] &&
	[[ $CMDLINE != *hunter2* ]] &&
	ok "a keyword password in --db is gone from /proc/PID/cmdline while serve runs" ||
	not_ok "keyword password in cmdline" "listens=$LISTENS" "$CMDLINE" "$(cat "$T/s.err")"

sock=$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<<"$PROFREG_TEST_DB")
serve_shows "--db=postgresql://postgres:hunter2uri@/db_cmdline?host=$sock&password=hunter2q"
[ "$LISTENS" = yes ] &&
	[[ $CMDLINE == *"--db=postgresql://postgres:***@/db_cmdline?host=$sock&password=*** "* ]] &&
	[[ $CMDLINE != *hunter2* ]] &&
	ok "a URI's passwords in --db=VALUE are gone from /proc/PID/cmdline" ||
	not_ok "URI password in cmdline" "listens=$LISTENS" "$CMDLINE" "$(cat "$T/s.err")"

# --db, --home and --config take one value each, before the command or
# after it: two values are a usage error, never the last one winning.
# The connection strings are not quoted back: they may hold a password.
run "$PROFREG_BIN" --home "$HOME_DIR" --db "$DB" service list --db "$DB password=hunter2two"
[ $RC -eq 2 ] && [ -z "$OUT" ] &&
	[ "$ERR" = "profreg service list: '--db' is given twice with two connection strings: give it once" ] &&
	ok "--db given twice with two values is a usage error that quotes neither" ||
	not_ok "--db twice" "rc=$RC $OUT $ERR"
run "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --home "$T/other" service list
[ $RC -eq 2 ] && [ -z "$OUT" ] &&
	[ "$ERR" = "profreg: '--home' is given twice ('$HOME_DIR' and '$T/other'): give it once" ] &&
	ok "--home given twice with two values is a usage error" || not_ok "--home twice" "rc=$RC $OUT $ERR"
run "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" service list --config "$T/x.json"
[ $RC -eq 2 ] && [ -z "$OUT" ] &&
	[ "$ERR" = "profreg service list: '--config' is given twice ('$T/cfg.json' and '$T/x.json'): give it once" ] &&
	ok "--config given twice with two values is a usage error" || not_ok "--config twice" "rc=$RC $OUT $ERR"
run "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" service list \
	--db "$DB" --home "$HOME_DIR" --config "$T/cfg.json"
[ $RC -eq 0 ] && ok "the same value twice is no error" || not_ok "same value twice" "rc=$RC $OUT $ERR"
run env PROFREG_HOME="$T/other" "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" service list
[ $RC -eq 0 ] && ok "--home beside PROFREG_HOME is no second value" ||
	not_ok "--home and PROFREG_HOME" "rc=$RC $OUT $ERR"
finish
