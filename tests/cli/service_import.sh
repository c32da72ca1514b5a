#!/bin/bash
# Registering many services at once: `service add` with several names and
# `service import` of a JSON Lines catalogue or the configuration's
# services, each in one transaction. Every malformed or hostile catalogue
# is refused with one line naming the file and the line, and nothing is
# written.
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_service_import
rm -rf "$T" && mkdir -p "$T"
fresh_db service_import
pr --quiet db init >/dev/null 2>&1 || pr db init
count() { sql "select count(*) from services"; }

# ---- several names ----------------------------------------------------------
run pr service add a1 a2 a3 --team pay
[ $RC -eq 0 ] && [ "$(sql "select string_agg(name || ':' || team, ',' order by name)
	from services")" = "a1:pay,a2:pay,a3:pay" ] &&
	[ "$(grep -c "^added service" <<<"$OUT")" = 3 ] &&
	ok "service add takes several names" || not_ok "add several" "rc=$RC" "$OUT" "$ERR"
run pr service add a3 a4 --team other
[ $RC -eq 4 ] && [[ $ERR == *"service 'a3' already exists with team 'pay', not 'other'"* ]] &&
	[ "$(count)" = 3 ] &&
	ok "a conflicting team refuses the whole add: nothing written" ||
	not_ok "add conflict" "rc=$RC" "$ERR"
run pr service add a3 a5 --team pay
[ $RC -eq 0 ] && [[ $OUT == *"service 'a3' already exists (disabled); nothing changed"* ]] &&
	[[ $OUT == *"added service 'a5'"* ]] &&
	ok "existing services with the same team are kept" ||
	not_ok "add existing" "rc=$RC" "$OUT"
run pr service add good 'bad name'
[ $RC -eq 2 ] && [[ $ERR == *"invalid service name 'bad name'"* ]] && [ "$(sql "select count(*) from services where name = 'good'")" = 0 ] &&
	ok "a bad name among several writes none of them" || not_ok "add bad name" "rc=$RC" "$ERR"
run pr service add a3 'bad!' --team other
[ $RC -eq 4 ] && [[ $ERR == *"service 'a3' already exists with team 'pay', not 'other'"* ]] &&
	ok "errors come in the order of the names: a conflict before a later bad name" ||
	not_ok "error order" "rc=$RC" "$ERR"

# ---- a catalogue file ---------------------------------------------------------
for i in $(seq -w 1 300); do
	echo "{\"name\": \"svc-$i\", \"team\": \"team-$((10#$i % 7))\"}"
done >"$T/cat.jsonl"
echo '' >>"$T/cat.jsonl"
echo '{"name": "svc-none", "team": null}' >>"$T/cat.jsonl"
echo '{"name": "a1", "team": "pay"}' >>"$T/cat.jsonl"
run pr service import "$T/cat.jsonl"
[ $RC -eq 0 ] && [ "$(count)" = 305 ] &&
	[ "$OUT" = "302 services: 301 added (disabled), 1 already registered" ] &&
	[ "$(sql "select team from services where name = 'svc-010'")" = "team-3" ] &&
	[ "$(sql "select team is null from services where name = 'svc-none'")" = "t" ] &&
	ok "a catalogue of 302 services is registered in one call" ||
	not_ok "import" "rc=$RC" "$OUT" "$ERR"
[ "$(sql "select count(*) from audit_log where action = 'service.add'")" = 305 ] &&
	ok "each new service is audited" || not_ok "import audit"
run pr service import "$T/cat.jsonl" --json
[ $RC -eq 0 ] && [[ $OUT == *'"added": 0'* ]] && [[ $OUT == *'"unchanged": 302'* ]] &&
	ok "importing again changes nothing" || not_ok "import again" "rc=$RC" "$OUT"

# bad NAME CONTENT LINE EXPECTED: the import fails with one line naming the line
bad() {
	local name=$1 content=$2 line=$3 want=$4 before
	before=$(count)
	printf '%s' "$content" >"$T/$name.jsonl"
	run pr service import "$T/$name.jsonl"
	if [ $RC -eq 4 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
		[[ $ERR == "profreg service import: line $line of '$T/$name.jsonl': $want"* ]] &&
		[ "$(count)" = "$before" ]; then
		ok "refused, nothing written: $name"
	else
		not_ok "bad catalogue $name" "rc=$RC" "$ERR" "count $(count) was $before"
	fi
}
ok_line='{"name": "new-1"}'
bad notjson "$ok_line"$'\nnot json\n' 2 "invalid JSON"
bad array "$ok_line"$'\n["x"]\n' 2 "not a JSON object"
bad noname "$ok_line"$'\n{"team": "t"}\n' 2 'missing "name"'
bad unknown "$ok_line"$'\n{"name": "x", "owner": "t"}\n' 2 'unknown key "owner"'
bad number "$ok_line"$'\n{"name": 5}\n' 2 '"name" must be a string'
bad badname "$ok_line"$'\n{"name": "../../etc"}\n' 2 "service name '../../etc' is not"
bad longname "$ok_line"$'\n{"name": "'"$(printf 'x%.0s' $(seq 200))"$'"}\n' 2 "service name"
bad ctrlteam "$ok_line"$'\n{"name": "x", "team": "a\\u001b[31m"}\n' 2 "the team of service 'x'"
bad nul "$ok_line"$'\n{"name": "x\\u0000y"}\n' 2 "invalid JSON"
bad twice "$ok_line"$'\n{"name": "new-1", "team": "t"}\n' 2 \
	"service 'new-1' is listed twice with different teams"
bad dupkey "$ok_line"$'\n{"name": "x", "name": "y"}\n' 2 "invalid JSON"
bad badutf8 "$ok_line"$'\n{"name": "x", "team": "\xff"}\n' 2 "invalid JSON"
# The parser's reason would quote the token it stopped at: the file's own bytes.
bad token "$ok_line"$'\n{"name": "x" 4111111111111111}\n' 2 "invalid JSON"
[[ $ERR != *4111111111111111* ]] && ok "an invalid line's message does not quote its bytes" ||
	not_ok "token quoted" "$ERR"
long=$(head -c 70000 /dev/zero | tr '\0' t)
bad longline "$ok_line"$'\n{"name": "x", "team": "'"$long"$'"}\n' 2 "longer than 65536 bytes"
run pr service import "$T/missing.jsonl"
[ $RC -eq 4 ] && [[ $ERR == *"'$T/missing.jsonl': No such file or directory"* ]] &&
	[ "$(grep -c . <<<"$ERR")" = 1 ] && ok "a missing file is named" ||
	not_ok "missing file" "rc=$RC" "$ERR"
head -c 70000000 /dev/zero >"$T/huge.jsonl"
run pr service import "$T/huge.jsonl"
[ $RC -ne 0 ] && [[ $ERR == *"'$T/huge.jsonl'"* ]] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	ok "a file over 64 MiB is refused before it is parsed" || not_ok "huge" "rc=$RC" "$ERR"
rm -f "$T/huge.jsonl"
# 200,000 services (4 MB) and a bad last line: each name was compared with
# all before it, over a minute of CPU before the refusal.
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "{\"name\": \"svc-%07d\"}\n", i
	print "not json" }' >"$T/many.jsonl"
before=$(count)
# Bounded by CPU time (20 s), not the clock: under AddressSanitizer on a
# loaded machine the read takes seconds of waiting; the quadratic one took
# a minute of CPU. The clock's bound (120 s) only keeps the test finite.
run bash -c 'ulimit -t 20 && exec timeout 120 "$@"' sh \
	"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" service import "$T/many.jsonl"
[ $RC -eq 4 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"line 200001 of '$T/many.jsonl': invalid JSON"* ]] &&
	[ "$(count)" = "$before" ] &&
	ok "a catalogue of 200,000 services is read within 20 s of CPU, its bad line refused" ||
	not_ok "many services" "rc=$RC" "$ERR"
rm -f "$T/many.jsonl"
# A conflict with the database is found inside the transaction: nothing is written.
before=$(count)
printf '{"name": "z1"}\n{"name": "a1", "team": "other"}\n' >"$T/conflict.jsonl"
run pr service import "$T/conflict.jsonl"
[ $RC -eq 4 ] && [ "$(count)" = "$before" ] &&
	[ "$(sql "select count(*) from services where name = 'z1'")" = 0 ] &&
	ok "a team conflict rolls the whole catalogue back" || not_ok "conflict" "rc=$RC" "$ERR"

# ---- the configuration's services ---------------------------------------------
cat >"$T/conf.json" <<'JSON'
{"services": {"cfg-a": {"team": "pay"}, "cfg-b": {}}}
JSON
run pr --config "$T/conf.json" service import --from-config
[ $RC -eq 0 ] && [ "$(sql "select string_agg(name || ':' || coalesce(team, '-'), ','
	order by name) from services where name like 'cfg-%'")" = "cfg-a:pay,cfg-b:-" ] &&
	ok "the configuration's services are imported with their teams" ||
	not_ok "from config" "rc=$RC" "$ERR"
run pr service import
[ $RC -eq 2 ] && ok "FILE or --from-config is required" || not_ok "usage" "rc=$RC"
run pr service import "$T/cat.jsonl" --from-config
[ $RC -eq 2 ] && ok "not both" || not_ok "usage both" "rc=$RC"
# ---- registering and enabling in one step --------------------------------------
printf '{"name": "en-1", "team": "pay"}\n{"name": "en-2"}\n{"name": "a1", "team": "pay"}\n' \
	>"$T/enable.jsonl"
run pr service import "$T/enable.jsonl" --enable
want="3 services: 2 added (enabled), 1 already registered; every one enabled"
[ $RC -eq 0 ] && [ "$OUT" = "$want" ] &&
	[ "$(sql "select string_agg(name || ':' || enabled, ',' order by name) from services
		where name in ('en-1', 'en-2', 'a1')")" = "a1:true,en-1:true,en-2:true" ] &&
	[ "$(sql "select count(*) from audit_log where action = 'service.enable'
		and object in ('service:en-1', 'service:en-2', 'service:a1')")" = 3 ] &&
	ok "import --enable registers and enables the catalogue, each audited" ||
	not_ok "import --enable" "rc=$RC" "$OUT" "$ERR"
before=$(sql "select count(*) from services where enabled")
printf '{"name": "en-3"}\n{"name": "a1", "team": "other"}\n' >"$T/enable-bad.jsonl"
run pr service import "$T/enable-bad.jsonl" --enable
[ $RC -eq 4 ] && [ "$(sql "select count(*) from services where name = 'en-3'")" = 0 ] &&
	[ "$(sql "select count(*) from services where enabled")" = "$before" ] &&
	ok "import --enable with a conflict enables nothing" || not_ok "enable conflict" "rc=$RC" "$ERR"
run pr service add en-4 en-1 --team pay --enable
[ $RC -eq 0 ] && [[ $OUT == *"added service 'en-4' (enabled)"* ]] &&
	[[ $OUT == *"service 'en-1' already exists (enabled); enabled it"* ]] &&
	[ "$(sql "select enabled from services where name = 'en-4'")" = t ] &&
	ok "service add --enable adds enabled services" || not_ok "add --enable" "rc=$RC" "$OUT" "$ERR"

# ---- enabling and disabling several at once ---------------------------------
enabled() { sql "select string_agg(name || ':' || enabled, ',' order by name) from services
	where name in ('cfg-a', 'cfg-b')"; }
run pr service enable cfg-a cfg-b
[ $RC -eq 0 ] && [ "$(enabled)" = "cfg-a:true,cfg-b:true" ] &&
	[ "$(sql "select count(*) from audit_log where action = 'service.enable'
		and object in ('service:cfg-a', 'service:cfg-b')")" = 2 ] &&
	ok "service enable takes several names, each audited" || not_ok "enable many" "rc=$RC" "$ERR"
run pr service disable cfg-a no-such-service cfg-b
[ $RC -eq 4 ] && [ "$(enabled)" = "cfg-a:true,cfg-b:true" ] &&
	[[ $ERR == *"'no-such-service'"* ]] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	ok "an unknown name among several changes none of them, and is named" ||
	not_ok "disable with unknown" "rc=$RC" "$ERR" "$(enabled)"
run pr service disable cfg-b cfg-b
[ $RC -eq 0 ] && [ "$(enabled)" = "cfg-a:true,cfg-b:false" ] &&
	[ "$(sql "select string_agg(detail->>'was_enabled', ',') from audit_log
		where action = 'service.disable' and object = 'service:cfg-b'")" = true ] &&
	ok "a name given twice is changed and audited once, with what it was" ||
	not_ok "disable twice" "rc=$RC" "$ERR" "$(enabled)"
run pr service disable
[ $RC -eq 2 ] && ok "enable/disable need a name" || not_ok "usage none" "rc=$RC"
# ---- teams from the command line and the configuration ------------------------
# The rule a catalogue's teams follow holds for --team and the config file too.
long_team=$(printf 'x%.0s' $(seq 129))
for team in $'pay\e[31m' $'pay\tops' "$long_team"; do
	run pr service add team-bad --team "$team"
	[ $RC -eq 2 ] && [[ $ERR == *"invalid team"* ]] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
		[ "$(sql "select count(*) from services where name = 'team-bad'")" = 0 ] &&
		ok "service add refuses the team $(printf %q "${team:0:12}")" ||
		not_ok "add bad team" "rc=$RC" "$ERR"
done
run pr service set cfg-a --team $'ops\n'
[ $RC -eq 2 ] && [[ $ERR == *"invalid team"* ]] &&
	[ "$(sql "select team from services where name = 'cfg-a'")" = pay ] &&
	ok "service set refuses a team with a control character, changing nothing" ||
	not_ok "set bad team" "rc=$RC" "$ERR"
printf '{"services": {"cfg-t": {"team": "pay\\u001b[31m"}}}' >"$T/badteam.json"
run pr --config "$T/badteam.json" config check
[ $RC -eq 2 ] && [[ $ERR == *"services.cfg-t.team: not a valid team"* ]] &&
	ok "config check refuses a team that service add would refuse" ||
	not_ok "config bad team" "rc=$RC" "$ERR"
run pr --config "$T/badteam.json" service add cfg-t
[ $RC -eq 2 ] && [ "$(sql "select count(*) from services where name = 'cfg-t'")" = 0 ] &&
	ok "service add does not take a bad team from the config file" ||
	not_ok "add team from config" "rc=$RC" "$ERR"
# A file that is not JSON: the line, never the bytes jansson stopped near (a secret).
printf '{"services": {"cfg-p": {"team": "hunter2SECRETpass\001"}}}' >"$T/syntax.json"
run pr --config "$T/syntax.json" config check
[ $RC -eq 2 ] && [[ $ERR == *"line 1: control character 0x1"* ]] && [[ $ERR != *hunter2* ]] &&
	ok "a config syntax error says where and why, without quoting the file" ||
	not_ok "config syntax" "rc=$RC" "$ERR"
# A catalogue saved by a Windows editor: its byte order mark is skipped.
printf '\xef\xbb\xbf{"name": "bom-a"}\n{"name": "bom-b"}\n' >"$T/bom.jsonl"
run pr service import "$T/bom.jsonl"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from services where name like 'bom-%'")" = 2 ] &&
	ok "service import skips a byte order mark" ||
	not_ok "import bom" "rc=$RC" "$ERR"
finish
