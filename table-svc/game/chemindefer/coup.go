package chemindefer

import (
	"strconv"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The coup: betting, the deal and the decisions, the result, the
// settlement, voids and time-outs.

// newCoup starts the next coup of the table's banker, named by the
// input's fresh id: betting opens with the punter on the banker's right
// (CF-BET-ORDER, CF-BET-BEFORE), the gallery after the seated players
// (CF-GALLERY).
func (a *applier) newCoup() *Coup {
	s := a.s
	s.CoupSeq++
	return &Coup{ID: a.in.NewID, Number: s.CoupSeq, BankerID: s.BankerID, Bank: s.Stake(), Order: a.bettingOrder()}
}

// bettingOrder is the punters in betting order: the seated players from
// the banker's right (CF-BET-ORDER), then the gallery (CF-GALLERY).
func (a *applier) bettingOrder() []string {
	s := a.s
	var order []string
	for _, p := range s.Around(s.BankerID) {
		if p != s.BankerID { // the banker does not bet
			order = append(order, p)
		}
	}
	return append(order, s.Gallery...)
}

// leaveOrder takes player out of the betting order of the coup being bet,
// keeping the turn on the same next punter.
func (a *applier) leaveOrder(player string) {
	cp := a.s.Coup
	if cp == nil || a.s.Phase != PhaseBetting {
		return
	}
	for i, q := range cp.Order {
		if q == player {
			cp.Order = append(cp.Order[:i:i], cp.Order[i+1:]...)
			if i < cp.Turn {
				cp.Turn--
			}
			return
		}
	}
}

// punterTurn checks that player may act in the betting now.
func (a *applier) punterTurn(player string) error {
	s := a.s
	if err := a.wantPhase(PhaseBetting); err != nil {
		return err
	}
	if player == s.BankerID {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker does not bet against his own bank")
	}
	if s.SeatOf(player) == nil && !s.InGallery(player) {
		return game.Refuse(game.FailedPrecondition, ReasonNotSeated, "player %q has no seat and is not in the gallery", player)
	}
	if turn := s.Coup.TurnPlayer(); turn != player {
		// Source: RULES.md CF-BET-ORDER
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "it is %q's turn to bet", turn)
	}
	return nil
}

func (a *applier) placeBet(c PlaceBet) error {
	s := a.s
	if err := a.punterTurn(c.PlayerID); err != nil {
		return err
	}
	cp := s.Coup
	if cp.SuiviAsked != "" {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "a banco stands: %q may take it over (CallBanco) or let it stand (DeclineBet)", cp.SuiviAsked)
	}
	if c.Amount <= 0 {
		return game.Refuse(game.InvalidArgument, ReasonInvalidAmount, "amount must be > 0")
	}
	uncovered := cp.Bank - cp.Covered()
	if c.Amount > uncovered && !c.OverBank {
		// Source: RULES.md CF-BET-LIMIT
		return game.Refuse(game.FailedPrecondition, ReasonBetExceedsBank, "bet %d exceeds the uncovered bank %d", c.Amount, uncovered)
	}
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: c.PlayerID, Amount: c.Amount}
		return nil
	}
	cp.Bets = append(cp.Bets, Bet{PlayerID: c.PlayerID, Amount: c.Amount, HoldID: c.HoldID})
	cp.Turn++
	s.BancoSuivi = "" // the first bet ends banco suivi
	a.Emit(cp.ID, &eventsv1.BetPlaced{PlayerId: c.PlayerID, Amount: c.Amount, Uncovered: max(0, uncovered-c.Amount)})
	a.closeBetting()
	return nil
}

func (a *applier) declineBet(c DeclineBet) error {
	s := a.s
	if err := a.punterTurn(c.PlayerID); err != nil {
		return err
	}
	if a.declineSuivi() {
		return nil
	}
	s.Coup.Turn++
	if s.BancoSuivi == c.PlayerID {
		s.BancoSuivi = ""
	}
	a.Emit(s.Coup.ID, &eventsv1.BetDeclined{PlayerId: c.PlayerID})
	a.closeBetting()
	return nil
}

// declineSuivi: the banco suivi holder, asked whether he takes over
// another's banco, lets it stand; the betting closes on that banco. It
// reports whether the table was asking him.
func (a *applier) declineSuivi() bool {
	cp := a.s.Coup
	if cp.SuiviAsked == "" {
		return false
	}
	a.Emit(cp.ID, &eventsv1.BetDeclined{PlayerId: cp.SuiviAsked})
	cp.SuiviAsked, a.s.BancoSuivi = "", ""
	a.closeBetting()
	return true
}

func (a *applier) callBanco(c CallBanco) error {
	s, player := a.s, c.PlayerID
	if player == s.BankerID {
		return game.Refuse(game.FailedPrecondition, ReasonBankerCannotBet, "the banker does not bet against his own bank")
	}
	// Source: RULES.md CF-BANCO-PRIORITY: the previous banco caller
	// first (banco suivi: out of turn until the first bet, or by taking
	// over another's banco when asked), then in betting order.
	suivi := s.Phase == PhaseBetting && player == s.BancoSuivi && len(s.Coup.Bets) == 0 &&
		(s.SeatOf(player) != nil || s.InGallery(player))
	takeOver := s.Phase == PhaseBetting && s.Coup.SuiviAsked != "" && player == s.Coup.SuiviAsked
	if !suivi && !takeOver {
		if err := a.punterTurn(player); err != nil {
			return err
		}
	}
	cp := s.Coup
	if c.HoldID == "" {
		a.Hold = &game.Hold{PlayerID: player, Amount: cp.Bank}
		return nil
	}
	// Source: RULES.md CF-BANCO: a banco cancels all other bets.
	for _, b := range cp.Bets {
		s.PendingVoids = append(s.PendingVoids, b.HoldID)
	}
	cp.Bets = []Bet{{PlayerID: player, Amount: cp.Bank, HoldID: c.HoldID, Banco: true}}
	cp.Banco = true
	a.Emit(cp.ID, &eventsv1.BancoCalled{PlayerId: player, Amount: cp.Bank})
	if su := s.BancoSuivi; su != "" && su != player && !takeOver && (s.SeatOf(su) != nil || s.InGallery(su)) {
		// The banco suivi holder is asked before the deal whether he
		// takes this banco over (CallBanco) or lets it stand
		// (DeclineBet, or his time runs out).
		cp.SuiviAsked = su
		return nil
	}
	cp.SuiviAsked = ""
	s.BancoSuivi = ""
	a.closeBetting()
	return nil
}

// closeBetting ends the betting when the bank is covered, a banco was
// called, or every punter has had his turn (CF-BET-ORDER). A round with no
// bet opens again; bets over the bank wait for the banker (CF-BANK-RAISE).
func (a *applier) closeBetting() {
	cp := a.s.Coup
	if cp.Covered() < cp.Bank && !cp.Banco && cp.Turn < len(cp.Order) {
		return
	}
	if len(cp.Bets) == 0 {
		// A new round, with whoever is seated now (and the gallery).
		cp.Order = a.bettingOrder()
		cp.Turn = 0
		cp.Round++
		a.Emit(cp.ID, &eventsv1.BettingReopened{})
		return
	}
	if cp.Covered() > cp.Bank {
		// Source: RULES.md CF-BANK-RAISE: the banker raises or the excess goes.
		a.s.Phase = PhaseRaise
		return
	}
	a.startDeal()
}

// startDeal gives the player's hand to its holder and starts the deal:
// the largest bet, ties to the punter earlier in betting order
// (CF-HAND-HOLDER); the banco caller holds it.
func (a *applier) startDeal() {
	cp := a.s.Coup
	holder := cp.Bets[0]
	for _, b := range cp.Bets[1:] {
		if b.Amount > holder.Amount { // Source: RULES.md CF-HAND-HOLDER (ties keep the earlier bet)
			holder = b
		}
	}
	cp.HandHolder = holder.PlayerID
	a.s.Phase = PhaseDealing
}

func (a *applier) raiseBank(c RaiseBank) error {
	s := a.s
	if err := a.wantPhase(PhaseRaise); err != nil {
		return err
	}
	if s.BankerID != c.PlayerID {
		return game.Refuse(game.FailedPrecondition, ReasonNotBanker, "only the banker may raise the bank")
	}
	if !c.Raise {
		a.trimExcess(c.LostRaises)
		return nil
	}
	cp := s.Coup
	excess := cp.Covered() - cp.Bank
	if s.Rules.HouseLimit > 0 && cp.Bank+excess > s.Rules.HouseLimit {
		return game.Refuse(game.FailedPrecondition, ReasonHouseLimitReached, "a bank of %d would exceed the house limit %d", cp.Bank+excess, s.Rules.HouseLimit)
	}
	if !c.Resized {
		a.raise = &Raise{CoupID: cp.ID, HoldID: s.BankHoldID, Amount: s.Bank + excess}
		return nil
	}
	// Source: RULES.md CF-BANK-RAISE: the banker agrees to raise the bank.
	s.Bank += excess
	cp.Bank += excess
	a.Emit(cp.ID, &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_RAISED, BankerPlayerId: s.BankerID, PreviousBankerPlayerId: s.BankerID, Bank: s.Bank})
	a.startDeal()
	return nil
}

// trimExcess removes the bets over the stake in reverse order of play
// (CF-BANK-RAISE): the last bets are cut back and bets cut to nothing are
// cancelled. Their escrow is resized (or released) before the deal, each
// call idempotent, keyed by the coup and the hold: the decision is stored
// first, so no wallet reply can be lost in between. A raise whose answer
// was lost (lost) may have grown the bank hold: it is brought back to the
// bank before the deal.
func (a *applier) trimExcess(lost []string) {
	s, cp := a.s, a.s.Coup
	for _, id := range lost {
		s.PendingResizes = append(s.PendingResizes, Resize{RequestID: "reset/" + id, HoldID: s.BankHoldID, Amount: s.Bank})
	}
	need := cp.Covered() - cp.Bank
	for i := len(cp.Bets) - 1; i >= 0 && need > 0; i-- {
		b := &cp.Bets[i]
		cut := min(need, b.Amount)
		need -= cut
		if cut == b.Amount {
			s.PendingVoids = append(s.PendingVoids, b.HoldID)
			a.Emit(cp.ID, &eventsv1.BetReduced{PlayerId: b.PlayerID})
			cp.Bets = append(cp.Bets[:i:i], cp.Bets[i+1:]...)
			continue
		}
		// Stored with the decision, carried out before the deal (Pending).
		s.PendingResizes = append(s.PendingResizes, Resize{RequestID: cp.ID + "/trim/" + b.HoldID, HoldID: b.HoldID, Amount: b.Amount - cut})
		b.Amount -= cut
		a.Emit(cp.ID, &eventsv1.BetReduced{PlayerId: b.PlayerID, Amount: b.Amount})
	}
	a.startDeal()
}

func (a *applier) decideDraw(c DecideDraw) error {
	s := a.s
	if err := a.wantPhase(PhaseDecision); err != nil {
		return err
	}
	if s.Coup.DecisionBy != c.PlayerID {
		return game.Refuse(game.FailedPrecondition, ReasonNotYourTurn, "the decision is %q's", s.Coup.DecisionBy)
	}
	if c.Choice != ChoiceDraw && c.Choice != ChoiceStand {
		return game.Refuse(game.InvalidArgument, ReasonInvalidArgument, "choice must be DRAW_CHOICE_DRAW or DRAW_CHOICE_STAND")
	}
	a.recordChoice(c.Choice, c.PlayerID, true)
	return nil
}

// recordChoice records the pending decision of the coup in play (by the
// holder's choice, or the default when his time ran out) and lets the coup
// go on (CF-PLAYER-DRAW, CF-BANKER-DRAW, CF-BANCO-FREEDOM).
func (a *applier) recordChoice(ch Choice, player string, byChoice bool) {
	s, cp := a.s, a.s.Coup
	hand, rule := eventsv1.Hand_HAND_PLAYER, "CF-PLAYER-DRAW"
	if cp.DecisionHand == HandBanker {
		hand, rule = eventsv1.Hand_HAND_BANKER, "CF-BANKER-DRAW"
		cp.BankerChoice = ch
	} else {
		cp.PlayerChoice = ch
	}
	if cp.Banco && s.Rules.BancoFreePlay {
		rule = "CF-BANCO-FREEDOM"
	}
	a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: ch == ChoiceDraw, ByChoice: byChoice, PlayerId: player, Rule: rule})
	cp.DecisionHand, cp.DecisionBy = 0, ""
	s.Phase = PhaseDealing
}

// progress runs the coup's steps that need no card: a recorded stand, the
// move to DECISION for a hand's holder, the result. It stops when a card
// is due (Pending) or the coup leaves DEALING.
func (a *applier) progress() {
	s, cp := a.s, a.s.Coup
	for s.Phase == PhaseDealing {
		rc, err := EngineCoup(cp)
		if err != nil {
			return
		}
		step, err := rules.NextStep(rc, s.Rules.EngineRules())
		if err != nil {
			return
		}
		switch step.Kind {
		case rules.StepDealPlayer, rules.StepDealBanker:
			return
		case rules.StepPlayerChoice:
			if !a.choose(&cp.PlayerChoice, &cp.PlayerStood, HandPlayer, cp.HandHolder) {
				return
			}
		case rules.StepBankerChoice:
			if !a.choose(&cp.BankerChoice, &cp.BankerStood, HandBanker, cp.BankerID) {
				return
			}
		case rules.StepDone:
			a.result(rc, step)
			return
		default:
			return
		}
	}
}

// choose carries out a recorded stand (reporting true: the coup goes
// on); with a recorded draw a card is due; with none the table waits in
// DECISION for the hand's holder, by.
func (a *applier) choose(ch *Choice, stood *bool, hand int32, by string) bool {
	switch *ch {
	case ChoiceStand:
		*ch = ChoiceNone
		*stood = true
		return true
	case ChoiceDraw:
		return false
	}
	a.s.Phase = PhaseDecision
	a.s.Coup.DecisionHand = hand
	a.s.Coup.DecisionBy = by
	return false
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
	rc, err := EngineCoup(cp)
	if err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	step, err := rules.NextStep(rc, s.Rules.EngineRules())
	if err != nil {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s: %v", cp.ID, err)
	}
	hand, cards, rule := eventsv1.Hand_HAND_PLAYER, &cp.Player, step.Rule
	switch {
	case step.Kind == rules.StepDealPlayer:
	case step.Kind == rules.StepDealBanker:
		hand, cards = eventsv1.Hand_HAND_BANKER, &cp.Banker
	case step.Kind == rules.StepPlayerChoice && cp.PlayerChoice == ChoiceDraw:
		cp.PlayerChoice, rule = ChoiceNone, ""
	case step.Kind == rules.StepBankerChoice && cp.BankerChoice == ChoiceDraw:
		hand, cards, rule = eventsv1.Hand_HAND_BANKER, &cp.Banker, ""
		cp.BankerChoice = ChoiceNone
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "coup %s waits for %v, not a card", cp.ID, step.Kind)
	}
	if len(*cards) == 2 && rule != "" {
		// A third card drawn by the tableau (CF-PLAYER-DRAW, CF-BANKER-DRAW).
		a.Emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: true, Rule: rule})
	}
	*cards = append(*cards, c.Code)
	cp.CardsDealt++
	s.CutCardOut = s.CutCardOut || c.CutCardOut
	cc := game.Cards([]string{c.Code})[0]
	total, _ := handTotal(*cards)
	a.Emit(cp.ID, &eventsv1.CardDealt{Hand: hand, Card: cc, Position: int32(len(*cards)), Total: int32(total)})
	return nil
}

// handTotal is the HAND-TOTAL of card codes.
func handTotal(codes []string) (int, error) {
	cards, err := game.ParseCards(codes)
	return rules.Total(cards), err
}

// result records the decided coup (CF-RESULT) and moves to SETTLING.
func (a *applier) result(rc rules.Coup, step rules.Step) {
	cp := a.s.Coup
	pt, bt := rules.Total(rc.Player), rules.Total(rc.Banker)
	if step.Natural {
		// Source: RULES.md CF-NATURAL-PLAYER, CF-NATURAL-BANKER
		if rules.IsNatural(rc.Player) {
			a.Emit(cp.ID, &eventsv1.NaturalShown{Hand: eventsv1.Hand_HAND_PLAYER, Total: int32(pt), Cards: game.Cards(cp.Player)})
		}
		if rules.IsNatural(rc.Banker) {
			a.Emit(cp.ID, &eventsv1.NaturalShown{Hand: eventsv1.Hand_HAND_BANKER, Total: int32(bt), Cards: game.Cards(cp.Banker)})
		}
	}
	cp.Outcome, cp.Natural = step.Outcome, step.Natural
	a.Emit(cp.ID, &eventsv1.CoupResulted{Outcome: eventOutcome(step.Outcome), PlayerTotal: int32(pt), BankerTotal: int32(bt),
		Natural: step.Natural, PlayerCards: game.Cards(cp.Player), BankerCards: game.Cards(cp.Banker)})
	a.s.Phase = PhaseSettling
}

// settled records the wallet's settlement, then holds the bank after a
// win or stand-off (CF-HOLD) or takes it from a banker who lost (CF-LOSE);
// seat time is billed (hourly_fee).
func (a *applier) settled(c Settled) error {
	s := a.s
	if s.Phase != PhaseSettling {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no settlement is due")
	}
	cp := s.Coup
	cp.Settled, cp.SettleTime = true, a.now()
	cp.Winnings, cp.Commission = c.BankerWinnings, c.Commission
	cp.BankerNet, cp.NewBank = c.BankerNet, c.NewBank
	cp.DecisionHand, cp.DecisionBy = 0, ""
	s.CoupsPlayed++
	s.BankerCoups++
	for i := range s.Seats {
		a.billSeat(&s.Seats[i])
	}
	s.LastCoup, s.Coup = cp, nil
	a.Emit(cp.ID, &eventsv1.CoupSettled{
		Outcome: eventOutcome(cp.Outcome), BankerWinnings: cp.Winnings, Commission: cp.Commission,
		BankerNet: cp.BankerNet, NewBank: cp.NewBank,
	})
	s.BancoSuivi = ""
	if cp.Banco && cp.Outcome == rules.OutcomeBankWins {
		// Source: RULES.md CF-BANCO-PRIORITY: banco suivi for the caller who lost.
		s.BancoSuivi = cp.Bets[0].PlayerID
	}
	if cp.Outcome == rules.OutcomeBankLoses {
		// Source: RULES.md CF-LOSE: the bank is lost and offered in turn.
		prev := s.BankerID
		if !c.BankReleased {
			s.PendingVoids = append(s.PendingVoids, s.BankHoldID)
		}
		s.BankerID, s.Bank, s.BankHoldID = "", 0, ""
		a.Emit(cp.ID, &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST, PreviousBankerPlayerId: prev})
		a.offerBank(prev, 0)
		return nil
	}
	// Source: RULES.md CF-HOLD, CF-BANK-SIZE: the bank is the previous bank plus winnings after commission.
	s.Bank = cp.NewBank
	a.Emit(cp.ID, &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, BankerPlayerId: s.BankerID, PreviousBankerPlayerId: s.BankerID, Bank: s.Bank})
	s.Coup = a.newCoup()
	s.Phase = PhaseBetting
	return nil
}

// billSeat queues the seat time of st not billed yet, under the
// hourly_fee house rule (CF-BANK-WINS), and starts a new period.
func (a *applier) billSeat(st *Seat) {
	s, now := a.s, a.now()
	if s.Rules.HourlyFee <= 0 {
		return
	}
	secs := int64(now.Sub(st.Since) / time.Second)
	if st.Since.IsZero() || secs <= 0 {
		st.Since = now
		return
	}
	owed := secs + s.UnpaidSeconds[st.PlayerID]
	if fee, err := rules.HourlyFeeDue(s.feeRules(), owed); err != nil || fee == 0 {
		return // less than one minor unit so far: the time accrues
	}
	s.Fees++
	s.PendingFees = append(s.PendingFees, SeatFee{ID: "fee/" + strconv.Itoa(s.Fees), PlayerID: st.PlayerID, Seconds: owed})
	delete(s.UnpaidSeconds, st.PlayerID)
	st.Since = st.Since.Add(time.Duration(secs) * time.Second)
}

func (s *State) feeRules() rules.HouseRules {
	hr := s.Rules.EngineRules()
	hr.HourlyFee = s.Rules.HourlyFee
	return hr
}

// feesCharged records the charges of the stored seat fees. A fee the
// player could not pay is recorded unpaid (event seat_fee_charged) and
// added to his next fee at this table.
func (a *applier) feesCharged(c FeesCharged) error {
	s := a.s
	if len(s.PendingFees) == 0 || len(c.Fees) != len(s.PendingFees) {
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "%d fee charges for %d fees", len(c.Fees), len(s.PendingFees))
	}
	for i, f := range s.PendingFees {
		fee, paid := c.Fees[i].Fee, c.Fees[i].Paid
		if !paid {
			fee, _ = rules.HourlyFeeDue(s.feeRules(), f.Seconds)
		}
		a.Emit("", &eventsv1.SeatFeeCharged{PlayerId: f.PlayerID, SeatSeconds: f.Seconds, Fee: fee, Paid: paid})
		if !paid && s.SeatOf(f.PlayerID) != nil {
			// Owed, and charged with his next fee at this table.
			if s.UnpaidSeconds == nil {
				s.UnpaidSeconds = map[string]int64{}
			}
			s.UnpaidSeconds[f.PlayerID] += f.Seconds
		}
	}
	s.PendingFees = nil
	return nil
}

func (a *applier) voidCmd(c Void) error {
	s := a.s
	switch s.Phase {
	case PhaseBetting, PhaseDealing, PhaseDecision, PhaseRaise:
	default:
		return game.Refuse(game.FailedPrecondition, ReasonWrongState, "no coup to void before settlement (table is %s)", s.Phase)
	}
	if s.Coup.ID != c.CoupID {
		return game.Refuse(game.FailedPrecondition, ReasonCoupNotInPlay, "coup %q is not in play (coup %q is)", c.CoupID, s.Coup.ID)
	}
	a.voidCoup(c.Reason, c.By, c.ByRole)
	return nil
}

// voidCoup voids the coup in play (CF-ERROR): every bet is returned, its
// cards are discarded, the banker keeps the bank and the next coup's
// betting opens.
func (a *applier) voidCoup(reason, by, byRole string) {
	s, cp := a.s, a.s.Coup
	// Source: RULES.md CF-ERROR: the coup is restored as if not played; every bet returned.
	for _, b := range cp.Bets {
		s.PendingVoids = append(s.PendingVoids, b.HoldID)
	}
	s.PendingResizes = nil // the bets' holds are released whole
	cp.Voided, cp.VoidReason = true, reason
	cp.DecisionHand, cp.DecisionBy = 0, ""
	a.Emit(cp.ID, &eventsv1.CoupVoided{Reason: reason, By: by, ByRole: byRole})
	s.LastCoup = cp
	s.Coup = a.newCoup()
	s.Phase = PhaseBetting
}

// tick applies the time-out of the turn whose time has run out, as the
// house rules say (RULES.md, defaults when a decision's time runs out): a
// punter who has not bet passes; the holder at an option draws as the
// tableau does; a bank not accepted in time is offered to the next in
// turn; an auction whose time runs out goes to the highest bid; a banker
// who does not answer over-bank bets sees the excess removed. Each
// time-out is an event (turn_timed_out).
func (a *applier) tick(lostRaises []string) error {
	s := a.s
	if s.WaitKey == "" || s.Deadline.After(a.in.Now) {
		return nil // nothing due
	}
	timedOut := func(player, turn, action, coupID string) {
		a.Emit(coupID, &eventsv1.TurnTimedOut{PlayerId: player, Turn: turn, Action: action})
	}
	switch s.Phase {
	case PhaseOffering:
		if s.OpenOffer > 0 {
			// Nobody took the passed bank at its price: offered in turn.
			timedOut("", "bank_offer", "bank_offered_on", "")
			a.offerBank(s.OpenOfferFrom, 0)
			break
		}
		prev := s.OfferedID
		timedOut(prev, "bank_offer", "bank_offered_on", "")
		a.offerBank(prev, 0)
	case PhaseAuction:
		timedOut("", "bank_auction", "auction_closed", "")
		a.closeAuction()
	case PhaseRaise:
		// The banker did not raise: the excess bets are removed (CF-BANK-RAISE).
		timedOut(s.BankerID, "bank_raise", "excess_bets_removed", s.Coup.ID)
		a.trimExcess(lostRaises)
	case PhaseBetting:
		cp := s.Coup
		p := cp.TurnPlayer()
		if cp.SuiviAsked != "" {
			// The banco suivi holder did not take the banco over: it stands.
			timedOut(p, "banco_suivi", "banco_left_standing", cp.ID)
			a.declineSuivi()
			break
		}
		timedOut(p, "bet", "bet_declined", cp.ID)
		cp.Turn++
		if s.BancoSuivi == p {
			// Source: RULES.md CF-BANCO-PRIORITY (a turn let go ends banco
			// suivi, as a decline does)
			s.BancoSuivi = ""
		}
		a.Emit(cp.ID, &eventsv1.BetDeclined{PlayerId: p})
		a.closeBetting()
	case PhaseDecision:
		cp := s.Coup
		ch := a.timeoutChoice()
		action := "draw"
		if ch == ChoiceStand {
			action = "stand"
		}
		timedOut(cp.DecisionBy, "decision", action, cp.ID)
		a.recordChoice(ch, cp.DecisionBy, false)
	}
	return nil
}

// timeoutChoice is what the table does for a decision whose time ran
// out: what the tableau does (CF-PLAYER-DRAW, CF-BANKER-DRAW), even under
// banco free play (CF-BANCO-FREEDOM frees the holder, not the clock), and
// draw at an option cell (RULES.md, "What the sources leave to the
// house": the player on 5 draws, the banker at an option draws).
func (a *applier) timeoutChoice() Choice {
	cp := a.s.Coup
	rc, err := EngineCoup(cp)
	if err != nil || len(rc.Player) < 2 || len(rc.Banker) < 2 {
		return ChoiceDraw
	}
	var d rules.Decision
	if cp.DecisionHand == HandBanker {
		var third *rules.Card
		if len(rc.Player) == 3 {
			third = &rc.Player[2]
		}
		d = rules.BankerDecision(rules.Total(rc.Banker[:2]), third, a.s.Rules.EngineRules())
	} else {
		d = rules.PlayerDecision(rules.Total(rc.Player[:2]))
	}
	if d == rules.DecisionStand {
		return ChoiceStand
	}
	return ChoiceDraw
}
