// Command gen writes the real Go profiles profreg's pprof tests read:
// a CPU profile of a program whose time is split between a few functions
// in known proportions, and a heap profile of a few functions that retain
// known amounts of memory. Standard library only; see ../../README.md.
//
//	go run . -cpu go-cpu.pb.gz -heap go-heap.pb.gz
package main

import (
	"flag"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

var sink uint64

// step is small enough that the compiler inlines it into burnInlined, so
// the CPU profile has locations with two lines (step, then its caller).
func step(x uint64) uint64 {
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	return x
}

//go:noinline
func burnHalf(n int) {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	sink += x
}

//go:noinline
func burnThird(n int) {
	f := 1.0
	for i := 0; i < n; i++ {
		f = f*1.0000001 + 0.5
		if f > 1e12 {
			f = 1
		}
	}
	sink += uint64(f)
}

//go:noinline
func burnInlined(n int) {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x = step(x)
	}
	sink += x
}

// burn runs the three workers in the proportions 5:3:2 of loop
// iterations until `d` has passed.
func burn(d time.Duration) {
	const unit = 200000
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		burnHalf(5 * unit)
		burnThird(3 * unit)
		burnInlined(2 * unit)
	}
}

var retained [][]byte

//go:noinline
func keepLarge() {
	for i := 0; i < 48; i++ {
		retained = append(retained, make([]byte, 256<<10))
	}
}

//go:noinline
func keepMedium() {
	for i := 0; i < 1024; i++ {
		retained = append(retained, make([]byte, 4<<10))
	}
}

//go:noinline
func keepSmall() {
	for i := 0; i < 16384; i++ {
		retained = append(retained, make([]byte, 128))
	}
}

func main() {
	cpuOut := flag.String("cpu", "go-cpu.pb.gz", "CPU profile to write")
	heapOut := flag.String("heap", "go-heap.pb.gz", "heap profile to write")
	seconds := flag.Float64("seconds", 2.5, "CPU profile duration")
	flag.Parse()

	// Sample every 4 KiB allocated so that small retainers show up.
	runtime.MemProfileRate = 4096

	f, err := os.Create(*cpuOut)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	burn(time.Duration(*seconds * float64(time.Second)))
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	keepLarge()
	keepMedium()
	keepSmall()
	runtime.GC()
	h, err := os.Create(*heapOut)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.WriteHeapProfile(h); err != nil {
		log.Fatal(err)
	}
	if err := h.Close(); err != nil {
		log.Fatal(err)
	}
	runtime.KeepAlive(retained)
}
