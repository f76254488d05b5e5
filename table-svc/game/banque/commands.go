package banque

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
	ReasonNotYourTurn       = "NOT_YOUR_TURN"
	ReasonBetExceedsBank    = "BET_EXCEEDS_BANK"
	ReasonBankBelowMinimum  = "BANK_BELOW_MINIMUM"
	ReasonBankerCannotBet   = "BANKER_CANNOT_BET"
	ReasonNotBanker         = "NOT_BANKER"
	ReasonBidTooLow         = "BID_TOO_LOW"
	ReasonHouseLimitReached = "HOUSE_LIMIT_REACHED"
	ReasonBetOutOfLimits    = "BET_OUT_OF_LIMITS"
	ReasonCoupNotInPlay     = "COUP_NOT_IN_PLAY"
	ReasonTableClosed       = "TABLE_CLOSED"
)

// Commands of baccarat banque.
type (
	// Join seats a player on a side (right or left), at the end of that
	// side (farthest from the banker).
	Join struct {
		PlayerID string
		Side     Side
	}
	// Leave gives up a seat: not by the banker, the highest bidder, a
	// punter with a bet in the coup or the holder of a hand in play.
	Leave struct{ PlayerID string }
	// Bid bids for the bank in an auction (BQ-BANK); Amount 0 means the
	// player will not bid in this auction. A bid without HoldID is
	// answered with a game.Hold of Amount.
	Bid struct {
		PlayerID string
		Amount   int64
		HoldID   string
	}
	// FeeCharged: the wallet charged the auction fee (ChargeFee); Fee is
	// what it took.
	FeeCharged struct{ Fee int64 }
	// FeeRefused: the wallet refused the fee (the winner's available
	// balance cannot pay it): his bid is released, the auction reopens.
	FeeRefused struct{ Reason string }
	// PlaceBet is a punter's bet in his betting turn, against the bank on
	// a side or à cheval. Without HoldID it is checked and answered with a
	// game.Hold; the shell applies it again with the hold's id.
	PlaceBet struct {
		PlayerID string
		Side     Side
		Amount   int64
		HoldID   string
	}
	// CallBanco is a banco on both tables (house rule BancoBothTables):
	// the punter in turn bets the whole bank à cheval, as the coup's
	// first bet; with a hold as PlaceBet.
	CallBanco struct {
		PlayerID string
		HoldID   string
	}
	// Pass declines a punter's betting turn.
	Pass struct{ PlayerID string }
	// Decide is a draw ("carte", Draw) or stand ("non") of the hand's
	// player on 5, or of the banker on his hand.
	Decide struct {
		PlayerID string
		Hand     Hand
		Draw     bool
	}
	// PassBank gives up the bank between coups (BQ-BANK): the bank and its
	// winnings return to the banker, the bank is auctioned again.
	PassBank struct{ PlayerID string }
	// Settled is the wallet's SettleBanque answer: per bet (in order) what
	// it won and lost; the bank's winnings (negative: losses) before
	// commission, the commission, and the bank hold's new amount.
	Settled struct {
		Bets           []Bet
		BankerWinnings int64
		Commission     int64
		NewBank        int64
	}
	// Void voids the coup in play before its settlement (staff, CF-ERROR).
	Void struct {
		CoupID, Reason, By, ByRole string
	}
	// Close closes the table between coups (staff): bids and bank returned.
	Close struct {
		Reason, By, ByRole string
	}
)

// WithHold implements game.HoldCommand.
func (c Bid) WithHold(holdID string) game.Command { c.HoldID = holdID; return c }

// WithHold implements game.HoldCommand.
func (c PlaceBet) WithHold(holdID string) game.Command { c.HoldID = holdID; return c }

var _, _ game.HoldCommand = Bid{}, PlaceBet{}

// WithHold implements game.HoldCommand.
func (c CallBanco) WithHold(holdID string) game.Command { c.HoldID = holdID; return c }

// CommandName implements game.Command.
func (Join) CommandName() string       { return "join" }
func (CallBanco) CommandName() string  { return "call_banco" }
func (Leave) CommandName() string      { return "leave" }
func (Bid) CommandName() string        { return "bid" }
func (FeeCharged) CommandName() string { return "fee_charged" }
func (FeeRefused) CommandName() string { return "fee_refused" }
func (PlaceBet) CommandName() string   { return "place_bet" }
func (Pass) CommandName() string       { return "pass" }
func (Decide) CommandName() string     { return "decide" }
func (PassBank) CommandName() string   { return "pass_bank" }
func (Settled) CommandName() string    { return "settled" }
func (Void) CommandName() string       { return "void" }
func (Close) CommandName() string      { return "close" }

// ChargeFee asks the shell to charge the auction's winner the bank fee:
// wallet ChargeFee{request_id: RequestID, account of PlayerID, fee_type:
// FEE_TYPE_BANK_AUCTION, bid: Bid, rounding: Rounding}. Fee is what it
// should come to (rules.BanqueAuctionFee, 2.5% of Bid). The shell applies
// FeeCharged, or FeeRefused when the wallet answers INSUFFICIENT_FUNDS.
type ChargeFee struct {
	RequestID string
	PlayerID  string
	Bid       int64
	Fee       int64
	Rounding  rules.Rounding
}

// SettleBet is one bet of a settlement.
type SettleBet struct {
	PlayerID string
	HoldID   string
	Amount   int64
	Side     Side
}

// Settle asks the shell to settle the coup: wallet SettleBanque{coup_id:
// CoupID, bank_hold_id: BankHoldID ("" with a house bank: house:bank
// pays), bets (hold_id, amount, side as BanqueSide), right, left (from the
// bank's side), commission_bp, commission_rounding}. Bank is the bank at
// stake (0 with a house bank). The shell applies Settled.
type Settle struct {
	CoupID       string
	BankHoldID   string
	Bank         int64
	Bets         []SettleBet
	Right, Left  rules.Outcome
	CommissionBP int64
	Rounding     rules.Rounding
}

// EffectName implements game.Effect.
func (ChargeFee) EffectName() string { return "charge_fee" }
func (Settle) EffectName() string    { return "settle" }

// Outcome of Apply: the new State and its Events, or the game.Hold the
// command waits for (game.Outcome).
type Outcome = game.Outcome[State]

// VoidedCoup implements game.Voiding: the coup the void names.
func (c Void) VoidedCoup() string { return c.CoupID }
