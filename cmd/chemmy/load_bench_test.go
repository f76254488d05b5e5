package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// BenchmarkCoups plays b.N coups on 16 (and 64) tables at once through
// the gateway of an in-process stack (mutual TLS, as in production), as
// chemmy load does. Besides ns/op (per coup) it reports the fsyncs of each
// service's store per coup, read from the in-process store counters, and
// the process's CPU per coup (stack and client together).
//
//	go test -run '^$' -bench Coups -benchtime 2000x ./cmd/chemmy
func BenchmarkCoups(b *testing.B) {
	for _, tables := range []int{16, 64} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			prefix := fmt.Sprintf("bench-%d-%d", tables, b.N)
			tokens := filepath.Join(b.TempDir(), "tokens.yaml")
			if err := writePlayerTokens(tokens, "../../deploy/local/tokens.yaml", prefix, tables, "%s-token"); err != nil {
				b.Fatal(err)
			}
			st, err := stack.Start(context.Background(), stack.Config{DataDir: b.TempDir(), TokensFile: tokens,
				Limits: gateway.LimitConfig{Rate: -1}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { st.Stop(); _ = st.Wait() }()
			cc, err := grpc.NewClient(st.GatewayAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			l := &loader{
				table: tablev1.NewTableServiceClient(cc), wallet: walletv1.NewWalletServiceClient(cc),
				croupier: "croupier-token", operator: "operator-token", prefix: prefix, playerTokenFormat: "%s-token",
				retry:  retryPolicy{attempts: 3, timeout: 10 * time.Second, base: 50 * time.Millisecond, max: time.Second},
				played: new(atomic.Int64), stopAt: int64(b.N),
			}
			before, cpu0 := store.Snapshot(), selfCPU()
			b.ResetTimer()
			var wg sync.WaitGroup
			errs := make([]error, tables)
			for i := range tables {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = l.play(context.Background(), i).err
				}()
			}
			wg.Wait()
			b.StopTimer()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			coups := float64(l.played.Load())
			after := store.Snapshot()
			total, writes := 0.0, 0.0
			for _, db := range []string{"table", "shoe", "wallet"} {
				f := float64(after[db].Fsyncs()-before[db].Fsyncs()) / coups
				total += f
				b.ReportMetric(f, db+"-fsyncs/coup")
				w := float64(after[db].Calls-before[db].Calls) / coups
				writes += w
				b.ReportMetric(w, db+"-writes/coup")
			}
			b.ReportMetric(total, "fsyncs/coup")
			b.ReportMetric(writes, "writes/coup")
			b.ReportMetric(float64((selfCPU()-cpu0).Microseconds())/1000/coups, "cpu-ms/coup")
		})
	}
}
