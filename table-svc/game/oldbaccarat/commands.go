package oldbaccarat

import (
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Reasons of refusals: chemmy.table.v1.ErrorReason names without the
// prefix, each named after its value (package game's TestCoreReasons
// checks both, and that a refusal names each).
const (
	ReasonInvalidArgument  = "INVALID_ARGUMENT"
	ReasonInvalidHouseRule = "INVALID_HOUSE_RULE"
	ReasonInvalidAmount    = "INVALID_AMOUNT"
	ReasonWrongState       = "WRONG_STATE"
	ReasonAlreadySeated    = "ALREADY_SEATED"
	ReasonTableFull        = "TABLE_FULL"
	ReasonNotSeated        = "NOT_SEATED"
	ReasonNotYourTurn      = "NOT_YOUR_TURN"
	ReasonBetExceedsBank   = "BET_EXCEEDS_BANK"
	ReasonBankBelowMinimum = "BANK_BELOW_MINIMUM"
	ReasonBankerCannotBet  = "BANKER_CANNOT_BET"
	ReasonNotBanker        = "NOT_BANKER"
	ReasonBidTooLow        = "BID_TOO_LOW"
	ReasonBetOutOfLimits   = "BET_OUT_OF_LIMITS"
	ReasonCoupNotInPlay    = "COUP_NOT_IN_PLAY"
	ReasonTableClosed      = "TABLE_CLOSED"
)

// Commands of the old baccarat.
type (
	// Join seats a player (the next seat clockwise).
	Join struct{ PlayerID string }
	// Leave gives up a seat. A punter's stake stays in the coup; the
	// banker may leave only between coups, giving up the bank.
	Leave struct{ PlayerID string }
	// Bid offers to hold the bank at Amount (minor units): a bid in the
	// auction (OLD-BANKER), or the offered punter taking the bank after
	// his baccarat (OLD-BACCARAT). Without HoldID it is checked and
	// answered with a game.Hold of Amount; the shell applies it again with
	// the hold's id.
	Bid struct {
		PlayerID string
		Amount   int64
		HoldID   string
	}
	// PassBank: the player will not bid in this auction, or declines the
	// bank offered to him.
	PassBank struct{ PlayerID string }
	// Stake is a punter's stake against the bank (OLD-STAKE), with a hold
	// as Bid.
	Stake struct {
		PlayerID string
		Amount   int64
		HoldID   string
	}
	// PassStake: the punter sits this coup out.
	PassStake struct{ PlayerID string }
	// MoveTopCards is the banker's announcement, after the cut, that he
	// moves N cards from the top to the bottom (OLD-CUT); N 0..MaxMoveTop.
	MoveTopCards struct {
		PlayerID string
		N        int32
	}
	// Decide: the holder of the hand whose draw is due draws one card or
	// stands (OLD-DRAW).
	Decide struct {
		PlayerID string
		Draw     bool
	}
	// MovedToBottom: the shoe did the MoveToBottom asked.
	MovedToBottom struct{}
	// Settled: the wallet carried out the Settle asked; NewBank is the
	// bank hold's amount after it (must equal Settle.NewBank).
	Settled struct{ NewBank int64 }
	// Void voids the coup in play before its settlement (staff): every
	// stake is returned.
	Void struct {
		CoupID, Reason, By, ByRole string
	}
	// Close closes the table between coups (staff): the bank and the bids
	// are returned.
	Close struct {
		Reason, By, ByRole string
	}
)

// WithHold implements game.HoldCommand.
func (c Bid) WithHold(holdID string) game.Command { c.HoldID = holdID; return c }

// WithHold implements game.HoldCommand.
func (c Stake) WithHold(holdID string) game.Command { c.HoldID = holdID; return c }

var _, _ game.HoldCommand = Bid{}, Stake{}

// CommandName implements game.Command.
func (Join) CommandName() string          { return "join" }
func (Leave) CommandName() string         { return "leave" }
func (Bid) CommandName() string           { return "bid" }
func (PassBank) CommandName() string      { return "pass_bank" }
func (Stake) CommandName() string         { return "stake" }
func (PassStake) CommandName() string     { return "pass_stake" }
func (MoveTopCards) CommandName() string  { return "move_top_cards" }
func (Decide) CommandName() string        { return "decide" }
func (MovedToBottom) CommandName() string { return "moved_to_bottom" }
func (Settled) CommandName() string       { return "settled" }
func (Void) CommandName() string          { return "void" }
func (Close) CommandName() string         { return "close" }

// MoveToBottom asks the shoe service to move N (1..52) cards from the top
// of shoe ShoeID to its bottom (OLD-CUT), before the coup's first card.
// RequestID ("<coup_id>/move") makes it idempotent: asked again, the shoe
// moves nothing more. The shell applies MovedToBottom.
type MoveToBottom struct {
	RequestID string
	ShoeID    string
	CoupID    string
	N         int32
}

// Move is one account's net result of a settlement, minor units: > 0 it
// gains, < 0 it pays.
type Move struct {
	PlayerID string
	Amount   int64
}

// StakeHold is a punter's stake and its hold.
type StakeHold struct {
	PlayerID string
	HoldID   string
	Amount   int64
}

// Settle asks the shell to settle the coup at the wallet; the coup id is
// the idempotency key. Amounts in minor units. What it promises:
//
//   - Stakes: every punter's stake hold is resolved (closed): the punter
//     keeps his stake plus his Move when he gains, and pays -Move (at most
//     his stake) out of it when he loses.
//   - BankHoldID, held for the banker at Bank, stays open at NewBank =
//     Bank + the banker's Move (the banker pays out of it, and what he
//     wins joins it); NewBank 0 closes it. NewBank >= 0 always: the bank
//     covers twice the stakes (OLD-STAKE).
//   - Moves: one per punter in Stakes' order, then the banker's last; the
//     sum of Moves is 0 (the money only changes hands). Each punter's is
//     rules.SettleOld's net (even money; the three-way split of OLD-SETTLE
//     when Split); the banker's is its BankerNet.
//   - Outcomes (by punter, in Stakes' order: rules.OldOutcome of his
//     points against the banker's) and Natural (OLD-NATURAL ended the
//     coup) are what the Moves follow from: rules.SettleOldResults of the
//     stakes, Outcomes and Natural gives them (the wallet computes the
//     money from these).
//
// A settlement RPC that posts holds to accounts carries it out: each
// losing stake's -Move posted from its hold to the bank hold's account,
// each winning Move paid from the bank hold to the punter.
type Settle struct {
	CoupID     string
	BankerID   string
	BankHoldID string
	Bank       int64
	NewBank    int64
	Stakes     []StakeHold
	Moves      []Move
	Split      bool
	Outcomes   []rules.Outcome
	Natural    bool
}

// EffectName implements game.Effect.
func (MoveToBottom) EffectName() string { return "move_to_bottom" }

// ReadsOrder implements game.OrderEffect: the move reads the shoe's order
// (OLD-CUT).
func (MoveToBottom) ReadsOrder()  {}
func (Settle) EffectName() string { return "settle" }

// Outcome of Apply: the new State and its Events, or the game.Hold the
// command waits for (game.Outcome).
type Outcome = game.Outcome[State]

// VoidedCoup implements game.Voiding: the coup the void names.
func (c Void) VoidedCoup() string { return c.CoupID }
