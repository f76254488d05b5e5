package tablesvc

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// TestPlayerSeedsAtTable: a table's shoe waits for its players' seeds
// after its commitment (the view shows the commitment and who gave one);
// the seeds of JoinTable and PlaceBet (one per player, his first) go into
// the shoe before its first card; a seed given once the order is fixed is
// ignored; the view, shoe_seeded and the reveal say whose seeds are in
// it, and the closed shoe verifies with them.
func TestPlayerSeedsAtTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	id := h.shuffledTable()
	e := h.get(id).GetShoeEntropy()
	if !e.GetCollecting() || e.GetSeeded() || len(e.GetCommitment()) != fair.CommitmentSize || len(e.GetPlayerIds()) != 0 {
		t.Fatalf("a new table's shoe entropy: %v", e)
	}
	commitment := e.GetCommitment()
	join := func(p, seed string) *tablev1.Table {
		t.Helper()
		resp, err := h.tables.JoinTable(h.as(p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p, PlayerSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTable()
	}
	_, err := h.tables.JoinTable(h.as("alice"), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice",
		PlayerSeed: strings.Repeat("x", 257)})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	join("alice", "alice's seed")
	join("bob", "")
	if got := join("carol", "carol's seed").GetShoeEntropy().GetPlayerIds(); !slices.Equal(got, []string{"alice", "carol"}) {
		t.Fatalf("collecting, the seeds of %v", got)
	}
	h.acceptBank(id, "alice", 1000)
	bet := func(p, seed string, amount int64) *tablev1.Table {
		t.Helper()
		resp, err := h.tables.PlaceBet(h.as(p), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount, PlayerSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTable()
	}
	bet("bob", "bob's seed", 400)
	tb := bet("carol", "carol's second seed", 600) // the betting closes: the shoe is seeded, dealt
	e = tb.GetShoeEntropy()
	want := []string{"alice", "bob", "carol"}
	if e.GetCollecting() || !e.GetSeeded() || !e.GetPlayerEntropy() || !slices.Equal(e.GetPlayerIds(), want) || !proto.Equal(
		&tablev1.ShoeEntropy{Commitment: e.GetCommitment()}, &tablev1.ShoeEntropy{Commitment: commitment}) {
		t.Fatalf("seeded: %v", e)
	}
	shoe, err := h.shoes.GetShoe(h.as("dave"), &shoev1.GetShoeRequest{ShoeId: tb.GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by their bytes: the order of the shoe does not depend on who gave first.
	if s := shoe.GetShoe(); !slices.Equal(s.GetPlayerSeeds(), []string{"alice's seed", "bob's seed", "carol's seed"}) ||
		!slices.Equal(s.GetPlayerSeedPlayerIds(), want) || s.GetState() != shoev1.ShoeState_SHOE_STATE_OPEN {
		t.Fatalf("the shoe: seeds %q of %q, %v", s.GetPlayerSeeds(), s.GetPlayerSeedPlayerIds(), s.GetState())
	}
	// Too late: dave's seed is ignored, he sits all the same.
	if got := join("dave", "dave's seed").GetShoeEntropy().GetPlayerIds(); !slices.Equal(got, want) {
		t.Fatalf("after the seeding, player ids %v", got)
	}
	var seeded []string
	for _, ev := range h.events(id) {
		if s := ev.GetShoeSeeded(); s != nil {
			seeded = append(seeded, s.GetSource()+" "+strings.Join(s.GetPlayerIds(), ","))
			if s.GetShoeId() != tb.GetShoeId() || s.GetShoeNumber() != 1 || string(s.GetCommitment()) != string(commitment) {
				t.Errorf("shoe_seeded: %v", s)
			}
		}
	}
	if !slices.Equal(seeded, []string{"table alice,bob,carol"}) {
		t.Errorf("shoe_seeded events %q", seeded)
	}
	// Finish the coup, close the table: its shoe is closed, and verifies.
	for tb := h.get(id); tb.GetState() == tablev1.TableState_TABLE_STATE_DECISION; tb = h.get(id) {
		if _, err := h.decide(id, tb.GetCoup().GetDecisionPlayerId(), true); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "end"}); err != nil {
		t.Fatal(err)
	}
	var rv *shoev1.GetShoeRevealResponse
	waitFor(t, func() bool {
		rv, err = h.shoes.GetShoeReveal(h.as("alice"), &shoev1.GetShoeRevealRequest{ShoeId: tb.GetShoeId()})
		return err == nil
	}, "the table's shoe to close")
	if err := fair.Verify(shoesvc.FairReveal(rv.GetReveal())); err != nil || string(rv.GetReveal().GetCommitment()) != string(commitment) ||
		!slices.Contains(rv.GetReveal().GetPlayerSeeds(), "alice's seed") || len(rv.GetReveal().GetDealt()) < 4 {
		t.Fatalf("the reveal: %v (%v)", rv.GetReveal(), err)
	}
	forged := proto.CloneOf(rv.GetReveal())
	forged.PlayerSeeds[0] = "another seed"
	if err := fair.Verify(shoesvc.FairReveal(forged)); !errors.Is(err, fair.ErrMismatch) {
		t.Fatalf("the reveal with another seed for alice: %v", err)
	}
}

// TestShoeWithoutPlayerSeeds: nobody gives a seed: the game goes on, the
// shoe is seeded with none, and the view and shoe_seeded say it has no
// player entropy. A table opened on a certification shoe collects none.
func TestShoeWithoutPlayerSeeds(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.shuffledTable("alice", "bob")
	h.acceptBank(id, "alice", 1000)
	e := h.mustBet(id, "bob", 1000).GetShoeEntropy()
	if e.GetCollecting() || !e.GetSeeded() || e.GetPlayerEntropy() || len(e.GetPlayerIds()) != 0 {
		t.Fatalf("seeded with no seed: %v", e)
	}
	cert := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob")
	if e := h.get(cert).GetShoeEntropy(); e.GetCollecting() || len(e.GetCommitment()) != 0 {
		t.Fatalf("a certification table's shoe entropy: %v", e)
	}
	for _, tid := range []string{id, cert} {
		if tid == cert {
			h.acceptBank(cert, "alice", 1000)
			h.mustBet(cert, "bob", 1000)
		}
		var got []string
		for _, ev := range h.events(tid) {
			if s := ev.GetShoeSeeded(); s != nil {
				got = append(got, s.GetSource()+":"+strings.Join(s.GetPlayerIds(), ","))
			}
		}
		if !slices.Equal(got, []string{"none:"}) {
			t.Errorf("table %s: shoe_seeded %q", tid, got)
		}
	}
}
