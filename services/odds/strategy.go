package odds

import (
	"fmt"
	"math/big"

	"github.com/chemmy/chemmy/services/rules"
)

// Strategy is how both hands of a chemin de fer coup choose at the cells
// the rules leave to them. Cells the rules decide (under the house rules
// and the banco flag in force) ignore the strategy.
type Strategy struct {
	// PlayerDraw[t] is the probability that the player draws on a
	// two-card total t (0..7). nil means the default: the tableau, and
	// draw on 5 (the RULES.md default when the player's time runs out).
	PlayerDraw [8]*big.Rat
	// BankerDraw[t][ctx] is the probability that the banker draws on a
	// two-card total t (0..7) when the player's third card has value ctx
	// (0..9) or the player stood (ctx 10). nil means the default: the
	// tableau, and draw at an option cell (the RULES.md default).
	BankerDraw [8][11]*big.Rat
}

// ThirdCardStood is the BankerDraw context when the player stood.
const ThirdCardStood = stood

var (
	ratZero = big.NewRat(0, 1)
	ratOne  = big.NewRat(1, 1)
)

// valueCard is a card of value v (0 is a ten).
func valueCard(v int) rules.Card {
	if v == 0 {
		return rules.Card{Rank: rules.Ten}
	}
	return rules.Card{Rank: rules.Rank(v)}
}

// bankerTableau is rules.BankerDecision for a context index.
func bankerTableau(tb, ctx int, hr rules.HouseRules) rules.Decision {
	if ctx == stood {
		return rules.BankerDecision(tb, nil, hr)
	}
	c := valueCard(ctx)
	return rules.BankerDecision(tb, &c, hr)
}

// decisionProb is the probability of drawing for a decision, taking chosen
// (or def when chosen is nil) at an option.
func decisionProb(d rules.Decision, chosen *big.Rat) *big.Rat {
	switch d {
	case rules.DecisionDraw:
		return ratOne
	case rules.DecisionOption:
		if chosen == nil {
			// Source: RULES.md (defaults when a decision's time runs out:
			// the player on 5 draws; the banker at an option cell draws)
			return ratOne
		}
		return chosen
	}
	return ratZero
}

// resolve returns the drawing probabilities of every cell under hr, with
// free play (CF-BANCO-FREEDOM) making every cell a choice.
func (st Strategy) resolve(hr rules.HouseRules, free bool) (p [8]*big.Rat, b [8][11]*big.Rat, err error) {
	check := func(r *big.Rat, what string) error {
		if r != nil && (r.Sign() < 0 || r.Cmp(ratOne) > 0) {
			return fmt.Errorf("%w: %s probability %v", ErrInvalidStrategy, what, r)
		}
		return nil
	}
	for tp := 0; tp < 8; tp++ {
		if err := check(st.PlayerDraw[tp], fmt.Sprintf("player %d", tp)); err != nil {
			return p, b, err
		}
		d := rules.PlayerDecision(tp)
		if free {
			if st.PlayerDraw[tp] != nil {
				d = rules.DecisionOption
			}
		}
		p[tp] = decisionProb(d, st.PlayerDraw[tp])
		for ctx := 0; ctx <= stood; ctx++ {
			if err := check(st.BankerDraw[tp][ctx], fmt.Sprintf("banker %d/%d", tp, ctx)); err != nil {
				return p, b, err
			}
			d := bankerTableau(tp, ctx, hr)
			if free && st.BankerDraw[tp][ctx] != nil {
				d = rules.DecisionOption
			}
			b[tp][ctx] = decisionProb(d, st.BankerDraw[tp][ctx])
		}
	}
	return p, b, nil
}

// PuntoBancoStrategy is the fixed tableau of punto banco (PB-TABLEAU): the
// player draws on 5, the banker draws on 3 after a 9 and on 5 after a 4.
func PuntoBancoStrategy() Strategy {
	var st Strategy
	st.PlayerDraw[5] = ratOne
	st.BankerDraw[3][9] = ratOne
	st.BankerDraw[5][4] = ratOne
	return st
}

// puntoBancoRules are chemin de fer house rules with every option removed
// (PB-TABLEAU).
func puntoBancoRules() rules.HouseRules {
	hr := rules.DefaultHouseRules()
	hr.BankerOption3vs9, hr.BankerOption5vs4, hr.BancoFreePlay = false, false, false
	return hr
}

// Chemin returns the outcome counts of one chemin de fer coup from s when
// both hands follow st under hr; free is a banco coup under
// banco_free_play (CF-BANCO-FREEDOM), where every cell is a choice (cells
// st leaves nil keep the tableau). Errors wrap ErrInvalidShoe or
// ErrInvalidStrategy.
func Chemin(s Shoe, hr rules.HouseRules, st Strategy, free bool) (Counts, error) {
	if err := s.Validate(); err != nil {
		return Counts{}, err
	}
	p, b, err := st.resolve(hr, free)
	if err != nil {
		return Counts{}, err
	}
	return buildTable(s).counts(&p, &b), nil
}
