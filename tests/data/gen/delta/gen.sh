#!/bin/sh
# Regenerate tests/data/pprof/go119-heap-delta.pb.gz, what Go's
# net/http/pprof serves for /debug/pprof/heap?seconds=1 while the program
# frees memory it held before, and its go119-heap-delta.top.txt (pprof -top
# of alloc_space). Needs only a Go toolchain; downloads
# nothing (GOPROXY=off) and keeps Go's caches in a temporary directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/../../pprof" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOCACHE="$tmp/cache" GOPATH="$tmp/gopath" GOPROXY=off GOFLAGS=-mod=mod \
	GOTOOLCHAIN=local HOME="$tmp"
cd "$here"
go build -trimpath -o "$tmp/delta" .
"$tmp/delta" "$data/go119-heap-delta.pb.gz"
go tool pprof -top -nodecount=1000 -sample_index=alloc_space \
	"$data/go119-heap-delta.pb.gz" > "$data/go119-heap-delta.top.txt"
