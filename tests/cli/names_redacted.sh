#!/bin/bash
# Personal data in a function's or a file's name never reaches what people
# read: a function named after a customer's e-mail address regresses, and
# its finding, the run's reports (HTML, Markdown, JSON), finding list and
# the stored index hold "#" where the address was; an IBAN and an AWS key
# id in other names likewise. Harmless names are kept.
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/cli_names_redacted
rm -rf "$T" && mkdir -p "$T"
fresh_db cli_names_redacted
pr --quiet db init
pr --quiet service add checkout --enable

MAIL=jane.doe@example.com
IBAN=DE89370400440532013000
AKID=AKIAIOSFODNN7EXAMPLE
# capture FILE SEED X: 20,000 samples; charge(MAIL) at X times 10%.
capture() {
	awk -v seed="$2" -v x="$3" -v mail="$MAIL" -v iban="$IBAN" -v akid="$AKID" 'BEGIN {
		srand(seed)
		f[1] = "main;serve;charge(" mail ")"; w[1] = 0.10 * x
		f[2] = "main;serve;settle_" iban; w[2] = 0.05
		f[3] = "main;sign_" akid; w[3] = 0.05
		f[4] = "main;serve;render"; w[4] = 0.40
		f[5] = "main;gc"; w[5] = 0.40
		for (i = 1; i <= 5; i++) { w[i] *= 0.95 + 0.1 * rand(); t += w[i] }
		for (i = 1; i <= 5; i++) print f[i] " " int(20000 * w[i] / t + 0.5)
	}' >"$1"
}
man=$T/manifest.jsonl
: >"$man"
for d in $(seq 10 -1 1); do
	capture "$T/b-$d.folded" "$d" 1
	printf '{"path": "%s", "service": "checkout", "release": "v1", "time": "%s"}\n' \
		"$T/b-$d.folded" "$(date -u -d "2026-03-15T00:00:00Z - $d days" +%Y-%m-%dT%H:%M:%SZ)" >>"$man"
done
for i in 1 2 3 4; do
	capture "$T/c-$i.folded" "$((100 + i))" 2
	printf '{"path": "%s", "service": "checkout", "release": "v2", "time": "2026-03-15T0%d:00:00Z"}\n' \
		"$T/c-$i.folded" "$i" >>"$man"
done
run pr --quiet ingest --manifest "$man" --format folded
[ $RC -eq 0 ] && ok "14 captures with personal data in names ingest" || not_ok "ingest" "$ERR"

# leaks TEXT: what of the address, the IBAN and the key id TEXT holds.
leaks() { grep -o -e "$MAIL" -e "jane" -e "$IBAN" -e "$AKID" <<<"$1" | sort -u | tr '\n' ' '; }

run pr analyze --service checkout --release v2 --at 2026-03-15T12:00:00Z --json
[ $RC -eq 0 ] && [ "$(jq -c '[.findings[] | select(.direction == "regression") | .function]' \
	<<<"$OUT")" = '["charge(#)"]' ] &&
	ok "the doubled function is found, named charge(#)" ||
	not_ok "finding" "rc=$RC $(jq -c '[.findings[] | {function, direction}]' <<<"$OUT") $ERR"
[ -z "$(leaks "$OUT$ERR")" ] && ok "analyze's output holds no address, IBAN or key id" ||
	not_ok "analyze leaks" "$(leaks "$OUT$ERR")"

run_id=$(sql "select max(id) from runs")
all=""
for fmt in html md json; do
	run pr report --run "$run_id" --format "$fmt" --out -
	all="$all$OUT$ERR"
done
run pr finding list
all="$all$OUT$ERR"
run pr finding show "$(sql "select min(id) from findings")"
all="$all$OUT$ERR"
[ -n "$all" ] && [ -z "$(leaks "$all")" ] &&
	ok "the run's reports, finding list and show hold none of them" ||
	not_ok "reports leak" "$(leaks "$all")"
[ -z "$(leaks "$(sql "select string_agg(name, ' ') from functions")")" ] &&
	[ "$(sql "select count(*) from functions where name in ('settle_#', 'sign_#', 'render')")" = 3 ] &&
	ok "the index holds settle_# and sign_#, and render as it was" ||
	not_ok "index" "$(sql "select string_agg(name, ' ') from functions")"
finish
