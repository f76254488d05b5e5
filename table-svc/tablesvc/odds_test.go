package tablesvc

import (
	"math"
	"math/big"
	"testing"

	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestGetOddsComposition: an auditor's odds for a full 8-deck punto banco
// shoe are the exact counts of the literature; a player may not ask for a
// composition.
func TestGetOddsComposition(t *testing.T) {
	h := newHarness(t)
	eight := &tablev1.ShoeComposition{}
	for i := 0; i < 13; i++ {
		eight.RankCounts = append(eight.RankCounts, 32)
	}
	auditor := h.asRole("auditor-1", "auditor")
	resp, err := h.tables.GetOdds(auditor, &tablev1.GetOddsRequest{Composition: eight, Variant: tablev1.Variant_VARIANT_PUNTO_BANCO})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bank_wins": "2292252566437888", "player_wins": "2230518282592256", "tie": "475627426473216"}
	for _, o := range resp.GetOutcomes() {
		if w, ok := want[o.GetOutcome()]; ok && o.GetCount() != w {
			t.Errorf("%s = %s, want %s", o.GetOutcome(), o.GetCount(), w)
		}
	}
	if resp.GetDeals() != "4998398275503360" || len(resp.GetBets()) != 4 {
		t.Errorf("deals %s, %d bets", resp.GetDeals(), len(resp.GetBets()))
	}
	_, err = h.tables.GetOdds(h.as("bob"), &tablev1.GetOddsRequest{Composition: eight})
	wantReason(t, err, codes.PermissionDenied, reasonRoleNotAllowed)
	_, err = h.tables.GetOdds(auditor, &tablev1.GetOddsRequest{Composition: &tablev1.ShoeComposition{RankCounts: []int32{1, 2}}})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
}

// TestGetOddsAndAdviceLiveTable: odds of a table's current shoe, and the
// advice at a live decision, computed from the cards still in the shoe.
func TestGetOddsAndAdviceLiveTable(t *testing.T) {
	h := newHarness(t)
	h.fund(1_000_000_000, "alice", "bob")
	id := h.shuffledTable("alice", "bob")
	odds, err := h.tables.GetOdds(h.as("bob"), &tablev1.GetOddsRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var cards int32
	for _, o := range odds.GetOutcomes() {
		if o.GetOutcome() != "bank_natural" {
			sum += o.GetProbability()
		}
	}
	for _, n := range odds.GetComposition().GetRankCounts() {
		cards += n
	}
	// The shoe waits for its players' seeds: nothing is burned yet.
	if math.Abs(sum-1) > 1e-12 || cards != 312 || odds.GetEquilibrium().GetPlayerDrawOn_5Exact() == "" {
		t.Fatalf("odds of a fresh 6-deck shoe before its burn: sum %v, %d cards, %v", sum, cards, odds.GetEquilibrium())
	}

	_, err = h.tables.GetAdvice(h.as("bob"), &tablev1.GetAdviceRequest{TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	// Play coups until one waits for a decision.
	for i := 0; i < 400; i++ {
		tbl := h.get(id)
		switch tbl.GetState() {
		case tablev1.TableState_TABLE_STATE_OFFERING_BANK:
			h.acceptBank(id, tbl.GetOfferedPlayerId(), 1000)
		case tablev1.TableState_TABLE_STATE_BETTING:
			h.mustBet(id, tbl.GetCoup().GetTurnPlayerId(), tbl.GetCoup().GetUncovered())
		case tablev1.TableState_TABLE_STATE_DECISION:
			who := tbl.GetCoup().GetDecisionPlayerId()
			other := "alice"
			if who == "alice" {
				other = "bob"
			}
			_, err := h.tables.GetAdvice(h.as(other), &tablev1.GetAdviceRequest{TableId: id, PlayerId: other})
			wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn)
			a, err := h.tables.GetAdvice(h.as(who), &tablev1.GetAdviceRequest{TableId: id, PlayerId: who})
			if err != nil {
				t.Fatal(err)
			}
			draw, ok1 := new(big.Rat).SetString(a.GetDrawEvExact())
			stand, ok2 := new(big.Rat).SetString(a.GetStandEvExact())
			if !ok1 || !ok2 || a.GetHand() != tbl.GetCoup().GetDecisionHand() || a.GetModel() == "" {
				t.Fatalf("advice %v", a)
			}
			best := tablev1.DrawChoice_DRAW_CHOICE_DRAW
			if stand.Cmp(draw) > 0 {
				best = tablev1.DrawChoice_DRAW_CHOICE_STAND
			}
			if a.GetBest() != best || math.Abs(a.GetDrawEv()) > 1.5 || math.Abs(a.GetStandEv()) > 1.5 {
				t.Fatalf("advice %v", a)
			}
			eq, err := h.tables.GetAdvice(h.as(who), &tablev1.GetAdviceRequest{TableId: id, PlayerId: who, AssumeEquilibrium: true})
			if err != nil || eq.GetDrawEvExact() == "" {
				t.Fatalf("advice assuming the equilibrium: %v %v", eq, err)
			}
			return
		default:
			t.Fatalf("state %v", tbl.GetState())
		}
	}
	t.Fatal("no decision in 400 coups")
}
