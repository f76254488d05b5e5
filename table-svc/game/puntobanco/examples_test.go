package puntobanco

import (
	"errors"
	"fmt"
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

func newTable(t *testing.T, r Rules) *table {
	t.Helper()
	st, err := New(r, "shoe-1")
	if err != nil {
		t.Fatal(err)
	}
	return &table{t: t, st: st, now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
}

// do applies cmd, which must be accepted, and returns its events.
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

// bet places a bet that already has its hold.
func (tb *table) bet(spot Spot, amount int64) {
	tb.t.Helper()
	tb.do(PlaceBet{PlayerID: "p1", Spot: spot, Amount: amount, HoldID: fmt.Sprintf("h%03d", tb.ids)})
}

// closeBetting ticks at the end of the betting window.
func (tb *table) closeBetting() {
	tb.t.Helper()
	tb.now = tb.st.Deadline
	tb.do(game.Tick{})
	if tb.st.Phase != PhaseDealing {
		tb.t.Fatalf("the betting did not close: %s", tb.st)
	}
}

// deal feeds the cards the core asks for, checking that it asks them for
// the hands given ("P" or "B" before each code, e.g. "P9C").
func (tb *table) deal(cards ...string) {
	tb.t.Helper()
	for i, c := range cards {
		eff, ok := Pending(tb.st).(game.DealCard)
		want := map[byte]string{'P': "player", 'B': "banker"}[c[0]]
		if !ok || eff.Hand != want {
			tb.t.Fatalf("card %d: pending %#v, want a card to the %s", i+1, Pending(tb.st), want)
		}
		tb.do(game.CardDealt{Code: c[1:]})
	}
}

// TestNewShoeBeforeTheNextCoupsCards is the regression test of a bug the
// model test found (seed 142, step 100 of TestModel before the fix): when
// the new shoe could not be opened during the pause after the cut card's
// coup (the shoe service down), the pause's Tick reopened the betting, the
// next coup's betting closed, and Pending asked its cards (DealCard came
// before NewShoe) from the shoe whose cut card had come out. Now the
// betting opens only with the new shoe.
func TestNewShoeBeforeTheNextCoupsCards(t *testing.T) {
	tb := newTable(t, baseRules())
	tb.bet(SpotBank, 100)
	tb.closeBetting()
	tb.do(game.CardDealt{Code: "9C"})
	tb.do(game.CardDealt{Code: "9D", CutCardOut: true})
	tb.deal("P8C", "B8D")
	tb.do(Settled{Bets: make([]Bet, 1)})
	// The roads show the shoe's last coup during the pause: no new shoe yet.
	if eff := Pending(tb.st); eff != nil || !tb.st.NewShoeDue || len(tb.st.Results) != 1 {
		t.Fatalf("after the cut card's coup: pending %#v, %s", eff, tb.st)
	}
	tb.now = tb.st.Deadline
	tb.do(game.Tick{})
	if _, ok := Pending(tb.st).(game.NewShoe); !ok {
		t.Fatalf("after the pause: pending %#v", Pending(tb.st))
	}
	// The shoe service is down: the table stays in RESULT, no bet comes in.
	// Source: RULES.md SHOE-CUT-CARD (the cut card's coup is the shoe's
	// last: no coup is bet on that shoe any more)
	if tb.st.Phase != PhaseResult || !Deadline(tb.st).IsZero() {
		t.Fatalf("with the new shoe due after the pause: %s", tb.st)
	}
	if _, err := Apply(tb.st, game.Input{Now: tb.now, NewID: "x", Cmd: PlaceBet{PlayerID: "p", Spot: SpotPlayer, Amount: 100}}); err == nil {
		t.Fatal("a bet was taken before the new shoe opened")
	}
	evs := tb.do(game.ShoeOpened{ShoeID: "shoe-2", Number: 2})
	if len(evs) != 2 || tb.st.ShoeID != "shoe-2" || len(tb.st.Results) != 0 || tb.st.NewShoeDue || tb.st.Phase != PhaseBetting {
		t.Fatalf("after ShoeOpened: %d events, %s", len(evs), tb.st)
	}
	tb.bet(SpotPlayer, 100)
	tb.closeBetting()
	if eff, ok := Pending(tb.st).(game.DealCard); !ok || eff.RequestID != tb.st.Coup.ID+"/card/1" {
		t.Fatalf("then the coup's first card: pending %#v", Pending(tb.st))
	}
}

// TestTableau plays coups by the fixed tableau: the core asks exactly the
// cards PB-TABLEAU draws, then records the result.
func TestTableau(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cards   []string
		outcome rules.Outcome
		natural bool
	}{
		// Source: RULES.md PB-TABLEAU (the player draws on 5: no option)
		{"player draws on 5", []string{"P2C", "BKD", "P3H", "BKS", "P4C", "B2D"}, rules.OutcomeBankLoses, false},
		// Source: RULES.md PB-TABLEAU (the banker draws on 3 when he gave a 9)
		{"banker draws on 3 against a 9", []string{"P2C", "BKD", "PKH", "B3S", "P9C", "B5D"}, rules.OutcomeBankWins, false},
		// Source: RULES.md PB-TABLEAU (the banker draws on 5 when he gave a 4)
		{"banker draws on 5 against a 4", []string{"PAC", "B5D", "PQH", "BKS", "P4C", "B4D"}, rules.OutcomeBankWins, false},
		// Source: RULES.md CF-BANKER-DRAW (the banker stands on 3 against an 8)
		{"banker stands on 3 against an 8", []string{"PAC", "B3D", "PQH", "BKS", "P8C"}, rules.OutcomeBankLoses, false},
		// Source: RULES.md CF-BANKER-DRAW (after the player stood, the banker draws on 0-5)
		{"player stands on 6, banker draws on 5", []string{"P6C", "B5D", "PQH", "BKS", "B2D"}, rules.OutcomeBankWins, false},
		// Source: RULES.md CF-NATURAL-PLAYER (a natural ends the coup; equal naturals stand off)
		{"equal naturals", []string{"P4C", "B9D", "P4H", "B9S"}, rules.OutcomeStandOff, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(t, baseRules())
			tb.bet(SpotTie, 100)
			tb.closeBetting()
			tb.deal(tc.cards...)
			cp := tb.st.Coup
			if tb.st.Phase != PhaseSettling || !cp.Decided || cp.Outcome != tc.outcome || cp.Natural != tc.natural {
				t.Fatalf("after %v: phase %d, coup %+v; want outcome %v natural %v", tc.cards, tb.st.Phase, *cp, tc.outcome, tc.natural)
			}
			if eff, ok := Pending(tb.st).(Settle); !ok || eff.Coup.ID != cp.ID {
				t.Fatalf("pending %#v, want the settlement", Pending(tb.st))
			}
		})
	}
}

// TestBettingWindowEdge: a tick before the window's end changes nothing;
// at its end the betting closes with the bets counted.
func TestBettingWindowEdge(t *testing.T) {
	tb := newTable(t, baseRules())
	tb.bet(SpotBank, 100)
	tb.bet(SpotPlayer, 200)
	end := tb.st.Deadline
	if want := tb.now.Add(15 * time.Second); !end.Equal(want) || !Deadline(tb.st).Equal(want) {
		t.Fatalf("deadline %v, want %v", end, want)
	}
	tb.now = end.Add(-time.Millisecond)
	if evs := tb.do(game.Tick{}); len(evs) != 0 || tb.st.Phase != PhaseBetting {
		t.Fatalf("a tick 1ms early: %d events, %s", len(evs), tb.st)
	}
	tb.now = end
	evs := tb.do(game.Tick{})
	if len(evs) != 1 || tb.st.Phase != PhaseDealing || !Deadline(tb.st).IsZero() {
		t.Fatalf("the tick at the deadline: %d events, %s", len(evs), tb.st)
	}
	if bc, ok := evs[0].Payload.(*eventsv1.BettingClosed); !ok || bc.GetBetsCount() != 2 {
		t.Fatalf("event %v, want BettingClosed of 2 bets", evs[0].Payload)
	}
}

// TestMaxBets: a coup takes MaxBets bets; the next is refused, before any
// hold is asked.
func TestMaxBets(t *testing.T) {
	tb := newTable(t, baseRules())
	for range MaxBets {
		tb.bet(SpotTie, 100)
	}
	_, err := Apply(tb.st, game.Input{Now: tb.now, NewID: "x", Cmd: PlaceBet{PlayerID: "p2", Spot: SpotBank, Amount: 100}})
	var ge *game.Error
	if !errors.As(err, &ge) || ge.Code != game.ResourceExhausted || ge.Reason != ReasonTableFull {
		t.Fatalf("bet %d: %v, want RESOURCE_EXHAUSTED TABLE_FULL", MaxBets+1, err)
	}
}
