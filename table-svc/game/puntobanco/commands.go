package puntobanco

import (
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Reasons of refusals: chemmy.table.v1.ErrorReason names without the
// prefix, each named after its value (package game's TestCoreReasons
// checks both, and that a refusal names each).
const (
	ReasonInvalidArgument   = "INVALID_ARGUMENT"
	ReasonInvalidHouseRule  = "INVALID_HOUSE_RULE"
	ReasonInvalidAmount     = "INVALID_AMOUNT"
	ReasonWrongState        = "WRONG_STATE"
	ReasonAlreadySeated     = "ALREADY_SEATED"
	ReasonTableFull         = "TABLE_FULL"
	ReasonNotSeated         = "NOT_SEATED"
	ReasonSpotNotOffered    = "SPOT_NOT_OFFERED"
	ReasonBetOutOfLimits    = "BET_OUT_OF_LIMITS"
	ReasonHouseLimitReached = "HOUSE_LIMIT_REACHED"
	ReasonCoupNotInPlay     = "COUP_NOT_IN_PLAY"
	ReasonTableClosed       = "TABLE_CLOSED"
)

// Commands of punto banco.
type (
	// Join seats a player (optional: anyone may bet).
	Join struct{ PlayerID string }
	// Leave gives up a seat; the player's bets stay in the coup.
	Leave struct{ PlayerID string }
	// PlaceBet puts a stake on a spot. Without HoldID it is checked and
	// answered with a game.Hold; the shell applies it again with the
	// hold's id.
	PlaceBet struct {
		PlayerID string
		Spot     Spot
		Amount   int64
		HoldID   string
	}
	// Settled is the wallet's settlement of the coup: per bet (in order)
	// what it won, paid in commission, and lost; the house's net.
	Settled struct {
		Bets       []Bet
		Commission int64
		HouseNet   int64
	}
	// Void voids the coup in play before its settlement (staff).
	Void struct {
		CoupID, Reason, By, ByRole string
	}
	// Close closes the table between coups (staff).
	Close struct {
		Reason, By, ByRole string
	}
)

// WithHold implements game.HoldCommand.
func (c PlaceBet) WithHold(holdID string) game.Command { c.HoldID = holdID; return c }

// CommandName implements game.Command.
func (Join) CommandName() string     { return "join" }
func (Leave) CommandName() string    { return "leave" }
func (PlaceBet) CommandName() string { return "place_bet" }
func (Settled) CommandName() string  { return "settled" }
func (Void) CommandName() string     { return "void" }
func (Close) CommandName() string    { return "close" }

// Settle asks the shell to settle the coup at the wallet against the
// house (PB-BANK, PB-BETS); the shell applies Settled. The coup id is the
// settlement's idempotency key.
type Settle struct {
	Coup  Coup
	Rules rules.PuntoBancoRules
}

// EffectName implements game.Effect.
func (Settle) EffectName() string { return "settle" }

// Outcome of Apply: the new State and its Events, or the game.Hold the
// command waits for (game.Outcome).
type Outcome = game.Outcome[State]

// VoidedCoup implements game.Voiding: the coup the void names.
func (c Void) VoidedCoup() string { return c.CoupID }
