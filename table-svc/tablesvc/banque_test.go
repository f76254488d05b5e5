package tablesvc

import (
	"math/big"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/services/rules"
)

// banqueTable opens a baccarat banque table whose prepared shoe deals
// exactly cards (then kings), seats alice and bob on the right and carol
// on the left, and auctions the bank to alice for bid (BQ-BANK: the others
// decline; she pays the house 2.5% of it).
func (h *harness) banqueTable(bid int64, cards ...string) string {
	h.t.Helper()
	return h.banqueTableWith(&tablev1.BanqueRules{}, bid, cards...)
}

// banqueTableWith is banqueTable with house rules r (playing for money).
func (h *harness) banqueTableWith(r *tablev1.BanqueRules, bid int64, cards ...string) string {
	h.t.Helper()
	id := h.banqueSeatedWith(r, cards...)
	if _, err := h.tables.BidBank(h.as("alice"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: bid}); err != nil {
		h.t.Fatal(err)
	}
	h.banqueDeclined(id)
	tb := h.get(id)
	if tb.GetBankerPlayerId() != "alice" || tb.GetBank() != bid || tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING {
		h.t.Fatalf("after the auction: banker %q bank %d state %s", tb.GetBankerPlayerId(), tb.GetBank(), tb.GetState())
	}
	return id
}

// banqueDeclined: bob and carol decline the bank in its auction.
func (h *harness) banqueDeclined(id string) {
	h.t.Helper()
	for _, p := range []string{"bob", "carol"} {
		if _, err := h.tables.DeclineBank(h.as(p), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// banqueSeated opens banqueTable's table and seats its players, the
// bank's auction open.
func (h *harness) banqueSeated(cards ...string) string {
	h.t.Helper()
	return h.banqueSeatedWith(&tablev1.BanqueRules{}, cards...)
}

// banqueSeatedWith is banqueSeated with house rules r (playing for money).
func (h *harness) banqueSeatedWith(r *tablev1.BanqueRules, cards ...string) string {
	h.t.Helper()
	r.CertificationRealMoney = true
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE,
		BanqueRules: r, ShoeId: h.preparedShoe(cards...)})
	if err != nil {
		h.t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, s := range []struct {
		p    string
		side tablev1.BanqueSide
	}{{"alice", tablev1.BanqueSide_BANQUE_SIDE_RIGHT}, {"bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT}, {"carol", tablev1.BanqueSide_BANQUE_SIDE_LEFT}} {
		if _, err := h.tables.JoinTable(h.as(s.p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: s.p, Side: s.side}); err != nil {
			h.t.Fatal(err)
		}
	}
	return id
}

func (h *harness) banqueBet(id, p string, side tablev1.BanqueSide, amount int64) error {
	_, err := h.tables.PlaceBet(h.as(p), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Side: side, Amount: amount})
	return err
}

// TestBanqueBankerNatural: the bank auctioned for 2000 (fee 50, BQ-BANK),
// bets in turn on the right and à cheval (BQ-BETS), three hands dealt
// (BQ-HANDS), the banker's natural beats both tables, so the à cheval bet
// loses too (BQ-CHEVAL); the bank keeps its winnings.
func TestBanqueBankerNatural(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Right 2C 3D = 5, left 7H KS = 7, banker 4C 5H = 9.
	id := h.banqueTable(2000, "2C", "7H", "4C", "3D", "KS", "5H")
	if b, _ := h.account("player:alice"); b != 10000-50 {
		t.Errorf("alice after the auction's fee: %d, want 9950", b)
	}
	// Source: RULES.md BQ-BETS (the sides bet in turn from the banker
	// outwards: his right-hand neighbour's place is his own, so the left
	// side's first player opens, then the right side's second)
	err := h.banqueBet(id, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT, 500)
	wantReason(t, err, codes.FailedPrecondition, "NOT_YOUR_TURN")
	if err := h.banqueBet(id, "carol", tablev1.BanqueSide_BANQUE_SIDE_CHEVAL, 400); err != nil {
		t.Fatal(err)
	}
	if err := h.banqueBet(id, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT, 500); err != nil {
		t.Fatal(err)
	}
	tb := h.get(id)
	cp := tb.GetLastCoup()
	if cp == nil || !cp.GetSettled() {
		t.Fatalf("not settled: state %s coup %v", tb.GetState(), tb.GetCoup())
	}
	if got := cardCodes(cp.GetBankerCards()); got != "4C 5H" || cp.GetBankerTotal() != 9 {
		t.Errorf("banker %s (%d)", got, cp.GetBankerTotal())
	}
	if len(cp.GetHands()) != 2 || cardCodes(cp.GetHands()[0].GetCards()) != "2C 3D" || cp.GetHands()[0].GetHolderPlayerId() != "bob" ||
		cardCodes(cp.GetHands()[1].GetCards()) != "7H KS" || cp.GetHands()[1].GetHolderPlayerId() != "carol" {
		t.Errorf("hands %v", cp.GetHands())
	}
	if cp.GetBets()[0].GetSide() != tablev1.BanqueSide_BANQUE_SIDE_CHEVAL {
		t.Errorf("carol's bet is on %s, want CHEVAL", cp.GetBets()[0].GetSide())
	}
	if tb.GetBank() != 2900 {
		t.Errorf("bank %d, want 2900", tb.GetBank())
	}
	for acct, w := range map[string]int64{"player:alice": 10850, "player:bob": 9500, "player:carol": 9600} {
		if b, _ := h.account(acct); b != w {
			t.Errorf("%s: %d, want %d", acct, b, w)
		}
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestBanqueDecisions: the right hand's player on 5 decides (BQ-PLAY,
// CF-PLAYER-DRAW) and sees only his own hole cards; the banker then draws
// or stands freely; the right table stands off and the left wins.
func TestBanqueDecisions(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Right 2C 3D = 5, left 7H KS = 7, banker 2H 4S = 6; the banker draws 9C: 5.
	id := h.banqueTable(2000, "2C", "7H", "2H", "3D", "KS", "4S", "9C")
	if err := h.banqueBet(id, "carol", tablev1.BanqueSide_BANQUE_SIDE_LEFT, 400); err != nil {
		t.Fatal(err)
	}
	if err := h.banqueBet(id, "bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT, 500); err != nil {
		t.Fatal(err)
	}
	tb := h.getAs(id, "bob")
	if tb.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tb.GetCoup().GetDecisionPlayerId() != "bob" || tb.GetCoup().GetDecisionHand() != tablev1.Hand_HAND_RIGHT {
		t.Fatalf("state %s, decision %q on %s", tb.GetState(), tb.GetCoup().GetDecisionPlayerId(), tb.GetCoup().GetDecisionHand())
	}
	for _, who := range everyViewer {
		v := h.getAs(id, who).GetCoup()
		for _, hd := range v.GetHands() {
			for _, c := range hd.GetCards() {
				if c.GetFaceDown() == (hd.GetHolderPlayerId() == who) {
					t.Errorf("%s, %s's %s hand: %v", who, hd.GetHolderPlayerId(), hd.GetHand(), c)
				}
			}
		}
		for _, c := range v.GetBankerCards() {
			if c.GetFaceDown() == (who == "alice") {
				t.Errorf("%s, the banker's hand: %v", who, c)
			}
		}
	}
	for _, ev := range h.events(id) {
		if cd := ev.GetCardDealt(); cd != nil && (!cd.GetCard().GetFaceDown() || cd.GetTotal() != 0) {
			t.Errorf("published card_dealt shows a hole card: %v", cd)
		}
	}
	h.publishedAs(id, func(cd *eventsv1.CardDealt) string {
		if cd.GetHand() == eventsv1.Hand_HAND_BANKER {
			return "alice"
		}
		return cd.GetHolderPlayerId()
	})
	// The odds count what a caller cannot see as still in the shoe: bob
	// sees his 2C 3D, not the left's 7H KS nor the banker's 2H 4S.
	rec, err := h.table.load(id)
	if err != nil {
		t.Fatal(err)
	}
	bob := viewer{caller: auth.Caller{Subject: "bob", Role: auth.RolePlayer}, known: true}
	if got := banqueGame.hidden(rec, banqueOf(rec).Coup.ID, bob); got != [13]int{1: 1, 3: 1, 6: 1, 12: 1} {
		t.Errorf("hidden to bob, by rank: %v", got)
	}
	// The advice is bob's alone; on a prepared shoe the table does not know
	// the composition (see TestBanqueAdvice for a shuffled shoe).
	_, err = h.tables.GetAdvice(h.as("carol"), &tablev1.GetAdviceRequest{TableId: id, PlayerId: "carol"})
	wantReason(t, err, codes.FailedPrecondition, "NOT_YOUR_TURN")
	_, err = h.tables.GetAdvice(h.as("bob"), &tablev1.GetAdviceRequest{TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, "ODDS_UNAVAILABLE")
	if _, err := h.decide(id, "carol", false); err == nil {
		t.Error("carol decided bob's hand")
	}
	if _, err := h.decide(id, "bob", false); err != nil {
		t.Fatal(err)
	}
	// Source: RULES.md BQ-PLAY (the banker draws or stands freely)
	if tb := h.get(id); tb.GetCoup().GetDecisionPlayerId() != "alice" || tb.GetCoup().GetDecisionHand() != tablev1.Hand_HAND_BANKER {
		t.Fatalf("then the banker: %q on %s", tb.GetCoup().GetDecisionPlayerId(), tb.GetCoup().GetDecisionHand())
	}
	if _, err := h.decide(id, "alice", true); err != nil {
		t.Fatal(err)
	}
	cp := h.get(id).GetLastCoup()
	if !cp.GetSettled() || cp.GetBankerTotal() != 5 {
		t.Fatalf("coup %v", cp)
	}
	if cp.GetHands()[0].GetOutcome() != tablev1.Outcome_OUTCOME_STAND_OFF || cp.GetHands()[1].GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
		t.Errorf("outcomes right %s left %s", cp.GetHands()[0].GetOutcome(), cp.GetHands()[1].GetOutcome())
	}
	for acct, w := range map[string]int64{"player:alice": 10000 - 50 - 400, "player:bob": 10000, "player:carol": 10400} {
		if b, _ := h.account(acct); b != w {
			t.Errorf("%s: %d, want %d", acct, b, w)
		}
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestGameOddsAtTheTable: GetOdds at a banque and at an old baccarat
// table answers for the game's own model on the table's shuffled shoe.
func TestGameOddsAtTheTable(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		variant  tablev1.Variant
		outcomes []string
	}{
		{tablev1.Variant_VARIANT_BACCARAT_BANQUE, []string{"right_bank_wins", "left_stand_off", "banker_natural"}},
		{tablev1.Variant_VARIANT_OLD_BACCARAT, []string{"punter_wins", "banker_wins", "tie", "punter_baccarat"}},
	} {
		resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tc.variant})
		if err != nil {
			t.Fatal(err)
		}
		o, err := h.tables.GetOdds(h.as("alice"), &tablev1.GetOddsRequest{TableId: resp.GetTable().GetTableId()})
		if err != nil {
			t.Fatalf("%s: %v", tc.variant, err)
		}
		got := map[string]bool{}
		var sum float64
		for _, oc := range o.GetOutcomes() {
			got[oc.GetOutcome()] = true
			if oc.GetOutcome() == "punter_wins" || oc.GetOutcome() == "banker_wins" || oc.GetOutcome() == "tie" {
				sum += oc.GetProbability()
			}
		}
		for _, name := range tc.outcomes {
			if !got[name] {
				t.Errorf("%s: no outcome %s in %v", tc.variant, name, o.GetOutcomes())
			}
		}
		if o.GetVariant() != tc.variant || len(o.GetBets()) == 0 {
			t.Errorf("%s: variant %s, %d bets", tc.variant, o.GetVariant(), len(o.GetBets()))
		}
		if tc.variant == tablev1.Variant_VARIANT_OLD_BACCARAT && (sum < 0.999999 || sum > 1.000001) {
			t.Errorf("the old game's outcomes add up to %f", sum)
		}
	}
}

// TestBanqueAdvice: on a shuffled 3-deck shoe, coups are played until a
// table's player on 5 and the banker have each had a decision (BQ-PLAY);
// at each, GetAdvice answers the decider alone (the others, the croupier
// included: NOT_YOUR_TURN) with odds.BanqueAdviceModel's EVs: per unit for
// a table's player, in money over the coup's stakes for the banker.
func TestBanqueAdvice(t *testing.T) {
	h := newHarness(t)
	h.fund(100000, "alice", "bob", "carol")
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE,
		BanqueRules: &tablev1.BanqueRules{CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, s := range []struct {
		p    string
		side tablev1.BanqueSide
	}{{"alice", tablev1.BanqueSide_BANQUE_SIDE_RIGHT}, {"bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT}, {"carol", tablev1.BanqueSide_BANQUE_SIDE_LEFT}} {
		if _, err := h.tables.JoinTable(h.as(s.p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: s.p, Side: s.side}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.BidBank(h.as("alice"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 50000}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bob", "carol"} {
		if _, err := h.tables.DeclineBank(h.as(p), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	// No decision pending during the betting.
	_, err = h.tables.GetAdvice(h.as("bob"), &tablev1.GetAdviceRequest{TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, "WRONG_STATE")
	stakes := map[string]int64{"bob": 300, "carol": 200} // bob right, carol left: the banker follows the right
	sides := map[string]tablev1.BanqueSide{"bob": tablev1.BanqueSide_BANQUE_SIDE_RIGHT, "carol": tablev1.BanqueSide_BANQUE_SIDE_LEFT}
	checked := map[tablev1.Hand]int{}
	for i := 0; i < 400 && (checked[tablev1.Hand_HAND_BANKER] == 0 || checked[tablev1.Hand_HAND_RIGHT]+checked[tablev1.Hand_HAND_LEFT] == 0); i++ {
		tb := h.get(id)
		cp := tb.GetCoup()
		switch tb.GetState() {
		case tablev1.TableState_TABLE_STATE_BETTING:
			p := cp.GetTurnPlayerId()
			if err := h.banqueBet(id, p, sides[p], stakes[p]); err != nil {
				t.Fatalf("%s bets: %v", p, err)
			}
			continue
		case tablev1.TableState_TABLE_STATE_DECISION:
		default:
			time.Sleep(5 * time.Millisecond)
			continue
		}
		decider, hand := cp.GetDecisionPlayerId(), cp.GetDecisionHand()
		for _, who := range []string{"alice", "bob", "carol", "croupier"} {
			if who == decider {
				continue
			}
			_, err := h.tables.GetAdvice(h.as(who), &tablev1.GetAdviceRequest{TableId: id, PlayerId: who})
			wantReason(t, err, codes.FailedPrecondition, "NOT_YOUR_TURN")
		}
		// Nobody asks for the decider but himself.
		other := "carol"
		if decider == other {
			other = "bob"
		}
		_, err := h.tables.GetAdvice(h.as(other), &tablev1.GetAdviceRequest{TableId: id, PlayerId: decider})
		wantReason(t, err, codes.PermissionDenied, "NOT_YOURSELF")
		a, err := h.tables.GetAdvice(h.as(decider), &tablev1.GetAdviceRequest{TableId: id, PlayerId: decider})
		if err != nil {
			t.Fatalf("%s's advice on %s: %v", decider, hand, err)
		}
		if a.GetHand() != hand || a.GetDecisionPlayerId() != decider || a.GetRule() != rules.RuleBQPlay || a.GetModel() != odds.BanqueAdviceModel {
			t.Errorf("advice %v", a)
		}
		// The most the decider can win or lose: one unit on his table, or
		// every stake for the banker.
		limit := big.NewRat(1, 1)
		if hand == tablev1.Hand_HAND_BANKER {
			limit = big.NewRat(stakes["bob"]+stakes["carol"], 1)
		} else {
			var total int32
			for _, hd := range h.getAs(id, decider).GetCoup().GetHands() {
				if hd.GetHand() == hand {
					total = hd.GetTotal()
				}
			}
			// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (a table's player is asked on 5 only)
			if total != 5 {
				t.Errorf("%s decides on %d", decider, total)
			}
		}
		for _, ev := range []struct {
			exact string
			f     float64
		}{{a.GetDrawEvExact(), a.GetDrawEv()}, {a.GetStandEvExact(), a.GetStandEv()}} {
			r, ok := new(big.Rat).SetString(ev.exact)
			if !ok || new(big.Rat).Abs(r).Cmp(limit) > 0 {
				t.Errorf("%s on %s: EV %q out of -%v..%v", decider, hand, ev.exact, limit, limit)
				continue
			}
			if f, _ := r.Float64(); f != ev.f {
				t.Errorf("EV %v, exact %s", ev.f, ev.exact)
			}
		}
		d, _ := new(big.Rat).SetString(a.GetDrawEvExact())
		st, _ := new(big.Rat).SetString(a.GetStandEvExact())
		if best := tablev1.DrawChoice_DRAW_CHOICE_DRAW; st != nil && d != nil && st.Cmp(d) > 0 && a.GetBest() == best {
			t.Errorf("best %s with stand %v > draw %v", a.GetBest(), st, d)
		}
		t.Logf("%s on %s: draw %s, stand %s, best %s", decider, hand, a.GetDrawEvExact(), a.GetStandEvExact(), a.GetBest())
		checked[hand]++
		if _, err := h.decide(id, decider, a.GetBest() == tablev1.DrawChoice_DRAW_CHOICE_DRAW); err != nil {
			t.Fatal(err)
		}
	}
	if checked[tablev1.Hand_HAND_BANKER] == 0 || checked[tablev1.Hand_HAND_RIGHT]+checked[tablev1.Hand_HAND_LEFT] == 0 {
		t.Errorf("decisions advised: %v", checked)
	}
}
