#!/bin/bash
# The README's "Your first service", run as written: its four shell
# blocks are read out of README.md and run in order (only the paths they
# name are pointed at this test's folders) against real Go services with
# net/http/pprof (tests/go/pprofdemo): eight hosts of v1 make the
# baseline, three hosts of v2 (main.computeTax twice as costly) are
# deployed, the gate fails naming the function, and the nightly report
# shows it. The private PostgreSQL cluster is the one `profreg db init`
# makes, as a new user's would be.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../go/build.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$PROFREG_TEST_TMP/walkthrough
rm -rf "$T" && mkdir -p "$T/bin"
ln -s "$PROFREG_BIN" "$T/bin/profreg"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	[ -d "$T/home" ] && PROFREG_HOME=$T/home "$PROFREG_BIN" db stop >/dev/null 2>&1
}
trap cleanup EXIT

# The shell blocks of the section, each into $T/blockN.sh, paths moved.
awk -v dir="$T" '/^## Your first service$/ {s = 1; next} s && /^## / {exit}
	s && /^```sh$/ {n++; f = dir "/block" n ".sh"; next}
	s && /^```$/ {f = ""; next}
	f {print > f}' "$ROOT/README.md"
for b in "$T"/block*.sh; do
	sed -i "s#/var/lib/profreg#$T/home#g; s#/etc/prometheus/sd/checkout.json#$T/sd.json#g;
		s#/srv/src/checkout#$T/repo#g; s#/tmp/checkout-gate.md#$T/gate.md#g" "$b"
done
[ -s "$T/block1.sh" ] && [ -s "$T/block4.sh" ] && [ ! -e "$T/block5.sh" ] &&
	ok "the README's first-service section has four shell blocks" ||
	not_ok "blocks" "$(ls "$T")"

# blk N: run block N as a user would paste it into the terminal where the
# earlier blocks ran (so with block 1's exports), profreg on PATH.
blk() {
	local t0=$SECONDS
	grep '^export ' "$T/block1.sh" >"$T/exports.sh"
	OUT=$(cd "$T" && PATH="$T/bin:$PATH" bash -e -c '. "$1"; . "$2"' blk "$T/exports.sh" \
		"$T/block$1.sh" 2>"$T/err$1")
	RC=$?
	ERR=$(cat "$T/err$1")
	echo "# block $1: $((SECONDS - t0)) s"
}

t0=$SECONDS
if ! go_build "$PROFREG_BUILD/go" pprofdemo "$T/pprofdemo" 2>"$T/build.err"; then
	not_ok "go build" "$(cat "$T/build.err")"
	finish
	exit 1
fi
echo "# go build: $((SECONDS - t0)) s"
start() { # start NAME ADDR VERSION: a demo service, its port in $T/NAME.port
	GODEBUG=asyncpreemptoff=1 "$T/pprofdemo" -addr "$2:0" -port-file "$T/$1.port" \
		-lifetime 600s -version "$3" >"$T/$1.log" 2>&1 &
	PIDS="$PIDS $!"
}
sd() { # sd RELEASE HOST...: the file_sd file the deploy tooling keeps
	local rel=$1 first=1 n
	shift
	printf '[{"targets": ['
	for n in "$@"; do
		[ $first -eq 1 ] || printf ', '
		first=0
		printf '"127.0.0.%s:%s"' "$n" "$(cat "$T/h$n.port")"
	done
	printf '], "labels": {"release": "%s"}}]\n' "$rel"
}

# The service's repository, which the gate reads for suspect commits.
R=$T/repo
git init -q "$R"
echo 'package main' >"$R/main.go"
git -C "$R" -c user.name=Dev -c user.email=dev@example.com add .
git -C "$R" -c user.name=Dev -c user.email=dev@example.com commit -qm "v1"
git -C "$R" tag v1

V1=""
for i in 2 3 4 5 6 7 8 9; do
	start h$i 127.0.0.$i v1
	V1="$V1 $!"
done
for i in 2 3 4 5 6 7 8 9; do wait_port "$T/h$i.port" || not_ok "start host $i"; done
sd v1 2 3 4 5 6 7 8 9 >"$T/sd.json"

blk 1
[ $RC -eq 0 ] && [[ $OUT == *"127.0.0.9:"* ]] && [ -s "$T/home/profreg.json" ] &&
	ok "setting up: a private cluster, the service, its sources, the plan" ||
	not_ok "block 1" "rc=$RC" "$OUT" "$ERR"

blk 2
[ $RC -eq 0 ] && [[ $OUT == *"8 stored"* ]] && [ "$(grep -c ' v1 ' <<<"$OUT")" -ge 8 ] &&
	ok "collect stores a CPU capture of each of the 8 hosts, listed with release v1" ||
	not_ok "block 2" "rc=$RC" "$OUT" "$ERR"

# The deploy: three v2 hosts replace the v1 ones, service discovery follows.
for p in $V1; do kill "$p" 2>/dev/null; done
echo 'func computeTax() { /* twice the work */ }' >>"$R/main.go"
git -C "$R" -c user.name=Dev -c user.email=dev@example.com commit -qam "tax: apply every rule twice"
git -C "$R" tag v2
for i in 10 11 12; do start h$i 127.0.0.$i v2; done
for i in 10 11 12; do wait_port "$T/h$i.port" || not_ok "start host $i"; done
sd v2 10 11 12 >"$T/sd.json"

blk 3
[ $RC -eq 0 ] && [[ $OUT == *"gate failed with exit 1"* ]] && grep -q 'main.computeTax' "$T/gate.md" &&
	grep -q 'tax: apply every rule twice' "$T/gate.md" &&
	ok "the gate fails (exit 1) on v2, naming main.computeTax and the commit that touched it" ||
	not_ok "block 3" "rc=$RC" "$OUT" "$ERR" "$(cat "$T/gate.md" 2>/dev/null)"

blk 4
html=$(ls "$T"/home/reports/*.html 2>/dev/null | tail -n 1)
[ $RC -eq 0 ] && [ -n "$html" ] && grep -q 'main.computeTax' "$html" &&
	ok "the nightly writes its report, which shows the regression" ||
	not_ok "block 4" "rc=$RC" "$OUT" "$ERR"
finish
