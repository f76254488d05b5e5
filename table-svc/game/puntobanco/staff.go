package puntobanco

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

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
