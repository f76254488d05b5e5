// Package puntobanco is the pure game core of a punto banco table (RULES.md
// PB-*): the house banks every coup (PB-BANK), anyone bets on the bank,
// the player, a tie, the bank's natural or the pairs, a betting window on a
// timer closes the betting, the coup is dealt by the fixed tableau
// (PB-TABLEAU) and settled without anyone acting, the result is shown for
// a pause, and the next coup's betting opens.
//
// It follows the contract of package game: Apply(state, input) returns
// the new state and its events or a *game.Error (nothing changed); Pending
// names the effect due (a card to deal, a settlement, holds to release, a
// new shoe); Deadline is when a Tick is due. No I/O, no clock, no
// randomness: the input brings the time, the ids, the cards and the
// wallet's answers.
//
// Coup cycle:
//
//	BETTING (no deadline) --first bet--> BETTING (window) --Tick--> DEALING
//	DEALING --CardDealt...--> SETTLING --Settled--> RESULT (pause)
//	RESULT --Tick--> BETTING (no deadline)
//
// A new shoe is opened during the pause after the coup in which the cut
// card came out (SHOE-CUT-CARD); the shoe's results (the roads) start
// again. The croupier may void the coup in play before its settlement
// (CF-ERROR applies to every game): its bets are returned.
package puntobanco

import (
	"fmt"
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// MaxBets bounds the bets of one coup (RESOURCE_EXHAUSTED TABLE_FULL
// beyond): the state stays a bounded record.
const MaxBets = 500

// Reasons of refusals (chemmy.table.v1.ErrorReason names).
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

// Rules are a table's resolved house rules (defaults filled in by the
// shell; see chemmy.table.v1.PuntoBancoRules for each one's meaning).
// Amounts in minor units, times in ms.
type Rules struct {
	Decks           int32          `json:"decks"`
	CutCardFromEnd  int32          `json:"cut_card_from_end"`
	Burn            int32          `json:"burn"`
	MaxSeats        int32          `json:"max_seats"`
	MinBet          int64          `json:"min_bet"`
	MaxBet          int64          `json:"max_bet,omitempty"`
	HouseLimit      int64          `json:"house_limit,omitempty"`
	CommissionBP    int64          `json:"commission_bp"`
	Rounding        rules.Rounding `json:"commission_rounding"`
	NoCommission    bool           `json:"no_commission,omitempty"`
	TiePays         int64          `json:"tie_pays"`
	BankNaturalPays int64          `json:"bank_natural_pays"`
	BankNaturalOff  bool           `json:"bank_natural_bet_off,omitempty"`
	PairBets        bool           `json:"pair_bets,omitempty"`
	PairPays        int64          `json:"pair_pays"`
	BettingWindowMS int32          `json:"betting_window_ms"`
	ResultPauseMS   int32          `json:"result_pause_ms"`
}

// Validate checks every rule's range; the error's reason is
// INVALID_HOUSE_RULE.
func (r Rules) Validate() error {
	bad := func(format string, args ...any) error {
		return game.Refuse(game.InvalidArgument, ReasonInvalidHouseRule, format, args...)
	}
	switch {
	case r.Decks != 6 && r.Decks != 8:
		// Source: RULES.md PB-DECKS (6 or 8 decks)
		return bad("decks must be 6 or 8 (PB-DECKS), got %d", r.Decks)
	case r.CutCardFromEnd < 6 || r.CutCardFromEnd > 16:
		return bad("cut_card_from_end must be 6..16, got %d", r.CutCardFromEnd)
	case r.Burn < 3 || r.Burn > 4:
		return bad("burn must be 3 or 4, got %d", r.Burn)
	case r.MaxSeats < 1 || r.MaxSeats > 15:
		return bad("max_seats must be 1..15, got %d", r.MaxSeats)
	case r.MinBet < 1:
		return bad("min_bet must be > 0, got %d", r.MinBet)
	case r.MaxBet < 0 || (r.MaxBet > 0 && r.MaxBet < r.MinBet):
		return bad("max_bet must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.MaxBet)
	case r.HouseLimit < 0 || (r.HouseLimit > 0 && r.HouseLimit < r.MinBet):
		return bad("house_limit must be 0 (none) or >= min_bet %d, got %d", r.MinBet, r.HouseLimit)
	case r.BettingWindowMS < 1000 || r.BettingWindowMS > 600000:
		return bad("betting_window_ms must be 1000..600000, got %d", r.BettingWindowMS)
	case r.ResultPauseMS < 0 || r.ResultPauseMS > 60000:
		return bad("result_pause_ms must be 0..60000, got %d", r.ResultPauseMS)
	}
	if err := r.EngineRules().Validate(); err != nil {
		return bad("%v", err)
	}
	return nil
}

// EngineRules is the rules engine's view of the payouts (PB-BETS).
func (r Rules) EngineRules() rules.PuntoBancoRules {
	return rules.PuntoBancoRules{
		CommissionBP: r.CommissionBP, CommissionRounding: r.Rounding, NoCommission: r.NoCommission,
		TiePays: r.TiePays, BankNaturalPays: r.BankNaturalPays, PairPays: r.PairPays,
	}
}

// Spot is what a bet is on (PB-BETS); the values are those of
// chemmy.table.v1.BetSpot.
type Spot int8

// The spots of the layout.
const (
	SpotBank        Spot = 1
	SpotPlayer      Spot = 2
	SpotTie         Spot = 3
	SpotBankNatural Spot = 4
	SpotPlayerPair  Spot = 5
	SpotBankPair    Spot = 6
)

// String is the spot's name in events: "bank", "player", "tie",
// "bank_natural", "player_pair", "bank_pair".
func (s Spot) String() string {
	switch s {
	case SpotBank:
		return "bank"
	case SpotPlayer:
		return "player"
	case SpotTie:
		return "tie"
	case SpotBankNatural:
		return "bank_natural"
	case SpotPlayerPair:
		return "player_pair"
	case SpotBankPair:
		return "bank_pair"
	}
	return "spot(" + strconv.Itoa(int(s)) + ")"
}

// Bet returns the rules engine's bet of the spot.
func (s Spot) Bet() rules.PuntoBancoBet {
	switch s {
	case SpotBank:
		return rules.BetBank
	case SpotPlayer:
		return rules.BetPlayer
	case SpotTie:
		return rules.BetTie
	case SpotBankNatural:
		return rules.BetBankNatural
	case SpotPlayerPair:
		return rules.BetPlayerPair
	case SpotBankPair:
		return rules.BetBankPair
	}
	return 0
}

// Phase is where the coup cycle stands.
type Phase int8

// The phases; the values are those of chemmy.table.v1.TableState.
const (
	PhaseBetting  Phase = 3
	PhaseDealing  Phase = 4
	PhaseSettling Phase = 6
	PhaseClosed   Phase = 9
	PhaseResult   Phase = 10
)

// Bet is one stake on the layout, escrowed by a wallet hold. Amounts in
// minor units; Won, Commission and Lost are set by the settlement.
type Bet struct {
	PlayerID   string `json:"player_id"`
	Spot       Spot   `json:"spot"`
	Amount     int64  `json:"amount"`
	HoldID     string `json:"hold_id"`
	Won        int64  `json:"won,omitempty"`
	Commission int64  `json:"commission,omitempty"`
	Lost       int64  `json:"lost,omitempty"`
}

// Coup is one coup: its bets, cards (codes in deal order), result and
// settlement.
type Coup struct {
	ID     string   `json:"id"`
	Number int64    `json:"number"`
	Bets   []Bet    `json:"bets,omitempty"`
	Player []string `json:"player,omitempty"`
	Banker []string `json:"banker,omitempty"`
	// The result, once the tableau is done (Decided).
	Decided     bool          `json:"decided,omitempty"`
	Outcome     rules.Outcome `json:"outcome,omitempty"`
	Natural     bool          `json:"natural,omitempty"`
	BankNatural bool          `json:"bank_natural,omitempty"`
	PlayerPair  bool          `json:"player_pair,omitempty"`
	BankerPair  bool          `json:"banker_pair,omitempty"`
	PlayerTotal int           `json:"player_total,omitempty"`
	BankerTotal int           `json:"banker_total,omitempty"`
	// The settlement.
	Settled    bool      `json:"settled,omitempty"`
	SettleTime time.Time `json:"settle_time,omitzero"`
	Commission int64     `json:"commission,omitempty"`
	HouseNet   int64     `json:"house_net,omitempty"`
	Voided     bool      `json:"voided,omitempty"`
	VoidReason string    `json:"void_reason,omitempty"`
}

// Seat is a seated player.
type Seat struct {
	PlayerID string `json:"player_id"`
	Number   int32  `json:"number"`
}

// Result is one coup of the shoe as the roads draw it.
type Result struct {
	Outcome     rules.Outcome `json:"outcome"`
	PlayerTotal int           `json:"player_total"`
	BankerTotal int           `json:"banker_total"`
	PlayerPair  bool          `json:"player_pair,omitempty"`
	BankerPair  bool          `json:"banker_pair,omitempty"`
	Natural     bool          `json:"natural,omitempty"`
}

// State is a punto banco table's whole game state.
type State struct {
	Rules    Rules     `json:"rules"`
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Seats    []Seat    `json:"seats,omitempty"`
	NextSeat int32     `json:"next_seat,omitempty"`
	// Coup is the coup being bet (nil before its first bet) or played.
	Coup     *Coup `json:"coup,omitempty"`
	LastCoup *Coup `json:"last_coup,omitempty"`
	// CoupSeq numbers coups, voided ones included; CoupsPlayed counts the
	// settled ones.
	CoupSeq     int64 `json:"coup_seq"`
	CoupsPlayed int64 `json:"coups_played"`
	// PauseOver: the result's pause ended while the new shoe was still to
	// open; the table stays in RESULT and the betting opens with the shoe.
	PauseOver bool `json:"pause_over,omitempty"`
	// Results are the current shoe's coups, for the roads.
	Results []Result `json:"results,omitempty"`
	// The shoe in play and the holds to release (shared with the shell).
	game.Bookkeeping
}

// New is a table's initial state: betting open, on the shoe shoeID.
func New(r Rules, shoeID string) (State, error) {
	if err := r.Validate(); err != nil {
		return State{}, err
	}
	return State{Rules: r, Phase: PhaseBetting, Bookkeeping: game.Bookkeeping{ShoeID: shoeID, ShoeNumber: 1}}, nil
}

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

// Outcome of Apply.
type Outcome struct {
	State  State
	Events []game.Event
	// Hold, when set, is the hold the command waits for; State and Events
	// are then unchanged and empty.
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
	case PlaceBet:
		err = a.placeBet(c)
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
		err = game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "punto banco has no command %T", in.Cmd)
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
	case s.NewShoeDue && s.Phase != PhaseClosed && (s.Phase != PhaseResult || s.PauseOver):
		// Once the pause is over (the roads show the shoe's last coup
		// until then), and before any card: the next coup is dealt from
		// the new shoe, never from the shoe whose cut card came out
		// (SHOE-CUT-CARD).
		return game.NewShoe{}
	case s.Phase == PhaseDealing:
		step, err := nextStep(s.Coup)
		if err != nil || (step.Kind != rules.StepDealPlayer && step.Kind != rules.StepDealBanker) {
			return nil // unreachable: cardDealt leaves DEALING when the tableau is done
		}
		hand := "player"
		if step.Kind == rules.StepDealBanker {
			hand = "banker"
		}
		n := len(s.Coup.Player) + len(s.Coup.Banker) + 1
		d := game.DealCard{RequestID: s.Coup.ID + "/card/" + strconv.Itoa(n), CoupID: s.Coup.ID, Hand: hand}
		if n == 1 {
			// Source: RULES.md CF-DEAL (the tableau's deal): the opening
			// four, player first, alternately, whatever the cards: dealt
			// in one call.
			d.Then = game.Following(s.Coup.ID, 2, "banker", "player", "banker")
		}
		return d
	case s.Phase == PhaseSettling:
		return Settle{Coup: *s.Coup.clone(), Rules: s.Rules.EngineRules()}
	}
	return nil
}

// Restart gives the betting window or the result's pause in progress its
// full length again from now (after a restart of the service); it
// reports whether the deadline moved.
func Restart(s State, now time.Time) (State, bool) {
	ms := s.Rules.BettingWindowMS
	if s.Phase == PhaseResult {
		ms = s.Rules.ResultPauseMS
	}
	var moved bool
	s.Deadline, moved = game.Restarted(s.Deadline, now, ms)
	return s, moved
}

// Deadline is when the core wants a Tick: the end of the betting window
// or of the result's pause; zero when it waits for nobody.
func Deadline(s State) time.Time {
	if s.Phase == PhaseBetting || s.Phase == PhaseResult {
		return s.Deadline
	}
	return time.Time{}
}

type applier struct {
	s  *State
	in game.Input
	game.Changes
}

func (a *applier) open() error {
	if a.s.Phase == PhaseClosed {
		return game.Refuse(game.FailedPrecondition, ReasonTableClosed, "the table is closed")
	}
	return nil
}

func (a *applier) join(c Join) error {
	if err := a.open(); err != nil {
		return err
	}
	for _, st := range a.s.Seats {
		if st.PlayerID == c.PlayerID {
			return game.Refuse(game.AlreadyExists, ReasonAlreadySeated, "player %q already has a seat", c.PlayerID)
		}
	}
	if int32(len(a.s.Seats)) >= a.s.Rules.MaxSeats {
		return game.Refuse(game.ResourceExhausted, ReasonTableFull, "all %d seats are taken", a.s.Rules.MaxSeats)
	}
	a.s.NextSeat++
	a.s.Seats = append(a.s.Seats, Seat{PlayerID: c.PlayerID, Number: a.s.NextSeat})
	a.Emit("", &eventsv1.PlayerSeated{PlayerId: c.PlayerID, SeatNumber: a.s.NextSeat})
	return nil
}

func (a *applier) leave(c Leave) error {
	if err := a.open(); err != nil {
		return err
	}
	for i, st := range a.s.Seats {
		if st.PlayerID == c.PlayerID {
			a.s.Seats = append(a.s.Seats[:i], a.s.Seats[i+1:]...)
			// Source: RULES.md PB-BANK (the house banks: nothing of the
			// table's depends on a seat, so his bets stay in the coup)
			a.Emit("", &eventsv1.PlayerLeft{PlayerId: c.PlayerID, SeatNumber: st.Number})
			return nil
		}
	}
	return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", c.PlayerID)
}

func (a *applier) placeBet(c PlaceBet) error {
	s, r := a.s, a.s.Rules
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseBetting {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the betting is closed")
	}
	switch c.Spot {
	case SpotBank, SpotPlayer, SpotTie:
	case SpotBankNatural:
		if r.BankNaturalOff {
			return game.Refuse(game.FailedPrecondition, ReasonSpotNotOffered, "this table offers no bank natural bet")
		}
	case SpotPlayerPair, SpotBankPair:
		if !r.PairBets {
			return game.Refuse(game.FailedPrecondition, ReasonSpotNotOffered, "this table offers no pair bets")
		}
	default:
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "spot %d is not a punto banco bet", int(c.Spot))
	}
	if c.Amount <= 0 || c.Amount > game.MaxAmount {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be 1..%d, got %d", int64(game.MaxAmount), c.Amount)
	}
	// Source: RULES.md PB-BANK (table limits: the minimum per bet; the
	// maximum for one player's stakes on one spot)
	mine := c.Amount
	var hand int64 = c.Amount
	if s.Coup != nil {
		if len(s.Coup.Bets) >= MaxBets {
			return game.Refuse(game.ResourceExhausted, ReasonTableFull, "the coup has %d bets, the most a coup takes", MaxBets)
		}
		for _, b := range s.Coup.Bets {
			if b.Spot == c.Spot {
				hand += b.Amount
				if b.PlayerID == c.PlayerID {
					mine += b.Amount
				}
			}
		}
	}
	if c.Amount < r.MinBet {
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "the table minimum is %d, bet %d", r.MinBet, c.Amount)
	}
	if r.MaxBet > 0 && mine > r.MaxBet {
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "the table maximum on a spot is %d; with this bet %q would have %d on %s",
			r.MaxBet, c.PlayerID, mine, c.Spot)
	}
	if r.HouseLimit > 0 && (c.Spot == SpotBank || c.Spot == SpotPlayer) && hand > r.HouseLimit {
		// Source: RULES.md PB-BANK (the limit per hand is the house limit)
		return game.Refuse(game.FailedPrecondition, ReasonHouseLimitReached, "the house limit on the %s hand is %d; %d is bet on it already",
			c.Spot, r.HouseLimit, hand-c.Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	if s.Coup == nil {
		s.CoupSeq++
		s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq}
		s.Deadline = a.in.Now.Add(time.Duration(r.BettingWindowMS) * time.Millisecond)
		a.Emit(s.Coup.ID, &eventsv1.BettingWindowStarted{CloseTime: timestamp(s.Deadline)})
	}
	s.Coup.Bets = append(s.Coup.Bets, Bet{PlayerID: c.PlayerID, Spot: c.Spot, Amount: c.Amount, HoldID: c.HoldID})
	a.Emit(s.Coup.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Spot: c.Spot.String()})
	return nil
}

func (a *applier) tick() error {
	s := a.s
	if s.Deadline.IsZero() || a.in.Now.Before(s.Deadline) {
		return nil // nothing due
	}
	switch s.Phase {
	case PhaseBetting:
		if s.Coup == nil || len(s.Coup.Bets) == 0 {
			s.Deadline = time.Time{}
			return nil
		}
		s.Phase, s.Deadline = PhaseDealing, time.Time{}
		a.Emit(s.Coup.ID, &eventsv1.BettingClosed{BetsCount: int32(len(s.Coup.Bets))})
	case PhaseResult:
		s.Deadline = time.Time{}
		if s.NewShoeDue {
			// Source: RULES.md SHOE-CUT-CARD (the next coup is dealt from a
			// new shoe): the betting opens with it, not on the spent one.
			s.PauseOver = true
			return nil
		}
		s.Phase = PhaseBetting
		a.Emit("", &eventsv1.BettingReopened{})
	}
	return nil
}

// nextStep is the coup's next step by the fixed tableau (PB-TABLEAU).
func nextStep(cp *Coup) (rules.Step, error) {
	rc, err := engineCoup(cp)
	if err != nil {
		return rules.Step{}, err
	}
	return rules.NextStepPuntoBanco(rc)
}

func engineCoup(cp *Coup) (rules.Coup, error) {
	var rc rules.Coup
	for _, hand := range []struct {
		codes []string
		to    *[]rules.Card
	}{{cp.Player, &rc.Player}, {cp.Banker, &rc.Banker}} {
		for _, code := range hand.codes {
			card, err := rules.ParseCard(code)
			if err != nil {
				return rc, err
			}
			*hand.to = append(*hand.to, card)
		}
	}
	return rc, nil
}

func (a *applier) cardDealt(c game.CardDealt) error {
	s := a.s
	if s.Phase != PhaseDealing {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due")
	}
	if _, err := rules.ParseCard(c.Code); err != nil {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "card %q: %v", c.Code, err)
	}
	cp := s.Coup
	step, err := nextStep(cp)
	if err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	hand, cards := eventsv1.Hand_HAND_PLAYER, &cp.Player
	switch step.Kind {
	case rules.StepDealPlayer:
	case rules.StepDealBanker:
		hand, cards = eventsv1.Hand_HAND_BANKER, &cp.Banker
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s waits for %v, not a card", cp.ID, step.Kind)
	}
	if len(*cards) == 2 {
		// Source: RULES.md PB-TABLEAU (a third card drawn by the fixed tableau)
		a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: true, Rule: rules.RulePBTableau})
	}
	*cards = append(*cards, c.Code)
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	total, _ := total(*cards)
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: hand, Card: game.Cards([]string{c.Code})[0], Position: int32(len(*cards)), Total: int32(total)})
	if step, err = nextStep(cp); err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	if step.Kind == rules.StepDone {
		a.result(step)
	}
	return nil
}

func total(codes []string) (int, error) {
	cp, err := engineCoup(&Coup{Player: codes})
	if err != nil {
		return 0, err
	}
	return rules.Total(cp.Player), nil
}

// result records the decided coup and moves to SETTLING.
func (a *applier) result(step rules.Step) {
	cp := a.s.Coup
	rc, _ := engineCoup(cp)
	res, err := rules.ResultPuntoBanco(rc)
	if err != nil {
		return // unreachable: step is StepDone
	}
	cp.Decided, cp.Outcome, cp.Natural = true, step.Outcome, step.Natural
	cp.BankNatural, cp.PlayerPair, cp.BankerPair = res.BankNatural, res.PlayerPair, res.BankPair
	cp.PlayerTotal, cp.BankerTotal = rules.Total(rc.Player), rules.Total(rc.Banker)
	a.Emit(cp.ID, &eventsv1.CoupResulted{Outcome: eventOutcome(step.Outcome), PlayerTotal: int32(cp.PlayerTotal),
		BankerTotal: int32(cp.BankerTotal), Natural: step.Natural, PlayerCards: cardsProto(cp.Player), BankerCards: cardsProto(cp.Banker),
		PlayerPair: cp.PlayerPair, BankerPair: cp.BankerPair})
	a.s.Phase = PhaseSettling
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
	for i := range cp.Bets {
		cp.Bets[i].Won, cp.Bets[i].Commission, cp.Bets[i].Lost = c.Bets[i].Won, c.Bets[i].Commission, c.Bets[i].Lost
	}
	cp.Settled, cp.SettleTime, cp.Commission, cp.HouseNet = true, a.in.Now, c.Commission, c.HouseNet
	a.Emit(cp.ID, &eventsv1.CoupSettled{Outcome: eventOutcome(cp.Outcome), Commission: c.Commission, HouseNet: c.HouseNet})
	s.CoupsPlayed++
	s.Results = append(s.Results, Result{Outcome: cp.Outcome, PlayerTotal: cp.PlayerTotal, BankerTotal: cp.BankerTotal,
		PlayerPair: cp.PlayerPair, BankerPair: cp.BankerPair, Natural: cp.Natural})
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the shoe's last)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	s.LastCoup, s.Coup = cp, nil
	s.Phase = PhaseResult
	s.Deadline = a.in.Now.Add(time.Duration(s.Rules.ResultPauseMS) * time.Millisecond)
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
	s.ShoeID, s.ShoeNumber, s.NewShoeDue, s.Results = c.ShoeID, c.Number, false, nil
	a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
	if s.Phase == PhaseResult && s.PauseOver {
		s.Phase, s.PauseOver = PhaseBetting, false
		a.Emit("", &eventsv1.BettingReopened{})
	}
	return nil
}

func (a *applier) void(c Void) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Coup == nil || len(s.Coup.Bets) == 0 || (s.Phase != PhaseBetting && s.Phase != PhaseDealing) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no coup to void: only a coup with bets, before its result, can be")
	}
	if c.CoupID != s.Coup.ID {
		return game.Refuse(game.FailedPrecondition, ReasonCoupNotInPlay, "coup %q is not the coup in play (%s)", c.CoupID, s.Coup.ID)
	}
	cp := s.Coup
	// Source: RULES.md CF-ERROR (the croupier voids the coup; every bet is returned)
	cp.Voided, cp.VoidReason = true, c.Reason
	for _, b := range cp.Bets {
		s.PendingVoids = append(s.PendingVoids, b.HoldID)
	}
	a.Emit(cp.ID, &eventsv1.CoupVoided{Reason: c.Reason, By: c.By, ByRole: c.ByRole})
	s.LastCoup, s.Coup = cp, nil
	s.Phase, s.Deadline = PhaseBetting, time.Time{}
	return nil
}

func (a *applier) close(c Close) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Coup != nil && len(s.Coup.Bets) > 0 {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "a coup with %d bets is in play: void it or let it finish", len(s.Coup.Bets))
	}
	s.Phase, s.Deadline, s.Coup, s.ShoeToClose, s.NewShoeDue = PhaseClosed, time.Time{}, nil, true, false
	a.Emit("", &eventsv1.TableClosed{Reason: c.Reason, By: c.By})
	return nil
}

// clone is a deep copy of s.
func (s State) clone() State {
	c := s
	c.Seats = append([]Seat(nil), s.Seats...)
	c.Coup, c.LastCoup = s.Coup.clone(), s.LastCoup.clone()
	c.Results = append([]Result(nil), s.Results...)
	c.Bookkeeping = s.Bookkeeping.Clone()
	return c
}

func (cp *Coup) clone() *Coup {
	if cp == nil {
		return nil
	}
	c := *cp
	c.Bets = append([]Bet(nil), cp.Bets...)
	c.Player = append([]string(nil), cp.Player...)
	c.Banker = append([]string(nil), cp.Banker...)
	return &c
}

// String describes the state in one line, for logs and test failures.
func (s State) String() string {
	coup := "none"
	if s.Coup != nil {
		coup = fmt.Sprintf("%s#%d bets=%d P=%v B=%v", s.Coup.ID, s.Coup.Number, len(s.Coup.Bets), s.Coup.Player, s.Coup.Banker)
	}
	return fmt.Sprintf("phase=%d deadline=%v coup=%s played=%d shoe=%d results=%d", s.Phase, s.Deadline, coup, s.CoupsPlayed, s.ShoeNumber, len(s.Results))
}
