#!/bin/bash
# What retention deleted stays deleted: a capture whose file stays in its
# drop folder is stored once, deleted once, and never stored again by
# the nights after (it came back every night, with an audit row each
# way); collect and ingest count it apart; `ingest --again` stores it; a
# capture cut to a summary is still "already stored"; a record whose
# bytes no ingest meets any more is forgotten.
. "$(dirname "$0")/lib.sh"
fresh_db cli_retention_deleted
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_retention_deleted
rm -rf "$T" && mkdir -p "$T/drop"
AT=2026-10-01T02:30:00Z

cat >"$T/profreg.json" <<JSON
{"analysis": {"window_days": 14},
 "retention": {"hot_days": 7, "summary_days": 16},
 "services": {"svc": {"source": {"dir": "$T/drop"}}}}
JSON
P() { pr --config "$T/profreg.json" "$@"; }
pr --quiet service add svc && pr --quiet service enable svc

printf 'main;a 50\nmain;b 30\nmain;old 7\n' >"$T/drop/old.folded"
echo '{"release": "r1", "time": "2026-09-01T00:00:00Z"}' >"$T/drop/old.folded.json"

# Three nights, each followed by retention at the same time.
for night in 1 2 3; do
	run P nightly --at "$AT" --json
	echo "$OUT" >"$T/n$night.json"
	[ $RC -le 3 ] || not_ok "nightly $night" "rc=$RC $ERR"
	run P retention --at "$AT" --json
	echo "$OUT" >"$T/r$night.json"
	[ $RC -eq 0 ] || not_ok "retention $night" "rc=$RC $ERR"
	jq -r '.services.svc.collected.stored' "$T/n$night.json" >>"$T/stored"
	jq -r '.moved.deleted' "$T/r$night.json" >>"$T/deleted"
	sql "select count(*) from audit_log where action in ('ingest', 'retention.delete')" >>"$T/audit"
done
[ "$(tr '\n' ' ' <"$T/stored")" = "1 0 0 " ] &&
	ok "the old drop-folder file is stored the first night only" ||
	not_ok "stored each night" "$(tr '\n' ' ' <"$T/stored")"
[ "$(jq -r '.services.svc.collected.deleted_by_retention' "$T/n3.json")" = 1 ] &&
	ok "the nightly's JSON counts it as deleted by retention" ||
	not_ok "nightly json" "$(cat "$T/n3.json")"
run P nightly --at "$AT"
[[ $OUT == *"svc "*"(1 deleted by retention, not stored again)"* ]] &&
	ok "and its service line says so" || not_ok "nightly text" "rc=$RC $OUT"
[ "$(tr '\n' ' ' <"$T/deleted")" = "1 0 0 " ] &&
	ok "retention deletes it once" || not_ok "deleted each night" "$(tr '\n' ' ' <"$T/deleted")"
[ "$(sql "select count(*) from profiles")" = 0 ] && [ "$(sql "select coalesce(max(id), 0) from profiles")" = 0 ] &&
	ok "no capture of it is left" || not_ok "captures left" "$(sql "select id from profiles")"
[ "$(sql "select action || '|' || count(*) from audit_log where action in ('ingest', 'retention.delete') group by action order by action" | tr '\n' ' ')" = "ingest|1 retention.delete|1 " ] &&
	ok "the audit log has one ingest and one delete" ||
	not_ok "audit" "$(sql "select action || '|' || count(*) from audit_log where action in ('ingest', 'retention.delete') group by action order by action")"
[ "$(tr '\n' ' ' <"$T/audit")" = "2 2 2 " ] &&
	ok "the audit log does not grow with each night" ||
	not_ok "audit grows" "$(tr '\n' ' ' <"$T/audit")"
[ "$(sql "select count(*) || '|' || min(captured_at at time zone 'UTC')::text from deleted_captures")" = "1|2026-09-01 00:00:00" ] &&
	ok "the record holds the capture's time" || not_ok "record time" "$(sql "select * from deleted_captures")"

# collect says what it skipped, apart from what it stored before.
run P collect --json
[ $RC -eq 0 ] && [ "$(jq -r '[.stored, .already_stored, .deleted_by_retention, .services.svc.deleted_by_retention] | join(" ")' <<<"$OUT")" = "0 0 1 1" ] &&
	ok "collect counts it as deleted by retention, in its JSON" || not_ok "collect json" "rc=$RC $OUT $ERR"
run P collect
[ $RC -eq 0 ] && grep -q '1 deleted by retention' <<<"$OUT" && [ -z "$ERR" ] &&
	ok "and in its text, without an error" || not_ok "collect text" "rc=$RC $OUT $ERR"

# An explicit ingest of the file skips it, naming the file and the date.
run P ingest "$T/drop/old.folded" --service svc --release r1 --time 2026-09-01T00:00:00Z
[ $RC -eq 0 ] && grep -q "old.folded': not stored: retention deleted its capture (taken 2026-09-01T00:00:00Z) on $(date -u +%Y-%m-%d)" <<<"$OUT" &&
	grep -q -- '--again' <<<"$OUT" && [ "$(sql "select count(*) from profiles")" = 0 ] &&
	ok "profreg ingest skips it, saying when retention deleted it" || not_ok "ingest skip" "rc=$RC $OUT $ERR"
run P ingest "$T/drop/old.folded" --service svc --release r1 --json
[ $RC -eq 0 ] && [ "$(jq -r '.captures[0].status + "|" + (.deleted_by_retention|tostring)' <<<"$OUT")" = "deleted by retention|1" ] &&
	ok "ingest --json says so" || not_ok "ingest json" "rc=$RC $OUT"
run P ingest "$T/drop/old.folded" --service svc --release r1 --time 2026-09-01T00:00:00Z --again
[ $RC -eq 0 ] && grep -q 'stored as capture' <<<"$OUT" && [ "$(sql "select count(*) from profiles")" = 1 ] &&
	ok "ingest --again stores it all the same" || not_ok "ingest --again" "rc=$RC $OUT $ERR"
run P retention --at "$AT" --json
[ "$(jq -r '.moved.deleted' <<<"$OUT")" = 1 ] && [ "$(sql "select count(*) from deleted_captures")" = 1 ] &&
	ok "deleted again, it is recorded once" || not_ok "second delete" "$OUT"

# A capture cut to a summary (its blob gone, its row kept) is still "already stored".
printf 'main;a 50\nmain;b 30\nmain;mid 7\n' >"$T/drop/mid.folded"
echo '{"release": "r1", "time": "2026-09-20T00:00:00Z"}' >"$T/drop/mid.folded.json"
P --quiet collect >/dev/null
P --quiet retention --at "$AT" >/dev/null
[ "$(sql "select retention_class from profiles")" = summary ] || not_ok "setup: summary capture" "$(sql "select retention_class from profiles")"
run P collect --json
[ "$(jq -r '[.stored, .already_stored, .deleted_by_retention] | join(" ")' <<<"$OUT")" = "0 1 1" ] &&
	ok "a capture cut to a summary is already stored, not deleted" || not_ok "summary capture" "$OUT"

# A record is forgotten once no ingest has met its bytes for summary_days;
# one whose file is still collected is kept.
sql "update deleted_captures set seen_at = now() - interval '20 days'" >/dev/null
rm "$T/drop/old.folded" "$T/drop/old.folded.json"
run P retention --json
[ $RC -eq 0 ] && [ "$(jq -r '.deletions_forgotten' <<<"$OUT")" = 1 ] &&
	[ "$(sql "select count(*) from deleted_captures where captured_at < '2026-09-02'")" = 0 ] &&
	ok "a record no ingest met for summary_days is forgotten" || not_ok "forget" "rc=$RC $OUT $ERR"
printf 'main;a 50\nmain;b 30\nmain;kept 7\n' >"$T/drop/kept.folded"
echo '{"release": "r1", "time": "2026-09-02T00:00:00Z"}' >"$T/drop/kept.folded.json"
P --quiet collect >/dev/null
P --quiet retention --at "$AT" >/dev/null
sql "update deleted_captures set seen_at = now() - interval '20 days'" >/dev/null
run P collect --json
[ "$(jq -r '.deleted_by_retention' <<<"$OUT")" = 2 ] &&
	[ "$(sql "select bool_and(seen_at > now() - interval '1 minute') from deleted_captures")" = t ] &&
	ok "collect marks a record seen when its file is still there" || not_ok "seen" "$OUT"
run P retention --json
[ "$(jq -r '.deletions_forgotten' <<<"$OUT")" = 0 ] && [ "$(sql "select count(*) from deleted_captures")" = 2 ] &&
	ok "so retention keeps it" || not_ok "kept" "$OUT"
finish
