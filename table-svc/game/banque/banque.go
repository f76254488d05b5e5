package banque

import (
	"fmt"
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// MaxBets bounds the bets of one coup (RESOURCE_EXHAUSTED TABLE_FULL
// beyond); with one bet per seated player it is never reached by a
// valid table, and it keeps the state a bounded record.
const MaxBets = 64

// Reasons of refusals (chemmy.table.v1.ErrorReason names).
const (
	ReasonInvalidArgument      = "INVALID_ARGUMENT"
	ReasonInvalidHouseRule     = "INVALID_HOUSE_RULE"
	ReasonHouseRuleUnsupported = "HOUSE_RULE_UNSUPPORTED"
	ReasonInvalidAmount        = "INVALID_AMOUNT"
	ReasonWrongState           = "WRONG_STATE"
	ReasonAlreadySeated        = "ALREADY_SEATED"
	ReasonTableFull            = "TABLE_FULL"
	ReasonNotSeated            = "NOT_SEATED"
	ReasonNotYourTurn          = "NOT_YOUR_TURN"
	ReasonBetExceedsBank       = "BET_EXCEEDS_BANK"
	ReasonBankBelowMinimum     = "BANK_BELOW_MINIMUM"
	ReasonBankerCannotBet      = "BANKER_CANNOT_BET"
	ReasonNotBanker            = "NOT_BANKER"
	ReasonBidTooLow            = "BID_TOO_LOW"
	ReasonHouseLimitReached    = "HOUSE_LIMIT_REACHED"
	ReasonBetOutOfLimits       = "BET_OUT_OF_LIMITS"
	ReasonCoupNotInPlay        = "COUP_NOT_IN_PLAY"
	ReasonTableClosed          = "TABLE_CLOSED"
)

// Rules are a table's resolved house rules (DefaultRules gives the
// defaults; the shell fills in what a table leaves unset). Amounts in
// minor units, times in ms.
type Rules struct {
	// Decks in the shoe: 3 only (BQ-DECKS). The shoe's cut card and burn
	// are the shell's to pass to the shoe service (SHOE-CUT-CARD 6..16,
	// default 8; SHOE-BURN 3 or 4, default 3).
	Decks          int32 `json:"decks"`
	CutCardFromEnd int32 `json:"cut_card_from_end"`
	Burn           int32 `json:"burn"`
	// MaxSeatsPerSide bounds each side's seats (right and left), 1..7;
	// default 6.
	MaxSeatsPerSide int32 `json:"max_seats_per_side"`
	// MinBet is the smallest bet, > 0; default 100. A bank that can no
	// longer cover it is exhausted.
	MinBet int64 `json:"min_bet"`
	// MaxBet is the largest single bet, 0 (default) for none but the bank.
	MaxBet int64 `json:"max_bet,omitempty"`
	// HouseBank: the house holds the bank and covers every bet (BQ-BANK
	// "usually held by the house"); default off: the bank is auctioned.
	HouseBank bool `json:"house_bank,omitempty"`
	// HouseLimit is, with a house bank, the most all the bets of a coup
	// may total; 0 (default) for none. Not allowed with an auctioned bank
	// (the bank is the limit).
	HouseLimit int64 `json:"house_limit,omitempty"`
	// MinimumBank is the lowest bid in an auction of the bank, >= MinBet;
	// default 1000.
	MinimumBank int64 `json:"minimum_bank"`
	// CommissionBP is a commission on the banker's net winnings of a coup,
	// basis points 0..10000, taken from the bank by the wallet's
	// settlement; default 0 (BQ-BANK: the house took its 2.5% at the
	// auction). Must be 0 with a house bank.
	CommissionBP int64 `json:"commission_bp,omitempty"`
	// Rounding rounds the auction fee and the commission; zero is down.
	Rounding rules.Rounding `json:"rounding,omitempty"`
	// AuctionTimeLimitMS: an auction closes this long after its first
	// bid, 1000..600000; default 30000.
	AuctionTimeLimitMS int32 `json:"auction_time_limit_ms"`
	// BetTimeLimitMS: a punter's betting turn, 1000..600000; default
	// 30000; when it runs out he passes.
	BetTimeLimitMS int32 `json:"bet_time_limit_ms"`
	// DecisionTimeLimitMS: a draw/stand decision, 1000..600000; default
	// 30000; when it runs out the player on 5 draws and the banker does
	// what the chemin de fer tableau does against the hand carrying more
	// money, drawing at an option cell.
	DecisionTimeLimitMS int32 `json:"decision_time_limit_ms"`
	// BancoBothTables (BQ-BETS "banco on both hands", a house rule):
	// the punter in turn, before any bet of the coup, may call banco: he
	// bets the whole bank on both tables (à cheval, BQ-CHEVAL), whatever
	// max_bet, and the betting closes. Default off; only with an
	// auctioned bank (a house bank has no size to call).
	BancoBothTables bool `json:"banco_both_tables,omitempty"`
}

// DefaultRules are the defaults of every house rule (auctioned bank).
func DefaultRules() Rules {
	return Rules{Decks: 3, CutCardFromEnd: 8, Burn: 3, MaxSeatsPerSide: 6, MinBet: 100, MinimumBank: 1000,
		Rounding: rules.RoundDown, AuctionTimeLimitMS: 30000, BetTimeLimitMS: 30000, DecisionTimeLimitMS: 30000}
}

// Validate checks every rule's range; the error's reason is
// INVALID_HOUSE_RULE.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return game.Refuse(game.InvalidArgument, ReasonInvalidHouseRule, format, args...)
	}
	limit := func(ms int32) bool { return ms >= 1000 && ms <= 600000 }
	switch {
	case r.Decks != 3:
		// Source: RULES.md BQ-DECKS (3 decks)
		return bad("decks must be 3 (BQ-DECKS), got %d", r.Decks)
	case r.CutCardFromEnd < 6 || r.CutCardFromEnd > 16:
		return bad("cut_card_from_end must be 6..16, got %d", r.CutCardFromEnd)
	case r.Burn < 3 || r.Burn > 4:
		return bad("burn must be 3 or 4, got %d", r.Burn)
	case r.MaxSeatsPerSide < 1 || r.MaxSeatsPerSide > 7:
		return bad("max_seats_per_side must be 1..7, got %d", r.MaxSeatsPerSide)
	case r.MinBet < 1:
		return bad("min_bet must be > 0, got %d", r.MinBet)
	case r.MaxBet < 0 || (r.MaxBet > 0 && r.MaxBet < r.MinBet):
		return bad("max_bet must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.MaxBet)
	case r.HouseLimit < 0 || (r.HouseLimit > 0 && r.HouseLimit < r.MinBet):
		return bad("house_limit must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.HouseLimit)
	case r.HouseLimit > 0 && !r.HouseBank:
		return bad("house_limit is for a house bank; an auctioned bank is its own limit")
	case !r.HouseBank && r.MinimumBank < r.MinBet:
		return bad("minimum_bank must be >= min_bet %d, got %d", r.MinBet, r.MinimumBank)
	case r.CommissionBP < 0 || r.CommissionBP > rules.MaxCommissionBP:
		return bad("commission_bp must be 0..10000, got %d", r.CommissionBP)
	case r.CommissionBP > 0 && r.HouseBank:
		return bad("commission_bp must be 0 with a house bank (the house would pay itself)")
	case r.Rounding < 0 || r.Rounding > rules.RoundUp:
		return bad("rounding %d is not a rounding", int(r.Rounding))
	case !limit(r.AuctionTimeLimitMS) || !limit(r.BetTimeLimitMS) || !limit(r.DecisionTimeLimitMS):
		return bad("time limits must be 1000..600000 ms, got auction %d, bet %d, decision %d",
			r.AuctionTimeLimitMS, r.BetTimeLimitMS, r.DecisionTimeLimitMS)
	case r.BancoBothTables && r.HouseBank:
		return bad("banco_both_tables needs an auctioned bank: a house bank has no size to call")
	}
	return nil
}

// Side is where a seat is or what a bet is on (BQ-BETS); the values are
// those of chemmy.wallet.v1.BanqueSide and of rules.Table.
type Side int8

// The sides. A seat is on the right or the left; a bet may also be à
// cheval (both tables, BQ-CHEVAL).
const (
	SideRight  Side = 1
	SideLeft   Side = 2
	SideCheval Side = 3
)

// String is "right", "left", "cheval" (the spot of BetPlaced events).
func (s Side) String() string {
	switch s {
	case SideRight:
		return "right"
	case SideLeft:
		return "left"
	case SideCheval:
		return "cheval"
	}
	return "side(" + strconv.Itoa(int(s)) + ")"
}

// Table is the rules engine's table of the side.
func (s Side) Table() rules.Table { return rules.Table(s) }

// Hand is one of the coup's three hands (BQ-HANDS); its string is the
// hand of game.DealCard.
type Hand string

// The hands.
const (
	HandRight  Hand = "right"
	HandLeft   Hand = "left"
	HandBanker Hand = "banker"
)

// Phase is where the table stands.
type Phase int8

// The phases; the values are those of chemmy.table.v1.TableState.
const (
	PhaseBetting  Phase = 3 // punters bet in turn
	PhaseDealing  Phase = 4 // cards are due
	PhaseDecision Phase = 5 // a hand's player or the banker draws or stands
	PhaseSettling Phase = 6 // the settlement is due
	PhaseAuction  Phase = 7 // the bank is auctioned (and its fee charged)
	PhaseClosed   Phase = 9
)

// Seat is a seated player and his side. The seats of a side, in the order
// of State.Seats, run from the banker outward: the first to join a side
// sits nearest the banker.
type Seat struct {
	PlayerID string `json:"player_id"`
	Side     Side   `json:"side"`
	Number   int32  `json:"number"`
}

// Bet is one stake against the bank, escrowed by a wallet hold. Amounts
// in minor units; Won and Lost are set by the settlement (both 0: the
// stake was returned).
type Bet struct {
	PlayerID string `json:"player_id"`
	Side     Side   `json:"side"`
	Amount   int64  `json:"amount"`
	HoldID   string `json:"hold_id"`
	// Banco: the bet of a banco on both tables (the whole bank, à cheval).
	Banco bool  `json:"banco,omitempty"`
	Won   int64 `json:"won,omitempty"`
	Lost  int64 `json:"lost,omitempty"`
}

// Coup is one coup: its betting round, bets, hands (card codes in deal
// order), the players who hold the hands, the result and the settlement.
type Coup struct {
	ID     string `json:"id"`
	Number int64  `json:"number"`
	Bets   []Bet  `json:"bets,omitempty"`
	// Acted are the punters who bet or passed in the betting round.
	Acted []string `json:"acted,omitempty"`
	// The hands' cards.
	Right  []string `json:"right,omitempty"`
	Left   []string `json:"left,omitempty"`
	Banker []string `json:"banker,omitempty"`
	// RightHolder and LeftHolder play the punters' hands (BQ-PLAY), fixed
	// when the betting closes; "" when nobody sits on that side (the hand
	// is then played by the tableau). Only a hand's holder (and the
	// banker, for the banker's hand) may see its face-down cards.
	RightHolder string `json:"right_holder,omitempty"`
	LeftHolder  string `json:"left_holder,omitempty"`
	// Choices made: a "non" at an option, and a third card decided for a
	// hand and not yet dealt.
	RightStood  bool `json:"right_stood,omitempty"`
	LeftStood   bool `json:"left_stood,omitempty"`
	BankerStood bool `json:"banker_stood,omitempty"`
	DrawTo      Hand `json:"draw_to,omitempty"`
	// Await is the hand whose draw/stand decision the table waits for
	// (PhaseDecision).
	Await Hand `json:"await,omitempty"`
	// The result, once decided: each punters' hand against the bank, from
	// the bank's side, and the totals.
	Decided      bool          `json:"decided,omitempty"`
	RightOutcome rules.Outcome `json:"right_outcome,omitempty"`
	LeftOutcome  rules.Outcome `json:"left_outcome,omitempty"`
	RightTotal   int           `json:"right_total,omitempty"`
	LeftTotal    int           `json:"left_total,omitempty"`
	BankerTotal  int           `json:"banker_total,omitempty"`
	// The settlement.
	Settled        bool      `json:"settled,omitempty"`
	SettleTime     time.Time `json:"settle_time,omitzero"`
	BankerWinnings int64     `json:"banker_winnings,omitempty"`
	Commission     int64     `json:"commission,omitempty"`
	NewBank        int64     `json:"new_bank,omitempty"`
	Voided         bool      `json:"voided,omitempty"`
	VoidReason     string    `json:"void_reason,omitempty"`
}

// Auction is an auction of the bank (BQ-BANK). Only the highest bid is
// held; an outbid bid's hold is released at once.
type Auction struct {
	// ID names the auction (the input's NewID at its first bid); the fee's
	// request id derives from it.
	ID    string `json:"id,omitempty"`
	Round int32  `json:"round"`
	// The highest bid and its hold.
	HighPlayerID string `json:"high_player_id,omitempty"`
	HighBid      int64  `json:"high_bid,omitempty"`
	HighHoldID   string `json:"high_hold_id,omitempty"`
	// Declined are the seated players who will not bid.
	Declined []string `json:"declined,omitempty"`
	// Fee, once the auction closed: the winner's 2.5% is due (ChargeFee).
	Fee *FeeDue `json:"fee,omitempty"`
}

// FeeDue is the auction fee the winner owes (BQ-BANK).
type FeeDue struct {
	RequestID string `json:"request_id"`
	PlayerID  string `json:"player_id"`
	Bid       int64  `json:"bid"`
	HoldID    string `json:"hold_id"`
}

// State is a baccarat banque table's whole game state.
type State struct {
	Rules    Rules     `json:"rules"`
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Seats    []Seat    `json:"seats,omitempty"`
	NextSeat int32     `json:"next_seat,omitempty"`
	// The bank: its banker ("" with a house bank or while auctioned), its
	// amount and its wallet hold (both 0/"" with a house bank).
	Banker     string `json:"banker,omitempty"`
	Bank       int64  `json:"bank,omitempty"`
	BankHoldID string `json:"bank_hold_id,omitempty"`
	// Auction is the auction in progress (PhaseAuction); AuctionSeq counts
	// the table's auctions; FeesCharged sums the auction fees paid.
	Auction     *Auction `json:"auction,omitempty"`
	AuctionSeq  int32    `json:"auction_seq,omitempty"`
	FeesCharged int64    `json:"fees_charged,omitempty"`
	// The players who hold the right and left hands in the next coup
	// (BQ-PLAY); "" until a first coup, or when nobody sits there.
	RightHolder string `json:"right_holder,omitempty"`
	LeftHolder  string `json:"left_holder,omitempty"`
	// TurnPlayerID is the punter whose betting turn it is (PhaseBetting).
	TurnPlayerID string `json:"turn_player_id,omitempty"`
	// Coup is the coup being bet or played; LastCoup the last one settled
	// or voided.
	Coup     *Coup `json:"coup,omitempty"`
	LastCoup *Coup `json:"last_coup,omitempty"`
	// CoupSeq numbers coups (voided ones and coups ended without bets
	// included); CoupsPlayed counts the settled ones.
	CoupSeq     int64 `json:"coup_seq"`
	CoupsPlayed int64 `json:"coups_played"`
	// The shoe in play and the holds to release (shared with the shell).
	game.Bookkeeping
}

// New is a table's initial state on the shoe shoeID: with a house bank
// the betting is open (it waits for players), otherwise the bank's first
// auction is open. It takes no time and no id: the first coup is named
// when a command opens it.
func New(r Rules, shoeID string) (State, error) {
	if err := r.Validate(); err != nil {
		return State{}, err
	}
	s := State{Rules: r, Bookkeeping: game.Bookkeeping{ShoeID: shoeID, ShoeNumber: 1}}
	if r.HouseBank {
		s.Phase = PhaseBetting
	} else {
		s.Phase, s.AuctionSeq, s.Auction = PhaseAuction, 1, &Auction{Round: 1}
	}
	return s, nil
}

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

// Outcome of Apply.
type Outcome struct {
	State  State
	Events []game.Event
	// Hold, when set, is the hold the command waits for; State is then
	// the unchanged input and Events empty.
	Hold *game.Hold
}

// Apply applies in.Cmd to s. s is not changed; on error nothing happened.
func Apply(s State, in game.Input) (Outcome, error) {
	st := s.clone()
	a := &applier{s: &st, in: in}
	var err error
	switch c := in.Cmd.(type) {
	case Join:
		err = a.join(c)
	case Leave:
		err = a.leave(c)
	case Bid:
		err = a.bid(c)
	case FeeCharged:
		err = a.feeCharged(c)
	case FeeRefused:
		err = a.feeRefused(c)
	case PlaceBet:
		err = a.placeBet(c)
	case CallBanco:
		err = a.callBanco(c)
	case Pass:
		err = a.pass(c)
	case Decide:
		err = a.decideCmd(c)
	case PassBank:
		err = a.passBank(c)
	case game.Tick:
		err = a.tick()
	case game.CardDealt:
		err = a.cardDealt(c)
	case Settled:
		err = a.settled(c)
	case game.HoldsVoided, game.ShoeClosed:
		_, err = st.Book(in.Cmd)
	case game.ShoeOpened:
		err = a.shoeOpened(c)
	case Void:
		err = a.void(c)
	case Close:
		err = a.close(c)
	default:
		err = game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "baccarat banque has no command %T", in.Cmd)
	}
	if err != nil {
		return Outcome{}, err
	}
	if a.Hold != nil {
		return Outcome{State: s, Hold: a.Hold}, nil
	}
	return Outcome{State: st, Events: a.Events}, nil
}

// Pending is the effect the shell must carry out next, nil when none.
// Its request ids derive from the state: asked again, it is the same.
func Pending(s State) game.Effect {
	if e := s.Due(); e != nil {
		return e
	}
	switch {
	case s.Auction != nil && s.Auction.Fee != nil:
		f := s.Auction.Fee
		// Source: RULES.md BQ-BANK (the bidder pays the house 2.5% of the bid)
		return ChargeFee{RequestID: f.RequestID, PlayerID: f.PlayerID, Bid: f.Bid,
			Fee: rules.BanqueAuctionFee(f.Bid, s.Rules.Rounding), Rounding: s.Rules.Rounding}
	case s.NewShoeDue && s.Phase != PhaseClosed:
		// Source: RULES.md SHOE-CUT-CARD (no card of the next coup comes
		// from the shoe whose cut card came out)
		return game.NewShoe{}
	case s.Phase == PhaseDealing:
		hand, ok := nextCard(s.Coup)
		if !ok {
			return nil // unreachable: advance leaves DEALING when no card is due
		}
		cp := s.Coup
		n := len(cp.Right) + len(cp.Left) + len(cp.Banker) + 1
		return game.DealCard{RequestID: cp.ID + "/card/" + strconv.Itoa(n), CoupID: cp.ID, Hand: string(hand)}
	case s.Phase == PhaseSettling:
		cp := s.Coup
		e := Settle{CoupID: cp.ID, BankHoldID: s.BankHoldID, Bank: s.Bank, Right: cp.RightOutcome, Left: cp.LeftOutcome,
			CommissionBP: s.Rules.CommissionBP, Rounding: s.Rules.Rounding}
		for _, b := range cp.Bets {
			e.Bets = append(e.Bets, SettleBet{PlayerID: b.PlayerID, HoldID: b.HoldID, Amount: b.Amount, Side: b.Side})
		}
		return e
	}
	return nil
}

// Restart gives the auction, betting turn or decision in progress its
// full time limit again from now (after a restart of the service); it
// reports whether the deadline moved.
func Restart(s State, now time.Time) (State, bool) {
	var ms int32
	switch s.Phase {
	case PhaseAuction:
		ms = s.Rules.AuctionTimeLimitMS
	case PhaseBetting:
		ms = s.Rules.BetTimeLimitMS
	case PhaseDecision:
		ms = s.Rules.DecisionTimeLimitMS
	default:
		return s, false
	}
	var moved bool
	s.Deadline, moved = game.Restarted(s.Deadline, now, ms)
	return s, moved
}

// Deadline is when the core wants a Tick: the end of an auction, of a
// betting turn or of a decision; zero when it waits for nobody.
func Deadline(s State) time.Time {
	switch s.Phase {
	case PhaseAuction, PhaseBetting, PhaseDecision:
		return s.Deadline
	}
	return time.Time{}
}

// nextCard is the hand the coup's next card goes to, if one is due.
func nextCard(cp *Coup) (Hand, bool) {
	if cp == nil {
		return "", false
	}
	if cp.DrawTo != "" {
		return cp.DrawTo, true
	}
	step, err := nextStep(cp)
	if err != nil {
		return "", false
	}
	switch step.Kind {
	case rules.StepDealPlayer:
		return handOf(step.Hand), true
	case rules.StepDealBanker:
		return HandBanker, true
	}
	return "", false
}

func handOf(t rules.Table) Hand {
	if t == rules.TableLeft {
		return HandLeft
	}
	return HandRight
}

// nextStep is the coup's next step by the banque hand machine (BQ-HANDS,
// BQ-PLAY).
func nextStep(cp *Coup) (rules.BanqueStep, error) {
	bc, err := engineCoup(cp)
	if err != nil {
		return rules.BanqueStep{}, err
	}
	return rules.NextStepBanque(bc)
}

func engineCoup(cp *Coup) (rules.BanqueCoup, error) {
	bc := rules.BanqueCoup{RightStood: cp.RightStood, LeftStood: cp.LeftStood, BankerStood: cp.BankerStood}
	for _, h := range []struct {
		codes []string
		to    *[]rules.Card
	}{{cp.Right, &bc.Right}, {cp.Left, &bc.Left}, {cp.Banker, &bc.Banker}} {
		cards, err := parse(h.codes)
		if err != nil {
			return bc, err
		}
		*h.to = cards
	}
	return bc, nil
}

func parse(codes []string) ([]rules.Card, error) {
	var out []rules.Card
	for _, code := range codes {
		c, err := rules.ParseCard(code)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func total(codes []string) int {
	cards, _ := parse(codes)
	return rules.Total(cards)
}

type applier struct {
	s  *State
	in game.Input
	game.Changes
}

func (a *applier) coupID() string {
	if a.s.Coup == nil {
		return ""
	}
	return a.s.Coup.ID
}

func (a *applier) open() error {
	if a.s.Phase == PhaseClosed {
		return game.Refuse(game.FailedPrecondition, ReasonTableClosed, "the table is closed")
	}
	return nil
}

func (s *State) seat(playerID string) (Seat, bool) {
	for _, st := range s.Seats {
		if st.PlayerID == playerID {
			return st, true
		}
	}
	return Seat{}, false
}

// side is the side's seated players from the banker outward.
func (s *State) side(sd Side) []string {
	var out []string
	for _, st := range s.Seats {
		if st.Side == sd {
			out = append(out, st.PlayerID)
		}
	}
	return out
}

// punters are the players who bet, in betting order: the right table's
// from the banker's right and the left table's from his left, taken in
// turn (R1, L1, R2, L2, ...); the banker is left out.
func (s *State) punters() []string {
	r, l := s.side(SideRight), s.side(SideLeft)
	var out []string
	for i := 0; i < len(r) || i < len(l); i++ {
		// Source: RULES.md BQ-BETS (the right table's order starts on the
		// banker's right, the left table's on his left)
		for _, side := range [][]string{r, l} {
			if i < len(side) && side[i] != s.Banker {
				out = append(out, side[i])
			}
		}
	}
	return out
}

func (a *applier) join(c Join) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if c.PlayerID == "" {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "player_id is required")
	}
	if c.Side != SideRight && c.Side != SideLeft {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "a seat is on the right or the left side, not %v", c.Side)
	}
	if _, ok := s.seat(c.PlayerID); ok {
		return game.Refuse(game.AlreadyExists, ReasonAlreadySeated, "player %q already has a seat", c.PlayerID)
	}
	if int32(len(s.side(c.Side))) >= s.Rules.MaxSeatsPerSide {
		return game.Refuse(game.ResourceExhausted, ReasonTableFull, "the %v side's %d seats are taken", c.Side, s.Rules.MaxSeatsPerSide)
	}
	s.NextSeat++
	s.Seats = append(s.Seats, Seat{PlayerID: c.PlayerID, Side: c.Side, Number: s.NextSeat})
	a.Emit("", &eventsv1.PlayerSeated{PlayerId: c.PlayerID, SeatNumber: s.NextSeat})
	if s.Phase == PhaseBetting && s.TurnPlayerID == "" {
		a.nextTurn() // the betting waited for a punter
	}
	return nil
}

func (a *applier) leave(c Leave) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	st, ok := s.seat(c.PlayerID)
	if !ok {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", c.PlayerID)
	}
	switch {
	case s.Banker == c.PlayerID:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the banker passes the bank before he leaves")
	case s.Auction != nil && (s.Auction.HighPlayerID == c.PlayerID || (s.Auction.Fee != nil && s.Auction.Fee.PlayerID == c.PlayerID)):
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the highest bidder stays until the auction closes")
	case s.Coup != nil && hasBet(s.Coup, c.PlayerID):
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q has a bet in the coup", c.PlayerID)
	case s.Coup != nil && s.Phase != PhaseBetting && (s.Coup.RightHolder == c.PlayerID || s.Coup.LeftHolder == c.PlayerID):
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q holds a hand of the coup", c.PlayerID)
	}
	for i := range s.Seats {
		if s.Seats[i].PlayerID == c.PlayerID {
			s.Seats = append(s.Seats[:i], s.Seats[i+1:]...)
			break
		}
	}
	a.Emit("", &eventsv1.PlayerLeft{PlayerId: c.PlayerID, SeatNumber: st.Number})
	switch {
	case s.Phase == PhaseBetting && s.TurnPlayerID == c.PlayerID:
		a.nextTurn()
	case s.Phase == PhaseAuction && s.Auction.Fee == nil:
		s.Auction.Declined = remove(s.Auction.Declined, c.PlayerID)
		a.auctionMaybeOver()
	}
	return nil
}

func hasBet(cp *Coup, playerID string) bool {
	for _, b := range cp.Bets {
		if b.PlayerID == playerID {
			return true
		}
	}
	return false
}

func remove(list []string, x string) []string {
	out := list[:0:0]
	for _, y := range list {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

func contains(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// --- The bank ------------------------------------------------------------

func (a *applier) bid(c Bid) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	au := s.Auction
	if s.Phase != PhaseAuction || au == nil || au.Fee != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no auction of the bank is open")
	}
	if _, ok := s.seat(c.PlayerID); !ok {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "only a seated player bids for the bank")
	}
	if contains(au.Declined, c.PlayerID) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q declined to bid in this auction", c.PlayerID)
	}
	switch {
	case c.Amount < 0 || c.Amount > game.MaxAmount:
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "a bid must be 1..2^50 (0 declines), got %d", c.Amount)
	case c.Amount == 0:
		if au.HighPlayerID == c.PlayerID {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the highest bidder cannot withdraw his bid")
		}
		au.Declined = append(au.Declined, c.PlayerID)
		a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID})
		a.auctionMaybeOver()
		return nil
	case c.Amount < s.Rules.MinimumBank:
		return game.Refuse(game.InvalidArgument, ReasonBankBelowMinimum, "the minimum bank is %d, bid %d", s.Rules.MinimumBank, c.Amount)
	case c.Amount <= au.HighBid:
		// Source: RULES.md BQ-BANK (auctioned to the highest bidder)
		return game.Refuse(game.FailedPrecondition, ReasonBidTooLow, "the highest bid is %d, bid %d", au.HighBid, c.Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	if au.HighHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, au.HighHoldID) // outbid: released at once
	}
	au.HighPlayerID, au.HighBid, au.HighHoldID = c.PlayerID, c.Amount, c.HoldID
	if au.ID == "" {
		au.ID = a.in.NewID
		s.Deadline = a.in.After(s.Rules.AuctionTimeLimitMS)
	}
	a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID, Amount: c.Amount})
	a.auctionMaybeOver()
	return nil
}

// auctionMaybeOver closes the auction when every seated player but the
// highest bidder declined; with no bid and everyone declined, it starts
// again.
func (a *applier) auctionMaybeOver() {
	s := a.s
	au := s.Auction
	for _, st := range s.Seats {
		if st.PlayerID != au.HighPlayerID && !contains(au.Declined, st.PlayerID) {
			return
		}
	}
	if au.HighPlayerID != "" {
		a.closeAuction()
		return
	}
	if len(s.Seats) > 0 {
		a.openAuction() // nobody will bid: ask again
	}
}

// closeAuction gives the bank to the highest bid once its fee is paid.
func (a *applier) closeAuction() {
	s := a.s
	au := s.Auction
	// Source: RULES.md BQ-BANK (the highest bidder pays the house 2.5% of the bid)
	au.Fee = &FeeDue{RequestID: au.ID + "/fee", PlayerID: au.HighPlayerID, Bid: au.HighBid, HoldID: au.HighHoldID}
	s.Deadline = time.Time{}
}

func (a *applier) openAuction() {
	s := a.s
	// Source: RULES.md BQ-BANK (on loss or pass the bank is auctioned again)
	s.AuctionSeq++
	s.Auction = &Auction{Round: s.AuctionSeq}
	s.Phase, s.Deadline, s.TurnPlayerID, s.Coup = PhaseAuction, time.Time{}, "", nil
	a.Emit("", &eventsv1.BankAuctionOpened{Round: s.AuctionSeq})
}

func (a *applier) feeCharged(c FeeCharged) error {
	s := a.s
	if s.Auction == nil || s.Auction.Fee == nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no auction fee is due")
	}
	if c.Fee < 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "fee %d", c.Fee)
	}
	f := s.Auction.Fee
	// Source: RULES.md BQ-BANK (the highest bid becomes the bank, held)
	s.Banker, s.Bank, s.BankHoldID, s.Auction = f.PlayerID, f.Bid, f.HoldID, nil
	s.FeesCharged += c.Fee
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: f.PlayerID, Bank: f.Bid})
	a.openBetting()
	return nil
}

func (a *applier) feeRefused(FeeRefused) error {
	s := a.s
	if s.Auction == nil || s.Auction.Fee == nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no auction fee is due")
	}
	s.PendingVoids = append(s.PendingVoids, s.Auction.Fee.HoldID)
	a.openAuction()
	return nil
}

func (a *applier) passBank(c PassBank) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Rules.HouseBank || s.Banker != c.PlayerID || s.Banker == "" {
		return game.Refuse(game.PermissionDenied, ReasonNotBanker, "player %q is not the banker", c.PlayerID)
	}
	if s.Phase != PhaseBetting || (s.Coup != nil && len(s.Coup.Bets) > 0) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank is passed between coups, before any bet")
	}
	// Source: RULES.md BQ-BANK (he takes nothing out until he passes; then it is auctioned again)
	s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED, PreviousBankerPlayerId: s.Banker, Bank: s.Bank})
	s.Banker, s.Bank, s.BankHoldID = "", 0, ""
	a.openAuction()
	return nil
}

// --- Betting -------------------------------------------------------------

// openBetting starts a coup's betting round.
func (a *applier) openBetting() {
	s := a.s
	s.Coup, s.Phase = nil, PhaseBetting
	a.nextTurn()
}

// covered is what the coup's bets total.
func covered(cp *Coup) int64 {
	var n int64
	for _, b := range cp.Bets {
		n += b.Amount
	}
	return n
}

// room is what more the bank covers in this coup; -1 for no limit.
func (s *State) room() int64 {
	switch {
	case !s.Rules.HouseBank:
		// Source: RULES.md BQ-BANK (the bank is the limit of the bets), CF-BET-LIMIT
		return s.Bank - covered(s.Coup)
	case s.Rules.HouseLimit > 0:
		return s.Rules.HouseLimit - covered(s.Coup)
	}
	return -1
}

// nextTurn gives the betting turn to the next punter in order who has not
// acted, or closes the betting when the bank is covered or everyone has
// acted.
func (a *applier) nextTurn() {
	s := a.s
	if s.Coup == nil {
		s.CoupSeq++
		s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq}
	}
	cp := s.Coup
	if room := s.room(); room >= 0 && room < s.Rules.MinBet && len(cp.Bets) > 0 {
		// Source: RULES.md CF-BET-ORDER (betting goes round until the bank is covered)
		a.closeBetting()
		return
	}
	order := s.punters()
	for _, p := range order {
		if !contains(cp.Acted, p) {
			s.TurnPlayerID, s.Deadline = p, a.in.After(s.Rules.BetTimeLimitMS)
			return
		}
	}
	switch {
	case len(cp.Bets) > 0:
		a.closeBetting()
	case len(order) > 0:
		// Source: RULES.md CF-BET-ORDER (a round without a bet: betting starts again)
		cp.Acted = nil
		a.Emit(cp.ID, &eventsv1.BettingReopened{})
		s.TurnPlayerID, s.Deadline = order[0], a.in.After(s.Rules.BetTimeLimitMS)
	default:
		s.TurnPlayerID, s.Deadline = "", time.Time{} // waits for a punter
	}
}

func (a *applier) turn(playerID string) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseBetting {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the betting is closed")
	}
	if _, ok := s.seat(playerID); !ok {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", playerID)
	}
	if playerID == s.Banker {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker does not bet against his bank")
	}
	if playerID != s.TurnPlayerID {
		// Source: RULES.md BQ-BETS (betting order)
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "it is %q's turn to bet", s.TurnPlayerID)
	}
	return nil
}

func (a *applier) placeBet(c PlaceBet) error {
	s, r := a.s, a.s.Rules
	if err := a.turn(c.PlayerID); err != nil {
		return err
	}
	if c.Side < SideRight || c.Side > SideCheval {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "a bet is on the right, the left or both (cheval), not %v", c.Side)
	}
	if c.Amount <= 0 || c.Amount > game.MaxAmount {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be 1..%d, got %d", int64(game.MaxAmount), c.Amount)
	}
	if c.Amount < r.MinBet || (r.MaxBet > 0 && c.Amount > r.MaxBet) {
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "a bet is %d..%d, got %d", r.MinBet, r.MaxBet, c.Amount)
	}
	if len(s.Coup.Bets) >= MaxBets {
		return game.Refuse(game.ResourceExhausted, ReasonTableFull, "the coup has %d bets, the most a coup takes", MaxBets)
	}
	if room := s.room(); room >= 0 && c.Amount > room {
		if r.HouseBank {
			return game.Refuse(game.FailedPrecondition, ReasonHouseLimitReached, "the house covers %d more in this coup, bet %d", room, c.Amount)
		}
		// Source: RULES.md BQ-BANK (the banker risks only his bank; an
		// à cheval bet is paid at most once, so it counts once)
		return game.Refuse(game.FailedPrecondition, ReasonBetExceedsBank, "the bank covers %d more, bet %d", room, c.Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	cp := s.Coup
	cp.Bets = append(cp.Bets, Bet{PlayerID: c.PlayerID, Side: c.Side, Amount: c.Amount, HoldID: c.HoldID})
	cp.Acted = append(cp.Acted, c.PlayerID)
	uncovered := s.room()
	if uncovered < 0 {
		uncovered = 0
	}
	a.Emit(cp.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Uncovered: uncovered, Spot: c.Side.String()})
	a.nextTurn()
	return nil
}

// callBanco: the whole bank on both tables, the coup's first bet; the
// betting closes (BQ-BETS, BQ-CHEVAL).
func (a *applier) callBanco(c CallBanco) error {
	s := a.s
	if err := a.turn(c.PlayerID); err != nil {
		return err
	}
	if !s.Rules.BancoBothTables {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "banco on both tables is off at this table (house rule banco_both_tables)")
	}
	if len(s.Coup.Bets) > 0 {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "banco is called before any bet of the coup; %d are placed", len(s.Coup.Bets))
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: s.Bank}
		return nil
	}
	cp := s.Coup
	// Source: RULES.md BQ-BETS (banco on both hands, a house rule), BQ-CHEVAL
	cp.Bets = append(cp.Bets, Bet{PlayerID: c.PlayerID, Side: SideCheval, Amount: s.Bank, HoldID: c.HoldID, Banco: true})
	cp.Acted = append(cp.Acted, c.PlayerID)
	a.Emit(cp.ID, &eventsv1.BancoCalled{PlayerId: c.PlayerID, Amount: s.Bank})
	a.closeBetting()
	return nil
}

func (a *applier) pass(c Pass) error {
	if err := a.turn(c.PlayerID); err != nil {
		return err
	}
	a.decline(c.PlayerID)
	return nil
}

func (a *applier) decline(playerID string) {
	cp := a.s.Coup
	cp.Acted = append(cp.Acted, playerID)
	a.Emit(cp.ID, &eventsv1.BetDeclined{PlayerId: playerID})
	a.nextTurn()
}

// closeBetting ends the betting and fixes the hands' players (BQ-PLAY).
func (a *applier) closeBetting() {
	s := a.s
	cp := s.Coup
	s.Phase, s.Deadline, s.TurnPlayerID = PhaseDealing, time.Time{}, ""
	cp.RightHolder, cp.LeftHolder = s.holder(SideRight, s.RightHolder), s.holder(SideLeft, s.LeftHolder)
	a.Emit(cp.ID, &eventsv1.BettingClosed{BetsCount: int32(len(cp.Bets))})
}

// holder is who plays the side's hand: the current holder while he can,
// else the player of that side nearest the banker (BQ-PLAY).
func (s *State) holder(sd Side, current string) string {
	var first string
	for _, p := range s.side(sd) {
		if p == s.Banker {
			continue
		}
		if p == current {
			return p
		}
		if first == "" {
			first = p
		}
	}
	// Source: RULES.md BQ-PLAY (in the first coup the players nearest the banker play)
	return first
}

// nextHolder is the player after loser on the side, round the side.
func (s *State) nextHolder(sd Side, loser string) string {
	side := s.side(sd)
	at := -1
	for i, p := range side {
		if p == loser {
			at = i
		}
	}
	for k := 1; k <= len(side); k++ {
		p := side[(at+k+len(side))%len(side)]
		if p != s.Banker && (p != loser || k == len(side)) {
			// Source: RULES.md BQ-PLAY (after a lost coup the right passes
			// round to the next player of that side)
			return p
		}
	}
	return ""
}

// --- The coup --------------------------------------------------------------

func (a *applier) cardDealt(c game.CardDealt) error {
	s := a.s
	if s.Phase != PhaseDealing {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due")
	}
	if _, err := rules.ParseCard(c.Code); err != nil {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "card %q: %v", c.Code, err)
	}
	cp := s.Coup
	hand, ok := nextCard(cp)
	if !ok {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s waits for no card", cp.ID)
	}
	cards := cp.cards(hand)
	if len(*cards) == 2 && cp.DrawTo == "" {
		// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (the hand's player draws on 0-4)
		a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: eventHand(hand), Draw: true, Rule: rules.RulePlayerDraw})
	}
	cp.DrawTo = ""
	*cards = append(*cards, c.Code)
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: eventHand(hand), Card: game.Cards([]string{c.Code})[0], Position: int32(len(*cards)),
		Total: int32(total(*cards)), HolderPlayerId: cp.holderOf(hand, s.Banker)})
	if hand == HandBanker && len(cp.Banker) == 2 {
		a.naturals()
	}
	return a.advance()
}

// naturals shows the naturals once every hand has two cards.
func (a *applier) naturals() {
	cp := a.s.Coup
	for _, h := range []Hand{HandBanker, HandRight, HandLeft} {
		cards := *cp.cards(h)
		if t := total(cards); t >= 8 {
			// Source: RULES.md CF-NATURAL-PLAYER, CF-NATURAL-BANKER (a natural is shown at once)
			a.Emit(cp.ID, &eventsv1.NaturalShown{Hand: eventHand(h), Total: int32(t), Cards: game.Cards(cards)})
		}
	}
}

func (cp *Coup) cards(h Hand) *[]string {
	switch h {
	case HandRight:
		return &cp.Right
	case HandLeft:
		return &cp.Left
	}
	return &cp.Banker
}

func (cp *Coup) holderOf(h Hand, banker string) string {
	switch h {
	case HandRight:
		return cp.RightHolder
	case HandLeft:
		return cp.LeftHolder
	}
	return banker
}

// advance moves the coup on after a card or a decision: the next card,
// a decision to wait for (or to take by the tableau when nobody holds the
// hand), or the result.
func (a *applier) advance() error {
	s := a.s
	cp := s.Coup
	for range 4 {
		if cp.DrawTo != "" {
			s.Phase = PhaseDealing
			return nil
		}
		step, err := nextStep(cp)
		if err != nil {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
		}
		switch step.Kind {
		case rules.StepDealPlayer, rules.StepDealBanker:
			s.Phase = PhaseDealing
			return nil
		case rules.StepPlayerChoice:
			h := handOf(step.Hand)
			if who := cp.holderOf(h, ""); who != "" {
				a.await(h)
				return nil
			}
			// Nobody sits on that side: the tableau's timeout default.
			// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (option on 5: draws when nobody chooses)
			a.decide(h, true, "")
		case rules.StepBankerChoice:
			if !s.Rules.HouseBank {
				a.await(HandBanker)
				return nil
			}
			// Source: RULES.md BQ-PLAY (the house's croupier plays the bank by the tableau)
			a.decide(HandBanker, s.bankerDefault(), "")
		case rules.StepDone:
			a.result(step)
			return nil
		}
	}
	return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s does not move on", cp.ID)
}

func (a *applier) await(h Hand) {
	s := a.s
	s.Coup.Await, s.Phase, s.Deadline = h, PhaseDecision, a.in.After(s.Rules.DecisionTimeLimitMS)
}

// decide records a draw or a stand of hand h; by is the player who chose
// ("" when the tableau or a time-out did).
func (a *applier) decide(h Hand, draw bool, by string) {
	s := a.s
	cp := s.Coup
	cp.Await, s.Deadline = "", time.Time{}
	if draw {
		cp.DrawTo = h
	} else {
		switch h {
		case HandRight:
			cp.RightStood = true
		case HandLeft:
			cp.LeftStood = true
		default:
			cp.BankerStood = true
		}
	}
	rule := rules.RulePlayerDraw
	if h == HandBanker {
		rule = rules.RuleBQPlay
	}
	a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: eventHand(h), Draw: draw, ByChoice: by != "", PlayerId: by, Rule: rule})
}

// bankerDefault is the banker's draw when he does not choose (a time-out,
// or a house bank): what the chemin de fer tableau does against the hand
// carrying more money (the right one on equal money; the other when that
// one showed a natural), drawing at an option cell.
func (s *State) bankerDefault() bool {
	cp := s.Coup
	var right, left int64
	for _, b := range cp.Bets {
		switch b.Side {
		case SideRight:
			right += b.Amount
		case SideLeft:
			left += b.Amount
		}
	}
	hands := [][]string{cp.Right, cp.Left}
	if left > right {
		hands[0], hands[1] = hands[1], hands[0]
	}
	against := hands[0]
	if total(against[:2]) >= 8 {
		against = hands[1]
	}
	var third *rules.Card
	if len(against) == 3 {
		c, _ := rules.ParseCard(against[2])
		third = &c
	}
	// Source: RULES.md BQ-PLAY (he plays against the hand carrying more
	// money), CF-BANKER-DRAW, and the time-out default (draw at an option)
	d := rules.BankerDecision(total(cp.Banker), third, rules.HouseRules{})
	return d != rules.DecisionStand
}

func (a *applier) decideCmd(c Decide) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if c.Hand != HandRight && c.Hand != HandLeft && c.Hand != HandBanker {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "hand %q is not right, left or banker", c.Hand)
	}
	if s.Phase != PhaseDecision {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no decision is due")
	}
	cp := s.Coup
	if c.Hand != cp.Await {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the %s hand decides now, not the %s", cp.Await, c.Hand)
	}
	if who := cp.holderOf(c.Hand, s.Banker); c.PlayerID != who {
		if c.Hand == HandBanker {
			return game.Refuse(game.PermissionDenied, ReasonNotBanker, "player %q is not the banker", c.PlayerID)
		}
		// Source: RULES.md BQ-PLAY (each hand is played by a player of its side)
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the %s hand is %q's", c.Hand, who)
	}
	// Source: RULES.md BQ-PLAY (option on 5 for a hand's player; the banker draws or stands freely)
	a.decide(c.Hand, c.Draw, c.PlayerID)
	return a.advance()
}

// result records the decided coup and moves to SETTLING.
func (a *applier) result(step rules.BanqueStep) {
	s := a.s
	cp := s.Coup
	cp.Decided, cp.RightOutcome, cp.LeftOutcome = true, step.Right, step.Left
	cp.RightTotal, cp.LeftTotal, cp.BankerTotal = total(cp.Right), total(cp.Left), total(cp.Banker)
	a.Emit(cp.ID, &eventsv1.CoupResulted{Outcome: eventOutcome(chevalOutcome(step.Right, step.Left)),
		BankerTotal: int32(cp.BankerTotal), Natural: total(cp.Banker[:2]) >= 8, BankerCards: game.Cards(cp.Banker),
		Hands: []*eventsv1.HandResult{
			{Hand: eventsv1.Hand_HAND_RIGHT, HolderPlayerId: cp.RightHolder, Total: int32(cp.RightTotal), Cards: game.Cards(cp.Right), Outcome: eventOutcome(step.Right)},
			{Hand: eventsv1.Hand_HAND_LEFT, HolderPlayerId: cp.LeftHolder, Total: int32(cp.LeftTotal), Cards: game.Cards(cp.Left), Outcome: eventOutcome(step.Left)},
		}})
	s.Phase = PhaseSettling
}

// chevalOutcome is the coup's outcome for an à cheval bet, from the bank's
// side: it wins only if it beats both hands, loses only if it loses to
// both, else stands off.
func chevalOutcome(right, left rules.Outcome) rules.Outcome {
	switch {
	case right == rules.OutcomeBankWins && left == rules.OutcomeBankWins:
		// Source: RULES.md BQ-CHEVAL (loses only if the bank beats both hands)
		return rules.OutcomeBankWins
	case right == rules.OutcomeBankLoses && left == rules.OutcomeBankLoses:
		// Source: RULES.md BQ-CHEVAL (wins only if the bank loses to both)
		return rules.OutcomeBankLoses
	}
	// Source: RULES.md BQ-CHEVAL (otherwise it is returned)
	return rules.OutcomeStandOff
}

func (a *applier) settled(c Settled) error {
	s := a.s
	if s.Phase != PhaseSettling {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no settlement is due")
	}
	cp := s.Coup
	if len(c.Bets) != len(cp.Bets) {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "settlement of %d bets for %d", len(c.Bets), len(cp.Bets))
	}
	if c.NewBank < 0 || (s.Rules.HouseBank && c.NewBank != 0) {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "new bank %d", c.NewBank)
	}
	for i := range cp.Bets {
		cp.Bets[i].Won, cp.Bets[i].Lost = c.Bets[i].Won, c.Bets[i].Lost
	}
	cp.Settled, cp.SettleTime = true, a.in.Now
	cp.BankerWinnings, cp.Commission, cp.NewBank = c.BankerWinnings, c.Commission, c.NewBank
	ev := &eventsv1.CoupSettled{Outcome: eventOutcome(chevalOutcome(cp.RightOutcome, cp.LeftOutcome)), BankerWinnings: c.BankerWinnings,
		Commission: c.Commission, BankerNet: c.BankerWinnings - c.Commission, NewBank: c.NewBank}
	if s.Rules.HouseBank {
		ev.HouseNet = c.BankerWinnings
	}
	a.Emit(cp.ID, ev)
	s.CoupsPlayed++
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the shoe's last)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	// Source: RULES.md BQ-PLAY (a player keeps his side's hand until he
	// loses a coup, then the right passes to the next of that side)
	s.RightHolder, s.LeftHolder = cp.RightHolder, cp.LeftHolder
	if cp.RightOutcome == rules.OutcomeBankWins && cp.RightHolder != "" {
		s.RightHolder = s.nextHolder(SideRight, cp.RightHolder)
	}
	if cp.LeftOutcome == rules.OutcomeBankWins && cp.LeftHolder != "" {
		s.LeftHolder = s.nextHolder(SideLeft, cp.LeftHolder)
	}
	s.LastCoup, s.Coup = cp, nil
	if s.Rules.HouseBank {
		a.openBetting()
		return nil
	}
	s.Bank = c.NewBank
	if s.Bank < s.Rules.MinBet {
		// Source: RULES.md BQ-BANK (the banker keeps the bank until it is
		// exhausted: it can no longer cover the smallest bet)
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
		a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST, PreviousBankerPlayerId: s.Banker, Bank: s.Bank})
		s.Banker, s.Bank, s.BankHoldID = "", 0, ""
		a.openAuction()
		return nil
	}
	// Source: RULES.md BQ-BANK (the banker keeps the bank after losing a coup)
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, BankerPlayerId: s.Banker, Bank: s.Bank})
	a.openBetting()
	return nil
}

func (a *applier) shoeOpened(c game.ShoeOpened) error {
	s := a.s
	if c.Abandoned {
		// The shoe is replaced before its first card: the coup goes on.
		s.ShoeID, s.ShoeNumber = c.ShoeID, c.Number
		a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
		return nil
	}
	if !s.NewShoeDue {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no new shoe is due")
	}
	s.ShoeID, s.ShoeNumber, s.NewShoeDue = c.ShoeID, c.Number, false
	a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
	return nil
}

// --- Time ----------------------------------------------------------------

func (a *applier) tick() error {
	s := a.s
	if s.Deadline.IsZero() || a.in.Now.Before(s.Deadline) {
		return nil // nothing due
	}
	switch s.Phase {
	case PhaseAuction:
		if s.Auction != nil && s.Auction.Fee == nil && s.Auction.HighPlayerID != "" {
			// The auction's time ran out: the highest bid takes the bank.
			a.closeAuction()
		}
	case PhaseBetting:
		if p := s.TurnPlayerID; p != "" {
			// Source: RULES.md (time limits: a punter who has not bet passes)
			a.Emit(a.coupID(), &eventsv1.TurnTimedOut{PlayerId: p, Turn: "bet", Action: "bet_declined"})
			a.decline(p)
		}
	case PhaseDecision:
		cp := s.Coup
		h := cp.Await
		draw := true // Source: RULES.md (time limits: the player on 5 draws)
		if h == HandBanker {
			draw = s.bankerDefault()
		}
		action := map[bool]string{true: "draw", false: "stand"}[draw]
		a.Emit(cp.ID, &eventsv1.TurnTimedOut{PlayerId: cp.holderOf(h, s.Banker), Turn: "decision", Action: action})
		a.decide(h, draw, "")
		return a.advance()
	}
	return nil
}

// --- Staff ---------------------------------------------------------------

func (a *applier) void(c Void) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	cp := s.Coup
	if cp == nil || len(cp.Bets) == 0 || (s.Phase != PhaseBetting && s.Phase != PhaseDealing && s.Phase != PhaseDecision) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no coup to void: only a coup with bets, before its result, can be")
	}
	if c.CoupID != cp.ID {
		return game.Refuse(game.FailedPrecondition, ReasonCoupNotInPlay, "coup %q is not the coup in play (%s)", c.CoupID, cp.ID)
	}
	// Source: RULES.md CF-ERROR (the croupier voids the coup; every bet is returned)
	cp.Voided, cp.VoidReason = true, c.Reason
	for _, b := range cp.Bets {
		s.PendingVoids = append(s.PendingVoids, b.HoldID)
	}
	a.Emit(cp.ID, &eventsv1.CoupVoided{Reason: c.Reason, By: c.By, ByRole: c.ByRole})
	s.LastCoup, s.Coup = cp, nil
	a.openBetting() // the same bank, the same hands' players
	return nil
}

func (a *applier) close(c Close) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	switch {
	case s.Phase == PhaseDealing || s.Phase == PhaseDecision || s.Phase == PhaseSettling || (s.Coup != nil && len(s.Coup.Bets) > 0):
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "a coup with bets is in play: void it or let it finish")
	case s.Auction != nil && s.Auction.Fee != nil:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the auction's fee is being charged")
	}
	if s.Auction != nil && s.Auction.HighHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, s.Auction.HighHoldID)
	}
	if s.BankHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	}
	s.Phase, s.Deadline, s.Coup, s.Auction, s.TurnPlayerID = PhaseClosed, time.Time{}, nil, nil, ""
	s.Banker, s.Bank, s.BankHoldID = "", 0, ""
	s.ShoeToClose, s.NewShoeDue = true, false
	a.Emit("", &eventsv1.TableClosed{Reason: c.Reason, By: c.By})
	return nil
}

// --- Copies --------------------------------------------------------------

// clone is a deep copy of s.
func (s State) clone() State {
	c := s
	c.Seats = append([]Seat(nil), s.Seats...)
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	c.Bookkeeping = s.Bookkeeping.Clone()
	if s.Auction != nil {
		au := *s.Auction
		au.Declined = append([]string(nil), s.Auction.Declined...)
		if s.Auction.Fee != nil {
			f := *s.Auction.Fee
			au.Fee = &f
		}
		c.Auction = &au
	}
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Bets = append([]Bet(nil), cp.Bets...)
	c.Acted = append([]string(nil), cp.Acted...)
	c.Right = append([]string(nil), cp.Right...)
	c.Left = append([]string(nil), cp.Left...)
	c.Banker = append([]string(nil), cp.Banker...)
	return &c
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if cp := s.Coup; cp != nil {
		coup = fmt.Sprintf("%s#%d bets=%d R=%v L=%v B=%v holders=%q/%q await=%q drawTo=%q", cp.ID, cp.Number, len(cp.Bets),
			cp.Right, cp.Left, cp.Banker, cp.RightHolder, cp.LeftHolder, cp.Await, cp.DrawTo)
	}
	auction := "none"
	if au := s.Auction; au != nil {
		auction = fmt.Sprintf("#%d high=%s:%d declined=%v fee=%v", au.Round, au.HighPlayerID, au.HighBid, au.Declined, au.Fee != nil)
	}
	return fmt.Sprintf("phase=%d deadline=%v seats=%v banker=%q bank=%d auction=%s turn=%q coup=%s played=%d shoe=%d voids=%v",
		s.Phase, s.Deadline, s.Seats, s.Banker, s.Bank, auction, s.TurnPlayerID, coup, s.CoupsPlayed, s.ShoeNumber, s.PendingVoids)
}
