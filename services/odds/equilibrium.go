package odds

import (
	"math/big"

	"github.com/chemmy/chemmy/services/rules"
)

// EquilibriumModel states the game CheminEquilibrium solves.
const EquilibriumModel = `finite two-person zero-sum game of one chemin de fer coup between the player's hand and the banker's hand, ` +
	`payoff +1/-1/0 to the player for a win/loss/stand-off (the house commission is not a transfer between the hands and is left out); ` +
	`the cards are dealt from the given shoe composition, known to both; ` +
	`the player knows his two-card total and chooses only on 5 (CF-PLAYER-DRAW; other totals follow the tableau); ` +
	`the banker knows his two-card total and the value of the player's third card, or that the player stood, ` +
	`and chooses at the option cells of the house rules (CF-BANKER-DRAW), or at every cell under banco free play (CF-BANCO-FREEDOM); ` +
	`neither sees the other's hidden cards; a natural ends the coup (CF-NATURAL-*). ` +
	`The player's draw probability s is his whole strategy, so the value is max over s of the sum over the banker's information sets of the ` +
	`smaller of two linear functions of s; it is maximised exactly over the breakpoints, and the banker's mix makes the player indifferent.`

// BankerCell is one cell of the banker's tableau where the banker chooses.
type BankerCell struct {
	// Total is the banker's two-card total, 0..7.
	Total int
	// Third is the value of the player's third card, 0..9, or
	// ThirdCardStood.
	Third int
	// Draw is the equilibrium probability that the banker draws.
	Draw *big.Rat
	// Tableau is what CF-BANKER-DRAW says in the cell (an option cell is
	// DecisionOption).
	Tableau rules.Decision
}

// Mixed reports that the banker draws with a probability strictly
// between 0 and 1.
func (c BankerCell) Mixed() bool { return c.Draw.Sign() > 0 && c.Draw.Cmp(ratOne) < 0 }

// Equilibrium is the solution of the chemin de fer game of EquilibriumModel.
type Equilibrium struct {
	// PlayerDrawOn5 is the player's equilibrium probability of drawing on 5.
	PlayerDrawOn5 *big.Rat
	// Banker lists every cell where the banker chooses, with his
	// equilibrium drawing probability.
	Banker []BankerCell
	// Value is the value of the game to the player: his expected gain per
	// unit staked when both play the equilibrium. -Value is the banker's
	// edge before commission.
	Value *big.Rat
	// Deals is the number of ordered six-card deals of the shoe.
	Deals *big.Int
	// TableauBestResponse reports that, against the banker's equilibrium
	// strategy, the tableau's forced choices on the player's other totals
	// (draw 0-4, stand 6-7) are best responses, so the solution is also an
	// equilibrium of a game where the player chooses on every total.
	TableauBestResponse bool
}

// Strategy is the equilibrium as a Strategy for Chemin and Advise.
func (e Equilibrium) Strategy() Strategy {
	var st Strategy
	st.PlayerDraw[5] = e.PlayerDrawOn5
	for _, c := range e.Banker {
		st.BankerDraw[c.Total][c.Third] = c.Draw
	}
	return st
}

// line is a + s*b, a payoff linear in the player's probability s of
// drawing on 5.
type line struct{ a, b int64 }

func (l line) at(s *big.Rat) *big.Rat {
	r := new(big.Rat).Mul(s, new(big.Rat).SetInt64(l.b))
	return r.Add(r, new(big.Rat).SetInt64(l.a))
}

// CheminEquilibrium solves the game of EquilibriumModel for the shoe s
// under hr; hr.BancoFreePlay solves the banco coup under free play, where
// the banker chooses at every cell. Errors wrap ErrInvalidShoe.
func CheminEquilibrium(s Shoe, hr rules.HouseRules) (Equilibrium, error) {
	if err := s.Validate(); err != nil {
		return Equilibrium{}, err
	}
	t := buildTable(s)
	free := hr.BancoFreePlay

	pay := func(tp, pd, tb, ctx, bd int) int64 {
		c := &t.cell[tp][pd][tb][ctx][bd]
		return int64(c[playerWins]) - int64(c[bankWins])
	}
	// lines[tb][ctx][bd]: the player's payoff summed over his totals.
	var lines [8][11][2]line
	for tb := 0; tb < 8; tb++ {
		for ctx := 0; ctx <= stood; ctx++ {
			for bd := 0; bd < 2; bd++ {
				l := &lines[tb][ctx][bd]
				for tp := 0; tp < 8; tp++ {
					switch rules.PlayerDecision(tp) {
					case rules.DecisionDraw:
						l.a += pay(tp, 1, tb, ctx, bd)
					case rules.DecisionStand:
						l.a += pay(tp, 0, tb, ctx, bd)
					default:
						// Source: RULES.md CF-PLAYER-DRAW (option on 5: draw with probability s)
						l.a += pay(tp, 0, tb, ctx, bd)
						l.b += pay(tp, 1, tb, ctx, bd) - pay(tp, 0, tb, ctx, bd)
					}
				}
			}
		}
	}

	var fixed line
	fixed.a = int64(t.natural[playerWins]) - int64(t.natural[bankWins])
	type cell struct {
		tb, ctx int
		tab     rules.Decision
	}
	var cells []cell
	for tb := 0; tb < 8; tb++ {
		for ctx := 0; ctx <= stood; ctx++ {
			d := bankerTableau(tb, ctx, hr)
			if d == rules.DecisionOption || free {
				cells = append(cells, cell{tb, ctx, d})
				continue
			}
			bd := 0
			if d == rules.DecisionDraw {
				bd = 1
			}
			fixed.a += lines[tb][ctx][bd].a
			fixed.b += lines[tb][ctx][bd].b
		}
	}

	value := func(s *big.Rat) *big.Rat {
		v := fixed.at(s)
		for _, c := range cells {
			d, st := lines[c.tb][c.ctx][1].at(s), lines[c.tb][c.ctx][0].at(s)
			if d.Cmp(st) < 0 {
				v.Add(v, d)
			} else {
				v.Add(v, st)
			}
		}
		return v
	}
	// The value is concave and piecewise linear in s: its maximum on
	// [0, 1] is at an end or where a cell's two lines cross.
	candidates := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}
	for _, c := range cells {
		d, st := lines[c.tb][c.ctx][1], lines[c.tb][c.ctx][0]
		if d.b == st.b {
			continue
		}
		x := big.NewRat(d.a-st.a, 1)
		x.Quo(x, big.NewRat(st.b-d.b, 1))
		if x.Sign() > 0 && x.Cmp(ratOne) < 0 {
			candidates = append(candidates, x)
		}
	}
	var best, bestV *big.Rat
	for _, x := range candidates {
		v := value(x)
		if bestV == nil || v.Cmp(bestV) > 0 || v.Cmp(bestV) == 0 && x.Cmp(best) < 0 {
			best, bestV = x, v
		}
	}

	// The banker's best response at s*, mixing where he is indifferent so
	// that the player's payoff is flat in s (interior s*), or slopes the
	// way that keeps s* optimal (s* = 0 or 1).
	e := Equilibrium{PlayerDrawOn5: best, Deals: new(big.Int).SetUint64(t.total)}
	slope := big.NewRat(fixed.b, 1)
	type tied struct {
		i          int
		low, high  int // bd with the lower and the higher slope
		lowS, diff int64
	}
	var ties []tied
	for i, c := range cells {
		d, st := lines[c.tb][c.ctx][1], lines[c.tb][c.ctx][0]
		bc := BankerCell{Total: c.tb, Third: c.ctx, Tableau: c.tab}
		switch cmp := d.at(best).Cmp(st.at(best)); {
		case cmp < 0:
			bc.Draw = big.NewRat(1, 1)
			slope.Add(slope, big.NewRat(d.b, 1))
		case cmp > 0:
			bc.Draw = big.NewRat(0, 1)
			slope.Add(slope, big.NewRat(st.b, 1))
		case d.b == st.b:
			// Identical lines (a cell the shoe cannot reach, or one where
			// the choice never matters): keep the tableau, draw at an option.
			bc.Draw = decisionProb(c.tab, nil)
			slope.Add(slope, big.NewRat(d.b, 1))
		default:
			tt := tied{i: i, low: 0, high: 1, lowS: st.b, diff: d.b - st.b}
			if d.b < st.b {
				tt = tied{i: i, low: 1, high: 0, lowS: d.b, diff: st.b - d.b}
			}
			ties = append(ties, tt)
			slope.Add(slope, big.NewRat(tt.lowS, 1))
			bc.Draw = big.NewRat(int64(tt.low), 1)
		}
		e.Banker = append(e.Banker, bc)
	}
	switch {
	case best.Cmp(ratOne) == 0:
		for _, tt := range ties {
			e.Banker[tt.i].Draw = big.NewRat(int64(tt.high), 1)
		}
	case best.Sign() > 0:
		need := new(big.Rat).Neg(slope)
		for _, tt := range ties {
			if need.Sign() <= 0 {
				break
			}
			gain := big.NewRat(tt.diff, 1)
			f := big.NewRat(1, 1)
			if gain.Cmp(need) > 0 {
				f.Quo(need, gain)
			}
			need.Sub(need, new(big.Rat).Mul(f, gain))
			// Move the fraction f of the cell from the low to the high slope.
			if tt.high == 1 {
				e.Banker[tt.i].Draw = f
			} else {
				e.Banker[tt.i].Draw = new(big.Rat).Sub(ratOne, f)
			}
		}
	}
	e.Value = new(big.Rat).Quo(bestV, new(big.Rat).SetInt(e.Deals))
	e.TableauBestResponse = tableauBestResponse(t, e, hr, free)
	return e, nil
}

// tableauBestResponse checks the player's forced totals against the
// banker's equilibrium strategy.
func tableauBestResponse(t *coupTable, e Equilibrium, hr rules.HouseRules, free bool) bool {
	p, b, err := e.Strategy().resolve(hr, free)
	_ = p
	if err != nil {
		return false
	}
	for tp := 0; tp < 8; tp++ {
		d := rules.PlayerDecision(tp)
		if d == rules.DecisionOption {
			continue
		}
		var pays [2]*big.Rat
		for pd := 0; pd < 2; pd++ {
			v := new(big.Rat)
			for tb := 0; tb < 8; tb++ {
				for ctx := 0; ctx <= stood; ctx++ {
					q := b[tb][ctx]
					for bd := 0; bd < 2; bd++ {
						c := &t.cell[tp][pd][tb][ctx][bd]
						n := int64(c[playerWins]) - int64(c[bankWins])
						if n == 0 {
							continue
						}
						w := new(big.Rat).Set(q)
						if bd == 0 {
							w.Sub(ratOne, q)
						}
						v.Add(v, w.Mul(w, big.NewRat(n, 1)))
					}
				}
			}
			pays[pd] = v
		}
		want := 0
		if d == rules.DecisionDraw {
			want = 1
		}
		if pays[want].Cmp(pays[1-want]) < 0 {
			return false
		}
	}
	return true
}
