package rules

// Total is the total of a hand: the sum of its card values modulo 10, 0..9.
// Invalid cards count 0 (see Card.Value); NextStep rejects them before
// totalling.
func Total(cards []Card) int {
	// Source: RULES.md HAND-TOTAL
	t := 0
	for _, c := range cards {
		t += c.Value()
	}
	return t % 10
}

// IsNatural reports whether cards is a natural: exactly two cards totalling
// 8 (la petite) or 9 (la grande).
func IsNatural(cards []Card) bool {
	// Source: RULES.md CF-NATURAL-PLAYER, CF-NATURAL-BANKER
	return len(cards) == 2 && Total(cards) >= 8
}

// Outcome is the result of a coup from the bank's side.
type Outcome int

// The three outcomes of a coup. The zero value is not an outcome.
const (
	OutcomeBankWins  Outcome = iota + 1 // the banker's hand is nearer 9 (CF-BANK-WINS)
	OutcomeBankLoses                    // the player's hand is nearer 9 (CF-BANK-LOSES)
	OutcomeStandOff                     // equal totals (CF-STANDOFF)
)

// Valid reports whether o is one of the declared outcomes.
func (o Outcome) Valid() bool { return o >= OutcomeBankWins && o <= OutcomeStandOff }

// String returns "bank_wins", "bank_loses", "stand_off" or "invalid".
func (o Outcome) String() string {
	switch o {
	case OutcomeBankWins:
		return "bank_wins"
	case OutcomeBankLoses:
		return "bank_loses"
	case OutcomeStandOff:
		return "stand_off"
	}
	return "invalid"
}

// Compare decides a coup from the final totals (0..9) of the player's and
// the banker's hands: the hand nearer 9 wins, equal totals stand off.
// Naturals compare the same way (9 beats 8), so Compare also settles
// CF-NATURAL-PLAYER and CF-NATURAL-BANKER.
func Compare(playerTotal, bankerTotal int) Outcome {
	switch {
	case playerTotal == bankerTotal:
		// Source: RULES.md CF-STANDOFF
		return OutcomeStandOff
	case bankerTotal > playerTotal:
		// Source: RULES.md CF-RESULT
		return OutcomeBankWins
	default:
		// Source: RULES.md CF-RESULT
		return OutcomeBankLoses
	}
}
