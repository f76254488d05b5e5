package oldbaccarat

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
