#!/bin/sh
# Regenerate tests/data/pprof/go-*.pb.gz and their `go tool pprof -top`
# golden files. Needs only a Go toolchain; downloads nothing (no modules,
# GOPROXY=off) and keeps Go's caches in a temporary directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/../../pprof" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOCACHE="$tmp/cache" GOPATH="$tmp/gopath" GOPROXY=off GOFLAGS=-mod=mod \
	GOTOOLCHAIN=local HOME="$tmp" PPROF_TMPDIR="$tmp/pprof" GOMAXPROCS=2 \
	GODEBUG=asyncpreemptoff=1
cd "$here"
go build -trimpath -o "$tmp/pprofgen" .
cd "$tmp"
./pprofgen -cpu "$data/go-cpu.pb.gz" -heap "$data/go-heap.pb.gz" -seconds 2.5
go tool pprof -top -nodecount=1000 "$data/go-cpu.pb.gz" > "$data/go-cpu.top.txt"
go tool pprof -top -nodecount=1000 -sample_index=inuse_space \
	"$data/go-heap.pb.gz" > "$data/go-heap.top.txt"
