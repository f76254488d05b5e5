package oldbaccarat

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// table is a core driven by hand in the example tests.
type table struct {
	t   *testing.T
	st  State
	now time.Time
	ids int
}

func testRules() Rules {
	r := DefaultRules()
	r.MinBank, r.MinStake = 1000, 100
	return r
}

func newTable(t *testing.T, r Rules) *table {
	t.Helper()
	st, err := New(r, "shoe-1")
	if err != nil {
		t.Fatal(err)
	}
	return &table{t: t, st: st, now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
}

// do applies cmd, which must be accepted (a hold is placed as "h<n>"),
// and returns its events.
func (tb *table) do(cmd game.Command) []game.Event {
	tb.t.Helper()
	tb.ids++
	in := game.Input{Now: tb.now, NewID: fmt.Sprintf("c%03d", tb.ids), Cmd: cmd}
	out, err := Apply(tb.st, in)
	if err == nil && out.Hold != nil {
		in.Cmd = cmd.(game.HoldCommand).WithHold(fmt.Sprintf("h%03d", tb.ids))
		out, err = Apply(tb.st, in)
	}
	if err != nil {
		tb.t.Fatalf("%s: %v (state %s)", cmd.CommandName(), err, tb.st)
	}
	if out.Hold != nil {
		tb.t.Fatalf("%s asked a hold twice", cmd.CommandName())
	}
	tb.st = out.State
	return out.Events
}

// refuse applies cmd and checks it is refused with reason, changing nothing.
func (tb *table) refuse(cmd game.Command, reason string) {
	tb.t.Helper()
	out, err := Apply(tb.st, game.Input{Now: tb.now, NewID: "x", Cmd: cmd})
	var ge *game.Error
	if !errors.As(err, &ge) || ge.Reason != reason {
		tb.t.Fatalf("%#v: %v (hold %v), want a refusal %s", cmd, err, out.Hold, reason)
	}
}

// drain carries out the effects that need no card: releases, moves.
func (tb *table) drain() {
	tb.t.Helper()
	for {
		switch Pending(tb.st).(type) {
		case game.VoidHolds:
			tb.do(game.HoldsVoided{})
		case MoveToBottom:
			tb.do(MovedToBottom{})
		default:
			return
		}
	}
}

// banked seats p1, p2, p3 (seats 1, 2, 3) and gives p1 the bank.
func banked(t *testing.T, r Rules, bank int64) *table {
	t.Helper()
	tb := newTable(t, r)
	for _, p := range []string{"p1", "p2", "p3"} {
		tb.do(Join{PlayerID: p})
	}
	tb.do(Bid{PlayerID: "p1", Amount: bank})
	tb.do(PassBank{PlayerID: "p2"})
	tb.do(PassBank{PlayerID: "p3"})
	if tb.st.Phase != PhaseStaking || tb.st.BankerID != "p1" || tb.st.Bank != bank {
		t.Fatalf("no bank: %s", tb.st)
	}
	return tb
}

// staked has p2 and p3 stake; the shoe is not fresh (no cut step).
func staked(t *testing.T, s2, s3 int64) *table {
	t.Helper()
	tb := banked(t, testRules(), 100000)
	tb.st.FreshShoe = false
	tb.do(Stake{PlayerID: "p2", Amount: s2})
	tb.do(Stake{PlayerID: "p3", Amount: s3})
	if tb.st.Phase != PhaseDealing {
		t.Fatalf("the staking did not close: %s", tb.st)
	}
	return tb
}

// deal feeds the cards the core asks for, checking the hand each goes to
// ("p2 KC": to p2's hand, "B 9D": to the banker's).
func (tb *table) deal(cards ...string) {
	tb.t.Helper()
	for i, c := range cards {
		who, code, _ := strings.Cut(c, " ")
		want := HandName(who)
		if who == "B" {
			want = "banker"
		}
		eff, ok := Pending(tb.st).(game.DealCard)
		if !ok || eff.Hand != want {
			tb.t.Fatalf("card %d (%s): pending %#v, want a card to %s (state %s)", i+1, c, Pending(tb.st), want, tb.st)
		}
		tb.do(game.CardDealt{Code: code})
	}
}

func (tb *table) hand(p string) Hand {
	for _, h := range tb.st.Coup.Hands {
		if h.PlayerID == p {
			return h
		}
	}
	tb.t.Fatalf("no hand of %s", p)
	return Hand{}
}

// TestBankAuction: Source: RULES.md OLD-BANKER (the largest stake takes
// the bank; the other bids are released).
func TestBankAuction(t *testing.T) {
	tb := newTable(t, testRules())
	tb.do(Join{PlayerID: "p1"})
	tb.do(Join{PlayerID: "p2"})
	if tb.st.Phase != PhaseWaiting {
		t.Fatalf("two players: %s", tb.st)
	}
	evs := tb.do(Join{PlayerID: "p3"})
	if tb.st.Phase != PhaseAuction || len(evs) != 2 {
		t.Fatalf("the third player opened no auction: %s", tb.st)
	}
	if _, ok := evs[1].Payload.(*eventsv1.BankAuctionOpened); !ok {
		t.Fatalf("event %v", evs[1].Payload)
	}
	tb.refuse(Bid{PlayerID: "p1", Amount: 999}, ReasonBankBelowMinimum)
	tb.refuse(Stake{PlayerID: "p1", Amount: 100}, ReasonWrongState)
	out, err := Apply(tb.st, game.Input{Now: tb.now, Cmd: Bid{PlayerID: "p1", Amount: 5000}})
	if err != nil || out.Hold == nil || *out.Hold != (game.Hold{PlayerID: "p1", Amount: 5000, Bank: true}) || !reflect.DeepEqual(out.State, tb.st) {
		t.Fatalf("a bid without a hold: %v, %+v", err, out.Hold)
	}
	tb.do(Bid{PlayerID: "p1", Amount: 5000})
	bid1 := tb.st.Auction.Bids[0].HoldID
	if !tb.st.Deadline.Equal(tb.now.Add(30 * time.Second)) {
		t.Fatalf("the first bid set deadline %v", tb.st.Deadline)
	}
	tb.refuse(Bid{PlayerID: "p2", Amount: 5000}, ReasonBidTooLow)
	tb.do(Bid{PlayerID: "p2", Amount: 8000})
	evs = tb.do(PassBank{PlayerID: "p3"})
	// Every seated player has bid or passed: the highest bid is the bank.
	bc, ok := evs[len(evs)-1].Payload.(*eventsv1.BankChanged)
	if tb.st.Phase != PhaseStaking || tb.st.BankerID != "p2" || tb.st.Bank != 8000 || !ok || bc.GetBank() != 8000 {
		t.Fatalf("after the last pass: %s, event %v", tb.st, evs[len(evs)-1].Payload)
	}
	if !reflect.DeepEqual(tb.st.PendingVoids, []string{bid1}) {
		t.Fatalf("pending voids %v, want p1's bid %s", tb.st.PendingVoids, bid1)
	}
	if hold := tb.st.BankHoldID; hold == "" || hold == bid1 {
		t.Fatalf("bank hold %q", hold)
	}
}

// TestBankAuctionTimer: the window started by the first bid closes the
// auction (OLD-BANKER); a raise releases the raiser's earlier bid; an
// auction where all pass opens a new round.
func TestBankAuctionTimer(t *testing.T) {
	tb := newTable(t, testRules())
	for _, p := range []string{"p1", "p2", "p3", "p4"} {
		tb.do(Join{PlayerID: p})
	}
	for _, p := range []string{"p1", "p2", "p3", "p4"} {
		tb.do(PassBank{PlayerID: p})
	}
	if tb.st.Phase != PhaseAuction || tb.st.Auction.Round != 2 || len(tb.st.Auction.Passed) != 0 {
		t.Fatalf("all passed: %s %+v", tb.st, tb.st.Auction)
	}
	tb.do(Bid{PlayerID: "p3", Amount: 2000})
	first := tb.st.Auction.Bids[0].HoldID
	tb.do(Bid{PlayerID: "p3", Amount: 3000})
	if !reflect.DeepEqual(tb.st.PendingVoids, []string{first}) || len(tb.st.Auction.Bids) != 1 {
		t.Fatalf("a raise: voids %v, bids %+v", tb.st.PendingVoids, tb.st.Auction.Bids)
	}
	tb.drain()
	tb.now = tb.st.Deadline.Add(-time.Millisecond)
	if tb.do(game.Tick{}); tb.st.Phase != PhaseAuction {
		t.Fatal("closed 1ms early")
	}
	tb.now = tb.st.Deadline
	tb.do(game.Tick{})
	if tb.st.Phase != PhaseStaking || tb.st.BankerID != "p3" || tb.st.Bank != 3000 || tb.st.BankerSeat != 3 {
		t.Fatalf("after the window: %s", tb.st)
	}
}

// TestStakeCover: Source: RULES.md OLD-STAKE (the banker must hold double
// each punter's stake: a cover that must be present).
func TestStakeCover(t *testing.T) {
	tb := banked(t, testRules(), 20000)
	tb.do(Join{PlayerID: "p4"})
	tb.refuse(Stake{PlayerID: "p1", Amount: 100}, ReasonBankerCannotBet)
	tb.refuse(Stake{PlayerID: "p2", Amount: 99}, ReasonBetOutOfLimits)
	tb.refuse(Stake{PlayerID: "p2", Amount: 0}, ReasonInvalidAmount)
	tb.refuse(Stake{PlayerID: "zz", Amount: 100}, ReasonNotSeated)
	tb.refuse(Stake{PlayerID: "p2", Amount: 10001}, ReasonBetExceedsBank)
	tb.do(Stake{PlayerID: "p2", Amount: 6000})
	tb.refuse(Stake{PlayerID: "p2", Amount: 100}, ReasonWrongState)
	tb.refuse(Stake{PlayerID: "p3", Amount: 4001}, ReasonBetExceedsBank) // 2*(6000+4001) > 20000
	tb.do(Stake{PlayerID: "p3", Amount: 4000})
	tb.refuse(Stake{PlayerID: "p4", Amount: 100}, ReasonBetExceedsBank) // the bank is covered twice over
	if tb.st.Phase != PhaseStaking {
		t.Fatalf("p4 has not acted: %s", tb.st)
	}
	tb.do(PassStake{PlayerID: "p4"})
	if tb.st.Phase != PhaseDealing || !tb.st.Coup.StakingClosed {
		t.Fatalf("everyone acted: %s", tb.st)
	}
	tb.refuse(Stake{PlayerID: "p4", Amount: 100}, ReasonWrongState)
}

// TestTooFewStakes: Source: RULES.md OLD-DECKS (three players at least:
// a staking window that ends with one stake voids the coup).
func TestTooFewStakes(t *testing.T) {
	tb := banked(t, testRules(), 20000)
	tb.do(Stake{PlayerID: "p2", Amount: 500})
	hold := tb.st.Coup.Hands[0].HoldID
	tb.now = tb.st.Deadline
	evs := tb.do(game.Tick{})
	if tb.st.Phase != PhaseStaking || tb.st.Coup != nil || !tb.st.LastCoup.Voided || !reflect.DeepEqual(tb.st.PendingVoids, []string{hold}) {
		t.Fatalf("after the window: %s", tb.st)
	}
	var timedOut, voided bool
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case *eventsv1.TurnTimedOut:
			timedOut = p.GetPlayerId() == "p3" && p.GetAction() == "bet_declined"
		case *eventsv1.CoupVoided:
			voided = true
		}
	}
	if !timedOut || !voided {
		t.Fatalf("events %v", evs)
	}
}

// TestCut: Source: RULES.md OLD-CUT (after the cut the banker may move top
// cards to the bottom, announcing it; once per shoe, before its first card).
func TestCut(t *testing.T) {
	tb := banked(t, testRules(), 100000)
	tb.do(Stake{PlayerID: "p2", Amount: 100})
	tb.do(Stake{PlayerID: "p3", Amount: 100})
	if !tb.st.Coup.CutDue || Pending(tb.st) != nil || !tb.st.Deadline.Equal(tb.now.Add(15*time.Second)) {
		t.Fatalf("the cut is not offered: %s, pending %#v", tb.st, Pending(tb.st))
	}
	tb.refuse(game.CardDealt{Code: "9C"}, ReasonWrongState)
	tb.refuse(MoveTopCards{PlayerID: "p2", N: 3}, ReasonNotBanker)
	tb.refuse(MoveTopCards{PlayerID: "p1", N: 11}, ReasonInvalidArgument)
	evs := tb.do(MoveTopCards{PlayerID: "p1", N: 5})
	if m, ok := evs[0].Payload.(*eventsv1.TopCardsMoved); !ok || m.GetCount() != 5 || m.GetBankerPlayerId() != "p1" {
		t.Fatalf("events %v", evs)
	}
	id := tb.st.Coup.ID
	want := MoveToBottom{RequestID: id + "/move", ShoeID: "shoe-1", CoupID: id, N: 5}
	if eff := Pending(tb.st); eff != want {
		t.Fatalf("pending %#v, want %#v", eff, want)
	}
	tb.do(MovedToBottom{})
	tb.refuse(MovedToBottom{}, ReasonWrongState)
	if eff, ok := Pending(tb.st).(game.DealCard); !ok || eff.RequestID != id+"/card/1" {
		t.Fatalf("then the first card: %#v", Pending(tb.st))
	}
	// The shoe is no longer fresh: the next coup has no cut.
	tb.deal("p2 4C", "p3 4D", "B 4H", "p3 5C", "p2 5D", "B 5H") // 9s everywhere: naturals
	tb.do(Settled{NewBank: tb.st.Coup.Bank + tb.st.Coup.BankerNet})
	tb.do(Stake{PlayerID: "p2", Amount: 100})
	tb.do(Stake{PlayerID: "p3", Amount: 100})
	if tb.st.Coup.CutDue || Pending(tb.st) == nil {
		t.Fatalf("a cut offered in the middle of a shoe: %s", tb.st)
	}
}

// TestCutTimeout: the banker who does not announce in time moves nothing.
func TestCutTimeout(t *testing.T) {
	tb := banked(t, testRules(), 100000)
	tb.do(Stake{PlayerID: "p2", Amount: 100})
	tb.do(Stake{PlayerID: "p3", Amount: 100})
	tb.now = tb.st.Deadline
	evs := tb.do(game.Tick{})
	if p, ok := evs[0].Payload.(*eventsv1.TurnTimedOut); !ok || p.GetTurn() != "cut" || tb.st.Coup.CutDue || tb.st.Coup.MoveTop != 0 {
		t.Fatalf("events %v, %s", evs, tb.st)
	}
	if _, ok := Pending(tb.st).(game.DealCard); !ok {
		t.Fatalf("pending %#v", Pending(tb.st))
	}
}

// TestDealOrder: Source: RULES.md OLD-DEAL (clockwise from the banker's
// left, the banker; then counter-clockwise from his right, the banker last).
func TestDealOrder(t *testing.T) {
	tb := newTable(t, testRules())
	for _, p := range []string{"p1", "p2", "p3", "p4"} {
		tb.do(Join{PlayerID: p})
	}
	tb.do(Bid{PlayerID: "p2", Amount: 100000}) // the banker at seat 2
	for _, p := range []string{"p1", "p3", "p4"} {
		tb.do(PassBank{PlayerID: p})
	}
	tb.st.FreshShoe = false
	for _, p := range []string{"p1", "p4", "p3"} {
		tb.do(Stake{PlayerID: p, Amount: 100})
	}
	// Clockwise from the banker's left: seats 3, 4, then 1.
	var got []string
	for _, h := range tb.st.Coup.Hands {
		got = append(got, h.PlayerID)
	}
	if !reflect.DeepEqual(got, []string{"p3", "p4", "p1"}) {
		t.Fatalf("punters %v, want p3 p4 p1", got)
	}
	id := tb.st.Coup.ID
	for i, c := range []string{"p3 2C", "p4 2D", "p1 2H", "B 2S", "p1 3C", "p4 3D", "p3 3H", "B 3S"} {
		if eff := Pending(tb.st).(game.DealCard); eff.RequestID != fmt.Sprintf("%s/card/%d", id, i+1) {
			t.Fatalf("card %d: request id %q", i+1, eff.RequestID)
		}
		evs := tb.do0(c)
		cd := evs[0].Payload.(*eventsv1.CardDealt)
		who, _, _ := strings.Cut(c, " ")
		if who == "B" {
			who = "p2"
		}
		if cd.GetHolderPlayerId() != who {
			t.Fatalf("card %d held by %q, want %q", i+1, cd.GetHolderPlayerId(), who)
		}
	}
	if tb.st.Phase != PhaseSettling {
		t.Fatalf("every hand has 5: nobody may draw (OLD-DRAW), got %s", tb.st)
	}
}

// do0 deals one card (as deal) and returns its events.
func (tb *table) do0(c string) []game.Event {
	tb.t.Helper()
	who, code, _ := strings.Cut(c, " ")
	want := HandName(who)
	if who == "B" {
		want = "banker"
	}
	if eff, ok := Pending(tb.st).(game.DealCard); !ok || eff.Hand != want {
		tb.t.Fatalf("%s: pending %#v", c, Pending(tb.st))
	}
	return tb.do(game.CardDealt{Code: code})
}

// settle applies the settlement the core asks and returns it.
func (tb *table) settle() Settle {
	tb.t.Helper()
	eff, ok := Pending(tb.st).(Settle)
	if !ok {
		tb.t.Fatalf("pending %#v, want the settlement (state %s)", Pending(tb.st), tb.st)
	}
	var sum int64
	for _, m := range eff.Moves {
		sum += m.Amount
	}
	if sum != 0 || eff.NewBank != eff.Bank+eff.Moves[len(eff.Moves)-1].Amount || eff.CoupID != tb.st.Coup.ID {
		tb.t.Fatalf("settlement %+v: moves sum to %d", eff, sum)
	}
	tb.do(Settled{NewBank: eff.NewBank})
	return eff
}

// TestValuesRankNatural: Source: RULES.md OLD-VALUES (ace 11, figures 10),
// OLD-RANK (9, 19 best; then 8, 18...), OLD-NATURAL (a 9/19/8/18 anywhere:
// nobody draws; the banker's 9 or 19 takes all; a punter's 9 or 19 beats
// the banker's 8 or 18).
func TestValuesRankNatural(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cards         []string
		p2, p3, bankr int // points
		net2, net3    int64
	}{
		{"ace 11 + 7 = 18 beats 17", []string{"p2 AC", "p3 KD", "B 9C", "p3 5C", "p2 7D", "B 8D"}, 18, 15, 17, 100, -200},
		{"banker 19 takes a punter's 9", []string{"p2 4C", "p3 KD", "B 9C", "p3 2C", "p2 5D", "B QD"}, 9, 12, 19, -100, -200},
		{"punter 19 beats the banker's 18, 17 loses", []string{"p2 9C", "p3 7D", "B 8C", "p3 KC", "p2 JD", "B KD"}, 19, 17, 18, 100, -200},
		{"equal naturals go to the banker", []string{"p2 AC", "p3 2D", "B 8C", "p3 5C", "p2 7D", "B KD"}, 18, 7, 18, -100, -200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := staked(t, 100, 200)
			tb.deal(tc.cards...)
			cp := tb.st.Coup
			if tb.st.Phase != PhaseSettling || !cp.Natural {
				t.Fatalf("a natural ends the deal: %s", tb.st)
			}
			h2, h3 := tb.hand("p2"), tb.hand("p3")
			if h2.Points != tc.p2 || h3.Points != tc.p3 || cp.BankerPoints != tc.bankr || h2.Net != tc.net2 || h3.Net != tc.net3 {
				t.Fatalf("points %d %d banker %d, nets %d %d", h2.Points, h3.Points, cp.BankerPoints, h2.Net, h3.Net)
			}
			if h2.Rule != rules.RuleOLDNatural {
				t.Fatalf("rule %q", h2.Rule)
			}
			eff := tb.settle()
			if !reflect.DeepEqual(eff.Moves, []Move{{"p2", tc.net2}, {"p3", tc.net3}, {"p1", -tc.net2 - tc.net3}}) {
				t.Fatalf("moves %+v", eff.Moves)
			}
		})
	}
}

// TestDrawOrder: Source: RULES.md OLD-DRAW (less than 4 may draw one card:
// the punter on the banker's right first, then his left, the banker last).
func TestDrawOrder(t *testing.T) {
	tb := staked(t, 100, 200)
	// p2 12 (rank 2), p3 13 (rank 3), banker 20 (baccarat, rank 0): all may draw.
	tb.deal("p2 KC", "p3 KD", "B KH", "p3 3C", "p2 2D", "B QS")
	if tb.st.Phase != PhaseDecision || !tb.st.Deadline.Equal(tb.now.Add(15*time.Second)) {
		t.Fatalf("no decision: %s", tb.st)
	}
	// p3 sits on the banker's right (the last seat clockwise): he is first.
	tb.refuse(Decide{PlayerID: "p2", Draw: true}, ReasonNotYourTurn)
	tb.refuse(Decide{PlayerID: "p1", Draw: true}, ReasonNotYourTurn)
	tb.refuse(game.CardDealt{Code: "5C"}, ReasonWrongState)
	tb.do(Decide{PlayerID: "p3", Draw: true})
	tb.deal("p3 5C")
	tb.refuse(Decide{PlayerID: "p3", Draw: true}, ReasonNotYourTurn) // one card only
	tb.do(Decide{PlayerID: "p2", Draw: false})
	tb.refuse(Decide{PlayerID: "p2", Draw: true}, ReasonNotYourTurn)
	tb.do(Decide{PlayerID: "p1", Draw: true})
	tb.deal("B 7C")
	cp := tb.st.Coup
	// p3 18 (rank 8) and p2 12 (rank 2) against the banker's 27 (rank 7).
	if tb.st.Phase != PhaseSettling || cp.BankerPoints != 27 || tb.hand("p3").Net != 200 || tb.hand("p2").Net != -100 {
		t.Fatalf("result: %s banker %d, p3 %+v", tb.st, cp.BankerPoints, tb.hand("p3"))
	}
}

// TestDecisionTimeout: whose time runs out draws by default; with
// StandOnTimeout he stands (OLD-DRAW).
func TestDecisionTimeout(t *testing.T) {
	for _, stand := range []bool{false, true} {
		tb := staked(t, 100, 200)
		tb.st.Rules.StandOnTimeout = stand
		tb.deal("p2 KC", "p3 KD", "B 6H", "p3 6C", "p2 4D", "B 6S") // only p3 (16) may not; p2 14 may not; banker 12 may
		if who, _ := tb.st.decider(); who != "p1" {
			t.Fatalf("decider %q, want the banker p1 (state %s)", who, tb.st)
		}
		tb.now = tb.st.Deadline
		evs := tb.do(game.Tick{})
		to, ok := evs[0].Payload.(*eventsv1.TurnTimedOut)
		if !ok || to.GetPlayerId() != "p1" || to.GetAction() != map[bool]string{false: "draw", true: "stand"}[stand] {
			t.Fatalf("stand on timeout %v: events %v", stand, evs)
		}
		if _, drawing := Pending(tb.st).(game.DealCard); drawing == stand {
			t.Fatalf("stand on timeout %v: pending %#v", stand, Pending(tb.st))
		}
	}
}

// TestThreeWayTie reproduces 002's worked example: the banker and both
// punters make 7; all the stakes, the banker's double included, are
// pooled and split in three. Source: RULES.md OLD-SETTLE.
func TestThreeWayTie(t *testing.T) {
	tb := staked(t, 100, 200)
	tb.deal("p2 3C", "p3 2D", "B KH", "p3 5C", "p2 4D")
	evs := tb.do0("B 7S")
	cp := tb.st.Coup
	if tb.st.Phase != PhaseSettling || !cp.Split || cp.Natural {
		t.Fatalf("three sevens: %s", tb.st)
	}
	// Each punter tied the banker: his hand is a stand-off, though his
	// share of the pool is more than his stake (failure 11 of the
	// simulation wrote both hands won).
	standOff := eventsv1.Outcome_OUTCOME_STAND_OFF
	if got := handOutcomes(evs); !reflect.DeepEqual(got, []eventsv1.Outcome{standOff, standOff}) {
		t.Fatalf("the hands' outcomes %v, want two stand-offs (events %v)", got, evs)
	}
	// The pool: 100 + 200 + 2*100 + 2*200 = 900, 300 to each of the three.
	eff := tb.settle()
	want := []Move{{"p2", 300 - 100}, {"p3", 300 - 200}, {"p1", 300 - 600}}
	if !reflect.DeepEqual(eff.Moves, want) || !eff.Split || eff.NewBank != 100000-300 {
		t.Fatalf("settlement %+v, want moves %+v", eff, want)
	}
	if tb.st.Bank != 99700 || tb.st.LastCoup.Outcome != rules.OutcomeBankLoses {
		t.Fatalf("after: %s", tb.st)
	}
}

// TestOneTieGoesToBanker: Source: RULES.md OLD-SETTLE (a tie goes to the
// banker; no split with one tied punter).
func TestOneTieGoesToBanker(t *testing.T) {
	tb := staked(t, 100, 200)
	tb.deal("p2 3C", "p3 2D", "B KH", "p3 3C", "p2 4D")
	evs := tb.do0("B 7S")
	eff := tb.settle()
	if want := []Move{{"p2", -100}, {"p3", -200}, {"p1", 300}}; !reflect.DeepEqual(eff.Moves, want) || eff.Split {
		t.Fatalf("settlement %+v", eff)
	}
	// p2's 7 ties the banker's 7 and p3's 5 loses: the bank wins both.
	wins := eventsv1.Outcome_OUTCOME_BANK_WINS
	if got := handOutcomes(evs); !reflect.DeepEqual(got, []eventsv1.Outcome{wins, wins}) {
		t.Fatalf("the hands' outcomes %v, want the bank winning both", got)
	}
}

// handOutcomes is the hands' outcomes of the coup_resulted among evs.
func handOutcomes(evs []game.Event) []eventsv1.Outcome {
	var out []eventsv1.Outcome
	for _, e := range evs {
		if r, ok := e.Payload.(*eventsv1.CoupResulted); ok {
			for _, h := range r.GetHands() {
				out = append(out, h.GetOutcome())
			}
		}
	}
	return out
}

// TestBaccarat: Source: RULES.md OLD-BACCARAT (a punter showing baccarat
// takes the bank for the next coup, after the banker settles; several:
// the first in draw order; the banker's own baccarat changes nothing).
func TestBaccarat(t *testing.T) {
	t.Run("punter takes the bank", func(t *testing.T) {
		tb := staked(t, 100, 200)
		// p2 20 and p3 20: both baccarat; p3, on the banker's right, is first.
		tb.deal("p2 KC", "p3 QD", "B 5H", "p3 JC", "p2 QC", "B 7S")
		tb.do(Decide{PlayerID: "p3", Draw: false})
		tb.do(Decide{PlayerID: "p2", Draw: false})
		tb.do(Decide{PlayerID: "p1", Draw: false})
		if tb.st.Coup.NextBanker != "p3" {
			t.Fatalf("next banker %q", tb.st.Coup.NextBanker)
		}
		oldHold := tb.st.BankHoldID
		tb.settle()
		if tb.st.Phase != PhaseOffering || tb.st.OfferedTo != "p3" || tb.st.BankerID != "p1" {
			t.Fatalf("after the settlement: %s", tb.st)
		}
		tb.refuse(Bid{PlayerID: "p2", Amount: 5000}, ReasonNotYourTurn)
		tb.refuse(Stake{PlayerID: "p2", Amount: 100}, ReasonWrongState)
		tb.do(Bid{PlayerID: "p3", Amount: 5000})
		if tb.st.BankerID != "p3" || tb.st.Bank != 5000 || tb.st.Phase != PhaseStaking || !reflect.DeepEqual(tb.st.PendingVoids, []string{oldHold}) {
			t.Fatalf("p3 took the bank: %s", tb.st)
		}
	})
	t.Run("declined or timed out", func(t *testing.T) {
		tb := staked(t, 100, 200)
		tb.deal("p2 KC", "p3 QD", "B 5H", "p3 5C", "p2 QC", "B 7S") // p2 baccarat
		tb.do(Decide{PlayerID: "p2", Draw: false})
		tb.do(Decide{PlayerID: "p1", Draw: false})
		tb.settle()
		if tb.st.OfferedTo != "p2" {
			t.Fatalf("offered to %q", tb.st.OfferedTo)
		}
		tb.now = tb.st.Deadline
		tb.do(game.Tick{})
		if tb.st.BankerID != "p1" || tb.st.Phase != PhaseStaking || len(tb.st.PendingVoids) != 0 {
			t.Fatalf("the banker keeps it: %s", tb.st)
		}
	})
	t.Run("banker's baccarat", func(t *testing.T) {
		tb := staked(t, 100, 200)
		tb.deal("p2 5C", "p3 5D", "B KH", "p3 KC", "p2 QC", "B QS")
		tb.do(Decide{PlayerID: "p1", Draw: false})
		tb.settle()
		if tb.st.BankerID != "p1" || tb.st.Phase != PhaseStaking {
			t.Fatalf("the banker keeps his bank: %s", tb.st)
		}
	})
}

// TestVoidAndClose: a void returns every stake, the bank stays; a close
// between coups returns the bank.
func TestVoidAndClose(t *testing.T) {
	tb := staked(t, 100, 200)
	tb.deal("p2 KC", "p3 KD")
	holds := []string{tb.st.Coup.Hands[0].HoldID, tb.st.Coup.Hands[1].HoldID}
	tb.refuse(Close{}, ReasonWrongState)
	tb.refuse(Void{CoupID: "other"}, ReasonCoupNotInPlay)
	tb.do(Void{CoupID: tb.st.Coup.ID, Reason: "misdeal"})
	if !reflect.DeepEqual(tb.st.PendingVoids, holds) || tb.st.Phase != PhaseStaking || tb.st.Bank != 100000 {
		t.Fatalf("after the void: %s", tb.st)
	}
	tb.drain()
	bank := tb.st.BankHoldID
	tb.do(Close{Reason: "end"})
	if !reflect.DeepEqual(tb.st.PendingVoids, []string{bank}) || tb.st.Phase != PhaseClosed || Pending(tb.st) == nil {
		t.Fatalf("after the close: %s", tb.st)
	}
	tb.refuse(Join{PlayerID: "p9"}, ReasonTableClosed)
}
