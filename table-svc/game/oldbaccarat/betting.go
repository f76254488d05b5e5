package oldbaccarat

import (
	"fmt"
	"sort"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

func (a *applier) stake(c Stake) error {
	s, r := a.s, a.s.Rules
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseStaking {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the staking is closed")
	}
	st, err := a.seated(c.PlayerID)
	if err != nil {
		return err
	}
	if c.PlayerID == s.BankerID {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker stakes nothing against his own bank")
	}
	var staked int64
	if cp := s.Coup; cp != nil {
		if contains(cp.Passed, c.PlayerID) {
			return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q sits this coup out", c.PlayerID)
		}
		for _, h := range cp.Hands {
			if h.PlayerID == c.PlayerID {
				return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q has staked in this coup", c.PlayerID)
			}
			staked += h.Stake
		}
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0, got %d", c.Amount)
	}
	if c.Amount < r.MinStake || (r.MaxStake > 0 && c.Amount > r.MaxStake) {
		limits := fmt.Sprintf("at least %d (no maximum)", r.MinStake)
		if r.MaxStake > 0 {
			limits = fmt.Sprintf("%d..%d", r.MinStake, r.MaxStake)
		}
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "a stake is %s, staked %d", limits, c.Amount)
	}
	if c.Amount > (s.Bank/2)-staked {
		// Source: RULES.md OLD-STAKE (the banker must hold double each stake:
		// read as a cover that must be present)
		return game.Refuse(game.FailedPrecondition, ReasonBetExceedsBank, "the bank of %d covers %d of stakes twice; %d are staked",
			s.Bank, s.Bank/2, staked)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	if s.Coup == nil {
		s.CoupSeq++
		s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq, BankerID: s.BankerID, Bank: s.Bank, BankHoldID: s.BankHoldID}
		s.Deadline = a.in.After(r.StakingWindowMS)
		a.Emit(s.Coup.ID, &eventsv1.BettingWindowStarted{CloseTime: timestamp(s.Deadline)})
	}
	cp := s.Coup
	cp.Hands = append(cp.Hands, Hand{PlayerID: c.PlayerID, Seat: st.Number, Stake: c.Amount, HoldID: c.HoldID})
	a.Emit(cp.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Uncovered: s.Bank - 2*(staked+c.Amount)})
	a.stakingDone()
	return nil
}

func (a *applier) passStake(c PassStake) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseStaking {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the staking is closed")
	}
	if _, err := a.seated(c.PlayerID); err != nil {
		return err
	}
	if c.PlayerID == s.BankerID {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker does not stake")
	}
	if cp := s.Coup; cp != nil {
		if contains(cp.Passed, c.PlayerID) {
			return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q passed already", c.PlayerID)
		}
		for _, h := range cp.Hands {
			if h.PlayerID == c.PlayerID {
				return game.Refuse(game.AlreadyExists, ReasonWrongState, "player %q has staked in this coup", c.PlayerID)
			}
		}
		cp.Passed = append(cp.Passed, c.PlayerID)
		a.Emit(cp.ID, &eventsv1.BetDeclined{PlayerId: c.PlayerID})
		a.stakingDone()
		return nil
	}
	// Before the first stake no coup exists: a pass is for the coup about
	// to be staked, so the coup begins (without a window: the first stake
	// opens it).
	s.CoupSeq++
	s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq, BankerID: s.BankerID, Bank: s.Bank, BankHoldID: s.BankHoldID, Passed: []string{c.PlayerID}}
	a.Emit(s.Coup.ID, &eventsv1.BetDeclined{PlayerId: c.PlayerID})
	a.stakingDone()
	return nil
}

// stakingDone closes the staking when every seated punter has staked or
// passed (and someone staked).
func (a *applier) stakingDone() {
	s := a.s
	cp := s.Coup
	if len(cp.Hands) == 0 {
		return
	}
	for _, st := range s.Seats {
		if st.PlayerID == s.BankerID || contains(cp.Passed, st.PlayerID) {
			continue
		}
		staked := false
		for _, h := range cp.Hands {
			staked = staked || h.PlayerID == st.PlayerID
		}
		if !staked {
			return
		}
	}
	a.closeStaking()
}

// closeStaking fixes the stakes; with fewer than two the coup is voided
// (OLD-DECKS), else the punters are ordered clockwise from the banker's
// left and the deal begins.
func (a *applier) closeStaking() {
	s := a.s
	cp := s.Coup
	s.Deadline = time.Time{}
	a.Emit(cp.ID, &eventsv1.BettingClosed{BetsCount: int32(len(cp.Hands))})
	if len(cp.Hands) < rules.OldMinPunters {
		// Source: RULES.md OLD-DECKS (at least three players: the banker and two punters)
		a.voidCoup(fmt.Sprintf("%d punter(s) staked; a coup needs %d (OLD-DECKS)", len(cp.Hands), rules.OldMinPunters), "", "")
		return
	}
	// Source: RULES.md OLD-DEAL (seat 0 is the banker's left neighbour,
	// clockwise: seat numbers after the banker's first, then those before)
	after := func(n int32) bool { return n > s.BankerSeat }
	sort.SliceStable(cp.Hands, func(i, j int) bool {
		hi, hj := cp.Hands[i].Seat, cp.Hands[j].Seat
		if after(hi) != after(hj) {
			return after(hi)
		}
		return hi < hj
	})
	cp.StakingClosed = true
	s.Phase = PhaseDealing
	if !s.NewShoeDue {
		a.startDeal()
	}
}

func (cp *Coup) staked(playerID string) bool {
	for _, h := range cp.Hands {
		if h.PlayerID == playerID {
			return true
		}
	}
	return false
}
