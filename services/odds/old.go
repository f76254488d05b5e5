package odds

import (
	"fmt"
	"math/big"
)

// oldCards is the most cards a banker-and-one-punter coup of the old game
// uses: two hands of three.
const oldCards = 6

// OldModel states the game OldOdds enumerates.
const OldModel = `one coup of the old game with aces at eleven (OLD-*) between the banker and ONE punter (per-punter odds), ` +
	`dealt from the given shoe (two full decks by default, OLD-DECKS) in the rules engine's order (rules.NextStepOld): punter, banker, punter, banker (OLD-DEAL); ` +
	`points: ace 11, king, queen, jack and ten 10, others face value (OLD-VALUES); a hand ranks by its points modulo 10, 9/19/29 best, ` +
	`10/20/30 (baccarat) worst (OLD-RANK, rules.OldRank) - so each card counts as its chemin de fer value modulo 10 (ace 1, tens 0); ` +
	`a two-card 8, 9, 18 or 19 in either hand is a natural: nobody draws (OLD-NATURAL); ` +
	`otherwise the punter, then the banker, may take one card with a rank of 0..3 (OLD-DRAW read as rules.NextStepOld reads it) and, by default, ` +
	`both always do; the banker's decision does not depend on the punter's card; ` +
	`settlement: the higher rank wins even money, a tie goes to the banker (OLD-SETTLE; the banker's 9 or 19 beats the punter's, OLD-NATURAL). ` +
	`The three-way split of OLD-SETTLE needs two punters tied with the banker and is not part of per-punter odds; ` +
	`with more punters another punter's natural also stops the draw, so the odds of a full table differ slightly. ` +
	`The EV is per unit of the punter's stake; the banker holds double each stake (OLD-STAKE), so his return per unit held is -EV/2. ` +
	`Counts are ordered six-card deals.`

// OldStrategy is how the punter and the banker of the old game use their
// right to draw (OLD-DRAW). The zero value is the default: both draw on
// every rank 0..3 (10-13 and 20-22 points too).
type OldStrategy struct {
	// PunterStands[r] and BankerStands[r] decline the card on a two-card
	// rank r (0..3).
	PunterStands, BankerStands [4]bool
}

// oldDraws reports whether a hand with two-card rank r draws under stands.
func oldDraws(r int, stands *[4]bool) bool {
	// Source: RULES.md OLD-DRAW (less than 4 may draw one card)
	return r < 4 && !stands[r]
}

// String describes the strategy for a report.
func (st OldStrategy) String() string {
	if st == (OldStrategy{}) {
		return "punter and banker draw whenever allowed (two-card rank 0..3)"
	}
	return fmt.Sprintf("punter stands on ranks %v, banker on %v (of 0..3); otherwise they draw", ranksOf(st.PunterStands), ranksOf(st.BankerStands))
}

func ranksOf(s [4]bool) []int {
	r := []int{}
	for i, b := range s {
		if b {
			r = append(r, i)
		}
	}
	return r
}

// OldOdds are the exact odds of one coup of the old game between the
// banker and one punter.
type OldOdds struct {
	// Strategy is the strategy the odds were computed under.
	Strategy OldStrategy
	// Deals is the number of ordered six-card deals of the shoe.
	Deals *big.Int
	// PunterWins, BankerWins and Ties count the deals where the punter's
	// rank is higher, lower or equal (a tie goes to the banker).
	PunterWins, BankerWins, Ties *big.Int
	// Naturals counts the deals where either hand has a natural
	// (OLD-NATURAL) and nobody draws.
	Naturals *big.Int
	// PunterBaccarat counts the deals where the punter ends with 10, 20
	// or 30 points and so takes the bank for the next coup (OLD-BACCARAT).
	PunterBaccarat *big.Int
	// Bets is the punter's bet.
	Bets []BetOdds
	// BankerPerUnitHeld is the banker's expected gain per unit of the
	// double stake he holds against the punter (OLD-STAKE): -EV/2.
	BankerPerUnitHeld *big.Rat
}

// Prob returns count / Deals, exact.
func (o OldOdds) Prob(count *big.Int) *big.Rat {
	return new(big.Rat).SetFrac(count, o.Deals)
}

// Old returns the exact odds of a coup of the old game between the banker
// and one punter dealt from s under st (OldModel). Errors wrap
// ErrInvalidShoe.
func Old(s Shoe, st OldStrategy) (OldOdds, error) {
	if err := s.validate(oldCards); err != nil {
		return OldOdds{}, err
	}
	d := newDeck(s)
	// acc[k][o][natural][baccarat]: weights of coups that used k cards.
	var acc [oldCards + 1][3][2][2]u128
	add := func(k, tp, tb int, natural bool, w uint64) {
		n, b := 0, 0
		if natural {
			n = 1
		}
		if tp == 0 {
			// Source: RULES.md OLD-RANK, OLD-BACCARAT (10, 20, 30 points)
			b = 1
		}
		acc[k][oldOutcome(tp, tb)][n][b].addMul(w, 1)
	}
	d.pairs(func(p1, p2 int, wp uint64) {
		// Source: RULES.md OLD-VALUES, OLD-RANK (ace 11 and tens 10 are
		// 1 and 0 modulo 10, as CARD-VALUE)
		tp := (p1 + p2) % 10
		d.pairs(func(b1, b2 int, wb uint64) {
			tb := (b1 + b2) % 10
			w := wp * wb
			if tp >= 8 || tb >= 8 {
				// Source: RULES.md OLD-NATURAL (nobody draws)
				add(4, tp, tb, true, w)
				return
			}
			banker := func(fp, k int, w uint64) {
				if !oldDraws(tb, &st.BankerStands) {
					add(k, fp, tb, false, w)
					return
				}
				for v := 0; v < 10; v++ {
					if wv := d.c[v]; wv > 0 {
						add(k+1, fp, (tb+v)%10, false, w*uint64(wv))
					}
				}
			}
			if !oldDraws(tp, &st.PunterStands) {
				banker(tp, 4, w)
				return
			}
			for v := 0; v < 10; v++ {
				wv := d.take(v)
				if wv == 0 {
					continue
				}
				banker((tp+v)%10, 5, w*uint64(wv))
				d.put(v)
			}
		})
	})

	fill := bigFill(d, oldCards)
	o := OldOdds{Strategy: st, Deals: fill[0]}
	counts := [3]*big.Int{new(big.Int), new(big.Int), new(big.Int)}
	o.Naturals, o.PunterBaccarat = new(big.Int), new(big.Int)
	var x big.Int
	for k := range acc {
		for oi := range acc[k] {
			for n := 0; n < 2; n++ {
				for b := 0; b < 2; b++ {
					a := acc[k][oi][n][b]
					if a.zero() {
						continue
					}
					x.Mul(a.big(), fill[k])
					counts[oi].Add(counts[oi], &x)
					if n == 1 {
						o.Naturals.Add(o.Naturals, &x)
					}
					if b == 1 {
						o.PunterBaccarat.Add(o.PunterBaccarat, &x)
					}
				}
			}
		}
	}
	o.BankerWins, o.PunterWins, o.Ties = counts[bankWins], counts[playerWins], counts[tie]
	// Source: RULES.md OLD-SETTLE (even money; a tie goes to the banker)
	lose := new(big.Int).Add(o.BankerWins, o.Ties)
	ev := new(big.Rat).SetFrac(new(big.Int).Sub(o.PunterWins, lose), o.Deals)
	o.Bets = []BetOdds{{Bet: "punter", Pays: "1 to 1, tie to the banker", Win: o.PunterWins, Lose: lose, Push: new(big.Int), EV: ev}}
	// Source: RULES.md OLD-STAKE (the banker holds double the stake)
	o.BankerPerUnitHeld = new(big.Rat).Mul(ev, big.NewRat(-1, 2))
	return o, nil
}

// oldOutcome is bankWins, playerWins or tie for the punter's and the
// banker's ranks (OLD-RANK; higher is better).
func oldOutcome(punter, banker int) int {
	switch {
	case punter > banker:
		return playerWins
	case punter < banker:
		return bankWins
	}
	return tie
}
