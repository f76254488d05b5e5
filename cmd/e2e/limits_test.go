package e2e

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestPlayerLimitsAtTheTable: the operator's responsible-gaming limits
// through the gateway: a stake over the maximum, a bank over the daily
// loss limit and a self-excluded player's seat are refused with
// LIMIT_REACHED naming the limit, and nothing is held; a player reads his
// own limits, not another's.
func TestPlayerLimitsAtTheTable(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob", "carol")
	set := func(player string, l *walletv1.PlayerLimits) {
		t.Helper()
		if _, err := c.wallet.SetPlayerLimits(as(t, "operator"), &walletv1.SetPlayerLimitsRequest{RequestId: "limits-" + player, AccountId: "player:" + player, Limits: l}); err != nil {
			t.Fatal(err)
		}
	}
	wantLimit := func(err error, limit string) {
		t.Helper()
		if errs.Reason(err) != "LIMIT_REACHED" || status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("got %v, want FAILED_PRECONDITION LIMIT_REACHED", err)
		}
		if got := errs.Info(err).GetMetadata()["limit"]; got != limit {
			t.Fatalf("LIMIT_REACHED names %q, want %q", got, limit)
		}
	}
	set("alice", &walletv1.PlayerLimits{DailyLossLimit: 800})
	set("bob", &walletv1.PlayerLimits{MaxStake: 300})
	set("carol", &walletv1.PlayerLimits{SelfExcludedUntil: timestamppb.New(time.Now().Add(30 * 24 * time.Hour))})

	// Players may not set their own limits, nor read another's.
	_, err := c.wallet.SetPlayerLimits(as(t, "bob"), &walletv1.SetPlayerLimitsRequest{RequestId: "mine", AccountId: "player:bob"})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a player set his limits: %v", err)
	}
	if _, err := c.wallet.GetPlayerLimits(as(t, "bob"), &walletv1.GetPlayerLimitsRequest{AccountId: "player:alice"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("bob read alice's limits: %v", err)
	}
	own, err := c.wallet.GetPlayerLimits(as(t, "bob"), &walletv1.GetPlayerLimitsRequest{AccountId: "player:bob"})
	if err != nil || own.GetLimits().GetMaxStake() != 300 {
		t.Fatalf("bob's own limits: %v, %v", own, err)
	}

	tbl, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "limits-table"})
	if err != nil {
		t.Fatal(err)
	}
	id := tbl.GetTable().GetTableId()
	_, err = c.table.JoinTable(as(t, "carol"), &tablev1.JoinTableRequest{RequestId: "j-carol", TableId: id, PlayerId: "carol"})
	wantLimit(err, "self_exclusion")
	_, err = c.table.JoinGallery(as(t, "carol"), &tablev1.JoinGalleryRequest{RequestId: "g-carol", TableId: id, PlayerId: "carol"})
	wantLimit(err, "self_exclusion")
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "j-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	// A bank of 1000 could lose more than alice's daily limit of 800.
	_, err = c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank-1000", TableId: id, PlayerId: "alice", Amount: 1000})
	wantLimit(err, "daily_loss")
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank-800", TableId: id, PlayerId: "alice", Amount: 800}); err != nil {
		t.Fatal(err)
	}
	_, err = c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "bet-600", TableId: id, PlayerId: "bob", Amount: 600})
	wantLimit(err, "max_stake")
	for p, held := range map[string]int64{"alice": 800, "bob": 0, "carol": 0} {
		a, err := c.wallet.GetAccount(as(t, "auditor"), &walletv1.GetAccountRequest{AccountId: "player:" + p})
		if err != nil || a.GetAccount().GetHeld() != held || a.GetAccount().GetBalance() != 5000 {
			t.Errorf("%s: %v, %v; want balance 5000, held %d", p, a.GetAccount(), err, held)
		}
	}
	// Within the limit, the bet stands.
	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "bet-300", TableId: id, PlayerId: "bob", Amount: 300}); err != nil {
		t.Fatal(err)
	}
}
