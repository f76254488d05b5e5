package odds

import "errors"

// The catalogue of errors returned by this package; test with errors.Is.
var (
	// ErrInvalidShoe is returned for a shoe composition with a negative
	// count, too few cards for a coup (6; 4 for advice), more than
	// MaxCards cards, or a composition string that does not parse.
	ErrInvalidShoe = errors.New("odds: invalid shoe")

	// ErrIllegalCoup is returned by Advise for a coup the rules engine
	// rejects (it also wraps rules.ErrIllegalState), or whose cards are not
	// consistent with the shoe composition.
	ErrIllegalCoup = errors.New("odds: illegal coup")

	// ErrNoChoice is returned by Advise when the coup does not wait for a
	// player's or banker's choice.
	ErrNoChoice = errors.New("odds: no choice to advise")

	// ErrInvalidStrategy is returned for a strategy probability outside
	// 0..1.
	ErrInvalidStrategy = errors.New("odds: invalid strategy")

	// ErrInvalidStakes is returned by AdviseBanque for a negative stake.
	ErrInvalidStakes = errors.New("odds: invalid stakes")
)
