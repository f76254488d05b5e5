package e2e

import (
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestAdviceThroughGateway: the advice RPC answers for a live coup through
// the gateway, for the player who must decide, with exact EVs.
func TestAdviceThroughGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 1_000_000_000, "alice", "bob")
	created, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "advice-table"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "j-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 400; i++ {
		resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		tbl, n := resp.GetTable(), string(rune('a'+i%26))+string(rune('a'+i/26))
		switch tbl.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			p := tbl.GetOfferedPlayerId()
			if _, err := c.table.AcceptBank(as(t, p), &tablev1.AcceptBankRequest{RequestId: "bank-" + n, TableId: id, PlayerId: p, Amount: 1000}); err != nil {
				t.Fatal(err)
			}
		case tablev1.TableState_TABLE_STATE_BETTING:
			p := tbl.GetCoup().GetTurnPlayerId()
			if _, err := c.table.PlaceBet(as(t, p), &tablev1.PlaceBetRequest{RequestId: "bet-" + n, TableId: id, PlayerId: p, Amount: tbl.GetCoup().GetUncovered()}); err != nil {
				t.Fatal(err)
			}
		case tablev1.TableState_TABLE_STATE_DECISION:
			who := tbl.GetCoup().GetDecisionPlayerId()
			a, err := c.table.GetAdvice(as(t, who), &tablev1.GetAdviceRequest{TableId: id, PlayerId: who})
			if err != nil {
				t.Fatal(err)
			}
			if a.GetDecisionPlayerId() != who || a.GetDrawEvExact() == "" || a.GetStandEvExact() == "" || a.GetBest() == tablev1.DrawChoice_DRAW_CHOICE_UNSPECIFIED {
				t.Fatalf("advice %v", a)
			}
			t.Logf("coup %d, %s on %v: draw EV %s (%.5f), stand EV %s (%.5f), best %v", tbl.GetCoup().GetNumber(), who,
				a.GetHand(), a.GetDrawEvExact(), a.GetDrawEv(), a.GetStandEvExact(), a.GetStandEv(), a.GetBest())
			return
		default:
			t.Fatalf("state %v", tbl.GetState())
		}
	}
	t.Fatal("no decision in 400 steps")
}
