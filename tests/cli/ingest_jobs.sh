#!/bin/bash
# Ingest with --jobs: from 2, one batch is read and parsed (its look-ups on
# a second connection) while the batch before it is written. The same
# manifest, with bad lines, a missing file, a corrupt profile and the same
# bytes twice (once across two batches in flight together), must give the
# same results, messages and rows as --jobs 1; and a database failure in
# the third batch must stop both at the same line, with nothing after it
# written.
. "$(dirname "$0")/lib.sh"
fresh_db cli_ingest_jobs
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_ingest_jobs
rm -rf "$T" && mkdir -p "$T/f"

for i in $(seq 1 200); do printf 'main;f%d %d\nmain;g %d\n' "$i" "$i" "$((i % 7 + 1))" >"$T/f/$i.folded"; done
cp "$T/f/10.folded" "$T/f/70.folded"   # batch 2 has batch 1's bytes
cp "$T/f/66.folded" "$T/f/130.folded"  # batch 3 has the bytes of batch 2, in flight beside it
printf '\037\213garbage' >"$T/f/150.folded"
rm -f "$T/f/100.folded"
# manifest SERVICE [DOWN_LINE]: 200 lines (batches of 64: 1-64, 65-128, 129-192, 193-200).
manifest() {
	for i in $(seq 1 200); do
		if [ "$i" = 5 ]; then
			echo 'not json'
		elif [ "$i" = "${2:-0}" ]; then
			echo "{\"path\": \"f/$i.folded\", \"service\": \"$1\", \"release\": \"v-down\"}"
		else
			echo "{\"path\": \"f/$i.folded\", \"service\": \"$1\", \"release\": \"v1\"}"
		fi
	done
}
pr --quiet service add one three down1 down3
pr --quiet service enable one three down1 down3
manifest one >"$T/one.jsonl"
manifest three >"$T/three.jsonl"

# The results without capture ids (two services: ids differ) and with the
# service's name taken out of paths and messages.
results() { jq -c '.captures[] | del(.capture_id)' <<<"$1" | sed "s/$2/SVC/g"; }
run pr --json ingest --manifest "$T/one.jsonl" --jobs 1
one=$OUT one_rc=$RC one_err=$ERR
run pr --json ingest --manifest "$T/three.jsonl" --jobs 3
three=$OUT
[ "$one_rc" = 4 ] && [ "$RC" = 4 ] &&
	ok "both runs exit 4 (a missing file, like a bad line or a corrupt profile, is bad input)" ||
	not_ok "exit codes" "one=$one_rc three=$RC" "$ERR"
[ "$(results "$one" one)" = "$(results "$three" three)" ] && [ -n "$(results "$one" one)" ] &&
	ok "--jobs 3 gives the results of --jobs 1, capture for capture" ||
	not_ok "results differ" "$(diff <(results "$one" one) <(results "$three" three) | head -5)"
[ "$(sed 's/one/SVC/g; s/three/SVC/g' <<<"$one_err")" = "$(sed 's/one/SVC/g; s/three/SVC/g' <<<"$ERR")" ] &&
	[ "$(grep -c . <<<"$ERR")" = 3 ] &&
	ok "and the same three messages (bad line, missing file, corrupt profile)" ||
	not_ok "messages" "$one_err" "$ERR"
counts() {
	jq -r '"\(.stored) \(.already_stored) \(.failed) \(.not_tried)"' <<<"$1"
}
[ "$(counts "$one")" = "195 2 3 0" ] && [ "$(counts "$three")" = "195 2 3 0" ] &&
	ok "195 stored; the bytes seen in an earlier batch found as stored, twice" ||
	not_ok "counts" "$(counts "$one")" "$(counts "$three")"
same_id() { jq -r --arg a "$2" --arg b "$3" '[.captures[] | select(.path | endswith($a) or endswith($b)) |
	.capture_id] | .[0] == .[1]' <<<"$1"; }
[ "$(same_id "$three" "f/66.folded" "f/130.folded")" = true ] &&
	[ "$(same_id "$three" "f/10.folded" "f/70.folded")" = true ] &&
	ok "bytes stored by the batch in flight beside it are that capture" ||
	not_ok "duplicate ids" "$(jq -c '.captures[65], .captures[129]' <<<"$three")"
rows() { sql "select count(*), sum(pf.self_value) from profiles p
	join profile_functions pf on pf.profile_id = p.id join services s on s.id = p.service_id
	where s.name = '$1'"; }
[ "$(rows one)" = "$(rows three)" ] && [ "$(sql "select count(*) from profiles p
	join services s on s.id = p.service_id where s.name = 'three'")" = 195 ] &&
	ok "the same rows in the index" || not_ok "rows" "$(rows one)" "$(rows three)"

# ---- the database going away in the third batch -----------------------------
sql "create function jobs_down() returns trigger language plpgsql as \$\$
	begin
		if new.release = 'v-down' then
			perform pg_terminate_backend(pg_backend_pid());
		end if;
		return new;
	end \$\$" >/dev/null
sql "create trigger jobs_down before insert on profiles
	for each row execute function jobs_down()" >/dev/null
manifest down1 140 >"$T/down1.jsonl"
manifest down3 140 >"$T/down3.jsonl"
run pr ingest --manifest "$T/down1.jsonl" --jobs 1
d1_rc=$RC d1_err=$ERR d1_out=$OUT
run pr ingest --manifest "$T/down3.jsonl" --jobs 3
sql "drop trigger jobs_down on profiles" >/dev/null
[ "$d1_rc" = 3 ] && [ "$RC" = 3 ] && [[ $ERR == *"stopped at line 140 of '$T/down3.jsonl'"* ]] &&
	[[ $ERR == *"; 137 ingested, 2 failed, 60 not tried" ]] &&
	ok "a database failure stops --jobs 3 at the same line, counting what is left" ||
	not_ok "stop" "rc=$d1_rc/$RC" "$d1_err" "$ERR"
[ "$(sed 's/down1/SVC/g; s/capture [0-9]*/capture N/' <<<"$d1_out$d1_err")" = \
	"$(sed 's/down3/SVC/g; s/capture [0-9]*/capture N/' <<<"$OUT$ERR")" ] &&
	ok "with the same messages and summary as --jobs 1" ||
	not_ok "stop messages" "$d1_out" "$OUT"
[ "$(sql "select count(*) from profiles p
	join services s on s.id = p.service_id where s.name = 'down3'")" = 135 ] &&
	[ "$(sql "select count(*) from profiles p join services s on s.id = p.service_id
		where s.name = 'down3' and p.release = 'v-down'")" = 0 ] &&
	ok "nothing after the failure is written, though the next batch was read" ||
	not_ok "rows after stop" "$(sql "select count(*) from profiles p join services s
		on s.id = p.service_id where s.name = 'down3'")"

# ---- a batch holds at most one parse's memory of parsed profiles ---------------
# Each file is 450 names of 60,000 bytes (27 MB once parsed), gzipped to 120 KB:
# a batch of 20 of them was parsed whole before any was stored, 640 MB at the
# peak. With a budget of 64 MiB (--max-decompressed-bytes 64M) it is 135 MB.
# (Under AddressSanitizer, whose quarantine keeps freed memory, the peak says
# nothing: skipped.)
if ldd "$PROFREG_BIN" 2>/dev/null | grep -q asan; then
	ok "# SKIP batch memory under AddressSanitizer"
else
	mkdir -p "$T/mem"
	awk 'BEGIN { s = "n"; while (length(s) < 60000) s = s s; s = substr(s, 1, 60000)
		for (i = 0; i < 450; i++) printf "%s%d 1\n", s, i }' | gzip -1 >"$T/mem/names.gz"
	for k in $(seq 1 20); do
		{ cat "$T/mem/names.gz"; printf 'k%d 1\n' "$k" | gzip; } >"$T/mem/$k.folded.gz"
	done
	pr --quiet service add mem && pr --quiet service enable mem
	"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" ingest "$T"/mem/*.folded.gz --service mem \
		--release v1 --max-decompressed-bytes 64M >"$T/mem.out" 2>&1 &
	pid=$!
	peak=0
	while kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$kb" ]; do
		peak=$kb
		sleep 0.05
	done
	wait $pid
	rc=$?
	[ $rc -eq 0 ] && [ "$(sql "select count(*) from profiles p join services s
		on s.id = p.service_id where s.name = 'mem'")" = 20 ] && [ "$peak" -lt 350000 ] &&
		ok "20 files of 27 MB of names each take under 350 MB (peak $((peak / 1024)) MB)" ||
		not_ok "batch memory" "rc=$rc peak=${peak} kB" "$(tail -3 "$T/mem.out")"
	rm -rf "$T/mem"
fi
finish
