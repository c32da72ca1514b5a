# Shared helpers for the CLI tests: TAP-style lines that tests/run counts.
# Each test script gets its own database on the test server and its own
# state directory, so scripts never see each other's data.

: "${PROFREG_BIN:?run through tests/run}"
: "${PROFREG_TEST_DB:?run through tests/run}"
: "${PROFREG_TEST_TMP:?run through tests/run}"
: "${PROFREG_TEST_DATA:?run through tests/run}"

TESTNUM=0
FAILS=0

ok() {
	TESTNUM=$((TESTNUM + 1))
	echo "ok $TESTNUM - $1"
}

not_ok() {
	TESTNUM=$((TESTNUM + 1))
	FAILS=$((FAILS + 1))
	echo "not ok $TESTNUM - $1"
	shift
	for line in "$@"; do echo "#   $line"; done
}

# check DESCRIPTION CONDITION...: ok when the command succeeds.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc" "failed: $*"; fi
}

# Fresh database NAME on the test server; sets DB and HOME_DIR, and P
# (the profreg command with both).
fresh_db() {
	psql "$PROFREG_TEST_DB" -qAt -c "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "CREATE DATABASE $1" >/dev/null
	DB="$PROFREG_TEST_DB dbname=$1"
	HOME_DIR=$PROFREG_TEST_TMP/home-$1
	rm -rf "$HOME_DIR"
	mkdir -p "$HOME_DIR"
}

pr() {
	"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" "$@"
}

# run CMD...: sets OUT, ERR and RC.
run() {
	OUT=$("$@" 2>"$PROFREG_TEST_TMP/stderr.$$")
	RC=$?
	ERR=$(cat "$PROFREG_TEST_TMP/stderr.$$")
}

sql() {
	psql "$DB" -qAt -c "$1"
}

finish() {
	echo "# $TESTNUM tests, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}
