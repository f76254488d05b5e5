package banque

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
