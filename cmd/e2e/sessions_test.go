package e2e

import (
	"testing"
	"time"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestSessionInactivityPuntoBanco: through the gateway, a punto banco
// table with inactivity_limit_ms (the shortest, 10 s) gives each seated
// player a session id and stands both up once idle, alice's bet settled
// first; no money is lost on the way.
func TestSessionInactivityPuntoBanco(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 20000, "alice", "bob")
	if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/float", AccountId: "house:bank", Amount: 200000}); err != nil {
		t.Fatal(err)
	}
	zero := int32(0)
	resp, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table",
		Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{
			BettingWindowMs: 1000, ResultPauseMs: &zero, InactivityLimitMs: 10000}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	if got := resp.GetTable().GetPuntoBancoRules().GetInactivityLimitMs(); got != 10000 {
		t.Fatalf("inactivity_limit_ms %d", got)
	}
	var tb *tablev1.Table
	for _, p := range []string{"alice", "bob"} {
		r, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: t.Name() + "/join/" + p, TableId: id, PlayerId: p})
		if err != nil {
			t.Fatal(err)
		}
		tb = r.GetTable()
	}
	sessions := map[string]bool{}
	for _, s := range tb.GetSeats() {
		if len(s.GetSessionId()) != 26 || sessions[s.GetSessionId()] { // a ULID, new per seating
			t.Fatalf("seat %d: session id %q", s.GetNumber(), s.GetSessionId())
		}
		sessions[s.GetSessionId()] = true
	}
	if _, err := c.table.PlaceBet(as(t, "alice"), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/bet", TableId: id, PlayerId: "alice",
		Spot: tablev1.BetSpot_BET_SPOT_BANK, Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	// Wait, every 100 ms, for both seats to be freed (the limit is 10 s).
	deadline := time.Now().Add(40 * time.Second)
	for {
		r, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		if tb = r.GetTable(); len(tb.GetSeats()) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 40 s for the idle players to be stood up: seats %v, state %s", tb.GetSeats(), tb.GetState())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lc := tb.GetLastCoup(); !lc.GetSettled() || len(lc.GetBets()) != 1 || lc.GetBets()[0].GetPlayerId() != "alice" {
		t.Fatalf("alice's coup: %v", lc)
	}
	total := c.balance(t, "house:bank") + c.balance(t, "house:commission")
	for _, p := range []string{"alice", "bob"} {
		a := c.account(t, "player:"+p)
		if a.GetHeld() != 0 {
			t.Errorf("%s still has %d held", p, a.GetHeld())
		}
		total += a.GetBalance()
	}
	if total != 2*20000+200000 {
		t.Errorf("money not conserved: %d, deposited %d", total, 2*20000+200000)
	}
}
