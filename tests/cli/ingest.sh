#!/bin/bash
# End to end: services, ingest of every format, idempotency, refusal,
# manifests, bad input leaving the database unchanged, list and show.
. "$(dirname "$0")/lib.sh"
fresh_db cli_ingest
pr --quiet db init
D=$PROFREG_TEST_DATA
T=$PROFREG_TEST_TMP/cli_ingest
rm -rf "$T" && mkdir -p "$T"

# A small folded profile whose shares we know: a 60, b 30, c 10.
printf 'main;a 60\nmain;b 30\nmain;b;c 10\n' >"$T/small.folded"

run pr service add checkout --team payments
[ $RC -eq 0 ] && ok "service add" || not_ok "service add" "$ERR"
run pr service add checkout
[ $RC -eq 4 ] && [[ $ERR == *"already exists"* ]] && ok "adding a service twice is exit 4" || not_ok "duplicate add" "rc=$RC $ERR"
run pr service add 'bad name!'
[ $RC -ne 0 ] && ok "an invalid service name is refused" || not_ok "bad name accepted"

run pr ingest "$T/small.folded" --service checkout --release v1
[ $RC -eq 4 ] && [[ $ERR == *"not enabled"* ]] && ok "ingest into a disabled service is refused with exit 4" || not_ok "disabled refusal" "rc=$RC $ERR"
run pr ingest "$T/small.folded" --service nosuch --release v1
[ $RC -eq 4 ] && [[ $ERR == *"nosuch"* ]] && ok "ingest into an unknown service is refused with exit 4" || not_ok "unknown refusal" "rc=$RC $ERR"
[ "$(sql 'select count(*) from profiles')" = 0 ] && ok "refused ingests wrote nothing" || not_ok "rows after refusal"

run pr service enable checkout
run pr service list --json
[[ $OUT == *'"enabled": true'* ]] && ok "service list shows it enabled" || not_ok "service list" "$OUT"

run pr ingest "$T/small.folded" --service checkout --release v1 --host h1 --time 2026-11-01T10:00:00Z --commit abc1234 --tag zone=eu
[ $RC -eq 0 ] && [[ $OUT == *"stored as capture"* ]] && ok "ingest a folded file" || not_ok "ingest folded" "rc=$RC $OUT $ERR"
id=$(sql "select id from profiles order by id desc limit 1")
run pr ingest "$T/small.folded" --service checkout --release v1
[ $RC -eq 0 ] && [[ $OUT == *"already stored as capture $id"* ]] && ok "the same bytes are stored once" || not_ok "idempotent ingest" "$OUT $ERR"
[ "$(sql 'select count(*) from profiles')" = 1 ] && ok "one row after two ingests" || not_ok "duplicate row"
[ "$(find "$HOME_DIR/blobs" -name '*.zst' | wc -l)" = 1 ] && ok "one blob on disk" || not_ok "blob count"

# A blob damaged or lost in the store fails every read; ingesting the
# same file again restores it, says so, and keeps the one capture.
key=$(sql "select blob_key from profiles where id=$id")
blobf="$HOME_DIR/blobs/sha256/${key:0:2}/${key:2}.zst"
[ -f "$blobf" ] && ok "the blob is where the layout says" || not_ok "blob path" "$blobf"
printf 'garbage, not zstd' >"$blobf"
run pr export "$id"
[ $RC -ne 0 ] && [[ $ERR == *"corrupt"* ]] && ok "a damaged blob fails its export" ||
	not_ok "damaged export" "rc=$RC $ERR"
run pr ingest "$T/small.folded" --service checkout --release v1
[ $RC -eq 0 ] && [[ $OUT == *"already stored as capture $id"* ]] &&
	[[ $ERR == *"blob $key was missing or damaged in the store; restored from this file"* ]] &&
	ok "ingesting the file again restores a damaged blob and warns" ||
	not_ok "repair damaged" "rc=$RC $OUT $ERR"
run pr export "$id"
[ $RC -eq 0 ] && [ "$(sort <<<"$OUT")" = "$(sort "$T/small.folded")" ] &&
	ok "the restored blob exports the original stacks" || not_ok "export after repair" "rc=$RC $OUT $ERR"
rm -f "$blobf"
run pr ingest "$T/small.folded" --service checkout --release v1 --json
[ $RC -eq 0 ] && [[ $OUT == *'"blob_repaired": true'* ]] && [[ $OUT == *'"blobs_repaired": 1'* ]] &&
	[ -f "$blobf" ] && [ "$(sql 'select count(*) from profiles')" = 1 ] &&
	ok "ingesting the file again restores a lost blob, one capture still" ||
	not_ok "repair lost" "rc=$RC $OUT $ERR"
run pr ingest "$T/small.folded" --service checkout --release v1 --json
[ $RC -eq 0 ] && [[ $OUT == *'"blob_repaired": false'* ]] && [[ $OUT == *'"blobs_repaired": 0'* ]] &&
	ok "an intact blob is not repaired" || not_ok "intact" "rc=$RC $OUT $ERR"
# Retention cutting the capture meanwhile: it holds the key's exclusive
# lock, cuts the row and deletes the file, then commits. An ingest of the
# same bytes that looked the capture up before the cut waits for the lock
# and does not put the blob back, which no capture would keep.
psql "$DB" -qAt -c "begin" -c "select pg_advisory_xact_lock(1886547815, hashtext('$key'))" \
	-c "update profiles set blob_deleted_at = now(), retention_class = 'summary' where id = $id" \
	-c "select pg_sleep(3)" -c "commit" >/dev/null 2>&1 &
cutter=$!
for _ in $(seq 50); do
	[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted and objid = hashtext('$key')::oid")" -ge 1 ] && break
	sleep 0.1
done
rm -f "$blobf"
run pr ingest "$T/small.folded" --service checkout --release v1
wait "$cutter"
[ $RC -eq 0 ] && [ ! -f "$blobf" ] && [[ $ERR != *"restored from this file"* ]] &&
	ok "a capture cut while it is ingested again does not get its blob back" ||
	not_ok "repair races retention" "rc=$RC $OUT $ERR $(ls -la "$blobf" 2>&1)"
# As it was, for what follows: the capture whole again, its blob restored.
sql "update profiles set blob_deleted_at = null, retention_class = 'hot' where id = $id" >/dev/null
pr --quiet ingest "$T/small.folded" --service checkout --release v1 2>/dev/null
[ -f "$blobf" ] || not_ok "blob restored after the race" "$blobf"

run pr profile show "$id" --json
[[ $OUT == *'"name": "a"'* ]] && [[ $OUT == *'"self_share": 0.6'* ]] && ok "profile show gives the top function and its share" || not_ok "profile show" "$OUT"
run pr profile show "$id"
[[ $OUT == *"60.00%"* ]] && [[ $OUT == *"release   v1"* ]] && ok "profile show prints self percent" || not_ok "profile show text" "$OUT"
[ "$(sql "select total_value from profile_functions pf join functions f on f.id=pf.function_id where f.name='b' and profile_id=$id")" = 40 ] && ok "total counts the whole subtree" || not_ok "total of b"
[ "$(sql "select tags->>'zone' from profiles where id=$id")" = eu ] && ok "tags are stored" || not_ok "tags"
# A key given twice kept its last value and dropped the first without a word.
printf 'main;twice 1\n' >"$T/twice.folded"
run pr ingest "$T/twice.folded" --service checkout --release v1 --tag zone=eu --tag zone=us
[ $RC -eq 2 ] && [ "$ERR" = "profreg ingest: tag 'zone' is given twice" ] &&
	[ "$(sql "select count(*) from profiles where tags->>'zone' = 'us'")" = 0 ] &&
	ok "a tag key given twice is a usage error, nothing stored" || not_ok "tag twice" "rc=$RC $ERR"
run pr profile show 999999
[ $RC -eq 4 ] && ok "showing a missing capture is exit 4" || not_ok "missing capture" "rc=$RC"

# Every real format from tests/data goes in, detected by content.
for f in pprof/go-cpu.pb.gz pprof/go-heap.pb.gz v8/node-burn.cpuprofile perf/*.perf folded/*.folded; do
	for g in $D/$f; do
		[ -f "$g" ] || continue
		run pr ingest "$g" --service checkout --release v2
		# A recording of page faults counts no CPU time: refused.
		case $g in *pagefaults*)
			[ $RC -eq 4 ] && grep -q "'page-faults' events, which count no CPU time" <<<"$ERR" &&
				ok "$(basename "$g") is refused: page faults are no CPU time" ||
				not_ok "refuse $(basename "$g")" "rc=$RC $ERR"
			continue ;;
		# austin --full's time and memory: more than one number a line.
		*austin-burn-full*)
			[ $RC -eq 4 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
				grep -q "every line ends in more than one number" <<<"$ERR" &&
				ok "$(basename "$g") is refused in one line: more than one number" ||
				not_ok "refuse $(basename "$g")" "rc=$RC $ERR"
			continue ;;
		esac
		[ $RC -eq 0 ] && ok "ingest $(basename "$g")" || not_ok "ingest $(basename "$g")" "$ERR"
	done
done
# Bytes read with binary prefixes, as the reports print them: go-heap's
# 19,236,280 bytes in use are 18.35 MiB (they read "18.35MB"), main.keepLarge's
# 12 MiB "12.00 MiB"; its sample count is the 1,179 allocations Go sampled.
hid=$(sql "select id from profiles where release = 'v2' and profile_type = 'heap'")
run pr profile show "$hid"
[ $RC -eq 0 ] && [[ $OUT == *"total     18.35 MiB in 1179 samples"* ]] &&
	[[ $OUT == *"12.00 MiB"* ]] && [[ $OUT != *MB* ]] &&
	ok "profile show prints a heap in MiB with its sampled allocations" ||
	not_ok "profile show bytes" "rc=$RC $OUT"
# A print of two events keeps the first and says what it left out (a
# service of its own: the loop above stored these bytes already).
pr service add events --enable >/dev/null
run pr ingest "$D/perf/burn-two49.perf" --service events --release v2b
[ $RC -eq 0 ] && [[ $OUT == *"67 samples"* ]] &&
	[[ $ERR == *"only the events of 'cpu-clock' were kept; 67 events of other types were left out"* ]] &&
	ok "perf events of a second type are left out with a warning" ||
	not_ok "perf two events" "rc=$RC $OUT $ERR"
run pr ingest "$D/perf/variants.perf" --service events --release v2b
[ $RC -eq 0 ] && [[ $ERR == *"were kept; 1 event of another type was left out"* ]] &&
	ok "one event left out is said in the singular" || not_ok "perf one event" "rc=$RC $OUT $ERR"
run pr profiles list --service checkout --release v2 --json
[[ $OUT == *'"release": "v2"'* ]] && ok "profiles list filters by release" || not_ok "list by release" "$OUT"
run pr profiles list --service checkout --release v22
[ $RC -eq 4 ] && [[ $ERR == *"no captures of release 'v22' of service 'checkout' (did you mean 'v2'?)"* ]] &&
	ok "a release the service never had is an error naming the close one" ||
	not_ok "list unknown release" "rc=$RC $OUT $ERR"
run pr profiles list --service checkout --release v2 --type wall
[ $RC -eq 0 ] && ok "a release it has, filtered to nothing, is an empty list" || not_ok "list empty" "rc=$RC $ERR"
run pr profiles list --service checkout --json --since 2026-10-31 --until 2026-11-02
[ "$(grep -c '"id"' <<<"$OUT")" = 1 ] && ok "profiles list filters by time" || not_ok "list by time" "$OUT"

# Bad input: exit 4, one line naming the file, nothing written.
before=$(sql 'select count(*) from profiles')
fn_before=$(sql 'select count(*) from profile_functions')
printf 'main;a 10\nmain;b notanumber\n' >"$T/bad.folded"
head -c 300 "$D/pprof/go-cpu.pb.gz" >"$T/truncated.pb.gz"
printf '\x1f\x8b\x08\x00garbage' >"$T/corrupt.gz"
printf '{"nodes": [{"id": 1, "children": [9]}], "samples": [], "timeDeltas": []}' >"$T/dangling.cpuprofile"
: >"$T/empty.bin"
head -c 4096 /dev/urandom >"$T/random.bin"
for f in bad.folded truncated.pb.gz corrupt.gz dangling.cpuprofile random.bin; do
	run pr ingest "$T/$f" --service checkout --release v3
	lines=$(printf '%s\n' "$ERR" | grep -c .)
	if [ $RC -eq 4 ] && [ "$lines" = 1 ] && [[ $ERR == *"$f"* ]]; then
		ok "malformed $f: exit 4 and one line naming it"
	else
		not_ok "malformed $f" "rc=$RC lines=$lines" "$ERR"
	fi
done
[ "$(sql 'select count(*) from profiles')" = "$before" ] && [ "$(sql 'select count(*) from profile_functions')" = "$fn_before" ] && ok "bad input leaves the database unchanged" || not_ok "rows written by bad input"

# A decompression bomb fails fast under a small limit.
head -c 64M /dev/zero | gzip -c >"$T/bomb.gz"
start=$(date +%s)
run pr ingest "$T/bomb.gz" --service checkout --release v3 --max-decompressed-bytes 1M
[ $RC -eq 4 ] && [[ $ERR == *"limit"* ]] && [ $(( $(date +%s) - start )) -lt 10 ] && ok "a decompression bomb is stopped at the limit" || not_ok "bomb" "rc=$RC $ERR"
run pr ingest "$T/small.folded" --service checkout --release v3 --max-input-bytes 16
[ $RC -eq 4 ] && [[ $ERR == *"input limit"* ]] && ok "an oversized file is refused" || not_ok "max input" "rc=$RC $ERR"
run pr ingest "$T/small.folded" --service checkout --release v3 --max-input-bytes 1T
[ $RC -eq 2 ] && [[ $ERR == *"'--max-input-bytes 1T': the suffix 'T' is not K, M or G"* ]] &&
	ok "a size with an unknown suffix says which" || not_ok "size suffix" "rc=$RC $ERR"
printf 'a;b;c;d;e 1\n' >"$T/deep.folded"
run pr ingest "$T/deep.folded" --service checkout --release v3 --max-depth 3
[ $RC -eq 4 ] && [[ $ERR == *"depth"* ]] && ok "a too deep stack is refused" || not_ok "max depth" "rc=$RC $ERR"
printf 'a;b;c 1\na;b 2\na;d 1\n' >"$T/wide.folded"
before=$(sql 'select count(*) from functions')
run pr ingest "$T/wide.folded" --service checkout --release v3 --max-functions 3
[ $RC -eq 4 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] &&
	[[ $ERR == *"'$T/wide.folded'"*"more than 3 distinct functions"* ]] &&
	[ "$(sql 'select count(*) from functions')" = "$before" ] &&
	ok "a profile with more distinct functions than the limit is refused, nothing stored" ||
	not_ok "max functions" "rc=$RC $ERR"
run pr ingest "$T/wide.folded" --service checkout --release v3 --max-functions 4
[ $RC -eq 0 ] && ok "a profile with as many distinct functions as the limit is stored" ||
	not_ok "max functions at the limit" "rc=$RC $ERR"

# The configuration file sets limits; a flag overrides it; bad keys are named.
printf '{"limits": {"max_depth": 3}}' >"$T/cfg.json"
run pr --config "$T/cfg.json" ingest "$T/deep.folded" --service checkout --release v3
[ $RC -eq 4 ] && [[ $ERR == *"depth"* ]] && ok "a limit from the config file applies" || not_ok "config limit" "rc=$RC $ERR"
run pr --config "$T/cfg.json" ingest "$T/deep.folded" --service checkout --release v3 --max-depth 10
[ $RC -eq 0 ] && ok "a flag overrides the config file" || not_ok "flag over config" "rc=$RC $ERR"
printf '{"limits": {"max_depht": 3}}' >"$T/cfg-bad.json"
run pr --config "$T/cfg-bad.json" ingest "$T/deep.folded" --service checkout --release v3
[ $RC -eq 2 ] && [[ $ERR == *"limits.max_depht: unknown key"* ]] && ok "an unknown config key is named by its path" || not_ok "config unknown key" "rc=$RC $ERR"
printf '{"analysis": {"fdr": "low"}}' >"$T/cfg-bad2.json"
run pr --config "$T/cfg-bad2.json" ingest "$T/deep.folded" --service checkout --release v3
[ $RC -eq 2 ] && [[ $ERR == *"analysis.fdr: expected a number"* ]] && ok "a config value of the wrong type is named" || not_ok "config type" "rc=$RC $ERR"

# Manifests: good lines go in, bad lines are named by number, exit 4.
mkdir -p "$T/m"
printf 'm;x 5\nm;y 5\n' >"$T/m/one.folded"
printf 'm;x 7\nm;y 3\n' >"$T/m/two.folded"
cat >"$T/m/manifest.jsonl" <<JSON
{"path": "one.folded", "service": "checkout", "release": "v4", "host": "h1", "time": "2026-11-02T00:00:00Z", "type": "cpu", "tags": {"k": "v"}}

{"path": "two.folded", "service": "checkout", "release": "v4", "commit": "0123456789abcdef0123456789abcdef01234567", "time": "2026-11-02T01:00:00Z"}
{"path": "missing.folded", "service": "checkout", "release": "v4"}
not json
{"path": "one.folded", "service": "checkout"}
{"path": "one.folded", "service": "checkout", "release": "v4", "colour": "red"}
JSON
run pr ingest --manifest "$T/m/manifest.jsonl"
[ $RC -eq 3 ] || [ $RC -eq 4 ] && ok "a manifest with bad lines exits non-zero" || not_ok "manifest exit" "rc=$RC"
[[ $ERR == *"line 5"* ]] && [[ $ERR == *"line 6"* ]] && [[ $ERR == *"line 7"* ]] && ok "bad manifest lines are named by number" || not_ok "manifest line numbers" "$ERR"
# A manifest that lists nothing is no success (a generator that wrote nothing).
: >"$T/m/empty.jsonl"
printf '\n\n  \n' >"$T/m/blank.jsonl"
run pr ingest --manifest "$T/m/empty.jsonl"
e1=$ERR r1=$RC
run pr ingest --manifest "$T/m/blank.jsonl"
[ "$r1" -eq 4 ] && [ "$RC" -eq 4 ] && [[ $e1 == *"empty.jsonl' lists no capture (it is empty)"* ]] &&
	[[ $ERR == *"blank.jsonl' lists no capture (only blank lines)"* ]] &&
	ok "an empty manifest, or one of blank lines, is refused (exit 4)" ||
	not_ok "empty manifest" "rc=$r1 $e1" "rc=$RC $ERR"
[ "$(sql "select count(*) from profiles where release='v4'")" = 2 ] && ok "the good manifest lines are ingested" || not_ok "manifest good lines"
[ "$(sql "select to_char(captured_at at time zone 'UTC','HH24') from profiles where release='v4' and commit_sha is not null")" = 01 ] && ok "manifest times are used" || not_ok "manifest time"

# Usage errors are exit 2; --help works everywhere.
run pr ingest "$T/small.folded" --service checkout
[ $RC -eq 2 ] && ok "ingest without --release is a usage error" || not_ok "missing release" "rc=$RC"
run pr ingest "$T/small.folded" --service checkout --release 'v1"rc'
[ $RC -eq 2 ] && [[ $ERR == *"quote"* ]] && ok "a release with a quote is refused" || not_ok "release quote" "rc=$RC $ERR"
n0=$(sql "select count(*) from profiles")
run pr ingest "$T/small.folded" --service checkout --release $'v1\xff' --host $'web\xc0\xaf1'
[ $RC -eq 2 ] && [[ $ERR == *"is not valid UTF-8"* ]] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[ "$(sql "select count(*) from profiles")" = "$n0" ] &&
	ok "a release or host that is not UTF-8 is refused in one line, nothing stored" ||
	not_ok "release utf-8" "rc=$RC $ERR"
run pr ingest --bogus
[ $RC -eq 2 ] && ok "an unknown option is exit 2" || not_ok "unknown option" "rc=$RC"
run pr ingest "$T/small.folded" --service checkout --release v1 --type nonsense
[ $RC -eq 2 ] && ok "an unknown type is exit 2" || not_ok "bad type" "rc=$RC"
for c in "ingest" "profiles list" "profile show" "service add" "service enable" "service disable" "service list" "db migrate" "db start" "db stop" "db status" "version"; do
	# shellcheck disable=SC2086
	run "$PROFREG_BIN" $c --help
	[ $RC -eq 0 ] && [[ $OUT == *"usage:"* ]] && ok "$c --help" || not_ok "$c --help" "rc=$RC"
done
run "$PROFREG_BIN" --version
[ $RC -eq 0 ] && [[ $OUT == profreg* ]] && ok "--version" || not_ok "--version"
run "$PROFREG_BIN"
[ $RC -eq 2 ] && ok "no command is exit 2" || not_ok "no command" "rc=$RC"
# The profile type from a pprof's sample types: Go's allocs is alloc, its
# heap is heap; block, mutex and threadcreate are no type profreg analyses
# and must not be stored as CPU (each refused alone, the others stored).
G=$PROFREG_TEST_DATA/pprof
run pr ingest "$G/go119-allocs.pb.gz" "$G/go119-heap.pb.gz" "$G/go119-block.pb.gz" \
	"$G/go119-mutex.pb.gz" "$G/go119-threadcreate.pb.gz" --service checkout --release v10
[ $RC -ne 0 ] && [ "$(sql "select string_agg(profile_type || '/' || value_type, ' ' order by id)
	from profiles where release = 'v10'")" = "alloc/alloc_space heap/inuse_space" ] &&
	ok "Go's allocs is stored as alloc, its heap as heap" ||
	not_ok "go types" "rc=$RC $(sql "select profile_type, value_type from profiles where release = 'v10'")"
[ "$(grep -c "contentions/count, delay/nanoseconds are none that profreg analyses" <<<"$ERR")" = 2 ] &&
	[[ $ERR == *"'$G/go119-threadcreate.pb.gz': sample types threadcreate/count are none"* ]] &&
	ok "block, mutex and threadcreate profiles are refused, each named with its sample types" ||
	not_ok "go refusals" "$ERR"
pr service add typed >/dev/null && pr service enable typed >/dev/null
run pr ingest "$G/go-heap.pb.gz" --service typed --release v11 --type cpu
[ $RC -ne 0 ] && [[ $ERR == *"not a cpu profile: its sample types alloc_objects/count"* ]] &&
	[[ $ERR == *"make it a heap profile"* ]] &&
	[ "$(sql "select count(*) from profiles where release = 'v11'")" = 0 ] &&
	ok "a heap pprof given --type cpu is refused, not stored as CPU" || not_ok "heap as cpu" "rc=$RC $ERR"
printf 'main;alloc 7\n' >"$T/heap.folded"
run pr ingest "$T/heap.folded" --service checkout --release v11 --type heap
[ $RC -eq 0 ] && [ "$(sql "select profile_type from profiles where release = 'v11'")" = heap ] &&
	ok "a folded capture's --type is taken on trust (it only counts samples)" ||
	not_ok "folded heap" "rc=$RC $ERR"
run pr ingest "$T/small.folded" --service checkout --release v11
[ $RC -eq 4 ] && [[ $ERR == *"these bytes are already capture "*" of service 'checkout'"* ]] &&
	[[ $ERR == *"not stored again as a capture of release 'v11'"* ]] &&
	ok "the same bytes given for another release are refused, naming their capture" ||
	not_ok "same bytes, other release" "rc=$RC $ERR"
# Of the same release, they differ in host or type: the message says which, not the release.
was="(cpu, release 'v1', host 'h1'); not stored again as"
run pr ingest "$T/small.folded" --service checkout --release v1 --host h2
[ $RC -eq 4 ] && [[ $ERR == *"$was a capture of host 'h2'" ]] &&
	ok "the same bytes given for another host say the host" ||
	not_ok "same bytes, other host" "$ERR"
run pr ingest "$T/small.folded" --service checkout --release v1 --type heap
[ $RC -eq 4 ] && [[ $ERR == *"$was a capture of type 'heap' (one file is one capture)" ]] &&
	ok "the same bytes given as another type say the type" ||
	not_ok "same bytes, other type" "$ERR"
printf 'main;built 7\n' >"$T/build1.folded"
printf 'main;built 8\n' >"$T/build2.folded"
run pr ingest "$T/build1.folded" --service checkout --release v13 --commit 0123abcd
run pr ingest "$T/build2.folded" --service checkout --release v13 --commit 4567
[ $RC -eq 4 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] &&
	[[ $ERR == *"build2.folded"*"release 'v13' of service 'checkout' is commit 0123abcd"* ]] &&
	[[ $ERR == *"this capture says commit 4567: not stored"* ]] &&
	[ "$(sql "select count(*) from profiles where release = 'v13'")" = 1 ] &&
	ok "a capture that gives its release another commit is refused in one line, exit 4" ||
	not_ok "release commit" "rc=$RC $ERR"
run pr ingest "$G/go119-custom.pb.gz" --service typed --release v12 --type goroutine
[ $RC -eq 0 ] && [ "$(sql "select profile_type || '/' || value_type from profiles
	where release = 'v12'")" = "goroutine/acme.open_files" ] &&
	ok "sample types profreg does not know are taken as the --type given" ||
	not_ok "custom as goroutine" "rc=$RC $ERR"
# Go's block, mutex and threadcreate profiles are known: no --type makes
# one a capture of that type (a mutex profile taken as cpu joined the CPU
# baseline).
for f in go119-block:wall go119-mutex:cpu go119-threadcreate:goroutine; do
	run pr ingest "$G/${f%%:*}.pb.gz" --service typed --release v12b --type "${f#*:}"
	[ $RC -eq 4 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
		[[ $ERR == *"'$G/${f%%:*}.pb.gz': not a"*"profile: its sample types"* ]] &&
		[[ $ERR == *"which profreg does not analyse" ]] &&
		[ "$(sql "select count(*) from profiles where release = 'v12b'")" = 0 ] &&
		ok "${f%%:*} given --type ${f#*:} is refused in one line, nothing stored" ||
		not_ok "${f%%:*} as ${f#*:}" "rc=$RC $ERR"
done

run pr service disable checkout
run pr ingest "$T/m/one.folded" --service checkout --release v9
[ $RC -eq 4 ] && ok "disable stops ingest again" || not_ok "disable" "rc=$RC"

# Interpreted-language frames name the line being run: a release that
# moves the code keeps its functions (py-spy "name (file:line)").
printf 'main (app.py:10);compute (calc.py:42) 70\nmain (app.py:12);compute (calc.py:44) 20\nmain (app.py:12) 10\n' \
	>"$T/pyspy-v1.folded"
printf 'main (app.py:31);compute (calc.py:57) 90\nmain (app.py:33) 10\n' >"$T/pyspy-v2.folded"
run pr service add pysvc --enable
run pr ingest "$T/pyspy-v1.folded" --service pysvc --release py1
run2=$RC
run pr ingest "$T/pyspy-v2.folded" --service pysvc --release py2
[ $run2 -eq 0 ] && [ $RC -eq 0 ] &&
	[ "$(sql "select count(*) from functions where name = 'compute' and file = 'calc.py'")" = 1 ] &&
	[ "$(sql "select count(*) from functions where name = 'compute' or name like 'compute (%'
		or name like 'compute calc%'")" = 1 ] &&
	[ "$(sql "select string_agg(round(pf.self_share::numeric, 2)::text, ',' order by p.release)
		from profile_functions pf join profiles p on p.id = pf.profile_id
		join functions f on f.id = pf.function_id
		where f.name = 'compute' and p.release in ('py1', 'py2')")" = "0.90,0.90" ] &&
	ok "python frames are one function per name and file, whatever line runs" ||
	not_ok "python frames" "rc=$run2 $RC" "$ERR" "$(sql "select name, file from functions")"

# A V8 sampling heap profile (node --heap-prof) is detected and stored as
# a heap capture; asked to be cpu, its bytes contradict it.
run pr ingest "$D/v8/node-retain.heapprofile" --service pysvc --release heap1
[ $RC -eq 0 ] && [ "$(sql "select profile_type || ' ' || format || ' ' || value_type
	from profiles where release = 'heap1'")" = "heap v8heap inuse_space" ] &&
	ok "a .heapprofile is read as a heap capture" || not_ok "heapprofile" "rc=$RC" "$ERR"
before=$(sql "select count(*) from profiles")
cp "$D/v8/node-retain.heapprofile" "$T/as-cpu.heapprofile" && echo >>"$T/as-cpu.heapprofile"
run pr ingest "$T/as-cpu.heapprofile" --service pysvc --release heap2 --type cpu
[ $RC -eq 4 ] && [[ $ERR == *"not a cpu profile"* ]] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[ "$(sql "select count(*) from profiles")" = "$before" ] &&
	ok "a .heapprofile given --type cpu is refused, nothing written" ||
	not_ok "heapprofile as cpu" "rc=$RC" "$ERR"

# A JFR recording (JDK 17) of CPU and allocation samples is detected and
# stored as a cpu capture with its time; --type alloc takes its
# allocations; gzipped it reads the same; --type heap is refused.
run pr ingest "$D/jfr/burn.jfr" --service pysvc --release jfr1
[ $RC -eq 0 ] && [ "$(sql "select profile_type || ' ' || format || ' ' || value_type || ' ' ||
	(captured_at > '2020-01-01') from profiles where release = 'jfr1'")" = \
	"cpu jfr samples true" ] &&
	ok "a .jfr is read as a cpu capture" || not_ok "jfr" "rc=$RC" "$ERR"
gzip -c "$D/jfr/burn.jfr" >"$T/burn.jfr.gz"
run pr ingest "$T/burn.jfr.gz" --service pysvc --release jfr2 --type alloc
[ $RC -eq 0 ] && [ "$(sql "select profile_type || ' ' || value_type
	from profiles where release = 'jfr2'")" = "alloc alloc_space" ] &&
	ok "a gzipped .jfr given --type alloc is an alloc capture" ||
	not_ok "jfr alloc" "rc=$RC" "$ERR"
run pr ingest "$D/jfr/burn-chunks.jfr" --service pysvc --release jfr3 --type heap
[ $RC -eq 4 ] && [[ $ERR == *"not a heap profile"* ]] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	ok "a .jfr given --type heap is refused" || not_ok "jfr as heap" "rc=$RC" "$ERR"
# Its CPU samples fitted the units of goroutine and wall captures, and
# were stored as goroutine counts or wall time.
refused=""
for t in goroutine wall; do
	run pr ingest "$D/jfr/burn-chunks.jfr" --service pysvc --release "jfr-$t" --type $t
	[ $RC -eq 4 ] && [[ $ERR == *"not a $t profile: its sample types"*"make it a cpu profile" ]] &&
		[ "$(sql "select count(*) from profiles where release = 'jfr-$t'")" = 0 ] ||
		refused="$refused $t:rc=$RC:$ERR"
done
[ -z "$refused" ] && ok "a .jfr of CPU samples given --type goroutine or wall is refused" ||
	not_ok "jfr as goroutine or wall" "$refused"
# The CPU sampler's period is the cpu capture's; an alloc capture of the
# same recording has none (its CPU period read as an allocation rate).
run pr ingest "$D/jfr/profile-10ms.jfr.gz" --service pysvc --release jfr-period
pr --quiet service add jfralloc --enable
run pr ingest "$D/jfr/profile-10ms.jfr.gz" --service jfralloc --release jfr-period --type alloc
[ "$(sql "select string_agg(profile_type || ' ' || coalesce(period, 0) || ' ' ||
	coalesce(period_type, '-') ||
	' ' || coalesce(period_unit, '-'), ', ' order by profile_type)
	from profiles where release = 'jfr-period'")" = "alloc 0 - -, cpu 10000000 cpu nanoseconds" ] &&
	ok "a .jfr's CPU period is its cpu capture's, not its alloc capture's" ||
	not_ok "jfr period" "$(sql "select profile_type, period, period_type from profiles
		where release = 'jfr-period'") $ERR"
# Go's heap?seconds=N answer holds allocations only: asked to be heap, it
# is refused, saying what it is in plain words.
run pr ingest "$D/pprof/go119-heap-delta.pb.gz" --service pysvc --release delta1 --type heap
[ $RC -eq 4 ] && [[ $ERR == *"not a heap profile: its sample types"*"make it an alloc profile" ]] &&
	ok "a delta heap profile given --type heap is refused as an alloc profile" ||
	not_ok "delta as heap" "rc=$RC" "$ERR"

# blobs check reads back every blob a live capture rests on and names
# the missing and damaged ones, with a capture of each; ingesting the
# file again restores them; a capture cut to a summary is not its concern.
run pr blobs check
nblobs=$(sql "select count(distinct blob_key) from profiles where blob_deleted_at is null")
[ $RC -eq 0 ] && [[ $OUT == "checked $nblobs blobs ("*": 0 missing, 0 damaged,"* ]] &&
	ok "blobs check reads back every live blob" || not_ok "blobs check" "rc=$RC $OUT $ERR"
dkey=$(sql "select blob_key from profiles where release = 'jfr1'")
did=$(sql "select id from profiles where release = 'jfr1'")
mkey=$(sql "select blob_key from profiles where release = 'heap1'")
mid=$(sql "select id from profiles where release = 'heap1'")
printf 'x' >>"$HOME_DIR/blobs/sha256/${dkey:0:2}/${dkey:2}.zst"
rm -f "$HOME_DIR/blobs/sha256/${mkey:0:2}/${mkey:2}.zst"
run pr blobs check
[ $RC -eq 4 ] && [[ $OUT == *"$dkey  damaged  capture $did of 'pysvc'"* ]] &&
	[[ $OUT == *"$mkey  missing  capture $mid of 'pysvc'"* ]] &&
	[ "$ERR" = "profreg blobs check: blobs missing: 1, damaged: 1; ingest each capture's original file again to restore its blob" ] &&
	ok "blobs check names a damaged and a missing blob with their captures, exit 4" ||
	not_ok "blobs check damage" "rc=$RC $OUT $ERR"
run pr blobs check --service checkout --json
[ $RC -eq 0 ] && [[ $OUT == *'"damaged": 0'* ]] && [[ $OUT == *'"missing": 0'* ]] &&
	ok "blobs check --service looks at that service's captures only" ||
	not_ok "blobs check --service" "rc=$RC $OUT $ERR"
# A name that is no service (a typo, another team's) checks nothing: it
# must not pass as a store whose every blob checks.
run pr blobs check --service chekout
[ $RC -eq 4 ] && [[ $ERR == *"chekout"* ]] &&
	ok "blobs check --service of no service is refused" ||
	not_ok "blobs check unknown service" "rc=$RC $OUT $ERR"
[ "$(sql "select count(*) from runs where kind = 'blobs-check'")" = 3 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'blobs.check'")" = 3 ] &&
	ok "each check is a run with an audit row" || not_ok "blobs check runs"
run pr ingest "$D/jfr/burn.jfr" --service pysvc --release jfr1
run pr ingest "$D/v8/node-retain.heapprofile" --service pysvc --release heap1
run pr blobs check
[ $RC -eq 0 ] && ok "ingesting the files again restores both blobs" ||
	not_ok "blobs check after repair" "rc=$RC $OUT $ERR"
# A blob two services share is named with one capture and that capture's
# own service: the first capture is pysvc's, and 'events' sorts first.
printf 'main;shared_by_two 7\n' >"$T/shared2.folded"
pr --quiet ingest "$T/shared2.folded" --service pysvc --release shared1
pr --quiet ingest "$T/shared2.folded" --service events --release shared1
skey=$(sql "select blob_key from profiles where release = 'shared1' and service_id = (select id from services where name = 'pysvc')")
sid=$(sql "select id from profiles where release = 'shared1' and service_id = (select id from services where name = 'pysvc')")
printf 'x' >>"$HOME_DIR/blobs/sha256/${skey:0:2}/${skey:2}.zst"
run pr blobs check
[ $RC -eq 4 ] && [[ $OUT == *"$skey  damaged  capture $sid of 'pysvc' and 1 more"* ]] &&
	ok "a shared blob is named with a capture and that capture's own service" ||
	not_ok "blobs check shared blob" "rc=$RC $OUT $ERR"
pr --quiet ingest "$T/shared2.folded" --service pysvc --release shared1 2>/dev/null
sql "update profiles set blob_deleted_at = now() where id = $mid" >/dev/null
rm -f "$HOME_DIR/blobs/sha256/${mkey:0:2}/${mkey:2}.zst"
run pr blobs check
[ $RC -eq 0 ] && ok "a capture cut to a summary has no blob to check" ||
	not_ok "blobs check summary" "rc=$RC $OUT $ERR"
# Its file ingested again is that capture still, whose blob retention
# took on purpose: nothing is restored, and no damage is claimed.
run pr ingest "$D/v8/node-retain.heapprofile" --service pysvc --release heap1 --json
[ $RC -eq 0 ] && [[ $OUT == *'"blobs_repaired": 0'* ]] && [[ $ERR != *"restored"* ]] &&
	[ ! -e "$HOME_DIR/blobs/sha256/${mkey:0:2}/${mkey:2}.zst" ] &&
	ok "the file of a capture cut to a summary brings no blob back" ||
	not_ok "summary re-ingest" "rc=$RC $OUT $ERR"
# A snapshot's archive is read up to its own cap (snapshot.h), not the
# profiles' decompressed limit: one larger than that limit is whole, not
# damaged. Only the snapshot is left to check here.
sql "update profiles set blob_deleted_at = now()" >/dev/null
sql "insert into snapshots (host, taken_at, blob_key, archive_bytes, manifest, stored_by)
     values ('h1', now(), '$key', 100, '{}', 'test')" >/dev/null
printf '{"limits": {"max_decompressed_bytes": 8}}' >"$T/cfg-small.json"
run pr --config "$T/cfg-small.json" blobs check
[ $RC -eq 0 ] && [[ $OUT == "checked 1 blobs ("*": 0 missing, 0 damaged,"* ]] &&
	ok "a snapshot's blob over the profiles' limit is not called damaged" ||
	not_ok "blobs check snapshot cap" "rc=$RC $OUT $ERR"

finish
