package odds

import (
	"math/big"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

func logEquilibrium(t *testing.T, e Equilibrium) {
	t.Helper()
	v, _ := e.Value.Float64()
	t.Logf("player draws on 5 with %v; value to the player %v (%.6f); tableau best response %v", e.PlayerDrawOn5, e.Value, v, e.TableauBestResponse)
	for _, c := range e.Banker {
		if c.Mixed() || (c.Draw.Sign() > 0) != (c.Tableau != rules.DecisionStand) || c.Tableau == rules.DecisionOption {
			t.Logf("  banker %d vs %d: draw %v (tableau %v)", c.Total, c.Third, c.Draw, c.Tableau)
		}
	}
}

// TestCFEquilibriumInfinite is the classic result (Kemeny and Snell): on
// an infinite deck, with the banker free at every cell, the player draws
// on 5 with probability 9/11.
func TestCFEquilibriumInfinite(t *testing.T) {
	hr := rules.DefaultHouseRules()
	hr.BancoFreePlay = true
	e, err := CheminEquilibrium(InfiniteShoe(), hr)
	if err != nil {
		t.Fatal(err)
	}
	logEquilibrium(t, e)
	if e.PlayerDrawOn5.Cmp(big.NewRat(9, 11)) != 0 {
		t.Errorf("player draws on 5 with %v, want 9/11", e.PlayerDrawOn5)
	}
	hr.BancoFreePlay = false
	e, err = CheminEquilibrium(InfiniteShoe(), hr)
	if err != nil {
		t.Fatal(err)
	}
	logEquilibrium(t, e)
}

func TestCFEquilibriumSixDecks(t *testing.T) {
	for _, free := range []bool{false, true} {
		hr := rules.DefaultHouseRules()
		hr.BancoFreePlay = free
		e, err := CheminEquilibrium(Decks(6), hr)
		if err != nil {
			t.Fatal(err)
		}
		logEquilibrium(t, e)
	}
}

func BenchmarkCheminEquilibriumSixDecks(b *testing.B) {
	hr := rules.DefaultHouseRules()
	for b.Loop() {
		if _, err := CheminEquilibrium(Decks(6), hr); err != nil {
			b.Fatal(err)
		}
	}
}
