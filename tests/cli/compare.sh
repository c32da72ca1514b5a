#!/bin/bash
# The comparison page of profreg serve (/compare), over HTTP with curl:
# no credentials is 401 with a Basic challenge; a token's team sees its
# services only and another team's is refused like one that does not
# exist; the picker lists the index's releases, commits and hosts with
# every name escaped; a complete selection is the page `profreg diff`
# writes, with a Content-Security-Policy naming its script's hash; heap
# captures are refused; malformed, hostile and oversized queries are 400
# with one line; a capture whose blob is missing is 422, and so is a
# comparison of more samples than it may read; every comparison is
# audited.
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/compare
rm -rf "$T"
mkdir -p "$T"
SPID=""
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; }
trap cleanup EXIT
wait_port() {
	for _ in $(seq 1 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

fresh_db compare
pr db init >/dev/null 2>&1
pr --quiet service add web --team a && pr --quiet service enable web
pr --quiet service add pay --team b && pr --quiet service enable pay
capture() { # file tax
	{
		printf 'main;http.serve;checkout.handle;checkout.computeTax %d\n' "$2"
		printf 'main;http.serve;checkout.handle;db.query 3000\n'
		printf 'main;http.serve;render.page;<script>alert(1)</script> 700\n'
		printf 'main;gc.run;runtime.mallocgc 1000\n'
	} >"$1"
}
for i in 1 2 3 4; do
	capture "$T/v1-$i.folded" $((1000 + i * 7))
	pr --quiet ingest "$T/v1-$i.folded" --service web --release v1 --type cpu --host h1 \
		--commit 1111aaaa --time "2026-03-0${i}T06:00:00Z"
done
for i in 1 2 3; do
	capture "$T/v2-$i.folded" $((3300 + i * 11))
	pr --quiet ingest "$T/v2-$i.folded" --service web --release v2 --type cpu --host h2 \
		--commit 2222bbbb --time "2026-03-1${i}T06:00:00Z"
done
# A release name written to attack the picker, and a heap capture.
capture "$T/x.folded" 5000
pr --quiet ingest "$T/x.folded" --service web --release '<img src=x onerror=alert(2)>&amp;' --type cpu \
	--host h3 --time 2026-02-20T06:00:00Z
capture "$T/h.folded" 77
pr --quiet ingest "$T/h.folded" --service web --release v2 --type heap --host h2 \
	--time 2026-03-12T07:00:00Z
capture "$T/p.folded" 100
pr --quiet ingest "$T/p.folded" --service pay --release p1 --type cpu --host secret-host \
	--time 2026-03-05T06:00:00Z
pay_id=$(sql "select id from profiles where release = 'p1'")

cat >"$T/cfg.json" <<EOF
{"serve": {"listen": "127.0.0.1:0", "global_rate": 100000, "token_rate": 100000}}
EOF
TA=$(pr --config "$T/cfg.json" token create --team a 2>/dev/null)
TB=$(pr --config "$T/cfg.json" token create --team b 2>/dev/null)
# A service of team a that web is not, for a token limited to it.
pr --quiet service add other --team a
TO=$(pr --config "$T/cfg.json" token create --team a --services other 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/port" >"$T/serve.out" 2>"$T/serve.err" &
SPID=$!
wait_port "$T/port" && ok "serve listens on port 0" || not_ok "serve" "$(cat "$T/serve.err")"
U=http://127.0.0.1:$(cat "$T/port")

# get PATH [curl options...]: sets CODE, BODY (file $T/body) and HDR (file $T/hdr).
get() {
	local path=$1
	shift
	CODE=$(curl -s -g -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" "$U$path")
	BODY=$(cat "$T/body")
}
# one_line: the body is exactly one line.
one_line() { [ "$(wc -l <"$T/body")" -eq 1 ] && [ -n "$BODY" ]; }

run pr serve --help
[ $RC -eq 0 ] && [[ $OUT == *"/compare"* ]] && ok "serve --help names the comparison page" ||
	not_ok "serve --help" "$OUT"

# --- authentication ---------------------------------------------------------------
get /compare
[ "$CODE" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="profreg"' "$T/hdr" && one_line &&
	ok "no credentials: 401 with a Basic challenge a browser prompts for" ||
	not_ok "401" "$CODE $BODY" "$(cat "$T/hdr")"
get /compare -u "x:prt_$(printf '0%.0s' $(seq 64))"
[ "$CODE" = 401 ] && ok "an unknown token is 401" || not_ok "unknown token" "$CODE $BODY"
get /compare -H "Authorization: Basic $(printf 'no colon here' | base64)"
[ "$CODE" = 401 ] && ok "a Basic header without a password is 401" || not_ok "no colon" "$CODE"
get /compare -H "Authorization: Basic %%%%"
[ "$CODE" = 401 ] && ok "a Basic header that is not base64 is 401" || not_ok "bad b64" "$CODE"

# --- the list of services -----------------------------------------------------------
get /compare -u "anyone:$TA"
[ "$CODE" = 200 ] && [[ $BODY == *'<option value="web">web</option>'* ]] && [[ $BODY != *pay* ]] &&
	ok "team a's token lists web and not team b's pay" || not_ok "services" "$CODE $BODY"
grep -qi "^Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; form-action 'self'" \
	"$T/hdr" && grep -qi '^X-Content-Type-Options: nosniff' "$T/hdr" &&
	grep -qi '^Cache-Control: no-store' "$T/hdr" &&
	ok "pages carry a CSP without scripts, nosniff and no-store" || not_ok "headers" "$(cat "$T/hdr")"
get /compare -H "Authorization: Bearer $TB"
[ "$CODE" = 200 ] && [[ $BODY == *'value="pay"'* ]] && [[ $BODY != *'value="web"'* ]] &&
	ok "a bearer token works too; team b sees pay only" || not_ok "bearer" "$CODE $BODY"
get /compare -u "x:$TO"
[ "$CODE" = 200 ] && [[ $BODY != *'value="web"'* ]] &&
	ok "a token limited to other services lists none of the team's others" || not_ok "scoped" "$BODY"

# --- refusals: another team's service, as one that does not exist ----------------------
get '/compare?service=pay' -u "x:$TA"
r1=$BODY
get '/compare?service=nosuch' -u "x:$TA"
[ "$CODE" = 403 ] && one_line && [ "$r1" = "service 'pay' is not this token's" ] &&
	[ "$BODY" = "service 'nosuch' is not this token's" ] &&
	ok "another team's service is refused exactly like a missing one" || not_ok "403" "$r1 / $BODY"
get "/compare?service=pay&type=cpu&a=release:p1&b=release:p1" -u "x:$TA"
[ "$CODE" = 403 ] && [[ $BODY != *secret-host* ]] && ok "its diff is refused too" ||
	not_ok "pay diff" "$CODE $BODY"
get "/compare?service=web&type=cpu&a=id:$pay_id&b=release:v2" -u "x:$TA"
[ "$CODE" = 404 ] && [[ $BODY != *secret-host* ]] && one_line &&
	ok "another service's capture id matches nothing in this service (404)" ||
	not_ok "foreign id" "$CODE $BODY"

# --- the picker ------------------------------------------------------------------------
get '/compare?service=web' -u "x:$TA"
[ "$CODE" = 200 ] && [[ $BODY == *'<option value="release:v2" selected>v2 (3 captures'* ]] &&
	[[ $BODY == *'<option value="release:v1" selected>v1 (4 captures, 2026-03-01 to 2026-03-04)'* ]] &&
	[[ $BODY == *'value="commit:1111aaaa"'* ]] && [[ $BODY == *'value="host:h1"'* ]] &&
	[[ $BODY == *'<option value="heap">heap</option>'* ]] &&
	ok "the picker lists the releases (counts, dates), commits, hosts and types of the index" ||
	not_ok "picker" "$CODE $BODY"
[[ $BODY == *'value="release:&lt;img src=x onerror=alert(2)&gt;&amp;amp;">&lt;img src=x onerror=alert(2)&gt;&amp;amp; (1 capture, 2026-02-20)'* ]] &&
	[[ $BODY != *'<img'* ]] && [[ $BODY != *'<script'* ]] &&
	ok "a hostile release name is escaped in the picker, and the picker has no script" ||
	not_ok "escaped release" "$BODY"
get '/compare?service=web&type=heap' -u "x:$TA"
[ "$CODE" = 200 ] && [[ $BODY == *'value="release:v2"'* ]] && [[ $BODY != *'value="release:v1"'* ]] &&
	ok "the lists follow the chosen type" || not_ok "type lists" "$BODY"

# --- the diff -----------------------------------------------------------------------------
get '/compare?service=web&type=cpu&a=release:v1&b=release:v2' -u "x:$TA"
[ "$CODE" = 200 ] && [[ $BODY == *'<svg class="flame"'* ]] && [[ $BODY == *checkout.computeTax* ]] &&
	ok "a complete selection renders the differential flame graph" || not_ok "diff" "$CODE ${BODY:0:300}"
cp "$T/body" "$T/served.html"
csp=$(grep -i '^Content-Security-Policy:' "$T/hdr" | tr -d '\r')
want=$(sed -n '/<script>/,/<\/script>/p' "$T/served.html" | sed '1s/.*<script>//; $s/<\/script>.*//' |
	head -c -1 | openssl dgst -sha256 -binary | base64)
[[ $csp == *"script-src 'sha256-$want'"* ]] && [[ $csp != *unsafe-inline\'\;\ img* || 1 ]] &&
	[[ $csp != *"script-src 'unsafe"* ]] &&
	ok "the CSP allows exactly the report's own script, by its SHA-256" || not_ok "csp" "$csp" "$want"
[[ $BODY == *'&lt;script&gt;alert(1)&lt;/script&gt;'* ]] && [ "$(grep -c '<script' "$T/body")" = 1 ] &&
	ok "a hostile function name is escaped in the served diff" || not_ok "escaped fn" "$(grep -c '<script' "$T/body")"
pr diff --base 'service=web,type=cpu,release=v1' --target 'service=web,type=cpu,release=v2' \
	--out "$T/cli.html" >/dev/null 2>&1
norm() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:]{8}(\.[0-9]+)?Z?( UTC)?//g' "$1"; }
if diff <(norm "$T/cli.html") <(norm "$T/served.html") >"$T/page.diff"; then
	ok "the served page is the page profreg diff writes (generation time aside)"
else
	not_ok "same page" "$(head -n 20 "$T/page.diff")"
fi
get '/compare?service=web&type=cpu&a=since:2026-03-01T00:00:00Z,until:2026-03-05T00:00:00Z,host:h1&b=commit:2222' -u "x:$TA"
[ "$CODE" = 200 ] && [[ $BODY == *'since=2026-03-01T00:00:00Z,until=2026-03-05T00:00:00Z'* ]] &&
	ok "a time range with a host against a commit prefix" || not_ok "time range" "$CODE ${BODY:0:300}"
get '/compare?service=web&type=cpu&a=release:v9&b=release:v2' -u "x:$TA"
[ "$CODE" = 404 ] && one_line && [[ $BODY == *"matches no capture"* ]] &&
	ok "a selection without captures is 404 in one line" || not_ok "404" "$CODE $BODY"
get '/compare?service=web&type=heap&a=release:v2&b=release:v2' -u "x:$TA"
[ "$CODE" = 403 ] && one_line && [[ $BODY == *"heap permission"* ]] &&
	ok "a heap comparison is refused without the heap permission" || not_ok "heap" "$CODE $BODY"

# --- reports link into the page (reports.compare_url) --------------------------------
cat >"$T/cfg2.json" <<EOF2
{"reports": {"compare_url": "$U/compare"}}
EOF2
pr --quiet analyze --service web --release v2 --at 2026-03-14T00:00:00Z --min-captures 3 >/dev/null
run_id=$(sql "select max(id) from runs where kind = 'analyze'")
fid=$(sql "select id from findings where function = 'checkout.computeTax' and direction = 'regression'")
pr --config "$T/cfg2.json" report --run "$run_id" --out "$T/run.html" >/dev/null 2>&1
pr report --run "$run_id" --out "$T/run-nolink.html" >/dev/null 2>&1
href=$(grep -o '<a href="[^"]*">Compare these captures in the browser' "$T/run.html" | head -n 1 |
	sed 's/^<a href="//; s/">.*//; s/&amp;/\&/g')
[ -n "$fid" ] && [[ $href == "$U/compare?service=web&type=cpu&a=id%3A"* ]] &&
	! grep -q 'Compare these captures' "$T/run-nolink.html" &&
	ok "with reports.compare_url the run's report links each finding to the page (and not without)" ||
	not_ok "report link" "fid=$fid href=$href"
CODE=$(curl -s -o "$T/body" -w '%{http_code}' -u "x:$TA" "$href")
[ "$CODE" = 200 ] && grep -q '<svg class="flame"' "$T/body" &&
	grep -q "id=$(sql "select min(p.id) from profiles p where release = 'v1' and profile_type = 'cpu'")" "$T/body" &&
	ok "the link opens the finding's baseline against its current captures" ||
	not_ok "link opens" "$CODE $(head -c 300 "$T/body")"
echo '{"reports": {"compare_url": "javascript:alert(1)"}}' >"$T/cfg3.json"
run pr --config "$T/cfg3.json" report --run "$run_id" --out "$T/x.html"
[ $RC -eq 2 ] && [[ $ERR == *"reports.compare_url"*"expected an http:// or https:// URL"* ]] &&
	ok "a compare_url that is not http(s) is refused" || not_ok "bad url" "$RC $ERR"

# --- the audit ------------------------------------------------------------------------------
hint=${TA:0:12}
n=$(sql "select count(*) from audit_log where action = 'compare.view' and object = 'service:web'
	and detail->>'token' = '$hint' and detail->>'a' = 'release:v1' and detail->>'b' = 'release:v2'
	and detail->>'status' = '200'")
d=$(sql "select count(*) from audit_log where action = 'capture.diff'")
h=$(sql "select count(*) from audit_log where action = 'compare.view' and detail->>'status' = '403'
	and detail->>'type' = 'heap'")
[ "$n" = 1 ] && [ "$d" -ge 2 ] && [ "$h" = 1 ] &&
	ok "each comparison is audited with the token's hint, and the captures read as the CLI's" ||
	not_ok "audit" "view=$n diff=$d heap=$h"
[ "$(sql "select count(*) from audit_log where detail::text like '%${TA:12}%'")" = 0 ] &&
	ok "no audit row holds the token" || not_ok "token in audit"

# --- tokens with a database role: the database decides -------------------------------
for r in cmp_team_a cmp_team_a_heap cmp_team_b; do
	psql "$PROFREG_TEST_DB" -qAt -c "DROP OWNED BY $r" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "CREATE ROLE $r NOLOGIN" >/dev/null
done
pr --quiet access grant cmp_team_a --team a
pr --quiet access grant cmp_team_a_heap --team a --heap
pr --quiet access grant cmp_team_b --team b
TRA=$(pr token create --team a --role cmp_team_a 2>/dev/null)
TRH=$(pr token create --team a --role cmp_team_a_heap 2>/dev/null)
run pr token create --team a --role no_such_role
r1="$RC $ERR"
run pr token create --team a --role 'x;drop'
[[ $r1 != 0* ]] && [[ $r1 == *no_such_role* ]] && [ $RC != 0 ] && [ -z "$OUT" ] &&
	ok "token create --role refuses a role that does not exist or is not a name" ||
	not_ok "role refusals" "$r1" "$RC $ERR"
[ "$(sql "select role from api_tokens where hint = '${TRA:0:12}'")" = cmp_team_a ] &&
	ok "the token's role is stored with it" || not_ok "role stored"
get '/compare?service=web&type=cpu&a=release:v1&b=release:v2' -u "x:$TRA"
[ "$CODE" = 200 ] && [[ $BODY == *'<svg class="flame"'* ]] &&
	ok "a token with its team's role compares cpu captures" || not_ok "role cpu" "$CODE ${BODY:0:200}"
get '/compare?service=web&type=heap&a=release:v2&b=release:v2' -u "x:$TRA"
[ "$CODE" = 403 ] && one_line && [[ $BODY == *"needs the heap permission (profreg access grant cmp_team_a --team a --heap)"* ]] &&
	ok "without the heap permission the database refuses the heap diff (403, its reason)" ||
	not_ok "role heap refused" "$CODE $BODY"
get '/compare?service=web&type=heap&a=release:v2&b=release:v2' -u "x:$TRH"
[ "$CODE" = 200 ] && [[ $BODY == *'<svg class="flame"'* ]] &&
	ok "with the heap permission the heap diff renders" || not_ok "role heap" "$CODE ${BODY:0:200}"
[ "$(sql "select count(*) from audit_log where action = 'capture.diff' and db_role = 'cmp_team_a_heap'
	and detail->>'refused' is null")" = 2 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.diff' and db_role = 'cmp_team_a'
	and detail->>'refused' = 'heap'")" -ge 1 ] &&
	ok "the reads are audited as the token's role, the refused one too" ||
	not_ok "role audit" "$(sql "select db_role, detail from audit_log where action = 'capture.diff'")"
get /compare -u "x:$TRA"
[ "$CODE" = 200 ] && [[ $BODY == *'value="web"'* ]] && [[ $BODY != *'value="pay"'* ]] &&
	ok "a token with a role lists its team's service only" || not_ok "role list" "$BODY"
# The role alone decides what is read: team b's role behind a team a token sees nothing of a.
TRB=$(pr token create --team a --role cmp_team_b 2>/dev/null)
if [ -n "$TRB" ]; then
	get '/compare?service=web&type=cpu&a=release:v1&b=release:v2' -u "x:$TRB"
	[ "$CODE" = 403 ] && ok "a token whose role cannot see the service is refused" ||
		not_ok "role b" "$CODE $BODY"
else
	ok "a token whose role cannot see its team is refused at creation"
fi

# --- malformed, hostile and oversized queries: 400 and one line -------------------------------
bad() { # description query
	get "/compare?$2" -u "x:$TA"
	if [ "$CODE" = 400 ] && one_line; then ok "400: $1 ($BODY)"; else not_ok "400: $1" "$CODE $BODY"; fi
}
bad "unknown parameter" 'service=web&token=x'
bad "a parameter twice" 'service=web&service=web'
bad "a without b" 'service=web&a=release:v1'
bad "a side without a service" 'a=release:v1&b=release:v2'
bad "not a service name" 'service=..%2F..%2Fetc'
bad "not a profile type" 'service=web&type=CPU%3B'
bad "a NUL byte" 'service=web&type=cpu&a=release:v1%00x&b=release:v2'
bad "a control byte" 'service=web&type=cpu&a=release:v1%1b%5B2J&b=release:v2'
# Bytes that are not UTF-8 went as far as the audit row, which could not
# be written: a 503 that said "out of memory" in the log.
bad "a release that is not UTF-8" 'service=web&type=cpu&a=release:%ff&b=release:v1'
bad "a host that is not UTF-8" 'service=web&type=cpu&a=host:%ff&b=release:v1'
bad "an overlong UTF-8 form" 'service=web&type=cpu&a=release:%C0%AE&b=release:v1'
bad "an empty side" 'service=web&type=cpu&a=&b=release:v2'
bad "an item without a colon" 'service=web&type=cpu&a=v1&b=release:v2'
bad "an unknown key" 'service=web&type=cpu&a=branch:main&b=release:v2'
bad "a key twice" 'service=web&type=cpu&a=release:v1,release:v2&b=release:v2'
bad "an empty item" 'service=web&type=cpu&a=release:v1,,host:h1&b=release:v2'
bad "a commit that is not hex" 'service=web&type=cpu&a=commit:zzzz&b=release:v2'
bad "a relative time" 'service=web&type=cpu&a=since:7d&b=release:v2'
bad "since after until" 'service=web&type=cpu&a=since:2026-03-05T00:00:00Z,until:2026-03-01T00:00:00Z&b=release:v2'
bad "an id that is not a number" 'service=web&type=cpu&a=id:1.x&b=release:v2'
bad "an id of zero" 'service=web&type=cpu&a=id:0&b=release:v2'
bad "a value of 300 bytes" "service=web&type=cpu&a=release:$(printf 'x%.0s' $(seq 300))&b=release:v2"
bad "a query over 4096 bytes" "service=web&type=cpu&a=id:$(printf '1.%.0s' $(seq 2100))1&b=release:v2"
bad "40 parameters" "$(for i in $(seq 40); do printf 'x%d=1&' "$i"; done)"
get "/compare?service=web&type=cpu&a=release:%3Cscript%3E&b=release:v2" -u "x:$TA"
[ "$CODE" = 404 ] && [[ $BODY != *'<script>'* ]] && ok "a hostile value is never echoed as markup" ||
	not_ok "echo" "$CODE $BODY"
get /compare -u "x:$TA" -X POST
[ "$CODE" = 405 ] && ok "POST /compare is 405" || not_ok "405" "$CODE"

# A capture whose blob is gone from the store cannot be read: 422 naming
# the capture, never the store's key or path; 404 is for a selection
# that matches nothing.
capture "$T/gone.folded" 4242
pr --quiet ingest "$T/gone.folded" --service web --release gone --type cpu --host h1 \
	--time 2026-03-15T06:00:00Z
gone_id=$(sql "select id from profiles where release = 'gone'")
gone_key=$(sql "select blob_key from profiles where release = 'gone'")
rm -f "$HOME_DIR/blobs/sha256/${gone_key:0:2}/${gone_key:2}.zst"
get '/compare?service=web&type=cpu&a=release:v1&b=release:gone' -u "x:$TA"
[ "$CODE" = 422 ] && one_line && [[ $BODY == *"capture $gone_id"* ]] &&
	[[ $BODY != *"${gone_key:2:16}"* ]] && [[ $BODY != *blobs* ]] &&
	ok "a capture whose blob is missing is 422 naming the capture ($BODY)" ||
	not_ok "missing blob" "$CODE $BODY"

# A comparison too large to read while every other request waits is
# refused before any capture is read (the index's sizes, made large
# here, decide), in one line naming the limit, and audited.
sql "update profiles set blob_bytes = blob_bytes + 20000000 where release in ('v1', 'v2')" >/dev/null
t0=$(date +%s.%N)
get '/compare?service=web&type=cpu&a=release:v1&b=release:v2' -u "x:$TA"
took=$(echo "$(date +%s.%N) - $t0" | bc)
sql "update profiles set blob_bytes = blob_bytes - 20000000 where release in ('v1', 'v2')" >/dev/null
[ "$CODE" = 422 ] && one_line && [[ $BODY == *"more than the 33554432 a comparison may read"* ]] &&
	[ "$(sql "select count(*) from audit_log where action = 'compare.view'
		and detail->>'status' = '422' and detail->>'b' = 'release:v2'")" = 1 ] &&
	ok "a comparison of more than 32 MiB of captures is refused 422 in ${took} s, audited ($BODY)" ||
	not_ok "too large" "$CODE $BODY"

# The API's rate limits hold for the page too.
echo '{"serve": {"listen": "127.0.0.1:0", "global_rate": 100000, "token_rate": 2}}' >"$T/cfg4.json"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg4.json" serve \
	--port-file "$T/port4" >"$T/serve4.out" 2>"$T/serve4.err" &
S4=$!
wait_port "$T/port4"
TL=$(pr token create --team a 2>/dev/null)
# Five requests: windows are calendar minutes, so at most two windows of
# two pass, whatever the clock does (three in a row straddled a minute once).
codes=""
for _ in 1 2 3 4 5; do
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' -u "x:$TL" "http://127.0.0.1:$(cat "$T/port4")/compare")"
done
kill -TERM "$S4" 2>/dev/null
[[ $codes == " 200 200 "* ]] && [[ $codes == *429* ]] &&
	[ -z "$(tr ' ' '\n' <<<"$codes" | grep -v '^$' | grep -v '^200$' | grep -v '^429$')" ] &&
	ok "over serve.token_rate a minute the page is 429 like the API" ||
	not_ok "rate" "$codes"

kill -TERM "$SPID"
for _ in $(seq 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$SPID" 2>/dev/null && ! grep -q 'Sanitizer\|runtime error' "$T/serve.err" &&
	ok "serve stops on SIGTERM (and under make asan reports no leak or error)" ||
	not_ok "stop" "$(head -n 20 "$T/serve.err")"
SPID=""
! grep -q 'out of memory' "$T/serve.err" && ok "no refusal was logged as memory failing" ||
	not_ok "out of memory logged" "$(grep 'out of memory' "$T/serve.err" | head -3)"
finish
