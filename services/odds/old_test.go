package odds

import (
	"errors"
	"math/big"
	"testing"
)

// TestOldTwoDecks pins the exact figures of the two-deck game (OLD-DECKS)
// under the default strategy and checks the sums.
func TestOldTwoDecks(t *testing.T) {
	o, err := Old(Decks(2), OldStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	// falling(104, 6)
	if got := o.Deals.String(); got != "1092514737600" {
		t.Errorf("deals %s", got)
	}
	sum := new(big.Rat).Add(o.Prob(o.PunterWins), o.Prob(o.BankerWins))
	if sum.Add(sum, o.Prob(o.Ties)).Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("probabilities sum to %v", sum)
	}
	// The default game is symmetric between the two hands (same drawing
	// rule, the banker's draw does not depend on the punter's card, a
	// natural stops both), so only the ties favour the banker.
	if o.PunterWins.Cmp(o.BankerWins) != 0 {
		t.Errorf("punter wins %v, banker wins %v", o.PunterWins, o.BankerWins)
	}
	if ev := new(big.Rat).SetFrac(new(big.Int).Neg(o.Ties), o.Deals); ev.Cmp(o.Bets[0].EV) != 0 {
		t.Errorf("EV %v, want -ties/deals %v", o.Bets[0].EV, ev)
	}
	if want := "-1668577151/17070542775"; o.Bets[0].EV.String() != want {
		t.Errorf("EV %v, want %s", o.Bets[0].EV, want)
	}
	if h := new(big.Rat).Mul(o.BankerPerUnitHeld, big.NewRat(-2, 1)); h.Cmp(o.Bets[0].EV) != 0 {
		t.Errorf("banker per unit held %v", o.BankerPerUnitHeld)
	}
	b := o.Bets[0]
	if s := new(big.Int).Add(b.Win, b.Lose); s.Add(s, b.Push).Cmp(o.Deals) != 0 {
		t.Errorf("win+lose+push %v", s)
	}
	t.Logf("punter EV %v (%s), ties %v, naturals %v, baccarat %v", b.EV, b.EV.FloatString(8), o.Ties, o.Naturals, o.PunterBaccarat)
}

func TestOldProbabilitySums(t *testing.T) {
	for _, s := range []Shoe{Decks(1), Decks(20), InfiniteShoe(), {Ranks: [13]int{0: 3, 12: 3}}} {
		for _, st := range oldStrategies {
			o, err := Old(s, st)
			if err != nil {
				t.Fatal(err)
			}
			n := new(big.Int).Add(o.PunterWins, o.BankerWins)
			if n.Add(n, o.Ties).Cmp(o.Deals) != 0 {
				t.Errorf("%s %v: outcomes %v, deals %v", shoeName(s), st, n, o.Deals)
			}
		}
	}
}

func TestOldErrors(t *testing.T) {
	for _, s := range []Shoe{{}, {Ranks: [13]int{5}}, Decks(21)} {
		if _, err := Old(s, OldStrategy{}); !errors.Is(err, ErrInvalidShoe) {
			t.Errorf("%v: %v, want ErrInvalidShoe", s, err)
		}
	}
}

func BenchmarkOldTwoDecks(b *testing.B) {
	for b.Loop() {
		if _, err := Old(Decks(2), OldStrategy{}); err != nil {
			b.Fatal(err)
		}
	}
}
