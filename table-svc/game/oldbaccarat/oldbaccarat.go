package oldbaccarat

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Decks is the shoe the shell opens for the table: two full decks, 104
// cards (OLD-DECKS).
const Decks = rules.OldDecks

// MinPlayers is the fewest seated players who can play a coup: the banker
// and two punters (OLD-DECKS).
const MinPlayers = rules.OldMinPunters + 1

// Reasons of refusals (chemmy.table.v1.ErrorReason names).
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

// Rules are a table's house rules. Amounts in minor units, times in ms.
type Rules struct {
	// MaxSeats: 3..17 (the banker and up to 16 punters, OLD-DECKS).
	MaxSeats int32 `json:"max_seats"`
	// MinBank is the smallest bid for the bank, > 0 (OLD-BANKER).
	MinBank int64 `json:"min_bank"`
	// MinStake and MaxStake (0: none) bound a punter's stake.
	MinStake int64 `json:"min_stake"`
	MaxStake int64 `json:"max_stake,omitempty"`
	// MaxMoveTop bounds the cards the banker may move from the top to the
	// bottom after the cut (OLD-CUT), 0..52; 0 switches the step off.
	MaxMoveTop int32 `json:"max_move_top"`
	// The time limits: the auction's window from its first bid, the
	// staking window from the first stake, the banker's cut announcement,
	// a draw decision, the bank offered after a baccarat; 1000..600000.
	AuctionWindowMS int32 `json:"auction_window_ms"`
	StakingWindowMS int32 `json:"staking_window_ms"`
	CutMS           int32 `json:"cut_ms"`
	DecisionMS      int32 `json:"decision_ms"`
	BankOfferMS     int32 `json:"bank_offer_ms"`
	// StandOnTimeout: a player whose decision time runs out stands; by
	// default he draws (OLD-DRAW).
	StandOnTimeout bool `json:"stand_on_timeout,omitempty"`
}

// DefaultRules are the defaults of every house rule: 7 seats, a bank of at
// least 10000 and stakes of at least 100 (no maximum), up to 10 top cards
// moved, 30 s for the auction and the staking, 15 s for a cut or a
// decision, 30 s for the bank offered after a baccarat, drawing on a
// timeout.
func DefaultRules() Rules {
	return Rules{MaxSeats: 7, MinBank: 10000, MinStake: 100, MaxMoveTop: 10, AuctionWindowMS: 30000,
		StakingWindowMS: 30000, CutMS: 15000, DecisionMS: 15000, BankOfferMS: 30000}
}

// Validate checks every rule's range; the error's reason is
// INVALID_HOUSE_RULE.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return game.Refuse(game.InvalidArgument, ReasonInvalidHouseRule, format, args...)
	}
	window := func(ms int32) bool { return ms >= 1000 && ms <= 600000 }
	switch {
	case r.MaxSeats < MinPlayers || r.MaxSeats > rules.OldMaxPunters+1:
		// Source: RULES.md OLD-DECKS (at least three players; two decks deal 16 punters at most)
		return bad("max_seats must be %d..%d (OLD-DECKS), got %d", MinPlayers, rules.OldMaxPunters+1, r.MaxSeats)
	case r.MinStake < 1 || r.MinStake > game.MaxAmount:
		return bad("min_stake must be 1..2^50, got %d", r.MinStake)
	case r.MaxStake < 0 || (r.MaxStake > 0 && r.MaxStake < r.MinStake):
		return bad("max_stake must be 0 (none) or >= min_stake %d, got %d", r.MinStake, r.MaxStake)
	case r.MinBank < 2*r.MinStake || r.MinBank > 1<<50:
		// Source: RULES.md OLD-STAKE (the bank holds double each stake)
		return bad("min_bank must cover one minimum stake twice (>= %d) and be at most 2^50, got %d", 2*r.MinStake, r.MinBank)
	case r.MaxMoveTop < 0 || r.MaxMoveTop > 52:
		return bad("max_move_top must be 0..52, got %d", r.MaxMoveTop)
	case !window(r.AuctionWindowMS), !window(r.StakingWindowMS), !window(r.CutMS), !window(r.DecisionMS), !window(r.BankOfferMS):
		return bad("time limits must be 1000..600000 ms, got auction %d, staking %d, cut %d, decision %d, bank offer %d",
			r.AuctionWindowMS, r.StakingWindowMS, r.CutMS, r.DecisionMS, r.BankOfferMS)
	}
	return nil
}

// Phase is where the table stands.
type Phase int8

// The phases; the values are those of chemmy.table.v1.TableState.
const (
	PhaseWaiting  Phase = 1 // fewer than three seated and no banker
	PhaseOffering Phase = 2 // the bank is offered to a baccarat punter
	PhaseStaking  Phase = 3 // punters stake against the bank
	PhaseDealing  Phase = 4 // the cut announcement, the deal, a card drawn
	PhaseDecision Phase = 5 // a hand's holder decides to draw or stand
	PhaseSettling Phase = 6 // the wallet moves the coup's money
	PhaseAuction  Phase = 7 // the bank is auctioned
	PhaseClosed   Phase = 9 // closed by the staff
)

// Seat is a seated player; seat numbers run clockwise.
type Seat struct {
	PlayerID string `json:"player_id"`
	Number   int32  `json:"number"`
}

// BankBid is a bid for the bank, escrowed by a hold (OLD-BANKER).
type BankBid struct {
	PlayerID string `json:"player_id"`
	Amount   int64  `json:"amount"`
	HoldID   string `json:"hold_id"`
}

// Auction is the bank's auction in progress.
type Auction struct {
	Round  int32     `json:"round"`
	Bids   []BankBid `json:"bids,omitempty"`
	Passed []string  `json:"passed,omitempty"`
}

// Hand is a punter in a coup: his stake (escrowed by a hold), his cards
// (codes in deal order) and, once decided, his points and net.
type Hand struct {
	PlayerID string   `json:"player_id"`
	Seat     int32    `json:"seat"`
	Stake    int64    `json:"stake"`
	HoldID   string   `json:"hold_id"`
	Cards    []string `json:"cards,omitempty"`
	Stood    bool     `json:"stood,omitempty"`
	// Set with the result: OLD-VALUES points and the net (negative: lost)
	// with the rule that settled the hand.
	Points int    `json:"points,omitempty"`
	Net    int64  `json:"net,omitempty"`
	Rule   string `json:"rule,omitempty"`
}

// Coup is one coup. Before its staking closes Hands are the stakes in the
// order made; from then on, the punters clockwise from the banker's left
// (seat i of rules.OldCoup).
type Coup struct {
	ID         string   `json:"id"`
	Number     int64    `json:"number"`
	BankerID   string   `json:"banker_id"`
	Bank       int64    `json:"bank"`
	BankHoldID string   `json:"bank_hold_id"`
	Hands      []Hand   `json:"hands,omitempty"`
	Passed     []string `json:"passed,omitempty"`
	// StakingClosed: the stakes are fixed and ordered.
	StakingClosed bool `json:"staking_closed,omitempty"`
	// The cut (OLD-CUT): CutDue while the banker may announce a move;
	// MoveTop cards to move, Moved once the shoe did.
	CutDue  bool  `json:"cut_due,omitempty"`
	MoveTop int32 `json:"move_top,omitempty"`
	Moved   bool  `json:"moved,omitempty"`
	// The banker's hand.
	Banker      []string `json:"banker,omitempty"`
	BankerStood bool     `json:"banker_stood,omitempty"`
	// DrawDue: DrawSeat (a punter's index in Hands, -1 the banker) chose
	// to draw and his card is due.
	DrawDue  bool `json:"draw_due,omitempty"`
	DrawSeat int  `json:"draw_seat,omitempty"`
	// The result.
	Decided      bool          `json:"decided,omitempty"`
	Outcome      rules.Outcome `json:"outcome,omitempty"`
	Natural      bool          `json:"natural,omitempty"`
	Split        bool          `json:"split,omitempty"`
	BankerPoints int           `json:"banker_points,omitempty"`
	BankerNet    int64         `json:"banker_net,omitempty"`
	// NextBanker is the punter whose baccarat takes the bank
	// (OLD-BACCARAT), "" when none.
	NextBanker string `json:"next_banker,omitempty"`
	// The settlement or the void.
	Settled    bool      `json:"settled,omitempty"`
	SettleTime time.Time `json:"settle_time,omitzero"`
	Voided     bool      `json:"voided,omitempty"`
	VoidReason string    `json:"void_reason,omitempty"`
}

// State is an old baccarat table's whole game state.
type State struct {
	Rules    Rules     `json:"rules"`
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Seats    []Seat    `json:"seats,omitempty"`
	NextSeat int32     `json:"next_seat,omitempty"`
	// The bank: its holder, his seat, its amount and its hold.
	BankerID   string `json:"banker_id,omitempty"`
	BankerSeat int32  `json:"banker_seat,omitempty"`
	Bank       int64  `json:"bank,omitempty"`
	BankHoldID string `json:"bank_hold_id,omitempty"`
	// Auction is the bank's auction (AUCTION); AuctionRounds counts them.
	Auction       *Auction `json:"auction,omitempty"`
	AuctionRounds int32    `json:"auction_rounds,omitempty"`
	// OfferedTo is the baccarat punter the bank is offered to (OFFERING).
	OfferedTo string `json:"offered_to,omitempty"`
	// Coup is the coup being staked (nil before its first stake) or played.
	Coup     *Coup `json:"coup,omitempty"`
	LastCoup *Coup `json:"last_coup,omitempty"`
	// CoupSeq numbers coups, voided ones included; CoupsPlayed counts the
	// settled ones.
	CoupSeq     int64 `json:"coup_seq"`
	CoupsPlayed int64 `json:"coups_played"`
	// FreshShoe: no card was dealt from the shoe in play yet (its
	// banker's move after the cut is due, OLD-CUT).
	FreshShoe bool `json:"fresh_shoe,omitempty"`
	// The shoe in play and the holds to release (shared with the shell).
	game.Bookkeeping
}

// New is a table's initial state: waiting for three players, on the shoe
// shoeID (two decks, cut by the shoe service).
func New(r Rules, shoeID string) (State, error) {
	if err := r.Validate(); err != nil {
		return State{}, err
	}
	return State{Rules: r, Phase: PhaseWaiting, Bookkeeping: game.Bookkeeping{ShoeID: shoeID, ShoeNumber: 1}, FreshShoe: true}, nil
}

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
func (Settle) EffectName() string       { return "settle" }

// Outcome of Apply.
type Outcome struct {
	State  State
	Events []game.Event
	// Hold, when set, is the hold the command waits for; State is then the
	// input state and Events empty.
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
	case PassBank:
		err = a.passBank(c)
	case Stake:
		err = a.stake(c)
	case PassStake:
		err = a.passStake(c)
	case MoveTopCards:
		err = a.moveTopCards(c)
	case Decide:
		err = a.decide(c)
	case game.Tick:
		err = a.tick()
	case MovedToBottom:
		err = a.movedToBottom()
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
		err = game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "the old baccarat has no command %T", in.Cmd)
	}
	if err != nil {
		return Outcome{}, err
	}
	if a.Hold != nil {
		return Outcome{State: s, Hold: a.Hold}, nil
	}
	return Outcome{State: st, Events: a.Events}, nil
}

// Pending is the effect the shell must carry out next, nil when none. Its
// request ids derive from the state: asked again, it is the same.
func Pending(s State) game.Effect {
	cp := s.Coup
	if e := s.Due(); e != nil {
		return e
	}
	switch {
	case s.NewShoeDue && s.Phase != PhaseClosed:
		// Source: RULES.md SHOE-CUT-CARD (no card of a later coup comes
		// from the shoe whose cut card came out)
		return game.NewShoe{}
	case s.Phase == PhaseDealing:
		if cp.CutDue {
			return nil // the banker's announcement (OLD-CUT)
		}
		if cp.MoveTop > 0 && !cp.Moved {
			// Source: RULES.md OLD-CUT (the announced top cards go to the bottom)
			return MoveToBottom{RequestID: cp.ID + "/move", ShoeID: s.ShoeID, CoupID: cp.ID, N: cp.MoveTop}
		}
		seat, ok := cp.cardDue()
		if !ok {
			return nil // unreachable: DEALING always has a card due
		}
		return game.DealCard{RequestID: cp.ID + "/card/" + strconv.Itoa(cp.cardsDealt()+1), CoupID: cp.ID, Hand: cp.handName(seat)}
	case s.Phase == PhaseSettling:
		return cp.settle()
	}
	return nil
}

// Restart gives the auction, staking, cut, decision or bank offer in
// progress its full time limit again from now (after a restart of the
// service); it reports whether the deadline moved.
func Restart(s State, now time.Time) (State, bool) {
	r := s.Rules
	ms := map[Phase]int32{PhaseAuction: r.AuctionWindowMS, PhaseStaking: r.StakingWindowMS, PhaseDealing: r.CutMS,
		PhaseDecision: r.DecisionMS, PhaseOffering: r.BankOfferMS}[s.Phase]
	if ms == 0 {
		return s, false
	}
	var moved bool
	s.Deadline, moved = game.Restarted(s.Deadline, now, ms)
	return s, moved
}

// Deadline is when the core wants a Tick: the end of the auction's or the
// staking's window, of the banker's cut, of a decision, of the bank's
// offer; zero when it waits for nobody.
func Deadline(s State) time.Time { return s.Deadline }

// HandName is the DealCard hand of a punter: "punter:<player id>"; the
// banker's is "banker".
func HandName(playerID string) string { return "punter:" + playerID }

func (cp *Coup) handName(seat int) string {
	if seat < 0 {
		return "banker"
	}
	return HandName(cp.Hands[seat].PlayerID)
}

func (cp *Coup) cardsDealt() int {
	n := len(cp.Banker)
	for _, h := range cp.Hands {
		n += len(h.Cards)
	}
	return n
}

// cardDue is the hand (index, -1 the banker) whose card is due: a card of
// the deal (OLD-DEAL) or a card drawn (OLD-DRAW).
func (cp *Coup) cardDue() (int, bool) {
	if cp.DrawDue {
		return cp.DrawSeat, true
	}
	step, err := nextStep(cp)
	if err != nil {
		return 0, false
	}
	switch step.Kind {
	case rules.StepDealPlayer, rules.StepDealBanker:
		return step.Seat, true
	}
	return 0, false
}

func (cp *Coup) engineCoup() (rules.OldCoup, error) {
	parse := func(codes []string) ([]rules.Card, error) {
		out := make([]rules.Card, 0, len(codes))
		for _, code := range codes {
			c, err := rules.ParseCard(code)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	oc := rules.OldCoup{Punters: make([][]rules.Card, len(cp.Hands)), Stood: make([]bool, len(cp.Hands)), BankerStood: cp.BankerStood}
	for i, h := range cp.Hands {
		cards, err := parse(h.Cards)
		if err != nil {
			return oc, err
		}
		oc.Punters[i], oc.Stood[i] = cards, h.Stood
	}
	var err error
	oc.Banker, err = parse(cp.Banker)
	return oc, err
}

func nextStep(cp *Coup) (rules.OldStep, error) {
	oc, err := cp.engineCoup()
	if err != nil {
		return rules.OldStep{}, err
	}
	return rules.NextStepOld(oc)
}

// points is a hand's OLD-VALUES points.
func points(codes []string) int {
	p := 0
	for _, code := range codes {
		if c, err := rules.ParseCard(code); err == nil {
			p += rules.OldValue(c)
		}
	}
	return p
}

func (cp *Coup) settle() Settle {
	e := Settle{CoupID: cp.ID, BankerID: cp.BankerID, BankHoldID: cp.BankHoldID, Bank: cp.Bank,
		NewBank: cp.Bank + cp.BankerNet, Split: cp.Split, Natural: cp.Natural}
	for _, h := range cp.Hands {
		e.Stakes = append(e.Stakes, StakeHold{PlayerID: h.PlayerID, HoldID: h.HoldID, Amount: h.Stake})
		e.Moves = append(e.Moves, Move{PlayerID: h.PlayerID, Amount: h.Net})
		e.Outcomes = append(e.Outcomes, rules.OldOutcome(h.Points, cp.BankerPoints))
	}
	e.Moves = append(e.Moves, Move{PlayerID: cp.BankerID, Amount: cp.BankerNet})
	return e
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

func (a *applier) seated(playerID string) (Seat, error) {
	st, ok := a.s.seat(playerID)
	if !ok {
		return st, game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", playerID)
	}
	return st, nil
}

func (a *applier) join(c Join) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if c.PlayerID == "" {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "a player id is required")
	}
	if _, ok := s.seat(c.PlayerID); ok {
		return game.Refuse(game.AlreadyExists, ReasonAlreadySeated, "player %q already has a seat", c.PlayerID)
	}
	if int32(len(s.Seats)) >= s.Rules.MaxSeats {
		return game.Refuse(game.ResourceExhausted, ReasonTableFull, "all %d seats are taken", s.Rules.MaxSeats)
	}
	s.NextSeat++
	s.Seats = append(s.Seats, Seat{PlayerID: c.PlayerID, Number: s.NextSeat})
	a.Emit(a.coupID(), &eventsv1.PlayerSeated{PlayerId: c.PlayerID, SeatNumber: s.NextSeat})
	if s.Phase == PhaseWaiting && len(s.Seats) >= MinPlayers {
		a.openAuction()
	}
	return nil
}

func (a *applier) leave(c Leave) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	st, err := a.seated(c.PlayerID)
	if err != nil {
		return err
	}
	if c.PlayerID == s.BankerID {
		if s.Phase != PhaseStaking || (s.Coup != nil && len(s.Coup.Hands) > 0) {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the banker leaves only between coups, before the first stake")
		}
		s.Coup = nil // passes only: no coup was staked
	}
	for i := range s.Seats {
		if s.Seats[i].PlayerID == c.PlayerID {
			s.Seats = append(s.Seats[:i], s.Seats[i+1:]...)
			break
		}
	}
	a.Emit(a.coupID(), &eventsv1.PlayerLeft{PlayerId: c.PlayerID, SeatNumber: st.Number})
	switch {
	case c.PlayerID == s.BankerID:
		// Source: RULES.md OLD-BACCARAT (the banker never has to give up the
		// bank: leaving his seat, he gives it up himself)
		a.endBank(eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED)
	case s.Phase == PhaseAuction:
		au := s.Auction
		for i, b := range au.Bids {
			if b.PlayerID == c.PlayerID {
				s.PendingVoids = append(s.PendingVoids, b.HoldID)
				au.Bids = append(au.Bids[:i], au.Bids[i+1:]...)
				break
			}
		}
		au.Passed = remove(au.Passed, c.PlayerID)
		if len(s.Seats) < MinPlayers {
			for _, b := range au.Bids {
				s.PendingVoids = append(s.PendingVoids, b.HoldID)
			}
			s.Auction, s.Phase, s.Deadline = nil, PhaseWaiting, time.Time{}
		} else {
			a.auctionDone()
		}
	case s.Phase == PhaseOffering && c.PlayerID == s.OfferedTo:
		a.keepBank()
	case s.Phase == PhaseStaking && s.Coup != nil:
		a.stakingDone()
	}
	return nil
}

func remove(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// openAuction opens an auction of the bank when three players are seated,
// else waits for them.
func (a *applier) openAuction() {
	s := a.s
	s.Deadline, s.OfferedTo = time.Time{}, ""
	if len(s.Seats) < MinPlayers {
		s.Phase, s.Auction = PhaseWaiting, nil
		return
	}
	s.AuctionRounds++
	s.Phase, s.Auction = PhaseAuction, &Auction{Round: s.AuctionRounds}
	// Source: RULES.md OLD-BANKER (the largest stake takes the bank: an auction)
	a.Emit("", &eventsv1.BankAuctionOpened{Round: s.AuctionRounds})
}

func (a *applier) bid(c Bid) error {
	s, r := a.s, a.s.Rules
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseAuction && s.Phase != PhaseOffering {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank is neither auctioned nor offered")
	}
	if _, err := a.seated(c.PlayerID); err != nil {
		return err
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0, got %d", c.Amount)
	}
	if c.Amount < r.MinBank {
		return game.Refuse(game.InvalidArgument, ReasonBankBelowMinimum, "the minimum bank is %d, bid %d", r.MinBank, c.Amount)
	}
	if c.Amount > 1<<50 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "a bank of %d is beyond any table", c.Amount)
	}
	if s.Phase == PhaseOffering {
		if c.PlayerID != s.OfferedTo {
			return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the bank is offered to %q", s.OfferedTo)
		}
	} else {
		au := s.Auction
		if contains(au.Passed, c.PlayerID) {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "player %q passed in this auction", c.PlayerID)
		}
		if hi := au.highest(); hi >= 0 && c.Amount <= au.Bids[hi].Amount {
			return game.Refuse(game.FailedPrecondition, ReasonBidTooLow, "the highest bid is %d, bid %d", au.Bids[hi].Amount, c.Amount)
		}
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	if s.Phase == PhaseOffering {
		// Source: RULES.md OLD-BACCARAT (the punter showing baccarat takes the bank)
		prev := s.BankerID
		if s.BankHoldID != "" {
			s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
		}
		a.setBanker(c.PlayerID, c.Amount, c.HoldID, prev)
		return nil
	}
	au := s.Auction
	for i, b := range au.Bids {
		if b.PlayerID == c.PlayerID {
			s.PendingVoids = append(s.PendingVoids, b.HoldID) // his raise replaces his bid
			au.Bids = append(au.Bids[:i], au.Bids[i+1:]...)
			break
		}
	}
	au.Bids = append(au.Bids, BankBid{PlayerID: c.PlayerID, Amount: c.Amount, HoldID: c.HoldID})
	if s.Deadline.IsZero() {
		s.Deadline = a.in.After(r.AuctionWindowMS)
	}
	a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID, Amount: c.Amount})
	a.auctionDone()
	return nil
}

// highest is the index of the highest bid, -1 when none.
func (au *Auction) highest() int {
	hi := -1
	for i, b := range au.Bids {
		if hi < 0 || b.Amount > au.Bids[hi].Amount {
			hi = i
		}
	}
	return hi
}

func (a *applier) passBank(c PassBank) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if _, err := a.seated(c.PlayerID); err != nil {
		return err
	}
	switch s.Phase {
	case PhaseOffering:
		if c.PlayerID != s.OfferedTo {
			return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the bank is offered to %q", s.OfferedTo)
		}
		a.keepBank()
	case PhaseAuction:
		if contains(s.Auction.Passed, c.PlayerID) {
			return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q passed already", c.PlayerID)
		}
		s.Auction.Passed = append(s.Auction.Passed, c.PlayerID)
		a.Emit("", &eventsv1.BankBid{PlayerId: c.PlayerID})
		a.auctionDone()
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the bank is neither auctioned nor offered")
	}
	return nil
}

// auctionDone closes the auction when every seated player has bid or
// passed.
func (a *applier) auctionDone() {
	au := a.s.Auction
	for _, st := range a.s.Seats {
		acted := contains(au.Passed, st.PlayerID)
		for _, b := range au.Bids {
			acted = acted || b.PlayerID == st.PlayerID
		}
		if !acted {
			return
		}
	}
	a.closeAuction()
}

// closeAuction gives the bank to the highest bid and releases the others
// (OLD-BANKER); with no bid, a new round opens.
func (a *applier) closeAuction() {
	s := a.s
	au := s.Auction
	hi := au.highest()
	if hi < 0 {
		a.openAuction()
		return
	}
	for i, b := range au.Bids {
		if i != hi {
			s.PendingVoids = append(s.PendingVoids, b.HoldID)
		}
	}
	w := au.Bids[hi]
	// Source: RULES.md OLD-BANKER (the player willing to put up the largest stake becomes banker)
	a.setBanker(w.PlayerID, w.Amount, w.HoldID, "")
}

func (a *applier) setBanker(playerID string, bank int64, holdID, prev string) {
	s := a.s
	st, _ := s.seat(playerID)
	s.BankerID, s.BankerSeat, s.Bank, s.BankHoldID = playerID, st.Number, bank, holdID
	s.Auction, s.OfferedTo, s.Phase, s.Deadline = nil, "", PhaseStaking, time.Time{}
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: playerID,
		PreviousBankerPlayerId: prev, Bank: bank})
}

// keepBank: the offered punter did not take the bank; the banker keeps it.
func (a *applier) keepBank() {
	s := a.s
	s.OfferedTo, s.Phase, s.Deadline = "", PhaseStaking, time.Time{}
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, BankerPlayerId: s.BankerID,
		PreviousBankerPlayerId: s.BankerID, Bank: s.Bank})
	a.bankCovers()
}

// bankCovers ends a bank that cannot cover one minimum stake twice
// (OLD-STAKE) and opens an auction.
func (a *applier) bankCovers() {
	if a.s.Bank < 2*a.s.Rules.MinStake {
		a.endBank(eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST)
	}
}

// endBank releases the bank (what is left of its hold) and auctions it.
func (a *applier) endBank(reason eventsv1.BankChangeReason) {
	s := a.s
	if s.Bank > 0 && s.BankHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	}
	prev := s.BankerID
	s.BankerID, s.BankerSeat, s.Bank, s.BankHoldID = "", 0, 0, ""
	a.Emit("", &eventsv1.BankChanged{Reason: reason, PreviousBankerPlayerId: prev})
	a.openAuction()
}

func (a *applier) stake(c Stake) error {
	s, r := a.s, a.s.Rules
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseStaking {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the staking is closed")
	}
	st, err := a.seated(c.PlayerID)
	if err != nil {
		return err
	}
	if c.PlayerID == s.BankerID {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker stakes nothing against his own bank")
	}
	var staked int64
	if cp := s.Coup; cp != nil {
		if contains(cp.Passed, c.PlayerID) {
			return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q sits this coup out", c.PlayerID)
		}
		for _, h := range cp.Hands {
			if h.PlayerID == c.PlayerID {
				return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q has staked in this coup", c.PlayerID)
			}
			staked += h.Stake
		}
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0, got %d", c.Amount)
	}
	if c.Amount < r.MinStake || (r.MaxStake > 0 && c.Amount > r.MaxStake) {
		limits := fmt.Sprintf("at least %d (no maximum)", r.MinStake)
		if r.MaxStake > 0 {
			limits = fmt.Sprintf("%d..%d", r.MinStake, r.MaxStake)
		}
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "a stake is %s, staked %d", limits, c.Amount)
	}
	if c.Amount > (s.Bank/2)-staked {
		// Source: RULES.md OLD-STAKE (the banker must hold double each stake:
		// read as a cover that must be present)
		return game.Refuse(game.FailedPrecondition, ReasonBetExceedsBank, "the bank of %d covers %d of stakes twice; %d are staked",
			s.Bank, s.Bank/2, staked)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	if s.Coup == nil {
		s.CoupSeq++
		s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq, BankerID: s.BankerID, Bank: s.Bank, BankHoldID: s.BankHoldID}
		s.Deadline = a.in.After(r.StakingWindowMS)
		a.Emit(s.Coup.ID, &eventsv1.BettingWindowStarted{CloseTime: timestamp(s.Deadline)})
	}
	cp := s.Coup
	cp.Hands = append(cp.Hands, Hand{PlayerID: c.PlayerID, Seat: st.Number, Stake: c.Amount, HoldID: c.HoldID})
	a.Emit(cp.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Uncovered: s.Bank - 2*(staked+c.Amount)})
	a.stakingDone()
	return nil
}

func (a *applier) passStake(c PassStake) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseStaking {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the staking is closed")
	}
	if _, err := a.seated(c.PlayerID); err != nil {
		return err
	}
	if c.PlayerID == s.BankerID {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker does not stake")
	}
	if cp := s.Coup; cp != nil {
		if contains(cp.Passed, c.PlayerID) {
			return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q passed already", c.PlayerID)
		}
		for _, h := range cp.Hands {
			if h.PlayerID == c.PlayerID {
				return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q has staked in this coup", c.PlayerID)
			}
		}
		cp.Passed = append(cp.Passed, c.PlayerID)
		a.Emit(cp.ID, &eventsv1.BetDeclined{PlayerId: c.PlayerID})
		a.stakingDone()
		return nil
	}
	// Before the first stake no coup exists: a pass is for the coup about
	// to be staked, so the coup begins (without a window: the first stake
	// opens it).
	s.CoupSeq++
	s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq, BankerID: s.BankerID, Bank: s.Bank, BankHoldID: s.BankHoldID, Passed: []string{c.PlayerID}}
	a.Emit(s.Coup.ID, &eventsv1.BetDeclined{PlayerId: c.PlayerID})
	a.stakingDone()
	return nil
}

// stakingDone closes the staking when every seated punter has staked or
// passed (and someone staked).
func (a *applier) stakingDone() {
	s := a.s
	cp := s.Coup
	if len(cp.Hands) == 0 {
		return
	}
	for _, st := range s.Seats {
		if st.PlayerID == s.BankerID || contains(cp.Passed, st.PlayerID) {
			continue
		}
		staked := false
		for _, h := range cp.Hands {
			staked = staked || h.PlayerID == st.PlayerID
		}
		if !staked {
			return
		}
	}
	a.closeStaking()
}

// closeStaking fixes the stakes; with fewer than two the coup is voided
// (OLD-DECKS), else the punters are ordered clockwise from the banker's
// left and the deal begins.
func (a *applier) closeStaking() {
	s := a.s
	cp := s.Coup
	s.Deadline = time.Time{}
	a.Emit(cp.ID, &eventsv1.BettingClosed{BetsCount: int32(len(cp.Hands))})
	if len(cp.Hands) < rules.OldMinPunters {
		// Source: RULES.md OLD-DECKS (at least three players: the banker and two punters)
		a.voidCoup(fmt.Sprintf("%d punter(s) staked; a coup needs %d (OLD-DECKS)", len(cp.Hands), rules.OldMinPunters), "", "")
		return
	}
	// Source: RULES.md OLD-DEAL (seat 0 is the banker's left neighbour,
	// clockwise: seat numbers after the banker's first, then those before)
	after := func(n int32) bool { return n > s.BankerSeat }
	sort.SliceStable(cp.Hands, func(i, j int) bool {
		hi, hj := cp.Hands[i].Seat, cp.Hands[j].Seat
		if after(hi) != after(hj) {
			return after(hi)
		}
		return hi < hj
	})
	cp.StakingClosed = true
	s.Phase = PhaseDealing
	if !s.NewShoeDue {
		a.startDeal()
	}
}

// startDeal opens the banker's cut announcement on a fresh shoe
// (OLD-CUT); otherwise the cards are due.
func (a *applier) startDeal() {
	s := a.s
	cp := s.Coup
	if s.FreshShoe && s.Rules.MaxMoveTop > 0 && cp.cardsDealt() == 0 && !cp.CutDue && cp.MoveTop == 0 {
		cp.CutDue = true
		s.Deadline = a.in.After(s.Rules.CutMS)
	}
}

func (a *applier) moveTopCards(c MoveTopCards) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseDealing || !s.Coup.CutDue {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no cut announcement is due")
	}
	if c.PlayerID != s.Coup.BankerID {
		return game.Refuse(game.PermissionDenied, ReasonNotBanker, "only the banker moves top cards")
	}
	if c.N < 0 || c.N > s.Rules.MaxMoveTop {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "the banker moves 0..%d cards, got %d", s.Rules.MaxMoveTop, c.N)
	}
	a.cutDone(c.N)
	return nil
}

func (a *applier) cutDone(n int32) {
	cp := a.s.Coup
	cp.CutDue, cp.MoveTop, a.s.Deadline = false, n, time.Time{}
	if n > 0 {
		// Source: RULES.md OLD-CUT (the banker announces the move to the table)
		a.Emit(cp.ID, &eventsv1.TopCardsMoved{BankerPlayerId: cp.BankerID, Count: n})
	}
}

func (a *applier) movedToBottom() error {
	cp := a.s.Coup
	if a.s.Phase != PhaseDealing || cp.CutDue || cp.MoveTop == 0 || cp.Moved || a.s.NewShoeDue {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no move of top cards is due")
	}
	cp.Moved = true
	return nil
}

func (a *applier) cardDealt(c game.CardDealt) error {
	s := a.s
	if s.Phase != PhaseDealing || Pending(*s) == nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due")
	}
	if _, ok := Pending(*s).(game.DealCard); !ok {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due: %s first", Pending(*s).EffectName())
	}
	if _, err := rules.ParseCard(c.Code); err != nil {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "card %q: %v", c.Code, err)
	}
	cp := s.Coup
	seat, _ := cp.cardDue()
	cards, hand, holder := &cp.Banker, eventsv1.Hand_HAND_BANKER, cp.BankerID
	if seat >= 0 {
		cards, hand, holder = &cp.Hands[seat].Cards, eventsv1.Hand_HAND_PUNTER, cp.Hands[seat].PlayerID
	}
	*cards = append(*cards, c.Code)
	cp.DrawDue = false
	s.FreshShoe = false
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: hand, Card: game.Cards([]string{c.Code})[0], Position: int32(len(*cards)),
		Total: int32(points(*cards)), HolderPlayerId: holder})
	return a.advance()
}

// advance moves the coup on after a card or a decision: the next card,
// a decision (with its time limit), or the result.
func (a *applier) advance() error {
	s := a.s
	cp := s.Coup
	step, err := nextStep(cp)
	if err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	switch step.Kind {
	case rules.StepDealPlayer, rules.StepDealBanker:
		s.Phase, s.Deadline = PhaseDealing, time.Time{}
	case rules.StepPlayerChoice, rules.StepBankerChoice:
		// Source: RULES.md OLD-DRAW (less than 4 may draw one card, in order, the banker last)
		s.Phase, s.Deadline = PhaseDecision, a.in.After(s.Rules.DecisionMS)
	case rules.StepDone:
		a.result(step)
	}
	return nil
}

// Decider is the player whose draw decision is due (OLD-DRAW), "" when
// none.
func Decider(s State) string {
	p, _ := s.decider()
	return p
}

// decider is the player whose draw decision is due, and his hand (index,
// -1 the banker).
func (s *State) decider() (string, int) {
	if s.Phase != PhaseDecision {
		return "", 0
	}
	step, err := nextStep(s.Coup)
	if err != nil {
		return "", 0
	}
	if step.Kind == rules.StepBankerChoice {
		return s.Coup.BankerID, -1
	}
	return s.Coup.Hands[step.Seat].PlayerID, step.Seat
}

func (a *applier) decide(c Decide) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseDecision {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no draw decision is due")
	}
	who, seat := s.decider()
	if c.PlayerID != who {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "it is %q's turn to decide", who)
	}
	return a.decided(seat, c.Draw, true)
}

func (a *applier) decided(seat int, draw, byChoice bool) error {
	cp := a.s.Coup
	hand, who := eventsv1.Hand_HAND_BANKER, cp.BankerID
	if seat >= 0 {
		hand, who = eventsv1.Hand_HAND_PUNTER, cp.Hands[seat].PlayerID
	}
	// Source: RULES.md OLD-DRAW (one card only, or none)
	a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: draw, ByChoice: byChoice, PlayerId: who, Rule: rules.RuleOLDDraw})
	if draw {
		cp.DrawDue, cp.DrawSeat = true, seat
		a.s.Phase, a.s.Deadline = PhaseDealing, time.Time{}
		return nil
	}
	if seat < 0 {
		cp.BankerStood = true
	} else {
		cp.Hands[seat].Stood = true
	}
	return a.advance()
}

// result records the coup's result from rules.SettleOld and moves to
// SETTLING.
func (a *applier) result(step rules.OldStep) {
	s := a.s
	cp := s.Coup
	oc, _ := cp.engineCoup()
	stakes := make([]int64, len(cp.Hands))
	for i, h := range cp.Hands {
		stakes[i] = h.Stake
	}
	res, err := rules.SettleOld(oc, cp.Bank, stakes)
	if err != nil {
		return // unreachable: the stakes are covered twice (stake) and the coup is done
	}
	cp.Decided, cp.Natural, cp.Split = true, step.Rule == rules.RuleOLDNatural, res.Split
	cp.BankerPoints, cp.BankerNet = points(cp.Banker), res.BankerNet
	switch {
	case res.BankerNet > 0:
		cp.Outcome = rules.OutcomeBankWins
	case res.BankerNet < 0:
		cp.Outcome = rules.OutcomeBankLoses
	default:
		cp.Outcome = rules.OutcomeStandOff
	}
	if res.NextBanker >= 0 {
		cp.NextBanker = cp.Hands[res.NextBanker].PlayerID
	}
	if cp.Natural && rules.OldRank(cp.BankerPoints) >= 8 {
		// Source: RULES.md OLD-NATURAL (the banker with a 9 or 19, an 8 or 18, shows)
		a.Emit(cp.ID, &eventsv1.NaturalShown{Hand: eventsv1.Hand_HAND_BANKER, Total: int32(cp.BankerPoints), Cards: game.Cards(cp.Banker)})
	}
	ev := &eventsv1.CoupResulted{Outcome: game.EventOutcome(cp.Outcome), BankerTotal: int32(cp.BankerPoints), Natural: cp.Natural,
		BankerCards: game.Cards(cp.Banker)}
	for i := range cp.Hands {
		h := &cp.Hands[i]
		h.Points, h.Net, h.Rule = points(h.Cards), res.Net[i], res.Rule[i]
		out := eventsv1.Outcome_OUTCOME_BANK_WINS
		if h.Net > 0 {
			out = eventsv1.Outcome_OUTCOME_BANK_LOSES
		}
		ev.Hands = append(ev.Hands, &eventsv1.HandResult{Hand: eventsv1.Hand_HAND_PUNTER, HolderPlayerId: h.PlayerID,
			Total: int32(h.Points), Cards: game.Cards(h.Cards), Outcome: out})
	}
	a.Emit(cp.ID, ev)
	s.Phase, s.Deadline = PhaseSettling, time.Time{}
}

func (a *applier) settled(c Settled) error {
	s := a.s
	if s.Phase != PhaseSettling {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no settlement is due")
	}
	cp := s.Coup
	newBank := cp.Bank + cp.BankerNet
	if c.NewBank != newBank {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "the settlement left a bank of %d, the coup's is %d", c.NewBank, newBank)
	}
	var won int64
	for _, h := range cp.Hands {
		if h.Net < 0 {
			won -= h.Net
		}
	}
	cp.Settled, cp.SettleTime = true, a.in.Now
	a.Emit(cp.ID, &eventsv1.CoupSettled{Outcome: game.EventOutcome(cp.Outcome), BankerWinnings: won, BankerNet: cp.BankerNet, NewBank: newBank})
	s.CoupsPlayed++
	s.Bank = newBank
	if newBank == 0 {
		s.BankHoldID = "" // the settlement closed it
	}
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the shoe's last)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	s.LastCoup, s.Coup = cp, nil
	s.Phase, s.Deadline = PhaseStaking, time.Time{}
	if _, seated := s.seat(cp.NextBanker); cp.NextBanker != "" && seated && cp.NextBanker != s.BankerID {
		// Source: RULES.md OLD-BACCARAT (the banker first settles with
		// everyone; then the punter showing baccarat takes the bank)
		s.Phase, s.OfferedTo, s.Deadline = PhaseOffering, cp.NextBanker, a.in.After(s.Rules.BankOfferMS)
		a.Emit("", &eventsv1.BankOffered{PlayerId: cp.NextBanker})
		return nil
	}
	a.bankCovers()
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
	s.ShoeID, s.ShoeNumber, s.NewShoeDue, s.FreshShoe = c.ShoeID, c.Number, false, true
	a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
	if s.Phase == PhaseDealing {
		a.startDeal() // the coup was waiting for the shoe
	}
	return nil
}

func (a *applier) tick() error {
	s := a.s
	if s.Deadline.IsZero() || a.in.Now.Before(s.Deadline) {
		return nil // nothing due
	}
	timedOut := func(player, turn, action string) {
		a.Emit(a.coupID(), &eventsv1.TurnTimedOut{PlayerId: player, Turn: turn, Action: action})
	}
	switch s.Phase {
	case PhaseAuction:
		a.closeAuction()
	case PhaseOffering:
		timedOut(s.OfferedTo, "bank_offer", "bank_kept")
		a.keepBank()
	case PhaseStaking:
		cp := s.Coup
		if cp == nil {
			s.Deadline = time.Time{}
			return nil
		}
		for _, st := range s.Seats {
			if st.PlayerID == s.BankerID || contains(cp.Passed, st.PlayerID) || cp.staked(st.PlayerID) {
				continue
			}
			cp.Passed = append(cp.Passed, st.PlayerID)
			timedOut(st.PlayerID, "bet", "bet_declined")
		}
		a.closeStaking()
	case PhaseDealing:
		if s.Coup.CutDue {
			timedOut(s.Coup.BankerID, "cut", "no_move")
			a.cutDone(0)
		}
		s.Deadline = time.Time{}
	case PhaseDecision:
		who, seat := s.decider()
		draw := !s.Rules.StandOnTimeout
		timedOut(who, "decision", map[bool]string{true: "draw", false: "stand"}[draw])
		return a.decided(seat, draw, false)
	default:
		s.Deadline = time.Time{}
	}
	return nil
}

func (cp *Coup) staked(playerID string) bool {
	for _, h := range cp.Hands {
		if h.PlayerID == playerID {
			return true
		}
	}
	return false
}

func (a *applier) void(c Void) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Coup == nil || len(s.Coup.Hands) == 0 || (s.Phase != PhaseStaking && s.Phase != PhaseDealing && s.Phase != PhaseDecision) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no coup to void: only a coup with stakes, before its result, can be")
	}
	if c.CoupID != s.Coup.ID {
		return game.Refuse(game.FailedPrecondition, ReasonCoupNotInPlay, "coup %q is not the coup in play (%s)", c.CoupID, s.Coup.ID)
	}
	a.voidCoup(c.Reason, c.By, c.ByRole)
	return nil
}

// voidCoup returns every stake of the coup in play (CF-ERROR) and reopens
// the staking; the bank stays.
func (a *applier) voidCoup(reason, by, role string) {
	s := a.s
	cp := s.Coup
	// Source: RULES.md CF-ERROR (the croupier voids the coup; every stake is returned)
	cp.Voided, cp.VoidReason = true, reason
	for _, h := range cp.Hands {
		s.PendingVoids = append(s.PendingVoids, h.HoldID)
	}
	a.Emit(cp.ID, &eventsv1.CoupVoided{Reason: reason, By: by, ByRole: role})
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the cut card came out in this coup)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	s.LastCoup, s.Coup = cp, nil
	s.Phase, s.Deadline = PhaseStaking, time.Time{}
}

func (a *applier) close(c Close) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Coup != nil && (len(s.Coup.Hands) > 0 || s.Phase != PhaseStaking) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "a coup with %d stakes is in play: void it or let it finish", len(s.Coup.Hands))
	}
	if s.BankHoldID != "" {
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
	}
	if s.Auction != nil {
		for _, b := range s.Auction.Bids {
			s.PendingVoids = append(s.PendingVoids, b.HoldID)
		}
	}
	s.Phase, s.Deadline, s.Coup, s.Auction, s.OfferedTo = PhaseClosed, time.Time{}, nil, nil, ""
	s.BankerID, s.BankerSeat, s.Bank, s.BankHoldID = "", 0, 0, ""
	s.ShoeToClose, s.NewShoeDue = true, false
	a.Emit("", &eventsv1.TableClosed{Reason: c.Reason, By: c.By})
	return nil
}

// clone is a deep copy of s.
func (s State) clone() State {
	c := s
	c.Seats = append([]Seat(nil), s.Seats...)
	if s.Auction != nil {
		au := *s.Auction
		au.Bids = append([]BankBid(nil), s.Auction.Bids...)
		au.Passed = append([]string(nil), s.Auction.Passed...)
		c.Auction = &au
	}
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	c.Bookkeeping = s.Bookkeeping.Clone()
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Hands = append([]Hand(nil), cp.Hands...)
	for i := range c.Hands {
		c.Hands[i].Cards = append([]string(nil), cp.Hands[i].Cards...)
	}
	c.Passed = append([]string(nil), cp.Passed...)
	c.Banker = append([]string(nil), cp.Banker...)
	return &c
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if cp := s.Coup; cp != nil {
		var hands []string
		for _, h := range cp.Hands {
			hands = append(hands, fmt.Sprintf("%s:%d%v", h.PlayerID, h.Stake, h.Cards))
		}
		coup = fmt.Sprintf("%s#%d banker=%s%v hands=[%s] passed=%v cut=%v/%d", cp.ID, cp.Number, cp.BankerID, cp.Banker,
			strings.Join(hands, " "), cp.Passed, cp.CutDue, cp.MoveTop)
	}
	return fmt.Sprintf("phase=%d deadline=%v seats=%d banker=%s bank=%d coup=%s played=%d shoe=%d voids=%v",
		s.Phase, s.Deadline, len(s.Seats), s.BankerID, s.Bank, coup, s.CoupsPlayed, s.ShoeNumber, s.PendingVoids)
}
