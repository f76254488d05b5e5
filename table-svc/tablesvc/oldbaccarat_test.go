package tablesvc

import (
	"testing"

	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// oldTable opens an old baccarat table whose prepared shoe deals exactly
// cards (then kings), seats alice (seat 1), bob and carol, and makes
// alice the banker with a bank of bank (OLD-BANKER: the others pass).
func (h *harness) oldTable(bank int64, cards ...string) string {
	h.t.Helper()
	return h.oldTableWith(&tablev1.OldBaccaratRules{}, bank, cards...)
}

// oldTableWith is oldTable with house rules r (playing for money).
func (h *harness) oldTableWith(r *tablev1.OldBaccaratRules, bank int64, cards ...string) string {
	h.t.Helper()
	r.CertificationRealMoney = true
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_OLD_BACCARAT,
		OldBaccaratRules: r, ShoeId: h.preparedShoe(cards...)})
	if err != nil {
		h.t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol"} {
		h.join(id, p)
	}
	if tb := h.get(id); tb.GetState() != tablev1.TableState_TABLE_STATE_AUCTION {
		h.t.Fatalf("three seated: state %s, want the bank's auction (OLD-BANKER)", tb.GetState())
	}
	if _, err := h.tables.BidBank(h.as("alice"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: bank}); err != nil {
		h.t.Fatal(err)
	}
	for _, p := range []string{"bob", "carol"} {
		if _, err := h.tables.DeclineBank(h.as(p), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
			h.t.Fatal(err)
		}
	}
	if tb := h.get(id); tb.GetBankerPlayerId() != "alice" || tb.GetBank() != bank || tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING {
		h.t.Fatalf("after the auction: banker %q bank %d state %s", tb.GetBankerPlayerId(), tb.GetBank(), tb.GetState())
	}
	return id
}

func (h *harness) stake(id, p string, amount int64) error {
	_, err := h.tables.PlaceBet(h.as(p), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Amount: amount})
	return err
}

// TestOldBaccaratBankerNatural plays a coup of the old game through the
// table: the banker moves two top cards to the bottom after the cut
// (OLD-CUT), the deal goes round and back (OLD-DEAL), and the banker's 9
// takes every stake (OLD-NATURAL, OLD-VALUES).
func TestOldBaccaratBankerNatural(t *testing.T) {
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	// Punters from the banker's left: bob (0), carol (1). The deal: bob,
	// carol, banker, then carol, bob, banker. QH QS go to the bottom.
	id := h.oldTable(10000, "QH", "QS", "2C", "7H", "4C", "KS", "3D", "5D")
	if err := h.stake(id, "bob", 1000); err != nil {
		t.Fatal(err)
	}
	// Source: RULES.md OLD-STAKE (the bank covers twice every stake)
	err := h.stake(id, "carol", 4001)
	wantReason(t, err, codes.FailedPrecondition, "BET_EXCEEDS_BANK")
	if err := h.stake(id, "carol", 2000); err != nil {
		t.Fatal(err)
	}
	tb := h.get(id)
	if tb.GetState() != tablev1.TableState_TABLE_STATE_DEALING {
		t.Fatalf("every punter staked: state %s", tb.GetState())
	}
	_, err = h.tables.MoveTopCards(h.as("bob"), &tablev1.MoveTopCardsRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Count: 2})
	if err == nil {
		t.Fatal("bob moved the banker's cards")
	}
	if _, err := h.tables.MoveTopCards(h.as("alice"), &tablev1.MoveTopCardsRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Count: 2}); err != nil {
		t.Fatal(err)
	}
	tb = h.get(id)
	cp := tb.GetLastCoup()
	if cp == nil || !cp.GetSettled() {
		t.Fatalf("the coup is not settled: state %s, coup %v", tb.GetState(), tb.GetCoup())
	}
	if got := cardCodes(cp.GetBankerCards()); got != "4C 5D" || cp.GetBankerTotal() != 9 {
		t.Errorf("banker's hand %s (%d)", got, cp.GetBankerTotal())
	}
	hands := map[string]string{}
	for _, hd := range cp.GetHands() {
		hands[hd.GetHolderPlayerId()] = cardCodes(hd.GetCards())
		if hd.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS {
			t.Errorf("%s: %s against the banker's 9", hd.GetHolderPlayerId(), hd.GetOutcome())
		}
	}
	if hands["bob"] != "2C 3D" || hands["carol"] != "7H KS" {
		t.Errorf("hands %v", hands)
	}
	want := map[string]int64{"player:alice": 23000, "player:bob": 19000, "player:carol": 18000}
	for acct, w := range want {
		if b, _ := h.account(acct); b != w {
			t.Errorf("%s: %d, want %d", acct, b, w)
		}
	}
	if _, held := h.account("player:alice"); held != 13000 || tb.GetBank() != 13000 {
		t.Errorf("the bank after the coup: held %d, table %d; want 13000", held, tb.GetBank())
	}
	h.conserved(60000, "player:alice", "player:bob", "player:carol")
}

// TestOldBaccaratThreeWaySplit: the banker and two punters tie, so every
// stake and the banker's double of each are pooled and split in three
// (OLD-SETTLE, 002's worked example: stakes 100 and 200, 300 each).
func TestOldBaccaratThreeWaySplit(t *testing.T) {
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	// bob 3C 4D = 7, carol 2H 5S = 7, banker 6C AD = 17 (ace 11,
	// OLD-VALUES). Source: RULES.md OLD-RANK (7 and 17 rank alike: all tie)
	id := h.oldTable(10000, "3C", "2H", "6C", "5S", "4D", "AD")
	for p, amount := range map[string]int64{"bob": 100, "carol": 200} {
		if err := h.stake(id, p, amount); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.MoveTopCards(h.as("alice"), &tablev1.MoveTopCardsRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	cp := h.get(id).GetLastCoup()
	if !cp.GetSettled() || cp.GetBankerNet() != -300 {
		t.Fatalf("coup: settled %t, banker net %d, want -300", cp.GetSettled(), cp.GetBankerNet())
	}
	for acct, w := range map[string]int64{"player:alice": 19700, "player:bob": 20200, "player:carol": 20100} {
		if b, _ := h.account(acct); b != w {
			t.Errorf("%s: %d, want %d", acct, b, w)
		}
	}
	h.conserved(60000, "player:alice", "player:bob", "player:carol")
}

// TestOldBaccaratHiddenHands: each punter sees his own cards only until
// the showdown; the published card_dealt events show none.
func TestOldBaccaratHiddenHands(t *testing.T) {
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	// bob 2C AD = 13 (rank 3: may draw), so the coup waits for him
	// (OLD-DRAW, the punter on the banker's right first: carol 7H KS = 17
	// stands on rank 7).
	id := h.oldTable(10000, "2C", "7H", "4C", "KS", "AD", "3D", "9S")
	for p, amount := range map[string]int64{"bob": 100, "carol": 200} {
		if err := h.stake(id, p, amount); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.MoveTopCards(h.as("alice"), &tablev1.MoveTopCardsRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	tb := h.getAs(id, "bob")
	if tb.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tb.GetCoup().GetDecisionPlayerId() != "bob" {
		t.Fatalf("state %s, decision %q", tb.GetState(), tb.GetCoup().GetDecisionPlayerId())
	}
	for _, who := range everyViewer {
		v := h.getAs(id, who).GetCoup()
		for _, hd := range v.GetHands() {
			mine := hd.GetHolderPlayerId() == who
			for _, c := range hd.GetCards() {
				if c.GetFaceDown() == mine {
					t.Errorf("%s sees %s's card %v", who, hd.GetHolderPlayerId(), c)
				}
			}
		}
		for _, c := range v.GetBankerCards() {
			if c.GetFaceDown() == (who == "alice") {
				t.Errorf("%s sees the banker's card %v", who, c)
			}
		}
	}
	for _, ev := range h.events(id) {
		if cd := ev.GetCardDealt(); cd != nil && (!cd.GetCard().GetFaceDown() || cd.GetTotal() != 0) {
			t.Errorf("published card_dealt shows a card: %v", cd)
		}
	}
	h.publishedAs(id, func(cd *eventsv1.CardDealt) string {
		if cd.GetHand() == eventsv1.Hand_HAND_BANKER {
			return "alice"
		}
		return cd.GetHolderPlayerId()
	})
	if _, err := h.decide(id, "bob", true); err != nil {
		t.Fatal(err)
	}
	// bob draws 9S: 22, rank 2; the banker 4C 3D = 7 stands and wins both.
	cp := h.getAs(id, "carol").GetLastCoup()
	if !cp.GetSettled() {
		t.Fatalf("not settled: %v", h.get(id))
	}
	for _, hd := range cp.GetHands() {
		for _, c := range hd.GetCards() {
			if c.GetFaceDown() {
				t.Errorf("after the showdown carol does not see %s's card", hd.GetHolderPlayerId())
			}
		}
	}
	h.conserved(60000, "player:alice", "player:bob", "player:carol")
}

// TestOldBaccaratBaccaratTakesTheBank: bob shows baccarat (10) and stands
// on it; once the banker has settled with everyone, the bank is offered to
// bob for the next coup, and he takes it (OLD-BACCARAT).
func TestOldBaccaratBaccaratTakesTheBank(t *testing.T) {
	h := newHarness(t)
	h.fund(20000, "alice", "bob", "carol")
	// bob 5C 5D = 10 (baccarat), carol 7H KS = 17, banker 4C 3D = 7.
	id := h.oldTable(10000, "5C", "7H", "4C", "KS", "5D", "3D")
	for p, amount := range map[string]int64{"bob": 100, "carol": 200} {
		if err := h.stake(id, p, amount); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.MoveTopCards(h.as("alice"), &tablev1.MoveTopCardsRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	// Source: RULES.md OLD-DRAW (less than 4 may draw: bob's baccarat, rank 0)
	if tb := h.get(id); tb.GetCoup().GetDecisionPlayerId() != "bob" {
		t.Fatalf("decision %q, state %s", tb.GetCoup().GetDecisionPlayerId(), tb.GetState())
	}
	if _, err := h.decide(id, "bob", false); err != nil {
		t.Fatal(err)
	}
	// Source: RULES.md OLD-BACCARAT (the banker first settles with everyone)
	tb := h.get(id)
	if !tb.GetLastCoup().GetSettled() || tb.GetState() != tablev1.TableState_TABLE_STATE_OFFERING_BANK || tb.GetOfferedPlayerId() != "bob" {
		t.Fatalf("after the coup: state %s, offered to %q, last coup %v", tb.GetState(), tb.GetOfferedPlayerId(), tb.GetLastCoup())
	}
	_, err := h.tables.AcceptBank(h.as("carol"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 10000})
	wantReason(t, err, codes.FailedPrecondition, "NOT_YOUR_TURN")
	if _, err := h.tables.AcceptBank(h.as("bob"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 10000}); err != nil {
		t.Fatal(err)
	}
	tb = h.get(id)
	if tb.GetBankerPlayerId() != "bob" || tb.GetBank() != 10000 || tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING {
		t.Errorf("after bob took the bank: banker %q bank %d state %s", tb.GetBankerPlayerId(), tb.GetBank(), tb.GetState())
	}
	// bob's baccarat lost 100 to alice's 7; carol's 17 tied it, and a tie
	// goes to the banker (OLD-SETTLE): alice's bank came back with 300.
	for acct, w := range map[string][2]int64{"player:alice": {20300, 0}, "player:bob": {19900, 10000}, "player:carol": {19800, 0}} {
		if b, held := h.account(acct); b != w[0] || held != w[1] {
			t.Errorf("%s: balance %d held %d, want %v", acct, b, held, w)
		}
	}
	h.conserved(60000, "player:alice", "player:bob", "player:carol")
}
