#!/bin/sh
# Regenerate tests/data/pprof/go-spans.pb.gz. Needs only a Go toolchain;
# downloads nothing and keeps Go's caches in a temporary directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/../../pprof" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOCACHE="$tmp/cache" GOPATH="$tmp/gopath" GOPROXY=off GOFLAGS=-mod=mod \
	GOTOOLCHAIN=local HOME="$tmp" GOMAXPROCS=2 GODEBUG=asyncpreemptoff=1
cd "$here"
go build -trimpath -o "$tmp/spangen" .
"$tmp/spangen" -o "$data/go-spans.pb.gz" -seconds 2
