package rules

import "fmt"

// Rule IDs of baccarat banque.
const (
	RuleBQHands  = "BQ-HANDS"
	RuleBQPlay   = "BQ-PLAY"
	RuleBQBets   = "BQ-BETS"
	RuleBQCheval = "BQ-CHEVAL"
	RuleBQBank   = "BQ-BANK"
)

// Table is one of the two punters' tables of baccarat banque.
type Table int

// The tables and bets of baccarat banque. The zero value is not a table.
const (
	TableRight Table = iota + 1 // the right table, played first
	TableLeft                   // the left table
	TableBoth                   // à cheval: a bet on both tables (BQ-CHEVAL); not a hand
)

// String returns "right", "left", "cheval" or "invalid".
func (t Table) String() string {
	switch t {
	case TableRight:
		return "right"
	case TableLeft:
		return "left"
	case TableBoth:
		return "cheval"
	}
	return "invalid"
}

// BanqueCoup is the state of the three hands of a banque coup (BQ-HANDS).
type BanqueCoup struct {
	// Right, Left and Banker are the hands in deal order (0..3 cards).
	Right, Left, Banker []Card
	// RightStood and LeftStood record a punter's "non" on 5.
	RightStood, LeftStood bool
	// BankerStood records the banker's "non".
	BankerStood bool
}

// BanqueStep is the answer of NextStepBanque.
type BanqueStep struct {
	// Kind is what the coup waits for: StepDealPlayer (a card to Hand),
	// StepDealBanker, StepPlayerChoice (Hand's punter on 5),
	// StepBankerChoice or StepDone.
	Kind StepKind
	// Hand is the punters' table the step concerns (deal or choice).
	Hand Table
	// Right and Left are each table's result from the bank's side; set
	// with StepDone.
	Right, Left Outcome
	// Rule is the RULES.md ID that decided the step.
	Rule string
}

// NextStepBanque is the hand state machine of baccarat banque (BQ-*). The
// sources leave some points to reading; the choices made here:
//
//   - Deal (BQ-HANDS, by analogy with CF-DEAL): one card at a time to the
//     right table, the left table and the banker, twice round.
//   - A banker's natural ends the coup: both tables are compared with it
//     at two cards (CF-NATURAL-BANKER).
//   - A punter's natural is shown at once and settled against the
//     banker's first two cards (CF-NATURAL-PLAYER); that table takes no
//     further part, and the banker's third card does not change its result.
//   - Otherwise the right hand plays first, then the left, each by the
//     chemin de fer player rules: draw 0-4, choice on 5, stand 6-7
//     (BQ-PLAY, CF-PLAYER-DRAW).
//   - Then the banker chooses freely to draw or stand (BQ-PLAY), unless
//     both tables had naturals.
//
// Errors wrap ErrIllegalState, as NextStep's.
func NextStepBanque(c BanqueCoup) (BanqueStep, error) {
	hands := []struct {
		cards []Card
		name  string
	}{{c.Right, "right"}, {c.Left, "left"}, {c.Banker, "banker"}}
	for _, h := range hands {
		for i, card := range h.cards {
			if !card.Valid() {
				return BanqueStep{}, bqIllegal(RuleBQHands, "%w: %s card %d is %+v", ErrInvalidCard, h.name, i, card)
			}
		}
		if len(h.cards) > maxHand {
			// Source: RULES.md HAND-SIZE
			return BanqueStep{}, bqIllegal(RuleHandSize, "%s hand has %d cards", h.name, len(h.cards))
		}
	}
	nr, nl, nb := len(c.Right), len(c.Left), len(c.Banker)
	if nr < 2 || nl < 2 || nb < 2 {
		// Source: RULES.md BQ-HANDS (right, left, banker, one card at a time)
		if c.RightStood || c.LeftStood || c.BankerStood {
			return BanqueStep{}, bqIllegal(RuleBQHands, "a hand stood before the deal was complete")
		}
		switch {
		case nr == nl && nl == nb:
			return BanqueStep{Kind: StepDealPlayer, Hand: TableRight, Rule: RuleBQHands}, nil
		case nr == nl+1 && nl == nb:
			return BanqueStep{Kind: StepDealPlayer, Hand: TableLeft, Rule: RuleBQHands}, nil
		case nr == nl && nl == nb+1:
			return BanqueStep{Kind: StepDealBanker, Rule: RuleBQHands}, nil
		}
		return BanqueStep{}, bqIllegal(RuleBQHands, "deal out of order: right %d, left %d, banker %d cards", nr, nl, nb)
	}
	bankerTwo := Total(c.Banker[:2])
	if bankerTwo >= 8 {
		// Source: RULES.md CF-NATURAL-BANKER (the banker shows at once)
		if nr > 2 || nl > 2 || nb > 2 || c.RightStood || c.LeftStood || c.BankerStood {
			return BanqueStep{}, bqIllegal(RuleNaturalBanker, "play continued after the banker's natural")
		}
		return BanqueStep{Kind: StepDone, Right: Compare(Total(c.Right), bankerTwo), Left: Compare(Total(c.Left), bankerTwo), Rule: RuleNaturalBanker}, nil
	}
	// The punters' hands, right first (BQ-PLAY).
	punters := []struct {
		cards []Card
		stood bool
		t     Table
	}{{c.Right, c.RightStood, TableRight}, {c.Left, c.LeftStood, TableLeft}}
	naturals := 0
	for i, p := range punters {
		two := Total(p.cards[:2])
		if two >= 8 {
			// Source: RULES.md CF-NATURAL-PLAYER (a natural is shown at once)
			if len(p.cards) > 2 || p.stood {
				return BanqueStep{}, bqIllegal(RuleNaturalPlayer, "%v hand played on after a natural", p.t)
			}
			naturals++
			continue
		}
		pd := PlayerDecision(two)
		switch {
		case len(p.cards) == 3:
			if p.stood || pd == DecisionStand {
				return BanqueStep{}, bqIllegal(RulePlayerDraw, "%v hand drew on %d", p.t, two)
			}
		case p.stood:
			if pd == DecisionDraw {
				return BanqueStep{}, bqIllegal(RulePlayerDraw, "%v hand stood on %d", p.t, two)
			}
		case pd != DecisionStand:
			// Undecided: nothing after it may have happened.
			if i == 0 && (len(c.Left) > 2 || c.LeftStood) || nb > 2 || c.BankerStood {
				return BanqueStep{}, bqIllegal(RuleBQPlay, "a later hand acted before the %v hand", p.t)
			}
			if pd == DecisionDraw {
				// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (draw on 0-4)
				return BanqueStep{Kind: StepDealPlayer, Hand: p.t, Rule: RuleBQPlay}, nil
			}
			// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (option on 5)
			return BanqueStep{Kind: StepPlayerChoice, Hand: p.t, Rule: RuleBQPlay}, nil
		}
	}
	if naturals == 2 {
		// Both tables settled on naturals: the banker has nothing to play for.
		if nb > 2 || c.BankerStood {
			return BanqueStep{}, bqIllegal(RuleNaturalPlayer, "banker played after two naturals")
		}
	} else if nb == 2 && !c.BankerStood {
		// Source: RULES.md BQ-PLAY (the banker may draw or stand freely)
		return BanqueStep{Kind: StepBankerChoice, Rule: RuleBQPlay}, nil
	} else if nb == 3 && c.BankerStood {
		return BanqueStep{}, bqIllegal(RuleBQPlay, "banker stood but has a third card")
	}
	bankerFinal := Total(c.Banker)
	result := func(cards []Card) Outcome {
		if Total(cards[:2]) >= 8 && len(cards) == 2 {
			// Source: RULES.md CF-NATURAL-PLAYER (settled against the banker's two cards)
			return Compare(Total(cards), bankerTwo)
		}
		// Source: RULES.md CF-RESULT
		return Compare(Total(cards), bankerFinal)
	}
	return BanqueStep{Kind: StepDone, Right: result(c.Right), Left: result(c.Left), Rule: RuleResult}, nil
}

func bqIllegal(rule, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %w", ErrIllegalState, rule, fmt.Errorf(format, args...))
}
