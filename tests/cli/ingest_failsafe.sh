#!/bin/bash
# Ingest when things go wrong: racing ingests of the same bytes, the
# database or the blob store failing mid-manifest, an oversized manifest
# line, sidecars checked like manifest lines, leftover temporary files
# counted by `profreg storage`.
. "$(dirname "$0")/lib.sh"
fresh_db cli_ingest_failsafe
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_ingest_failsafe
rm -rf "$T" && mkdir -p "$T"

# wait_for SQL VALUE SECONDS: poll until the query prints VALUE; fails
# after SECONDS.
wait_for() {
	local deadline=$(($(date +%s) + $3))
	while [ "$(sql "$1")" != "$2" ]; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

key_of() {
	sha256sum "$1" | cut -c1-64
}

pr --quiet service add s && pr --quiet service enable s

# ---- racing ingests of the same bytes --------------------------------------
# Every ingest looks the bytes up, finds nothing, and then waits for the
# blob key's lock, which this test holds (as retention would): when it
# lets go, all of them insert at once and exactly one wins the row.
N=6
printf 'main;race 7\n' >"$T/race.folded"
key=$(key_of "$T/race.folded")
waiting="select count(*) from pg_locks l join pg_database d on d.oid = l.database
	where d.datname = current_database() and l.locktype = 'advisory'
	and l.classid = 1886547815 and l.objid = (hashtext('$key')::bigint & 4294967295)"
mkfifo "$T/hold"
psql "$DB" -qAt <"$T/hold" >/dev/null 2>&1 &
holder=$!
exec 7>"$T/hold"
echo "select pg_advisory_lock(1886547815, hashtext('$key'));" >&7
if wait_for "$waiting and l.granted" 1 30; then
	pids=()
	for i in $(seq 1 $N); do
		(
			timeout 120 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest "$T/race.folded" \
				--service s --release v1 >"$T/race.$i.out" 2>"$T/race.$i.err"
			echo $? >"$T/race.$i.rc"
		) &
		pids+=($!)
	done
	wait_for "$waiting and not l.granted" $N 60 && queued=yes || queued=no
	echo "select pg_advisory_unlock(1886547815, hashtext('$key'));" >&7
	exec 7>&-
	wait "${pids[@]}"
	[ $queued = yes ] && ok "$N ingests of the same bytes are queued on the blob key at once" ||
		not_ok "race set-up" "$(sql "$waiting and not l.granted") waiting"
	id=$(sql "select id from profiles where blob_key = '$key'")
	[ "$(sql "select count(*) from profiles where blob_key = '$key'")" = 1 ] &&
		ok "racing ingests store one capture" || not_ok "race rows" "$(sql "select id from profiles")"
	zero=0 winners=0 losers=0
	for i in $(seq 1 $N); do
		[ "$(cat "$T/race.$i.rc")" = 0 ] && zero=$((zero + 1))
		grep -q "': stored as capture $id " "$T/race.$i.out" && winners=$((winners + 1))
		grep -q "': already stored as capture $id\$" "$T/race.$i.out" && losers=$((losers + 1))
	done
	[ $zero = $N ] && ok "every racing ingest exits 0" ||
		not_ok "race exit codes" "$zero of $N exited 0" "$(cat "$T"/race.*.err)"
	[ $winners = 1 ] && [ $losers = $((N - 1)) ] &&
		ok "the losers report the winner's capture ($id) as already stored" ||
		not_ok "race messages" "winners=$winners losers=$losers" "$(cat "$T"/race.*.out)"
else
	exec 7>&-
	not_ok "race set-up: the blob key lock was not taken"
fi
wait "$holder" 2>/dev/null

# ---- the database going away mid-manifest ---------------------------------
# A trigger ends the server session when line 4 inserts its capture, as a
# restart or a failover would: the manifest stops there and says how far
# it got; the bad line before it is reported as usual.
sql "create function failsafe_down() returns trigger language plpgsql as \$\$
	begin
		if new.release = 'v-down' then
			perform pg_terminate_backend(pg_backend_pid());
		end if;
		return new;
	end \$\$" >/dev/null
sql "create trigger failsafe_down before insert on profiles
	for each row execute function failsafe_down()" >/dev/null
mkdir -p "$T/down"
for f in a b c d e f; do printf 'main;%s 3\n' "$f" >"$T/down/$f.folded"; done
M=$T/down/m.jsonl
{
	echo '{"path": "a.folded", "service": "s", "release": "v2"}'
	echo 'not json'
	echo '{"path": "b.folded", "service": "s", "release": "v2"}'
	echo '{"path": "c.folded", "service": "s", "release": "v-down"}'
	echo '{"path": "d.folded", "service": "s", "release": "v2"}'
	echo ''
	echo '{"path": "e.folded", "service": "s", "release": "v2"}'
	echo '{"path": "f.folded", "service": "s", "release": "v2"}'
} >"$M"
run pr ingest --manifest "$M"
lines=$(printf '%s\n' "$ERR" | grep -c .)
[ $RC -eq 3 ] && ok "a manifest the database leaves exits 3" ||
	not_ok "db down exit" "rc=$RC" "$ERR"
[[ $ERR == *"line 2 of '$M': invalid JSON"* ]] &&
	ok "a bad line before it is still reported and skipped" || not_ok "bad line before the stop" "$ERR"
stop="stopped at line 4 of '$M': cannot ingest '$T/down/c.folded': database: "
left="; 2 ingested, 1 failed, 3 not tried"
[[ $ERR == *"$stop"*"$left" ]] && [ "$lines" = 2 ] &&
	ok "the manifest stops at the first database failure: the line, its file, what is left" ||
	not_ok "db down message" "lines=$lines" "$ERR"
[[ $OUT == *"2 stored, 0 already stored, 2 failed, 3 not tried"* ]] &&
	ok "the summary counts the lines not tried" || not_ok "db down summary" "$OUT"
sql "drop trigger failsafe_down on profiles" >/dev/null
[ "$(sql "select string_agg(release, ',' order by id) from profiles where release like 'v%'
	and release <> 'v1'")" = "v2,v2" ] && ok "the lines before it are stored, nothing after" ||
	not_ok "db down rows"

# ---- the blob store failing mid-manifest ------------------------------------
# The shard folder of line 2's blob is a plain file, so the store cannot
# write there (as with a full or read-only disk, even for root).
mkdir -p "$T/disk"
printf 'x;a 1\n' >"$T/disk/x.folded"
printf 'y;b 2\n' >"$T/disk/y.folded"
printf 'z;c 3\n' >"$T/disk/z.folded"
ky=$(key_of "$T/disk/y.folded")
shards=$(for f in x y z; do key_of "$T/disk/$f.folded" | cut -c1-2; done | sort -u | wc -l)
mkdir -p "$HOME_DIR/blobs/sha256"
: >"$HOME_DIR/blobs/sha256/${ky:0:2}"
M=$T/disk/m.jsonl
for f in x y z; do
	echo "{\"path\": \"$f.folded\", \"service\": \"s\", \"release\": \"v3\"}"
done >"$M"
run pr ingest --manifest "$M"
named="cannot ingest '$T/disk/y.folded': cannot store blob '$ky': "
[ "$shards" = 3 ] && [ $RC -eq 3 ] &&
	[[ $ERR == "profreg ingest: stopped at line 2 of '$M': $named"*"; 1 ingested, 1 not tried" ]] &&
	ok "a blob store failure stops the manifest, naming the input file, then the blob key" ||
	not_ok "disk failure in a manifest" "rc=$RC shards=$shards" "$ERR"
[ "$(sql "select count(*) from profiles where release = 'v3'")" = 1 ] &&
	ok "nothing after the store failed is tried" || not_ok "disk failure rows"
# --json lists the file that stopped the run under its own path, as every other file.
run pr ingest --manifest "$M" --json
[ $RC -eq 3 ] && [ "$(jq -r '.captures[-1].path' <<<"$OUT")" = "$T/disk/y.folded" ] &&
	[[ $(jq -r '.captures[-1].error' <<<"$OUT") == "stopped at line 2 of '$M': "* ]] &&
	ok "--json names the file that stopped the run by its path" ||
	not_ok "stopped file in --json" "rc=$RC $(jq -c '.captures[-1]' <<<"$OUT")"
run pr ingest "$T/disk/y.folded" --service s --release v3
[ $RC -eq 3 ] && [[ $ERR == "profreg ingest: $named"* ]] &&
	ok "a single file's storage failure names the file first" ||
	not_ok "disk failure of one file" "rc=$RC $ERR"
rm -f "$HOME_DIR/blobs/sha256/${ky:0:2}"

# ---- a 100 MB manifest line ---------------------------------------------------
mkdir -p "$T/big"
printf 'big;a 1\n' >"$T/big/a.folded"
printf 'big;b 1\n' >"$T/big/b.folded"
M=$T/big/m.jsonl
{
	echo '{"path": "a.folded", "service": "s", "release": "v4"}'
	printf '{"path": "'
	head -c 100M /dev/zero | tr '\0' x
	echo '", "service": "s", "release": "v4"}'
	echo '{"path": "b.folded", "service": "s", "release": "v4"}'
} >"$M"
run pr ingest --manifest "$M"
[ $RC -eq 4 ] && [ "$ERR" = "profreg ingest: line 2 of '$M': longer than 65536 bytes" ] &&
	ok "a 100 MB manifest line is bad input, and the message keeps its reason" ||
	not_ok "long line" "rc=$RC" "${ERR:0:300}"
[ "$(sql "select count(*) from profiles where release = 'v4'")" = 2 ] &&
	ok "the lines around it are ingested" || not_ok "long line rows"
rm -f "$M"

# ---- a manifest of many lines takes time in proportion to its lines -----------
# 300,000 bad lines of 123 bytes (36 MB): counting what was left after each
# batch of 64 read the rest of the file every time, over 50 s of CPU; once
# counted, the lines take a second or two (20 to 30 s under the sanitizers
# on a loaded machine: the bound is a minute, still far from quadratic).
M=$T/big/many.jsonl
awk 'BEGIN { s = sprintf("%120s", ""); for (i = 0; i < 300000; i++) print s "{}" }' >"$M"
OUT=$(timeout 60 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest --manifest "$M" 2>/dev/null)
RC=$?
[ $RC -eq 4 ] && [ "$OUT" = "0 stored, 0 already stored, 300000 failed" ] &&
	ok "300,000 bad manifest lines are each refused within a minute" ||
	not_ok "many lines" "rc=$RC" "${OUT:0:300}"
rm -f "$M"

# ---- sidecars are checked like manifest lines -------------------------------
# A tag key with a space: `profreg ingest` always refused it, the nightly
# collection used to store it. (tests/unit/test_ingest.c compares the
# messages of both paths.)
mkdir -p "$T/drop/s"
printf 'side;a 1\n' >"$T/drop/s/a.folded"
meta='"release": "v5", "tags": {"bad key": "v"}'
echo "{$meta}" >"$T/drop/s/a.folded.json"
echo "{\"path\": \"drop/s/a.folded\", \"service\": \"s\", $meta}" >"$T/tag.jsonl"
run pr ingest --manifest "$T/tag.jsonl"
[ $RC -eq 4 ] && [[ $ERR == *"line 1 of '$T/tag.jsonl': tag key 'bad key' has characters"* ]] &&
	ok "a manifest line with a bad tag key is refused" || not_ok "manifest bad tag" "rc=$RC $ERR"
echo "{\"services\": {\"s\": {\"source\": {\"dir\": \"$T/drop/s\"}}}}" >"$T/cfg.json"
run pr --config "$T/cfg.json" nightly --json
collected=$(sed -n '/"collected"/,/}/p' <<<"$OUT" | tr -d ' \n')
[ $RC -eq 3 ] && [[ $collected == *'"stored":0,'*'"failed":1'* ]] && [[ $ERR == *"service 's' failed: sidecar"*"bad key"* ]] &&
	[ "$(sql "select count(*) from profiles where release = 'v5'")" = 0 ] &&
	ok "a sidecar with the same tag is refused by the nightly collection, which fails naming it" ||
	not_ok "sidecar bad tag" "rc=$RC $OUT $ERR"

# ---- every bad file of a drop folder is named ----------------------------------
# Only the first used to be: the others were counted and never explained.
mkdir -p "$T/drop/many"
for f in a b c d; do printf 'many;%s 1\n' $f >"$T/drop/many/$f.folded"; done
echo '{"release": "v6", "owner": "x"}' >"$T/drop/many/a.folded.json"
echo '{"release": "v6"}' >"$T/drop/many/b.folded.json"
echo '{"release": "v6", "commit": "xyz"}' >"$T/drop/many/c.folded.json"
ln -s "$T/race.folded" "$T/drop/many/e.folded"
echo '{"release": "v6"}' >"$T/drop/many/e.folded.json"
echo '{"release": "v6", "time": "yesterday"}' >"$T/drop/many/d.folded.json"
echo "{\"services\": {\"s\": {\"sources\": [{\"type\": \"dir\", \"dir\": \"$T/drop/many\"}]}}}" \
	>"$T/many.json"
run pr --config "$T/many.json" collect --service s
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 4 ] &&
	[[ $ERR == *"many/a.folded.json': unknown key \"owner\""* ]] &&
	[[ $ERR == *"many/c.folded.json': commit 'xyz'"* ]] &&
	[[ $ERR == *"many/d.folded.json': \"time\" 'yesterday'"* ]] &&
	[[ $ERR == *"many/e.folded': a symbolic link"* ]] &&
	[ "$(sql "select count(*) from profiles where release = 'v6'")" = 1 ] &&
	ok "four bad files of a drop folder: four lines, each naming its file; one stored" ||
	not_ok "drop folder failures" "rc=$RC" "$ERR"

# ---- storage counts the blob store's leftover temporary files ---------------
pr --quiet ingest "$T/race.folded" --service s --release v1 >/dev/null
mkdir -p "$HOME_DIR/blobs/sha256/ab"
head -c 1234 /dev/zero >"$HOME_DIR/blobs/sha256/ab/$(printf 'c%.0s' $(seq 62)).zst.tmp.a1b2c3"
head -c 766 /dev/zero >"$HOME_DIR/blobs/sha256/${key:0:2}/${key:2}.zst.tmp.d4e5f6"
run pr storage --json
[ $RC -eq 0 ] && grep -q '"temp_files": 2' <<<"$OUT" && grep -q '"temp_bytes": 2000' <<<"$OUT" &&
	ok "storage counts temporary files and their bytes" || not_ok "storage temp --json" "rc=$RC $OUT"
run pr storage
[ $RC -eq 0 ] && grep -q "^  temporary: 2 files, 2.0 KiB of unfinished writes$" <<<"$OUT" &&
	ok "storage shows them" || not_ok "storage temp text" "rc=$RC $OUT"

# A file that cannot be opened (a file on its path where a folder should be)
# is that file's failure, as a malformed one is: the others are stored and
# the run ends as bad input (exit 4), not as an infrastructure failure.
printf 'main;readable 1\n' >"$T/readable.folded"
printf 'main;other 1\n' >"$T/other.folded"
run pr ingest "$T/readable.folded" "$T/readable.folded/x" "$T/other.folded" --service s \
	--release v5
[ $RC -eq 4 ] && [[ $ERR == *"cannot read '$T/readable.folded/x': Not a directory"* ]] &&
	[[ $OUT == *"2 stored, 0 already stored, 1 failed"* ]] &&
	ok "a file that cannot be opened fails alone, as bad input (exit 4)" ||
	not_ok "unopenable file" "rc=$RC $ERR $OUT"
finish
