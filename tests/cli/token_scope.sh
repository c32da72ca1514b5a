#!/bin/bash
# What a token or a grant is for must exist and be a name: a token for a
# team without services, or limited to a service that is unknown or
# another team's, could do nothing, and was found out only when serve
# refused its first capture; a grant's team with control characters is
# refused as service add refuses it. Each refusal is one line naming the
# input, with the README's exit code.
. "$(dirname "$0")/lib.sh"
fresh_db cli_token_scope
pr db init >/dev/null 2>&1
pr --quiet service add pay --team ta
pr --quiet service add shop --team tb
pr --quiet service add loose
# A role that exists, so a grant is refused for its team alone.
R=cli_token_scope_r
psql "$PROFREG_TEST_DB" -qAt -c "DROP OWNED BY $R" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $R" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "CREATE ROLE $R LOGIN" >/dev/null

# one_line RC WANT_RC WORDS...: ERR is one line holding every word and RC is WANT_RC.
one_line() {
	local rc=$1 want=$2
	shift 2
	[ "$rc" = "$want" ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] || return 1
	for w in "$@"; do [[ $ERR == *"$w"* ]] || return 1; done
}
tokens() { sql "select count(*) from api_tokens"; }

run pr token create --team ta --services pay
[ $RC -eq 0 ] && [[ $OUT =~ ^prt_ ]] && ok "a token for a team's own service" ||
	not_ok "own service" "rc=$RC $ERR"
run pr token create --team nosuchteam
one_line $RC 4 "'nosuchteam'" "no services" && [ -z "$OUT" ] &&
	ok "a team no service has: exit 4, one line naming it" || not_ok "team" "rc=$RC $ERR"
run pr token create --team ta --services pay,nosuch
one_line $RC 4 "'nosuch'" "not found" && [ -z "$OUT" ] &&
	ok "an unknown service: exit 4, one line naming it" || not_ok "unknown" "rc=$RC $ERR"
run pr token create --team ta --services pay,shop
one_line $RC 2 "'shop'" "'tb'" && [ -z "$OUT" ] &&
	ok "another team's service: exit 2, one line naming it and its team" ||
	not_ok "other team" "rc=$RC $ERR"
run pr token create --team ta --services loose
one_line $RC 2 "'loose'" "no team" && ok "a service of no team: exit 2" ||
	not_ok "no team" "rc=$RC $ERR"
[ "$(tokens)" = 1 ] && ok "no token was made by a refused create" || not_ok "count $(tokens)"

run pr access grant $R --team $'ta\x1b]0;owned\x07'
one_line $RC 2 "invalid team" "control characters" && [[ $ERR != *$'\x1b'* ]] &&
	ok "a grant's team with control characters: exit 2, one escaped line" ||
	not_ok "grant team" "rc=$RC $ERR"
run pr access grant $R --team "$(printf 't%.0s' $(seq 129))"
one_line $RC 2 "invalid team" && ok "a grant's team over 128 bytes: exit 2" ||
	not_ok "grant long" "rc=$RC $ERR"
[ "$(sql "select count(*) from access_grants")" = 0 ] && ok "no grant was recorded" ||
	not_ok "grants"
run pr access grant $R --team ta
[ $RC -eq 0 ] && ok "a grant of a team name is still made" || not_ok "grant" "rc=$RC $ERR"
psql "$DB" -qAt -c "DELETE FROM access_grants" >/dev/null 2>&1
psql "$DB" -qAt -c "DROP OWNED BY $R" >/dev/null 2>&1
psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $R" >/dev/null 2>&1
finish
