// Command spangen writes a CPU profile whose samples carry span labels,
// as OpenTelemetry's and Pyroscope's span profiling set them with
// runtime/pprof.Do: one long span (span_id 00f067aa0ba902b7, trace_id
// 4bf92f3577b34da6a3ce929d0e0e4736) burns in main.checkout while other
// spans of another trace burn in main.search at the same time.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func checkout(until time.Time) {
	for time.Now().Before(until) {
		for i := 0; i < 100000; i++ {
			sink += uint64(i) * 7
		}
	}
}

//go:noinline
func search(until time.Time) {
	for time.Now().Before(until) {
		for i := 0; i < 100000; i++ {
			sink ^= uint64(i) * 13
		}
	}
}

func span(ctx context.Context, id, trace string, f func()) {
	pprof.Do(ctx, pprof.Labels("span_id", id, "trace_id", trace), func(context.Context) { f() })
}

func main() {
	out := flag.String("o", "spans.pb.gz", "the profile to write")
	secs := flag.Float64("seconds", 2, "how long to profile")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	end := time.Now().Add(time.Duration(*secs * float64(time.Second)))
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		span(ctx, "00f067aa0ba902b7", "4bf92f3577b34da6a3ce929d0e0e4736", func() { checkout(end) })
	}()
	go func() {
		defer wg.Done()
		// Many short spans of another trace.
		for n := 0; time.Now().Before(end); n++ {
			id := fmt.Sprintf("%016x", 0x1000+n)
			stop := time.Now().Add(50 * time.Millisecond)
			span(ctx, id, "0af7651916cd43dd8448eb211c80319c", func() { search(stop) })
		}
	}()
	wg.Wait()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
