package main

import (
	"os"
	"strconv"
	"time"
)

type pair struct{ a, b int }

//go:noinline
func Apply[F any](f F, n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i ^ (s >> 2)
	}
	return s
}

//go:noinline
func Fold[T any](xs []T, g func(T) int) int {
	s := 0
	for r := 0; r < 40; r++ {
		for _, x := range xs {
			s += g(x)
		}
	}
	return s
}

var sink int

func main() {
	ms, _ := strconv.Atoi(os.Args[1])
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	ps := make([]pair, 1000)
	for time.Now().Before(end) {
		sink += Apply(func(x int) int { return x }, 200000)
		sink += Apply(struct{ x, y int }{}, 200000)
		sink += Apply(func(s string) error { return nil }, 200000)
		sink += Fold(ps, func(p pair) int { return p.a + p.b })
	}
}
