# Shared helpers for the CLI tests: TAP-style lines that tests/run counts.
# Each test script gets its own database on the test server and its own
# state directory, so scripts never see each other's data.

: "${PROFREG_BIN:?run through tests/run}"
: "${PROFREG_TEST_DB:?run through tests/run}"
: "${PROFREG_TEST_TMP:?run through tests/run}"
: "${PROFREG_TEST_DATA:?run through tests/run}"

TESTNUM=0
FAILS=0

ok() {
	TESTNUM=$((TESTNUM + 1))
	echo "ok $TESTNUM - $1"
}

not_ok() {
	TESTNUM=$((TESTNUM + 1))
	FAILS=$((FAILS + 1))
	echo "not ok $TESTNUM - $1"
	shift
	for line in "$@"; do echo "#   $line"; done
}

# check DESCRIPTION CONDITION...: ok when the command succeeds.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc" "failed: $*"; fi
}

# Fresh database NAME on the test server; sets DB and HOME_DIR, and P
# (the profreg command with both). FILE_COPY copies the template's files
# instead of writing them through the WAL: a third less time a database,
# and the suite makes over a hundred.
fresh_db() {
	psql "$PROFREG_TEST_DB" -qAt -c "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
	psql "$PROFREG_TEST_DB" -qAt -c "CREATE DATABASE $1 STRATEGY file_copy" >/dev/null
	DB="$PROFREG_TEST_DB dbname=$1"
	HOME_DIR=$PROFREG_TEST_TMP/home-$1
	rm -rf "$HOME_DIR"
	mkdir -p "$HOME_DIR"
}

pr() {
	"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" "$@"
}

# run CMD...: sets OUT, ERR and RC.
run() {
	OUT=$("$@" 2>"$PROFREG_TEST_TMP/stderr.$$")
	RC=$?
	ERR=$(cat "$PROFREG_TEST_TMP/stderr.$$")
}

sql() {
	psql "$DB" -qAt -c "$1"
}

finish() {
	echo "# $TESTNUM tests, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}

# speedscope_cpu: "NAME COUNT" lines on standard input (each a function
# called from main) to a speedscope CPU profile of 60 s in 10 ms samples
# on standard output: a capture with a duration, so with rates.
speedscope_cpu() {
	awk '{ name[NR] = $1; n[NR] = $2 }
	END {
		printf "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\","
		printf " \"shared\": {\"frames\": [{\"name\": \"main\"}"
		for (i = 1; i <= NR; i++) printf ", {\"name\": \"%s\"}", name[i]
		printf "]}, \"profiles\": [{\"type\": \"sampled\", \"name\": \"t\","
		printf " \"unit\": \"nanoseconds\", \"startValue\": 0, \"endValue\": 60000000000,"
		printf " \"samples\": ["
		first = 1
		for (i = 1; i <= NR; i++)
			for (k = 0; k < n[i]; k++) { printf "%s[0, %d]", first ? "" : ", ", i; first = 0 }
		printf "], \"weights\": ["
		first = 1
		for (i = 1; i <= NR; i++)
			for (k = 0; k < n[i]; k++) { printf "%s10000000", first ? "" : ", "; first = 0 }
		print "]}]}"
	}'
}

# free_port: a loopback port nothing listens on, for a server that cannot
# bind port 0 and say which it got (Alertmanager, Prometheus). Taken
# below Linux's ephemeral range (32768-60999), where the suite's own
# client connections take their local ports: a port probed free there
# was once taken by a connection before the server bound it.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}

# webhook_start: the loopback webhook receiver tests/servers/pd_server,
# answering 202, logging to $T/hook.log; sets PORT and adds its pid to
# PIDS (the caller's trap kills them). Ends the script when it is not built.
webhook_start() {
	local server=${PD_SERVER:-${BUILD:-build}/servers/pd_server}
	[ -x "$server" ] || { not_ok "pd_server is built ($server)"; finish; exit 1; }
	"$server" --port-file "$T/port" --log "$T/hook.log" --then 202 --timeout 900 &
	PIDS="$PIDS $!"
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	PORT=$(cat "$T/port")
}

# early_captures BASE SERVICE FUNCTION RELEASE COMMIT DIR: the release's
# first captures, 20 hours ago: the last three of SERVICE's captures in
# the manifest BASE (paths relative to its folder), FUNCTION's stacks 1.2
# times as costly, written to DIR/e1..3.folded and listed in DIR/m.jsonl
# as captures of RELEASE and COMMIT.
early_captures() {
	local base=$1 svc=$2 fn=$3 rel=$4 commit=$5 dir=$6 i=0 line path
	mkdir -p "$dir"
	: >"$dir/m.jsonl"
	grep "\"service\":\"$svc\"" "$base" | tail -n 3 | while read -r line; do
		i=$((i + 1))
		path=$(sed 's/.*"path":"\([^"]*\)".*/\1/' <<<"$line")
		awk -v fn="$fn" '{
			n = $NF; stack = substr($0, 1, length($0) - length(n) - 1)
			k = split(stack, fr, ";")
			if (fr[k] == fn) n = int(n * 1.2 + 0.5)
			print stack " " n
		}' "$(dirname "$base")/$path" >"$dir/e$i.folded"
		sed "s|\"path\":\"[^\"]*\"|\"path\":\"e$i.folded\"|; s/\"release\":\"[^\"]*\"/\"release\":\"$rel\"/;
		     s/\"commit\":\"[^\"]*\"/\"commit\":\"$commit\"/;
		     s/\"time\":\"[^\"]*\"/\"time\":\"$(date -u -d "-20 hours -$i minutes" +%Y-%m-%dT%H:%M:%SZ)\"/" \
			<<<"$line" >>"$dir/m.jsonl"
	done
}

# alertmanager_start: Debian's prometheus-alertmanager ($ALERTMANAGER) on
# a free loopback port with a receiver that sends nothing, its state in
# $T/am; sets AM_PORT and adds its pid to PIDS (the caller's trap kills
# them). Ends the script when it is not installed.
alertmanager_start() {
	local am=${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}
	[ -x "$am" ] || { not_ok "prometheus-alertmanager is installed (make deps)"; finish; exit 1; }
	mkdir -p "$T/am"
	AM_PORT=$(free_port)
	printf "route:\n  receiver: 'null'\n  group_wait: 30s\nreceivers:\n  - name: 'null'\n" >"$T/am.yml"
	"$am" --config.file="$T/am.yml" --storage.path="$T/am" --web.listen-address="127.0.0.1:$AM_PORT" \
		--cluster.listen-address= --log.level=warn >"$T/am.log" 2>&1 &
	PIDS="$PIDS $!"
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$AM_PORT/-/ready" >/dev/null 2>&1 &&
			{ ok "alertmanager is up on port $AM_PORT"; return 0; }
		sleep 0.1
	done
	not_ok "alertmanager start" "$(tail -5 "$T/am.log")"
}

# escalation_fleet: a fleet of 3 services (one regressed 2x at 10-30%)
# whose simulated night is yesterday, so that captures stamped "now" have
# the baseline of the 14 days before them; its services added and
# enabled, its baseline ingested, and the release's first captures 20
# hours ago (early_captures) ingested. Sets rel, bad, fn and commit.
escalation_fleet() {
	"$BUILD/sim/fleetgen" --out "$T/fleet" --services 3 --functions 60 --factors 2 --bands 10-30 \
		--regressed 0.34 --seed 51 --start "$(date -u -d '-15 days' +%Y-%m-%d)" >"$T/gen.txt"
	rel=$(sed -n 's/^release: //p' "$T/gen.txt")
	bad=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"service":"\([^"]*\)".*/\1/')
	fn=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1 | sed 's/.*"function":"\([^"]*\)".*/\1/')
	while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
	grep -v "\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" >"$T/fleet/base.jsonl"
	pr --quiet ingest --manifest "$T/fleet/base.jsonl"
	commit=$(grep "\"service\":\"$bad\"" "$T/fleet/manifest.jsonl" | grep "\"release\":\"$rel\"" |
		head -n 1 | sed 's/.*"commit":"\([^"]*\)".*/\1/')
	early_captures "$T/fleet/base.jsonl" "$bad" "$fn" "$rel" "$commit" "$T/early"
	pr --quiet ingest --manifest "$T/early/m.jsonl"
}

# synth_capture FILE SEED OTHERS OTHER_SHARE NAME:SHARE[:MULT]...: a folded
# capture of 20,000 samples: each NAME (main;serve;NAME) at SHARE times
# MULT (0: absent), then OTHERS functions main;libI at OTHER_SHARE each;
# every share times a draw of 0.9-1.1 (seeded by SEED), then scaled to
# 20,000. The synthetic services of the tests of code change.
synth_capture() {
	local file=$1 seed=$2 others=$3 other=$4
	shift 4
	awk -v seed="$seed" -v no="$others" -v ow="$other" -v spec="$*" 'BEGIN {
		srand(seed)
		n = split(spec, p, " ")
		for (i = 1; i <= n; i++) {
			split(p[i], x, ":")
			f[i] = "main;serve;" x[1]
			w[i] = x[2] * (x[3] == "" ? 1 : x[3])
		}
		for (i = n + 1; i <= n + no; i++) { w[i] = ow; f[i] = "main;lib" i }
		for (i = 1; i <= n + no; i++) { w[i] *= 0.9 + 0.2 * rand(); t += w[i] }
		for (i = 1; i <= n + no; i++) {
			c = int(20000 * w[i] / t + 0.5)
			if (c > 0) print f[i] " " c
		}
	}' >"$file"
}
