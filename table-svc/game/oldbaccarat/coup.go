package oldbaccarat

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// HandName is the DealCard hand of a punter: "punter:<player id>"; the
// banker's is "banker".
func HandName(playerID string) string { return "punter:" + playerID }

func (cp *Coup) handName(seat int) string {
	if seat < 0 {
		return "banker"
	}
	return HandName(cp.Hands[seat].PlayerID)
}

func (cp *Coup) cardsDealt() int {
	n := len(cp.Banker)
	for _, h := range cp.Hands {
		n += len(h.Cards)
	}
	return n
}

// cardDue is the hand (index, -1 the banker) whose card is due: a card of
// the deal (OLD-DEAL) or a card drawn (OLD-DRAW).
func (cp *Coup) cardDue() (int, bool) {
	if cp.DrawDue {
		return cp.DrawSeat, true
	}
	step, err := nextStep(cp)
	if err != nil {
		return 0, false
	}
	switch step.Kind {
	case rules.StepDealPlayer, rules.StepDealBanker:
		return step.Seat, true
	}
	return 0, false
}

func (cp *Coup) engineCoup() (rules.OldCoup, error) {
	parse := func(codes []string) ([]rules.Card, error) {
		out := make([]rules.Card, 0, len(codes))
		for _, code := range codes {
			c, err := rules.ParseCard(code)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	oc := rules.OldCoup{Punters: make([][]rules.Card, len(cp.Hands)), Stood: make([]bool, len(cp.Hands)), BankerStood: cp.BankerStood}
	for i, h := range cp.Hands {
		cards, err := parse(h.Cards)
		if err != nil {
			return oc, err
		}
		oc.Punters[i], oc.Stood[i] = cards, h.Stood
	}
	var err error
	oc.Banker, err = parse(cp.Banker)
	return oc, err
}

func nextStep(cp *Coup) (rules.OldStep, error) {
	oc, err := cp.engineCoup()
	if err != nil {
		return rules.OldStep{}, err
	}
	return rules.NextStepOld(oc)
}

// points is a hand's OLD-VALUES points.
func points(codes []string) int {
	p := 0
	for _, code := range codes {
		if c, err := rules.ParseCard(code); err == nil {
			p += rules.OldValue(c)
		}
	}
	return p
}

func (cp *Coup) settle() Settle {
	e := Settle{CoupID: cp.ID, BankerID: cp.BankerID, BankHoldID: cp.BankHoldID, Bank: cp.Bank,
		NewBank: cp.Bank + cp.BankerNet, Split: cp.Split, Natural: cp.Natural}
	for _, h := range cp.Hands {
		e.Stakes = append(e.Stakes, StakeHold{PlayerID: h.PlayerID, HoldID: h.HoldID, Amount: h.Stake})
		e.Moves = append(e.Moves, Move{PlayerID: h.PlayerID, Amount: h.Net})
		e.Outcomes = append(e.Outcomes, rules.OldOutcome(h.Points, cp.BankerPoints))
	}
	e.Moves = append(e.Moves, Move{PlayerID: cp.BankerID, Amount: cp.BankerNet})
	return e
}

func (a *applier) cardDealt(c game.CardDealt) error {
	s := a.s
	if s.Phase != PhaseDealing || Pending(*s) == nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due")
	}
	if _, ok := Pending(*s).(game.DealCard); !ok {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no card is due: %s first", Pending(*s).EffectName())
	}
	if _, err := rules.ParseCard(c.Code); err != nil {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "card %q: %v", c.Code, err)
	}
	cp := s.Coup
	seat, _ := cp.cardDue()
	cards, hand, holder := &cp.Banker, eventsv1.Hand_HAND_BANKER, cp.BankerID
	if seat >= 0 {
		cards, hand, holder = &cp.Hands[seat].Cards, eventsv1.Hand_HAND_PUNTER, cp.Hands[seat].PlayerID
	}
	*cards = append(*cards, c.Code)
	cp.DrawDue = false
	s.FreshShoe = false
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: hand, Card: game.Cards([]string{c.Code})[0], Position: int32(len(*cards)),
		Total: int32(points(*cards)), HolderPlayerId: holder})
	return a.advance()
}

// advance moves the coup on after a card or a decision: the next card,
// a decision (with its time limit), or the result.
func (a *applier) advance() error {
	s := a.s
	cp := s.Coup
	step, err := nextStep(cp)
	if err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	switch step.Kind {
	case rules.StepDealPlayer, rules.StepDealBanker:
		s.Phase, s.Deadline = PhaseDealing, time.Time{}
	case rules.StepPlayerChoice, rules.StepBankerChoice:
		// Source: RULES.md OLD-DRAW (less than 4 may draw one card, in order, the banker last)
		s.Phase, s.Deadline = PhaseDecision, a.in.After(s.Rules.DecisionMS)
	case rules.StepDone:
		a.result(step)
	}
	return nil
}

// Decider is the player whose draw decision is due (OLD-DRAW), "" when
// none.
func Decider(s State) string {
	p, _ := s.decider()
	return p
}

// decider is the player whose draw decision is due, and his hand (index,
// -1 the banker).
func (s *State) decider() (string, int) {
	if s.Phase != PhaseDecision {
		return "", 0
	}
	step, err := nextStep(s.Coup)
	if err != nil {
		return "", 0
	}
	if step.Kind == rules.StepBankerChoice {
		return s.Coup.BankerID, -1
	}
	return s.Coup.Hands[step.Seat].PlayerID, step.Seat
}

func (a *applier) decide(c Decide) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if s.Phase != PhaseDecision {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no draw decision is due")
	}
	who, seat := s.decider()
	if c.PlayerID != who {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "it is %q's turn to decide", who)
	}
	return a.decided(seat, c.Draw, true)
}

func (a *applier) decided(seat int, draw, byChoice bool) error {
	cp := a.s.Coup
	hand, who := eventsv1.Hand_HAND_BANKER, cp.BankerID
	if seat >= 0 {
		hand, who = eventsv1.Hand_HAND_PUNTER, cp.Hands[seat].PlayerID
	}
	// Source: RULES.md OLD-DRAW (one card only, or none)
	a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: draw, ByChoice: byChoice, PlayerId: who, Rule: rules.RuleOLDDraw})
	if draw {
		cp.DrawDue, cp.DrawSeat = true, seat
		a.s.Phase, a.s.Deadline = PhaseDealing, time.Time{}
		return nil
	}
	if seat < 0 {
		cp.BankerStood = true
	} else {
		cp.Hands[seat].Stood = true
	}
	return a.advance()
}

// HandOutcome is the result of the decided coup's punter hand i against
// the bank, from the bank's side: OutcomeStandOff for a hand whose stake
// is pooled in the three-way split (it tied the banker, and the three
// share the pool), else from its money: OutcomeBankLoses when the punter
// won, OutcomeBankWins when he lost, a tie included (OLD-SETTLE: a tie
// goes to the banker; OLD-NATURAL). A split hand's net is positive, so
// its outcome cannot be read from the net.
func (cp *Coup) HandOutcome(i int) rules.Outcome {
	// Source: RULES.md OLD-SETTLE
	h := cp.Hands[i]
	switch {
	case cp.Split && rules.OldOutcome(h.Points, cp.BankerPoints) == rules.OutcomeStandOff:
		return rules.OutcomeStandOff
	case h.Net > 0:
		return rules.OutcomeBankLoses
	default:
		return rules.OutcomeBankWins
	}
}

// result records the coup's result from rules.SettleOld and moves to
// SETTLING.
func (a *applier) result(step rules.OldStep) {
	s := a.s
	cp := s.Coup
	oc, _ := cp.engineCoup()
	stakes := make([]int64, len(cp.Hands))
	for i, h := range cp.Hands {
		stakes[i] = h.Stake
	}
	res, err := rules.SettleOld(oc, cp.Bank, stakes)
	if err != nil {
		return // unreachable: the stakes are covered twice (stake) and the coup is done
	}
	cp.Decided, cp.Natural, cp.Split = true, step.Rule == rules.RuleOLDNatural, res.Split
	cp.BankerPoints, cp.BankerNet = points(cp.Banker), res.BankerNet
	switch {
	case res.BankerNet > 0:
		cp.Outcome = rules.OutcomeBankWins
	case res.BankerNet < 0:
		cp.Outcome = rules.OutcomeBankLoses
	default:
		cp.Outcome = rules.OutcomeStandOff
	}
	if res.NextBanker >= 0 {
		cp.NextBanker = cp.Hands[res.NextBanker].PlayerID
	}
	if cp.Natural && rules.OldRank(cp.BankerPoints) >= 8 {
		// Source: RULES.md OLD-NATURAL (the banker with a 9 or 19, an 8 or 18, shows)
		a.Emit(cp.ID, &eventsv1.NaturalShown{Hand: eventsv1.Hand_HAND_BANKER, Total: int32(cp.BankerPoints), Cards: game.Cards(cp.Banker)})
	}
	ev := &eventsv1.CoupResulted{Outcome: game.EventOutcome(cp.Outcome), BankerTotal: int32(cp.BankerPoints), Natural: cp.Natural,
		BankerCards: game.Cards(cp.Banker)}
	for i := range cp.Hands {
		h := &cp.Hands[i]
		h.Points, h.Net, h.Rule = points(h.Cards), res.Net[i], res.Rule[i]
		ev.Hands = append(ev.Hands, &eventsv1.HandResult{Hand: eventsv1.Hand_HAND_PUNTER, HolderPlayerId: h.PlayerID,
			Total: int32(h.Points), Cards: game.Cards(h.Cards), Outcome: game.EventOutcome(cp.HandOutcome(i))})
	}
	a.Emit(cp.ID, ev)
	s.Phase, s.Deadline = PhaseSettling, time.Time{}
}

func (a *applier) settled(c Settled) error {
	s := a.s
	if s.Phase != PhaseSettling {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no settlement is due")
	}
	cp := s.Coup
	newBank := cp.Bank + cp.BankerNet
	if c.NewBank != newBank {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "the settlement left a bank of %d, the coup's is %d", c.NewBank, newBank)
	}
	var won int64
	for _, h := range cp.Hands {
		if h.Net < 0 {
			won -= h.Net
		}
	}
	cp.Settled, cp.SettleTime = true, a.in.Now
	a.Emit(cp.ID, &eventsv1.CoupSettled{Outcome: game.EventOutcome(cp.Outcome), BankerWinnings: won, BankerNet: cp.BankerNet, NewBank: newBank})
	s.CoupsPlayed++
	s.Bank = newBank
	if newBank == 0 {
		s.BankHoldID = "" // the settlement closed it
	}
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the shoe's last)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	s.LastCoup, s.Coup = cp, nil
	s.Phase, s.Deadline = PhaseStaking, time.Time{}
	if _, seated := s.seat(cp.NextBanker); cp.NextBanker != "" && seated && cp.NextBanker != s.BankerID {
		// Source: RULES.md OLD-BACCARAT (the banker first settles with
		// everyone; then the punter showing baccarat takes the bank)
		s.Phase, s.OfferedTo, s.Deadline = PhaseOffering, cp.NextBanker, a.in.After(s.Rules.BankOfferMS)
		a.Emit("", &eventsv1.BankOffered{PlayerId: cp.NextBanker})
		return nil
	}
	a.bankCovers()
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
	s.ShoeID, s.ShoeNumber, s.NewShoeDue, s.FreshShoe = c.ShoeID, c.Number, false, true
	a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
	if s.Phase == PhaseDealing {
		a.startDeal() // the coup was waiting for the shoe
	}
	return nil
}
