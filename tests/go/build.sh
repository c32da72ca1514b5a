# Build the Go test programs under tests/go with Debian's golang-go, for
# the collection tests and `make demo`. Source it, then
#   go_build DIR NAME OUT
# builds tests/go/NAME into OUT with its caches under DIR. Tests and the
# demo pass the build folder's go/ ($PROFREG_BUILD/go), whose cache
# `make check-build` and `make demo` fill when they build pprofdemo there:
# the standard library is compiled once (about 40 s of CPU), not once per
# test, and a test's build only links. Only the
# standard library is used: no module is fetched (GOPROXY=off, GOFLAGS
# -mod=mod), and GOCACHE, GOPATH and GOENV point into DIR, so it works as
# root with HOME unset, as CI runs.
go_build() {
	local dir=$1 name=$2 out=$3 root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	if ! command -v go >/dev/null 2>&1; then
		echo "go not found: install Debian's golang-go (make deps)" >&2
		return 1
	fi
	mkdir -p "$dir/gocache" "$dir/gopath"
	(cd "$root/$name" &&
		env GOCACHE="$dir/gocache" GOPATH="$dir/gopath" GOENV=off GOFLAGS=-mod=mod \
			GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -o "$out" .)
}

# go_cache BUILD: the Go cache folder of build folder BUILD (absolute, or
# as make names it, relative to the checkout), for go_build's DIR.
go_cache() {
	case $1 in
	/*) echo "$1/go" ;;
	*) echo "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/$1/go" ;;
	esac
}

# wait_port FILE: wait (at most 10 s) until a server has written its port.
wait_port() {
	local i
	for i in $(seq 1 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# demo_up DIR ADDR NAME: build tests/go/pprofdemo into DIR (reported as a
# test; a failed build ends the script) and start it on ADDR, port 0, for
# 300 s: its port in DIR/NAME.port and DEMO_PORT, its log DIR/NAME.log,
# its pid added to PIDS (the caller's cleanup kills them). For the
# serve*.sh tests, which source tests/cli/lib.sh first.
demo_up() {
	local dir=$1 addr=$2 name=$3
	if go_build "${PROFREG_BUILD:-$dir}/go" pprofdemo "$dir/pprofdemo" 2>"$dir/build.err"; then
		ok "the Go demo service builds"
	else
		not_ok "go build" "$(cat "$dir/build.err")"
		finish
		exit 1
	fi
	GODEBUG=asyncpreemptoff=1 "$dir/pprofdemo" -addr "$addr:0" -port-file "$dir/$name.port" \
		-lifetime 300s >"$dir/$name.log" 2>&1 &
	PIDS="$PIDS $!"
	wait_port "$dir/$name.port" || not_ok "the demo starts"
	DEMO_PORT=$(cat "$dir/$name.port")
}
