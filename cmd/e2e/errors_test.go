package e2e

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestClientErrorsThroughGateway: every error a client can trigger comes
// back as a status with an ErrorInfo reason and moves no money.
func TestClientErrorsThroughGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob", "carol")

	created, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "errs-table"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol", "dave"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "join-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	before := c.balances(t)
	tableBefore, _ := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})

	noToken := func() context.Context { return context.Background() }
	badToken := func() context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer nope")
	}
	cases := []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
	}{
		{"bet out of turn (CF-BET-ORDER)", func() error {
			_, err := c.table.PlaceBet(as(t, "carol"), &tablev1.PlaceBetRequest{RequestId: "e1", TableId: id, PlayerId: "carol", Amount: 100})
			return err
		}, codes.FailedPrecondition, "NOT_YOUR_TURN"},
		{"bet over the bank (CF-BET-LIMIT)", func() error {
			_, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "e2", TableId: id, PlayerId: "bob", Amount: 1001})
			return err
		}, codes.FailedPrecondition, "BET_EXCEEDS_BANK"},
		{"unknown table", func() error {
			_, err := c.table.GetTable(as(t, "bob"), &tablev1.GetTableRequest{TableId: "no-such-table"})
			return err
		}, codes.NotFound, "TABLE_NOT_FOUND"},
		{"no token", func() error {
			_, err := c.table.GetTable(noToken(), &tablev1.GetTableRequest{TableId: id})
			return err
		}, codes.Unauthenticated, "TOKEN_MISSING"},
		{"bad token", func() error {
			_, err := c.table.GetTable(badToken(), &tablev1.GetTableRequest{TableId: id})
			return err
		}, codes.Unauthenticated, "TOKEN_UNKNOWN"},
		{"acting for another player", func() error {
			_, err := c.table.PlaceBet(as(t, "carol"), &tablev1.PlaceBetRequest{RequestId: "e3", TableId: id, PlayerId: "bob", Amount: 100})
			return err
		}, codes.PermissionDenied, "NOT_YOURSELF"},
		{"player role on a croupier method", func() error {
			_, err := c.table.CreateTable(as(t, "bob"), &tablev1.CreateTableRequest{RequestId: "e4"})
			return err
		}, codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
		{"internal method", func() error {
			_, err := c.wallet.SettleCoup(as(t, "operator"), &walletv1.SettleCoupRequest{CoupId: "x"})
			return err
		}, codes.PermissionDenied, "METHOD_NOT_PUBLIC"},
		{"reading another player's account", func() error {
			_, err := c.wallet.GetAccount(as(t, "bob"), &walletv1.GetAccountRequest{AccountId: "player:alice"})
			return err
		}, codes.PermissionDenied, "NOT_YOURSELF"},
		{"banker bets against himself", func() error {
			_, err := c.table.CallBanco(as(t, "alice"), &tablev1.CallBancoRequest{RequestId: "e5", TableId: id, PlayerId: "alice"})
			return err
		}, codes.FailedPrecondition, "BANKER_CANNOT_BET"},
		{"decision when none is pending", func() error {
			_, err := c.table.DecideDraw(as(t, "bob"), &tablev1.DecideDrawRequest{RequestId: "e6", TableId: id, PlayerId: "bob", Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
			return err
		}, codes.FailedPrecondition, "WRONG_STATE"},
		{"missing request id", func() error {
			_, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{TableId: id, PlayerId: "bob", Amount: 100})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"negative bet", func() error {
			_, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "e7", TableId: id, PlayerId: "bob", Amount: -5})
			return err
		}, codes.InvalidArgument, "INVALID_AMOUNT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != tc.code || errs.Reason(err) != tc.reason {
				t.Fatalf("got %v (reason %q), want %v %s", err, errs.Reason(err), tc.code, tc.reason)
			}
		})
	}

	// Insufficient funds: bob and carol pass, dave (never funded) calls banco.
	for _, p := range []string{"bob", "carol"} {
		if _, err := c.table.DeclineBet(as(t, p), &tablev1.DeclineBetRequest{RequestId: "pass-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.table.PlaceBet(as(t, "dave"), &tablev1.PlaceBetRequest{RequestId: "e8", TableId: id, PlayerId: "dave", Amount: 500})
	if status.Code(err) != codes.FailedPrecondition || errs.Reason(err) != "INSUFFICIENT_FUNDS" {
		t.Fatalf("unfunded bet: %v", err)
	}
	// A request id reused for another request.
	_, err = c.table.DeclineBet(as(t, "bob"), &tablev1.DeclineBetRequest{RequestId: "pass-bob", TableId: id, PlayerId: "carol"})
	if status.Code(err) == codes.OK || (errs.Reason(err) != "REQUEST_ID_REUSED" && errs.Reason(err) != "NOT_YOURSELF") {
		t.Fatalf("reused request id: %v", err)
	}

	after := c.balances(t)
	for a, v := range before {
		if after[a] != v {
			t.Errorf("%s moved from %d to %d by refused requests", a, v, after[a])
		}
	}
	acct, err := c.wallet.GetAccount(as(t, "operator"), &walletv1.GetAccountRequest{AccountId: "player:alice"})
	if err != nil || acct.GetAccount().GetHeld() != 1000 {
		t.Errorf("alice's bank hold: %v, %v", acct, err)
	}
	tableAfter, _ := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	if n := len(tableAfter.GetTable().GetCoup().GetBets()); n != 0 || len(tableBefore.GetTable().GetCoup().GetBets()) != 0 {
		t.Errorf("refused bets left %d bets on the table", n)
	}
}
