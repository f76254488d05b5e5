package odds

import (
	"errors"
	"math/big"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

// sumOutcomes is the sum of the nine (right, left) counts.
func sumOutcomes(o BanqueOdds) *big.Int {
	n := new(big.Int)
	for r := range o.Outcomes {
		for l := range o.Outcomes[r] {
			n.Add(n, o.Outcomes[r][l])
		}
	}
	return n
}

// TestBanqueThreeDecks pins the exact figures of a full 3-deck shoe
// (BQ-DECKS) under the default strategy and checks that the outcome
// probabilities sum to exactly 1 and every bet's counts partition the
// deals.
func TestBanqueThreeDecks(t *testing.T) {
	o, err := Banque(Decks(3), BanqueStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	// falling(156, 9)
	if got := o.Deals.String(); got != "43254194249762496000" {
		t.Errorf("deals %s", got)
	}
	sum := new(big.Rat)
	for r := range o.Outcomes {
		for l := range o.Outcomes[r] {
			sum.Add(sum, o.Prob(o.Outcomes[r][l]))
		}
	}
	if sum.Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("probabilities sum to %v", sum)
	}
	for _, b := range o.Bets {
		s := new(big.Int).Add(b.Win, b.Lose)
		if s.Add(s, b.Push).Cmp(o.Deals) != 0 {
			t.Errorf("%s: win+lose+push = %v, deals %v", b.Bet, s, o.Deals)
		}
	}
	want := map[string]string{
		"right":  "-94353954/7567374815",
		"left":   "23773577146679/6257840603264250",
		"cheval": "5519130908363/6257840603264250",
	}
	for _, b := range o.Bets {
		t.Logf("%s: %v (%s)", b.Bet, b.EV, b.EV.FloatString(8))
		if w := want[b.Bet]; w != "" && b.EV.String() != w {
			t.Errorf("%s EV %v, want %s", b.Bet, b.EV, w)
		}
	}
}

// TestBanqueRightIsPuntoBanco: with the banker following the right table,
// the right table against the banker is a punto banco coup (PB-TABLEAU:
// draw on 5, the banker's tableau against that table's third card); the
// left hand's cards are unseen cards taken from the shoe, which do not
// change the probabilities. So the right table's probabilities must equal
// PuntoBanco's exactly, and with the banker following the left, the left
// table's.
func TestBanqueRightIsPuntoBanco(t *testing.T) {
	for _, s := range []Shoe{Decks(1), Decks(3), InfiniteShoe()} {
		pb, err := PuntoBanco(s, rules.DefaultPuntoBancoRules())
		if err != nil {
			t.Fatal(err)
		}
		for _, follow := range []rules.Table{rules.TableRight, rules.TableLeft} {
			o, err := Banque(s, BanqueStrategy{Follow: follow})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				out rules.Outcome
				pb  *big.Int
			}{{rules.OutcomeBankWins, pb.BankWins}, {rules.OutcomeBankLoses, pb.PlayerWins}, {rules.OutcomeStandOff, pb.Ties}} {
				if got, want := o.Prob(o.Table(follow, c.out)), pb.Prob(c.pb); got.Cmp(want) != 0 {
					t.Errorf("%v follow %v: %v probability %v, punto banco %v", shoeName(s), follow, c.out, got, want)
				}
			}
		}
	}
}

// shoeName reports a shoe's size in decks for messages.
func shoeName(s Shoe) string {
	if s.Infinite {
		return "infinite"
	}
	return new(big.Rat).SetFrac64(int64(s.Cards()), rules.DeckSize).RatString() + " decks"
}

// TestBanqueFollowSymmetry: following the left table is the mirror image
// of following the right (the deal order does not change the odds), so
// the outcome table is transposed.
func TestBanqueFollowSymmetry(t *testing.T) {
	for _, s := range []Shoe{Decks(2), InfiniteShoe()} {
		r, err := Banque(s, BanqueStrategy{})
		if err != nil {
			t.Fatal(err)
		}
		l, err := Banque(s, BanqueStrategy{Follow: rules.TableLeft})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				if r.Outcomes[i][j].Cmp(l.Outcomes[j][i]) != 0 {
					t.Errorf("%s: [%d][%d] %v, mirrored %v", shoeName(s), i, j, r.Outcomes[i][j], l.Outcomes[j][i])
				}
			}
		}
		if sumOutcomes(r).Cmp(r.Deals) != 0 || sumOutcomes(l).Cmp(l.Deals) != 0 {
			t.Errorf("%s: outcomes do not sum to the deals", shoeName(s))
		}
	}
}

// TestBanqueProbabilitySums checks sum = 1 exactly over several shoes,
// including the largest one accepted (no overflow).
func TestBanqueProbabilitySums(t *testing.T) {
	for _, s := range []Shoe{Decks(1), Decks(8), Decks(20), InfiniteShoe(), {Ranks: [13]int{9: 40}}} {
		o, err := Banque(s, BanqueStrategy{StandOn5: true})
		if err != nil {
			t.Fatal(err)
		}
		if sumOutcomes(o).Cmp(o.Deals) != 0 {
			t.Errorf("%s: outcomes %v, deals %v", shoeName(s), sumOutcomes(o), o.Deals)
		}
		want := new(big.Int).Set(bigFill(newDeck(s), banqueCards)[0])
		if o.Deals.Cmp(want) != 0 {
			t.Errorf("%s: deals %v, want %v", shoeName(s), o.Deals, want)
		}
	}
}

func TestBanqueErrors(t *testing.T) {
	for _, s := range []Shoe{{}, {Ranks: [13]int{8}}, Decks(21), {Ranks: [13]int{-1, 20}}} {
		if _, err := Banque(s, BanqueStrategy{}); !errors.Is(err, ErrInvalidShoe) {
			t.Errorf("%v: %v, want ErrInvalidShoe", s, err)
		}
	}
	for _, f := range []rules.Table{rules.TableBoth, 7} {
		if _, err := Banque(Decks(3), BanqueStrategy{Follow: f}); !errors.Is(err, ErrInvalidStrategy) {
			t.Errorf("follow %v: %v, want ErrInvalidStrategy", f, err)
		}
	}
}

func BenchmarkBanqueThreeDecks(b *testing.B) {
	for b.Loop() {
		if _, err := Banque(Decks(3), BanqueStrategy{}); err != nil {
			b.Fatal(err)
		}
	}
}
