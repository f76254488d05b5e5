package tablesvc

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// TestIntentRolledBack: a hold the wallet made for a request the table
// never stored (table-svc died in between) is released, and the request
// id is answered REQUEST_ABANDONED, so no escrow is left behind.
func TestIntentRolledBack(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	// What PlaceBet does up to its save: the intent and the hold.
	req := &tablev1.PlaceBetRequest{RequestId: "cut-off", TableId: id, PlayerId: "bob", Amount: 300}
	tbl, err := h.table.load(id)
	if err != nil {
		t.Fatal(err)
	}
	c := &change{t: tbl, key: "PlaceBet/player/bob/cut-off", hash: store.Hash(req)}
	if _, err := h.table.hold(context.Background(), c, "table/"+id+"/bet/cut-off", "bob", 300, "x", false); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 300 {
		t.Fatalf("bob held %d", held)
	}
	// Too young for the periodic pass; rolled back once old enough.
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 300 {
		t.Fatalf("rolled back within the grace time: held %d", held)
	}
	h.clock.Advance(intentGrace)
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 0 {
		t.Fatalf("the cut-off bet is still held: %d", held)
	}
	_, err = h.tables.PlaceBet(h.as("bob"), req)
	wantReason(t, err, codes.Aborted, reasonRequestAbandoned)
	// With a new request id the bet goes through.
	tbl2 := h.mustBet(id, "bob", 300)
	if b := tbl2.GetLastCoup().GetBets(); len(b) != 1 || b[0].GetAmount() != 300 {
		t.Fatalf("the new bet was not played: %v", tbl2.GetLastCoup())
	}
}
