package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"strconv"
	"time"
)

func watchConfig(stop chan struct{}) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	select {
	case <-stop:
	case <-t.C:
	}
}

func worker(ch chan int) {
	for range ch {
	}
}

func main() {
	leak, _ := strconv.Atoi(os.Args[1])
	ch := make(chan int)
	for i := 0; i < 20; i++ {
		go worker(ch)
	}
	stop := make(chan struct{})
	for i := 0; i < 22+leak; i++ {
		go watchConfig(stop)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	http.Serve(l, nil)
}
