#!/bin/bash
# A UTF-8 byte order mark (EF BB BF, as Windows editors and PowerShell's
# Out-File write it) at the start of a manifest, of a drop folder's
# sidecar and of the configuration file is skipped; it used to be
# refused as "'[' or '{' expected".
. "$(dirname "$0")/lib.sh"
fresh_db cli_ingest_bom
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_ingest_bom
rm -rf "$T" && mkdir -p "$T/drop"
BOM=$'\xef\xbb\xbf'
pr --quiet service add pay && pr --quiet service enable pay
rel() { sql "select coalesce(string_agg(release, ' ' order by release), '') from profiles where release like '$1%'"; }

printf 'main;a 1\n' >"$T/m1.folded"
printf 'main;b 1\n' >"$T/m2.folded"
printf '%s{"path": "m1.folded", "service": "pay", "release": "m1"}\n{"path": "m2.folded", "service": "pay", "release": "m2"}\n' \
	"$BOM" >"$T/m.jsonl"
run pr ingest --manifest "$T/m.jsonl"
[ $RC -eq 0 ] && [ "$(rel m)" = "m1 m2" ] && ok "a manifest starting with a BOM: both lines stored" ||
	not_ok "manifest BOM" "rc=$RC $ERR"

printf 'main;c 1\n' >"$T/drop/d.folded"
printf '%s{"release": "d1", "host": "web-1"}\n' "$BOM" >"$T/drop/d.folded.json"
printf '%s{"services": {"pay": {"sources": [{"type": "dir", "dir": "%s"}]}}}\n' "$BOM" "$T/drop" \
	>"$T/cfg.json"
run pr --config "$T/cfg.json" config check
[ $RC -eq 0 ] && ok "a configuration file starting with a BOM is valid" || not_ok "config BOM" "rc=$RC $ERR"
# The sidecar alone has one here: the configuration file is plain.
printf '{"services": {"pay": {"sources": [{"type": "dir", "dir": "%s"}]}}}\n' "$T/drop" >"$T/plain.json"
run pr --config "$T/plain.json" collect --service pay
[ $RC -eq 0 ] && [ "$(rel d)" = d1 ] && ok "a sidecar starting with a BOM is read, its release stored" ||
	not_ok "sidecar BOM" "rc=$RC $ERR"

# Only a BOM is skipped: other bytes before the JSON are still refused.
printf '\xef\xbb{"release": "x1"}\n' >"$T/half.jsonl"
run pr ingest --manifest "$T/half.jsonl"
[ $RC -ne 0 ] && [[ $ERR == *"line 1 of '$T/half.jsonl'"* ]] && ok "half a BOM is still bad JSON" ||
	not_ok "half BOM" "rc=$RC $ERR"
finish
