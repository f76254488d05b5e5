package odds

import (
	"fmt"
	"math/big"
	"math/bits"

	"github.com/chemmy/chemmy/services/rules"
)

// banqueCards is the most cards one banque coup uses: three hands of three
// (BQ-HANDS, HAND-SIZE).
const banqueCards = 9

// BanqueModel states the game BanqueOdds enumerates.
const BanqueModel = `one coup of baccarat banque (BQ-*) dealt from the given shoe, in the rules engine's order (rules.NextStepBanque): ` +
	`right table, left table, banker, one card at a time, twice round (BQ-HANDS); ` +
	`a banker's two-card 8 or 9 ends the coup and both tables are compared with it (CF-NATURAL-BANKER); ` +
	`a table's two-card 8 or 9 is shown at once and compared with the banker's first two cards (CF-NATURAL-PLAYER); ` +
	`otherwise the right table, then the left, draws on 0-4 and on 5 and stands on 6-7 (CF-PLAYER-DRAW, BQ-PLAY; draw on 5 is the time-out default); ` +
	`the banker, free to draw or stand (BQ-PLAY), plays the punto banco tableau (CF-BANKER-DRAW with both option cells drawn, PB-TABLEAU) ` +
	`against the followed table's third card, or "stood" if it stood; the followed table is the right one ` +
	`(the table he plays against when both carry equal money, BQ-PLAY), and when it has a natural he plays against the other table; ` +
	`with two table naturals he does not play. ` +
	`Bets: right, left and a cheval (BQ-CHEVAL), even money, a stand-off returns the bet; no commission ` +
	`(the 2.5% auction fee of BQ-BANK is on the bid and is not in the expected values). ` +
	`Counts are ordered nine-card deals.`

// BanqueStrategy is how the hands of a banque coup play. The zero value is
// the default of BanqueModel.
type BanqueStrategy struct {
	// Follow is the table the banker plays the tableau against:
	// rules.TableRight (also the zero value: the default, the table he
	// favours when the money is equal) or rules.TableLeft (for a coup where
	// the left carries more money, BQ-PLAY). When the followed table has a
	// natural he plays against the other one.
	Follow rules.Table
	// StandOn5 makes both tables stand on 5 (the other branch of the
	// CF-PLAYER-DRAW option); the default draws.
	StandOn5 bool
}

func (st BanqueStrategy) validate() error {
	if st.Follow != 0 && st.Follow != rules.TableRight && st.Follow != rules.TableLeft {
		return fmt.Errorf("%w: banker follows table %d", ErrInvalidStrategy, int(st.Follow))
	}
	return nil
}

// followLeft reports whether the banker follows the left table.
func (st BanqueStrategy) followLeft() bool { return st.Follow == rules.TableLeft }

// punterDraws is the tables' rule on a two-card total 0..7.
func (st BanqueStrategy) punterDraws(t int) bool {
	// Source: RULES.md CF-PLAYER-DRAW (draw 0-4, option on 5, stand 6-7)
	return t <= 4 || t == 5 && !st.StandOn5
}

// String describes the strategy for a report.
func (st BanqueStrategy) String() string {
	follow, on5 := "right", "draw"
	if st.followLeft() {
		follow = "left"
	}
	if st.StandOn5 {
		on5 = "stand"
	}
	return fmt.Sprintf("banker plays the punto banco tableau against the %s table (the other one if it has a natural); tables %s on 5", follow, on5)
}

// BanqueOdds are the exact odds of one baccarat banque coup.
type BanqueOdds struct {
	// Strategy is the strategy the odds were computed under.
	Strategy BanqueStrategy
	// Deals is the number of ordered nine-card deals of the shoe.
	Deals *big.Int
	// Outcomes[r-1][l-1] counts the deals where the right table's result
	// is r and the left table's is l (rules.Outcome, from the bank's side).
	Outcomes [3][3]*big.Int
	// BankerNaturals counts the deals where the banker's first two cards
	// are 8 or 9.
	BankerNaturals *big.Int
	// Bets are the right, left and cheval bets, in that order.
	Bets []BetOdds
}

// Count returns the deals where the right table's result is right and the
// left table's is left.
func (o BanqueOdds) Count(right, left rules.Outcome) *big.Int {
	return o.Outcomes[right-1][left-1]
}

// Table returns the deals where table t (rules.TableRight or
// rules.TableLeft) has result out, whatever the other table's.
func (o BanqueOdds) Table(t rules.Table, out rules.Outcome) *big.Int {
	n := new(big.Int)
	for i := 0; i < 3; i++ {
		if t == rules.TableLeft {
			n.Add(n, o.Outcomes[i][out-1])
		} else {
			n.Add(n, o.Outcomes[out-1][i])
		}
	}
	return n
}

// Prob returns count / Deals, exact.
func (o BanqueOdds) Prob(count *big.Int) *big.Rat {
	return new(big.Rat).SetFrac(count, o.Deals)
}

// Banque returns the exact odds of a baccarat banque coup dealt from s
// under st (BanqueModel). The shoe must hold at least nine cards (or be
// infinite). The enumeration groups cards by value and deals, in
// probability, the banker's two cards first, then the right hand, the left
// hand and the banker's third card: each card is a uniform draw from the
// cards not yet seen whatever the order, so every coup has the same weight
// as in the rules engine's order, and the left hand with the banker's
// third card is memoised per remaining composition. Errors wrap
// ErrInvalidShoe or ErrInvalidStrategy.
func Banque(s Shoe, st BanqueStrategy) (BanqueOdds, error) {
	if err := s.validate(banqueCards); err != nil {
		return BanqueOdds{}, err
	}
	if err := st.validate(); err != nil {
		return BanqueOdds{}, err
	}
	e := banqueEnum{st: st, d: newDeck(s), memo: make(map[bqKey][]bqLeft)}
	// Source: RULES.md CF-BANKER-DRAW, PB-TABLEAU (the banker's tableau
	// with the option cells drawn)
	hr := puntoBancoRules()
	for tb := 0; tb < 8; tb++ {
		for ctx := 0; ctx <= stood; ctx++ {
			e.bankerDraws[tb][ctx] = bankerTableau(tb, ctx, hr) != rules.DecisionStand
		}
	}
	e.run()

	fill := bigFill(e.d, banqueCards)
	o := BanqueOdds{Strategy: st, Deals: fill[0], BankerNaturals: new(big.Int)}
	var x big.Int
	for r := 0; r < 3; r++ {
		for l := 0; l < 3; l++ {
			n := new(big.Int)
			for k := range e.acc {
				if a := e.acc[k][r*3+l]; !a.zero() {
					n.Add(n, x.Mul(a.big(), fill[k]))
				}
			}
			o.Outcomes[r][l] = n
		}
	}
	o.BankerNaturals.Mul(e.naturals.big(), fill[2])
	o.Bets = banqueBets(o)
	return o, nil
}

func banqueBets(o BanqueOdds) []BetOdds {
	deals := new(big.Rat).SetInt(o.Deals)
	bet := func(name string, win, lose *big.Int) BetOdds {
		push := new(big.Int).Sub(o.Deals, win)
		push.Sub(push, lose)
		ev := new(big.Rat).SetInt(new(big.Int).Sub(win, lose))
		return BetOdds{Bet: name, Pays: "1 to 1", Win: win, Lose: lose, Push: push, EV: ev.Quo(ev, deals)}
	}
	// Source: RULES.md BQ-BETS (against the bank on one table, even
	// money), CF-STANDOFF, BQ-CHEVAL (wins only if the bank loses to both,
	// loses only if the bank beats both)
	return []BetOdds{
		bet("right", o.Table(rules.TableRight, rules.OutcomeBankLoses), o.Table(rules.TableRight, rules.OutcomeBankWins)),
		bet("left", o.Table(rules.TableLeft, rules.OutcomeBankLoses), o.Table(rules.TableLeft, rules.OutcomeBankWins)),
		bet("cheval", new(big.Int).Set(o.Count(rules.OutcomeBankLoses, rules.OutcomeBankLoses)),
			new(big.Int).Set(o.Count(rules.OutcomeBankWins, rules.OutcomeBankWins))),
	}
}

// u128 is an unsigned 128-bit accumulator of weights.
type u128 struct{ hi, lo uint64 }

// addMul adds x*y.
func (a *u128) addMul(x, y uint64) {
	h, l := bits.Mul64(x, y)
	var c uint64
	a.lo, c = bits.Add64(a.lo, l, 0)
	a.hi += h + c
}

func (a u128) zero() bool { return a.hi == 0 && a.lo == 0 }

func (a u128) big() *big.Int {
	n := new(big.Int).SetUint64(a.hi)
	n.Lsh(n, 64)
	return n.Or(n, new(big.Int).SetUint64(a.lo))
}

// bigFill is deck.fill without overflow: fill[k] is the number of
// orderings of the depth-k positions a coup that used k cards leaves
// unused, falling(N-k, depth-k) (or N^(depth-k) for an infinite shoe).
func bigFill(d deck, depth int) []*big.Int {
	f := make([]*big.Int, depth+1)
	for k := 0; k <= depth; k++ {
		w := big.NewInt(1)
		for j := k; j < depth; j++ {
			if d.inf {
				w.Mul(w, big.NewInt(d.n))
			} else {
				w.Mul(w, big.NewInt(d.n-int64(j)))
			}
		}
		f[k] = w
	}
	return f
}

// bqHand is a table's hand as the rest of the coup sees it.
type bqHand struct {
	natural bool // a two-card 8 or 9: final is that total
	final   int  // the final total
	ctx     int  // the third card's value, or stood (also for a natural)
	cards   int  // 2 or 3
}

// bqLeft is one class of left hands of a memoised composition: w is the
// weight of the left hands of the class, b3[v] the weight of those hands
// followed by a banker's third card of value v.
type bqLeft struct {
	bqHand
	w  uint64
	b3 [10]uint64
}

// bqKey is a memoised composition; ctx records whether the classes keep
// the left hand's third card (the banker may play against it).
type bqKey struct {
	c   [10]int64
	ctx bool
}

type banqueEnum struct {
	st          BanqueStrategy
	d           deck
	bankerDraws [8][11]bool
	memo        map[bqKey][]bqLeft
	// acc[k][r*3+l] sums the weights of the coups that used k cards and
	// ended r on the right, l on the left (outcome indices).
	acc      [banqueCards + 1][9]u128
	naturals u128
}

// pairs calls f for every unordered pair of values a <= b still in the
// deck, with the weight of dealing them into two ordered positions, the
// two cards removed during f.
func (d *deck) pairs(f func(a, b int, w uint64)) {
	for a := 0; a < 10; a++ {
		wa := d.take(a)
		if wa == 0 {
			continue
		}
		for b := a; b < 10; b++ {
			wb := d.take(b)
			if wb == 0 {
				continue
			}
			w := uint64(wa * wb)
			if a != b {
				w *= 2 // a then b, or b then a
			}
			f(a, b, w)
			d.put(b)
		}
		d.put(a)
	}
}

// hands calls f for every table hand that can be dealt from d under st,
// with its weight, the hand's cards removed during f.
func (e *banqueEnum) hands(f func(h bqHand, w uint64)) {
	e.d.pairs(func(a, b int, w uint64) {
		t := (a + b) % 10
		if t >= 8 {
			// Source: RULES.md CF-NATURAL-PLAYER
			f(bqHand{natural: true, final: t, ctx: stood, cards: 2}, w)
			return
		}
		if !e.st.punterDraws(t) {
			f(bqHand{final: t, ctx: stood, cards: 2}, w)
			return
		}
		for v := 0; v < 10; v++ {
			w3 := e.d.take(v)
			if w3 == 0 {
				continue
			}
			f(bqHand{final: (t + v) % 10, ctx: v, cards: 3}, w*uint64(w3))
			e.d.put(v)
		}
	})
}

func (e *banqueEnum) run() {
	e.d.pairs(func(b1, b2 int, wb uint64) {
		tb := (b1 + b2) % 10
		if tb >= 8 {
			// Source: RULES.md CF-NATURAL-BANKER (both tables compared with
			// the banker's natural; nobody draws)
			e.naturals.addMul(wb, 1)
			e.d.pairs(func(r1, r2 int, wr uint64) {
				o := outcomeIndex((r1+r2)%10, tb) * 3
				e.d.pairs(func(l1, l2 int, wl uint64) {
					e.acc[6][o+outcomeIndex((l1+l2)%10, tb)].addMul(wb*wr, wl)
				})
			})
			return
		}
		e.hands(func(r bqHand, wr uint64) {
			left := e.left(e.st.followLeft() || r.natural)
			w := wb * wr
			for i := range left {
				l := &left[i]
				if r.natural && l.natural {
					// Both tables settled on naturals: the banker does not play.
					e.acc[6][outcomeIndex(r.final, tb)*3+outcomeIndex(l.final, tb)].addMul(w, l.w)
					continue
				}
				// Source: RULES.md BQ-PLAY (the banker plays against one
				// table: the followed one, or the other if it has a natural)
				ctx := r.ctx
				if e.st.followLeft() && !l.natural || r.natural {
					ctx = l.ctx
				}
				k := 2 + r.cards + l.cards
				if !e.bankerDraws[tb][ctx] {
					e.acc[k][banqueOutcome(r, l.bqHand, tb, tb)].addMul(w, l.w)
					continue
				}
				for v, wv := range l.b3 {
					if wv != 0 {
						e.acc[k+1][banqueOutcome(r, l.bqHand, tb, (tb+v)%10)].addMul(w, wv)
					}
				}
			}
		})
	})
}

// banqueOutcome is the outcome index r*3+l for tables r and l against a
// banker with two-card total tb and final total fb.
func banqueOutcome(r, l bqHand, tb, fb int) int {
	res := func(h bqHand) int {
		if h.natural {
			// Source: RULES.md CF-NATURAL-PLAYER (settled against the
			// banker's two cards)
			return outcomeIndex(h.final, tb)
		}
		// Source: RULES.md CF-RESULT
		return outcomeIndex(h.final, fb)
	}
	return res(r)*3 + res(l)
}

// left returns the classes of left hands, each with the banker's third
// card, dealt from the current composition; withCtx keeps the left hand's
// third card apart.
func (e *banqueEnum) left(withCtx bool) []bqLeft {
	key := bqKey{c: e.d.c, ctx: withCtx}
	if l, ok := e.memo[key]; ok {
		return l
	}
	// Class index: natural 8/9 -> 0/1; else 2 + (ctx*10 + final) with ctx
	// 0..10 when withCtx, or 2 + (cards-2)*10 + final without.
	var cls [2 + 11*10]bqLeft
	e.hands(func(h bqHand, w uint64) {
		i := h.final - 8
		if !h.natural {
			if withCtx {
				i = 2 + h.ctx*10 + h.final
			} else {
				i = 2 + (h.cards-2)*10 + h.final
			}
		}
		c := &cls[i]
		c.bqHand = h
		if !withCtx {
			c.ctx = stood
		}
		c.w += w
		for v := 0; v < 10; v++ {
			c.b3[v] += w * uint64(e.d.c[v])
		}
	})
	var l []bqLeft
	for _, c := range cls {
		if c.w != 0 {
			l = append(l, c)
		}
	}
	e.memo[key] = l
	return l
}
