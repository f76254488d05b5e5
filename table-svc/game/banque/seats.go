package banque

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

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
