package tablesvc

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// commitTo is a seed's commitment: SHA-256 of its bytes, as a player's
// client computes it (no code of the service's).
func commitTo(seed string) []byte {
	sum := sha256.Sum256([]byte(seed))
	return sum[:]
}

// seedOf is a player's seed for the tests: 16 bytes at least.
func seedOf(player string) string { return player + "'s seed, sixteen bytes and more" }

func (h *harness) commitSeed(id, p, seed string) (*tablev1.Table, error) {
	resp, err := h.tables.CommitSeed(h.as(p), &tablev1.CommitSeedRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Commitment: commitTo(seed)})
	return resp.GetTable(), err
}

func (h *harness) revealSeed(id, p, seed string) (*tablev1.Table, error) {
	resp, err := h.tables.RevealSeed(h.as(p), &tablev1.RevealSeedRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Seed: seed})
	return resp.GetTable(), err
}

// seedEvents are the table's events of the seed protocol, as
// "kind:detail" lines in the order they were emitted.
func (h *harness) seedEvents(id string) []string {
	var out []string
	names := func(cs []*eventsv1.SeedCommitment) string {
		var ps []string
		for _, c := range cs {
			ps = append(ps, c.GetPlayerId())
		}
		return strings.Join(ps, ",")
	}
	for _, ev := range h.events(id) {
		switch {
		case ev.GetSeedCommitmentsFixed() != nil:
			out = append(out, "fixed:"+names(ev.GetSeedCommitmentsFixed().GetSeedCommitments()))
		case ev.GetShoeSeeded() != nil:
			out = append(out, "seeded:"+ev.GetShoeSeeded().GetSource()+":"+strings.Join(ev.GetShoeSeeded().GetPlayerIds(), ","))
		case ev.GetShoeAbandoned() != nil:
			out = append(out, "abandoned:"+strings.Join(ev.GetShoeAbandoned().GetWithheldPlayerIds(), ","))
		case ev.GetCardDealt() != nil && len(out) > 0 && out[len(out)-1] != "card":
			out = append(out, "card")
		}
	}
	return out
}

// TestPlayerSeedsAtTable: a table's shoe takes its players' commitments
// after the server's (with JoinTable, PlaceBet, CommitSeed); a plain seed
// is refused; the betting that closes fixes the commitments and the coup
// waits for the seeds; a seed that is not the committed one is refused;
// with every seed in, the shoe is seeded and the coup dealt; the view,
// shoe_seeded and the reveal say whose seeds are in it, with their
// commitments, and the closed shoe verifies with them.
func TestPlayerSeedsAtTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	id := h.shuffledTable()
	e := h.get(id).GetShoeEntropy()
	if !e.GetCollecting() || e.GetSeeded() || len(e.GetCommitment()) != fair.CommitmentSize || len(e.GetPlayerIds()) != 0 {
		t.Fatalf("a new table's shoe entropy: %v", e)
	}
	commitment := e.GetCommitment()
	join := func(p string, c []byte) (*tablev1.Table, error) {
		resp, err := h.tables.JoinTable(h.as(p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p, SeedCommitment: c})
		return resp.GetTable(), err
	}
	// A plain seed, and a commitment that is no SHA-256, are refused: the
	// player does not sit down.
	_, err := h.tables.JoinTable(h.as("alice"), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice",
		PlayerSeed: seedOf("alice")})
	wantReason(t, err, codes.InvalidArgument, reasonSeedCommitmentRequired)
	_, err = join("alice", []byte("short"))
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	if n := len(h.get(id).GetSeats()); n != 0 {
		t.Fatalf("%d seated after refused joins", n)
	}
	for _, p := range []string{"alice", "bob", "carol"} {
		c := commitTo(seedOf(p))
		if p == "bob" {
			c = nil
		}
		if _, err := join(p, c); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.get(id).GetShoeEntropy(); !slices.Equal(got.GetPlayerIds(), []string{"alice", "carol"}) || len(got.GetCommitments()) != 2 ||
		!slices.Equal(got.GetCommitments()[0].GetCommitment(), commitTo(seedOf("alice"))) {
		t.Fatalf("collecting, the commitments of %v", got)
	}
	// alice commits once: the same again is taken, another is refused.
	if _, err := h.commitSeed(id, "alice", seedOf("alice")); err != nil {
		t.Fatal(err)
	}
	_, err = h.commitSeed(id, "alice", "alice's other seed, sixteen bytes")
	wantReason(t, err, codes.AlreadyExists, reasonSeedAlreadyCommitted)
	// Before the commitments are fixed no seed is taken.
	_, err = h.revealSeed(id, "alice", seedOf("alice"))
	wantReason(t, err, codes.FailedPrecondition, reasonNotRevealing)

	h.acceptBank(id, "alice", 1000)
	bet := func(p string, amount int64, c []byte) *tablev1.Table {
		t.Helper()
		resp, err := h.tables.PlaceBet(h.as(p), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount, SeedCommitment: c})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTable()
	}
	bet("bob", 400, commitTo(seedOf("bob")))
	tb := bet("carol", 600, nil) // the betting closes: the commitments are fixed, nothing is dealt
	e = tb.GetShoeEntropy()
	want := []string{"alice", "bob", "carol"}
	if e.GetCollecting() || !e.GetRevealing() || e.GetSeeded() || !slices.Equal(e.GetPlayerIds(), want) || e.GetRevealDeadline() == nil ||
		len(e.GetRevealedPlayerIds()) != 0 || tb.GetCoup() == nil || len(tb.GetCoup().GetPlayerCards())+len(tb.GetCoup().GetBankerCards()) != 0 {
		t.Fatalf("after the betting: %v, coup %v", e, tb.GetCoup())
	}
	shoe, err := h.shoes.GetShoe(h.as("dave"), &shoev1.GetShoeRequest{ShoeId: tb.GetShoeId()})
	if err != nil || shoe.GetShoe().GetState() != shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS {
		t.Fatalf("the shoe while the seeds are revealed: %v (%v)", shoe.GetShoe().GetState(), err)
	}
	// Too late to commit; a seed that is not the committed one; a player
	// who did not commit.
	_, err = h.commitSeed(id, "dave", seedOf("dave"))
	wantReason(t, err, codes.FailedPrecondition, reasonSeedsNotCollecting)
	_, err = h.revealSeed(id, "bob", seedOf("carol"))
	wantReason(t, err, codes.InvalidArgument, reasonSeedMismatch)
	_, err = h.revealSeed(id, "dave", seedOf("dave"))
	wantReason(t, err, codes.FailedPrecondition, reasonSeedNotCommitted)
	_, err = h.revealSeed(id, "bob", "short")
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	for _, p := range []string{"carol", "alice"} {
		tb, err = h.revealSeed(id, p, seedOf(p))
		if err != nil {
			t.Fatal(err)
		}
		if tb.GetShoeEntropy().GetSeeded() || len(tb.GetCoup().GetPlayerCards()) != 0 {
			t.Fatalf("seeded before bob's seed: %v", tb.GetShoeEntropy())
		}
	}
	tb, err = h.revealSeed(id, "bob", seedOf("bob")) // the last: seeded and dealt
	if err != nil {
		t.Fatal(err)
	}
	e = tb.GetShoeEntropy()
	dealt := tb.GetCoup()
	if len(dealt.GetPlayerCards()) == 0 {
		dealt = tb.GetLastCoup() // dealt and settled at once
	}
	if e.GetCollecting() || e.GetRevealing() || !e.GetSeeded() || !e.GetPlayerEntropy() || !slices.Equal(e.GetPlayerIds(), want) ||
		len(e.GetCommitments()) != 3 || !proto.Equal(&tablev1.ShoeEntropy{Commitment: e.GetCommitment()}, &tablev1.ShoeEntropy{Commitment: commitment}) ||
		len(dealt.GetPlayerCards()) < 2 {
		t.Fatalf("seeded: %v, coup %v", e, dealt)
	}
	shoe, err = h.shoes.GetShoe(h.as("dave"), &shoev1.GetShoeRequest{ShoeId: tb.GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by their bytes: the order of the shoe does not depend on who gave first.
	wantSeeds := []string{seedOf("alice"), seedOf("bob"), seedOf("carol")}
	if s := shoe.GetShoe(); !slices.Equal(s.GetPlayerSeeds(), wantSeeds) || !slices.Equal(s.GetPlayerSeedPlayerIds(), want) ||
		s.GetState() != shoev1.ShoeState_SHOE_STATE_OPEN {
		t.Fatalf("the shoe: seeds %q of %q, %v", s.GetPlayerSeeds(), s.GetPlayerSeedPlayerIds(), s.GetState())
	}
	if got := h.seedEvents(id); !slices.Equal(got, []string{"fixed:alice,bob,carol", "seeded:table:alice,bob,carol", "card"}) {
		t.Errorf("seed events %q", got)
	}
	for _, ev := range h.events(id) {
		if s := ev.GetShoeSeeded(); s != nil {
			if s.GetShoeId() != tb.GetShoeId() || s.GetShoeNumber() != 1 || string(s.GetCommitment()) != string(commitment) || len(s.GetSeedCommitments()) != 3 ||
				!slices.Equal(s.GetSeedCommitments()[1].GetCommitment(), commitTo(seedOf("bob"))) {
				t.Errorf("shoe_seeded: %v", s)
			}
		}
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
		!slices.Contains(rv.GetReveal().GetPlayerSeeds(), seedOf("alice")) || len(rv.GetReveal().GetDealt()) < 4 || rv.GetReveal().GetBurn() != 3 {
		t.Fatalf("the reveal: %v (%v)", rv.GetReveal(), err)
	}
	forged := proto.CloneOf(rv.GetReveal())
	forged.PlayerSeeds[0] = "another seed"
	if err := fair.Verify(shoesvc.FairReveal(forged)); !errors.Is(err, fair.ErrMismatch) {
		t.Fatalf("the reveal with another seed for alice: %v", err)
	}
	h.conserved(40000, "player:alice", "player:bob", "player:carol", "player:dave")
}

// TestSeedsCommittedBeforeRevealed: the set of commitments is fixed and
// published before any seed is revealed, and no order exists before the
// last seed: the shoe stays AWAITING_SEEDS (shoe-svc has no order), no
// commitment is taken once the set is fixed, and seed_commitments_fixed
// names exactly the commitments that shoe_seeded later names. At a punto
// banco table (the window closes on the clock), a player who did not bet
// may commit with CommitSeed.
func TestSeedsCommittedBeforeRevealed(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(10000, "alice", "bob")
	resp, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	if _, err := h.tables.PlaceBet(h.as("alice"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice",
		Spot: tablev1.BetSpot_BET_SPOT_BANK, Amount: 100, SeedCommitment: commitTo(seedOf("alice"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.commitSeed(id, "bob", seedOf("bob")); err != nil {
		t.Fatal(err)
	}
	tb := h.closeWindow(id)
	e := tb.GetShoeEntropy()
	if !e.GetRevealing() || e.GetCollecting() || len(e.GetCommitments()) != 2 {
		t.Fatalf("the window closed: %v", e)
	}
	fixed := h.events(id)
	var set []*eventsv1.SeedCommitment
	for _, ev := range fixed {
		if f := ev.GetSeedCommitmentsFixed(); f != nil {
			set = f.GetSeedCommitments()
			if f.GetShoeId() != tb.GetShoeId() || !f.GetRevealDeadline().AsTime().Equal(e.GetRevealDeadline().AsTime()) {
				t.Errorf("seed_commitments_fixed: %v", f)
			}
		}
	}
	if len(set) != 2 || set[0].GetPlayerId() != "alice" || !slices.Equal(set[1].GetCommitment(), commitTo(seedOf("bob"))) {
		t.Fatalf("the commitments fixed: %v", set)
	}
	_, err = h.commitSeed(id, "carol", seedOf("carol"))
	wantReason(t, err, codes.FailedPrecondition, reasonSeedsNotCollecting)
	if _, err := h.revealSeed(id, "alice", seedOf("alice")); err != nil {
		t.Fatal(err)
	}
	// One seed in, one missing: shoe-svc still has no order.
	shoe, err := h.shoes.GetShoe(h.as("op"), &shoev1.GetShoeRequest{ShoeId: tb.GetShoeId()})
	if err != nil || shoe.GetShoe().GetState() != shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS || len(shoe.GetShoe().GetPlayerSeeds()) != 0 {
		t.Fatalf("the shoe with one seed revealed: %v (%v)", shoe.GetShoe(), err)
	}
	if tb, err = h.revealSeed(id, "bob", seedOf("bob")); err != nil {
		t.Fatal(err)
	}
	if tb.GetLastCoup() == nil || !tb.GetShoeEntropy().GetSeeded() {
		t.Fatalf("after the last seed: %v, last coup %v", tb.GetShoeEntropy(), tb.GetLastCoup())
	}
	for _, ev := range h.events(id) {
		if s := ev.GetShoeSeeded(); s != nil {
			if len(s.GetSeedCommitments()) != len(set) {
				t.Fatalf("shoe_seeded names %v, the set fixed %v", s.GetSeedCommitments(), set)
			}
			for i := range set {
				if !proto.Equal(s.GetSeedCommitments()[i], set[i]) {
					t.Errorf("shoe_seeded %v, fixed %v", s.GetSeedCommitments()[i], set[i])
				}
			}
		}
	}
	if got := h.seedEvents(id); !slices.Equal(got, []string{"fixed:alice,bob", "seeded:table:alice,bob", "card"}) {
		t.Errorf("seed events %q", got)
	}
	// Each commitment and each reveal is an event of its own (the view's
	// event sequence moves with it), the reveal without the seed.
	var each []string
	for _, ev := range h.events(id) {
		switch {
		case ev.GetSeedCommitted() != nil:
			each = append(each, "committed:"+ev.GetSeedCommitted().GetPlayerId())
			if !slices.Equal(ev.GetSeedCommitted().GetCommitment(), commitTo(seedOf(ev.GetSeedCommitted().GetPlayerId()))) {
				t.Errorf("seed_committed: %v", ev.GetSeedCommitted())
			}
		case ev.GetSeedRevealed() != nil:
			each = append(each, "revealed:"+ev.GetSeedRevealed().GetPlayerId())
			if strings.Contains(ev.String(), "seed, sixteen") {
				t.Errorf("seed_revealed carries the seed: %v", ev)
			}
		}
	}
	if !slices.Equal(each, []string{"committed:alice", "committed:bob", "revealed:alice", "revealed:bob"}) {
		t.Errorf("seed_committed and seed_revealed: %q", each)
	}
}

// TestSeedsOverTheCapAreRefused: the 17th player's commitment is refused
// with RESOURCE_EXHAUSTED SEEDS_FULL, never dropped: with CommitSeed, and
// with a bet, which is refused whole (nothing held).
func TestSeedsOverTheCapAreRefused(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(10000, "p17")
	resp, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for i := range fair.MaxPlayerSeeds {
		p := fmt.Sprintf("p%02d", i+1)
		if _, err := h.commitSeed(id, p, seedOf(p)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = h.commitSeed(id, "p17", seedOf("p17"))
	wantReason(t, err, codes.ResourceExhausted, reasonSeedsFull)
	_, err = h.tables.PlaceBet(h.as("p17"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "p17",
		Spot: tablev1.BetSpot_BET_SPOT_BANK, Amount: 100, SeedCommitment: commitTo(seedOf("p17"))})
	wantReason(t, err, codes.ResourceExhausted, reasonSeedsFull)
	if bal, held := h.account("player:p17"); bal != 10000 || held != 0 {
		t.Fatalf("p17 after the refused bet: balance %d, held %d", bal, held)
	}
	if tb := h.get(id); tb.GetCoup() != nil && len(tb.GetCoup().GetBets()) != 0 {
		t.Fatalf("a bet stands: %v", tb.GetCoup().GetBets())
	}
	// One of the sixteen may still commit again (the same): not a new one.
	if _, err := h.commitSeed(id, "p01", seedOf("p01")); err != nil {
		t.Fatal(err)
	}
	if n := len(h.get(id).GetShoeEntropy().GetCommitments()); n != fair.MaxPlayerSeeds {
		t.Fatalf("%d commitments", n)
	}
}

// TestWithheldSeedAbandonsTheShoe: a committed player who does not reveal
// his seed in time gets no choice, only a public veto: the shoe is
// abandoned (closed with no card dealt, shoe_abandoned naming him), he is
// refused seeds at this table from then on, and a new shoe with its own
// commitment round takes the coup on: the honest player commits and
// reveals again and the coup is dealt and settled on the new shoe, with
// every bet paid as the result says and no money lost. A restart of the
// service during the reveal gives the window again.
func TestWithheldSeedAbandonsTheShoe(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "mallory")
	id := h.shuffledTable()
	for _, p := range []string{"alice", "bob", "mallory"} {
		c := commitTo(seedOf(p))
		if p == "bob" {
			c = nil
		}
		if _, err := h.tables.JoinTable(h.as(p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p, SeedCommitment: c}); err != nil {
			t.Fatal(err)
		}
	}
	first := h.get(id).GetShoeId()
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 400)
	tb := h.mustBet(id, "mallory", 600)
	if !tb.GetShoeEntropy().GetRevealing() {
		t.Fatalf("after the betting: %v", tb.GetShoeEntropy())
	}
	if _, err := h.revealSeed(id, "alice", seedOf("alice")); err != nil {
		t.Fatal(err)
	}
	// table-svc restarts: the window runs again from now.
	deadline := tb.GetShoeEntropy().GetRevealDeadline().AsTime()
	h.clock.Advance(deadline.Sub(h.clock.Now()) - 1)
	h.restartTable()
	if d := h.get(id).GetShoeEntropy().GetRevealDeadline().AsTime(); !d.Equal(h.clock.Now().Add(DefaultSeedWindow)) {
		t.Fatalf("after a restart the reveal deadline is %v, want %v", d, h.clock.Now().Add(DefaultSeedWindow))
	}
	h.expire()
	if tb := h.get(id); tb.GetShoeId() != first || !tb.GetShoeEntropy().GetRevealing() {
		t.Fatalf("abandoned before the deadline: %v", tb.GetShoeEntropy())
	}
	h.clock.Advance(DefaultSeedWindow)
	h.expire()
	tb = h.get(id)
	e := tb.GetShoeEntropy()
	if tb.GetShoeId() == first || !e.GetCollecting() || e.GetCommitDeadline() == nil ||
		!slices.Equal(e.GetWithheldPlayerIds(), []string{"mallory"}) || len(e.GetCommitments()) != 0 || len(tb.GetCoup().GetPlayerCards()) != 0 {
		t.Fatalf("after the deadline: shoe %s (was %s), %v, coup %v", tb.GetShoeId(), first, e, tb.GetCoup())
	}
	old, err := h.shoes.GetShoe(h.as("op"), &shoev1.GetShoeRequest{ShoeId: first})
	if err != nil || old.GetShoe().GetState() != shoev1.ShoeState_SHOE_STATE_CLOSED || old.GetShoe().GetCardsDealt() != 0 ||
		!strings.Contains(old.GetShoe().GetCloseReason(), "mallory") {
		t.Fatalf("the abandoned shoe: %v (%v)", old.GetShoe(), err)
	}
	// mallory may not commit again at this table; alice may, to the new shoe.
	_, err = h.commitSeed(id, "mallory", "mallory's second seed, long enough")
	wantReason(t, err, codes.FailedPrecondition, reasonSeedWithheld)
	if _, err := h.commitSeed(id, "alice", "alice's seed for the new shoe, 32b"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(DefaultSeedWindow)
	h.expire() // the commitment round ends: fixed
	if e := h.get(id).GetShoeEntropy(); !e.GetRevealing() || len(e.GetCommitments()) != 1 {
		t.Fatalf("the new shoe's round over: %v", e)
	}
	tb, err = h.revealSeed(id, "alice", "alice's seed for the new shoe, 32b")
	if err != nil {
		t.Fatal(err)
	}
	for tb.GetState() == tablev1.TableState_TABLE_STATE_DECISION {
		if tb, err = h.decide(id, tb.GetCoup().GetDecisionPlayerId(), true); err != nil {
			t.Fatal(err)
		}
	}
	if tb.GetCoupsPlayed() != 1 || tb.GetLastCoup() == nil || !tb.GetShoeEntropy().GetSeeded() || !slices.Equal(tb.GetShoeEntropy().GetPlayerIds(), []string{"alice"}) {
		t.Fatalf("the coup on the new shoe: played %d, %v", tb.GetCoupsPlayed(), tb.GetShoeEntropy())
	}
	var abandoned []*eventsv1.ShoeAbandoned
	for _, ev := range h.events(id) {
		if a := ev.GetShoeAbandoned(); a != nil {
			abandoned = append(abandoned, a)
		}
	}
	if len(abandoned) != 1 || abandoned[0].GetShoeId() != first || !slices.Equal(abandoned[0].GetWithheldPlayerIds(), []string{"mallory"}) {
		t.Fatalf("shoe_abandoned: %v", abandoned)
	}
	if got := h.seedEvents(id); !slices.Equal(got, []string{"fixed:alice,mallory", "abandoned:mallory", "fixed:alice", "seeded:table:alice", "card"}) {
		t.Errorf("seed events %q", got)
	}
	h.conserved(30000, "player:alice", "player:bob", "player:mallory")
}

// TestShoeWithoutPlayerSeeds: nobody commits: the game goes on at once,
// the shoe is seeded with none, and the view and shoe_seeded say it has
// no player entropy. A table opened on a certification shoe collects
// none.
func TestShoeWithoutPlayerSeeds(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.shuffledTable("alice", "bob")
	h.acceptBank(id, "alice", 1000)
	e := h.mustBet(id, "bob", 1000).GetShoeEntropy()
	if e.GetCollecting() || e.GetRevealing() || !e.GetSeeded() || e.GetPlayerEntropy() || len(e.GetPlayerIds()) != 0 {
		t.Fatalf("seeded with no seed: %v", e)
	}
	cert := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob")
	if e := h.get(cert).GetShoeEntropy(); e.GetCollecting() || len(e.GetCommitment()) != 0 {
		t.Fatalf("a certification table's shoe entropy: %v", e)
	}
	_, err := h.commitSeed(cert, "alice", seedOf("alice"))
	wantReason(t, err, codes.FailedPrecondition, reasonSeedsNotCollecting)
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

// TestShoeOpenedMidCoupTakesCommitments: a chemin de fer coup whose shoe
// is spent at its first card (after a voided cut-card coup) opens the
// next shoe in the middle of its deal; that shoe gets a commitment round
// of its own (CommitSeed until commit_deadline) before the coup goes on,
// so the operator cannot get a shoe without player entropy by voiding
// the cut card's coup.
func TestShoeOpenedMidCoupTakesCommitments(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	// The player's 5 (a decision) and the bank's 6; the cut card comes
	// out with the second card.
	resp, err := h.shoes.CreateShoeFromOrder(h.as("op"), shoeFromOrder{cards: []string{"2C", "4H", "3D", "2S", "KD", "KD"}, cut: 4}.req(h))
	if err != nil {
		t.Fatal(err)
	}
	created, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: resp.GetShoe().GetShoeId(), HouseRules: certMoney(nil)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	h.join(id, "alice")
	h.join(id, "bob")
	h.acceptBank(id, "alice", 1000)
	tb := h.mustBet(id, "bob", 500)
	if tb.GetState() != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("state %v", tb.GetState())
	}
	if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id,
		CoupId: tb.GetCoup().GetCoupId(), Reason: "misdeal"}); err != nil {
		t.Fatal(err)
	}
	tb = h.mustBet(id, "bob", 500) // the first card finds the shoe spent: a new shoe, waiting for commitments
	e := tb.GetShoeEntropy()
	if tb.GetShoeId() == resp.GetShoe().GetShoeId() || !e.GetCollecting() || e.GetCommitDeadline() == nil || len(tb.GetCoup().GetPlayerCards()) != 0 {
		t.Fatalf("the coup on a new shoe: shoe %s, %v, coup %v", tb.GetShoeId(), e, tb.GetCoup())
	}
	if _, err := h.commitSeed(id, "bob", seedOf("bob")); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(DefaultSeedWindow)
	h.expire()
	if e := h.get(id).GetShoeEntropy(); !e.GetRevealing() || len(e.GetCommitments()) != 1 {
		t.Fatalf("the round over: %v", e)
	}
	if tb, err = h.revealSeed(id, "bob", seedOf("bob")); err != nil {
		t.Fatal(err)
	}
	dealt := tb.GetCoup()
	if len(dealt.GetPlayerCards()) == 0 {
		dealt = tb.GetLastCoup() // the shuffled cards settled it at once
	}
	if !tb.GetShoeEntropy().GetSeeded() || !slices.Equal(tb.GetShoeEntropy().GetPlayerIds(), []string{"bob"}) || len(dealt.GetPlayerCards()) < 2 {
		t.Fatalf("after bob's seed: %v, coup %v", tb.GetShoeEntropy(), dealt)
	}
}
