package puntobanco

import (
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Game is the punto banco core as a game.Core; its methods are the
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
	return game.Result(s, st, a.Changes, err)
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
			// Source: RULES.md PB-TABLEAU: no option, every third card
			// is forced: dealt in the same call.
			d.ThirdCards = game.Following(s.Coup.ID, 5, "", "")
			d.Tableau = game.Tableau{PuntoBanco: true}
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
