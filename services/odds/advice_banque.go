package odds

import (
	"fmt"
	"math/big"

	"github.com/chemmy/chemmy/services/rules"
)

// BanqueAdviceModel states the information and play model of AdviseBanque.
const BanqueAdviceModel = `baccarat banque (BQ-*): the hand that decides is the one rules.NextStepBanque waits for ` +
	`(a table's player on 5, or the banker); he sees his own two cards, every third card (face up), ` +
	`the naturals (shown with their cards once every hand has two cards), and that the banker has no natural (the coup went on); ` +
	`every other hand's first two cards are unseen and drawn, with the cards to come, from the cards still in the shoe plus those unseen cards, ` +
	`constrained by what the hand's play showed: no natural; a table that drew had 0-5, a table that stood had 5-7 ` +
	`(the rules alone, the option on 5 either way), a table yet to play had 0-7, the banker 0-7. ` +
	`The rest of the coup: a table yet to play draws on 0-5 and stands on 6-7 (CF-PLAYER-DRAW, draw on 5 the time-out default); ` +
	`the banker plays the punto banco tableau (CF-BANKER-DRAW with the option cells drawn, PB-TABLEAU) against the followed table's third card or "stood": ` +
	`the table carrying more money (the right one on equal money), the other one when it has a natural (BQ-PLAY; odds.BanqueModel). ` +
	`EV: for the banker, the bank's expected gain in money over the right, left and à cheval stakes (BQ-CHEVAL: a cheval bet loses only if the bank beats both tables, ` +
	`wins only if the bank loses to both), even money, stand-offs returned, no commission; ` +
	`for a table's player, per unit of a bet on his table: +1 the table wins, -1 it loses, 0 a stand-off.`

// BanqueStakes is the money against the bank in a banque coup, in the
// table's money units: the sums of the bets on the right table, on the
// left table, and à cheval (BQ-BETS, BQ-CHEVAL). Each must be >= 0.
type BanqueStakes struct {
	Right, Left, Cheval int64
}

// follow is the table the banker plays against: the one carrying more
// money, the right one on equal money (BQ-PLAY). An à cheval bet is on both
// and does not tip the balance.
func (s BanqueStakes) follow() rules.Table {
	if s.Left > s.Right {
		return rules.TableLeft
	}
	return rules.TableRight
}

// BanqueAdvice is the croupier's advice at a decision of a banque coup.
type BanqueAdvice struct {
	// Hand is the hand that decides: "right", "left" or "banker".
	Hand string
	// Rule is the rule that gives the choice (BQ-PLAY).
	Rule string
	// Follow is the table the banker plays against in the model (by the
	// stakes; the other table when that one has a natural).
	Follow rules.Table
	// Draw and Stand are the expected gains of each choice, exact: for the
	// banker, money units over the stakes; for a table's player, per unit
	// of a bet on his table.
	Draw, Stand *big.Rat
	// Best is the choice with the larger EV; on equal EVs DecisionDraw.
	Best rules.Decision
}

// AdviseBanque returns the EV of drawing and of standing for the hand that
// decides next in banque coup c (a table's player on 5, StepPlayerChoice,
// or the banker, StepBankerChoice), by exact enumeration under
// BanqueAdviceModel. remaining is the shoe now: the cards not yet dealt,
// without any of the coup's cards (as for Advise); AdviseBanque puts back
// itself the first two cards the decider does not see. stakes are the
// coup's bets (they weigh the banker's EV and choose the table he follows).
// The enumeration groups cards by value: at most two hidden pairs and three
// cards to come, a few million leaves, well under a second.
//
// Errors: a coup the rules engine rejects (ErrIllegalCoup wrapping
// rules.ErrIllegalState), a coup waiting for no choice (ErrNoChoice), a
// negative stake (ErrInvalidStakes), a shoe with a negative count or too
// few unseen cards for the rest of the coup (ErrInvalidShoe), a coup no
// unseen cards can explain (ErrIllegalCoup).
func AdviseBanque(remaining Shoe, c rules.BanqueCoup, stakes BanqueStakes) (BanqueAdvice, error) {
	step, err := rules.NextStepBanque(c)
	if err != nil {
		return BanqueAdvice{}, fmt.Errorf("%w: %w", ErrIllegalCoup, err)
	}
	if stakes.Right < 0 || stakes.Left < 0 || stakes.Cheval < 0 {
		return BanqueAdvice{}, fmt.Errorf("%w: right %d, left %d, cheval %d", ErrInvalidStakes, stakes.Right, stakes.Left, stakes.Cheval)
	}
	if err := remaining.validate(0); err != nil {
		return BanqueAdvice{}, err
	}
	e := bqAdvise{tb: -1, followLeft: stakes.follow() == rules.TableLeft}
	switch step.Kind {
	case rules.StepPlayerChoice:
		e.decider = int(step.Hand) - 1
	case rules.StepBankerChoice:
		e.decider = bqBanker
	default:
		return BanqueAdvice{}, fmt.Errorf("%w: the coup waits for %v", ErrNoChoice, step.Kind)
	}
	u := remaining
	hiddenCards, future := 0, 1 // the decider's own third card
	if e.decider == bqBanker {
		e.tb = rules.Total(c.Banker[:2])
	} else {
		// The table's player does not see the banker's two cards.
		u = u.add(c.Banker[:2]...)
		hiddenCards += 2
		future++ // the banker's third card
	}
	for i, h := range [2][]rules.Card{c.Right, c.Left} {
		s := &e.hands[i]
		s.third = -1
		two := rules.Total(h[:2])
		if len(h) == 3 {
			s.third = h[2].Value()
		}
		switch {
		case two >= 8:
			// Source: RULES.md CF-NATURAL-PLAYER (a natural is shown at once)
			s.natural, s.two, s.final, s.ctx = true, two, two, stood
			continue
		case i == e.decider:
			s.two = two
			continue
		}
		// The table's two cards are unseen by the decider.
		u = u.add(h[:2]...)
		hiddenCards += 2
		s.two, s.hidden = -1, true
		switch {
		case i > e.decider:
			// Source: RULES.md BQ-PLAY (the right hand plays first: the
			// left one is yet to play), CF-PLAYER-DRAW (draw 0-4, option on 5)
			s.lo, s.hi, s.toPlay = 0, 7, true
			future++
		case s.third >= 0:
			s.lo, s.hi = 0, 5 // it drew: 0-4, or 5 drawn at the option
		default:
			s.lo, s.hi = 5, 7 // it stood: 6-7, or 5 stood at the option
		}
	}
	if err := u.validate(hiddenCards + future); err != nil {
		return BanqueAdvice{}, err
	}
	e.d = newDeck(u)
	// Source: RULES.md CF-BANKER-DRAW, PB-TABLEAU (the tableau with the
	// option cells drawn)
	hr := puntoBancoRules()
	for tb := 0; tb < 8; tb++ {
		for ctx := 0; ctx <= stood; ctx++ {
			e.bankerDraws[tb][ctx] = bankerTableau(tb, ctx, hr) != rules.DecisionStand
		}
	}
	fill := bigFill(e.d, hiddenCards+future)
	e.hide(0, 1, 0)

	a := BanqueAdvice{Hand: [3]string{"right", "left", "banker"}[e.decider], Rule: step.Rule, Follow: stakes.follow()}
	// pay[o] is the decider's gain on outcome index o = (right-1)*3+(left-1).
	var pay [9]*big.Int
	for r := rules.OutcomeBankWins; r <= rules.OutcomeStandOff; r++ {
		for l := rules.OutcomeBankWins; l <= rules.OutcomeStandOff; l++ {
			var p int64
			switch e.decider {
			case bqBanker:
				// Source: RULES.md BQ-BETS (even money against the bank),
				// CF-STANDOFF, BQ-CHEVAL (loses only if the bank beats both,
				// wins only if the bank loses to both)
				ch := int64(0)
				if r == l && r != rules.OutcomeStandOff {
					ch = bankSign(r)
				}
				x := new(big.Int).Mul(big.NewInt(stakes.Right), big.NewInt(bankSign(r)))
				x.Add(x, new(big.Int).Mul(big.NewInt(stakes.Left), big.NewInt(bankSign(l))))
				x.Add(x, new(big.Int).Mul(big.NewInt(stakes.Cheval), big.NewInt(ch)))
				pay[(r-1)*3+(l-1)] = x
				continue
			case 0:
				p = -bankSign(r)
			default:
				p = -bankSign(l)
			}
			pay[(r-1)*3+(l-1)] = big.NewInt(p)
		}
	}
	var ev [2]*big.Rat
	for ch := 0; ch < 2; ch++ {
		total, gain := new(big.Int), new(big.Int)
		var x big.Int
		for k := range e.acc[ch] {
			for o, n := range e.acc[ch][k] {
				if n.zero() {
					continue
				}
				x.Mul(n.big(), fill[k])
				total.Add(total, &x)
				gain.Add(gain, x.Mul(&x, pay[o]))
			}
		}
		if total.Sign() == 0 {
			return BanqueAdvice{}, fmt.Errorf("%w: no unseen hands consistent with the coup are possible from the shoe", ErrIllegalCoup)
		}
		ev[ch] = new(big.Rat).SetFrac(gain, total)
	}
	a.Stand, a.Draw = ev[0], ev[1]
	a.Best = rules.DecisionDraw
	if a.Stand.Cmp(a.Draw) > 0 {
		a.Best = rules.DecisionStand
	}
	return a, nil
}

// bankSign is the bank's result: +1 it wins, -1 it loses, 0 a stand-off.
func bankSign(o rules.Outcome) int64 {
	switch o {
	case rules.OutcomeBankWins:
		return 1
	case rules.OutcomeBankLoses:
		return -1
	}
	return 0
}

// bqBanker is the banker as AdviseBanque's decider (the tables are 0, 1).
const bqBanker = 2

// bqSide is a table's hand in AdviseBanque's enumeration.
type bqSide struct {
	natural bool
	hidden  bool // its first two cards are unseen: enumerated in lo..hi
	toPlay  bool // it plays after the decider by the model
	lo, hi  int
	two     int // the two-card total (-1 while hidden and not enumerated)
	third   int // the known third card's value, or -1
	final   int // the final total
	ctx     int // the third card's value, or stood
}

// bqAdvise is the state of AdviseBanque's enumeration over a deck of
// unseen cards.
type bqAdvise struct {
	d           deck
	decider     int // 0 right, 1 left, bqBanker
	hands       [2]bqSide
	tb          int // the banker's two-card total, -1 while unseen
	followLeft  bool
	bankerDraws [8][11]bool
	// acc[choice][k][o] sums the weights of the leaves of the choice
	// (0 stand, 1 draw) that used k unseen cards and ended on outcome
	// index o.
	acc [2][banqueCards + 1][9]u128
}

// hide enumerates the unseen two-card hands: step 0 the banker's, 1 the
// right table's, 2 the left's; then the decision.
func (e *bqAdvise) hide(step int, w uint64, k int) {
	switch {
	case step == 0 && e.tb < 0:
		e.d.pairs(func(a, b int, wp uint64) {
			// Source: RULES.md CF-NATURAL-BANKER (the coup went on: no banker natural)
			if t := (a + b) % 10; t < 8 {
				e.tb = t
				e.hide(1, w*wp, k+2)
			}
		})
		e.tb = -1
	case step == 1 || step == 2:
		s := &e.hands[step-1]
		if !s.hidden {
			e.hide(step+1, w, k)
			return
		}
		e.d.pairs(func(a, b int, wp uint64) {
			t := (a + b) % 10
			if t < s.lo || t > s.hi {
				return
			}
			s.two, s.final, s.ctx = t, t, stood
			if s.third >= 0 {
				s.final, s.ctx = (t+s.third)%10, s.third
			}
			e.hide(step+1, w*wp, k+2)
		})
		s.two = -1
	case step == 3:
		e.decide(w, k)
	default:
		e.hide(step+1, w, k)
	}
}

// decide plays each choice of the decider, then the rest of the coup.
func (e *bqAdvise) decide(w uint64, k int) {
	if e.decider == bqBanker {
		e.leaf(0, w, k, e.tb)
		e.bankerCard(1, w, k)
		return
	}
	s := &e.hands[e.decider]
	s.final, s.ctx = s.two, stood
	e.others(0, w, k)
	e.d.each(func(v int, wv uint64) {
		s.final, s.ctx = (s.two+v)%10, v
		e.others(1, w*wv, k+1)
	})
}

// others plays the left table if it is yet to play, then the banker by the
// tableau against the followed table (BanqueAdviceModel).
func (e *bqAdvise) others(ch int, w uint64, k int) {
	if l := &e.hands[1]; l.toPlay {
		// Source: RULES.md CF-PLAYER-DRAW (stand on 6-7)
		if l.two >= 6 {
			l.final, l.ctx = l.two, stood
			e.banker(ch, w, k)
			return
		}
		// Source: RULES.md CF-PLAYER-DRAW (draw on 0-4; on 5 the time-out default, draw)
		e.d.each(func(v int, wv uint64) {
			l.final, l.ctx = (l.two+v)%10, v
			e.banker(ch, w*wv, k+1)
		})
		return
	}
	e.banker(ch, w, k)
}

// banker plays the banker by the tableau against the followed table.
func (e *bqAdvise) banker(ch int, w uint64, k int) {
	// Source: RULES.md BQ-PLAY (he plays against the hand carrying more
	// money; the other one when that one has a natural)
	f := 0
	if e.followLeft {
		f = 1
	}
	if e.hands[f].natural {
		f = 1 - f
	}
	if !e.bankerDraws[e.tb][e.hands[f].ctx] {
		e.leaf(ch, w, k, e.tb)
		return
	}
	e.bankerCard(ch, w, k)
}

// bankerCard deals the banker a third card.
func (e *bqAdvise) bankerCard(ch int, w uint64, k int) {
	e.d.each(func(v int, wv uint64) {
		e.leaf(ch, w*wv, k+1, (e.tb+v)%10)
	})
}

// leaf records a finished coup with the banker's final total fb.
func (e *bqAdvise) leaf(ch int, w uint64, k, fb int) {
	res := func(s *bqSide) rules.Outcome {
		if s.natural {
			// Source: RULES.md CF-NATURAL-PLAYER (settled against the banker's two cards)
			return rules.Compare(s.two, e.tb)
		}
		// Source: RULES.md CF-RESULT
		return rules.Compare(s.final, fb)
	}
	r, l := res(&e.hands[0]), res(&e.hands[1])
	e.acc[ch][k][(r-1)*3+(l-1)].addMul(w, 1)
}

// each calls f for every value still in the deck with the weight of
// drawing it, the card removed during f.
func (d *deck) each(f func(v int, w uint64)) {
	for v := 0; v < 10; v++ {
		w := d.take(v)
		if w == 0 {
			continue
		}
		f(v, uint64(w))
		d.put(v)
	}
}
