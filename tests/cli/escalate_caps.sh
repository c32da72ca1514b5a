#!/bin/bash
# profreg escalate, safeguards and bad answers
# (tests/support/escalate_env.sh: a real Prometheus, a driven exporter,
# real Go services, serve): a session ends at its hard expiry while the
# signal stays high and does not reopen; a fleet-wide spike on 20 hosts
# elevates no more than the fleet cap; Prometheus down, an answer that is
# not its JSON and an answer over the size cap are each one line, exit 3,
# nothing stored.
. "$(dirname "$0")/lib.sh"
NAME=escalate_caps
. "$(dirname "$0")/../support/escalate_env.sh"

# --- hard expiry while the signal stays high ------------------------------------------
LAT[127.0.0.4]=0.5
publish && scraped || not_ok "scrape"
run pr --config "$T/cfg_expiry.json" escalate --json
[ "$(level 127.0.0.4)" = 1 ] && ok "host 127.0.0.4 escalates (a session of 4 s at most)" ||
	not_ok "expiry escalation" "$(head -c 600 <<<"$OUT")"
for _ in $(seq 100); do
	run pr --config "$T/cfg_expiry.json" escalate --json
	[ "$(level 127.0.0.4)" = 0 ] && break
	sleep 0.2
done
[ "$(sql "select end_reason from elevated_sessions where host = '127.0.0.4'")" = expired ] &&
	[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.4'
		and ended_at - started_at <= interval '4 s'")" = 1 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'session.expired' and object = 'host:127.0.0.4'")" = 1 ] &&
	ok "the session ends at its hard expiry (4 s); level 0" ||
	not_ok "expiry" "$(sql "select host, started_at, expires_at, ended_at, end_reason from elevated_sessions where host = '127.0.0.4'")" \
		"$(sql "select action, detail from audit_log where object = 'host:127.0.0.4'")" \
		"$(sql "select at, value, outside from signal_samples where host = '127.0.0.4' order by at desc limit 3")"
# This run starts after the expiry (the run that ended the session may
# have started just before it): its sample is the signal still high.
run pr --config "$T/cfg_expiry.json" escalate --json
[ "$(sql "select count(*) from elevated_sessions where host = '127.0.0.4'")" = 1 ] &&
	[ "$(sql "select count(*) from signal_samples s join elevated_sessions e on e.host = s.host
		where s.host = '127.0.0.4' and s.at >= e.ended_at and s.outside")" -ge 1 ] &&
	[ "$(jq -r '.decisions[] | select(.host == "127.0.0.4") | .action + " " + .why' <<<"$OUT" | cut -d' ' -f1-2)" = "refused reescalate" ] &&
	ok "and the signal, still high after it, does not open another inside the window" ||
	not_ok "no re-escalation after expiry" "$(head -c 600 <<<"$OUT")"

# --- a fleet-wide spike on 20 hosts: no more than the fleet cap (3) -------------------
for h in $FLEET; do LAT[$h]=0.5; done
publish && scraped || not_ok "scrape"
run pr --config "$T/cfg_fleet.json" escalate --json
open=$(sql "select count(*) from elevated_sessions where ended_at is null")
[ "$open" = 3 ] && [ "$(jq '.counts.escalated' <<<"$OUT")" -le 3 ] &&
	[ "$(jq '[.decisions[] | select(.action == "refused" and (.why | startswith("fleet_cap")))] | length' <<<"$OUT")" -ge 17 ] &&
	ok "a fleet-wide spike on 20 hosts opens 3 sessions (the fleet cap); the rest refused fleet_cap" ||
	not_ok "fleet cap" "open=$open $(jq -c .counts <<<"$OUT")"
[ "$(sql "select count(*) from escalation_hosts where level > 0")" = 3 ] &&
	ok "and only those 3 hosts are above level 0" ||
	not_ok "fleet levels" "$(sql "select host, level from escalation_hosts where level > 0")"

# --- Prometheus down, answering garbage, answering too much: one line, exit 3 -----------
sed "s|\"prometheus\": \"$PU\"|\"prometheus\": \"http://127.0.0.1:9\"|" "$T/cfg.json" >"$T/cfg_down.json"
sed "s|\"prometheus\": \"$PU\"|\"prometheus\": \"http://127.0.0.1:$(cat "$T/exp.port")\"|" \
	"$T/cfg.json" >"$T/cfg_garbage.json"
sed "s|\"timeout_ms\": 3000,|\"timeout_ms\": 3000, \"max_response_bytes\": 1024,|" \
	"$T/cfg.json" >"$T/cfg_big.json"
before=$(sql "select count(*) from signal_samples")
run pr --config "$T/cfg_down.json" escalate
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"service 'checkout' failed: cannot query prometheus for signal 'p99_latency'"* ]] &&
	ok "prometheus unreachable: exit 3, one line naming the service and the signal" ||
	not_ok "prometheus down" "rc=$RC $ERR"
run pr --config "$T/cfg_garbage.json" escalate
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] &&
	[[ $ERR == *"cannot read prometheus answer to signal 'p99_latency': not JSON"* ]] &&
	ok "an answer that is not Prometheus's JSON: exit 3, one line" || not_ok "garbage" "rc=$RC $ERR"
run pr --config "$T/cfg_big.json" escalate
[ $RC -eq 3 ] && [ "$(grep -c . <<<"$ERR")" = 1 ] && [[ $ERR == *"larger than 1024 bytes"* ]] &&
	ok "an answer over escalate.max_response_bytes: exit 3, one line" || not_ok "oversized" "rc=$RC $ERR"
[ "$(sql "select count(*) from signal_samples")" = "$before" ] &&
	[ "$(sql "select count(*) from runs where kind = 'escalate' and status = 'failed'")" = 3 ] &&
	ok "and nothing is stored or decided from them; the runs are recorded as failed" ||
	not_ok "nothing stored" "$(sql "select count(*) from signal_samples") vs $before"
run pr escalate --bogus
[ $RC -eq 2 ] && ok "an unknown option is a usage error" || not_ok "usage" "rc=$RC"
run pr escalate --help
[ $RC -eq 0 ] && [[ $OUT == *"usage: profreg escalate"* ]] && ok "escalate --help" ||
	not_ok "help" "$OUT"
run pr --config "$T/cfg.json" escalate --service nosuch
[ $RC -eq 4 ] && [[ $ERR == *"service 'nosuch' has no escalate signals"* ]] &&
	ok "an unknown --service is exit 4" || not_ok "unknown service" "rc=$RC $ERR"
run pr escalate
[ $RC -eq 2 ] && [[ $ERR == *"escalate.prometheus"* ]] &&
	ok "without an escalate section: a usage error naming the key" || not_ok "no config" "rc=$RC $ERR"
# A figure, not an assertion: how long a run over 24 hosts takes here.
echo "# escalate runs over 24 hosts: $(sql "select count(*) || ' runs, median ' ||
	round(percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at))::numeric, 3)
	|| ' s, max ' || round(max(extract(epoch from finished_at - started_at))::numeric, 3) || ' s'
	from runs where kind = 'escalate' and status = 'ok'") (load average $(cut -d' ' -f1 /proc/loadavg))"
finish
