#!/bin/sh
# Regenerate tests/data/pprof/go119-goroutine.pb.gz and print the number
# of goroutines the program had when it wrote it (runtime.NumGoroutine).
# Needs only a Go toolchain; downloads nothing (GOPROXY=off) and keeps
# Go's caches in a temporary directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/../../pprof" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOCACHE="$tmp/cache" GOPATH="$tmp/gopath" GOPROXY=off GOFLAGS=-mod=mod \
	GOTOOLCHAIN=local HOME="$tmp"
cd "$here"
go build -trimpath -o "$tmp/goroutine" .
"$tmp/goroutine" "$data/go119-goroutine.pb.gz"
