package puntobanco

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// nextStep is the coup's next step by the fixed tableau (PB-TABLEAU).
func nextStep(cp *Coup) (rules.Step, error) {
	rc, err := engineCoup(cp)
	if err != nil {
		return rules.Step{}, err
	}
	return rules.NextStepPuntoBanco(rc)
}

func engineCoup(cp *Coup) (rules.Coup, error) {
	var rc rules.Coup
	for _, hand := range []struct {
		codes []string
		to    *[]rules.Card
	}{{cp.Player, &rc.Player}, {cp.Banker, &rc.Banker}} {
		for _, code := range hand.codes {
			card, err := rules.ParseCard(code)
			if err != nil {
				return rc, err
			}
			*hand.to = append(*hand.to, card)
		}
	}
	return rc, nil
}

func (a *applier) cardDealt(c game.CardDealt) error {
	s := a.s
	if s.Phase != PhaseDealing {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due")
	}
	if _, err := rules.ParseCard(c.Code); err != nil {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "card %q: %v", c.Code, err)
	}
	cp := s.Coup
	step, err := nextStep(cp)
	if err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	hand, cards := eventsv1.Hand_HAND_PLAYER, &cp.Player
	switch step.Kind {
	case rules.StepDealPlayer:
	case rules.StepDealBanker:
		hand, cards = eventsv1.Hand_HAND_BANKER, &cp.Banker
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s waits for %v, not a card", cp.ID, step.Kind)
	}
	if len(*cards) == 2 {
		// Source: RULES.md PB-TABLEAU (a third card drawn by the fixed tableau)
		a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: true, Rule: rules.RulePBTableau})
	}
	*cards = append(*cards, c.Code)
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	total, _ := total(*cards)
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: hand, Card: game.Cards([]string{c.Code})[0], Position: int32(len(*cards)), Total: int32(total)})
	if step, err = nextStep(cp); err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	if step.Kind == rules.StepDone {
		a.result(step)
	}
	return nil
}

func total(codes []string) (int, error) {
	cp, err := engineCoup(&Coup{Player: codes})
	if err != nil {
		return 0, err
	}
	return rules.Total(cp.Player), nil
}

// result records the decided coup and moves to SETTLING.
func (a *applier) result(step rules.Step) {
	cp := a.s.Coup
	rc, _ := engineCoup(cp)
	res, err := rules.ResultPuntoBanco(rc)
	if err != nil {
		return // unreachable: step is StepDone
	}
	cp.Decided, cp.Outcome, cp.Natural = true, step.Outcome, step.Natural
	cp.BankNatural, cp.PlayerPair, cp.BankerPair = res.BankNatural, res.PlayerPair, res.BankPair
	cp.PlayerTotal, cp.BankerTotal = rules.Total(rc.Player), rules.Total(rc.Banker)
	a.Emit(cp.ID, &eventsv1.CoupResulted{Outcome: eventOutcome(step.Outcome), PlayerTotal: int32(cp.PlayerTotal),
		BankerTotal: int32(cp.BankerTotal), Natural: step.Natural, PlayerCards: cardsProto(cp.Player), BankerCards: cardsProto(cp.Banker),
		PlayerPair: cp.PlayerPair, BankerPair: cp.BankerPair})
	a.s.Phase = PhaseSettling
}

func (a *applier) settled(c Settled) error {
	s := a.s
	if s.Phase != PhaseSettling {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no settlement is due")
	}
	cp := s.Coup
	if len(c.Bets) != len(cp.Bets) {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "settlement of %d bets for %d", len(c.Bets), len(cp.Bets))
	}
	for i := range cp.Bets {
		cp.Bets[i].Won, cp.Bets[i].Commission, cp.Bets[i].Lost = c.Bets[i].Won, c.Bets[i].Commission, c.Bets[i].Lost
	}
	cp.Settled, cp.SettleTime, cp.Commission, cp.HouseNet = true, a.in.Now, c.Commission, c.HouseNet
	a.Emit(cp.ID, &eventsv1.CoupSettled{Outcome: eventOutcome(cp.Outcome), Commission: c.Commission, HouseNet: c.HouseNet})
	s.CoupsPlayed++
	s.Results = append(s.Results, Result{Outcome: cp.Outcome, PlayerTotal: cp.PlayerTotal, BankerTotal: cp.BankerTotal,
		PlayerPair: cp.PlayerPair, BankerPair: cp.BankerPair, Natural: cp.Natural})
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the shoe's last)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	s.LastCoup, s.Coup = cp, nil
	s.Phase = PhaseResult
	s.Deadline = a.in.Now.Add(time.Duration(s.Rules.ResultPauseMS) * time.Millisecond)
	return nil
}

func (a *applier) shoeOpened(c game.ShoeOpened) error {
	s := a.s
	if c.Abandoned {
		// The shoe is replaced before its first card: the coup goes on.
		s.ShoeID, s.ShoeNumber = c.ShoeID, c.Number
		a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
		return nil
	}
	if !s.NewShoeDue {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no new shoe is due")
	}
	s.ShoeID, s.ShoeNumber, s.NewShoeDue, s.Results = c.ShoeID, c.Number, false, nil
	a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
	if s.Phase == PhaseResult && s.PauseOver {
		s.Phase, s.PauseOver = PhaseBetting, false
		a.Emit("", &eventsv1.BettingReopened{})
	}
	return nil
}
