#!/bin/bash
# The S3 blob store from the command line, against s3rver on loopback
# behind s3_sigcheck (tests/s3.sh), which checks every request's SigV4
# signature: ingest, read back (export), storage (bucket usage), retention
# and the orphan sweep over the bucket, credentials from the environment
# and a 0600 file (refused when readable by others, never shown), a wrong
# secret refused, virtual-host addressing, configuration checks, and
# `blobs migrate --to s3` stopped half-way and resumed. At the end, every
# request the bucket saw was signed as S3 computes it (but the wrong
# secret's, which were all refused).
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
. tests/s3.sh
fresh_db cli_s3
T=$PROFREG_TEST_TMP/cli_s3
rm -rf "$T" && mkdir -p "$T"
trap 's3_stop' EXIT
if ! s3_start "$T/s3"; then
	not_ok "s3rver and the signature-checking proxy start"
	finish
	exit 1
fi
ok "s3rver and the signature-checking proxy start"
ALL=$T/all-output.txt
: >"$ALL"
runp() { run "$@"; printf '%s\n%s\n' "$OUT" "$ERR" >>"$ALL"; }

(umask 077 && printf '%s\n' "$S3_SECRET" >"$T/secret")
export S3_TEST_KEY_ID=$S3_KEY_ID
config() { # config FILE STORE ENDPOINT ADDRESSING [SECRET_FILE]
	cat >"$1" <<JSON
{"blobs": {"store": "$2", "endpoint": "$3", "bucket": "$S3_BUCKET", "prefix": "fleet/prod",
           "region": "$S3_REGION", "addressing": "$4",
           "access_key_id_env": "S3_TEST_KEY_ID", "secret_access_key_file": "${5:-$T/secret}"}}
JSON
}
config "$T/s3.json" s3 "$S3_ENDPOINT" path
P() { pr --config "$T/s3.json" "$@"; }
objects() { find "$S3_DATA/$S3_BUCKET/fleet/prod/sha256" -name '*._S3rver_object' 2>/dev/null | wc -l; }
object_of_key() { echo "$S3_DATA/$S3_BUCKET/fleet/prod/sha256/${1:0:2}/${1:2}.zst._S3rver_object"; }
object_of() { object_of_key "$(sql "select blob_key from profiles where id=$1")"; }

pr --quiet db init && P --quiet service add checkout && P --quiet service enable checkout
for i in 1 2 3; do
	printf 'main;serve;handle 50\nmain;serve;encode%s 30\nmain;gc 20\n' "$i" >"$T/c$i.folded"
done
runp P ingest "$T/c1.folded" "$T/c2.folded" --service checkout --release v1
[ $RC -eq 0 ] && [ "$(objects)" = 2 ] && [ ! -e "$HOME_DIR/blobs/sha256" ] &&
	ok "ingest stores each capture as an object under the prefix, nothing locally" ||
	not_ok "ingest into S3" "rc=$RC objects=$(objects) $OUT $ERR"
id1=$(sql "select min(id) from profiles")
[ -f "$(object_of "$id1")" ] && ok "the object key is PREFIX/sha256/ab/cdef....zst" || not_ok "object layout" "$(object_of "$id1")"
runp P ingest "$T/c1.folded" --service checkout --release v1
[ $RC -eq 0 ] && grep -q "already stored as capture $id1" <<<"$OUT$ERR" && [ "$(objects)" = 2 ] &&
	ok "the same bytes again: already stored, no second object" || not_ok "re-ingest" "rc=$RC $OUT $ERR"
runp P export "$id1" --format folded --out "$T/back.folded"
[ $RC -eq 0 ] && grep -q "main;serve;encode1 30" "$T/back.folded" && ok "export reads the blob back from the bucket" ||
	not_ok "export from S3" "rc=$RC $ERR"

# A damaged object is refused on read, naming the blob.
obj=$(object_of "$id1")
cp "$obj" "$T/obj.bak"
printf 'garbage' >"$obj"
runp P export "$id1" --format folded --out "$T/bad.folded"
key1=$(sql "select blob_key from profiles where id=$id1")
[ $RC -ne 0 ] && grep -q "$key1" <<<"$ERR" && grep -q "corrupt" <<<"$ERR" && ok "a damaged object is refused on read, naming its key" ||
	not_ok "damaged object" "rc=$RC $ERR"
# The same bytes for another service find the object there: it is read
# back and checked before a capture is made to rest on it (a store that
# cannot be written over is trusted no more than the local one).
P --quiet service add billing && P --quiet service enable billing
runp P ingest "$T/c1.folded" --service billing --release v1
[ $RC -eq 3 ] && grep -q "blob '$key1' is in s3://$S3_BUCKET/fleet/prod/ but does not read back as these bytes" <<<"$ERR" &&
	[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id where s.name = 'billing'")" = 0 ] &&
	ok "an ingest whose blob is there but damaged is refused, no capture made on it" ||
	not_ok "put onto a damaged object" "rc=$RC $OUT $ERR"
cp "$T/obj.bak" "$obj"
runp P ingest "$T/c1.folded" --service billing --release v1
[ $RC -eq 0 ] && [ "$(objects)" = 2 ] &&
	ok "once the object is whole again, the same bytes are a capture of that service, no new object" ||
	not_ok "put onto a whole object" "rc=$RC objects=$(objects) $OUT $ERR"

# storage: the bucket's objects and what no capture keeps.
runp P storage --json
objs=$(jq -r '.bucket.objects' <<<"$OUT")
store=$(jq -r '.bucket.store' <<<"$OUT")
[ $RC -eq 0 ] && [ "$objs" = 2 ] && [ "$store" = "s3://$S3_BUCKET/fleet/prod/" ] && [ "$(jq -r '.disk' <<<"$OUT")" = null ] &&
	[ "$(jq -r '.bucket.bytes' <<<"$OUT")" = "$(jq -r '.total.blob_bytes' <<<"$OUT")" ] &&
	ok "storage reports the bucket's objects and bytes" || not_ok "storage --json" "rc=$RC $OUT $ERR"
runp P storage
[ $RC -eq 0 ] && grep -q "in the bucket (s3://$S3_BUCKET/fleet/prod/): 2 objects" <<<"$OUT" &&
	ok "storage prints the bucket usage" || not_ok "storage text" "$OUT"

# Retention over the bucket: an expired capture's blob goes, an orphan
# older than the grace period goes, a kept blob stays.
runp P ingest "$T/c3.folded" --service checkout --release v0 --time 2026-01-01T00:00:00Z
old=$(sql "select max(id) from profiles")
oldobj=$(object_of "$old")
printf 'main;orphan 1\n' >"$T/orphan.folded"
runp P ingest "$T/orphan.folded" --service checkout --release v1
orph=$(sql "select max(id) from profiles")
orphobj=$(object_of "$orph")
sql "delete from profiles where id=$orph" >/dev/null
touch -d '2 days ago' "$orphobj"
runp P retention --json --at 2026-06-01T00:00:00Z
[ $RC -eq 0 ] && [ ! -e "$oldobj" ] && [ ! -e "$orphobj" ] && [ -f "$(object_of "$id1")" ] &&
	[ "$(jq -r '.orphans_deleted' <<<"$OUT")" = 1 ] && [ "$(jq -r '.blobs_deleted' <<<"$OUT")" -ge 1 ] &&
	ok "retention deletes an expired capture's object and an old orphan found by listing" ||
	not_ok "retention over S3" "rc=$RC $OUT $ERR"

# Credentials: a secret file others can read is refused, naming it; a
# missing variable too; neither shows the secret.
config "$T/loose.json" s3 "$S3_ENDPOINT" path "$T/loose-secret"
(umask 022 && printf '%s\n' "$S3_SECRET" >"$T/loose-secret")
runp pr --config "$T/loose.json" export "$id1" --format folded --out "$T/x.folded"
[ $RC -ne 0 ] && grep -q "loose-secret" <<<"$ERR" && grep -q "chmod 600" <<<"$ERR" &&
	ok "a secret file readable by others is refused" || not_ok "loose secret file" "rc=$RC $ERR"
S3_TEST_KEY_ID='' runp P export "$id1" --format folded --out "$T/x.folded"
[ $RC -ne 0 ] && grep -q "S3_TEST_KEY_ID" <<<"$ERR" && ok "an unset key id variable is refused, naming it" ||
	not_ok "unset key id" "rc=$RC $ERR"

# A wrong secret: refused by the server's signature check, not shown; nor
# are the key id and the signature, which the refusal quotes back.
read -r total_before bad_before < <(s3_counts)
(umask 077 && printf 'wrong-secret-value\n' >"$T/wrong")
config "$T/wrong.json" s3 "$S3_ENDPOINT" path "$T/wrong"
runp pr --config "$T/wrong.json" export "$id1" --format folded --out "$T/x.folded"
read -r total_after bad_after < <(s3_counts)
[ $RC -eq 3 ] && grep -q "HTTP 403 (SignatureDoesNotMatch" <<<"$ERR" && ! grep -q "wrong-secret-value" <<<"$ERR" &&
	! grep -q -e "$S3_KEY_ID" -e "Signature=" <<<"$ERR" && [ $((bad_after - bad_before)) -ge 1 ] && [ $((bad_after - bad_before)) = $((total_after - total_before)) ] &&
	ok "a wrong secret is refused by the signature check (exit 3), and not shown" ||
	not_ok "wrong secret" "rc=$RC $ERR bad=$((bad_after - bad_before)) total=$((total_after - total_before))"
wrong_bad=$((bad_after - bad_before))

# Virtual-host addressing: BUCKET.s3.localhost:PORT.
config "$T/vhost.json" s3 "$S3_VHOST_ENDPOINT" virtual
runp pr --config "$T/vhost.json" export "$id1" --format folded --out "$T/vh.folded"
[ $RC -eq 0 ] && cmp -s "$T/vh.folded" "$T/back.folded" && ok "virtual-host addressing reads the same blob" ||
	not_ok "virtual host" "rc=$RC $ERR"

# Configuration checks, before anything is sent.
cat >"$T/bad1.json" <<JSON
{"blobs": {"store": "s3", "endpoint": "$S3_ENDPOINT", "region": "$S3_REGION"}}
JSON
runp pr config check "$T/bad1.json"
[ $RC -eq 2 ] && grep -q "blobs.bucket: required" <<<"$ERR" && ok "config check: an S3 store without a bucket" || not_ok "missing bucket" "rc=$RC $ERR"
cat >"$T/bad2.json" <<'JSON'
{"blobs": {"store": "s3", "endpoint": "http://192.0.2.1:9000", "bucket": "b-1", "region": "us-east-1"}}
JSON
runp pr config check "$T/bad2.json"
[ $RC -eq 2 ] && grep -q "blobs.endpoint: expected an https:// URL" <<<"$ERR" && ok "config check: plain http only to loopback" || not_ok "cleartext endpoint" "rc=$RC $ERR"
cat >"$T/bad3.json" <<'JSON'
{"blobs": {"store": "s3", "endpoint": "https://s3.example", "bucket": "Bad_Bucket", "region": "us-east-1",
           "secret_access_key_env": "A", "secret_access_key_file": "/f"}}
JSON
runp pr config check "$T/bad3.json"
[ $RC -eq 2 ] && grep -q "not both" <<<"$ERR" && ok "config check: a secret from a variable or a file, not both" || not_ok "both secret sources" "rc=$RC $ERR"
sed -i 's/"secret_access_key_env": "A", //' "$T/bad3.json"
runp pr config check "$T/bad3.json"
[ $RC -eq 2 ] && grep -q "Bad_Bucket" <<<"$ERR" && ok "config check: a bucket name S3 refuses" || not_ok "bad bucket" "rc=$RC $ERR"

# A DELETE that reached the store but got no answer may be carried out
# later (the proxy holds it until SIGUSR1): retention fails, and an
# ingest of the same bytes in that time is refused rather than point a
# row at an object about to go. Once the delete can no longer land, the
# bytes are stored again, whole.
printf 'main;late 7\n' >"$T/late.folded"
runp P ingest "$T/late.folded" --service checkout --release v1
late=$(sql "select max(id) from profiles")
lkey=$(sql "select blob_key from profiles where id=$late")
lobj=$(object_of "$late")
sql "delete from profiles where id=$late" >/dev/null
touch -d '2 days ago' "$lobj"
s3_proxy_restart --hold-deletes 1
config "$T/s3.json" s3 "$S3_ENDPOINT" path
runp P retention --json --at 2026-06-01T00:00:00Z
[ $RC -eq 3 ] && [ -e "$lobj" ] && grep -q "$lkey" <<<"$ERR" &&
	[ "$(sql "select count(*) from blob_deletes where blob_key = '$lkey' and until > now() + interval '14 minutes'")" = 1 ] &&
	ok "a delete without an answer fails retention (exit 3) and is recorded for as long as it may land" ||
	not_ok "unanswered delete" "rc=$RC $ERR $(sql "select * from blob_deletes")"
runp P ingest "$T/late.folded" --service checkout --release v1
[ $RC -eq 3 ] && grep -q "blob '$lkey' in s3://.*may still land until" <<<"$ERR" &&
	[ "$(sql "select count(*) from profiles where blob_key = '$lkey'")" = 0 ] &&
	ok "an ingest of the same bytes meanwhile is refused (exit 3), naming the blob and until when" ||
	not_ok "ingest beside a delete in doubt" "rc=$RC $OUT $ERR"
kill -USR1 "$S3_PROXY_PID"
# Each held DELETE is logged once it is carried out and answered.
held=$(grep -c '"why":"held"' "$S3_LOG")
for _ in $(seq 1 200); do
	[ "$(grep -c '"why":"released"' "$S3_LOG")" -ge "$held" ] && break
	sleep 0.1
done
s3_proxy_restart
config "$T/s3.json" s3 "$S3_ENDPOINT" path
runp P blobs check
[ ! -e "$lobj" ] && grep -q '"why":"released"' "$S3_LOG" && [ $RC -eq 0 ] &&
	ok "the held delete lands later, and no capture lost its blob (blobs check)" ||
	not_ok "late delete" "rc=$RC $OUT $ERR $(tail -3 "$S3_LOG")"
sql "update blob_deletes set until = now() - interval '1 second'" >/dev/null
runp P ingest "$T/late.folded" --service checkout --release v1
late=$(sql "select id from profiles where blob_key = '$lkey'")
runp P export "$late" --format folded --out "$T/late-back.folded"
[ $RC -eq 0 ] && [ -e "$(object_of "$late")" ] && grep -q 'main;late 7' "$T/late-back.folded" &&
	ok "once the delete cannot land any more, the bytes are stored again and read back" ||
	not_ok "stored after the doubt" "rc=$RC $ERR"
# A DELETE whose first try got no answer and whose second was answered:
# the first may still land, so the record stays until it runs out, and
# the same bytes are refused until then, answered or not.
sql "delete from profiles where id=$late" >/dev/null
touch -d '2 days ago' "$(object_of_key "$lkey")"
s3_proxy_restart --hold-deletes 2
config "$T/s3.json" s3 "$S3_ENDPOINT" path
runp P retention --json --at 2026-06-01T00:00:00Z
[ $RC -eq 0 ] && [ "$(jq -r '.orphans_deleted' <<<"$OUT")" = 1 ] && [ ! -e "$(object_of_key "$lkey")" ] &&
	[ "$(sql "select count(*) from blob_deletes where blob_key = '$lkey' and until > now()")" = 1 ] &&
	ok "a delete answered on its second try keeps its record: the first may still land" ||
	not_ok "answered on a retry" "rc=$RC $OUT $ERR $(sql "select * from blob_deletes")"
runp P ingest "$T/late.folded" --service checkout --release v1
[ $RC -eq 3 ] && grep -q "may still land until" <<<"$ERR" && ok "and the same bytes are refused meanwhile" ||
	not_ok "ingest after a retried delete" "rc=$RC $ERR"
held=$(grep -c '"why":"held"' "$S3_LOG")
kill -USR1 "$S3_PROXY_PID"
for _ in $(seq 1 200); do
	[ "$(grep -c '"why":"released"' "$S3_LOG")" -ge "$held" ] && break
	sleep 0.1
done
sql "update blob_deletes set until = now() - interval '1 second'" >/dev/null
runp P ingest "$T/late.folded" --service checkout --release v1
late=$(sql "select id from profiles where blob_key = '$lkey'")
runp P blobs check
[ $RC -eq 0 ] && [ -n "$late" ] && [ -e "$(object_of_key "$lkey")" ] &&
	ok "once it can no longer land, the bytes are stored again and nothing is missing" ||
	not_ok "after the retried delete" "rc=$RC $OUT $ERR"
s3_proxy_restart
config "$T/s3.json" s3 "$S3_ENDPOINT" path

# blobs migrate --to s3: a local store, copied while blobs.store is still
# local; the bucket goes away after 3 puts; run again, it resumes.
fresh_db cli_s3_migrate
L=$T/local.json
pr --quiet db init && pr --quiet service add pay && pr --quiet service enable pay
for i in 1 2 3 4 5 6; do
	printf 'main;pay;step%s 10\nmain;idle 5\n' "$i" >"$T/m$i.folded"
	pr --quiet ingest "$T/m$i.folded" --service pay --release r1 >/dev/null
done
config "$L" local "$S3_ENDPOINT" path
sed -i 's|"fleet/prod"|"migrated"|' "$L"
mobjects() { find "$S3_DATA/$S3_BUCKET/migrated/sha256" -name '*._S3rver_object' 2>/dev/null | wc -l; }
s3_proxy_restart --fail-puts-after 3
config "$L" local "$S3_ENDPOINT" path
sed -i 's|"fleet/prod"|"migrated"|' "$L"
runp pr --config "$L" blobs migrate --to s3
[ $RC -eq 3 ] && grep -q "stopped after" <<<"$ERR" && grep -q "run it again" <<<"$ERR" && [ "$(mobjects)" = 3 ] &&
	[ "$(grep -c . <<<"$ERR")" = 1 ] &&
	ok "a migration the bucket stops half-way exits 3 and says how far it got" || not_ok "interrupted migration" "rc=$RC objects=$(mobjects) $ERR"
[ "$(sql "select status from runs where kind='blobs-migrate' order by id desc limit 1")" = failed ] &&
	ok "the stopped migration is recorded as a failed run" || not_ok "failed run" "$(sql "select status from runs")"
s3_proxy_restart
config "$L" local "$S3_ENDPOINT" path
sed -i 's|"fleet/prod"|"migrated"|' "$L"
runp pr --config "$L" blobs migrate --to s3 --json
[ $RC -eq 0 ] && [ "$(jq -r .copied <<<"$OUT")" = 3 ] && [ "$(jq -r .present <<<"$OUT")" = 3 ] && [ "$(mobjects)" = 6 ] &&
	ok "run again, it resumes: 3 copied, 3 already there" || not_ok "resumed migration" "rc=$RC $OUT $ERR"
runp pr --config "$L" blobs migrate --to s3 --json
[ $RC -eq 0 ] && [ "$(jq -r .copied <<<"$OUT")" = 0 ] && [ "$(jq -r .present <<<"$OUT")" = 6 ] &&
	ok "a third run copies nothing" || not_ok "idempotent migration" "rc=$RC $OUT"
[ "$(sql "select count(*) from audit_log where action='blobs.migrate'")" -ge 3 ] && ok "every migration run is audited" || not_ok "migration audit"
# While the local store is the live one, its blobs stay: a capture read now needs them.
runp pr --config "$L" blobs migrate --to s3 --delete-local --json
left=$(find "$HOME_DIR/blobs/sha256" -name '*.zst' | wc -l)
[ $RC -eq 2 ] && grep -q 'needs blobs.store set to "s3"' <<<"$ERR" && [ "$left" = 6 ] &&
	[ "$(grep -c . <<<"$ERR")" = 1 ] && [[ $ERR != *"stopped after"* ]] &&
	ok "--delete-local is refused while the local store is still the one read" ||
	not_ok "delete local from the live store" "rc=$RC left=$left $OUT $ERR"
# Switch the store; reads come from the bucket; --delete-local empties the folder.
sed -i 's/"store": "local"/"store": "s3"/' "$L"
runp pr --config "$L" blobs migrate --to s3 --delete-local --json
left=$(find "$HOME_DIR/blobs/sha256" -name '*.zst' | wc -l)
[ $RC -eq 0 ] && [ "$(jq -r .deleted_local <<<"$OUT")" = 6 ] && [ "$left" = 0 ] &&
	ok "--delete-local removes each local blob once its copy reads back" || not_ok "delete local" "rc=$RC left=$left $OUT $ERR"
good=0
for id in $(sql "select id from profiles order by id"); do
	pr --config "$L" export "$id" --format folded --out "$T/m-back.folded" 2>>"$ALL" && good=$((good + 1))
done
[ "$good" = 6 ] && ok "every migrated capture reads back from the bucket" || not_ok "migrated reads" "good=$good"
runp pr --config "$L" blobs migrate --to local
[ $RC -eq 2 ] && ok "blobs migrate --to anything but s3 is a usage error" || not_ok "migrate --to local" "rc=$RC"

# A drop folder collected into a bucket that stops taking puts half-way:
# the captures stored before the stop are counted as stored.
fresh_db cli_s3_dropstop
mkdir -p "$T/drop"
for i in 1 2 3 4 5; do
	printf 'main;drop;step%s 10\nmain;idle 5\n' "$i" >"$T/drop/d$i.folded"
	printf '{"release": "r1", "time": "2026-11-30T0%s:00:00Z"}\n' "$i" >"$T/drop/d$i.folded.json"
done
pr --quiet db init && pr --quiet service add pay && pr --quiet service enable pay
s3_proxy_restart --fail-puts-after 3
config "$T/drop.json" s3 "$S3_ENDPOINT" path
jq --arg d "$T/drop" '. + {services: {pay: {source: {dir: $d}}}}' "$T/drop.json" >"$T/drop2.json"
runp pr --config "$T/drop2.json" collect --service pay --json
[ $RC -eq 3 ] && [ "$(sql "select count(*) from profiles")" = 3 ] &&
	[ "$(jq -r '.services.pay.stored' <<<"$OUT")" = 3 ] &&
	ok "a drop folder stopped by the bucket half-way counts the captures it stored" ||
	not_ok "stopped drop folder" "rc=$RC $(sql "select count(*) from profiles") $OUT $ERR"
s3_proxy_restart

# Every request the bucket saw was checked; only the wrong secret's failed.
read -r total bad < <(s3_counts)
[ "$total" -gt 30 ] && [ "$bad" = "$wrong_bad" ] &&
	ok "every one of $total requests was signed as S3 computes it (but the $wrong_bad with a wrong secret)" ||
	not_ok "signature check" "total=$total bad=$bad wrong=$wrong_bad" "$(grep '"ok":false' "$S3_LOG" | head -3)"
# The secret never shows: in any output, the request log, the servers' logs.
if grep -qF "$S3_SECRET" "$ALL" "$S3_LOG" "$T/s3/s3rver.out" "$T/s3/proxy.out"; then
	not_ok "the secret shows somewhere"
else
	ok "the secret key shows in no output or log"
fi
finish
