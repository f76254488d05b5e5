package odds

import (
	"fmt"
	"math/big"

	"github.com/chemmy/chemmy/services/rules"
)

// AdviceModel states the information model of Advise.
const AdviceModel = `the deciding hand sees its own two cards and the composition of the shoe before the coup; ` +
	`the player at a choice does not see the banker's two cards, only that they are not a natural (the coup went on); ` +
	`the banker at a choice sees his two cards and the player's third card face up, or that the player stood, ` +
	`and infers the player's two cards from the strategy the player is assumed to follow (no natural, and his draw or stand); ` +
	`every unseen card is drawn from the cards still in the shoe plus the opponent's hidden cards; ` +
	`the opponent's later choice follows the given strategy. ` +
	`EV is per unit of the hand's stake: the player's hand +1/-1/0; the banker's hand +1 less commission_bp, -1, 0.`

// Advice is the croupier's advice at a choice of a coup in progress.
type Advice struct {
	// Hand is "player" or "banker": the hand that chooses.
	Hand string
	// Rule is the rule that gives the choice: CF-PLAYER-DRAW (the player on
	// 5), CF-BANKER-DRAW (a banker option cell) or CF-BANCO-FREEDOM.
	Rule string
	// Draw and Stand are the hand's expected gain per unit staked if it
	// draws or stands, exact.
	Draw, Stand *big.Rat
	// Best is DecisionDraw or DecisionStand, the choice with the larger EV;
	// on equal EVs, DecisionDraw (the RULES.md default at a timeout).
	Best rules.Decision
}

// Advise returns the EV of each choice for the hand that chooses next in
// coup c under hr, by exact enumeration (AdviceModel). remaining is the
// shoe now: the cards not yet dealt (the coup's cards are not in it). st is
// the opponent's assumed strategy at his own later choice (the player's
// draw on 5 when the banker is advised; the banker's option cells when the
// player is advised); the zero Strategy is the tableau with the RULES.md
// timeout defaults, Equilibrium.Strategy the equilibrium.
//
// Errors: a coup the rules engine rejects (ErrIllegalCoup wrapping
// rules.ErrIllegalState), a coup waiting for no choice (ErrNoChoice), a
// shoe with a negative count or fewer than four unseen cards
// (ErrInvalidShoe), a probability outside 0..1 (ErrInvalidStrategy), a
// coup the strategy and the shoe make impossible (ErrIllegalCoup).
func Advise(remaining Shoe, c rules.Coup, hr rules.HouseRules, st Strategy) (Advice, error) {
	step, err := rules.NextStep(c, hr)
	if err != nil {
		return Advice{}, fmt.Errorf("%w: %w", ErrIllegalCoup, err)
	}
	free := c.Banco && hr.BancoFreePlay
	pDraw, bDraw, err := st.resolve(hr, free)
	if err != nil {
		return Advice{}, err
	}
	if err := remaining.validate(0); err != nil {
		return Advice{}, err
	}
	a := Advice{Rule: step.Rule}
	switch step.Kind {
	case rules.StepPlayerChoice:
		a.Hand = "player"
		// The player does not see the banker's two cards.
		u := remaining.add(c.Banker...)
		if err := u.validate(4); err != nil {
			return Advice{}, err
		}
		a.Draw, a.Stand, err = advisePlayer(newDeck(u), rules.Total(c.Player[:2]), &bDraw)
	case rules.StepBankerChoice:
		a.Hand = "banker"
		// The banker does not see the player's first two cards.
		u := remaining.add(c.Player[:2]...)
		if err := u.validate(3); err != nil {
			return Advice{}, err
		}
		third := -1
		if len(c.Player) == 3 {
			third = c.Player[2].Value()
		}
		a.Draw, a.Stand, err = adviseBanker(newDeck(u), rules.Total(c.Banker[:2]), third, &pDraw, hr.CommissionBP, free)
	default:
		return Advice{}, fmt.Errorf("%w: the coup waits for %v", ErrNoChoice, step.Kind)
	}
	if err != nil {
		return Advice{}, err
	}
	a.Best = rules.DecisionDraw
	if a.Stand.Cmp(a.Draw) > 0 {
		a.Best = rules.DecisionStand
	}
	return a, nil
}

// advisePlayer enumerates the banker's hidden two cards and the cards to
// come from d for a player on tp; bDraw is the banker's strategy.
func advisePlayer(d deck, tp int, bDraw *[8][11]*big.Rat) (draw, stand *big.Rat, err error) {
	const depth = 4 // the banker's two cards, the player's third, the banker's third
	fill := d.fill(depth)
	// pay[choice][tb][ctx][bd]: the player's wins minus losses.
	var pay [2][8][11][2]int64
	var weight int64
	for b1 := 0; b1 < 10; b1++ {
		w1 := d.take(b1)
		if w1 == 0 {
			continue
		}
		for b2 := 0; b2 < 10; b2++ {
			w2 := d.take(b2)
			if w2 == 0 {
				continue
			}
			w := w1 * w2
			tb := (b1 + b2) % 10
			// Source: RULES.md CF-NATURAL-BANKER (the coup went on: no banker natural)
			if tb < 8 {
				weight += w * fill[2]
				pay[0][tb][stood][0] += w * fill[2] * signOf(tp, tb)
				for b3 := 0; b3 < 10; b3++ {
					if wb := d.c[b3]; wb > 0 {
						pay[0][tb][stood][1] += w * wb * fill[3] * signOf(tp, (tb+b3)%10)
					}
				}
				for p3 := 0; p3 < 10; p3++ {
					wp := d.take(p3)
					if wp == 0 {
						continue
					}
					fp := (tp + p3) % 10
					pay[1][tb][p3][0] += w * wp * fill[3] * signOf(fp, tb)
					for b3 := 0; b3 < 10; b3++ {
						if wb := d.c[b3]; wb > 0 {
							pay[1][tb][p3][1] += w * wp * wb * fill[4] * signOf(fp, (tb+b3)%10)
						}
					}
					d.put(p3)
				}
			}
			d.put(b2)
		}
		d.put(b1)
	}
	if weight == 0 {
		return nil, nil, fmt.Errorf("%w: no banker hand without a natural is possible from the shoe", ErrIllegalCoup)
	}
	ev := func(choice int) *big.Rat {
		v := new(big.Rat)
		for tb := 0; tb < 8; tb++ {
			for ctx := 0; ctx <= stood; ctx++ {
				for bd := 0; bd < 2; bd++ {
					n := pay[choice][tb][ctx][bd]
					if n == 0 {
						continue
					}
					q := new(big.Rat).Set(bDraw[tb][ctx])
					if bd == 0 {
						q.Sub(ratOne, q)
					}
					v.Add(v, q.Mul(q, big.NewRat(n, 1)))
				}
			}
		}
		return v.Quo(v, big.NewRat(weight, 1))
	}
	return ev(1), ev(0), nil
}

// signOf is the player's result: +1 a win, -1 a loss, 0 a stand-off.
func signOf(player, banker int) int64 {
	switch {
	case player > banker:
		return 1
	case player < banker:
		return -1
	}
	return 0
}

// adviseBanker enumerates the player's hidden two cards and the banker's
// third card from d for a banker on tb; third is the player's third card
// value or -1 when he stood; pDraw is the player's strategy.
func adviseBanker(d deck, tb, third int, pDraw *[8]*big.Rat, commissionBP int64, free bool) (draw, stand *big.Rat, err error) {
	const depth = 3 // the player's two cards, the banker's third
	fill := d.fill(depth)
	// Per player total: weight, and wins and losses of the banker for
	// each choice.
	var weight [8]int64
	var wins, losses [2][8]int64
	for p1 := 0; p1 < 10; p1++ {
		w1 := d.take(p1)
		if w1 == 0 {
			continue
		}
		for p2 := 0; p2 < 10; p2++ {
			w2 := d.take(p2)
			if w2 == 0 {
				continue
			}
			tp := (p1 + p2) % 10
			// Source: RULES.md CF-NATURAL-PLAYER (the coup went on: no player natural)
			if tp < 8 {
				w := w1 * w2
				fp := tp
				if third >= 0 {
					fp = (tp + third) % 10
				}
				weight[tp] += w * fill[2]
				add := func(choice int, bank int, n int64) {
					switch s := signOf(fp, bank); {
					case s < 0:
						wins[choice][tp] += n
					case s > 0:
						losses[choice][tp] += n
					}
				}
				add(0, tb, w*fill[2])
				for b3 := 0; b3 < 10; b3++ {
					if wb := d.c[b3]; wb > 0 {
						add(1, (tb+b3)%10, w*wb*fill[3])
					}
				}
			}
			d.put(p2)
		}
		d.put(p1)
	}
	// The posterior of the player's total: the prior weight times the
	// chance of the action he took.
	act := func(tp int, useStrategy bool) *big.Rat {
		if !useStrategy {
			// The rules alone: only the totals where the action was legal.
			dec := rules.PlayerDecision(tp)
			if free || dec == rules.DecisionOption ||
				(third >= 0) == (dec == rules.DecisionDraw) {
				return ratOne
			}
			return ratZero
		}
		if third >= 0 {
			return pDraw[tp]
		}
		return new(big.Rat).Sub(ratOne, pDraw[tp])
	}
	keep := big.NewRat(rules.MaxCommissionBP-commissionBP, rules.MaxCommissionBP)
	for _, useStrategy := range []bool{true, false} {
		total := new(big.Rat)
		var ev [2]*big.Rat
		ev[0], ev[1] = new(big.Rat), new(big.Rat)
		for tp := 0; tp < 8; tp++ {
			a := act(tp, useStrategy)
			if a.Sign() == 0 || weight[tp] == 0 {
				continue
			}
			total.Add(total, new(big.Rat).Mul(a, big.NewRat(weight[tp], 1)))
			for ch := 0; ch < 2; ch++ {
				// Source: RULES.md CF-BANK-WINS (the banker's winnings less commission)
				v := new(big.Rat).Mul(big.NewRat(wins[ch][tp], 1), keep)
				v.Sub(v, big.NewRat(losses[ch][tp], 1))
				ev[ch].Add(ev[ch], v.Mul(v, a))
			}
		}
		if total.Sign() == 0 {
			// The assumed strategy never takes the action the player took:
			// fall back on the rules alone.
			continue
		}
		return ev[1].Quo(ev[1], total), ev[0].Quo(ev[0], total), nil
	}
	return nil, nil, fmt.Errorf("%w: no player hand consistent with the coup is possible from the shoe", ErrIllegalCoup)
}
