#!/bin/bash
# analyze of a release that has captures, none of the type asked for,
# says which types it has and how to ask for them, rather than naming
# another release as if this one were a typo.
. "$(dirname "$0")/lib.sh"
fresh_db cli_analyze_hint
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_analyze_hint
rm -rf "$T" && mkdir -p "$T"

# v1 and v2 of service reg: heap captures only (four of v2).
for i in 1 2 3 4 5 6; do
	rel=v2 && [ "$i" -le 2 ] && rel=v1
	cp "$PROFREG_TEST_DATA/folded/mixed.folded" "$T/c$i.folded"
	echo "main;pad$i 1" >>"$T/c$i.folded"
	echo "{\"path\": \"$T/c$i.folded\", \"service\": \"reg\", \"release\": \"$rel\"," \
		"\"type\": \"heap\", \"format\": \"folded\", \"host\": \"h$i\"," \
		"\"time\": \"2026-01-0${i}T03:00:00Z\"}" >>"$T/manifest.jsonl"
done
pr --quiet service add reg && pr --quiet service enable reg
run pr --quiet ingest --manifest "$T/manifest.jsonl"
[ $RC -eq 0 ] && ok "heap captures of v1 and v2 ingest" || not_ok "ingest" "$ERR"

run pr analyze --service reg --release v2 --at 2026-01-07T00:00:00Z
[ $RC -eq 4 ] &&
	grep -qF "release 'v2' of service 'reg' has 4 heap captures and no cpu ones: add --type heap" \
		<<<"$ERR" && ! grep -q "did you mean" <<<"$ERR" &&
	ok "a release with heap captures only says so, and how to judge them" ||
	not_ok "types hint" "rc=$RC $ERR"

# A release the service never had is still named with the nearest one.
run pr analyze --service reg --release v3 --at 2026-01-07T00:00:00Z
[ $RC -eq 4 ] && grep -qF "no cpu captures of release 'v3' of service 'reg' (did you mean" \
	<<<"$ERR" && ok "a release it never had gets the close name" ||
	not_ok "typo hint" "rc=$RC $ERR"
finish
