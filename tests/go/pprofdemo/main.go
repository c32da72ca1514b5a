// pprofdemo: a small Go service with net/http/pprof, for profreg's
// collection tests and `make demo`.
//
// It burns CPU in a checkout-shaped call tree (so a CPU profile always
// has something to show; see -load below) and serves the standard pprof
// endpoints under /debug/pprof/. In -version v2 one function,
// main.computeTax, costs twice as much: the regression the tests and the
// demo must find. Other -mode values make it a misbehaving target:
//
//	ok        the real endpoints (default)
//	auth      the real endpoints behind "Authorization: Bearer <-token>"
//	fail503   every /debug/pprof/ request answers 503
//	hang      every /debug/pprof/ request is read and never answered
//	huge      /debug/pprof/ answers 200 with 4 MiB of gzip-magic bytes
//	garbage   /debug/pprof/ answers 200 with a gzip header and junk
//
// Run it with GODEBUG=asyncpreemptoff=1 where the machine may be loaded:
// a thread kept off the CPU for over 10 ms gets a preemption signal, and
// the samples around it are charged to runtime.asyncPreempt rather than to
// the loop (the loops yield often enough without it).
//
// The checkout load runs only while a CPU profile is being taken (-load
// profiled, the default), so that a test or the demo can keep many
// services up on a small machine without their idle time starving
// everything else; -load always runs it all the time, as a real service
// under steady traffic would. A profile sees the same load either way.
//
// It listens on -addr (port 0: any free port), writes the port to
// -port-file once it listens, appends one line "PATH?QUERY" per
// /debug/pprof/ request to -access-log (so a test can count what it was
// asked for), serves TLS with -tls-cert/-tls-key, sets
// the server's WriteTimeout from -write-timeout, and exits by itself after
// -lifetime, so a test that dies never leaves it behind.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"
)

var sink uint64

// The load's gate: how many CPU profiles are in flight, and a condition
// the load waits on while there are none.
var (
	profMu   sync.Mutex
	profCond = sync.NewCond(&profMu)
	profN    int
)

func profileBegin() {
	profMu.Lock()
	profN++
	profCond.Broadcast()
	profMu.Unlock()
}

func profileEnd() {
	profMu.Lock()
	profN--
	profMu.Unlock()
}

// waitProfiled blocks while no CPU profile is being taken.
func waitProfiled() {
	profMu.Lock()
	for profN == 0 {
		profCond.Wait()
	}
	profMu.Unlock()
}

// Each function burns its own CPU in its own loop, so a profile shows the
// cost as the function's self time (what profreg compares). The loops
// yield now and then: a loop that never does is preempted by signal on a
// busy machine, and its samples land in runtime.asyncPreempt instead.

//go:noinline
func priceItems(cost int) {
	x := sink
	for i := 0; i < cost*200000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i%20000 == 0 {
			runtime.Gosched()
		}
	}
	sink = x
}

//go:noinline
func computeTax(cost int) {
	x := sink
	for i := 0; i < cost*200000; i++ {
		x = x*2862933555777941757 + 3037000493
		if i%20000 == 0 {
			runtime.Gosched()
		}
	}
	sink = x
}

//go:noinline
func encodeReceipt(cost int) {
	x := sink
	for i := 0; i < cost*200000; i++ {
		x = x*3202034522624059733 + 4354685564936845319
		if i%20000 == 0 {
			runtime.Gosched()
		}
	}
	sink = x
}

//go:noinline
func lookupCustomer(cost int) {
	x := sink
	for i := 0; i < cost*200000; i++ {
		x = x*1181783497276652981 + 7
		if i%20000 == 0 {
			runtime.Gosched()
		}
	}
	sink = x
}

//go:noinline
func handleCheckout(taxCost int) {
	lookupCustomer(2)
	priceItems(4)
	computeTax(taxCost)
	encodeReceipt(3)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	portFile := flag.String("port-file", "", "write the port here once listening")
	version := flag.String("version", "v1", "v1, or v2 (computeTax costs twice as much)")
	mode := flag.String("mode", "ok", "ok, auth, fail503, hang, huge, garbage")
	token := flag.String("token", "", "the bearer token of -mode auth")
	writeTimeout := flag.Duration("write-timeout", 0, "the server's WriteTimeout (0: none)")
	certFile := flag.String("tls-cert", "", "serve TLS with this certificate")
	keyFile := flag.String("tls-key", "", "and this key")
	lifetime := flag.Duration("lifetime", 120*time.Second, "exit after this long")
	accessLog := flag.String("access-log", "", "append each /debug/pprof/ request here")
	load := flag.String("load", "profiled", "profiled (the load runs while a CPU profile is taken) or always")
	flag.Parse()
	if *load != "profiled" && *load != "always" {
		log.Fatalf("-load: profiled or always, not %q", *load)
	}

	var logMu sync.Mutex
	var logFile *os.File
	if *accessLog != "" {
		f, err := os.OpenFile(*accessLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		logFile = f
	}

	taxCost := 3
	if *version == "v2" {
		taxCost = 6
	}
	// The load: checkouts back to back, yielding after each one (a loop
	// that never yields is preempted by signal, and those samples land in
	// runtime.asyncPreempt instead of the function), resting a little so
	// that several demo services share a small machine. Misbehaving modes
	// need no load.
	if *mode == "ok" || *mode == "auth" {
		go func() {
			for i := 0; ; i++ {
				if *load == "profiled" {
					waitProfiled()
				}
				// Labels like the ones a payment service sets: profreg
				// must never store them (the card number is a test value).
				labels := pprof.Labels("span_id", fmt.Sprintf("%016x", i),
					"card_number", "4111111111111111")
				pprof.Do(context.Background(), labels, func(context.Context) {
					handleCheckout(taxCost)
				})
				runtime.Gosched()
				if i%8 == 7 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	time.AfterFunc(*lifetime, func() { os.Exit(0) })

	pprofMux := http.DefaultServeMux
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/debug/pprof/") {
			http.NotFound(w, r)
			return
		}
		if logFile != nil {
			logMu.Lock()
			fmt.Fprintf(logFile, "%s\n", r.URL.RequestURI())
			logMu.Unlock()
		}
		switch *mode {
		case "auth":
			if r.Header.Get("Authorization") != "Bearer "+*token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		case "fail503":
			http.Error(w, "overloaded, try later", http.StatusServiceUnavailable)
			return
		case "hang":
			<-r.Context().Done()
			return
		case "huge":
			w.Write(append([]byte{0x1f, 0x8b}, bytes.Repeat([]byte{0}, 4<<20)...))
			return
		case "garbage":
			w.Write([]byte{0x1f, 0x8b, 0x08, 0x00, 'n', 'o', 't', ' ', 'a', ' ', 'p', 'r', 'o', 'f'})
			return
		}
		if r.URL.Path == "/debug/pprof/profile" {
			profileBegin()
			defer profileEnd()
		}
		pprofMux.ServeHTTP(w, r)
	})

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *portFile != "" {
		tmp := *portFile + ".tmp"
		port := l.Addr().(*net.TCPAddr).Port
		if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *portFile); err != nil {
			log.Fatal(err)
		}
	}
	srv := &http.Server{Handler: handler, WriteTimeout: *writeTimeout}
	if *certFile != "" {
		err = srv.ServeTLS(l, *certFile, *keyFile)
	} else {
		err = srv.Serve(l)
	}
	log.Fatal(err)
}
