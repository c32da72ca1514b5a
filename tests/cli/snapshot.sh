#!/bin/bash
# Incident snapshots from the command line: a snapshot to a file needs no
# database; a stored one is listed, shown, extracted byte for byte and
# unpacked; an archive taken earlier uploads once; a busy process shows at
# the top; a run as nobody records what it could not read and succeeds; an
# unreachable database keeps the archive; usage errors, hostile uploads
# and the cooldown are refused with one line and the right exit code;
# show prints a hostile or odd manifest escaped and never crashes.
. "$(dirname "$0")/lib.sh"
fresh_db cli_snapshot
T=$PROFREG_TEST_TMP/cli_snapshot
rm -rf "$T" && mkdir -p "$T" && chmod 755 "$T"
cat >"$T/profreg.json" <<'JSON'
{"snapshot": {"sample_ms": 300, "time_budget_ms": 20000, "top_processes": 20,
              "services": {"checkout": {"processes": ["snapburner"], "full_cmdline": false}}}}
JSON
P() { pr --config "$T/profreg.json" "$@"; }
member() { tar --zstd -xOf "$1" "$2"; }

run P snapshot --help
[ $RC -eq 0 ] && grep -q -- '--incident' <<<"$OUT" && grep -q 'snapshot list' <<<"$OUT" &&
	ok "snapshot --help" || not_ok "snapshot --help" "rc $RC"

# A file, no database: --out works before db init.
run P snapshot --out "$T/a.tar.zst" --incident INC-1 --reason "p99 at 3 s" --json
[ $RC -eq 0 ] && [ -s "$T/a.tar.zst" ] && [ "$(jq -r .out <<<"$OUT")" = "$T/a.tar.zst" ] &&
	ok "snapshot --out writes an archive without a database" ||
	not_ok "snapshot --out" "rc $RC" "$ERR"
first=$(tar --zstd -tf "$T/a.tar.zst" | head -n 1)
[ "$first" = manifest.json ] && ok "manifest.json is the archive's first member" ||
	not_ok "first member" "$first"
m=$(member "$T/a.tar.zst" manifest.json)
[ "$(jq -r .incident <<<"$m")" = INC-1 ] && [ "$(jq -r .kind <<<"$m")" = profreg-snapshot ] &&
	[ "$(jq '.items | length' <<<"$m")" -eq 14 ] &&
	[ "$(jq '[.items[] | select(.status != "collected" and (.reason // "") == "")] | length' <<<"$m")" -eq 0 ] &&
	ok "the manifest lists every item, and why each missing one is missing" ||
	not_ok "manifest" "$(jq -c '.items' <<<"$m" | head -c 800)"
[ "$(jq '.bytes' <<<"$OUT")" -eq "$(stat -c %s "$T/a.tar.zst")" ] &&
	ok "--json gives the archive's size and cost" || not_ok "--json bytes" "$OUT"

# A busy process, named by its executable, ranked by CPU. Other work on
# the machine may out-burn it, so what is checked does not depend on the
# load: a longer interval and every thread that ran listed; the list in
# order of CPU; the burner in it with a share no larger than what it
# burnt around the whole run (its own /proc/PID/stat); an idle process of
# this test seen (in the process list) but not in it.
cat >"$T/busy.json" <<'JSON'
{"snapshot": {"sample_ms": 1000, "time_budget_ms": 60000, "top_processes": 1000,
              "top_threads": 10000,
              "services": {"checkout": {"processes": ["snapburner"], "full_cmdline": false}}}}
JSON
# cpu_ticks PID: its user plus system time, in clock ticks (fields 14 and 15).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
sleep 600 &
idle=$!
cp /bin/sh "$T/snapburner"
"$T/snapburner" -c 'while :; do :; done' &
burner=$!
# Bounded wait until it runs as snapburner and has burnt a tick: seen by both scans.
for _ in $(seq 100); do
	[ "$(cat "/proc/$burner/comm" 2>/dev/null)" = snapburner ] &&
		[ "$(cpu_ticks $burner)" -gt 0 ] && break
	sleep 0.1
done
t0=$(cpu_ticks $burner)
run pr --config "$T/busy.json" snapshot --out "$T/busy.tar.zst"
t1=$(cpu_ticks $burner)
kill $burner $idle
wait $burner $idle 2>/dev/null
s=$(member "$T/busy.tar.zst" summary.json)
[ $RC -eq 0 ] && jq -e --argjson p $burner --argjson i $idle --argjson max $(((t1 - t0) * 1000 / $(getconf CLK_TCK))) '
	.top_threads as $t
	| ($t | map(select(.pid == $p and .comm == "snapburner"))) as $b
	| ($t | map(.cpu_ms)) == ($t | map(.cpu_ms) | sort | reverse)
	and ($b | length) == 1 and $b[0].cpu_ms > 0 and $b[0].cpu_ms <= $max
	and ($t | map(select(.pid == $i)) | length) == 0
	and (.processes | map(select(.pid == $i)) | length) == 1' <<<"$s" >/dev/null &&
	ok "the threads are ranked by CPU: the burner in, with its own CPU time; an idle one out" ||
	not_ok "burner ranked" "burnt $((t1 - t0)) ticks; idle $idle" \
		"$(jq -c --argjson p $burner '.top_threads | map(select(.pid == $p))' <<<"$s")" \
		"$(jq -c '.top_threads[:12] | map([.pid, .comm, .cpu_ms])' <<<"$s")"
jq -e --argjson p $burner '.top_processes | map(select(.pid == $p)) | .[0] | .service == "checkout" and .exe == "snapburner" and .argc == 3 and (has("cmdline") | not)' <<<"$s" >/dev/null &&
	ok "its service is named, its command line is not stored" ||
	not_ok "service and cmdline" "$(jq -c --argjson p $burner '.top_processes | map(select(.pid == $p))' <<<"$s")"

# Stored: db init, then the default (upload).
pr --quiet db init
run P snapshot --incident INC-2 --reason "checkout stalls"
[ $RC -eq 0 ] && grep -q '^snapshot 1 of .* stored' <<<"$OUT" &&
	ok "snapshot stores by default" || not_ok "snapshot store" "rc $RC" "$OUT" "$ERR"
[ "$(sql "select count(*) from snapshots where incident = 'INC-2' and trigger = 'manual'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'snapshot.store' and object = 'snapshot:1'")" = 1 ] &&
	ok "indexed and audited" || not_ok "row and audit"
run P snapshot list
[ $RC -eq 0 ] && grep -q 'INC-2' <<<"$OUT" && head -n 1 <<<"$OUT" | grep -q '^ *ID  *TAKEN  *HOST' &&
	ok "snapshot list" || not_ok "snapshot list" "$OUT" "$ERR"
run P snapshot list --incident nope --json
[ $RC -eq 0 ] && [ "$(jq '.snapshots | length' <<<"$OUT")" -eq 0 ] &&
	ok "snapshot list --incident filters" || not_ok "list filter" "$OUT"
# A service name that does not exist is an error, not an empty answer;
# one that does, with no snapshot, is an empty list.
pr --quiet service add checkout
run P snapshot list --service chekout
[ $RC -eq 4 ] && [ "$ERR" = "profreg snapshot list: service 'chekout' not found (did you mean 'checkout'?)" ] &&
	[ -z "$OUT" ] && ok "snapshot list --service of no service is exit 4 with the close name" ||
	not_ok "list unknown service" "rc $RC" "$OUT" "$ERR"
run P snapshot list --service checkout --json
[ $RC -eq 0 ] && [ "$(jq '.snapshots | length' <<<"$OUT")" -eq 0 ] &&
	ok "snapshot list --service of a service with none is empty" || not_ok "list known service" "rc $RC" "$OUT" "$ERR"
run P snapshot show 1
[ $RC -eq 0 ] && grep -q '^incident INC-2' <<<"$OUT" && grep -q '^items:' <<<"$OUT" &&
	grep -q 'schedstat\|pressure' <<<"$OUT" && ok "snapshot show" || not_ok "snapshot show" "$OUT" "$ERR"

# Round trips, byte for byte.
run P snapshot upload "$T/a.tar.zst"
[ $RC -eq 0 ] && [ "$OUT" = "stored as snapshot 2" ] && ok "upload of an archive taken with --out" ||
	not_ok "upload" "$OUT" "$ERR"
run P snapshot upload "$T/a.tar.zst"
[ $RC -eq 0 ] && [ "$OUT" = "already stored as snapshot 2" ] && ok "the same archive uploads once" ||
	not_ok "upload twice" "$OUT"
run P snapshot extract 2 --out "$T/back.tar.zst"
[ $RC -eq 0 ] && cmp -s "$T/a.tar.zst" "$T/back.tar.zst" &&
	ok "extract gives the archive back byte for byte" || not_ok "extract cmp" "$ERR"
run P snapshot extract 2 --dir "$T/unpacked"
[ $RC -eq 0 ] && cmp -s "$T/unpacked/manifest.json" <(member "$T/a.tar.zst" manifest.json) &&
	[ -f "$T/unpacked/proc/pressure/cpu.start" ] &&
	ok "extract --dir unpacks it" || not_ok "extract --dir" "$ERR"
run P snapshot extract 2 --dir "$T/unpacked"
[ $RC -eq 4 ] && grep -q "exists" <<<"$ERR" && ok "extract never writes into a folder that exists" ||
	not_ok "extract into existing" "rc $RC" "$ERR"
mkdir -p "$T/here"
cd "$T/here" && run P snapshot extract 2 --dir ../unpacked2
cd "$OLDPWD" || exit 1
[ $RC -eq 0 ] && cmp -s "$T/unpacked2/manifest.json" <(member "$T/a.tar.zst" manifest.json) &&
	ok "extract --dir takes a folder named with '..'" || not_ok "extract --dir ../x" "rc $RC" "$ERR"
[ "$(sql "select count(*) from audit_log where action = 'snapshot.extract'")" = 3 ] &&
	ok "each extract is audited" || not_ok "extract audit"

# Refusals: one line, the right code.
run P snapshot --out "$T/x" --upload
[ $RC -eq 2 ] && [ "$(wc -l <<<"$ERR")" -eq 1 ] && ok "--out with --upload is a usage error" ||
	not_ok "--out --upload" "rc $RC"
run P snapshot --incident "$(printf 'a\033[2Jb')" --out "$T/x"
[ $RC -eq 2 ] && grep -q "incident" <<<"$ERR" && ! grep -q $'\033' <<<"$ERR" &&
	ok "an incident with control characters is refused, escaped" || not_ok "bad incident" "rc $RC" "$ERR"
run P snapshot --cooldown 10m --out "$T/x"
[ $RC -eq 2 ] && ok "--cooldown needs the database" || not_ok "cooldown --out" "rc $RC"
run P snapshot --cooldown 10m
[ $RC -eq 4 ] && grep -q "cooldown" <<<"$ERR" && [ "$(sql 'select count(*) from snapshots')" = 2 ] &&
	ok "a second snapshot within the cooldown is refused" || not_ok "cooldown" "rc $RC" "$ERR"
gzip -c /etc/hostname >"$T/bad.tar.zst"
run P snapshot upload "$T/bad.tar.zst"
[ $RC -eq 4 ] && grep -q "bad.tar.zst" <<<"$ERR" && [ "$(wc -l <<<"$ERR")" -eq 1 ] &&
	ok "a file that is not a snapshot is refused, naming it" || not_ok "hostile upload" "rc $RC" "$ERR"
# An archive dated in 2100: stored, it would be the host's newest
# snapshot and hold its cooldown until then.
rm -rf "$T/future" && mkdir -p "$T/future" && tar --zstd -xf "$T/a.tar.zst" -C "$T/future"
jq -c '.taken_at_us = 4102444800000000' "$T/future/manifest.json" >"$T/future/m" &&
	mv "$T/future/m" "$T/future/manifest.json"
(cd "$T/future" && tar --zstd -cf "$T/future.tar.zst" manifest.json $(tar --zstd -tf "$T/a.tar.zst" |
	grep -v '^manifest.json$\|/$'))
blobs=$(find "$HOME_DIR/blobs" -type f | wc -l)
run P snapshot upload "$T/future.tar.zst"
[ $RC -eq 4 ] && [ "$(wc -l <<<"$ERR")" -eq 1 ] &&
	[[ $ERR == *"future.tar.zst"*"more than a day ahead of this machine's clock" ]] &&
	[ "$(sql 'select count(*) from snapshots')" = 2 ] &&
	[ "$(find "$HOME_DIR/blobs" -type f | wc -l)" = "$blobs" ] &&
	ok "an archive dated more than a day ahead is refused, nothing stored" ||
	not_ok "future upload" "rc $RC" "$ERR"
run P snapshot show 99
[ $RC -eq 4 ] && grep -q "snapshot 99 not found" <<<"$ERR" && ok "an unknown snapshot is exit 4" ||
	not_ok "unknown id" "rc $RC" "$ERR"

# As nobody: what needs privileges is missing, and says so; exit 0.
mkdir -p "$T/pub" && chmod 777 "$T/pub"
run setpriv --reuid=nobody --regid=nogroup --clear-groups "$PROFREG_BIN" --home "$T/pub" \
	--config "$T/profreg.json" snapshot --out "$T/pub/nobody.tar.zst" --json
m=$(member "$T/pub/nobody.tar.zst" manifest.json 2>/dev/null)
[ $RC -eq 0 ] && [ "$(jq .collector.euid <<<"$m")" = 65534 ] &&
	jq -e '.items[] | select(.name == "bpf_programs") | .status == "missing" and (.reason | test("CAP_SYS_ADMIN"))' <<<"$m" >/dev/null &&
	jq -e '.items[] | select(.name == "pressure") | .status == "collected"' <<<"$m" >/dev/null &&
	ok "as nobody: missing layers recorded, the snapshot still succeeds" ||
	not_ok "as nobody" "rc $RC" "$ERR" "$(jq -c '.items' <<<"$m" | head -c 600)"

# The database is away: the snapshot is taken and kept, exit 3.
run "$PROFREG_BIN" --db "host=$T/nowhere dbname=x connect_timeout=2" --home "$T/away" \
	--config "$T/profreg.json" snapshot --incident INC-3
kept=$(ls "$T"/away/snapshots/unsent/*.tar.zst 2>/dev/null | head -n 1)
[ $RC -eq 3 ] && [ -n "$kept" ] && grep -q "snapshot upload $kept" <<<"$ERR" &&
	ok "an unreachable database keeps the archive and says how to upload it" ||
	not_ok "unsent" "rc $RC" "$ERR"
run P snapshot upload "$kept"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from snapshots where incident = 'INC-3'")" = 1 ] &&
	ok "the kept archive uploads later" || not_ok "upload kept" "$ERR"

# An archive that unpacks to more than any snapshot can hold (two members
# of 150 MiB of zeros, a few hundred KiB packed) is refused in one line.
rm -rf "$T/bomb" && mkdir -p "$T/bomb" && tar --zstd -xf "$T/a.tar.zst" -C "$T/bomb"
mapfile -t members < <(tar --zstd -tf "$T/a.tar.zst" | grep -v '^manifest.json$\|/$')
for m in "${members[@]:0:2}"; do head -c $((150 << 20)) /dev/zero >"$T/bomb/$m"; done
(cd "$T/bomb" && tar --zstd -cf "$T/bomb.tar.zst" manifest.json "${members[@]}")
before=$(sql "select count(*) from snapshots")
run P snapshot upload "$T/bomb.tar.zst"
[ $RC -eq 4 ] && [ "$(wc -l <<<"$ERR")" = 1 ] && [[ $ERR == *"once decompressed"* ]] &&
	[ "$(sql "select count(*) from snapshots")" = "$before" ] &&
	ok "an archive that unpacks to more than a snapshot can hold is refused ($(stat -c %s "$T/bomb.tar.zst") bytes packed)" ||
	not_ok "bomb" "rc $RC $ERR"
rm -rf "$T/bomb" "$T/bomb.tar.zst"

# What show prints of a manifest came from an upload: a field that is
# null, missing or not a string is one honest "-", never a crash, and
# nothing of it reaches the terminal unescaped.
rm -rf "$T/odd" && mkdir -p "$T/odd" && tar --zstd -xf "$T/a.tar.zst" -C "$T/odd"
jq -c '.highlights.top_threads = [{"tid": 7, "comm": "w", "process": null, "cpu_pct": 1.5}]' \
	"$T/odd/manifest.json" >"$T/odd/m" && mv "$T/odd/m" "$T/odd/manifest.json"
(cd "$T/odd" && tar --zstd -cf "$T/odd.tar.zst" manifest.json $(tar --zstd -tf "$T/a.tar.zst" |
	grep -v '^manifest.json$\|/$'))
run P snapshot upload "$T/odd.tar.zst"
odd=$(sql "select max(id) from snapshots")
run P snapshot show "$odd"
[ $RC -eq 0 ] && grep -q '^ *1.5% *7  w *(-)$' <<<"$OUT" &&
	ok "show prints a busiest thread whose process is null as '-'" ||
	not_ok "show: process null" "rc $RC" "$ERR" "$(grep -A2 busiest <<<"$OUT")"
sql "update snapshots set manifest = '{\"highlights\": {\"pressure\": {\"cpu\u001b]0;owned\u0007\":
	{\"some_avg10\": \"x\"}}, \"top_threads\": [{\"tid\": \"7\", \"comm\": {\"a\": 1},
	\"cpu_pct\": null}, 5], \"loadavg\": [1]}, \"items\": [{\"layer\": \"\u001b[2J\",
	\"name\": \"\u001b[31mred\", \"status\": \"\u001b]8;;http://x\u0007collected\",
	\"reason\": 5}, {\"layer\": null}, 7], \"kernel\": {\"release\": [1]}, \"cost\": \"x\"}'
	where id = $odd" >/dev/null
run P snapshot show "$odd"
[ $RC -eq 0 ] && ! grep -q $'\033\\|\a' <<<"$OUT" && grep -q 'cpu\\x1b\]0;owned\\x07' <<<"$OUT" &&
	grep -q '^  \\x1b\[2J *\\x1b\]8;;http://x\\x07collected \\x1b\[31mred$' <<<"$OUT" &&
	grep -q '^  - *- *-$' <<<"$OUT" &&
	ok "show escapes every string of a manifest and prints '-' for what is not one" ||
	not_ok "show: hostile manifest" "rc $RC" "$ERR" "$(cat -v <<<"$OUT")"

# storage counts a stored snapshot's blob as a snapshot's, not as one no
# capture keeps, which read as a stray file retention should sweep.
run P storage --json
nsnap=$(sql "select count(distinct blob_key) from snapshots")
[ $RC -eq 0 ] && [ "$nsnap" -ge 1 ] && [ "$(jq -r .disk.snapshot_files <<<"$OUT")" = "$nsnap" ] &&
	[ "$(jq -r .disk.unreferenced_files <<<"$OUT")" = 0 ] &&
	ok "storage counts the snapshot's blob as the snapshot's" ||
	not_ok "storage snapshot" "rc $RC $(jq -c .disk <<<"$OUT") $ERR"
run P storage
[[ $OUT == *"0 not kept by any capture ("*"); $nsnap of incident snapshots ("* ]] &&
	ok "... and says so" || not_ok "storage snapshot text" "$OUT"

# The configuration is checked.
echo '{"snapshot": {"size_budget_bytes": 10}}' >"$T/bad.json"
run pr --config "$T/bad.json" config check
[ $RC -ne 0 ] && grep -q "snapshot.size_budget_bytes" <<<"$ERR" &&
	ok "config check refuses a budget out of range" || not_ok "config range" "rc $RC" "$ERR"
echo '{"snapshot": {"services": {"s": {"processes": ["a-name-longer-than-15"]}}}}' >"$T/bad.json"
run pr --config "$T/bad.json" config check
[ $RC -ne 0 ] && grep -q "snapshot.services.s.processes" <<<"$ERR" &&
	ok "config check refuses a process name the kernel cannot hold" || not_ok "config comm" "$ERR"
finish
