package banque

import (
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// nextCard is the hand the coup's next card goes to, if one is due.
func nextCard(cp *Coup) (Hand, bool) {
	if cp == nil {
		return "", false
	}
	if cp.DrawTo != "" {
		return cp.DrawTo, true
	}
	step, err := nextStep(cp)
	if err != nil {
		return "", false
	}
	switch step.Kind {
	case rules.StepDealPlayer:
		return handOf(step.Hand), true
	case rules.StepDealBanker:
		return HandBanker, true
	}
	return "", false
}

func handOf(t rules.Table) Hand {
	if t == rules.TableLeft {
		return HandLeft
	}
	return HandRight
}

// nextStep is the coup's next step by the banque hand machine (BQ-HANDS,
// BQ-PLAY).
func nextStep(cp *Coup) (rules.BanqueStep, error) {
	bc, err := engineCoup(cp)
	if err != nil {
		return rules.BanqueStep{}, err
	}
	return rules.NextStepBanque(bc)
}

func engineCoup(cp *Coup) (rules.BanqueCoup, error) {
	bc := rules.BanqueCoup{RightStood: cp.RightStood, LeftStood: cp.LeftStood, BankerStood: cp.BankerStood}
	for _, h := range []struct {
		codes []string
		to    *[]rules.Card
	}{{cp.Right, &bc.Right}, {cp.Left, &bc.Left}, {cp.Banker, &bc.Banker}} {
		cards, err := parse(h.codes)
		if err != nil {
			return bc, err
		}
		*h.to = cards
	}
	return bc, nil
}

func parse(codes []string) ([]rules.Card, error) {
	var out []rules.Card
	for _, code := range codes {
		c, err := rules.ParseCard(code)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func total(codes []string) int {
	cards, _ := parse(codes)
	return rules.Total(cards)
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
	hand, ok := nextCard(cp)
	if !ok {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s waits for no card", cp.ID)
	}
	cards := cp.cards(hand)
	if len(*cards) == 2 && cp.DrawTo == "" {
		// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (the hand's player draws on 0-4)
		a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: eventHand(hand), Draw: true, Rule: rules.RulePlayerDraw})
	}
	cp.DrawTo = ""
	*cards = append(*cards, c.Code)
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: eventHand(hand), Card: game.Cards([]string{c.Code})[0], Position: int32(len(*cards)),
		Total: int32(total(*cards)), HolderPlayerId: cp.holderOf(hand, s.Banker)})
	if hand == HandBanker && len(cp.Banker) == 2 {
		a.naturals()
	}
	return a.advance()
}

// naturals shows the naturals once every hand has two cards.
func (a *applier) naturals() {
	cp := a.s.Coup
	for _, h := range []Hand{HandBanker, HandRight, HandLeft} {
		cards := *cp.cards(h)
		if t := total(cards); t >= 8 {
			// Source: RULES.md CF-NATURAL-PLAYER, CF-NATURAL-BANKER (a natural is shown at once)
			a.Emit(cp.ID, &eventsv1.NaturalShown{Hand: eventHand(h), Total: int32(t), Cards: game.Cards(cards)})
		}
	}
}

func (cp *Coup) cards(h Hand) *[]string {
	switch h {
	case HandRight:
		return &cp.Right
	case HandLeft:
		return &cp.Left
	}
	return &cp.Banker
}

func (cp *Coup) holderOf(h Hand, banker string) string {
	switch h {
	case HandRight:
		return cp.RightHolder
	case HandLeft:
		return cp.LeftHolder
	}
	return banker
}

// advance moves the coup on after a card or a decision: the next card,
// a decision to wait for (or to take by the tableau when nobody holds the
// hand), or the result.
func (a *applier) advance() error {
	s := a.s
	cp := s.Coup
	for range 4 {
		if cp.DrawTo != "" {
			s.Phase = PhaseDealing
			return nil
		}
		step, err := nextStep(cp)
		if err != nil {
			return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
		}
		switch step.Kind {
		case rules.StepDealPlayer, rules.StepDealBanker:
			s.Phase = PhaseDealing
			return nil
		case rules.StepPlayerChoice:
			h := handOf(step.Hand)
			if who := cp.holderOf(h, ""); who != "" {
				a.await(h)
				return nil
			}
			// Nobody sits on that side: the tableau's timeout default.
			// Source: RULES.md BQ-PLAY, CF-PLAYER-DRAW (option on 5: draws when nobody chooses)
			a.decide(h, true, "")
		case rules.StepBankerChoice:
			if !s.Rules.HouseBank {
				a.await(HandBanker)
				return nil
			}
			// Source: RULES.md BQ-PLAY (the house's croupier plays the bank by the tableau)
			a.decide(HandBanker, s.bankerDefault(), "")
		case rules.StepDone:
			a.result(step)
			return nil
		}
	}
	return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s does not move on", cp.ID)
}

func (a *applier) await(h Hand) {
	s := a.s
	s.Coup.Await, s.Phase, s.Deadline = h, PhaseDecision, a.in.After(s.Rules.DecisionTimeLimitMS)
}

// decide records a draw or a stand of hand h; by is the player who chose
// ("" when the tableau or a time-out did).
func (a *applier) decide(h Hand, draw bool, by string) {
	s := a.s
	cp := s.Coup
	cp.Await, s.Deadline = "", time.Time{}
	if draw {
		cp.DrawTo = h
	} else {
		switch h {
		case HandRight:
			cp.RightStood = true
		case HandLeft:
			cp.LeftStood = true
		default:
			cp.BankerStood = true
		}
	}
	rule := rules.RulePlayerDraw
	if h == HandBanker {
		rule = rules.RuleBQPlay
	}
	a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: eventHand(h), Draw: draw, ByChoice: by != "", PlayerId: by, Rule: rule})
}

// bankerDefault is the banker's draw when he does not choose (a time-out,
// or a house bank): what the chemin de fer tableau does against the hand
// carrying more money (the right one on equal money; the other when that
// one showed a natural), drawing at an option cell.
func (s *State) bankerDefault() bool {
	cp := s.Coup
	var right, left int64
	for _, b := range cp.Bets {
		switch b.Side {
		case SideRight:
			right += b.Amount
		case SideLeft:
			left += b.Amount
		}
	}
	hands := [][]string{cp.Right, cp.Left}
	if left > right {
		hands[0], hands[1] = hands[1], hands[0]
	}
	against := hands[0]
	if total(against[:2]) >= 8 {
		against = hands[1]
	}
	var third *rules.Card
	if len(against) == 3 {
		c, _ := rules.ParseCard(against[2])
		third = &c
	}
	// Source: RULES.md BQ-PLAY (he plays against the hand carrying more
	// money), CF-BANKER-DRAW, and the time-out default (draw at an option)
	d := rules.BankerDecision(total(cp.Banker), third, rules.HouseRules{})
	return d != rules.DecisionStand
}

func (a *applier) decideCmd(c Decide) error {
	s := a.s
	if err := a.open(); err != nil {
		return err
	}
	if c.Hand != HandRight && c.Hand != HandLeft && c.Hand != HandBanker {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "hand %q is not right, left or banker", c.Hand)
	}
	if s.Phase != PhaseDecision {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no decision is due")
	}
	cp := s.Coup
	if c.Hand != cp.Await {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the %s hand decides now, not the %s", cp.Await, c.Hand)
	}
	if who := cp.holderOf(c.Hand, s.Banker); c.PlayerID != who {
		if c.Hand == HandBanker {
			return game.Refuse(game.PermissionDenied, ReasonNotBanker, "player %q is not the banker", c.PlayerID)
		}
		// Source: RULES.md BQ-PLAY (each hand is played by a player of its side)
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the %s hand is %q's", c.Hand, who)
	}
	// Source: RULES.md BQ-PLAY (option on 5 for a hand's player; the banker draws or stands freely)
	a.decide(c.Hand, c.Draw, c.PlayerID)
	return a.advance()
}

// result records the decided coup and moves to SETTLING.
func (a *applier) result(step rules.BanqueStep) {
	s := a.s
	cp := s.Coup
	cp.Decided, cp.RightOutcome, cp.LeftOutcome = true, step.Right, step.Left
	cp.RightTotal, cp.LeftTotal, cp.BankerTotal = total(cp.Right), total(cp.Left), total(cp.Banker)
	a.Emit(cp.ID, &eventsv1.CoupResulted{Outcome: eventOutcome(chevalOutcome(step.Right, step.Left)),
		BankerTotal: int32(cp.BankerTotal), Natural: total(cp.Banker[:2]) >= 8, BankerCards: game.Cards(cp.Banker),
		Hands: []*eventsv1.HandResult{
			{Hand: eventsv1.Hand_HAND_RIGHT, HolderPlayerId: cp.RightHolder, Total: int32(cp.RightTotal), Cards: game.Cards(cp.Right), Outcome: eventOutcome(step.Right)},
			{Hand: eventsv1.Hand_HAND_LEFT, HolderPlayerId: cp.LeftHolder, Total: int32(cp.LeftTotal), Cards: game.Cards(cp.Left), Outcome: eventOutcome(step.Left)},
		}})
	s.Phase = PhaseSettling
}

// chevalOutcome is the coup's outcome for an à cheval bet, from the bank's
// side: it wins only if it beats both hands, loses only if it loses to
// both, else stands off.
func chevalOutcome(right, left rules.Outcome) rules.Outcome {
	switch {
	case right == rules.OutcomeBankWins && left == rules.OutcomeBankWins:
		// Source: RULES.md BQ-CHEVAL (loses only if the bank beats both hands)
		return rules.OutcomeBankWins
	case right == rules.OutcomeBankLoses && left == rules.OutcomeBankLoses:
		// Source: RULES.md BQ-CHEVAL (wins only if the bank loses to both)
		return rules.OutcomeBankLoses
	}
	// Source: RULES.md BQ-CHEVAL (otherwise it is returned)
	return rules.OutcomeStandOff
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
	if c.NewBank < 0 || (s.Rules.HouseBank && c.NewBank != 0) {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "new bank %d", c.NewBank)
	}
	for i := range cp.Bets {
		cp.Bets[i].Won, cp.Bets[i].Lost = c.Bets[i].Won, c.Bets[i].Lost
	}
	cp.Settled, cp.SettleTime = true, a.in.Now
	cp.BankerWinnings, cp.Commission, cp.NewBank = c.BankerWinnings, c.Commission, c.NewBank
	ev := &eventsv1.CoupSettled{Outcome: eventOutcome(chevalOutcome(cp.RightOutcome, cp.LeftOutcome)), BankerWinnings: c.BankerWinnings,
		Commission: c.Commission, BankerNet: c.BankerWinnings - c.Commission, NewBank: c.NewBank}
	if s.Rules.HouseBank {
		ev.HouseNet = c.BankerWinnings
	}
	a.Emit(cp.ID, ev)
	s.CoupsPlayed++
	if s.CutCardOut {
		// Source: RULES.md SHOE-CUT-CARD (the coup of the cut card is the shoe's last)
		s.NewShoeDue, s.CutCardOut = true, false
	}
	// Source: RULES.md BQ-PLAY (a player keeps his side's hand until he
	// loses a coup, then the right passes to the next of that side)
	s.RightHolder, s.LeftHolder = cp.RightHolder, cp.LeftHolder
	if cp.RightOutcome == rules.OutcomeBankWins && cp.RightHolder != "" {
		s.RightHolder = s.nextHolder(SideRight, cp.RightHolder)
	}
	if cp.LeftOutcome == rules.OutcomeBankWins && cp.LeftHolder != "" {
		s.LeftHolder = s.nextHolder(SideLeft, cp.LeftHolder)
	}
	s.LastCoup, s.Coup = cp, nil
	if s.Rules.HouseBank {
		a.openBetting()
		return nil
	}
	s.Bank = c.NewBank
	if s.Bank < s.Rules.MinBet {
		// Source: RULES.md BQ-BANK (the banker keeps the bank until it is
		// exhausted: it can no longer cover the smallest bet)
		s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
		a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST, PreviousBankerPlayerId: s.Banker, Bank: s.Bank})
		s.Banker, s.Bank, s.BankHoldID = "", 0, ""
		a.openAuction()
		return nil
	}
	// Source: RULES.md BQ-BANK (the banker keeps the bank after losing a coup)
	a.Emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, BankerPlayerId: s.Banker, Bank: s.Bank})
	a.openBetting()
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
	s.ShoeID, s.ShoeNumber, s.NewShoeDue = c.ShoeID, c.Number, false
	a.Emit("", &eventsv1.ShoeChanged{ShoeId: c.ShoeID, ShoeNumber: c.Number})
	return nil
}
