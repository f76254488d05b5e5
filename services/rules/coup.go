package rules

import "fmt"

// Coup is the state of the hands of one coup, as the table service stores
// it. NextStep reads it; nothing in this package changes it.
type Coup struct {
	// Player is the player's hand in deal order (0..3 cards).
	Player []Card
	// Banker is the banker's hand in deal order (0..3 cards).
	Banker []Card
	// PlayerStood records that the player's holder chose "non" at a
	// StepPlayerChoice. A forced stand (6-7) is inferred by NextStep and
	// need not be set, though setting it is legal.
	PlayerStood bool
	// BankerStood records that the banker chose "non" at a
	// StepBankerChoice. A forced stand is inferred and need not be set.
	BankerStood bool
	// Banco records that the coup is played banco (CF-BANCO); with
	// HouseRules.BancoFreePlay it frees both hands from the tableau
	// (CF-BANCO-FREEDOM).
	Banco bool
}

// StepKind is what a coup waits for next.
type StepKind int

// The steps of a coup. The zero value is not a step.
const (
	StepDealPlayer   StepKind = iota + 1 // deal the next card to the player's hand
	StepDealBanker                       // deal the next card to the banker's hand
	StepPlayerChoice                     // the player's holder chooses draw or stand
	StepBankerChoice                     // the banker chooses draw or stand
	StepDone                             // no more cards; settle Step.Outcome
)

// String returns "deal_player", "deal_banker", "player_choice",
// "banker_choice", "done" or "invalid".
func (k StepKind) String() string {
	switch k {
	case StepDealPlayer:
		return "deal_player"
	case StepDealBanker:
		return "deal_banker"
	case StepPlayerChoice:
		return "player_choice"
	case StepBankerChoice:
		return "banker_choice"
	case StepDone:
		return "done"
	}
	return "invalid"
}

// Step is the answer of NextStep.
type Step struct {
	// Kind is what the coup waits for.
	Kind StepKind
	// Outcome is the result of the coup; set only when Kind is StepDone.
	Outcome Outcome
	// Natural reports that the coup ended on a natural after the deal
	// (CF-NATURAL-PLAYER or CF-NATURAL-BANKER); only with StepDone.
	Natural bool
	// Rule is the RULES.md ID that decided this step, e.g. "CF-DEAL",
	// "CF-PLAYER-DRAW", "CF-BANKER-DRAW", "CF-BANCO-FREEDOM",
	// "CF-NATURAL-PLAYER", "CF-NATURAL-BANKER", "CF-RESULT", "CF-STANDOFF".
	Rule string
}

// Rule IDs of RULES.md as they appear in Step.Rule.
const (
	RuleDeal          = "CF-DEAL"
	RuleHandSize      = "HAND-SIZE"
	RuleNaturalPlayer = "CF-NATURAL-PLAYER"
	RuleNaturalBanker = "CF-NATURAL-BANKER"
	RulePlayerDraw    = "CF-PLAYER-DRAW"
	RuleBankerDraw    = "CF-BANKER-DRAW"
	RuleBancoFreedom  = "CF-BANCO-FREEDOM"
	RuleResult        = "CF-RESULT"
	RuleStandOff      = "CF-STANDOFF"
)

// maxHand is the largest hand (HAND-SIZE).
const maxHand = 3

// NextStep returns what the coup c waits for under the house rules hr, or
// an error wrapping ErrIllegalState when c could not have been reached by
// following the rules. It is the whole hand state machine: the table service
// applies the step (deals a card, records a choice) and calls NextStep again
// until StepDone.
//
// Order: the deal alternates player, banker, player, banker (CF-DEAL). With
// two cards each, a natural ends the coup (CF-NATURAL-PLAYER,
// CF-NATURAL-BANKER). Otherwise the player's hand follows CF-PLAYER-DRAW
// (draw 0-4, option 5, stand 6-7), then the banker's hand follows
// CF-BANKER-DRAW against the player's third card or his stand. In a banco
// coup with hr.BancoFreePlay each hand chooses instead (CF-BANCO-FREEDOM).
// StepDone carries Compare of the final totals.
//
// Illegal states include: an invalid card; a hand over three cards; a deal
// out of P,B,P,B order; a stand flag before the deal is complete; a third
// card or a stand flag after a natural; a player's third card on a forced
// stand, or PlayerStood on a forced draw or with three cards; any banker
// third card or BankerStood while the player's hand is undecided; a banker's
// third card where the tableau says stand, or BankerStood where it says draw
// or with three cards.
func NextStep(c Coup, hr HouseRules) (Step, error) {
	for i, card := range c.Player {
		if !card.Valid() {
			return Step{}, fmt.Errorf("%w: %w: player card %d is %+v", ErrIllegalState, ErrInvalidCard, i, card)
		}
	}
	for i, card := range c.Banker {
		if !card.Valid() {
			return Step{}, fmt.Errorf("%w: %w: banker card %d is %+v", ErrIllegalState, ErrInvalidCard, i, card)
		}
	}
	np, nb := len(c.Player), len(c.Banker)
	if np > maxHand || nb > maxHand {
		// Source: RULES.md HAND-SIZE
		return illegal(RuleHandSize, "player has %d cards, banker %d", np, nb)
	}

	if np < 2 || nb < 2 {
		// Source: RULES.md CF-DEAL (one card at a time, player first, alternately)
		if c.PlayerStood || c.BankerStood {
			return illegal(RuleDeal, "a hand stood before the deal was complete")
		}
		switch np - nb {
		case 0:
			return Step{Kind: StepDealPlayer, Rule: RuleDeal}, nil
		case 1:
			return Step{Kind: StepDealBanker, Rule: RuleDeal}, nil
		default:
			return illegal(RuleDeal, "deal out of order: player %d cards, banker %d", np, nb)
		}
	}

	playerTwo, bankerTwo := Total(c.Player[:2]), Total(c.Banker[:2])
	if playerTwo >= 8 || bankerTwo >= 8 {
		// Source: RULES.md CF-NATURAL-BANKER (only the banker has a natural:
		// he shows at once and wins all bets)
		rule := RuleNaturalBanker
		if playerTwo >= 8 {
			// Source: RULES.md CF-NATURAL-PLAYER (the player shows first; 9
			// beats 8, equal naturals stand off, else all punters win)
			rule = RuleNaturalPlayer
		}
		// A natural ends the coup: no third card, no choice.
		if np > 2 || nb > 2 || c.PlayerStood || c.BankerStood {
			return illegal(rule, "play continued after a natural")
		}
		return Step{Kind: StepDone, Outcome: Compare(playerTwo, bankerTwo), Natural: true, Rule: rule}, nil
	}

	freePlay := c.Banco && hr.BancoFreePlay

	// The player's hand.
	pd, rule := PlayerDecision(playerTwo), RulePlayerDraw
	if freePlay {
		// Source: RULES.md CF-BANCO-FREEDOM (the banco player draws or stands at will)
		pd, rule = DecisionOption, RuleBancoFreedom
	}
	switch {
	case np == 3:
		// Source: RULES.md CF-PLAYER-DRAW (a third card only on a draw or a chosen draw)
		if c.PlayerStood {
			return illegal(rule, "player stood but has a third card")
		}
		if pd == DecisionStand {
			return illegal(rule, "player drew on %d, which stands", playerTwo)
		}
	case c.PlayerStood:
		// Source: RULES.md CF-PLAYER-DRAW (the player must draw on 0-4)
		if pd == DecisionDraw {
			return illegal(rule, "player stood on %d, which draws", playerTwo)
		}
	case pd != DecisionStand:
		// The player's hand is undecided, so the banker cannot have acted.
		// Source: RULES.md CF-BANKER-DRAW (the banker acts after the player)
		if nb == 3 || c.BankerStood {
			return illegal(RuleBankerDraw, "banker acted before the player's hand was decided")
		}
		if pd == DecisionDraw {
			return Step{Kind: StepDealPlayer, Rule: rule}, nil
		}
		return Step{Kind: StepPlayerChoice, Rule: rule}, nil
	}

	// The banker's hand.
	var third *Card
	if np == 3 {
		third = &c.Player[2]
	}
	bd, rule := BankerDecision(bankerTwo, third, hr), RuleBankerDraw
	if freePlay {
		// Source: RULES.md CF-BANCO-FREEDOM (then so may the banker)
		bd, rule = DecisionOption, RuleBancoFreedom
	}
	switch {
	case nb == 3:
		// Source: RULES.md CF-BANKER-DRAW (a third card only on a draw or a chosen draw)
		if c.BankerStood {
			return illegal(rule, "banker stood but has a third card")
		}
		if bd == DecisionStand {
			return illegal(rule, "banker drew on %d against %s, which stands", bankerTwo, thirdString(third))
		}
	case c.BankerStood:
		// Source: RULES.md CF-BANKER-DRAW (the banker must draw in a draw cell)
		if bd == DecisionDraw {
			return illegal(rule, "banker stood on %d against %s, which draws", bankerTwo, thirdString(third))
		}
	case bd == DecisionDraw:
		return Step{Kind: StepDealBanker, Rule: rule}, nil
	case bd == DecisionOption:
		return Step{Kind: StepBankerChoice, Rule: rule}, nil
	}

	out := Compare(Total(c.Player), Total(c.Banker))
	rule = RuleResult
	if out == OutcomeStandOff {
		// Source: RULES.md CF-STANDOFF
		rule = RuleStandOff
	}
	// Source: RULES.md CF-RESULT
	return Step{Kind: StepDone, Outcome: out, Rule: rule}, nil
}

func illegal(rule, format string, args ...any) (Step, error) {
	return Step{}, fmt.Errorf("%w: %s: %s", ErrIllegalState, rule, fmt.Sprintf(format, args...))
}

func thirdString(third *Card) string {
	if third == nil {
		return "player stood"
	}
	return "player's third card " + third.String()
}
