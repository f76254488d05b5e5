package oldbaccarat

import (
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Game is the old baccarat core as a game.Core; its methods are the
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
	return game.Result(s, st, a.Changes, err)
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
