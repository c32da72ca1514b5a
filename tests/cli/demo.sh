#!/bin/bash
# make demo's script (scripts/demo), run whole as a new user runs it, in a
# folder of its own: it must end with exit 0, find the regressions the
# simulator planted, fail the CI gate of the deploys that carry one and
# pass the one that does not. Every profile it ingests by name must be
# taken: a refusal stops it (a perf record of page faults did once).
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/demo
rm -rf "$T"
mkdir -p "$T"
chmod 755 "$T"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
stop_cluster() {
	PROFREG_HOME=$T/home "$PROFREG_BIN" db stop --quiet >/dev/null 2>&1
}
trap stop_cluster EXIT

run env DEMO_HOME="$T/home" BIN="$(dirname "$PROFREG_BIN")" BUILD="$PROFREG_BUILD" \
	"$ROOT/scripts/demo"
echo "$OUT" >"$T/out.txt"
echo "$ERR" >"$T/err.txt"
if [ "$RC" -eq 0 ]; then
	ok "the demo runs to the end (exit 0)"
else
	not_ok "the demo runs to the end (exit 0)" "exit $RC" "$(tail -n 5 "$T/err.txt")"
fi

if grep -q '^ingested [0-9]* simulated captures' "$T/out.txt"; then
	ok "the demo ingests its simulated fleet"
else
	not_ok "the demo ingests its simulated fleet" "$(grep -c . "$T/out.txt") lines of output"
fi

# Every function the simulator made slower is a regression of the nightly.
planted=$(grep '"regressed":true' "$T/home/fleet/truth.jsonl" 2>/dev/null |
	sed 's/.*"service":"\([^"]*\)".*"function":"\([^"]*\)".*/\1 \2/')
missed=""
while read -r svc fn; do
	[ -n "$svc" ] || continue
	grep -F "$svc" "$T/home/nightly.txt" | grep -qF "$fn" || missed="$missed $svc:$fn"
done <<<"$planted"
if [ -n "$planted" ] && [ -z "$missed" ]; then
	ok "the nightly finds every regression the simulator planted"
else
	not_ok "the nightly finds every regression the simulator planted" \
		"planted: $(echo $planted)" "missed:$missed"
fi

fails=$(grep -c '^\*\*Verdict: FAIL\*\*' "$T/out.txt")
passes=$(grep -c '^\*\*Verdict: pass\*\*' "$T/out.txt")
if [ "$fails" -eq 2 ] && [ "$passes" -eq 1 ]; then
	ok "the CI gate fails the two deploys with a regression and passes the other"
else
	not_ok "the CI gate fails the two deploys with a regression and passes the other" \
		"$fails FAIL and $passes pass verdicts"
fi
if grep -q '| main.computeTax |' "$T/out.txt"; then
	ok "the gate names the Go service's slower function, main.computeTax"
else
	not_ok "the gate names the Go service's slower function, main.computeTax"
fi

finish
