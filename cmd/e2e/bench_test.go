package e2e

import (
	"context"
	"log/slog"
	"strconv"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// BenchmarkCoupThroughGateway plays whole coups through the gateway with
// the real stack (embedded NATS, bbolt files in a temp dir): per
// iteration a new table, three players seated, a bank of 1000, bets of 600
// and 400, the deal, any decision answered "draw", the settlement. One
// client, one coup at a time: the latency of a coup, not throughput.
//
//	go test -run '^$' -bench CoupThroughGateway -benchtime 50x ./cmd/e2e/
func BenchmarkCoupThroughGateway(b *testing.B) {
	st, err := stack.Start(context.Background(), stack.Config{DataDir: b.TempDir(), TokensFile: "../../deploy/local/tokens.yaml", Limits: gateway.LimitConfig{Rate: -1}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { st.Stop(); _ = st.Wait() }()
	c := dial(b, st.GatewayAddr)
	as := func(who string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+who+"-token")
	}
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := c.wallet.Deposit(as("operator"), &walletv1.DepositRequest{RequestId: "bench-" + p, AccountId: "player:" + p, Amount: 1 << 40}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := strconv.Itoa(i)
		resp, err := c.table.CreateTable(as("croupier"), &tablev1.CreateTableRequest{RequestId: "bench-table-" + n})
		if err != nil {
			b.Fatal(err)
		}
		id := resp.GetTable().GetTableId()
		for _, p := range []string{"alice", "bob", "carol"} {
			if _, err := c.table.JoinTable(as(p), &tablev1.JoinTableRequest{RequestId: "j-" + n + p, TableId: id, PlayerId: p}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.table.AcceptBank(as("alice"), &tablev1.AcceptBankRequest{RequestId: "a-" + n, TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
			b.Fatal(err)
		}
		if _, err := c.table.PlaceBet(as("bob"), &tablev1.PlaceBetRequest{RequestId: "b-" + n, TableId: id, PlayerId: "bob", Amount: 600}); err != nil {
			b.Fatal(err)
		}
		bet, err := c.table.PlaceBet(as("carol"), &tablev1.PlaceBetRequest{RequestId: "c-" + n, TableId: id, PlayerId: "carol", Amount: 400})
		if err != nil {
			b.Fatal(err)
		}
		tbl := bet.GetTable()
		for k := 0; tbl.GetState() == tablev1.TableState_TABLE_STATE_DECISION; k++ {
			who := tbl.GetCoup().GetDecisionPlayerId()
			d, err := c.table.DecideDraw(as(who), &tablev1.DecideDrawRequest{RequestId: "d-" + n + "-" + strconv.Itoa(k), TableId: id, PlayerId: who, Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
			if err != nil {
				b.Fatal(err)
			}
			tbl = d.GetTable()
		}
		if !tbl.GetLastCoup().GetSettled() {
			b.Fatalf("coup not settled: %v", tbl)
		}
	}
}
