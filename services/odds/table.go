package odds

import (
	"math/big"

	"github.com/chemmy/chemmy/services/rules"
)

// Outcome indices of the count tables.
const (
	bankWins   = 0 // the banker's hand is nearer 9 (CF-RESULT)
	playerWins = 1 // the player's hand is nearer 9 (CF-RESULT)
	tie        = 2 // stand-off (CF-STANDOFF)
)

// stood is the context index of a banker cell when the player stood; 0..9
// are the values of the player's third card.
const stood = 10

// outcomeIndex is bankWins, playerWins or tie for two final totals.
func outcomeIndex(player, banker int) int {
	switch rules.Compare(player, banker) {
	case rules.OutcomeBankWins:
		return bankWins
	case rules.OutcomeBankLoses:
		return playerWins
	default:
		return tie
	}
}

// coupTable holds the counts, in ordered six-card deals, of every way a
// coup between the player's hand and the banker's hand can go, with both
// choices taken at every cell, so that any strategy can be applied
// afterwards.
type coupTable struct {
	// total is the number of ordered six-card deals: falling(N, 6), or N^6
	// for an infinite shoe.
	total uint64
	// natural counts the coups ended by a natural (CF-NATURAL-PLAYER,
	// CF-NATURAL-BANKER) by outcome.
	natural [3]uint64
	// bankNatural counts the deals where the banker's first two cards are
	// a natural (the PB-BETS bank natural bet), whatever the player holds.
	bankNatural uint64
	// cell[tp][pd][tb][ctx][bd][o] counts the coups with no natural where
	// the player's two-card total is tp and he drew (pd 1) or stood (pd
	// 0), the banker's two-card total is tb, ctx is the player's third
	// card value or stood, the banker drew (bd 1) or stood, ending in o.
	cell [8][2][8][11][2][3]uint64
}

// buildTable enumerates every coup from s by card value. The shoe must be
// valid (Shoe.Validate).
func buildTable(s Shoe) *coupTable {
	d := newDeck(s)
	fill := d.fill(coupCards)
	t := &coupTable{total: uint64(fill[0])}
	for p1 := 0; p1 < 10; p1++ {
		w1 := d.take(p1)
		if w1 == 0 {
			continue
		}
		for b1 := 0; b1 < 10; b1++ {
			w2 := d.take(b1)
			if w2 == 0 {
				continue
			}
			for p2 := 0; p2 < 10; p2++ {
				w3 := d.take(p2)
				if w3 == 0 {
					continue
				}
				for b2 := 0; b2 < 10; b2++ {
					w4 := d.take(b2)
					if w4 == 0 {
						continue
					}
					// Source: RULES.md CF-DEAL (player, banker, player, banker)
					w := w1 * w2 * w3 * w4
					tp, tb := (p1+p2)%10, (b1+b2)%10
					if tb >= 8 {
						t.bankNatural += uint64(w * fill[4])
					}
					if tp >= 8 || tb >= 8 {
						// Source: RULES.md CF-NATURAL-PLAYER, CF-NATURAL-BANKER
						t.natural[outcomeIndex(tp, tb)] += uint64(w * fill[4])
					} else {
						t.play(&d, w, tp, tb, fill)
					}
					d.put(b2)
				}
				d.put(p2)
			}
			d.put(b1)
		}
		d.put(p1)
	}
	return t
}

// play adds the coups after a deal of weight w with no natural: the player
// stands or draws, then the banker stands or draws.
func (t *coupTable) play(d *deck, w int64, tp, tb int, fill []int64) {
	// The player stands.
	row := &t.cell[tp][0][tb][stood]
	row[0][outcomeIndex(tp, tb)] += uint64(w * fill[4])
	for b3 := 0; b3 < 10; b3++ {
		if wb := d.c[b3]; wb > 0 {
			row[1][outcomeIndex(tp, (tb+b3)%10)] += uint64(w * wb * fill[5])
		}
	}
	// The player draws a third card, face up.
	for p3 := 0; p3 < 10; p3++ {
		wp := d.take(p3)
		if wp == 0 {
			continue
		}
		fp := (tp + p3) % 10
		row := &t.cell[tp][1][tb][p3]
		row[0][outcomeIndex(fp, tb)] += uint64(w * wp * fill[5])
		for b3 := 0; b3 < 10; b3++ {
			if wb := d.c[b3]; wb > 0 {
				row[1][outcomeIndex(fp, (tb+b3)%10)] += uint64(w * wp * wb * fill[6])
			}
		}
		d.put(p3)
	}
}

// Counts are the outcome counts of one coup from a shoe, in ordered
// six-card deals. Under a mixed strategy they are rational (a count times
// a probability); under a pure one they are integers (denominator 1).
type Counts struct {
	// Deals is the number of ordered six-card deals of the shoe.
	Deals *big.Int
	// BankWins, PlayerWins and Ties are the deals won by the banker's hand,
	// won by the player's hand, and tied (CF-RESULT, CF-STANDOFF).
	BankWins, PlayerWins, Ties *big.Rat
	// BankNaturals is the number of deals whose first four cards give the
	// banker a natural (PB-BETS bank natural bet).
	BankNaturals *big.Int
}

// Prob returns count / Deals.
func (c Counts) Prob(count *big.Rat) *big.Rat {
	return new(big.Rat).Quo(count, new(big.Rat).SetInt(c.Deals))
}

// counts applies a strategy to the table: pDraw[tp] and bDraw[tb][ctx] are
// the probabilities of drawing.
func (t *coupTable) counts(pDraw *[8]*big.Rat, bDraw *[8][11]*big.Rat) Counts {
	var o [3]*big.Rat
	for i := range o {
		o[i] = new(big.Rat).SetInt(new(big.Int).SetUint64(t.natural[i]))
	}
	one := big.NewRat(1, 1)
	var n big.Int
	var x, pw, bw big.Rat
	for tp := 0; tp < 8; tp++ {
		for pd := 0; pd < 2; pd++ {
			pw.Set(pDraw[tp])
			if pd == 0 {
				pw.Sub(one, pDraw[tp])
			}
			if pw.Sign() == 0 {
				continue
			}
			for tb := 0; tb < 8; tb++ {
				for ctx := 0; ctx <= stood; ctx++ {
					for bd := 0; bd < 2; bd++ {
						bw.Set(bDraw[tb][ctx])
						if bd == 0 {
							bw.Sub(one, bDraw[tb][ctx])
						}
						if bw.Sign() == 0 {
							continue
						}
						for oi := 0; oi < 3; oi++ {
							if c := t.cell[tp][pd][tb][ctx][bd][oi]; c != 0 {
								x.SetInt(n.SetUint64(c))
								x.Mul(&x, &pw)
								x.Mul(&x, &bw)
								o[oi].Add(o[oi], &x)
							}
						}
					}
				}
			}
		}
	}
	return Counts{
		Deals:        new(big.Int).SetUint64(t.total),
		BankWins:     o[bankWins],
		PlayerWins:   o[playerWins],
		Ties:         o[tie],
		BankNaturals: new(big.Int).SetUint64(t.bankNatural),
	}
}
