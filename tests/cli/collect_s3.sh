#!/bin/bash
# Object-store drops (an s3_prefix source) against s3rver on loopback
# behind s3_sigcheck (tests/s3.sh), which checks every request's SigV4
# signature: two drops (a profile and its sidecar each) collected as
# captures with the sidecars' metadata; a second collect downloads and
# stores nothing; an object without its sidecar left waiting and
# reported; an object over the input limit refused before any download;
# a hostile key refused; a wrong secret refused by the signature check
# with nothing stored; a drop folder of another service collected in the
# same runs, unaffected; a dry run contacts no one.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
. tests/s3.sh
fresh_db collect_s3
T=$PROFREG_TEST_TMP/collect_s3
rm -rf "$T" && mkdir -p "$T/spool"
trap 's3_stop' EXIT
if ! s3_start "$T/s3"; then
	not_ok "s3rver and the signature-checking proxy start"
	finish
	exit 1
fi
ok "s3rver and the signature-checking proxy start"

(umask 077 && printf '%s\n' "$S3_SECRET" >"$T/secret" && printf 'wrong-s3-secret\n' >"$T/wrong")
export S3_TEST_KEY_ID=$S3_KEY_ID
DROPS=$S3_DATA/$S3_BUCKET/drops/checkout
mkdir -p "$DROPS/2026-11-30"
# drop KEY CONTENT [SIDECAR]: an object under the prefix, as s3rver keeps it.
drop() {
	printf '%s' "$2" >"$DROPS/$1._S3rver_object"
	[ -n "${3:-}" ] && printf '%s' "$3" >"$DROPS/$1.json._S3rver_object"
	return 0
}
side() { # side RELEASE HOST TIME
	printf '{"release": "%s", "host": "%s", "time": "%s", "type": "cpu"}' "$1" "$2" "$3"
}
drop c1.folded $'main;serve;handle 50\nmain;gc 20\n' "$(side v7 web-1 2026-11-30T01:00:00Z)"
drop 2026-11-30/c2.folded $'main;serve;encode 30\nmain;gc 20\n' "$(side v7 web-2 2026-11-30T02:00:00Z)"
drop nosidecar.folded $'main;lonely 5\n'
big=$(for i in $(seq 1 400); do printf 'main;serve;big%04d 1\n' "$i"; done)
drop big.folded "$big" "$(side v7 web-3 2026-11-30T03:00:00Z)"
drop 'evil\name.folded' $'main;evil 1\n' "$(side v7 web-4 2026-11-30T04:00:00Z)"
printf 'main;search 10\n' >"$T/spool/s1.folded"
side v3 search-1 2026-11-30T01:00:00Z >"$T/spool/s1.folded.json"

config() { # config FILE SECRET_FILE
	cat >"$1" <<JSON
{"limits": {"max_input_bytes": 4096},
 "services": {
  "checkout": {"sources": [{"type": "s3_prefix", "endpoint": "$S3_ENDPOINT",
                            "bucket": "$S3_BUCKET", "prefix": "drops/checkout",
                            "region": "$S3_REGION", "access_key_id_env": "S3_TEST_KEY_ID",
                            "secret_access_key_file": "$2", "timeout_ms": 20000}]},
  "search": {"sources": [{"type": "dir", "dir": "$T/spool"}]}}}
JSON
}
config "$T/cfg.json" "$T/secret"
config "$T/wrong.json" "$T/wrong"
P() { pr --config "$T/cfg.json" "$@"; }
pr --quiet db init
for s in checkout search; do P --quiet service add $s && P --quiet service enable $s; done
run P config check
[ $RC -eq 0 ] && ok "config check takes an s3_prefix source" || not_ok "config check" "rc=$RC $ERR"

# A dry run lists the source and asks the bucket nothing.
read -r before _ < <(s3_counts)
run P collect --dry-run --json
read -r after _ < <(s3_counts)
[ $RC -eq 0 ] && [ "$after" = "$before" ] &&
	[ "$(jq -r '[.plan[] | select(.source == "s3_prefix") | .target] | join(" ")' <<<"$OUT")" = "s3://$S3_BUCKET/drops/checkout" ] &&
	ok "a dry run plans the prefix and sends no request" || not_ok "dry run" "rc=$RC $before/$after $OUT $ERR"

# First collect: two drops stored, the rest reported.
: >"$S3_LOG"
run P collect --json
c=$(jq -c '.services.checkout' <<<"$OUT")
[ $RC -eq 3 ] && [ "$(jq -r .stored <<<"$c")" = 2 ] && [ "$(jq -r .services.search.stored <<<"$OUT")" = 1 ] &&
	[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'checkout'")" = 2 ] &&
	ok "two drops collected (exit 3: the bad objects are named), the drop folder of another service too" ||
	not_ok "first collect" "rc=$RC $OUT $ERR"
rows=$(sql "select p.release || ' ' || p.host || ' ' || to_char(p.captured_at at time zone 'UTC', 'HH24:MI')
            from profiles p join services s on s.id = p.service_id where s.name = 'checkout' order by p.host")
[ "$rows" = $'v7 web-1 01:00\nv7 web-2 02:00' ] &&
	ok "each capture carries its sidecar's release, host and time (a key in a sub-folder too)" ||
	not_ok "sidecar metadata" "$rows"
[ "$(jq -r .deferred <<<"$c")" = 1 ] &&
	jq -r '.waiting[].reason' <<<"$c" | grep -q "object 's3://$S3_BUCKET/drops/checkout/nosidecar.folded' has no sidecar 'nosidecar.folded.json' yet: not collected" &&
	grep -q "waiting: object 's3://$S3_BUCKET/drops/checkout/nosidecar.folded' has no sidecar" <<<"$(P collect --service checkout 2>/dev/null)" &&
	ok "an object without its sidecar is skipped and reported as waiting" || not_ok "missing sidecar" "$c"
jq -r '.failures[].reason' <<<"$c" | grep -q "cannot read 's3://$S3_BUCKET/drops/checkout/big.folded': [0-9]* bytes, over the input limit of 4096 bytes; not downloaded" &&
	! grep '"method":"GET"' "$S3_LOG" | grep -q 'big.folded"' &&
	ok "an object over the input limit is refused from its listed size, never downloaded" ||
	not_ok "oversized" "$c $(grep big "$S3_LOG")"
jq -r '.failures[].reason' <<<"$c" | grep -qF "object key 's3://$S3_BUCKET/drops/checkout/evil\\x5cname.folded' refused: a backslash" &&
	! grep '"method":"GET"' "$S3_LOG" | grep -q 'evil' &&
	[ "$(jq -r .failed <<<"$c")" = 2 ] &&
	ok "a hostile key is refused, shown escaped, and not fetched" || not_ok "hostile key" "$c"
all_ok=$(grep -c '"ok":true' "$S3_LOG")
[ "$all_ok" -ge 5 ] && ! grep -q '"ok":false' "$S3_LOG" &&
	ok "every request was signed as S3 checks it ($all_ok requests)" || not_ok "signatures" "$(cat "$S3_LOG")"

# Second collect: nothing new stored, nothing downloaded again.
: >"$S3_LOG"
n_before=$(sql "select count(*) from profiles")
run P collect --json
c=$(jq -c '.services.checkout' <<<"$OUT")
gets=$(grep -c '"method":"GET"' "$S3_LOG")
[ "$(jq -r .stored <<<"$c")" = 0 ] && [ "$(jq -r .already_collected <<<"$c")" = 2 ] &&
	[ "$(sql "select count(*) from profiles")" = "$n_before" ] && [ "$gets" = 1 ] &&
	[ "$(sql "select count(*) from collect_slots where source like 's3_prefix %' and outcome = 'stored'")" = 2 ] &&
	ok "a second collect stores nothing and downloads nothing (one listing)" ||
	not_ok "second collect" "rc=$RC gets=$gets $c $(cat "$S3_LOG")"

# The sidecar arrives: the waiting object is taken by the next run.
printf '%s' "$(side v7 web-5 2026-11-30T05:00:00Z)" >"$DROPS/nosidecar.folded.json._S3rver_object"
run P collect --json
[ "$(jq -r .services.checkout.stored <<<"$OUT")" = 1 ] && [ "$(jq -r .services.checkout.deferred <<<"$OUT")" = 0 ] &&
	ok "an object whose sidecar came later is collected by the next run" || not_ok "late sidecar" "$OUT"

# A wrong secret: the signature proxy refuses the listing; nothing stored;
# the drop folder of the other service is still collected.
drop c3.folded $'main;serve;third 7\n' "$(side v8 web-6 2026-11-30T06:00:00Z)"
printf 'main;search2 10\n' >"$T/spool/s2.folded"
side v3 search-2 2026-11-30T02:00:00Z >"$T/spool/s2.folded.json"
n_before=$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'checkout'")
run pr --config "$T/wrong.json" collect --json
reason=$(jq -r '.services.checkout.failures[0].reason' <<<"$OUT")
[ $RC -eq 3 ] && [[ $reason == *"cannot list 's3://$S3_BUCKET/drops/checkout/': HTTP 403 (SignatureDoesNotMatch"* ]] &&
	[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'checkout'")" = "$n_before" ] &&
	[ "$(jq -r .services.search.stored <<<"$OUT")" = 1 ] && ! grep -q 'wrong-s3-secret' <<<"$OUT$ERR" &&
	! grep -q -e "$S3_KEY_ID" -e "Signature=" <<<"$OUT$ERR" &&
	[ "$(sql "select count(*) from runs where detail::text like '%$S3_KEY_ID%'")" = 0 ] &&
	ok "a wrong secret is refused by the signature check: one line, nothing stored, the other source collected; the key id the refusal quotes is not shown or stored" ||
	not_ok "wrong secret" "rc=$RC $OUT $ERR"
run P collect --json
[ "$(jq -r .services.checkout.stored <<<"$OUT")" = 1 ] && ok "with the right secret again, the new drop is collected" ||
	not_ok "after the wrong secret" "$OUT"
# A refused key whose shown form is cut (200 bytes) inside a 2-byte letter
# is still listed among the failures, the letter's lone first byte as '?'.
dirname=a$(printf 'é%.0s' $(seq 100))
mkdir -p "$DROPS/$dirname"
drop "$dirname/evil\\x.folded" $'main;evil 1\n' "$(side v7 web-7 2026-11-30T07:00:00Z)"
run P collect --json
reasons=$(jq -r '.services.checkout.failures[].reason' <<<"$OUT")
[ $RC -eq 3 ] && grep -qF "object key 's3://$S3_BUCKET/drops/checkout/a$(printf 'é%.0s' $(seq 99))?' refused: a backslash" <<<"$reasons" &&
	[ "$(jq -r '.services.checkout.failures | length' <<<"$OUT")" = "$(jq -r .services.checkout.failed <<<"$OUT")" ] &&
	ok "a refused key cut inside a letter is still named among the failures" ||
	not_ok "key cut inside a letter" "rc=$RC $OUT $ERR"

# A listing that never ends (a broken or hostile peer: every page truncated,
# new keys and a new continuation token each time) stops at the collection
# budget: one line naming the prefix, nothing stored, the other source collected.
s3_proxy_restart --list-endless 1
config "$T/endless-base.json" "$T/secret"
jq '.collect.budget_s = 2' "$T/endless-base.json" >"$T/endless.json"
printf 'main;search3 10\n' >"$T/spool/s3.folded"
side v3 search-3 2026-11-30T03:00:00Z >"$T/spool/s3.folded.json"
n_before=$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'checkout'")
t0=$(date +%s)
run timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/endless.json" collect --json
t1=$(date +%s)
reason=$(jq -r '.services.checkout.failures[0].reason' <<<"$OUT")
[ $RC -eq 3 ] && [ $((t1 - t0)) -lt 30 ] &&
	[[ $reason == *"cannot list 's3://$S3_BUCKET/drops/checkout/': "*"the collection budget of 2 s ran out"* ]] &&
	[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'checkout'")" = "$n_before" ] &&
	[ "$(jq -r .services.search.stored <<<"$OUT")" = 1 ] &&
	ok "a listing that never ends stops at the collection budget: one line, nothing stored" ||
	not_ok "endless listing" "rc=$RC $((t1 - t0)) s $reason $ERR"

# The budget holds for a slow server too: pages that list nothing to take
# (keys outside the prefix), 0.3 s each, stop at it, not after 100 pages;
# and objects that are slow to read are taken until it runs out, the rest
# counted as not collected, each try of a request cut to the time left.
s3_proxy_restart --list-endless 2 --delay-ms 300
config "$T/endless-base.json" "$T/secret"
jq '.collect.budget_s = 2' "$T/endless-base.json" >"$T/endless.json"
t0=$(date +%s)
run timeout 120 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/endless.json" collect --json
t1=$(date +%s)
reason=$(jq -r '.services.checkout.failures[0].reason' <<<"$OUT")
[ $RC -eq 3 ] && [ $((t1 - t0)) -lt 10 ] && [[ $reason == *"the collection budget of 2 s ran out"* ]] &&
	ok "slow pages that list nothing stop at the budget ($((t1 - t0)) s for 2 s)" ||
	not_ok "slow empty pages" "rc=$RC $((t1 - t0)) s $reason $ERR"
s3_proxy_restart --delay-ms 700
config "$T/endless-base.json" "$T/secret"
jq '.collect.budget_s = 2' "$T/endless-base.json" >"$T/slow.json"
for i in 1 2 3 4 5 6; do
	drop "slow$i.folded" "main;slow$i 10"$'\n' "$(side v7 "slow-$i" "2026-11-30T0$i:30:00Z")"
done
t0=$(date +%s)
run timeout 120 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/slow.json" collect --json
t1=$(date +%s)
reasons=$(jq -r '.services.checkout.failures[].reason' <<<"$OUT")
stored=$(sql "select count(*) from profiles where host like 'slow-%'")
[ $RC -eq 3 ] && [ $((t1 - t0)) -lt 8 ] && [ "$stored" -lt 6 ] &&
	grep -qE "[0-9]+ objects not collected: the collection budget of 2 s ran out" <<<"$reasons" &&
	ok "objects slow to read are taken until the budget runs out ($((t1 - t0)) s for 2 s), the rest named" ||
	not_ok "slow objects" "rc=$RC $((t1 - t0)) s stored=$stored $reasons"
finish
