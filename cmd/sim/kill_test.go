package sim

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestVoidOfACoupTheWalletSettled replays failure 10 of the README
// (void-after-kill) on its own: table-svc is killed once wallet-svc has
// settled a coup (SettleCoup made, the result not stored: the crash point
// after-settle) and started again on what the kill left, the coup
// dealing; the croupier voids it before the retry pass has finished it.
// The wallet's settlement stands, so the coup must end settled, not
// voided: VoidCoup refused WRONG_STATE and the coup finished, the ledger
// and the table agreeing. It failed while the bug was open.
func TestVoidOfACoupTheWalletSettled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the suite")
	}
	f := newFaults(1, func(string, ...any) {})
	killed := false
	f.force = func(_, method string) string {
		if method == "SettleCoup" && !killed {
			killed = true
			return faultKillAfter
		}
		return ""
	}
	c, err := newCluster(t.TempDir(), slog.New(slog.DiscardHandler), newClock(), f, newRelayFaults(1), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	s := &sim{cl: c, faults: f, res: &Result{}, seen: map[string]bool{}, players: map[string]*simPlayer{"p": {id: "p"}, "q": {id: "q"}}, rng: rand.New(rand.NewPCG(1, 1))}
	for _, p := range []string{"p", "q"} {
		if err := s.deposit(p, 5000); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := s.as("operator")
	defer cancel()
	sh, err := c.shoes.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "shoe", Cards: s.decksOrder(2), CutCardFromEnd: 14})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.tables.CreateTable(ctx, &tablev1.CreateTableRequest{RequestId: "t", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: &tablev1.HouseRules{CertificationRealMoney: true, CommissionBp: proto.Int64(500)}})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	call := func(who string, f func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := s.as(who)
		defer cancel()
		s.killable(func() { err = f(ctx) })
	}
	for _, p := range []string{"p", "q"} {
		call(p, func(ctx context.Context) error {
			_, err := c.tables.JoinTable(ctx, &tablev1.JoinTableRequest{RequestId: "j" + p, TableId: id, PlayerId: p})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	call("p", func(ctx context.Context) error {
		_, err := c.tables.AcceptBank(ctx, &tablev1.AcceptBankRequest{RequestId: "b", TableId: id, PlayerId: "p", Amount: 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// q covers the bank; the coup deals, and decisions, if any, are made
	// until the settlement, where table-svc is killed.
	call("q", func(ctx context.Context) error {
		_, err := c.tables.PlaceBet(ctx, &tablev1.PlaceBetRequest{RequestId: "bet", TableId: id, PlayerId: "q", Amount: 1000})
		return err
	})
	for i := 0; !killed && i < 4; i++ {
		v := s.table(t, id)
		if v.GetState() != stDecision {
			t.Fatalf("the coup is %s, neither settled nor waiting for a decision", stateName(v.GetState()))
		}
		who := v.GetCoup().GetDecisionPlayerId()
		call(who, func(ctx context.Context) error {
			_, err := c.tables.DecideDraw(ctx, &tablev1.DecideDrawRequest{RequestId: "d" + who, TableId: id, PlayerId: who,
				Choice: tablev1.DrawChoice_DRAW_CHOICE_STAND})
			return err
		})
	}
	if !killed || c.killCount(svcTable) != 1 {
		t.Fatal("table-svc was not killed at the settlement")
	}
	v := s.table(t, id)
	coup := v.GetCoup().GetCoupId()
	if v.GetState() != stDealing || coup == "" {
		t.Fatalf("after the kill the table is %s, want the coup dealing", brief(v))
	}
	call("croupier", func(ctx context.Context) error {
		_, err := c.tables.VoidCoup(ctx, &tablev1.VoidCoupRequest{RequestId: "void", TableId: id, CoupId: coup, Reason: "sim"})
		return err
	})
	// The wallet settled the coup: the void is refused, the table
	// finishes the coup.
	if status.Code(err) != codes.FailedPrecondition || errs.Reason(err) != "WRONG_STATE" {
		t.Errorf("the void of a coup the wallet settled: %v, want FAILED_PRECONDITION WRONG_STATE", err)
	}
	for range 3 {
		call("croupier", func(context.Context) error { c.table.Tick(context.Background()); return nil })
	}
	v = s.table(t, id)
	last := v.GetLastCoup()
	if last.GetCoupId() != coup || last.GetVoided() || !last.GetSettled() {
		t.Errorf("the coup the wallet settled ended %s (voided %t, settled %t), want settled", brief(v), last.GetVoided(), last.GetSettled())
	}
	trs, err := s.statement("player:q")
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, tr := range trs {
		moved = moved || tr.GetReference() == coup
	}
	if !moved {
		t.Errorf("the wallet moved no money for the coup: the kill came before its settlement")
	}
}

// table reads a table as the croupier sees it.
func (s *sim) table(t *testing.T, id string) *tablev1.Table {
	t.Helper()
	ctx, cancel := s.as("croupier")
	defer cancel()
	resp, err := s.cl.tables.GetTable(ctx, &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTable()
}
