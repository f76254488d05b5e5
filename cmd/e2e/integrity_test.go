package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// wantRefused fails unless err is code with reason.
func wantRefused(t *testing.T, what string, err error, code codes.Code, reason string) {
	t.Helper()
	if status.Code(err) != code || errs.Reason(err) != reason {
		t.Errorf("%s: %v (reason %q), want %v %s", what, err, errs.Reason(err), code, reason)
	}
}

// TestPreparedShoeIsTheTables (issue 10's probe): a shoe an operator
// prepares (CreateShoeFromOrder, 2C KD 3D 6H ...) is the table's from
// CreateTable on. During the table's first betting the operator can
// neither deal from it (the probe took 2C, and the table then dealt from
// KD), cut nor close it; a second table cannot be opened on it; and the
// table deals the prepared order from its first card.
func TestPreparedShoeIsTheTables(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: "probe-shoe", Cards: fullShoe("2C", "KD", "3D", "6H", "4S", "KD")})
	if err != nil {
		t.Fatal(err)
	}
	shoeID := sh.GetShoe().GetShoeId()
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "probe", ShoeId: shoeID, HouseRules: certificationRules()})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	got, err := c.shoe.GetShoe(as(t, "alice"), &shoev1.GetShoeRequest{ShoeId: shoeID})
	if err != nil || !got.GetShoe().GetOwnedByTable() || got.GetShoe().GetTableId() != id {
		t.Fatalf("the prepared shoe after CreateTable: %v %v", got, err)
	}
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "probe/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "probe/bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	// The first betting: the operator's attempts on the table's shoe.
	_, err = c.shoe.DealCard(as(t, "operator"), &shoev1.DealCardRequest{RequestId: "probe-peek", ShoeId: shoeID})
	wantRefused(t, "operator DealCard in the first betting", err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	_, err = c.shoe.CloseShoe(as(t, "operator"), &shoev1.CloseShoeRequest{RequestId: "probe-close", ShoeId: shoeID, Force: true, Reason: "probe"})
	wantRefused(t, "operator CloseShoe in the first betting", err, codes.PermissionDenied, "SHOE_OWNED_BY_TABLE")
	_, err = c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "probe-2", ShoeId: shoeID, HouseRules: certificationRules()})
	wantRefused(t, "a second CreateTable on the shoe", err, codes.FailedPrecondition, "SHOE_UNUSABLE")

	// The coup: bob on 2C 3D (5) stands; the banker's KD 6H stands.
	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "probe/bet", TableId: id, PlayerId: "bob", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.DecideDraw(as(t, "bob"), &tablev1.DecideDrawRequest{RequestId: "probe/stand", TableId: id, PlayerId: "bob", Choice: tablev1.DrawChoice_DRAW_CHOICE_STAND}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.table.GetTable(as(t, "auditor"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	last := resp.GetTable().GetLastCoup()
	if got := seen(last.GetPlayerCards()) + " / " + seen(last.GetBankerCards()); got != "2C 3D / KD 6H" {
		t.Errorf("the table's first coup: %s, want the prepared 2C 3D / KD 6H", got)
	}
}

// TestShoeSeededByPlayers: through the gateway, a table's shoe takes its
// players' entropy after its commitment, by default. bob notes the
// commitment in the table's view, commits to a fresh seed with his bet
// (its SHA-256), reveals it when the table has fixed the commitments
// (RevealSeed, through the gateway's player-only policy), and sees
// himself among the shoe's seeders once its order is fixed (before its
// first card); coups are played; the table closes, its shoe with it;
// the reveal verifies with his commitment and his seed (as `chemmy verify
// -commitment C -player-seed S` checks), and not with another seed in
// place of his.
func TestShoeSeededByPlayers(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 100000, "alice", "bob")
	tb, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "seeded"})
	if err != nil {
		t.Fatal(err)
	}
	id, shoeID := tb.GetTable().GetTableId(), tb.GetTable().GetShoeId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "seeded/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	view, err := c.table.GetTable(as(t, "bob"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	commitment := view.GetTable().GetShoeEntropy().GetCommitment()
	if !view.GetTable().GetShoeEntropy().GetCollecting() || len(commitment) != fair.CommitmentSize {
		t.Fatalf("the shoe before its first coup: %v", view.GetTable().GetShoeEntropy())
	}
	seed := "bob-" + rand.Text()
	sum := sha256.Sum256([]byte(seed))
	// Coups until two are settled; bob's commitment goes with his first
	// bet, his seed when the table asks for it.
	for i := 0; ; i++ {
		resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		v := resp.GetTable()
		if v.GetCoupsPlayed() >= 2 {
			break
		}
		rid := fmt.Sprint("seeded/", i)
		switch {
		case v.GetShoeEntropy().GetRevealing():
			if got := v.GetShoeEntropy().GetCommitments(); len(got) != 1 || got[0].GetPlayerId() != "bob" || !bytes.Equal(got[0].GetCommitment(), sum[:]) {
				t.Fatalf("the commitments fixed: %v", got)
			}
			_, err = c.table.RevealSeed(as(t, "bob"), &tablev1.RevealSeedRequest{RequestId: rid, TableId: id, PlayerId: "bob", Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		switch v.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			_, err = c.table.AcceptBank(as(t, v.GetOfferedPlayerId()), &tablev1.AcceptBankRequest{RequestId: rid, TableId: id,
				PlayerId: v.GetOfferedPlayerId(), Amount: 1000})
		case tablev1.TableState_TABLE_STATE_BETTING:
			p := v.GetCoup().GetTurnPlayerId()
			req := &tablev1.PlaceBetRequest{RequestId: rid, TableId: id, PlayerId: p, Amount: v.GetCoup().GetUncovered()}
			if p == "bob" && v.GetShoeEntropy().GetCollecting() {
				req.SeedCommitment = sum[:]
			}
			_, err = c.table.PlaceBet(as(t, p), req)
		case tablev1.TableState_TABLE_STATE_DECISION:
			p := v.GetCoup().GetDecisionPlayerId()
			_, err = c.table.DecideDraw(as(t, p), &tablev1.DecideDrawRequest{RequestId: rid, TableId: id, PlayerId: p,
				Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
		default:
			t.Fatalf("state %v", v.GetState())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	resp, err := c.table.GetTable(as(t, "bob"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.GetTable().GetShoeEntropy(); !e.GetSeeded() || !e.GetPlayerEntropy() || !slices.Contains(e.GetPlayerIds(), "bob") ||
		resp.GetTable().GetShoeId() != shoeID {
		t.Fatalf("the shoe in play: %v", e)
	}
	if _, err := c.table.CloseTable(as(t, "croupier"), &tablev1.CloseTableRequest{RequestId: "seeded/close", TableId: id, Reason: "end of the test"}); err != nil {
		t.Fatal(err)
	}
	rv, err := c.shoe.GetShoeReveal(as(t, "bob"), &shoev1.GetShoeRevealRequest{ShoeId: shoeID})
	if err != nil {
		t.Fatal(err)
	}
	reveal := rv.GetReveal()
	i := slices.Index(reveal.GetPlayerSeeds(), seed)
	if i < 0 || reveal.GetPlayerSeedPlayerIds()[i] != "bob" || !bytes.Equal(reveal.GetCommitment(), commitment) {
		t.Fatalf("the reveal: seeds %q of %q, commitment %x (bob saw %x)", reveal.GetPlayerSeeds(), reveal.GetPlayerSeedPlayerIds(),
			reveal.GetCommitment(), commitment)
	}
	if err := fair.Verify(shoesvc.FairReveal(reveal)); err != nil {
		t.Fatalf("bob's shoe does not verify: %v", err)
	}
	forged := proto.CloneOf(reveal)
	forged.PlayerSeeds[i] = "bob-" + rand.Text()
	if err := fair.Verify(shoesvc.FairReveal(forged)); !errors.Is(err, fair.ErrMismatch) {
		t.Fatalf("the shoe verifies with another seed in place of bob's: %v", err)
	}
}

// TestStaffDealCannotOpenATableCoup (issue 24's probe): an operator
// staff-deals a card from a shoe of his own (opened before the table's, so
// its fate sorts first) naming the coup a table is playing, at the
// betting and at the player's decision, by coup_id and by a request id
// "<coup_id>/card/<n>"; then erin, a player not in the coup, and carol, a
// punter in it who holds no hand, ask ListCardFates for that coup at the
// decision. The staff deals are refused (COUP_OWNED_BY_TABLE) and nobody
// but the holders sees a face-down card: ListCardFates is refused while
// the table's shoe is open (SHOE_NOT_CLOSED).
// Source: RULES.md SHOE-FACE
func TestStaffDealCannotOpenATableCoup(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob", "carol")
	// The operator's shoe deals aces of spades only, a card the table's
	// coup never shows: any other card in an answer is the table's.
	aces := make([]string, 40)
	for i := range aces {
		aces[i] = "AS"
	}
	staff, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "staff-shoe", Cards: aces, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	staffShoe := staff.GetShoe().GetShoeId()
	// Player 2C 3D (5, bob's option), banker KD 5H.
	holes := []string{"2C", "KD", "3D", "5H"}
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: "table-shoe", Cards: fullShoe(holes...)})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "probe", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: certificationRules()})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "probe/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "probe/bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	bet, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "probe/bob", TableId: id, PlayerId: "bob", Amount: 600})
	if err != nil {
		t.Fatal(err)
	}
	coup := bet.GetTable().GetCoup().GetCoupId()
	if coup == "" {
		t.Fatal("no coup id at the betting")
	}
	staffDeals := func(step string) {
		for i, req := range []*shoev1.DealCardRequest{
			{RequestId: "peek-" + step, ShoeId: staffShoe, CoupId: coup, Hand: "player"},
			{RequestId: coup + "/card/" + step, ShoeId: staffShoe},
		} {
			_, err := c.shoe.DealCard(as(t, "operator"), req)
			wantRefused(t, fmt.Sprintf("%s: the operator's staff deal %d naming the table's coup", step, i), err,
				codes.PermissionDenied, "COUP_OWNED_BY_TABLE")
		}
	}
	staffDeals("betting")
	if _, err := c.table.PlaceBet(as(t, "carol"), &tablev1.PlaceBetRequest{RequestId: "probe/carol", TableId: id, PlayerId: "carol", Amount: 400}); err != nil {
		t.Fatal(err)
	}
	view, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	if v := view.GetTable(); v.GetState() != tablev1.TableState_TABLE_STATE_DECISION || v.GetCoup().GetCoupId() != coup {
		t.Fatalf("the table after the bets: %v, coup %q (want DECISION in %q)", v.GetState(), v.GetCoup().GetCoupId(), coup)
	}
	staffDeals("decision")
	for _, who := range []string{"erin", "carol"} {
		resp, err := c.shoe.ListCardFates(as(t, who), &shoev1.ListCardFatesRequest{CoupId: coup})
		for _, f := range resp.GetFates() {
			if slices.Contains(holes, f.GetCard().GetCode()) {
				t.Errorf("%s's ListCardFates of coup %s at the decision shows the face-down %s (fate %v)", who, coup, f.GetCard().GetCode(), f)
			}
		}
		wantRefused(t, who+"'s ListCardFates of the coup in play", err, codes.FailedPrecondition, "SHOE_NOT_CLOSED")
	}
	// The table's own view still hides the hole cards from erin.
	resp, err := c.table.GetTable(as(t, "erin"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	if got := viewOf(resp.GetTable().GetCoup()); got != [2]string{"?? ??", "?? ??"} {
		t.Errorf("erin's GetTable at the decision: player %q banker %q", got[0], got[1])
	}
}
