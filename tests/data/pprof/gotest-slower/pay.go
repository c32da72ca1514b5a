package pay

import (
	"context"
	"runtime/pprof"
	"strconv"
)

var slow = "1"
var sink float64
var kept [][]byte

func ComputeFee(n int) float64 {
	k, _ := strconv.Atoi(slow)
	s := 0.0
	for i := 0; i < n*k; i++ {
		s += float64(i%7)*0.013 + s*1e-9
	}
	return s
}

func ValidateCard(n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		s += float64(i%5) * 0.011
	}
	return s
}

func FormatReceipt(n int) []byte {
	b := make([]byte, 0, 64)
	for i := 0; i < n; i++ {
		b = strconv.AppendInt(b[:0], int64(i), 10)
	}
	return b
}

func RetainLedger(k int) {
	for i := 0; i < k; i++ {
		kept = append(kept, make([]byte, 1024))
	}
}

func HandlePayment(ctx context.Context, card string) {
	pprof.Do(ctx, pprof.Labels("card", card, "customer_email", "alice@example.com"), func(ctx context.Context) {
		sink += ComputeFee(40000)
		sink += ValidateCard(30000)
		FormatReceipt(2000)
		k, _ := strconv.Atoi(slow)
		RetainLedger(k)
	})
}
