package pay

import (
	"context"
	"testing"
)

func BenchmarkHandlePayment(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		HandlePayment(ctx, "4111111111111111")
	}
}
