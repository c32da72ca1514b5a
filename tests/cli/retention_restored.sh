#!/bin/bash
# The orphan sweep after the database was restored from an older backup
# while the blob store kept everything since: the blobs of the captures
# stored after the backup have no row any more. Past the grace period the
# sweep deleted them all (evidence of findings already paged among them),
# silently. An unreferenced blob put after the newest capture the
# database holds is kept, counted apart, and named once on stderr; one
# put before it (an ingest that died between blob and row) still goes.
# The sweep takes a hold on them, so they stay after a newer capture is
# stored, for as long as a capture lives.
. "$(dirname "$0")/lib.sh"
fresh_db cli_retention_restored
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_retention_restored
rm -rf "$T" && mkdir -p "$T"
pr --quiet service add svc && pr --quiet service enable svc

# capture NAME: a capture of a day ago, unique per NAME; prints its id.
capture() {
	printf 'main;a 50\nmain;%s 7\n' "$1" >"$T/$1.folded"
	pr --quiet ingest "$T/$1.folded" --service svc --release r1 \
		--time "$(date -u -d '1 day ago' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null || echo "ingest $1 failed" >&2
	sql "select max(id) from profiles"
}
blobfile() { echo "$HOME_DIR/blobs/sha256/${1:0:2}/${1:2}.zst"; }
key() { sql "select blob_key from profiles where id=$1"; }

kept=$(capture kept)
dead=$(capture dead)
after1=$(capture after1)
after2=$(capture after2)
kk=$(key "$kept") dk=$(key "$dead") a1=$(key "$after1") a2=$(key "$after2")

# The backup was taken 3 days ago: it holds `kept`, ingested then, and
# `dead`, whose ingest died 5 days ago between its blob and its row.
# `after1` and `after2` were stored since (a day ago): the restored
# database has no row for them, the store still has their blobs.
sql "update profiles set ingested_at = now() - interval '3 days' where id = $kept;
	delete from profiles where id in ($dead, $after1, $after2)" >/dev/null
touch -d '5 days ago' "$(blobfile "$dk")"
touch -d '1 day ago' "$(blobfile "$a1")" "$(blobfile "$a2")"

run pr retention --dry-run --json
[ $RC -eq 0 ] && [ "$(jq -r .orphans_kept_newer <<<"$OUT")" = 2 ] &&
	[ "$(jq -r .orphans_deleted <<<"$OUT")" = 1 ] && [ -f "$(blobfile "$dk")" ] &&
	[ "$(grep -c 'would keep 2 unreferenced blobs' <<<"$ERR")" = 1 ] &&
	ok "a dry run counts the newer orphans apart and says it would keep them" ||
	not_ok "dry run" "rc=$RC $OUT $ERR"

run pr retention --json
[ $RC -eq 0 ] && [ -f "$(blobfile "$a1")" ] && [ -f "$(blobfile "$a2")" ] &&
	ok "blobs put after the newest capture the database holds are kept" || not_ok "kept" "rc=$RC $OUT $ERR"
[ ! -f "$(blobfile "$dk")" ] && [ -f "$(blobfile "$kk")" ] && [ "$(jq -r .orphans_deleted <<<"$OUT")" = 1 ] &&
	ok "an orphan older than the newest capture is still swept" || not_ok "old orphan" "$OUT"
[ "$(jq -r .orphans_kept_newer <<<"$OUT")" = 2 ] && [ "$(jq -r .orphan_kept_bytes <<<"$OUT")" -gt 0 ] &&
	[ "$(jq -r .db_newest <<<"$OUT")" != null ] &&
	ok "the JSON counts them apart, with when the database last stored a capture" || not_ok "json" "$OUT"
[ "$(grep -c . <<<"$ERR")" = 1 ] && grep -q 'profreg retention: kept 2 unreferenced blobs' <<<"$ERR" &&
	grep -q 'restored from an older backup' <<<"$ERR" && grep -q 'profreg blobs check' <<<"$ERR" &&
	ok "one line on stderr says the database may be behind the store, and what to do" ||
	not_ok "message" "$ERR"
[ "$(sql "select detail->>'orphans_kept_newer' from runs where kind = 'retention' order by id desc limit 1")" = 2 ] &&
	ok "the run's record counts them" || not_ok "run record"

# Once a capture newer than them is stored (after a restore, the
# nightly's own collection stores one before its retention runs), the
# hold the sweep took keeps them, quietly; a dead ingest's blob put after
# the hold still goes.
capture later >/dev/null
printf 'main;a 50\nmain;deadlater 7\n' | zstd -q >"$T/deadlater.zst"
dl=$(sha256sum <<<"deadlater" | cut -c1-64)
mkdir -p "$(dirname "$(blobfile "$dl")")" && cp "$T/deadlater.zst" "$(blobfile "$dl")"
touch -d '7 hours ago' "$(blobfile "$dl")"
sql "update audit_log set detail = jsonb_set(detail, '{until_us}',
	to_jsonb((extract(epoch from now() - interval '8 hours') * 1000000)::bigint))
	where action = 'blobs_held'" >/dev/null
run pr retention --json
[ $RC -eq 0 ] && [ -f "$(blobfile "$a1")" ] && [ -f "$(blobfile "$a2")" ] &&
	[ "$(jq -r .orphans_kept_newer <<<"$OUT")" = 2 ] && [ "$(jq -r .orphans_newly_held <<<"$OUT")" = 0 ] &&
	[ -z "$ERR" ] && ok "a newer capture stored, the hold keeps them, and says nothing again" ||
	not_ok "held" "rc=$RC $OUT $ERR"
[ ! -f "$(blobfile "$dl")" ] && [ "$(jq -r .orphans_deleted <<<"$OUT")" = 1 ] &&
	ok "a dead ingest's blob put after the hold still goes" || not_ok "dead after hold" "$OUT"

# A hold older than a capture's life (summary_days) keeps nothing.
sql "update audit_log set at = now() - interval '91 days' where action = 'blobs_held'" >/dev/null
run pr retention --json
[ $RC -eq 0 ] && [ ! -f "$(blobfile "$a1")" ] && [ ! -f "$(blobfile "$a2")" ] &&
	[ "$(jq -r .orphans_deleted <<<"$OUT")" = 2 ] &&
	ok "past a capture's life the hold lifts and they go" || not_ok "hold lifts" "rc=$RC $OUT $ERR"

# A database that holds no capture at all keeps every orphan.
sql "delete from profiles" >/dev/null
touch -d '2 days ago' "$(blobfile "$kk")"
run pr retention --json
[ $RC -eq 0 ] && [ -f "$(blobfile "$kk")" ] && [ "$(jq -r .orphans_kept_newer <<<"$OUT")" -ge 1 ] &&
	[ "$(jq -r .db_newest <<<"$OUT")" = null ] && grep -q 'no capture or snapshot' <<<"$ERR" &&
	ok "with no capture in the database, no orphan is swept" || not_ok "empty" "rc=$RC $OUT $ERR"
finish
