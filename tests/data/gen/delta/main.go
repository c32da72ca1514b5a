// Serves net/http/pprof while it allocates, and writes what
// /debug/pprof/heap?seconds=1 serves: a delta heap profile, whose in-use
// columns are negative where more memory was freed than allocated during
// the window (main.shrink frees most of what main.grow kept before).
package main

import (
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"time"
)

var kept [][]byte
var sink []byte

// grow keeps 4 MiB in 8 KiB blocks.
func grow() {
	for i := 0; i < 512; i++ {
		kept = append(kept, make([]byte, 8192))
	}
}

// shrink drops all but 64 of them, and churns short-lived buffers.
func shrink(stop <-chan bool) {
	kept = append([][]byte(nil), kept[len(kept)-64:]...)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		sink = make([]byte, 512)
		if i%100 == 0 {
			// The heap profile moves at collections only, two behind.
			runtime.GC()
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func main() {
	runtime.MemProfileRate = 4096
	grow()
	runtime.GC()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, nil)
	stop := make(chan bool)
	done := make(chan *http.Response)
	go func() {
		r, err := http.Get("http://" + ln.Addr().String() + "/debug/pprof/heap?seconds=1")
		if err != nil {
			panic(err)
		}
		done <- r
	}()
	time.Sleep(100 * time.Millisecond)
	go shrink(stop)
	r := <-done
	close(stop)
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if _, err := io.Copy(f, r.Body); err != nil {
		panic(err)
	}
	f.Close()
}
