// Command goroutine writes a real Go goroutine profile (pprof's
// /debug/pprof/goroutine without debug=) of a known number of goroutines:
// 3 parked in main.waitA, 5 in main.waitB and 40 in main.waitC, beside
// main itself. It prints runtime.NumGoroutine() as the profile is taken,
// the count the profile's values must add up to. Standard library only;
// see ../../README.md.
//
//	go run . go119-goroutine.pb.gz
package main

import (
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

var block = make(chan struct{})

//go:noinline
func waitA(wg *sync.WaitGroup) { wg.Done(); <-block }

//go:noinline
func waitB(wg *sync.WaitGroup) { wg.Done(); <-block }

//go:noinline
func waitC(wg *sync.WaitGroup) { wg.Done(); <-block }

func main() {
	var wg sync.WaitGroup

	if len(os.Args) != 2 {
		log.Fatal("usage: goroutine OUT.pb.gz")
	}
	for _, g := range []struct {
		f func(*sync.WaitGroup)
		n int
	}{{waitA, 3}, {waitB, 5}, {waitC, 40}} {
		for i := 0; i < g.n; i++ {
			wg.Add(1)
			go g.f(&wg)
		}
	}
	wg.Wait()
	f, err := os.Create(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	n := runtime.NumGoroutine()
	if err := pprof.Lookup("goroutine").WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n)
}
