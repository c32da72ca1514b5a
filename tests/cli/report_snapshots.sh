#!/bin/bash
# Incident snapshots in a finding's report: those taken on a capture's host
# within 15 minutes of the capture are listed beside it, with their id and
# the command that extracts them; snapshots of other hosts or other times
# are not.
. "$(dirname "$0")/lib.sh"
fresh_db cli_report_snapshots
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_report_snapshots
rm -rf "$T" && mkdir -p "$T"

pr --quiet service add web && pr --quiet service enable web
while read -r f rel at; do
	pr --quiet ingest "$f" --service web --release "$rel" --time "$at" --host "h-$rel" --type cpu
done < <(bash "$PROFREG_TEST_DATA/reports/web.sh" "$T/caps")
pr --quiet analyze --service web --release v2 --at 2026-03-11T00:00:00Z --min-captures 5 >/dev/null
fid=$(sql "select id from findings where function = 'checkout.computeTax' and direction = 'regression'")
[ -n "$fid" ] && ok "the known regression is found" || not_ok "analyze"

# Snapshots as the snapshots table holds them (written here directly: what is
# tested is the report, not the taking).
snap() { # host time incident
	sql "insert into snapshots (host, taken_at, incident, reason, service, blob_key, archive_bytes, manifest, stored_by)
	     values ('$1', '$2', nullif('$3', ''), 'test <b>reason</b>', 'web', encode(sha256('$1$2'::bytea), 'hex'), 100, '{}', 'test')
	     returning id"
}
near_cur=$(snap h-v2 2026-03-10T18:05:30Z 'INC-7 <script>')
near_base=$(snap h-v1 2026-03-05T05:50:00Z '')
far=$(snap h-v2 2026-03-10T18:40:00Z INC-8)
other=$(snap h-other 2026-03-10T18:00:00Z INC-9)
cap=$(sql "select id from profiles where host = 'h-v2' and captured_at = '2026-03-10T18:00:00Z'")
cap_base=$(sql "select id from profiles where host = 'h-v1' and captured_at = '2026-03-05T06:00:00Z'")

run pr report --finding "$fid" --out "$T/f.html"
[ $RC -eq 0 ] && grep -q '<h3>Incident snapshots</h3>' "$T/f.html" && ok "the finding's report has an incident snapshots section" || not_ok "section" "$ERR"
row() { grep -o "<tr id=\"snapshot-$1\">.*</tr>" "$T/f.html"; }
r=$(row "$near_cur")
grep -q "<td>$cap (+5m30s)</td>" <<<"$r" && grep -q "profreg snapshot extract $near_cur --dir snapshot-$near_cur" <<<"$r" &&
	ok "a snapshot of the capture's host 5 minutes after it is listed beside it, with the extract command" || not_ok "near current" "$r"
grep -q 'INC-7 &lt;script&gt;' <<<"$r" && grep -q 'test &lt;b&gt;reason&lt;/b&gt;' <<<"$r" && ok "its incident and reason are escaped" || not_ok "escaping" "$r"
grep -q "<td>$cap_base (-10m00s)</td>" <<<"$(row "$near_base")" && ok "a baseline capture's snapshot 10 minutes before it is listed too" || not_ok "near base" "$(row "$near_base")"
[ -z "$(row "$far")" ] && ok "a snapshot 20 minutes from any capture of its host is not" || not_ok "far" "$(row "$far")"
[ -z "$(row "$other")" ] && ok "a snapshot of another host at the same time is not" || not_ok "other host" "$(row "$other")"
grep -q "<a href=\"#snapshot-$near_cur\">$near_cur</a>" "$T/f.html" && ok "the capture's row links to its snapshot" || not_ok "capture link"

# A finding's snapshots are its own team's, in every report of it: on a
# shared host, another team's (its incident, its free-text reason) and
# the host's own (no service: admins only) stay out.
sql "update services set team = 'payments' where name = 'web'" >/dev/null
pr --quiet service add ledger --team ops
snap_of() { # service host time incident reason ('' service: the host's own)
	sql "insert into snapshots (host, taken_at, incident, reason, service, blob_key, archive_bytes, manifest, stored_by)
	     values ('$2', '$3', '$4', '$5', nullif('$1', ''), encode(sha256('$1$2$3'::bytea), 'hex'), 100, '{}', 'test')
	     returning id"
}
host_own=$(snap_of '' h-v2 2026-03-10T18:02:00Z HOST-1 'host check')
theirs=$(snap_of ledger h-v2 2026-03-10T18:03:00Z OPS-42 'customer card 4111111111111111')
ours=$(snap_of web h-v2 2026-03-10T18:04:00Z PAY-7 'checkout slow')
rid=$(sql "select max(run_id) from run_findings where finding_id = $fid")
run pr report --run "$rid" --team payments --out "$T/team.html"
[ $RC -eq 0 ] && grep -q "<tr id=\"snapshot-$ours\">" "$T/team.html" &&
	ok "a team's report lists its own service's snapshot" || not_ok "team: ours" "$ERR"
! grep -q "snapshot-$theirs\|OPS-42\|4111111111111111" "$T/team.html" &&
	ok "a team's report leaves out another team's snapshot on the same host" ||
	not_ok "team: theirs" "$(grep -o '.\{0,80\}OPS-42.\{0,80\}' "$T/team.html" | head -n 1)"
! grep -q "<tr id=\"snapshot-$host_own\">" "$T/team.html" &&
	ok "and the host's snapshot of no service" || not_ok "team: host's own"
sibling=$(snap_of shop h-v2 2026-03-10T18:06:00Z PAY-8 'shop slow too')
pr --quiet service add shop --team payments
for what in "--finding $fid" "--run $rid"; do
	# shellcheck disable=SC2086
	run pr report $what --out "$T/one.html"
	[ $RC -eq 0 ] && grep -q "<tr id=\"snapshot-$ours\">" "$T/one.html" &&
		grep -q "<tr id=\"snapshot-$sibling\">" "$T/one.html" &&
		ok "report $what lists the snapshots of its service and its team's others" ||
		not_ok "one service: ours ($what)" "$ERR"
	! grep -q "snapshot-$theirs\|OPS-42\|4111111111111111" "$T/one.html" &&
		! grep -q "<tr id=\"snapshot-$host_own\">" "$T/one.html" &&
		ok "report $what leaves out another team's snapshot and the host's own" ||
		not_ok "one service: theirs ($what)" \
			"$(grep -o '.\{0,80\}OPS-42.\{0,80\}' "$T/one.html" | head -n 1)"
done
finish
