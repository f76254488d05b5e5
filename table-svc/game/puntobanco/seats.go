package puntobanco

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

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
