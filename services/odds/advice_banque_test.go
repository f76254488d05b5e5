package odds

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chemmy/chemmy/services/rules"
)

// TestAdviseBanqueHandChecked: the banker on 6 (3C 3D) decides; the right
// table showed a natural 8 (4C 4D); the left stood on two cards, unseen;
// the shoe holds one 7. The unseen cards are {KS, 6H, 7S}: the left's pair
// stood, so it is K6 (6) or K7 (7), two orders each, equally likely (6+7 =
// 3 would have drawn); the other card is left in the shoe.
//
//	stand: left 6 ties, left 7 beats the bank        -> left: (0 - 1)/2 = -1/2
//	draw:  K6 leaves 7: 6+7 = 3 < 6; K7 leaves 6: 6+6 = 2 < 7 -> left: -1
//
// The right natural beats the bank (the banker's 6): a right stake loses
// for the bank whatever he does; an à cheval stake loses for the bank
// when he loses to both (the left 7 on a stand, always on a draw).
func TestAdviseBanqueHandChecked(t *testing.T) {
	c := rules.BanqueCoup{
		Right:  mustCards(t, "4C", "4D"),
		Left:   mustCards(t, "KS", "6H"),
		Banker: mustCards(t, "3C", "3D"),
	}
	remaining := shoeOf(mustCards(t, "7S"))
	for _, tc := range []struct {
		stakes      BanqueStakes
		stand, draw string
		best        rules.Decision
		follow      rules.Table
	}{
		{BanqueStakes{Left: 1}, "-1/2", "-1", rules.DecisionStand, rules.TableLeft},
		{BanqueStakes{Left: 1, Cheval: 1}, "-1", "-2", rules.DecisionStand, rules.TableLeft},
		{BanqueStakes{Right: 10, Left: 4, Cheval: 2}, "-13", "-16", rules.DecisionStand, rules.TableRight},
		{BanqueStakes{Right: 3, Left: 3}, "-9/2", "-6", rules.DecisionStand, rules.TableRight},
	} {
		a, err := AdviseBanque(remaining, c, tc.stakes)
		if err != nil {
			t.Fatal(err)
		}
		if a.Hand != "banker" || a.Rule != rules.RuleBQPlay || a.Follow != tc.follow {
			t.Errorf("%+v: hand %q rule %q follow %v", tc.stakes, a.Hand, a.Rule, a.Follow)
		}
		if a.Stand.RatString() != tc.stand || a.Draw.RatString() != tc.draw || a.Best != tc.best {
			t.Errorf("%+v: stand %v draw %v best %v, want %s %s %v", tc.stakes, a.Stand, a.Draw, a.Best, tc.stand, tc.draw, tc.best)
		}
	}
}

// TestAdviseBanqueErrors covers the error catalogue.
func TestAdviseBanqueErrors(t *testing.T) {
	decided := rules.BanqueCoup{Right: mustCards(t, "2C", "3D"), Left: mustCards(t, "KS", "6H"), Banker: mustCards(t, "9C", "KD")}
	atFive := rules.BanqueCoup{Right: mustCards(t, "2C", "3D"), Left: mustCards(t, "KS", "6H"), Banker: mustCards(t, "AC", "KD")}
	for _, tc := range []struct {
		name   string
		shoe   Shoe
		c      rules.BanqueCoup
		stakes BanqueStakes
		want   error
	}{
		{"no choice", Decks(3), decided, BanqueStakes{}, ErrNoChoice},
		{"illegal", Decks(3), rules.BanqueCoup{Right: mustCards(t, "2C")}, BanqueStakes{}, ErrNoChoice},
		{"bad hand", Decks(3), rules.BanqueCoup{Right: mustCards(t, "2C", "3D", "4C", "5C")}, BanqueStakes{}, ErrIllegalCoup},
		{"stakes", Decks(3), atFive, BanqueStakes{Right: -1}, ErrInvalidStakes},
		{"negative shoe", Shoe{Ranks: [13]int{-1}}, atFive, BanqueStakes{}, ErrInvalidShoe},
		{"short shoe", Shoe{}, atFive, BanqueStakes{}, ErrInvalidShoe},
		// An infinite shoe of fours (the unseen cards are not put back in
		// an infinite shoe): every banker pair would be a natural 8.
		{"no hand", Shoe{Ranks: [13]int{3: 1}, Infinite: true}, atFive, BanqueStakes{}, ErrIllegalCoup},
	} {
		_, err := AdviseBanque(tc.shoe, tc.c, tc.stakes)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// bruteAdvice conditions every deal of a small shoe, dealt through the
// rules engine, on what the decider sees at each decision, and computes
// each choice's EV with the rest of the coup played by the model written
// here from the rules engine (rules.BankerDecision, rules.SettleBanque),
// not from AdviseBanque's code.
type bruteAdvice struct {
	stakes BanqueStakes
	// per observation key: the node weight sum, and the weighted EVs.
	obs map[string]*bruteObs
}

type bruteObs struct {
	c          rules.BanqueCoup // a representative coup
	pool       Shoe             // its pool of undealt cards
	weight     *big.Rat
	stand, drw *big.Rat
}

// key is what the decider sees: who decides, the ranks of his own two
// cards, of every natural and every third card, and each hand's length.
func (b *bruteAdvice) key(c rules.BanqueCoup, step rules.BanqueStep) string {
	s := fmt.Sprintf("%v%v|", step.Kind, step.Hand)
	own := [3]bool{
		step.Kind == rules.StepPlayerChoice && step.Hand == rules.TableRight,
		step.Kind == rules.StepPlayerChoice && step.Hand == rules.TableLeft,
		step.Kind == rules.StepBankerChoice,
	}
	for h, cards := range [3][]rules.Card{c.Right, c.Left, c.Banker} {
		natural := h < 2 && rules.Total(cards[:2]) >= 8
		for i, card := range cards {
			if i >= 2 || own[h] || natural {
				s += fmt.Sprint(card.Rank, ",")
			} else {
				s += "?,"
			}
		}
		s += "|"
	}
	return s
}

// walk deals every coup from p: every choice before the evaluated one is
// branched with weight 1 (the model's posterior: the rules alone).
func (b *bruteAdvice) walk(t testing.TB, p *rankPool, c rules.BanqueCoup, w int64) {
	step, err := rules.NextStepBanque(c)
	if err != nil {
		t.Fatalf("engine: %v on %+v", err, c)
	}
	switch step.Kind {
	case rules.StepDealPlayer, rules.StepDealBanker:
		p.each(func(card rules.Card, wc int64) {
			n := c
			switch {
			case step.Kind == rules.StepDealBanker:
				n.Banker = with(c.Banker, card)
			case step.Hand == rules.TableRight:
				n.Right = with(c.Right, card)
			default:
				n.Left = with(c.Left, card)
			}
			b.walk(t, p, n, w*wc)
		})
	case rules.StepPlayerChoice, rules.StepBankerChoice:
		k := b.key(c, step)
		o := b.obs[k]
		if o == nil {
			o = &bruteObs{c: c, pool: Shoe{Ranks: p.counts}, weight: new(big.Rat), stand: new(big.Rat), drw: new(big.Rat)}
			b.obs[k] = o
		}
		wr := big.NewRat(w, 1)
		o.weight.Add(o.weight, wr)
		for _, draw := range []bool{false, true} {
			n := b.choose(t, p, c, step, draw, nil)
			ev := b.play(t, p, n, step)
			if draw {
				o.drw.Add(o.drw, ev.Mul(ev, wr))
			} else {
				o.stand.Add(o.stand, ev.Mul(ev, wr))
			}
		}
		// Go on to the later decisions with both choices taken.
		for _, draw := range []bool{false, true} {
			if !draw {
				b.walk(t, p, b.choose(t, p, c, step, false, nil), w)
				continue
			}
			p.each(func(card rules.Card, wc int64) {
				b.walk(t, p, b.choose(t, p, c, step, true, &card), w*wc)
			})
		}
	}
}

// choose returns c with the choice of step made: a stand, or a draw whose
// card is given (nil: not dealt yet, the coup is returned unchanged).
func (b *bruteAdvice) choose(t testing.TB, p *rankPool, c rules.BanqueCoup, step rules.BanqueStep, draw bool, card *rules.Card) rules.BanqueCoup {
	n := c
	switch {
	case !draw && step.Kind == rules.StepBankerChoice:
		n.BankerStood = true
	case !draw && step.Hand == rules.TableRight:
		n.RightStood = true
	case !draw:
		n.LeftStood = true
	case card == nil:
	case step.Kind == rules.StepBankerChoice:
		n.Banker = with(c.Banker, *card)
	case step.Hand == rules.TableRight:
		n.Right = with(c.Right, *card)
	default:
		n.Left = with(c.Left, *card)
	}
	return n
}

// play returns the decider's expected gain from coup c by the model: a
// pending draw of the decider (at), then the tables draw on 5 and the
// banker follows the richer table by the tableau.
func (b *bruteAdvice) play(t testing.TB, p *rankPool, c rules.BanqueCoup, at rules.BanqueStep) *big.Rat {
	step, err := rules.NextStepBanque(c)
	if err != nil {
		t.Fatalf("engine: %v on %+v", err, c)
	}
	dealTo := func(f func(card rules.Card) rules.BanqueCoup) *big.Rat {
		sum := new(big.Rat)
		n := p.n
		p.each(func(card rules.Card, wc int64) {
			ev := b.play(t, p, f(card), at)
			sum.Add(sum, ev.Mul(ev, big.NewRat(wc, int64(n))))
		})
		return sum
	}
	switch step.Kind {
	case rules.StepDealPlayer:
		return dealTo(func(card rules.Card) rules.BanqueCoup {
			n := c
			if step.Hand == rules.TableRight {
				n.Right = with(c.Right, card)
			} else {
				n.Left = with(c.Left, card)
			}
			return n
		})
	case rules.StepPlayerChoice, rules.StepBankerChoice:
		if step == at {
			// The decider drew (a stand was recorded by choose).
			return dealTo(func(card rules.Card) rules.BanqueCoup { return b.choose(t, p, c, step, true, &card) })
		}
		draw := true // a table on 5 draws
		if step.Kind == rules.StepBankerChoice {
			tables := [2][]rules.Card{c.Right, c.Left}
			f := 0
			if b.stakes.Left > b.stakes.Right {
				f = 1
			}
			if rules.Total(tables[f][:2]) >= 8 {
				f = 1 - f
			}
			against := tables[f]
			var third *rules.Card
			if len(against) == 3 {
				third = &against[2]
			}
			draw = rules.BankerDecision(rules.Total(c.Banker), third, rules.HouseRules{}) != rules.DecisionStand
		}
		if !draw {
			return b.play(t, p, b.choose(t, p, c, step, false, nil), at)
		}
		return dealTo(func(card rules.Card) rules.BanqueCoup { return b.choose(t, p, c, step, true, &card) })
	case rules.StepDone:
		if at.Kind == rules.StepPlayerChoice {
			o := step.Right
			if at.Hand == rules.TableLeft {
				o = step.Left
			}
			switch o {
			case rules.OutcomeBankWins:
				return big.NewRat(-1, 1)
			case rules.OutcomeBankLoses:
				return big.NewRat(1, 1)
			}
			return new(big.Rat)
		}
		var bets []rules.BanqueBet
		for _, bt := range []rules.BanqueBet{{On: rules.TableRight, Amount: b.stakes.Right}, {On: rules.TableLeft, Amount: b.stakes.Left}, {On: rules.TableBoth, Amount: b.stakes.Cheval}} {
			if bt.Amount > 0 {
				bets = append(bets, bt)
			}
		}
		s, err := rules.SettleBanque(b.stakes.Right+b.stakes.Left+b.stakes.Cheval, bets, step.Right, step.Left)
		if err != nil {
			t.Fatal(err)
		}
		return big.NewRat(s.BankerNet, 1)
	}
	t.Fatalf("unexpected step %+v", step)
	return nil
}

// TestAdviseBanqueBruteForce compares AdviseBanque with the conditioned
// engine walk at every decision reachable from small shoes.
func TestAdviseBanqueBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	shoes := []Shoe{
		shoeOf(mustCards(t, "AC", "AD", "5C", "5D", "5H", "6H", "7S", "KC", "KD", "9D")),
	}
	if !testing.Short() {
		shoes = append(shoes, randomSmallShoe(r, 10, 4))
	}
	stakes := []BanqueStakes{{Right: 3, Left: 5, Cheval: 2}, {Right: 4, Left: 4, Cheval: 1}, {Right: 7, Left: 1}}
	checked := map[string]int{}
	for i := range len(shoes) * len(stakes) {
		s, st := shoes[i/len(stakes)], stakes[i%len(stakes)]
		b := &bruteAdvice{stakes: st, obs: map[string]*bruteObs{}}
		b.walk(t, newRankPool(s), rules.BanqueCoup{}, 1)
		keys := slices.Sorted(maps.Keys(b.obs))
		for j, k := range keys {
			if len(keys) > 400 && j%(len(keys)/400) != 0 && !strings.HasPrefix(k, fmt.Sprint(rules.StepPlayerChoice)) {
				continue // a sample of the banker's decisions; every table's
			}
			o := b.obs[k]
			want := [2]*big.Rat{new(big.Rat).Quo(o.stand, o.weight), new(big.Rat).Quo(o.drw, o.weight)}
			seen := o.c
			remaining := o.pool
			a, err := AdviseBanque(remaining, seen, st)
			if errors.Is(err, ErrInvalidShoe) {
				continue // too few cards for the model's depth: the walk ran short
			}
			if err != nil {
				t.Fatalf("%s %s: %v", s, k, err)
			}
			checked[a.Hand]++
			if a.Stand.Cmp(want[0]) != 0 || a.Draw.Cmp(want[1]) != 0 {
				t.Errorf("%s %s %+v: stand %v draw %v, brute force %v %v", s, k, st, a.Stand, a.Draw, want[0], want[1])
			}
		}
	}
	t.Logf("decisions checked: %v", checked)
	for _, h := range []string{"right", "left", "banker"} {
		if checked[h] == 0 {
			t.Errorf("no %s decision checked", h)
		}
	}
}

// TestAdviseBanqueSpeed: a table's player on 5 (the deepest enumeration:
// two unseen pairs, three cards to come) in a 3-deck shoe.
func TestAdviseBanqueSpeed(t *testing.T) {
	c := rules.BanqueCoup{Right: mustCards(t, "2C", "3D"), Left: mustCards(t, "KS", "4H"), Banker: mustCards(t, "AC", "KD")}
	remaining, err := Decks(3).Remove(append(append(append([]rules.Card(nil), c.Right...), c.Left...), c.Banker...)...)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a, err := AdviseBanque(remaining, c, BanqueStakes{Right: 100, Left: 50})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	t.Logf("right on 5: draw %s stand %s in %v", a.Draw.FloatString(6), a.Stand.FloatString(6), el)
	if el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	for _, v := range []*big.Rat{a.Draw, a.Stand} {
		if v.Cmp(big.NewRat(-1, 1)) < 0 || v.Cmp(big.NewRat(1, 1)) > 0 {
			t.Errorf("EV %v out of -1..1", v)
		}
	}
}
