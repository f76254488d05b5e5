package banque

import (
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Game is the baccarat banque core as a game.Core; its methods are the
// package's Apply, Pending, Deadline and Restart. The assignment checks at
// compile time that the package keeps the contract.
var Game game.Core[State, Outcome] = core{}

// core implements game.Core with the package's functions.
type core struct{}

func (core) Apply(s State, in game.Input) (Outcome, error) { return Apply(s, in) }
func (core) Pending(s State) game.Effect                   { return Pending(s) }
func (core) Deadline(s State) time.Time                    { return Deadline(s) }
func (core) Restart(s State, now time.Time) (State, bool)  { return Restart(s, now) }

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
	return game.Result(s, st, a.Changes, err)
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
