package chemindefer

import (
	"time"

	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Reasons of refusals: chemmy.table.v1.ErrorReason names without the
// prefix, each named after its value (package game's TestCoreReasons
// checks both, and that a refusal names each).
const (
	ReasonInvalidArgument   = "INVALID_ARGUMENT"
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
	ReasonCoupNotInPlay     = "COUP_NOT_IN_PLAY"
	ReasonTableClosed       = "TABLE_CLOSED"
)

// The players' and the staff's commands. PlayerID is the player acting
// (the shell has checked who calls); amounts are in minor units. A
// command with a HoldID field waits for its hold (game.HoldCommand):
// without one, Apply answers the game.Hold to place and changes nothing.
type (
	// Join seats a player (from the gallery too). Lot is a seat index
	// drawn by lot in [0, seats after the join) by the shell: it names
	// the first banker when this join offers the first bank and the house
	// rule first_banker is FIRST_BANKER_LOT (CF-FIRST-BANKER (a)).
	Join struct {
		PlayerID string
		Lot      int
	}
	// AcceptBank puts up the bank offered to the player (or a passed bank
	// auctioned at its price, CF-PASS).
	AcceptBank struct {
		PlayerID string
		Amount   int64
		HoldID   string
	}
	// DeclineBank lets the offered bank go on to the next seat, or (in
	// the auction of the first bank) says the player will not bid.
	DeclineBank struct{ PlayerID string }
	// BidBank bids for the first bank in an auction (CF-FIRST-BANKER (b)).
	BidBank struct {
		PlayerID string
		Amount   int64
		HoldID   string
	}
	// PlaceBet covers part or all of what is left of the bank; OverBank
	// bets beyond it, for the banker to answer (CF-BANK-RAISE).
	PlaceBet struct {
		PlayerID string
		Amount   int64
		OverBank bool
		HoldID   string
	}
	// DeclineBet passes the punter's betting turn (or, asked as banco
	// suivi holder, lets another's banco stand).
	DeclineBet struct{ PlayerID string }
	// CallBanco bets the whole bank (CF-BANCO); its hold is the bank at
	// stake.
	CallBanco struct {
		PlayerID string
		HoldID   string
	}
	// DecideDraw is a hand's holder's decision: ChoiceDraw or ChoiceStand
	// (anything else is INVALID_ARGUMENT).
	DecideDraw struct {
		PlayerID string
		Choice   Choice
	}
	// PassBank gives the bank up between coups (CF-PASS).
	PassBank struct{ PlayerID string }
	// RaiseBank answers over-bank bets (CF-BANK-RAISE): Raise grows the
	// bank to cover them, else the excess bets are removed. A raise grows
	// the bank hold first: without Resized, Apply answers the Outcome's
	// Raise (the hold's new size) and changes nothing; the shell resizes
	// the hold and applies the command again with Resized. LostRaises are
	// the wallet request ids of earlier raises whose answer was lost: when
	// the excess is removed the bank hold is brought back to the bank
	// before the deal, by "reset/<id>".
	RaiseBank struct {
		PlayerID   string
		Raise      bool
		Resized    bool
		LostRaises []string
	}
	// JoinGallery adds a spectator to the gallery (CF-GALLERY); a seated
	// player leaves his seat for it.
	JoinGallery struct{ PlayerID string }
	// Leave frees a player's seat (or gallery place) between coups.
	Leave struct{ PlayerID string }
	// Void voids the coup in play before its settlement (CF-ERROR): every
	// bet is returned. By and ByRole name who voided it.
	Void struct {
		CoupID, Reason, By, ByRole string
	}
	// Close closes the table between coups (staff).
	Close struct {
		Reason, By, ByRole string
	}
	// Tick is game.Tick (the time is Input.Now) with the raises whose
	// answer was lost (see RaiseBank): a banker's raise time running out
	// removes the excess bets.
	Tick struct{ LostRaises []string }
)

// The results of the core's own effects.
type (
	// FeesCharged reports the charges of ChargeFees, one per fee in
	// order: Paid, and the fee the wallet charged (minor units).
	FeesCharged struct{ Fees []FeeCharge }
	// HoldsResized: the resizes of ResizeHolds are done.
	HoldsResized struct{}
	// Settled is the wallet's settlement of the coup (SettleCoup): the
	// banker's winnings, the commission, his net and his new bank.
	Settled struct {
		BankerWinnings, Commission, BankerNet, NewBank int64
		// BankReleased: the wallet released the bank hold of a bank
		// that lost with the settlement (CF-LOSE): no void is due.
		BankReleased bool
	}
)

// FeeCharge is the result of one seat fee's charge.
type FeeCharge struct {
	Paid bool
	Fee  int64
}

// CommandName implements game.Command.
func (Join) CommandName() string         { return "join" }
func (AcceptBank) CommandName() string   { return "accept_bank" }
func (DeclineBank) CommandName() string  { return "decline_bank" }
func (BidBank) CommandName() string      { return "bid_bank" }
func (PlaceBet) CommandName() string     { return "place_bet" }
func (DeclineBet) CommandName() string   { return "decline_bet" }
func (CallBanco) CommandName() string    { return "call_banco" }
func (DecideDraw) CommandName() string   { return "decide_draw" }
func (PassBank) CommandName() string     { return "pass_bank" }
func (RaiseBank) CommandName() string    { return "raise_bank" }
func (JoinGallery) CommandName() string  { return "join_gallery" }
func (Leave) CommandName() string        { return "leave" }
func (Void) CommandName() string         { return "void" }
func (Close) CommandName() string        { return "close" }
func (Tick) CommandName() string         { return "tick" }
func (FeesCharged) CommandName() string  { return "fees_charged" }
func (HoldsResized) CommandName() string { return "holds_resized" }
func (Settled) CommandName() string      { return "settled" }

// WithHold implements game.HoldCommand.
func (c AcceptBank) WithHold(id string) game.Command { c.HoldID = id; return c }
func (c BidBank) WithHold(id string) game.Command    { c.HoldID = id; return c }
func (c PlaceBet) WithHold(id string) game.Command   { c.HoldID = id; return c }
func (c CallBanco) WithHold(id string) game.Command  { c.HoldID = id; return c }

// The core's own effects.
type (
	// ChargeFees asks for the stored seat fees to be charged (wallet
	// ChargeFee, FEE_TYPE_HOURLY, each by its ID); the shell applies
	// FeesCharged. A fee the player cannot pay is reported unpaid, never
	// an error: a fee does not hold up the table.
	ChargeFees struct {
		Fees      []SeatFee
		HourlyFee int64
		Rounding  int32
	}
	// ResizeHolds asks for holds to be brought down (bets cut back, a
	// bank hold reset); the shell applies HoldsResized.
	ResizeHolds struct{ Resizes []Resize }
	// Settle asks for the coup to be settled at the wallet (SettleCoup),
	// keyed by the coup id; the shell applies Settled.
	Settle struct {
		CoupID       string
		BankHoldID   string
		Outcome      rules.Outcome
		CommissionBP int64
		Rounding     int32
		// CommissionExempt: first_coup_exempt or hourly_fee (CF-BANK-WINS).
		CommissionExempt bool
		Bets             []Bet
	}
)

// EffectName implements game.Effect.
func (ChargeFees) EffectName() string  { return "charge_fees" }
func (ResizeHolds) EffectName() string { return "resize_holds" }
func (Settle) EffectName() string      { return "settle" }

// StoredFirst reports that the fees were billed by the clock (the seat
// time up to a command's Input.Now): the shell charges them only from a
// stored state, so that a charge made again after a crash is the same
// request with the same seat time.
func (ChargeFees) StoredFirst() bool { return true }

// Raise is the bank hold's new size a RaiseBank waits for.
type Raise struct {
	CoupID string
	HoldID string
	Amount int64
}

// Outcome of Apply: the new State and its Events (game.Outcome), or what
// the command waits for, State then unchanged and Events empty: Hold, the
// hold to place, or Raise, the bank hold's resize (RaiseBank.Resized).
type Outcome struct {
	game.Outcome[State]
	Raise *Raise
}

// turnLimit is a turn's time limit.
func turnLimit(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }

// VoidedCoup implements game.Voiding: the coup the void names.
func (c Void) VoidedCoup() string { return c.CoupID }
