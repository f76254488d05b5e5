package oldbaccarat

import (
	"time"

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
