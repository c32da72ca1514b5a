#!/bin/bash
# profreg escalate, levels (tests/support/escalate_env.sh: a real
# Prometheus, a driven exporter, real Go services, serve): a host whose
# latency jumps goes to level 1 and is captured; persisting takes it to
# level 2 with a heap profile, then back-to-back captures; back in its
# band it de-escalates after the cooldown; a flapping signal re-escalates
# at most once per window; a host over the load ceiling is skipped and
# audited; the backtest's replay of the stored samples moves the host as
# the runs did.
. "$(dirname "$0")/lib.sh"
NAME=escalate
. "$(dirname "$0")/../support/escalate_env.sh"

# seen HOST...: run E (bounded) until a run has read each HOST's signal, as
# a sample stored of it. On a loaded machine Prometheus's scrape of the
# exporter can miss its timeout (the 1 s scrape interval); the series are
# then stale and a run reads nothing of the host, which leaves the host as
# it was: the next run is the one the step is about.
seen() {
	local h n0=() i
	for h in "$@"; do n0+=("$(sql "select count(*) from signal_samples where host = '$h'")"); done
	for _ in $(seq 10); do
		run E
		i=0
		for h in "$@"; do
			[ "$(sql "select count(*) from signal_samples where host = '$h'")" -gt "${n0[$i]}" ] ||
				continue 2
			i=$((i + 1))
		done
		return 0
	done
	return 1
}
# elapsed HOST COLUMN SECONDS: bounded wait until the database's clock
# (escalate's) is SECONDS past escalation_hosts.COLUMN of HOST.
elapsed() {
	for _ in $(seq 300); do
		[ "$(sql "select extract(epoch from now() - $2) >= $3 from escalation_hosts
			where host = '$1'")" = t ] && return 0
		sleep 0.1
	done
	return 1
}

# --- a latency jump: level 1 and a capture; the host over the load ceiling skipped ----
LAT[127.0.0.2]=0.5
LAT[127.0.0.3]=0.5
publish && scraped || not_ok "scrape"
seen 127.0.0.2 127.0.0.3
[ $RC -eq 0 ] && [ "$(level 127.0.0.2)" = 1 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.2") | .action' <<<"$OUT")" = escalated ] &&
	[ "$(sql "select level from elevated_sessions where host = '127.0.0.2' and ended_at is null")" = 1 ] &&
	ok "a host whose latency jumps goes to level 1 (an elevated session)" ||
	not_ok "level 1" "rc=$RC $(head -c 800 <<<"$OUT") $ERR"
[ "$(sql "select count(*) from capture_requests where source = 'escalate' and '127.0.0.3' = any(hosts)")" = 0 ] &&
	[ -z "$(level 127.0.0.3 | grep -v 0)" ] &&
	[ "$(sql "select count(*) from audit_log where action = 'escalate.skipped'
		and object = 'host:127.0.0.3' and detail->>'reason' = 'load_ceiling'")" = 1 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.3") | .action' <<<"$OUT")" = skipped ] &&
	ok "the host over the load ceiling (20 > 8) is skipped, not profiled, and audited" ||
	not_ok "load ceiling" "$(sql "select action, object, detail from audit_log where object = 'host:127.0.0.3'")"
done_requests 127.0.0.2 1
[ "$(sql "select state from capture_requests where '127.0.0.2' = any(hosts) order by id limit 1")" = done ] &&
	[ "$(sql "select count(*) from profiles where host = '127.0.0.2' and profile_type = 'cpu'
		and tags ? 'incident'")" -ge 1 ] &&
	ok "its capture is taken by serve from the real Go service, tagged with the incident" ||
	not_ok "level 1 capture" "$(sql "select id, state, error from capture_requests")" "$(tail -3 "$T/serve.err")"

# --- it persists: level 2, back-to-back CPU plus a heap profile ---------------------
seen 127.0.0.2
settle 127.0.0.2
# Level 1 captures at most every 2 s (level1.every_s): the next is due after it.
elapsed 127.0.0.2 last_capture_at 2 || not_ok "level 1's every_s passes"
seen 127.0.0.2
[ "$(level 127.0.0.2)" = 2 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.2") | .action' <<<"$OUT" | sort | tr '\n' ' ')" = "capture raised " ] &&
	[ "$(sql "select level from elevated_sessions where host = '127.0.0.2' and ended_at is null")" = 2 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.level' and detail->>'to' = '2'")" = 1 ] &&
	ok "outside its band for 3 runs: level 2, audited" ||
	not_ok "level 2" "$(level 127.0.0.2) $(head -c 800 <<<"$OUT")"
[ "$(sql "select types::text from capture_requests where '127.0.0.2' = any(hosts) order by id desc limit 1")" = "{cpu,heap}" ] &&
	settle 127.0.0.2 &&
	[ "$(sql "select count(*) from profiles where host = '127.0.0.2' and profile_type = 'heap'")" -ge 1 ] &&
	ok "level 2 queues CPU and heap; the heap profile is taken" ||
	not_ok "level 2 heap" "$(sql "select id, types, state, error from capture_requests")"
seen 127.0.0.2
[ "$(jq -r '.decisions[] | select(.host == "127.0.0.2") | .action' <<<"$OUT")" = capture ] &&
	ok "level 2 captures back to back: the next request as soon as the last is done" ||
	not_ok "back to back" "$(jq -c .decisions <<<"$OUT")" \
		"$(sql "select id, types, state, created_at, started_at, finished_at from capture_requests")"

# --- back in its band: de-escalated after the cooldown -----------------------------
LAT[127.0.0.2]=0.05
publish && scraped || not_ok "scrape"
seen 127.0.0.2
[ "$(level 127.0.0.2)" = 2 ] &&
	[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.2' and ended_at is null")" = 1 ] &&
	ok "back inside its band: still elevated during the cooldown" || not_ok "cooldown" "$(level 127.0.0.2)"
# The cooldown (cooldown_s, 2 s) since it came back inside, on escalate's clock.
elapsed 127.0.0.2 in_band_since 2 || not_ok "the cooldown passes"
seen 127.0.0.2
[ "$(level 127.0.0.2)" = 0 ] &&
	[ "$(sql "select end_reason from elevated_sessions where host = '127.0.0.2'")" = deescalated ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.deescalated' and object = 'host:127.0.0.2'")" = 1 ] &&
	ok "after the cooldown (2 s) inside the band it de-escalates to level 0, audited" ||
	not_ok "de-escalation" "$(level 127.0.0.2) $(head -c 600 <<<"$OUT")"

# --- flapping: up, down, up, down, ... one session per re-escalation window ----------
for _ in 1 2 3; do
	LAT[127.0.0.2]=0.5
	publish && scraped || not_ok "scrape"
	seen 127.0.0.2
	LAT[127.0.0.2]=0.05
	publish && scraped || not_ok "scrape"
	seen 127.0.0.2
done
[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.2'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'capture.refused'
		and detail->>'host' = '127.0.0.2' and detail->>'refused' = 'reescalate'")" = 3 ] &&
	ok "a flapping signal does not re-escalate inside the window: 3 refusals (reescalate), audited" ||
	not_ok "flapping" "$(sql "select host, started_at, end_reason from elevated_sessions")"

# --- the backtest replays the same rules over the samples these runs stored -------------
first=$(sql "select to_char(min(at) at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')
	from signal_samples where host = '127.0.0.2' and outside")
since=$(sql "select to_char(min(at) at time zone 'UTC' - interval '1 second',
	'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from signal_samples")
nreq=$(sql "select count(*) from capture_requests")
want='["escalated","raised","deescalated",'
want+='"refused:reescalate","refused:reescalate","refused:reescalate"]'
run pr --config "$T/cfg.json" backtest --since "$since" --json
ev=$(jq -c '[.escalation.services[0].events[] | select(.host == "127.0.0.2")
	| .action + (if .action == "refused" then ":" + (.why | split(" ")[0]) else "" end)]' <<<"$OUT")
[ $RC -eq 0 ] && [ "$(jq -r '.escalation.services[0].events[] | select(.host == "127.0.0.2"
	and .action == "escalated") | .at' <<<"$OUT" | head -1)" = "${first/.000000Z/Z}" ] &&
	[ "$ev" = "$want" ] &&
	[ "$(sql "select count(*) from capture_requests")" = "$nreq" ] &&
	ok "the backtest's replay of these samples moves 127.0.0.2 as the runs did, storing nothing" ||
	not_ok "replay" "rc=$RC $ERR first=$first $ev" "$(jq -c .escalation.services[0].events <<<"$OUT")"

finish
