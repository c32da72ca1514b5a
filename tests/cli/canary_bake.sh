#!/bin/bash
# Canaries as they run in production: one that baked five days before
# its gate, and the canary of a fix while the control hosts still run the
# release whose regression is open; and a pushgateway that hangs while a
# gate reports. Captures are made here as in canary.sh: folded, one host
# each, jittered shares from a fixed seed; control hosts web-3 to web-6,
# canary hosts web-1 and web-2.
. "$(dirname "$0")/lib.sh"
fresh_db cli_canary_bake
T=$PROFREG_TEST_TMP/cli_canary_bake
rm -rf "$T" && mkdir -p "$T/c"
SHA=0123456789abcdef0123456789abcdef01234567
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done' EXIT

# capture HOST RELEASE TIME ENCODE_PERMILLE SEED MANIFEST: one folded file and its line.
capture() {
	local f="$T/c/$1-$2-${3//[:T-]/}.folded"
	awk -v enc="$4" -v seed="$5" 'BEGIN {
		srand(seed)
		printf "main;serve;encode %d\n", enc * 10 * (1 + (rand() - 0.5) * 0.04)
		printf "main;serve;handle %d\n", 5000 * (1 + (rand() - 0.5) * 0.04)
		printf "main;gc %d\n", 1500 * (1 + (rand() - 0.5) * 0.04)
		printf "main;io;read %d\n", 1500 * (1 + (rand() - 0.5) * 0.04)
	}' >"$f"
	printf '{"path": "%s", "service": "%s", "release": "%s", "host": "%s", "time": "%s:00Z", "type": "cpu"}\n' \
		"$f" "$SVC" "$2" "$1" "$3" >>"$6"
}
pr --quiet db init

# ---- a canary that baked five days: judged once, as one comparison ----
SVC=bake
seed=1
for d in 25 26 27 28 29; do
	for h in 00 04 08 12 16 20; do
		t="2026-11-${d}T$h:00"
		for host in web-3 web-4 web-5 web-6; do capture "$host" v1 "$t" 200 $((seed++)) "$T/bake.jsonl"; done
		for host in web-1 web-2; do capture "$host" v2 "$t" 400 $((seed++)) "$T/bake.jsonl"; done
	done
done
pr --quiet service add bake && pr --quiet service enable bake
pr --quiet ingest --manifest "$T/bake.jsonl"
run pr analyze --service bake --release v2 --cohort 'web-1,web-2' --at 2026-11-30T01:00:00Z --dry-run \
	--gate high --json
[ $RC -eq 1 ] && jq -e '.findings[] | select(.direction == "regression" and (.function | endswith("encode")))' <<<"$OUT" >/dev/null &&
	ok "a canary that baked five days is judged: its 2x regression fails the gate" ||
	not_ok "five-day canary" "rc=$RC $ERR $(jq -c '.insufficient' <<<"$OUT")"

# ---- the canary of a fix, while the regression it fixes is open ----
SVC=fix
for h in 00 02 04 06 08 10 12 14 16 18 20 22; do
	for host in web-1 web-2 web-3 web-4 web-5 web-6; do
		capture "$host" v0 "2026-11-28T$h:00" 200 $((seed++)) "$T/fix.jsonl"
		capture "$host" v1 "2026-11-29T$h:00" 400 $((seed++)) "$T/fix.jsonl"
	done
done
for h in 00 01 02 03 04 05 06 07 08 09 10; do
	for host in web-1 web-2; do capture "$host" v2 "2026-11-30T$h:00" 200 $((seed++)) "$T/fix.jsonl"; done
	for host in web-3 web-4 web-5 web-6; do capture "$host" v1 "2026-11-30T$h:00" 400 $((seed++)) "$T/fix.jsonl"; done
done
pr --quiet service add fix && pr --quiet service enable fix
pr --quiet ingest --manifest "$T/fix.jsonl"
run pr analyze --service fix --release v1 --at 2026-11-30T00:00:00Z
[ "$(sql "select count(*) from findings f join services s on s.id = f.service_id
	where s.name = 'fix' and f.current_release = 'v1' and f.status = 'open' and f.direction = 'regression'")" -ge 1 ] ||
	not_ok "v1's regression is open" "rc=$RC $OUT $ERR"
run pr post-deploy --service fix --release v2 --commit "$SHA" --canary 'web-1,web-2' --json
[ $RC -eq 0 ] && [ "$(jq -r .verdict <<<"$OUT")" = pass ] &&
	jq -e '.findings[] | select(.direction == "improvement" and (.function | endswith("encode")))' <<<"$OUT" >/dev/null &&
	ok "the canary of a fix is judged against the regressed control it replaces (an improvement)" ||
	not_ok "fix canary" "rc=$RC $ERR $(jq -c '{verdict, reasons}' <<<"$OUT")"

# ---- a pushgateway that never answers costs a warning, not the verdict ----
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
end = time.time() + 120
s.settimeout(1)
while time.time() < end:
    try:
        c, _ = s.accept(); held.append(c)
    except OSError:
        pass
' "$T/hang.port" &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -s "$T/hang.port" ] && break; sleep 0.1; done
[ -s "$T/hang.port" ] || not_ok "hanging server starts"
printf '{"metrics": {"pushgateway": "http://127.0.0.1:%s", "instance": "t"}, "paging": {"timeout_ms": 30000}}' \
	"$(cat "$T/hang.port")" >"$T/hang.json"
run pr --config "$T/hang.json" post-deploy --service fix --release v2 --commit "$SHA" --canary 'web-1,web-2' \
	--deadline 6s --summary "$T/summary.md"
[ $RC -eq 0 ] && [[ $OUT == *"Verdict: pass"* ]] && grep -q "Verdict: pass" "$T/summary.md" &&
	[[ $ERR == *"metrics"* ]] && [[ $ERR != *"deadline ("* ]] &&
	ok "a pushgateway that hangs leaves the gate its verdict and summary, with a warning" ||
	not_ok "hung pushgateway" "rc=$RC $ERR"
finish
