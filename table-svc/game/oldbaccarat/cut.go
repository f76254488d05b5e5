package oldbaccarat

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

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
