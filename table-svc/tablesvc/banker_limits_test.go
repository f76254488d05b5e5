package tablesvc

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestBankerOverHisLimitsPassesTheBank: limits are checked when money is
// held, and a bank kept from coup to coup is held once; after each coup
// the banker keeps his bank through, the wallet is asked again
// (CheckStake), and a banker whose limits say no passes the bank (CF-PASS):
// his hold is released and the bank offered in turn.
func TestBankerOverHisLimitsPassesTheBank(t *testing.T) {
	setLimits := func(h *harness, player string, l *walletv1.PlayerLimits) {
		t.Helper()
		if _, err := h.wallets.SetPlayerLimits(h.as("op"), &walletv1.SetPlayerLimitsRequest{RequestId: h.rid(), AccountId: "player:" + player, Limits: l}); err != nil {
			t.Fatal(err)
		}
	}
	passed := func(h *harness, id string) {
		t.Helper()
		tbl := h.get(id)
		if tbl.GetBankerPlayerId() == "alice" {
			t.Fatalf("alice still banks %d: %v", tbl.GetBank(), tbl)
		}
		if _, held := h.account("player:alice"); held != 0 {
			t.Fatalf("alice still has %d held", held)
		}
		h.conserved(20000, "player:alice", "player:bob")
	}
	// Banker naturals, coup after coup.
	cards := []string{"2C", "9H", "3D", "TC", "2D", "9S", "3H", "TD"}

	t.Run("the bank grows past the maximum stake", func(t *testing.T) {
		h := newHarness(t)
		// The settlement brings the wallet's verdict: CheckStake is not called.
		var checks atomic.Int32
		h.restartTableWith(grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
			cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if method == walletv1.WalletService_CheckStake_FullMethodName {
				checks.Add(1)
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		}))
		h.fund(10000, "alice", "bob")
		setLimits(h, "alice", &walletv1.PlayerLimits{MaxStake: 1200})
		id := h.tableWith(nil, 0, cards, "alice", "bob")
		h.acceptBank(id, "alice", 1000)
		h.mustBet(id, "bob", 500) // the bank wins: 1475 is over 1200
		passed(h, id)
		if n := checks.Load(); n != 0 {
			t.Errorf("CheckStake called %d times; the settlement gave the verdict", n)
		}
	})
	t.Run("self-excluded between coups", func(t *testing.T) {
		h := newHarness(t)
		h.fund(10000, "alice", "bob")
		id := h.tableWith(nil, 0, cards, "alice", "bob")
		h.acceptBank(id, "alice", 1000)
		h.mustBet(id, "bob", 500) // alice keeps 1475
		if got := h.get(id).GetBankerPlayerId(); got != "alice" {
			t.Fatalf("banker %q after a won coup, want alice", got)
		}
		setLimits(h, "alice", &walletv1.PlayerLimits{SelfExcludedUntil: timestamppb.New(time.Now().Add(24 * time.Hour))})
		// Her bank was at stake when she excluded herself: this coup is
		// played, and she keeps no bank after it.
		h.mustBet(id, "bob", 500)
		passed(h, id)
		if _, err := h.tables.AcceptBank(h.as("alice"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 1000}); err == nil {
			t.Fatal("a self-excluded player took the bank again")
		}
	})
}
