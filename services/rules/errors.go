package rules

import "errors"

// The catalogue of errors returned by this package. Returned errors wrap one
// or more of these sentinels; test them with errors.Is.
var (
	// ErrInvalidCard is returned for a card outside the 52 of a standard deck,
	// an unparseable card string, or a card index outside 0..51.
	ErrInvalidCard = errors.New("rules: invalid card")

	// ErrIllegalState is returned by NextStep when a Coup could not have been
	// reached by following the rules (CF-DEAL, HAND-SIZE, CF-NATURAL-*,
	// CF-PLAYER-DRAW, CF-BANKER-DRAW, CF-BANCO-FREEDOM). Every NextStep error
	// wraps it.
	ErrIllegalState = errors.New("rules: illegal coup state")

	// ErrInvalidAmount is returned for a bank or bet that is not positive.
	ErrInvalidAmount = errors.New("rules: invalid amount")

	// ErrBetsExceedBank is returned when the bets of a coup total more than
	// the bank (CF-BET-LIMIT).
	ErrBetsExceedBank = errors.New("rules: bets exceed the bank")

	// ErrInvalidOutcome is returned for an Outcome that is not one of the
	// declared constants.
	ErrInvalidOutcome = errors.New("rules: invalid outcome")

	// ErrInvalidHouseRules is returned for house rules out of range: a
	// commission outside 0..10000 basis points or an unknown rounding mode.
	ErrInvalidHouseRules = errors.New("rules: invalid house rules")

	// ErrOverflow is returned when an amount would not fit in an int64.
	ErrOverflow = errors.New("rules: amount overflow")
)
