package rules

// Decision is what the tableau says a hand does next.
type Decision int

// The three decisions. The zero value is not a decision.
const (
	DecisionStand  Decision = iota + 1 // non: the hand keeps its cards
	DecisionDraw                       // carte: the hand takes a third card
	DecisionOption                     // the hand's holder chooses draw or stand
)

// String returns "stand", "draw", "option" or "invalid".
func (d Decision) String() string {
	switch d {
	case DecisionStand:
		return "stand"
	case DecisionDraw:
		return "draw"
	case DecisionOption:
		return "option"
	}
	return "invalid"
}

// PlayerDecision is the player's tableau for a two-card total with no
// natural on the table: draw on 0-4, option on 5, stand on 6-7
// (CF-PLAYER-DRAW). Totals 8 and 9 are naturals and never reach the
// tableau; they, and any total outside 0..9, return DecisionStand.
func PlayerDecision(total int) Decision {
	switch {
	case total >= 0 && total <= 4:
		// Source: RULES.md CF-PLAYER-DRAW
		return DecisionDraw
	case total == 5:
		// Source: RULES.md CF-PLAYER-DRAW (option on 5)
		return DecisionOption
	default:
		// Source: RULES.md CF-PLAYER-DRAW (stand on 6-7; 8-9 are naturals)
		return DecisionStand
	}
}

// BankerDecision is the banker's tableau: his two-card total (0..7) against
// the player's third card, or nil when the player stood (CF-BANKER-DRAW).
//
// The option cells are 3 after giving a 9 (hr.BankerOption3vs9) and 5 after
// giving a 4 (hr.BankerOption5vs4); with the option house rule off the
// banker draws in that cell. Banco free play (CF-BANCO-FREEDOM) is not
// applied here; NextStep applies it. A banker total outside 0..7 (8 and 9
// are naturals) or an invalid third card returns DecisionStand.
func BankerDecision(bankerTotal int, playerThird *Card, hr HouseRules) Decision {
	if bankerTotal < 0 || bankerTotal > 7 {
		return DecisionStand
	}
	if playerThird == nil {
		// Source: RULES.md CF-BANKER-DRAW (player stood: draw 0-5, stand 6-7)
		return drawUpTo(bankerTotal, 5)
	}
	if !playerThird.Valid() {
		return DecisionStand
	}
	switch playerThird.Value() {
	case 0, 1:
		// Source: RULES.md CF-BANKER-DRAW (third card 0 or 1: draw 0-3, stand 4-7)
		return drawUpTo(bankerTotal, 3)
	case 2, 3:
		// Source: RULES.md CF-BANKER-DRAW (third card 2 or 3: draw 0-4, stand 5-7)
		return drawUpTo(bankerTotal, 4)
	case 4:
		if bankerTotal == 5 {
			// Source: RULES.md CF-BANKER-DRAW (option 5 vs 4, house rule
			// banker_option_5_vs_4; off: the banker draws, 004)
			if hr.BankerOption5vs4 {
				return DecisionOption
			}
			return DecisionDraw
		}
		// Source: RULES.md CF-BANKER-DRAW (third card 4: draw 0-5, stand 6-7)
		return drawUpTo(bankerTotal, 5)
	case 5:
		// Source: RULES.md CF-BANKER-DRAW (third card 5: draw 0-5, stand 6-7)
		return drawUpTo(bankerTotal, 5)
	case 6, 7:
		// Source: RULES.md CF-BANKER-DRAW (third card 6 or 7: draw 0-6, stand 7)
		return drawUpTo(bankerTotal, 6)
	case 8:
		// Source: RULES.md CF-BANKER-DRAW (third card 8: draw 0-2, stand 3-7)
		return drawUpTo(bankerTotal, 2)
	default: // 9
		if bankerTotal == 3 {
			// Source: RULES.md CF-BANKER-DRAW (option 3 vs 9, house rule
			// banker_option_3_vs_9; off: the banker draws, 004)
			if hr.BankerOption3vs9 {
				return DecisionOption
			}
			return DecisionDraw
		}
		// Source: RULES.md CF-BANKER-DRAW (third card 9: draw 0-2, stand 4-7)
		return drawUpTo(bankerTotal, 2)
	}
}

// drawUpTo is one row of the banker's tableau: draw on 0..limit, stand above.
func drawUpTo(total, limit int) Decision {
	if total <= limit {
		return DecisionDraw
	}
	return DecisionStand
}
