#!/bin/bash
# A nightly or post-deploy killed with SIGKILL in the middle of its run
# leaves its run "running"; the next run of the same kind marks it
# "interrupted", and a run of another kind leaves it alone.
. "$(dirname "$0")/lib.sh"
fresh_db cli_runs_kill
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_runs_kill
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 2 --functions 40 --factors 2 --bands 10-30 \
	--regressed 0.5 --seed 61 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
svc=$(head -n 1 "$T/fleet/services.txt")
sha=$(grep "\"service\":\"$svc\",\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" | head -n 1 |
	sed 's/.*"commit":"\([0-9a-f]*\)".*/\1/')
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"

# kill_mid KIND CMD...: start the job while another session holds the
# findings table, so it stops half way (after its run began); kill it.
kill_mid() {
	local kind=$1
	shift
	psql "$DB" -qAt -c "begin; lock table findings in access exclusive mode; select pg_sleep(60)" \
		>/dev/null 2>&1 &
	holder=$!
	for _ in $(seq 100); do
		[ "$(sql "select count(*) from pg_locks l join pg_class c on c.oid = l.relation
			where c.relname = 'findings' and l.mode = 'AccessExclusiveLock' and l.granted")" = 1 ] && break
		sleep 0.1
	done
	"$@" >/dev/null 2>&1 &
	job=$!
	for _ in $(seq 200); do
		[ "$(sql "select count(*) from runs where kind = '$kind' and status = 'running'")" -ge 1 ] &&
			[ "$(sql "select count(*) from pg_locks where not granted")" -ge 1 ] && break
		sleep 0.1
	done
	kill -KILL "$job" 2>/dev/null
	wait "$job" 2>/dev/null
	kill "$holder" 2>/dev/null
	psql "$DB" -qAt -c "select pg_terminate_backend(pid) from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid()" >/dev/null
	wait "$holder" 2>/dev/null
	# The killed job's session ends once the server notices: wait, bounded.
	for _ in $(seq 100); do
		[ "$(sql "select count(*) from pg_stat_activity where datname = current_database()
			and pid <> pg_backend_pid()")" = 0 ] && break
		sleep 0.1
	done
}

kill_mid nightly pr nightly --at "$at"
killed=$(sql "select id from runs where kind = 'nightly' order by id desc limit 1")
[ "$(sql "select status from runs where id = $killed")" = running ] && ok "a nightly killed mid-run leaves its run running" ||
	not_ok "nightly killed" "$(sql "select id, status from runs")"
pr --quiet post-deploy --service "$svc" --release "$rel" --commit "$sha" --at "$at" >/dev/null 2>&1
[ "$(sql "select status from runs where id = $killed")" = running ] && ok "a run of another kind leaves it alone" ||
	not_ok "other kind" "$(sql "select status from runs where id = $killed")"
pr --quiet nightly --at "$at" >/dev/null 2>&1
[ "$(sql "select status from runs where id = $killed")" = interrupted ] &&
	[ "$(sql "select count(*) from runs where kind = 'nightly' and status = 'ok'")" = 1 ] &&
	ok "the next nightly marks it interrupted and runs" || not_ok "nightly interrupted" "$(sql "select id, kind, status from runs")"

kill_mid post-deploy pr post-deploy --service "$svc" --release "$rel" --commit "$sha" --at "$at"
killed=$(sql "select id from runs where kind = 'post-deploy' and status = 'running' order by id desc limit 1")
[ -n "$killed" ] && ok "a post-deploy killed mid-run leaves its run running" || not_ok "post-deploy killed" "$(sql "select id, kind, status from runs")"
run pr post-deploy --service "$svc" --release "$rel" --commit "$sha" --at "$at"
[ "$(sql "select status from runs where id = ${killed:-0}")" = interrupted ] &&
	ok "the next post-deploy marks it interrupted" || not_ok "post-deploy interrupted" "rc=$RC $ERR"
run pr run show "${killed:-0}"
[[ $OUT == *"interrupted"* ]] && [[ $OUT == *"ended without finishing"* ]] && ok "run show says why" || not_ok "run show" "$OUT"
finish
