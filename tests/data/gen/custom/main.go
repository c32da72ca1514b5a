package main

import (
	"os"
	"runtime/pprof"
)

var open = pprof.NewProfile("acme.open_files")

type handle struct{ n int }

func openA(i int) *handle { h := &handle{i}; open.Add(h, 1); return h }
func openB(i int) *handle { h := &handle{i}; open.Add(h, 1); return h }

var keep []*handle

func main() {
	for i := 0; i < 3; i++ { keep = append(keep, openA(i)) }
	keep = append(keep, openB(9))
	f, _ := os.Create(os.Args[1])
	open.WriteTo(f, 0)
	f.Close()
}
