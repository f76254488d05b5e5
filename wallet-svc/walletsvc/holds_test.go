package walletsvc

import (
	"testing"
	"time"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// ExpireHolds expires the holds due at or before now, and only those.
func TestExpireHoldsOnlyTheDue(t *testing.T) {
	clk, e := newClockedEnv(t)
	svc := as(tableSvc)
	e.deposit("player:alice", 1000)
	place := func(id string, amount int64, ttl time.Duration) *walletv1.Hold {
		t.Helper()
		r, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: id, AccountId: "player:alice", Amount: amount, Ttl: durationpb.New(ttl)})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetHold()
	}
	sweep := func(id string) int {
		t.Helper()
		r, err := e.c.ExpireHolds(as(operator), &walletv1.ExpireHoldsRequest{RequestId: id})
		if err != nil {
			t.Fatal(err)
		}
		return len(r.GetHolds())
	}
	place("short", 100, time.Minute)
	place("long", 200, time.Hour)
	e.wantBal("player:alice", 1000, 300)
	clk.Advance(2 * time.Minute)
	if n := sweep("sweep-1"); n != 1 {
		t.Fatalf("first sweep expired %d holds, want 1", n)
	}
	e.wantBal("player:alice", 1000, 200) // the hour's hold stays
	clk.Advance(58 * time.Minute)        // exactly its expire_time: due
	if n := sweep("sweep-2"); n != 1 {
		t.Fatalf("second sweep expired %d holds, want 1", n)
	}
	e.wantBal("player:alice", 1000, 0)
	e.audit()
}
