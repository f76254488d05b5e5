package odds

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

func mustCards(t testing.TB, ss ...string) []rules.Card {
	t.Helper()
	out := make([]rules.Card, len(ss))
	for i, s := range ss {
		c, err := rules.ParseCard(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = c
	}
	return out
}

// TestCFAdviceEquilibriumIndifference: on an infinite shoe, against the
// equilibrium, the player on 5 and the banker at his mixed cell (6 when
// the player stood) are indifferent, so Advise must give equal EVs.
func TestCFAdviceEquilibriumIndifference(t *testing.T) {
	hr := rules.DefaultHouseRules()
	hr.BancoFreePlay = true
	hr.CommissionBP = 0
	e, err := CheminEquilibrium(InfiniteShoe(), hr)
	if err != nil {
		t.Fatal(err)
	}
	st := e.Strategy()
	player := rules.Coup{Player: mustCards(t, "2C", "3D"), Banker: mustCards(t, "KC", "6D"), Banco: true}
	a, err := Advise(InfiniteShoe(), player, hr, st)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hand != "player" || a.Rule != rules.RuleBancoFreedom || a.Draw.Cmp(a.Stand) != 0 {
		t.Errorf("player on 5: %+v (draw %v, stand %v), want indifferent", a, a.Draw, a.Stand)
	}
	banker := player
	banker.PlayerStood = true
	a, err = Advise(InfiniteShoe(), banker, hr, st)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hand != "banker" || a.Draw.Cmp(a.Stand) != 0 {
		t.Errorf("banker 6 vs stood: draw %v, stand %v, want equal", a.Draw, a.Stand)
	}
}

// bruteValue is an independent float64 recursion over a value-count shoe.
type bruteShoe struct {
	c [10]int
	n int
}

func (s *bruteShoe) each(f func(v int, p float64)) {
	n := s.n
	for v := 0; v < 10; v++ {
		if s.c[v] == 0 {
			continue
		}
		p := float64(s.c[v]) / float64(n)
		s.c[v]--
		s.n--
		f(v, p)
		s.c[v]++
		s.n++
	}
}

// TestCFAdviceBrute compares Advise with a float64 walk on a small shoe,
// for the player on 5 and for the banker at 3 against a 9.
func TestCFAdviceBrute(t *testing.T) {
	hr := rules.DefaultHouseRules()
	hr.CommissionBP = 0
	remaining, _ := ParseShoe("A=2,2=1,3=2,4=2,5=1,6=2,7=1,8=1,9=2,T=3,K=2")
	coup := rules.Coup{Player: mustCards(t, "2C", "3D"), Banker: mustCards(t, "AC", "AD")}
	a, err := Advise(remaining, coup, hr, Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	// Brute force: the banker's hidden 1+1 are back in the unseen shoe.
	var u bruteShoe
	d := newDeck(remaining.add(coup.Banker...))
	for v := range u.c {
		u.c[v] = int(d.c[v])
		u.n += int(d.c[v])
	}
	for choice := 0; choice < 2; choice++ {
		var ev, norm float64
		u.each(func(b1 int, p1 float64) {
			u.each(func(b2 int, p2 float64) {
				tb := (b1 + b2) % 10
				if tb >= 8 {
					return
				}
				p := p1 * p2
				norm += p
				banker := func(fp int, ctx int, q float64) {
					if bankerTableau(tb, ctx, hr) == rules.DecisionStand {
						ev += q * float64(signOf(fp, tb))
						return
					}
					u.each(func(b3 int, p3 float64) { ev += q * p3 * float64(signOf(fp, (tb+b3)%10)) })
				}
				if choice == 0 {
					banker(5, stood, p)
					return
				}
				u.each(func(v int, pv float64) { banker((5+v)%10, v, p*pv) })
			})
		})
		got := a.Stand
		if choice == 1 {
			got = a.Draw
		}
		g, _ := got.Float64()
		if math.Abs(g-ev/norm) > 1e-12 {
			t.Errorf("choice %d: Advise %v, brute %v", choice, g, ev/norm)
		}
	}
	t.Logf("player on 5: draw %v stand %v best %v", a.Draw.FloatString(6), a.Stand.FloatString(6), a.Best)

	// The banker on 3 after a 9 (banker_option_3_vs_9).
	coup = rules.Coup{Player: mustCards(t, "2C", "3D", "9S"), Banker: mustCards(t, "AC", "2D")}
	b, err := Advise(remaining.add(), coup, hr, Strategy{PlayerDraw: [8]*big.Rat{5: big.NewRat(1, 2)}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Hand != "banker" || b.Rule != rules.RuleBankerDraw {
		t.Errorf("banker advice %+v", b)
	}
	t.Logf("banker 3 vs 9: draw %v stand %v best %v", b.Draw.FloatString(6), b.Stand.FloatString(6), b.Best)
}

func TestAdviseErrors(t *testing.T) {
	hr := rules.DefaultHouseRules()
	six := Decks(6)
	tests := []struct {
		name string
		coup rules.Coup
		shoe Shoe
		st   Strategy
		want error
	}{
		{"deal", rules.Coup{}, six, Strategy{}, ErrNoChoice},
		{"done", rules.Coup{Player: mustCards(t, "9C", "KD"), Banker: mustCards(t, "2C", "3D")}, six, Strategy{}, ErrNoChoice},
		{"illegal", rules.Coup{Player: mustCards(t, "9C", "KD", "2C"), Banker: mustCards(t, "2C", "3D")}, six, Strategy{}, rules.ErrIllegalState},
		{"shoe", rules.Coup{Player: mustCards(t, "2C", "3D"), Banker: mustCards(t, "AC", "AD")}, Shoe{Ranks: [13]int{-1}}, Strategy{}, ErrInvalidShoe},
		{"strategy", rules.Coup{Player: mustCards(t, "2C", "3D"), Banker: mustCards(t, "AC", "AD")}, six, Strategy{PlayerDraw: [8]*big.Rat{5: big.NewRat(3, 2)}}, ErrInvalidStrategy},
	}
	for _, tt := range tests {
		if _, err := Advise(tt.shoe, tt.coup, hr, tt.st); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// FuzzAdvise feeds random coups and shoes: an error or an advice, never a
// panic, and EVs within -1..1.
func FuzzAdvise(f *testing.F) {
	f.Add([]byte{1, 2, 10, 10}, []byte{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, uint8(0))
	f.Add([]byte{1, 2, 9, 1, 2}, []byte{1, 0, 3, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, hands, shoe []byte, flags uint8) {
		var c rules.Coup
		for i, b := range hands {
			card := rules.Card{Rank: rules.Rank(b % 15), Suit: rules.Suit(b / 15 % 5)}
			if i%2 == 0 && len(c.Player) < 4 || len(c.Banker) >= 4 {
				c.Player = append(c.Player, card)
			} else {
				c.Banker = append(c.Banker, card)
			}
		}
		c.PlayerStood, c.BankerStood, c.Banco = flags&1 != 0, flags&2 != 0, flags&4 != 0
		hr := rules.DefaultHouseRules()
		hr.BancoFreePlay = flags&8 != 0
		var s Shoe
		for i := 0; i < len(shoe) && i < 13; i++ {
			s.Ranks[i] = int(int8(shoe[i]))
		}
		s.Infinite = flags&16 != 0
		a, err := Advise(s, c, hr, Strategy{})
		if err != nil {
			return
		}
		for _, v := range []*big.Rat{a.Draw, a.Stand} {
			if v.Cmp(big.NewRat(-1, 1)) < 0 || v.Cmp(big.NewRat(1, 1)) > 0 {
				t.Fatalf("EV %v out of range for %+v", v, c)
			}
		}
	})
}

func BenchmarkAdvisePlayerSixDecks(b *testing.B) {
	coup := rules.Coup{Player: mustCards(b, "2C", "3D"), Banker: mustCards(b, "AC", "AD")}
	shoe, _ := Decks(6).Remove(append(coup.Player, coup.Banker...)...)
	for b.Loop() {
		if _, err := Advise(shoe, coup, rules.DefaultHouseRules(), Strategy{}); err != nil {
			b.Fatal(err)
		}
	}
}
