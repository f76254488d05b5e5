package odds

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

// TestPBTableauEightDecks reproduces the exact counts of a full 8-deck
// punto banco shoe (PB-TABLEAU, PB-DECKS).
func TestPBTableauEightDecks(t *testing.T) {
	o, err := PuntoBanco(Decks(8), rules.DefaultPuntoBancoRules())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		got  *big.Int
		want string
	}{
		"bank wins":   {o.BankWins, "2292252566437888"},
		"player wins": {o.PlayerWins, "2230518282592256"},
		"ties":        {o.Ties, "475627426473216"},
		"deals":       {o.Deals, "4998398275503360"},
	}
	for name, w := range want {
		if w.got.String() != w.want {
			t.Errorf("%s = %v, want %s", name, w.got, w.want)
		}
	}
	sum := new(big.Int).Add(o.BankWins, o.PlayerWins)
	if sum.Add(sum, o.Ties).Cmp(o.Deals) != 0 {
		t.Errorf("outcomes sum to %v, deals %v", sum, o.Deals)
	}
	// Published 8-deck house edges: bank 1.0579%, player 1.2351%, tie 14.3596%.
	edges := map[string]float64{"bank": 0.010579, "player": 0.012351, "tie": 0.143596}
	for _, b := range o.Bets {
		if want, ok := edges[b.Bet]; ok {
			got, _ := b.HouseEdge().Float64()
			if math.Abs(got-want) > 5e-7 {
				t.Errorf("%s house edge %.7f, want %.6f", b.Bet, got, want)
			}
		}
	}
}

// TestPBBetsSixDecks checks the published 6-deck figures and that every
// bet's counts partition the deals (PB-BETS).
func TestPBBetsSixDecks(t *testing.T) {
	o, err := PuntoBanco(Decks(6), rules.DefaultPuntoBancoRules())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range o.Bets {
		s := new(big.Int).Add(b.Win, b.Lose)
		if s.Add(s, b.Push).Cmp(o.Deals) != 0 {
			t.Errorf("%s: win+lose+push = %v, deals %v", b.Bet, s, o.Deals)
		}
	}
	// Published 6-deck: bank edge 1.0558%, player 1.2374%.
	if got, _ := o.Bets[0].HouseEdge().Float64(); math.Abs(got-0.010558) > 5e-6 {
		t.Errorf("bank edge %v", got)
	}
	if got, _ := o.Bets[1].HouseEdge().Float64(); math.Abs(got-0.012374) > 5e-6 {
		t.Errorf("player edge %v", got)
	}
}

// TestPBInfiniteShoe checks the infinite-deck model: 13^6 equally likely
// ordered rank deals.
func TestPBInfiniteShoe(t *testing.T) {
	o, err := PuntoBanco(InfiniteShoe(), rules.DefaultPuntoBancoRules())
	if err != nil {
		t.Fatal(err)
	}
	if o.Deals.Int64() != 4826809 {
		t.Fatalf("deals %v, want 13^6", o.Deals)
	}
	// The same figures as the rules engine's own infinite-shoe walk
	// (rules.TestCoupPuntoBancoOdds).
	for _, c := range []struct {
		count *big.Int
		want  float64
	}{{o.BankWins, 0.458428}, {o.PlayerWins, 0.446147}, {o.Ties, 0.095426}} {
		if p, _ := o.Prob(c.count).Float64(); math.Abs(p-c.want) > 1e-6 {
			t.Errorf("probability %v, want %v", p, c.want)
		}
	}
}

func TestShoeErrors(t *testing.T) {
	bad := []Shoe{
		{},
		{Ranks: [13]int{-1, 10, 10}},
		{Ranks: [13]int{5}},
		Decks(21),
		{Infinite: true},
	}
	for _, s := range bad {
		if _, err := PuntoBanco(s, rules.DefaultPuntoBancoRules()); !errors.Is(err, ErrInvalidShoe) {
			t.Errorf("%v: %v, want ErrInvalidShoe", s, err)
		}
	}
	for _, text := range []string{"", "A", "A=x", "Z=3", "A=1,A=2", "A=-1", "A=3"} {
		if _, err := ParseShoe(text); !errors.Is(err, ErrInvalidShoe) {
			t.Errorf("ParseShoe(%q): %v", text, err)
		}
	}
	s, err := ParseShoe(Decks(8).String())
	if err != nil || s != Decks(8) {
		t.Errorf("round trip: %v %v", s, err)
	}
	if s, err := ParseShoe("inf:" + Decks(1).String()[4:]); err != nil && s.Infinite {
		t.Errorf("inf: %v", err)
	}
}

func BenchmarkPuntoBancoEightDecks(b *testing.B) {
	pr := rules.DefaultPuntoBancoRules()
	for b.Loop() {
		if _, err := PuntoBanco(Decks(8), pr); err != nil {
			b.Fatal(err)
		}
	}
}
