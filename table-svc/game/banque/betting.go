package banque

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// punters are the players who bet, in betting order: the right table's
// from the banker's right and the left table's from his left, taken in
// turn (R1, L1, R2, L2, ...); the banker is left out.
func (s *State) punters() []string {
	r, l := s.side(SideRight), s.side(SideLeft)
	var out []string
	for i := 0; i < len(r) || i < len(l); i++ {
		// Source: RULES.md BQ-BETS (the right table's order starts on the
		// banker's right, the left table's on his left)
		for _, side := range [][]string{r, l} {
			if i < len(side) && side[i] != s.Banker {
				out = append(out, side[i])
			}
		}
	}
	return out
}

// openBetting starts a coup's betting round.
func (a *applier) openBetting() {
	s := a.s
	s.Coup, s.Phase = nil, PhaseBetting
	a.nextTurn()
}

// covered is what the coup's bets total.
func covered(cp *Coup) int64 {
	var n int64
	for _, b := range cp.Bets {
		n += b.Amount
	}
	return n
}

// room is what more the bank covers in this coup; -1 for no limit.
func (s *State) room() int64 {
	switch {
	case !s.Rules.HouseBank:
		// Source: RULES.md BQ-BANK (the bank is the limit of the bets), CF-BET-LIMIT
		return s.Bank - covered(s.Coup)
	case s.Rules.HouseLimit > 0:
		return s.Rules.HouseLimit - covered(s.Coup)
	}
	return -1
}

// nextTurn gives the betting turn to the next punter in order who has not
// acted, or closes the betting when the bank is covered or everyone has
// acted.
func (a *applier) nextTurn() {
	s := a.s
	if s.Coup == nil {
		s.CoupSeq++
		s.Coup = &Coup{ID: a.in.NewID, Number: s.CoupSeq}
	}
	cp := s.Coup
	if room := s.room(); room >= 0 && room < s.Rules.MinBet && len(cp.Bets) > 0 {
		// Source: RULES.md CF-BET-ORDER (betting goes round until the bank is covered)
		a.closeBetting()
		return
	}
	order := s.punters()
	for _, p := range order {
		if !contains(cp.Acted, p) {
			s.TurnPlayerID, s.Deadline = p, a.in.After(s.Rules.BetTimeLimitMS)
			return
		}
	}
	switch {
	case len(cp.Bets) > 0:
		a.closeBetting()
	case len(order) > 0:
		// Source: RULES.md CF-BET-ORDER (a round without a bet: betting starts again)
		cp.Acted = nil
		a.Emit(cp.ID, &eventsv1.BettingReopened{})
		s.TurnPlayerID, s.Deadline = order[0], a.in.After(s.Rules.BetTimeLimitMS)
	default:
		s.TurnPlayerID, s.Deadline = "", time.Time{} // waits for a punter
	}
}

func (a *applier) turn(playerID string) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseBetting {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "the betting is closed")
	}
	if _, ok := s.seat(playerID); !ok {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat", playerID)
	}
	if playerID == s.Banker {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker does not bet against his bank")
	}
	if playerID != s.TurnPlayerID {
		// Source: RULES.md BQ-BETS (betting order)
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "it is %q's turn to bet", s.TurnPlayerID)
	}
	return nil
}

func (a *applier) placeBet(c PlaceBet) error {
	s, r := a.s, a.s.Rules
	if err := a.turn(c.PlayerID); err != nil {
		return err
	}
	if c.Side < SideRight || c.Side > SideCheval {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "a bet is on the right, the left or both (cheval), not %v", c.Side)
	}
	if c.Amount <= 0 || c.Amount > game.MaxAmount {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be 1..%d, got %d", int64(game.MaxAmount), c.Amount)
	}
	if c.Amount < r.MinBet || (r.MaxBet > 0 && c.Amount > r.MaxBet) {
		return game.Refuse(game.InvalidArgument, ReasonBetOutOfLimits, "a bet is %d..%d, got %d", r.MinBet, r.MaxBet, c.Amount)
	}
	if len(s.Coup.Bets) >= MaxBets {
		return game.Refuse(game.ResourceExhausted, ReasonTableFull, "the coup has %d bets, the most a coup takes", MaxBets)
	}
	if room := s.room(); room >= 0 && c.Amount > room {
		if r.HouseBank {
			return game.Refuse(game.FailedPrecondition, ReasonHouseLimitReached, "the house covers %d more in this coup, bet %d", room, c.Amount)
		}
		// Source: RULES.md BQ-BANK (the banker risks only his bank; an
		// à cheval bet is paid at most once, so it counts once)
		return game.Refuse(game.FailedPrecondition, ReasonBetExceedsBank, "the bank covers %d more, bet %d", room, c.Amount)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	cp := s.Coup
	cp.Bets = append(cp.Bets, Bet{PlayerID: c.PlayerID, Side: c.Side, Amount: c.Amount, HoldID: c.HoldID})
	cp.Acted = append(cp.Acted, c.PlayerID)
	uncovered := s.room()
	if uncovered < 0 {
		uncovered = 0
	}
	a.Emit(cp.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Uncovered: uncovered, Spot: c.Side.String()})
	a.nextTurn()
	return nil
}

// callBanco: the whole bank on both tables, the coup's first bet; the
// betting closes (BQ-BETS, BQ-CHEVAL).
func (a *applier) callBanco(c CallBanco) error {
	s := a.s
	if err := a.turn(c.PlayerID); err != nil {
		return err
	}
	if !s.Rules.BancoBothTables {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "banco on both tables is off at this table (house rule banco_both_tables)")
	}
	if len(s.Coup.Bets) > 0 {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "banco is called before any bet of the coup; %d are placed", len(s.Coup.Bets))
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: s.Bank}
		return nil
	}
	cp := s.Coup
	// Source: RULES.md BQ-BETS (banco on both hands, a house rule), BQ-CHEVAL
	cp.Bets = append(cp.Bets, Bet{PlayerID: c.PlayerID, Side: SideCheval, Amount: s.Bank, HoldID: c.HoldID, Banco: true})
	cp.Acted = append(cp.Acted, c.PlayerID)
	a.Emit(cp.ID, &eventsv1.BancoCalled{PlayerId: c.PlayerID, Amount: s.Bank})
	a.closeBetting()
	return nil
}

func (a *applier) pass(c Pass) error {
	if err := a.turn(c.PlayerID); err != nil {
		return err
	}
	a.decline(c.PlayerID)
	return nil
}

func (a *applier) decline(playerID string) {
	cp := a.s.Coup
	cp.Acted = append(cp.Acted, playerID)
	a.Emit(cp.ID, &eventsv1.BetDeclined{PlayerId: playerID})
	a.nextTurn()
}

// closeBetting ends the betting and fixes the hands' players (BQ-PLAY).
func (a *applier) closeBetting() {
	s := a.s
	cp := s.Coup
	s.Phase, s.Deadline, s.TurnPlayerID = PhaseDealing, time.Time{}, ""
	cp.RightHolder, cp.LeftHolder = s.holder(SideRight, s.RightHolder), s.holder(SideLeft, s.LeftHolder)
	a.Emit(cp.ID, &eventsv1.BettingClosed{BetsCount: int32(len(cp.Bets))})
}

// holder is who plays the side's hand: the current holder while he can,
// else the player of that side nearest the banker (BQ-PLAY).
func (s *State) holder(sd Side, current string) string {
	var first string
	for _, p := range s.side(sd) {
		if p == s.Banker {
			continue
		}
		if p == current {
			return p
		}
		if first == "" {
			first = p
		}
	}
	// Source: RULES.md BQ-PLAY (in the first coup the players nearest the banker play)
	return first
}

// nextHolder is the player after loser on the side, round the side.
func (s *State) nextHolder(sd Side, loser string) string {
	side := s.side(sd)
	at := -1
	for i, p := range side {
		if p == loser {
			at = i
		}
	}
	for k := 1; k <= len(side); k++ {
		p := side[(at+k+len(side))%len(side)]
		if p != s.Banker && (p != loser || k == len(side)) {
			// Source: RULES.md BQ-PLAY (after a lost coup the right passes
			// round to the next player of that side)
			return p
		}
	}
	return ""
}
