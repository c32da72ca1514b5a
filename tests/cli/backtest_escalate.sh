#!/bin/bash
# profreg backtest replays the escalation rules over stored signal
# samples: a planted excursion (two hosts of "pay" above their band from
# a known minute) escalates at that minute, is raised to level 2 after
# three runs and de-escalates after the cooldown, with the level
# minutes and captures the rules would have spent; the flat service
# "ledger" never escalates; a stricter band escalates nothing; a fleet
# cap of one refuses the second host; an incident is matched within the
# window; nothing is stored or captured; no samples (or no escalate
# section) says so and is not an error.
. "$(dirname "$0")/lib.sh"
fresh_db cli_backtest_escalate
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_backtest_escalate
rm -rf "$T" && mkdir -p "$T"

T0="timestamptz '2026-03-01 00:00:00+00'"
for s in pay ledger; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done
# A service profreg knows, with no signal configured: its incident is one the replay cannot see.
pr --quiet service add search
# One run a minute from 01:00 the day before (the band's hour) to 03:00,
# three hosts each; pay's h2 at 0.07 from 01:30 to 01:34, h3 from 01:31
# to 01:34 (about 7.5 scales above a band of 0.050-0.052: outside, not
# large). A signal the config does not name (gc_pause) is ignored.
sql "insert into signal_samples (service_id, host, signal, at, value)
	select s.id, h, 'p99_latency', $T0 + make_interval(mins => m),
	case when s.name = 'pay' and h = 'h2' and m between 90 and 94 then 0.07
	     when s.name = 'pay' and h = 'h3' and m between 91 and 94 then 0.07
	     else 0.05 + 0.001 * (m % 3) end
	from services s, unnest(array['h1', 'h2', 'h3']) h, generate_series(-60, 180) m
	where s.name in ('pay', 'ledger')" >/dev/null
sql "insert into signal_samples (service_id, host, signal, at, value)
	select s.id, 'h1', 'gc_pause', $T0 + make_interval(mins => m),
	case when m > 30 then 50 else 1 end
	from services s, generate_series(-60, 180) m where s.name = 'pay'" >/dev/null
nsamples=$(sql "select count(*) from signal_samples")

config() { # band_mads fleet_cap
	cat <<EOF
{"serve": {"max_sessions_fleet": $2},
 "escalate": {"band_mads": $1,
              "services": {"pay": {"signals": {"p99_latency": "p99{service=\"pay\"}"}},
                           "ledger": {"signals": {"p99_latency": "p99{service=\"ledger\"}"}}}}}
EOF
}
config 4 10 >"$T/cfg.json"
config 10 10 >"$T/strict.json"
config 4 1 >"$T/fleet1.json"
echo '{}' >"$T/none.json"
printf '%s\n' '{"service":"pay","function":"pay.charge","time":"2026-03-01T01:40:00Z"}' \
	'{"service":"ledger","release":"v2","time":"2026-03-01T01:40:00Z"}' \
	'{"service":"search","release":"v9","time":"2026-03-01T01:40:00Z"}' >"$T/incidents.jsonl"
BT=(backtest --since 2026-03-01T00:00:00Z --until 2026-03-01T03:00:00Z)
svc() { jq -c --arg s "$1" ".escalation.services[] | select(.service == \$s) | $2" "$T/bt.json"; }

run pr --config "$T/cfg.json" "${BT[@]}" --incidents "$T/incidents.jsonl" --json
echo "$OUT" >"$T/bt.json"
[ $RC -eq 0 ] && [ "$(jq .escalation.replayed "$T/bt.json")" = true ] &&
	[ "$(jq .escalation.samples "$T/bt.json")" = $((2 * 3 * 180)) ] &&
	ok "the escalation rules are replayed over the range's samples (1080 of 2 services)" ||
	not_ok "replayed" "rc=$RC $ERR $(head -c 600 "$T/bt.json")"
[ "$(svc pay .first_escalation)" = '{"at":"2026-03-01T01:30:00Z","host":"h2","level":1}' ] &&
	[ "$(svc pay '[.events[] | select(.action == "escalated") | [.at, .host, .to]]')" = \
		'[["2026-03-01T01:30:00Z","h2",1],["2026-03-01T01:31:00Z","h3",1]]' ] &&
	ok "the planted excursion escalates to level 1 at its minute (01:30 h2, 01:31 h3)" ||
	not_ok "planted" "$(svc pay .first_escalation) $(svc pay .events)"
[ "$(svc pay '[.events[] | select(.action == "raised") | [.at, .host]]')" = \
	'[["2026-03-01T01:32:00Z","h2"],["2026-03-01T01:33:00Z","h3"]]' ] &&
	[ "$(svc pay .escalations)" = '{"level1":2,"level2":2}' ] &&
	[ "$(svc pay '[.events[] | select(.action == "lowered") | .at]')" = \
		'["2026-03-01T01:37:00Z","2026-03-01T01:38:00Z"]' ] &&
	ok "three runs outside raise each host to level 2, lowered when its 300 s window is over" ||
	not_ok "level 2" "$(svc pay .events)"
[ "$(svc pay '[.events[] | select(.action == "deescalated") | [.at, .host, .from]]')" = \
	'[["2026-03-01T01:40:00Z","h2",1],["2026-03-01T01:40:00Z","h3",1]]' ] &&
	[ "$(svc pay .deescalated)" = 2 ] &&
	ok "back inside from 01:35, both de-escalate after the 300 s cooldown, at 01:40" ||
	not_ok "cooldown" "$(svc pay .events)"
# h2: level 1 01:30-01:32 and 01:37-01:40, level 2 01:32-01:37; h3: 01:31-01:33 and
# 01:38-01:40, level 2 01:33-01:38. Captures: h2 at 01:30 and 01:39 (level 1 every 180 s)
# and 01:32-01:36 (level 2 back to back), h3 at 01:31 and 01:33-01:37.
[ "$(svc pay '.host_minutes | .level1 == 9 and .level2 == 10')" = true ] &&
	[ "$(svc pay .captures)" = '{"level1":3,"level2":10,"heap":10,"cpu_seconds":680}' ] &&
	ok "host-minutes at each level (9, 10) and the captures they cost (13, 680 CPU seconds)" ||
	not_ok "cost" "$(svc pay .host_minutes) $(svc pay .captures)"
# With pay's sources in the configuration, taking CPU profiles only, the
# replay counts no heap profile, as escalate would ask none.
jq '. + {services: {pay: {types: ["cpu"], sources: [{type: "pprof_http",
	targets: ["h1:6060", "h2:6060", "h3:6060"]}]}}}' "$T/cfg.json" >"$T/cpuonly.json"
run pr --config "$T/cpuonly.json" "${BT[@]}" --json
[ $RC -eq 0 ] && [ "$(jq -c '.escalation.services[] | select(.service == "pay") | .captures' <<<"$OUT")" = \
	'{"level1":3,"level2":10,"heap":0,"cpu_seconds":680}' ] &&
	ok "a service whose source takes CPU profiles only costs no heap profile in the replay" ||
	not_ok "cpu-only replay" "rc=$RC $ERR $(jq -c '.escalation.services[0].captures' <<<"$OUT")"
[ "$(svc ledger .escalations)" = '{"level1":0,"level2":0}' ] &&
	[ "$(svc ledger .first_escalation)" = null ] &&
	[ "$(svc ledger .events)" = '[]' ] && [ "$(svc ledger .status)" = '"replayed"' ] &&
	[ "$(svc ledger .samples)" = 540 ] &&
	ok "the flat service is replayed and never escalates" || not_ok "flat" "$(svc ledger .)"
[ "$(jq -c '.escalation.incidents[0] | [.signals, .escalated, .window_s, .first]' "$T/bt.json")" = \
	'[true,true,1800,{"at":"2026-03-01T01:30:00Z","host":"h2","level":1,"offset_s":-600}]' ] &&
	[ "$(jq -c '.escalation.incidents[1] | [.signals, .escalated, .first]' "$T/bt.json")" = \
		'[true,false,null]' ] &&
	[ "$(jq -c '.escalation.incidents[2] | [.signals, .escalated]' "$T/bt.json")" = \
		'[false,false]' ] &&
	ok "incidents: pay's escalated 600 s before it, ledger's not, search has no signals" ||
	not_ok "incidents" "$(jq -c .escalation.incidents "$T/bt.json")"
run pr --config "$T/cfg.json" "${BT[@]}" --incidents "$T/incidents.jsonl" \
	--escalation-window 5m --json
[ $RC -eq 0 ] &&
	[ "$(jq -c '.escalation.incidents[0] | [.escalated, .window_s]' <<<"$OUT")" = \
		'[false,300]' ] &&
	ok "--escalation-window 5m: the escalation 10 minutes before no longer counts" ||
	not_ok "window" "rc=$RC $ERR"
[ "$(sql "select count(*) from signal_samples")" = "$nsamples" ] &&
	[ "$(sql "select (select count(*) from capture_requests)
		+ (select count(*) from elevated_sessions)
		+ (select count(*) from escalation_hosts) + (select count(*) from runs)
		+ (select count(*) from audit_log
		   where action like 'session.%' or action like 'capture.%')")" = 0 ] &&
	ok "nothing stored: no sample, request, session, level, run or audit row" ||
	not_ok "stored" "$(sql "select action, count(*) from audit_log group by 1")"

# Another config on the same history.
run pr --config "$T/strict.json" "${BT[@]}" --json
[ $RC -eq 0 ] &&
	[ "$(jq -c '.escalation.services[0].escalations' <<<"$OUT")" = \
		'{"level1":0,"level2":0}' ] &&
	ok "band_mads 10: the same excursion stays inside the band, no escalation" ||
	not_ok "strict" "rc=$RC $(jq -c .escalation.services[0] <<<"$OUT")"
run pr --config "$T/fleet1.json" "${BT[@]}" --json
[ $RC -eq 0 ] && [ "$(jq -c '.escalation.services[0] | [.escalations, .refused]' <<<"$OUT")" = \
	'[{"level1":1,"level2":1},{"fleet_cap":4}]' ] &&
	ok "a fleet cap of one session: h3 is refused (fleet_cap) on each of its 4 runs outside" ||
	not_ok "fleet cap" "rc=$RC $(jq -c .escalation.services[0] <<<"$OUT")"

# The text.
run pr --config "$T/cfg.json" "${BT[@]}" --incidents "$T/incidents.jsonl"
[ $RC -eq 0 ] && [[ $OUT == *"escalation replay: 1080 signal samples"* ]] &&
	[[ $OUT == *"the load and memory ceilings are not replayed"* ]] &&
	grep -Eq '^pay +2 +2 +9 +10 +13 +2026-03-01T01:30:00Z h2 *$' <<<"$OUT" &&
	grep -Eq '^ledger +0 +0 +0 +0 +0 +replayed *$' <<<"$OUT" &&
	grep -q '^pay .*2026-03-01T01:30:00Z h2 level 1 (-600 s)' <<<"$OUT" &&
	grep -q '^search .*no signal samples' <<<"$OUT" &&
	ok "the text gives the replay's counts per service and the incidents" ||
	not_ok "text" "$OUT"
[ -z "$(sed -n '/^escalation replay/,$p' <<<"$OUT" | awk 'length > 80')" ] &&
	ok "the replay's text fits 80 columns" || not_ok "80 columns" "$OUT"

# Hostile host names (a terminal escape, a bidirectional override, 256 bytes) are
# shown escaped in the text and kept whole in the JSON.
pr --quiet service add odd && pr --quiet service enable odd
long=$(printf 'x%.0s' $(seq 256))
sql "insert into signal_samples (service_id, host, signal, at, value)
	select s.id, h, 'p99_latency', $T0 + make_interval(mins => m),
	case when m between 90 and 94 then 0.07 else 0.05 + 0.001 * (m % 3) end
	from services s, unnest(array[E'\\x1b[31mevil\\u202e', '$long']) h,
	generate_series(-60, 180) m where s.name = 'odd'" >/dev/null
echo '{"escalate": {"services": {"odd": {"signals": {"p99_latency": "q"}}}}}' >"$T/odd.json"
run pr --config "$T/odd.json" "${BT[@]}" --json
[ $RC -eq 0 ] && [ "$(jq -r '.escalation.services[0].first_escalation.host' <<<"$OUT")" = \
	$'\x1b[31mevil\u202e' ] &&
	[ "$(jq '[.escalation.services[0].events[] | select(.action == "escalated")] | length' \
		<<<"$OUT")" = 2 ] &&
	ok "hostile host names are replayed like any other, whole in the JSON" ||
	not_ok "hostile json" "rc=$RC $ERR $(jq -c .escalation.services[0].first_escalation <<<"$OUT")"
run pr --config "$T/odd.json" "${BT[@]}"
out=$OUT
run pr --config "$T/odd.json" --wide "${BT[@]}"
[ $RC -eq 0 ] && [[ $out$OUT != *$'\x1b'* ]] && [[ $out$OUT != *$'\u202e'* ]] &&
	[[ $OUT == *'\x1b[31mevil\u{202e}'* ]] &&
	ok "... and escaped in the text (whole with --wide)" ||
	not_ok "hostile text" "$(cat -v <<<"$out$OUT")"

# Edges: no samples in the range, no escalate section, a bad window.
EMPTY=(backtest --since 2026-02-01T00:00:00Z --until 2026-02-02T00:00:00Z)
run pr --config "$T/cfg.json" "${EMPTY[@]}" --json
[ $RC -eq 0 ] && [ "$(jq .escalation.replayed <<<"$OUT")" = false ] &&
	[ "$(jq -r .escalation.reason <<<"$OUT")" = \
		"no signal samples of the escalate services in the range" ] &&
	[ "$(jq -r '.escalation.services[0].status' <<<"$OUT")" = "no samples" ] &&
	ok "no samples in the range: says so, exit 0" || not_ok "no samples" "rc=$RC $ERR $OUT"
run pr --config "$T/cfg.json" "${EMPTY[@]}"
[ $RC -eq 0 ] && [[ $OUT == *"escalation replay: nothing replayed: no signal samples"* ]] &&
	ok "... and the text says so" || not_ok "no samples text" "rc=$RC $OUT"
run pr --config "$T/none.json" "${BT[@]}" --json
[ $RC -eq 0 ] && [ "$(jq -c '.escalation | [.replayed, .reason]' <<<"$OUT")" = \
	'[false,"the config has no escalate services"]' ] &&
	ok "no escalate section: nothing replayed, says why" || not_ok "no section" "rc=$RC $OUT"
run pr --config "$T/none.json" "${BT[@]}"
[ $RC -eq 0 ] && [[ $OUT != *"escalation"* ]] &&
	ok "... and the text is the nightly replay's alone" ||
	not_ok "no section text" "$OUT"
sql "update services set enabled = false where name = 'ledger'" >/dev/null
run pr --config "$T/cfg.json" "${BT[@]}" --json
[ $RC -eq 0 ] && [ "$(jq -r '.escalation.services[1].status' <<<"$OUT")" = "not enabled" ] &&
	[ "$(jq .escalation.samples <<<"$OUT")" = 540 ] &&
	ok "a service not enabled is not replayed" ||
	not_ok "disabled" "rc=$RC $(jq -c .escalation.services[1] <<<"$OUT")"
run pr --config "$T/cfg.json" "${BT[@]}" --escalation-window soon
[ $RC -eq 2 ] && [[ $ERR == *"'--escalation-window soon' is not a duration"* ]] &&
	ok "a bad --escalation-window is a usage error" || not_ok "bad window" "rc=$RC $ERR"
finish
