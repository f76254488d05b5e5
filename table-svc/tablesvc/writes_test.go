package tablesvc

import (
	"testing"

	"github.com/chemmy/chemmy/services/kit/store"
)

// writes returns the durable writes (store writer calls) f made in each
// service's file: "table", "wallet", "shoe".
func writes(f func()) map[string]uint64 {
	before := store.Snapshot()
	f()
	after := store.Snapshot()
	out := map[string]uint64{}
	for _, db := range []string{"table", "wallet", "shoe"} {
		out[db] = after[db].Calls - before[db].Calls
	}
	return out
}

// A chemin de fer coup with a forced third card whose bank loses and
// passes, played through the real services, costs per file: the shoe 1
// (the opening four and the player's third card in one DealCards:
// RULES.md CF-DEAL, CF-PLAYER-DRAW), the wallet 2 (the bet's PlaceHold;
// SettleCoup, which releases the outgoing bank's hold, CF-LOSE: no
// VoidHold), the table 3 (the bet's escrow intent, the bet's save, the
// coup's save). Cards:
// player A+2 = 3 draws a 5 (8); banker K+6 = 6 stands against a 5
// (CF-BANKER-DRAW): 8 beats 6, the bank loses.
func TestCoupDurableWrites(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"AS", "KS", "2S", "6S", "5S"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	got := writes(func() { h.mustBet(id, "bob", 500) })
	tb := h.get(id)
	if lc := tb.GetLastCoup(); len(lc.GetPlayerCards()) != 3 || len(lc.GetBankerCards()) != 2 {
		t.Fatalf("coup %v: want the player's third card only", lc)
	}
	if tb.GetBankerPlayerId() == "alice" {
		t.Fatalf("alice keeps the bank: %v", tb)
	}
	// alice lost 500 of her 1000 bank; the rest is hers again, none held.
	if b, held := h.account("player:alice"); b != 9500 || held != 0 {
		t.Errorf("alice: balance %d held %d, want 9500 and 0", b, held)
	}
	want := map[string]uint64{"shoe": 1, "wallet": 2, "table": 3}
	for db, n := range want {
		if got[db] != n {
			t.Errorf("%s: %d durable writes in the coup, want %d (all: %v)", db, got[db], n, got)
		}
	}
}
