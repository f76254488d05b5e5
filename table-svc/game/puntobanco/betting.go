package puntobanco

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

func (a *applier) placeBet(c PlaceBet) error {
	s, r := a.s, a.s.Rules
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseBetting {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the betting is closed")
	}
	switch c.Spot {
	case SpotBank, SpotPlayer, SpotTie:
	case SpotBankNatural:
		if r.BankNaturalOff {
			return game.Refuse(game.FailedPrecondition, ReasonSpotNotOffered, "this table offers no bank natural bet")
		}
	case SpotPlayerPair, SpotBankPair:
		if !r.PairBets {
			return game.Refuse(game.FailedPrecondition, ReasonSpotNotOffered, "this table offers no pair bets")
		}
	default:
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "spot %d is not a punto banco bet", int(c.Spot))
	}
	if c.Amount <= 0 || c.Amount > game.MaxAmount {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be 1..%d, got %d", int64(game.MaxAmount), c.Amount)
	}
	// Source: RULES.md PB-BANK (table limits: the minimum per bet; the
	// maximum for one player's stakes on one spot)
	mine := c.Amount
	var hand int64 = c.Amount
	if s.Coup != nil {
		if len(s.Coup.Bets) >= MaxBets {
			return game.Refuse(game.ResourceExhausted, ReasonTableFull, "the coup has %d bets, the most a coup takes", MaxBets)
		}
		for _, b := range s.Coup.Bets {
			if b.Spot == c.Spot {
				hand += b.Amount
				if b.PlayerID == c.PlayerID {
					mine += b.Amount
				}
			}
		}
	}
	if c.Amount < r.MinBet {
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "the table minimum is %d, bet %d", r.MinBet, c.Amount)
	}
	if r.MaxBet > 0 && mine > r.MaxBet {
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "the table maximum on a spot is %d; with this bet %q would have %d on %s",
			r.MaxBet, c.PlayerID, mine, c.Spot)
	}
	if r.HouseLimit > 0 && (c.Spot == SpotBank || c.Spot == SpotPlayer) && hand > r.HouseLimit {
		// Source: RULES.md PB-BANK (the limit per hand is the house limit)
		return game.Refuse(game.FailedPrecondition, ReasonHouseLimitReached, "the house limit on the %s hand is %d; %d is bet on it already",
			c.Spot, r.HouseLimit, hand-c.Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	if s.Coup == nil {
		s.CoupSeq++
		s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq}
		s.Deadline = a.in.Now.Add(time.Duration(r.BettingWindowMS) * time.Millisecond)
		a.Emit(s.Coup.ID, &eventsv1.BettingWindowStarted{CloseTime: timestamp(s.Deadline)})
	}
	s.Coup.Bets = append(s.Coup.Bets, Bet{PlayerID: c.PlayerID, Spot: c.Spot, Amount: c.Amount, HoldID: c.HoldID})
	a.Emit(s.Coup.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Spot: c.Spot.String()})
	return nil
}
