package banque

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// table is a core driven by hand in the example tests.
type table struct {
	t     *testing.T
	st    State
	now   time.Time
	ids   int
	holds int
}

func newTable(t *testing.T, r Rules) *table {
	t.Helper()
	st, err := New(r, "shoe-1")
	if err != nil {
		t.Fatal(err)
	}
	return &table{t: t, st: st, now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func houseRules() Rules {
	r := DefaultRules()
	r.HouseBank = true
	return r
}

// do applies cmd, which must be accepted without a hold, and returns its
// events.
func (tb *table) do(cmd game.Command) []game.Event {
	tb.t.Helper()
	tb.ids++
	out, err := Apply(tb.st, game.Input{Now: tb.now, NewID: fmt.Sprintf("c%03d", tb.ids), Cmd: cmd})
	if err != nil {
		tb.t.Fatalf("%s: %v (state %s)", cmd.CommandName(), err, tb.st)
	}
	if out.Hold != nil {
		tb.t.Fatalf("%s asked a hold", cmd.CommandName())
	}
	tb.st = out.State
	return out.Events
}

// refuse applies cmd and checks it is refused with reason.
func (tb *table) refuse(cmd game.Command, reason string) {
	tb.t.Helper()
	out, err := Apply(tb.st, game.Input{Now: tb.now, NewID: "x", Cmd: cmd})
	var ge *game.Error
	if !errors.As(err, &ge) || ge.Reason != reason {
		tb.t.Fatalf("%#v: got %v (hold %v), want a refusal %s", cmd, err, out.Hold, reason)
	}
}

// held applies a command that must first ask a hold of amount (for the
// bank when the command is a bid), then again with the hold's id; it
// returns the hold id.
func (tb *table) held(cmd game.Command, player string, amount int64) string {
	tb.t.Helper()
	out, err := Apply(tb.st, game.Input{Now: tb.now, NewID: "h", Cmd: cmd})
	_, bid := cmd.(Bid) // a bid's hold is for the bank, a bet's is not
	if err != nil || out.Hold == nil || *out.Hold != (game.Hold{PlayerID: player, Amount: amount, Bank: bid}) {
		tb.t.Fatalf("%#v: %v, hold %v; want a hold of %d for %s", cmd, err, out.Hold, amount, player)
	}
	tb.holds++
	id := fmt.Sprintf("hold-%s-%d", player, tb.holds)
	switch c := cmd.(type) {
	case Bid:
		c.HoldID = id
		tb.do(c)
	case PlaceBet:
		c.HoldID = id
		tb.do(c)
	}
	return id
}

func (tb *table) join(side Side, players ...string) {
	tb.t.Helper()
	for _, p := range players {
		tb.do(Join{PlayerID: p, Side: side})
	}
}

func (tb *table) bet(p string, side Side, amount int64) string {
	tb.t.Helper()
	return tb.held(PlaceBet{PlayerID: p, Side: side, Amount: amount}, p, amount)
}

// auction makes banker the banker with bid: he bids, everyone else
// declines, the fee is charged.
func (tb *table) auction(banker string, bid int64) {
	tb.t.Helper()
	tb.held(Bid{PlayerID: banker, Amount: bid}, banker, bid)
	for _, st := range tb.st.Seats {
		if st.PlayerID != banker && tb.st.Auction != nil && tb.st.Auction.Fee == nil {
			tb.do(Bid{PlayerID: st.PlayerID})
		}
	}
	fee, ok := Pending(tb.st).(ChargeFee)
	if !ok {
		tb.t.Fatalf("after the auction: pending %#v, want ChargeFee", Pending(tb.st))
	}
	tb.do(FeeCharged{Fee: fee.Fee})
	tb.drainVoids()
}

func (tb *table) drainVoids() {
	tb.t.Helper()
	if _, ok := Pending(tb.st).(game.VoidHolds); ok {
		tb.do(game.HoldsVoided{})
	}
}

// deal feeds the cards the core asks for, checking the hand each goes to
// ("R", "L" or "B" before each code, e.g. "R9C").
func (tb *table) deal(cards ...string) {
	tb.t.Helper()
	for i, c := range cards {
		eff, ok := Pending(tb.st).(game.DealCard)
		want := map[byte]string{'R': "right", 'L': "left", 'B': "banker"}[c[0]]
		if !ok || eff.Hand != want {
			tb.t.Fatalf("card %d (%s): pending %#v, want a card to the %s hand (%s)", i+1, c, Pending(tb.st), want, tb.st)
		}
		tb.do(game.CardDealt{Code: c[1:]})
	}
}

// settle carries out the Settle effect as the wallet's SettleBanque
// would, written apart from the core, and returns the command applied.
func (tb *table) settle() Settled {
	tb.t.Helper()
	eff, ok := Pending(tb.st).(Settle)
	if !ok {
		tb.t.Fatalf("pending %#v, want Settle (%s)", Pending(tb.st), tb.st)
	}
	c := walletSettle(eff)
	tb.do(c)
	return c
}

// walletSettle is SettleBanque's answer to a Settle.
func walletSettle(e Settle) Settled {
	var out Settled
	for _, b := range e.Bets {
		o := e.Right
		switch b.Side {
		case SideLeft:
			o = e.Left
		case SideCheval:
			switch {
			case e.Right == e.Left && e.Right != rules.OutcomeStandOff:
				o = e.Right
			default:
				o = rules.OutcomeStandOff
			}
		}
		var r Bet
		switch o {
		case rules.OutcomeBankWins:
			r.Lost = b.Amount
		case rules.OutcomeBankLoses:
			r.Won = b.Amount
		}
		out.BankerWinnings += r.Lost - r.Won
		out.Bets = append(out.Bets, r)
	}
	if out.BankerWinnings > 0 {
		out.Commission = rules.Commission(out.BankerWinnings, e.CommissionBP, e.Rounding)
	}
	if e.BankHoldID != "" {
		out.NewBank = e.Bank + out.BankerWinnings - out.Commission
	}
	return out
}

func find[T any](evs []game.Event) (T, bool) {
	for _, ev := range evs {
		if p, ok := ev.Payload.(T); ok {
			return p, true
		}
	}
	var zero T
	return zero, false
}

// TestRules: BQ-DECKS allows 3 decks only; banco on both tables needs an
// auctioned bank; a commission with a house bank is refused.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Rules)
		reason string
	}{
		// Source: RULES.md BQ-DECKS (3 decks)
		{"six decks", func(r *Rules) { r.Decks = 6 }, ReasonInvalidHouseRule},
		{"banco with a house bank", func(r *Rules) { r.BancoBothTables, r.HouseBank = true, true }, ReasonInvalidHouseRule},
		{"house bank commission", func(r *Rules) { r.HouseBank, r.CommissionBP = true, 500 }, ReasonInvalidHouseRule},
		{"house limit without house bank", func(r *Rules) { r.HouseLimit = 5000 }, ReasonInvalidHouseRule},
		{"minimum bank below min bet", func(r *Rules) { r.MinimumBank = 50 }, ReasonInvalidHouseRule},
		{"short decision time", func(r *Rules) { r.DecisionTimeLimitMS = 10 }, ReasonInvalidHouseRule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := DefaultRules()
			tc.change(&r)
			var ge *game.Error
			if _, err := New(r, "s"); !errors.As(err, &ge) || ge.Reason != tc.reason {
				t.Fatalf("New: %v, want %s", err, tc.reason)
			}
		})
	}
	if err := DefaultRules().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
}

// TestAuction: BQ-BANK, the highest bidder takes the bank and pays 2.5%
// of his bid; an outbid bid is released; the auction closes when all
// others declined.
func TestAuction(t *testing.T) {
	tb := newTable(t, DefaultRules())
	if tb.st.Phase != PhaseAuction || !Deadline(tb.st).IsZero() {
		t.Fatalf("a new table: %s", tb.st)
	}
	tb.join(SideRight, "r1", "r2")
	tb.join(SideLeft, "l1")
	tb.refuse(Bid{PlayerID: "nobody", Amount: 5000}, ReasonNotSeated)
	tb.refuse(Bid{PlayerID: "r1", Amount: 999}, ReasonBankBelowMinimum)
	first := tb.held(Bid{PlayerID: "r1", Amount: 4000}, "r1", 4000)
	if want := tb.now.Add(30 * time.Second); !Deadline(tb.st).Equal(want) {
		t.Fatalf("the first bid set deadline %v, want %v", Deadline(tb.st), want)
	}
	tb.refuse(Bid{PlayerID: "l1", Amount: 4000}, ReasonBidTooLow)
	tb.held(Bid{PlayerID: "l1", Amount: 8000}, "l1", 8000)
	// The outbid bid is released at once.
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{first}) {
		t.Fatalf("after the outbid: pending %#v", Pending(tb.st))
	}
	tb.do(game.HoldsVoided{})
	tb.do(Bid{PlayerID: "r1"})
	tb.refuse(Bid{PlayerID: "r1", Amount: 9000}, ReasonWrongState) // declined: out of this auction
	tb.refuse(Bid{PlayerID: "l1"}, ReasonWrongState)               // the highest bid stays
	if tb.st.Auction.Fee != nil {
		t.Fatal("the auction closed while r2 may still bid")
	}
	tb.do(Bid{PlayerID: "r2"})
	// Source: RULES.md BQ-BANK (the highest bidder pays the house 2.5% of the bid)
	fee, ok := Pending(tb.st).(ChargeFee)
	if !ok || fee.PlayerID != "l1" || fee.Bid != 8000 || fee.Fee != 200 || fee.RequestID == "" {
		t.Fatalf("pending %#v, want the fee of 200 on l1's 8000", Pending(tb.st))
	}
	if again := Pending(tb.st); again != fee {
		t.Fatalf("the fee's request id is not derived from the state: %#v then %#v", fee, again)
	}
	tb.refuse(Bid{PlayerID: "r2", Amount: 9000}, ReasonWrongState)
	tb.refuse(Close{Reason: "x"}, ReasonWrongState)
	evs := tb.do(FeeCharged{Fee: 200})
	bc, ok := find[*eventsv1.BankChanged](evs)
	if !ok || bc.GetBankerPlayerId() != "l1" || bc.GetBank() != 8000 || bc.GetReason() != eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED {
		t.Fatalf("events %v", evs)
	}
	if tb.st.Phase != PhaseBetting || tb.st.Banker != "l1" || tb.st.Bank != 8000 || tb.st.BankHoldID == "" || tb.st.FeesCharged != 200 {
		t.Fatalf("after the fee: %s", tb.st)
	}
	// The banker neither bets nor takes a betting turn.
	if tb.st.TurnPlayerID != "r1" {
		t.Fatalf("the first turn is %q, want r1", tb.st.TurnPlayerID)
	}
	tb.refuse(PlaceBet{PlayerID: "l1", Side: SideRight, Amount: 100}, ReasonBankerCannotBet)
}

// TestAuctionTimer: BQ-BANK, the auction closes when its time runs out;
// a refused fee releases the bid and the auction starts again.
func TestAuctionTimer(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "r2")
	hold := tb.held(Bid{PlayerID: "r1", Amount: 2000}, "r1", 2000)
	tb.now = Deadline(tb.st).Add(-time.Millisecond)
	tb.do(game.Tick{})
	if Pending(tb.st) != nil {
		t.Fatalf("a tick before the time: pending %#v", Pending(tb.st))
	}
	tb.now = Deadline(tb.st)
	tb.do(game.Tick{})
	if _, ok := Pending(tb.st).(ChargeFee); !ok {
		t.Fatalf("pending %#v, want ChargeFee", Pending(tb.st))
	}
	evs := tb.do(FeeRefused{Reason: "INSUFFICIENT_FUNDS"})
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{hold}) {
		t.Fatalf("after the refused fee: pending %#v", Pending(tb.st))
	}
	if ao, ok := find[*eventsv1.BankAuctionOpened](evs); !ok || ao.GetRound() != 2 || tb.st.Phase != PhaseAuction || tb.st.Banker != "" {
		t.Fatalf("after the refused fee: %v, %s", evs, tb.st)
	}
}

// TestBettingOrder: BQ-BETS, the right table's order from the banker's
// right, the left's from his left, in turn; bets on right, left or both;
// the bets limited to the bank.
func TestBettingOrder(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "r2")
	tb.join(SideLeft, "l1", "l2")
	tb.auction("r1", 1000) // the banker sits on the right: he is left out
	// Source: RULES.md BQ-BETS (R1, L1, R2, L2 in turn, the banker left out)
	for _, want := range []string{"l1", "r2", "l2"} {
		if tb.st.TurnPlayerID != want {
			t.Fatalf("turn %q, want %q", tb.st.TurnPlayerID, want)
		}
		for _, other := range []string{"l1", "r2", "l2"} {
			if other != want {
				tb.refuse(PlaceBet{PlayerID: other, Side: SideLeft, Amount: 100}, ReasonNotYourTurn)
			}
		}
		switch want {
		case "l1":
			tb.refuse(PlaceBet{PlayerID: "l1", Side: 0, Amount: 100}, ReasonInvalidArgument)
			tb.refuse(PlaceBet{PlayerID: "l1", Side: SideRight, Amount: 99}, ReasonBetOutOfLimits)
			tb.refuse(PlaceBet{PlayerID: "l1", Side: SideRight, Amount: 1001}, ReasonBetExceedsBank)
			tb.bet("l1", SideRight, 400) // a left player on the right table
		case "r2":
			tb.bet("r2", SideCheval, 500)
			// Source: RULES.md BQ-BANK (the bets total at most the bank)
		case "l2":
			tb.refuse(PlaceBet{PlayerID: "l2", Side: SideLeft, Amount: 200}, ReasonBetExceedsBank)
			tb.do(Pass{PlayerID: "l2"})
		}
	}
	if tb.st.Phase != PhaseDealing || len(tb.st.Coup.Bets) != 2 {
		t.Fatalf("after everyone's turn: %s", tb.st)
	}
	tb.refuse(PlaceBet{PlayerID: "l2", Side: SideLeft, Amount: 100}, ReasonWrongState)
}

// TestBettingCovered: the betting closes as soon as the bank is covered.
func TestBettingCovered(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "b", "r1")
	tb.join(SideLeft, "l1")
	tb.auction("b", 1000)
	tb.bet("l1", SideLeft, 950) // 50 left: less than a bet
	if tb.st.Phase != PhaseDealing {
		t.Fatalf("the bank is covered but %s", tb.st)
	}
}

// TestBettingTimeoutAndReopen: a turn that runs out is a pass; a round
// without a bet starts again.
func TestBettingTimeoutAndReopen(t *testing.T) {
	tb := newTable(t, houseRules())
	if tb.st.Phase != PhaseBetting || tb.st.TurnPlayerID != "" || !Deadline(tb.st).IsZero() {
		t.Fatalf("a house bank table without players: %s", tb.st)
	}
	tb.join(SideLeft, "l1")
	if tb.st.TurnPlayerID != "l1" || Deadline(tb.st).IsZero() {
		t.Fatalf("the first player gets the turn: %s", tb.st)
	}
	tb.now = Deadline(tb.st)
	evs := tb.do(game.Tick{})
	to, ok := find[*eventsv1.TurnTimedOut](evs)
	if _, re := find[*eventsv1.BettingReopened](evs); !ok || to.GetAction() != "bet_declined" || !re || tb.st.TurnPlayerID != "l1" {
		t.Fatalf("the time ran out: %v, %s", evs, tb.st)
	}
}

// TestHandsAndPlayerRules: BQ-HANDS, three hands dealt right, left,
// banker; the right hand plays first by CF-PLAYER-DRAW (its player
// decides on 5), the left draws on 0-4 by rule; then the banker chooses
// freely (BQ-PLAY): here he stands on 4 although the tableau would draw.
func TestHandsAndPlayerRules(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "r2")
	tb.join(SideLeft, "l1", "l2", "b")
	tb.auction("b", 5000)
	tb.bet("r1", SideRight, 1000)
	tb.do(Pass{PlayerID: "l1"})
	tb.bet("r2", SideCheval, 1000)
	tb.bet("l2", SideLeft, 2000)
	// Source: RULES.md BQ-PLAY (the players nearest the banker play the first coup)
	if cp := tb.st.Coup; cp.RightHolder != "r1" || cp.LeftHolder != "l1" {
		t.Fatalf("holders %q/%q, want r1/l1", cp.RightHolder, cp.LeftHolder)
	}
	// Source: RULES.md BQ-HANDS (right, left, banker, one card at a time)
	tb.deal("R2C", "LAD", "BTH", "R3S", "L2C", "B4D")
	if tb.st.Phase != PhaseDecision || tb.st.Coup.Await != HandRight {
		t.Fatalf("the right hand has 5: %s", tb.st)
	}
	tb.refuse(Decide{PlayerID: "r2", Hand: HandRight, Draw: true}, ReasonNotYourTurn)
	tb.refuse(Decide{PlayerID: "l1", Hand: HandLeft, Draw: true}, ReasonNotYourTurn)
	tb.refuse(Decide{PlayerID: "b", Hand: HandBanker}, ReasonNotYourTurn)
	// Source: RULES.md CF-PLAYER-DRAW (option on 5: r1 stands)
	evs := tb.do(Decide{PlayerID: "r1", Hand: HandRight, Draw: false})
	if dd, ok := find[*eventsv1.DrawDecided](evs); !ok || dd.GetDraw() || !dd.GetByChoice() || dd.GetPlayerId() != "r1" {
		t.Fatalf("events %v", evs)
	}
	// Source: RULES.md CF-PLAYER-DRAW (the left hand has 3: draws by rule)
	tb.deal("L5H")
	if tb.st.Phase != PhaseDecision || tb.st.Coup.Await != HandBanker {
		t.Fatalf("the banker's choice: %s", tb.st)
	}
	tb.refuse(Decide{PlayerID: "r1", Hand: HandBanker}, ReasonNotBanker)
	// Source: RULES.md BQ-PLAY (the banker may draw or stand freely)
	evs = tb.do(Decide{PlayerID: "b", Hand: HandBanker, Draw: false})
	cp := tb.st.Coup
	if tb.st.Phase != PhaseSettling || cp.RightOutcome != rules.OutcomeBankLoses || cp.LeftOutcome != rules.OutcomeBankLoses {
		t.Fatalf("R 5 and L 8 against B 4: %s, outcomes %v %v", tb.st, cp.RightOutcome, cp.LeftOutcome)
	}
	cr, ok := find[*eventsv1.CoupResulted](evs)
	if !ok || len(cr.GetHands()) != 2 || cr.GetHands()[0].GetHolderPlayerId() != "r1" || cr.GetHands()[1].GetTotal() != 8 ||
		cr.GetBankerTotal() != 4 || cr.GetOutcome() != eventsv1.Outcome_OUTCOME_BANK_LOSES {
		t.Fatalf("CoupResulted %v", cr)
	}
	// Source: RULES.md BQ-CHEVAL (the bank lost both: the à cheval bet wins)
	s := tb.settle()
	if s.NewBank != 1000 || s.Bets[1].Won != 1000 {
		t.Fatalf("settlement %+v", s)
	}
	// Source: RULES.md BQ-BANK (the banker keeps the bank after losing)
	if tb.st.Banker != "b" || tb.st.Bank != 1000 || tb.st.Phase != PhaseBetting {
		t.Fatalf("after the lost coup: %s", tb.st)
	}
}

// TestCardEventsNameHolders: every card names its hand and holder, so the
// shell can show a face-down card to its holder only.
func TestCardEventsNameHolders(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.auction("b", 5000)
	tb.bet("r1", SideRight, 100)
	tb.do(Pass{PlayerID: "l1"})
	want := []struct {
		hand   eventsv1.Hand
		holder string
	}{{eventsv1.Hand_HAND_RIGHT, "r1"}, {eventsv1.Hand_HAND_LEFT, "l1"}, {eventsv1.Hand_HAND_BANKER, "b"}}
	for i, code := range []string{"2C", "3C", "4C"} {
		evs := tb.do(game.CardDealt{Code: code})
		cd, ok := find[*eventsv1.CardDealt](evs)
		if !ok || cd.GetHand() != want[i].hand || cd.GetHolderPlayerId() != want[i].holder || cd.GetPosition() != 1 {
			t.Fatalf("card %d: %v", i, evs)
		}
	}
	if eff := Pending(tb.st).(game.DealCard); eff.RequestID != tb.st.Coup.ID+"/card/4" || eff.Hand != "right" {
		t.Fatalf("pending %#v", eff)
	}
}

// TestHandPassesOnLoss: BQ-PLAY, a player keeps his side's hand until the
// bank beats it, then the next player of his side plays it; a stand-off
// keeps it.
func TestHandPassesOnLoss(t *testing.T) {
	tb := newTable(t, houseRules())
	tb.join(SideRight, "r1", "r2", "r3")
	tb.join(SideLeft, "l1", "l2")
	play := func(cards ...string) {
		t.Helper()
		for tb.st.Phase == PhaseBetting {
			p := tb.st.TurnPlayerID
			if p == "r3" {
				tb.bet(p, SideRight, 100)
			} else {
				tb.do(Pass{PlayerID: p})
			}
		}
		tb.deal(cards...)
		tb.settle()
	}
	// Bank 9 beats right (5... stands at two: 7) and stands off left (9).
	play("R7C", "L4D", "B4H", "RKS", "L5C", "B5D")
	if cp := tb.st.LastCoup; cp.RightOutcome != rules.OutcomeBankWins || cp.LeftOutcome != rules.OutcomeStandOff {
		t.Fatalf("outcomes %v %v", cp.RightOutcome, cp.LeftOutcome)
	}
	// Source: RULES.md BQ-PLAY (the right passes round to the next player of that side)
	if tb.st.RightHolder != "r2" || tb.st.LeftHolder != "l1" {
		t.Fatalf("next holders %q/%q, want r2/l1", tb.st.RightHolder, tb.st.LeftHolder)
	}
	play("R7C", "L8D", "B4H", "RKS", "LKC", "B5D") // both naturals and the bank's 9 again
	play("R7C", "L9D", "B4H", "RKS", "LKC", "B5D")
	if tb.st.RightHolder != "r1" || tb.st.LeftHolder != "l2" {
		t.Fatalf("after r2 and r3 lost: holders %q/%q, want r1 (round the side)/l2", tb.st.RightHolder, tb.st.LeftHolder)
	}
}

// TestNaturals: CF-NATURAL-BANKER ends the coup at two cards against both
// hands; a punter's natural is settled against the banker's first two
// cards and the other hand plays on.
func TestNaturals(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.auction("b", 5000)
	tb.bet("r1", SideRight, 100)
	tb.do(Pass{PlayerID: "l1"})
	evs := []game.Event{}
	for _, c := range []string{"2C", "8D", "9H", "6S", "KC", "KD"} {
		evs = append(evs, tb.do(game.CardDealt{Code: c})...)
	}
	// R 8, L 8, B 9: the banker's natural ends the coup.
	if ns, ok := find[*eventsv1.NaturalShown](evs); !ok || ns.GetHand() != eventsv1.Hand_HAND_BANKER || ns.GetTotal() != 9 {
		t.Fatalf("events %v", evs)
	}
	if cp := tb.st.Coup; tb.st.Phase != PhaseSettling || cp.RightOutcome != rules.OutcomeBankWins || cp.LeftOutcome != rules.OutcomeBankWins {
		t.Fatalf("after the banker's natural: %s", tb.st)
	}
}

// TestBankerTimeoutPlaysAgainstTheRicherHand: when the banker's time
// runs out he does what CF-BANKER-DRAW does against the hand carrying
// more money: with 5 he draws against the left hand's third card 4 (an
// option cell: draws), and stands against the right hand's third card 8.
func TestBankerTimeoutPlaysAgainstTheRicherHand(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.auction("b", 5000)
	tb.bet("r1", SideRight, 100)
	tb.bet("l1", SideLeft, 300)
	tb.deal("R2C", "L2D", "B3H", "RKS", "LKC", "B2D", "R8C", "L4H")
	if tb.st.Phase != PhaseDecision || tb.st.Coup.Await != HandBanker {
		t.Fatalf("the banker's decision: %s", tb.st)
	}
	tb.now = Deadline(tb.st)
	evs := tb.do(game.Tick{})
	to, ok := find[*eventsv1.TurnTimedOut](evs)
	if !ok || to.GetPlayerId() != "b" || to.GetAction() != "draw" || tb.st.Coup.DrawTo != HandBanker {
		t.Fatalf("the banker's time-out: %v, %s", evs, tb.st)
	}
	// Source: RULES.md CF-BANKER-DRAW (the right hand's 8: he would stand on 5)
	tb2 := newTable(t, DefaultRules())
	tb2.join(SideRight, "r1", "b")
	tb2.join(SideLeft, "l1")
	tb2.auction("b", 5000)
	tb2.bet("r1", SideRight, 300)
	tb2.bet("l1", SideLeft, 100)
	tb2.deal("R2C", "L2D", "B3H", "RKS", "LKC", "B2D", "R8C", "L4H")
	tb2.now = Deadline(tb2.st)
	evs = tb2.do(game.Tick{})
	if to, ok := find[*eventsv1.TurnTimedOut](evs); !ok || to.GetAction() != "stand" || tb2.st.Phase != PhaseSettling {
		t.Fatalf("against the right hand: %v, %s", evs, tb2.st)
	}
}

// TestPlayerTimeoutDraws: a hand's player on 5 whose time runs out draws.
func TestPlayerTimeoutDraws(t *testing.T) {
	tb := newTable(t, houseRules())
	tb.join(SideRight, "r1")
	tb.join(SideLeft, "l1")
	tb.bet("r1", SideRight, 100)
	tb.do(Pass{PlayerID: "l1"})
	tb.deal("R2C", "L7D", "B3H", "R3S", "LKC", "B2D")
	tb.now = Deadline(tb.st)
	evs := tb.do(game.Tick{})
	if to, ok := find[*eventsv1.TurnTimedOut](evs); !ok || to.GetPlayerId() != "r1" || to.GetAction() != "draw" {
		t.Fatalf("events %v", evs)
	}
	// With a house bank the banker's choice is the croupier's, at once:
	// 5 against a third card 6 draws (CF-BANKER-DRAW).
	tb.deal("R6C", "B4C")
	if tb.st.Phase != PhaseSettling {
		t.Fatalf("%s", tb.st)
	}
	if e := Pending(tb.st).(Settle); e.BankHoldID != "" || e.Bank != 0 {
		t.Fatalf("a house bank's settlement names a bank hold: %#v", e)
	}
}

// TestEmptySidePlaysByTableau: nobody on the left: its hand draws on 5.
func TestEmptySidePlaysByTableau(t *testing.T) {
	tb := newTable(t, houseRules())
	tb.join(SideRight, "r1")
	tb.bet("r1", SideLeft, 100)
	tb.deal("R7C", "L2D", "B3H", "RKS", "L3C", "B2D", "L4H", "BKC")
	if tb.st.Coup.LeftHolder != "" || tb.st.Phase != PhaseSettling {
		t.Fatalf("%s", tb.st)
	}
}

// TestBankExhaustedAndPassed: BQ-BANK, a bank that cannot cover a bet
// any more goes back to auction; a banker may pass between coups.
func TestBankExhaustedAndPassed(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.auction("b", 1000)
	bankHold := tb.st.BankHoldID
	tb.bet("r1", SideCheval, 950)
	tb.deal("R9C", "L9D", "BKH", "RKS", "LKC", "BKD")
	tb.settle()
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{bankHold}) {
		t.Fatalf("the exhausted bank's hold is not released: pending %#v", Pending(tb.st))
	}
	if tb.st.Phase != PhaseAuction || tb.st.Banker != "" || tb.st.Bank != 0 {
		t.Fatalf("after the exhausted bank: %s", tb.st)
	}
	tb.do(game.HoldsVoided{})
	tb.auction("l1", 2000)
	tb.refuse(PassBank{PlayerID: "r1"}, ReasonNotBanker)
	tb.bet("r1", SideRight, 100)
	tb.refuse(PassBank{PlayerID: "l1"}, ReasonWrongState) // a bet is in: not between coups
	tb.do(Pass{PlayerID: "b"})
	tb.deal("R7C", "L7D", "B9H", "RKS", "LKC", "BKD")
	tb.settle()
	hold := tb.st.BankHoldID
	evs := tb.do(PassBank{PlayerID: "l1"})
	if bc, ok := find[*eventsv1.BankChanged](evs); !ok || bc.GetReason() != eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED || bc.GetBank() != 2100 {
		t.Fatalf("pass: %v", evs)
	}
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{hold}) || tb.st.Phase != PhaseAuction {
		t.Fatalf("after the pass: pending %#v, %s", Pending(tb.st), tb.st)
	}
}

// TestCommission: a table's commission on the banker's net winnings is
// asked of the settlement and taken from the bank.
func TestCommission(t *testing.T) {
	r := DefaultRules()
	r.CommissionBP = 500
	tb := newTable(t, r)
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.auction("b", 1000)
	tb.bet("r1", SideRight, 400)
	tb.do(Pass{PlayerID: "l1"})
	tb.deal("R7C", "L7D", "B9H", "RKS", "LKC", "BKD")
	if e := Pending(tb.st).(Settle); e.CommissionBP != 500 || e.Bank != 1000 || e.BankHoldID == "" || len(e.Bets) != 1 || e.Bets[0].Side != SideRight {
		t.Fatalf("settle %#v", e)
	}
	tb.settle()
	if tb.st.Bank != 1380 {
		t.Fatalf("bank %d, want 1000 + 400 - 20", tb.st.Bank)
	}
}

// TestVoid: CF-ERROR, a coup with bets voided before its result returns
// every bet; the bank and the hands' players go on.
func TestVoid(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1")
	tb.auction("b", 1000)
	h1 := tb.bet("r1", SideRight, 400)
	h2 := tb.bet("l1", SideCheval, 100)
	tb.deal("R5C", "L7D", "B3H", "RKS", "LKC", "B2D")
	id := tb.st.Coup.ID
	tb.refuse(Void{CoupID: "other"}, ReasonCoupNotInPlay)
	tb.refuse(Close{}, ReasonWrongState)
	tb.do(Void{CoupID: id, Reason: "misdeal", By: "croupier"})
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{h1, h2}) {
		t.Fatalf("pending %#v", Pending(tb.st))
	}
	if tb.st.Phase != PhaseBetting || tb.st.Bank != 1000 || tb.st.Banker != "b" || !tb.st.LastCoup.Voided || tb.st.Coup.ID == id {
		t.Fatalf("after the void: %s", tb.st)
	}
	tb.do(game.HoldsVoided{})
	tb.refuse(Void{CoupID: tb.st.Coup.ID}, ReasonWrongState) // no bets
}

// TestClose: between coups the table closes, the bank (or the highest
// bid) returned.
func TestClose(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.auction("b", 1000)
	hold := tb.st.BankHoldID
	tb.do(Close{Reason: "end", By: "op"})
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{hold}) || tb.st.Phase != PhaseClosed {
		t.Fatalf("pending %#v, %s", Pending(tb.st), tb.st)
	}
	tb.do(game.HoldsVoided{})
	if Pending(tb.st) != (game.CloseShoe{}) {
		t.Fatalf("pending %#v", Pending(tb.st))
	}
	tb.refuse(Join{PlayerID: "x", Side: SideLeft}, ReasonTableClosed)

	tb = newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "r2")
	bid := tb.held(Bid{PlayerID: "r1", Amount: 1000}, "r1", 1000)
	tb.do(Close{Reason: "end"})
	if eff, ok := Pending(tb.st).(game.VoidHolds); !ok || !reflect.DeepEqual(eff.HoldIDs, []string{bid}) {
		t.Fatalf("the bid is not returned: %#v", Pending(tb.st))
	}
}

// TestNewShoeAfterCutCard: SHOE-CUT-CARD, the next shoe opens before any
// card of the next coup.
func TestNewShoeAfterCutCard(t *testing.T) {
	tb := newTable(t, houseRules())
	tb.join(SideRight, "r1")
	tb.bet("r1", SideRight, 100)
	tb.deal("R7C", "L7D", "B9H", "RKS")
	tb.do(game.CardDealt{Code: "KC", CutCardOut: true})
	tb.deal("BKD")
	tb.settle()
	if Pending(tb.st) != (game.NewShoe{}) {
		t.Fatalf("pending %#v", Pending(tb.st))
	}
	tb.bet("r1", SideRight, 100)
	if Pending(tb.st) != (game.NewShoe{}) {
		t.Fatalf("a card before the new shoe: pending %#v", Pending(tb.st))
	}
	tb.do(game.ShoeOpened{ShoeID: "shoe-2", Number: 2})
	if eff, ok := Pending(tb.st).(game.DealCard); !ok || eff.RequestID != tb.st.Coup.ID+"/card/1" {
		t.Fatalf("pending %#v", Pending(tb.st))
	}
}

// TestLeave: who may not leave.
func TestLeave(t *testing.T) {
	tb := newTable(t, DefaultRules())
	tb.join(SideRight, "r1", "b")
	tb.join(SideLeft, "l1", "l2")
	tb.held(Bid{PlayerID: "b", Amount: 1000}, "b", 1000)
	tb.refuse(Leave{PlayerID: "b"}, ReasonWrongState)
	tb.do(Leave{PlayerID: "l2"})
	tb.do(Bid{PlayerID: "r1"})
	tb.do(Bid{PlayerID: "l1"})
	tb.do(FeeCharged{Fee: 25})
	tb.refuse(Leave{PlayerID: "b"}, ReasonWrongState)
	tb.bet("r1", SideRight, 100)
	tb.refuse(Leave{PlayerID: "r1"}, ReasonWrongState)
	tb.do(Leave{PlayerID: "l1"}) // his turn: the betting closes
	if tb.st.Phase != PhaseDealing {
		t.Fatalf("%s", tb.st)
	}
}
