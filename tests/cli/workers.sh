#!/bin/bash
# A nightly spread over `profreg worker` processes through PostgreSQL:
# the same fleet analysed by one process and by a coordinator with
# workers, one of which is killed with SIGKILL in the middle of a task
# (held there with the test-only PROFREG_TEST_WORKER_HOLD_S) and another
# stopped with SIGTERM while holding one; the killed worker's task is
# claimed again once its lease runs out, the findings equal the single
# process's exactly, and each page is sent once. Then a coordinator with
# no worker running works every task itself, the tasks of a
# coordinator killed mid-run are left alone until the next night, and a
# worker the database drops connects again and keeps its leases.
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
PD_SERVER=${PD_SERVER:-$BUILD/servers/pd_server}
T=$PROFREG_TEST_TMP/cli_workers
rm -rf "$T" && mkdir -p "$T/drop"
PIDS=""
trap 'for p in $PIDS; do kill -9 "$p" 2>/dev/null; done' EXIT
[ -x "$PD_SERVER" ] || { not_ok "pd_server is built ($PD_SERVER)"; finish; exit 1; }

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 6 --functions 50 --factors 2,3 \
	--bands 10-30 --regressed 0.5 --seed 77 --days 6 --per-day 2 --current 3 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
while IFS= read -r line; do
	path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$line")
	svc=$(sed 's/.*"service":"\([^"]*\)".*/\1/' <<<"$line")
	mkdir -p "$T/drop/$svc"
	cp "$T/fleet/$path" "$T/drop/$svc/$(basename "$path")"
	sed 's/"path":"[^"]*",//; s/"service":"[^"]*",//' <<<"$line" >"$T/drop/$svc/$(basename "$path").json"
done <"$T/fleet/manifest.jsonl"

# start_pd NAME: a PagerDuty stand-in logging each request; sets PORT.
start_pd() {
	"$PD_SERVER" --port-file "$T/$1.port" --log "$T/$1.log" --script 202 --timeout 300 &
	PIDS="$PIDS $!"
	for _ in $(seq 100); do [ -s "$T/$1.port" ] && break; sleep 0.05; done
	PORT=$(cat "$T/$1.port")
	touch "$T/$1.log"
}

# cfg FILE COORDINATOR_WORKS: the services' drop folders, paging, workers.
cfg() {
	{
		echo '{"services": {'
		sep=""
		while read -r s; do
			printf '%s"%s": {"team": "t", "source": {"dir": "%s"}}' "$sep" "$s" "$T/drop/$s"
			sep=","
		done <"$T/fleet/services.txt"
		echo '},'
		echo "\"paging\": {\"min_severity\": \"high\", \"backoff_ms\": 20, \"max_attempts\": 2,"
		echo " \"targets\": {\"pd\": {\"type\": \"pagerduty\", \"url\": \"http://127.0.0.1:$PORT\","
		echo "  \"secret_env\": \"PROFREG_PD_KEY\"}}, \"default\": [\"pd\"], \"teams\": {}},"
		echo "\"workers\": {\"lease_s\": 2, \"poll_ms\": 100, \"max_attempts\": 3,"
		echo " \"coordinator_works\": $2}}"
	} >"$1"
}
export PROFREG_PD_KEY=pdtestkey0123456789abcdefWORKERS

# The findings of a nightly --json, in a form two runs can be compared by.
findings() {
	jq -S '[.findings_list[] | {service, type, kind, function, direction, severity, state,
		baseline_share, current_share, delta, ci_low, ci_high, p_value, q_value, mw_p,
		score, p_seq, look, current_release, baseline_releases}]
		| sort_by(.service, .type, .function)' "$1"
}

# --- one process ------------------------------------------------------------
fresh_db cli_workers_one
pr --quiet db init
start_pd pd1
cfg "$T/one.json" true
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
run pr --config "$T/one.json" nightly --at "$at" --json
echo "$OUT" >"$T/one.out"
[ $RC -eq 0 ] && ok "a single-process night succeeds" || not_ok "single night" "rc=$RC $ERR"
findings "$T/one.out" >"$T/one.findings"
nfind=$(jq length "$T/one.findings")
[ "$nfind" -ge 3 ] && ok "it finds the injected regressions ($nfind findings)" || not_ok "findings" "$nfind"
npages1=$(wc -l <"$T/pd1.log")
[ "$npages1" -ge 1 ] && ok "and pages ($npages1)" || not_ok "pages" "$npages1"
[ "$(sql "select count(*) from tasks")" = 0 ] && ok "a night without workers queues no task" ||
	not_ok "tasks without workers"
DB1=$DB HOME1=$HOME_DIR
# The stored findings at full precision (PostgreSQL prints a double exactly).
stored() {
	psql "$1" -qAt -c "select s.name, f.profile_type, f.function, f.direction, f.severity, f.state,
		f.p_value::text, f.q_value::text, f.delta::text, f.ci_low::text, f.ci_high::text,
		f.score::text from findings f join services s on s.id = f.service_id
		order by 1, 2, 3, 4"
}
stored "$DB1" >"$T/one.stored"

# --- a coordinator and workers, one killed, one stopped ------------------------
fresh_db cli_workers_many
pr --quiet db init
start_pd pd2
cfg "$T/many.json" false
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
# The processes themselves, not shell functions: $! must be the worker's pid.
P=("$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/many.json")
PROFREG_TEST_WORKER_HOLD_S=120 "${P[@]}" worker --id held-A >"$T/A.out" 2>&1 &
A=$!
PIDS="$PIDS $A"
PROFREG_TEST_WORKER_HOLD_S=120 "${P[@]}" worker --id held-D >"$T/D.out" 2>&1 &
D=$!
PIDS="$PIDS $D"
"${P[@]}" nightly --at "$at" --workers --json >"$T/many.out" 2>"$T/many.err" &
N=$!
PIDS="$PIDS $N"
for _ in $(seq 200); do
	[ "$(sql "select count(*) from tasks where state = 'leased' and worker in ('held-A', 'held-D')")" = 2 ] && break
	sleep 0.1
done
tA=$(sql "select id from tasks where state = 'leased' and worker = 'held-A'")
tD=$(sql "select id from tasks where state = 'leased' and worker = 'held-D'")
[ -n "$tA" ] && [ -n "$tD" ] && ok "two workers each claim a task and hold it" ||
	not_ok "claims" "$(sql "select id, state, worker from tasks")"
[ "$(sql "select count(*) from tasks where state = 'queued'")" = 4 ] &&
	ok "no other task is claimed twice: the rest wait queued" || not_ok "queued" "$(sql "select id, state, worker from tasks")"
sleep 2.5
[ "$(sql "select state from tasks where id = ${tA:-0}")" = leased ] &&
	ok "a live worker keeps its lease past its length (renewed)" || not_ok "renewal" "$(sql "select state, lease_until, now() from tasks where id = ${tA:-0}")"
kill -9 "$A"
wait "$A" 2>/dev/null
kill -TERM "$D"
wait "$D"
rcD=$?
[ $rcD -eq 0 ] && grep -q "given back" "$T/D.out" && [ "$(sql "select state || ' ' || attempts from tasks where id = ${tD:-0}")" = "queued 0" ] &&
	ok "SIGTERM while holding a task gives it back at once and exits 0" || not_ok "SIGTERM" "rc=$rcD $(cat "$T/D.out")"
"${P[@]}" worker --id B --idle-exit 4 >"$T/B.out" 2>&1 &
B=$!
"${P[@]}" worker --id C --idle-exit 4 >"$T/C.out" 2>&1 &
C=$!
PIDS="$PIDS $B $C"
for _ in $(seq 600); do kill -0 "$N" 2>/dev/null || break; sleep 0.1; done
wait "$N"
rcN=$?
wait "$B" "$C"
[ $rcN -eq 0 ] && ok "the coordinated night succeeds" || not_ok "coordinated night" "rc=$rcN $(cat "$T/many.err")"
[ "$(sql "select worker || ' ' || attempts || ' ' || state from tasks where id = ${tA:-0}")" != "" ] &&
	[ "$(sql "select attempts from tasks where id = ${tA:-0}")" = 2 ] &&
	[ "$(sql "select worker from tasks where id = ${tA:-0}")" != held-A ] &&
	ok "the killed worker's task is claimed again after its lease and done" ||
	not_ok "reclaim" "$(sql "select id, state, worker, attempts from tasks")"
[ "$(sql "select count(*) from tasks where state = 'done'")" = 6 ] &&
	[ "$(sql "select count(*) from tasks where result is not null")" = 0 ] &&
	ok "every task is done, its result dropped once merged" || not_ok "done" "$(sql "select id, state, worker from tasks")"
nb=$(grep -c ': done' "$T/B.out") nc=$(grep -c ': done' "$T/C.out")
[ $((nb + nc)) = 6 ] && ok "the two other workers did the six tasks ($nb and $nc)" ||
	not_ok "work shared" "$(cat "$T/B.out" "$T/C.out")"
findings "$T/many.out" >"$T/many.findings"
if diff "$T/one.findings" "$T/many.findings" >"$T/diff.txt"; then
	ok "the findings equal the single process's, number for number"
else
	not_ok "findings differ" "$(head -n 20 "$T/diff.txt")"
fi
stored "$DB" >"$T/many.stored"
[ -s "$T/one.stored" ] && cmp -s "$T/one.stored" "$T/many.stored" &&
	ok "the stored findings are the same to the last bit" ||
	not_ok "stored findings differ" "$(diff "$T/one.stored" "$T/many.stored" | head)"
[ "$(jq '.tests' "$T/many.out")" = "$(jq '.tests' "$T/one.out")" ] &&
	[ "$(jq -S '.services' "$T/many.out")" = "$(jq -S '.services' "$T/one.out")" ] &&
	ok "so do the numbers of tests and each service's outcome" || not_ok "tests or outcomes differ"
jq -e '.tasks.total == 6 and .tasks.claims == 7' "$T/many.out" >/dev/null &&
	ok "the run reports six tasks and seven claims" || not_ok "tasks summary" "$(jq -c .tasks "$T/many.out")"
[ "$(wc -l <"$T/pd2.log")" = "$npages1" ] &&
	[ "$(jq -r '.body.dedup_key' "$T/pd2.log" | sort | uniq -d | wc -l)" = 0 ] &&
	ok "each page is sent once, as many as the single process sent" || not_ok "pages" "$(wc -l <"$T/pd2.log") vs $npages1"
[ "$(sql "select count(*) from runs where kind = 'nightly' and status = 'ok'")" = 1 ] &&
	ok "one run is recorded" || not_ok "runs"
run pr tasks --json
[ $RC -eq 0 ] && [ "$(jq '.tasks | length' <<<"$OUT")" = 6 ] && ok "profreg tasks lists the run's tasks" ||
	not_ok "tasks list" "rc=$RC $ERR"

# --- no worker running: the coordinator works every task itself ----------------
DB=$DB1 HOME_DIR=$HOME1
run pr --config "$T/one.json" nightly --at "$at" --workers --json
echo "$OUT" >"$T/self.out"
[ $RC -eq 0 ] && [ "$(sql "select count(*) from tasks where state = 'done'")" = 6 ] &&
	ok "with no worker running the coordinator works every task" || not_ok "self" "rc=$RC $ERR"
findings "$T/self.out" >"$T/self.findings"
diff "$T/one.findings" "$T/self.findings" >/dev/null &&
	ok "and re-running the night that way finds the same" || not_ok "self findings" "$(diff "$T/one.findings" "$T/self.findings" | head)"
[ "$(wc -l <"$T/pd1.log")" = "$npages1" ] && ok "and pages nobody twice" || not_ok "re-run pages"

# --- a worker reading another configuration: its tasks fail, saying so -----------
fresh_db cli_workers_other
pr --quiet db init
cfg "$T/mine.json" false
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
jq '. + {"analysis": {"min_share_pp": 2}}' "$T/mine.json" >"$T/other.json"
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/other.json" worker --id other \
	--idle-exit 5 >"$T/other.out" 2>&1 &
OW=$!
PIDS="$PIDS $OW"
run timeout 120 "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/mine.json" \
	nightly --at "$at" --workers
wait "$OW" 2>/dev/null
[ $RC -eq 3 ] && [[ $ERR == *"is not the coordinator's"* ]] &&
	[ "$(sql "select count(*) from tasks where state = 'done'")" = 0 ] &&
	[ "$(sql "select count(*) from tasks where state = 'failed' and error like '%not the coordinator''s%'")" = 6 ] &&
	ok "a worker with another configuration does no task: each fails, naming the difference" ||
	not_ok "other config" "rc=$RC $ERR $(sql "select id, state, worker, error from tasks")"

# --- a coordinator killed: its tasks are not worked for nothing --------------------
fresh_db cli_workers_orphan
pr --quiet db init
cfg "$T/orphan.json" false
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
P=("$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/orphan.json")
"${P[@]}" nightly --at "$at" --workers >/dev/null 2>&1 &
N=$!
PIDS="$PIDS $N"
for _ in $(seq 200); do
	[ "$(sql "select count(*) from tasks where state = 'queued'")" = 6 ] && break
	sleep 0.1
done
kill -9 "$N"
wait "$N" 2>/dev/null
for _ in $(seq 100); do
	[ "$(sql "select count(*) from pg_stat_activity where datname = current_database()
		and pid <> pg_backend_pid()")" = 0 ] && break
	sleep 0.1
done
run "${P[@]}" worker --once
[ $RC -eq 0 ] && [[ $OUT == *"0 done"* ]] && [ "$(sql "select count(*) from tasks where state = 'queued'")" = 6 ] &&
	ok "a worker claims no task of a run whose coordinator was killed" ||
	not_ok "orphan tasks" "rc=$RC $OUT $(sql "select id, state, worker from tasks")"
cfg "$T/orphan-self.json" true
run pr --config "$T/orphan-self.json" nightly --at "$at" --workers
[ $RC -eq 0 ] && [ "$(sql "select string_agg(status, ',' order by id) from runs where kind = 'nightly'")" = "interrupted,ok" ] &&
	ok "the next coordinated nightly marks it interrupted and does the night" ||
	not_ok "after orphan" "rc=$RC $ERR $(sql "select id, status from runs")"

# --- the database drops the workers -----------------------------------------------
# One waits for it and works the next night, its first task held past its
# lease, which is renewed on the keeper's connection the server dropped
# while the worker was idle: a second worker, idle by then, must find no
# lease run out to claim. One told not to wait exits 3.
fresh_db cli_workers_lost
pr --quiet db init
cfg "$T/lost.json" false
jq '.workers.reconnect_s = 0' "$T/lost.json" >"$T/gone.json"
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
P=("$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/lost.json")
backends() {
	sql "select count(*) from pg_stat_activity where datname = current_database()
		and application_name = any(string_to_array('$1', ','))"
}
PGAPPNAME=profreg-lost PROFREG_TEST_WORKER_HOLD_S=2.6 "${P[@]}" worker --id lost --idle-exit 60 \
	>"$T/lost.out" 2>"$T/lost.err" &
L=$!
PGAPPNAME=profreg-gone "$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/gone.json" \
	worker --id gone --idle-exit 60 >"$T/gone.out" 2>"$T/gone.err" &
G=$!
PIDS="$PIDS $L $G"
for _ in $(seq 200); do [ "$(backends profreg-lost,profreg-gone)" = 4 ] && break; sleep 0.05; done
sql "select count(pg_terminate_backend(pid)) from pg_stat_activity
	where application_name in ('profreg-lost', 'profreg-gone')" >/dev/null
for _ in $(seq 100); do kill -0 "$G" 2>/dev/null || break; sleep 0.1; done
kill -0 "$G" 2>/dev/null && kill -9 "$G"
wait "$G"
rcG=$?
[ $rcG -eq 3 ] && [ "$(grep -c . "$T/gone.err")" = 1 ] &&
	ok "a worker told not to wait (reconnect_s 0) exits 3 when the database drops it" ||
	not_ok "reconnect_s 0" "rc=$rcG $(cat "$T/gone.err")"
for _ in $(seq 200); do grep -q "connected to the database again" "$T/lost.err" && break; sleep 0.05; done
grep -q "lost the database, connecting again" "$T/lost.err" &&
	grep -q "connected to the database again after" "$T/lost.err" &&
	ok "a worker the database dropped says so and connects again" || not_ok "reconnect" "$(cat "$T/lost.err")"
"${P[@]}" nightly --at "$at" --workers --json >"$T/lost-night.out" 2>"$T/lost-night.err" &
N=$!
PIDS="$PIDS $N"
for _ in $(seq 200); do
	[ "$(sql "select count(*) from tasks where state = 'leased' and worker = 'lost'")" = 1 ] && break
	sleep 0.05
done
"${P[@]}" worker --id other --idle-exit 5 >"$T/other.out" 2>&1 &
O=$!
PIDS="$PIDS $O"
for _ in $(seq 600); do kill -0 "$N" 2>/dev/null || break; sleep 0.1; done
wait "$N"
rcN=$?
wait "$O"
[ $rcN -eq 0 ] && [ "$(sql "select count(*) from tasks where state = 'done'")" = 6 ] &&
	[ "$(sql "select count(*) from tasks where attempts > 1")" = 0 ] &&
	[ "$(sql "select count(*) from tasks where worker = 'lost'")" -ge 1 ] &&
	ok "and works the next night's tasks, keeping each lease it holds past its length" ||
	not_ok "after reconnect" "rc=$rcN $(cat "$T/lost-night.err") $(sql "select id, state, worker, attempts from tasks")"
[ "$(sql "select count(*) from audit_log where action = 'ingest'")" -gt 0 ] &&
	[ "$(sql "select count(*) from audit_log where action = 'ingest' and command is null")" = 0 ] &&
	ok "what it writes after connecting again is audit-logged with its command, as before" ||
	not_ok "audit after reconnect" "$(sql "select action, command, actor from audit_log order by id desc limit 5")"
kill -TERM "$L"
wait "$L"
rcL=$?
[ $rcL -eq 0 ] && grep -q "0 lost, the database lost and found again" "$T/lost.out" &&
	ok "its summary counts the lost database, and no task lost" || not_ok "summary" "rc=$rcL $(cat "$T/lost.out")"

# --- the database goes away as a long task ends ------------------------------------
# A task held longer than reconnect_s, the database gone when its work
# begins and back 0.7 s later: the worker waits for it from when it found
# it gone, not from before the task, and the task is handed on by its
# lease, not failed for good. Then the same at the end of its next task.
jq '.workers.reconnect_s = 3' "$T/lost.json" >"$T/long.json"
P=("$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/long.json")
away() { # the database refuses new sessions and drops the worker's for 0.7 s
	psql "$PROFREG_TEST_DB" -qAt -c "alter database cli_workers_lost allow_connections false" \
		-c "select count(pg_terminate_backend(pid)) from pg_stat_activity
			where application_name = 'profreg-long'" >/dev/null
	sleep 0.7
	psql "$PROFREG_TEST_DB" -qAt -c "alter database cli_workers_lost allow_connections true" \
		>/dev/null
}
claims() { sql "select coalesce(sum(attempts), 0) from tasks"; }
found_again() { # wait until the worker said it connected again $1 times
	for _ in $(seq 100); do
		[ "$(grep -c "connected to the database again" "$T/long.err")" -ge "$1" ] && break
		sleep 0.1
	done
	kill -0 "$W" 2>/dev/null && [ "$(grep -c "connected to the database again" "$T/long.err")" -ge "$1" ]
}
PGAPPNAME=profreg-long PROFREG_TEST_WORKER_HOLD_S=4 "${P[@]}" worker --id long --idle-exit 60 \
	>"$T/long.out" 2>"$T/long.err" &
W=$!
"${P[@]}" nightly --at "$at" --workers --json >"$T/long-night.out" 2>"$T/long-night.err" &
N=$!
PIDS="$PIDS $W $N"
for _ in $(seq 200); do
	[ "$(sql "select count(*) from tasks where state = 'leased' and worker = 'long'")" = 1 ] && break
	sleep 0.05
done
sleep 3.5
c0=$(claims) # the task it claims once it is back comes after this
away
found_again 1 && ok "a worker whose database went as a task longer than reconnect_s ended waits for it" ||
	not_ok "long task" "$(cat "$T/long.err")"
for _ in $(seq 400); do [ "$(claims)" -gt "$c0" ] && break; sleep 0.05; done
sleep 3.5
away
found_again 2 && ok "and when it goes again at the end of the task it claimed once back, waits again" ||
	not_ok "second loss" "$(cat "$T/long.err")"
for _ in $(seq 600); do kill -0 "$N" 2>/dev/null || break; sleep 0.1; done
wait "$N"
rcN=$?
[ $rcN -eq 0 ] && [ "$(sql "select count(*) from tasks where state = 'failed'")" = 0 ] &&
	ok "the tasks its work lost are handed on and the night completes" ||
	not_ok "handed on" "rc=$rcN $(cat "$T/long-night.err") $(sql "select id, state, worker, attempts, error from tasks")"
kill -TERM "$W"
wait "$W"

# --- a service's collect lock held elsewhere ---------------------------------------
# A session that holds a service's collect lock (a gate collecting it, or
# a worker that stalled after its lease ran out and keeps its session, and
# the lock, until the server notices) is waited for, as the nightly does,
# up to half of task_timeout_s, the lease renewed meanwhile: a lock let go
# within it costs the task no attempt. One that outlasts the wait defers
# the task to a later claim, and fails it, with the reason, when it
# outlasts the task's attempts.
fresh_db cli_workers_busy
pr --quiet db init
start_pd pd5
cfg "$T/busy.json" true
sed -i 's/"max_attempts": 3/"max_attempts": 6/' "$T/busy.json"
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
busy=$(head -n 1 "$T/fleet/services.txt")
# hold_lock SECONDS: a session holding $busy's collect lock that long.
hold_lock() {
	psql "$DB" -qAt -c "select pg_advisory_lock(1886547814, hashtext('profreg-collect:$busy'))" \
		-c "select pg_sleep($1)" >/dev/null &
	LK=$!
	PIDS="$PIDS $LK"
	for _ in $(seq 100); do
		[ "$(sql "select count(*) from pg_locks where locktype = 'advisory' and granted
		and database = (select oid from pg_database where datname = current_database())")" -ge 1 ] && break
		sleep 0.05
	done
}
hold_lock 3
run pr --config "$T/busy.json" nightly --at "$at" --workers --json
wait "$LK"
tries=$(sql "select attempts from tasks where service = '$busy'")
[ $RC -eq 0 ] && [ "$(jq -r --arg s "$busy" '.services[$s].status' <<<"$OUT")" = analysed ] &&
	[ "${tries:-0}" = 1 ] &&
	ok "a task whose service's lock is held for 3 s waits for it, in one claim" ||
	not_ok "busy lock" "rc=$RC tries=$tries $ERR $(sql "select id, service, state, attempts, error from tasks")"
fresh_db cli_workers_busy2
pr --quiet db init
cfg "$T/busy2.json" true
sed -i 's/"max_attempts": 3/"max_attempts": 2, "task_timeout_s": 4/' "$T/busy2.json"
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
hold_lock 60
run pr --config "$T/busy2.json" nightly --at "$at" --workers
kill "$LK" 2>/dev/null
why=$(sql "select error from tasks where service = '$busy' and state = 'failed'")
[ $RC -eq 3 ] && [[ $why == "not done in 2 attempts: another collection holds the lock"* ]] &&
	[[ $ERR == *"$busy"* ]] &&
	ok "a lock that outlasts the task's attempts fails the service with the reason" ||
	not_ok "busy lock kept" "rc=$RC why='$why' $ERR"

# --- usage -------------------------------------------------------------------------
run pr worker --idle-exit 0
[ $RC -eq 2 ] && ok "a bad --idle-exit is a usage error" || not_ok "usage" "rc=$RC"
run pr worker --help
[ $RC -eq 0 ] && [[ $OUT == *"--once"* ]] && [[ $OUT == *"--idle-exit"* ]] && ok "worker --help" || not_ok "help"
run pr --config "$T/one.json" worker --once
[ $RC -eq 0 ] && [[ $OUT == *"0 done"* ]] && ok "worker --once with nothing to do exits 0" || not_ok "once" "rc=$RC $OUT $ERR"
finish
