package tablesvc

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// callTimeout bounds one call to shoe-svc or wallet-svc.
const callTimeout = 5 * time.Second

// intentGrace is how long an escrow intent left by a failed call waits
// for the client's retry before it is rolled back.
const intentGrace = 30 * time.Second

// newCoup starts the next coup of the table's banker: betting opens with
// the punter on the banker's right (CF-BET-ORDER, CF-BET-BEFORE), the
// gallery after the seated players (CF-GALLERY).
func newCoup(t *table) *coup {
	order := bettingOrder(t)
	t.CoupSeq++
	return &coup{
		ID: ulid.Make().String(), Number: t.CoupSeq,
		BankerID: t.BankerID, Bank: t.stake(), Order: order,
	}
}

// bettingOrder is the punters in betting order: the seated players from
// the banker's right (CF-BET-ORDER), then the gallery (CF-GALLERY).
func bettingOrder(t *table) []string {
	var order []string
	for _, p := range t.around(t.BankerID) {
		if p != t.BankerID { // the banker does not bet
			order = append(order, p)
		}
	}
	return append(order, t.Gallery...)
}

// offerBank offers the bank to the next seat after `after` in turn
// (CF-PASS and CF-LOSE: offered in turn). With after "" it chooses the
// first banker as the house rule first_banker says (CF-FIRST-BANKER):
// seat 1 (acceptance), a seat drawn by lot, or an auction.
func offerBank(c *change, after string) {
	t := c.t
	if tableAbandoned(c) {
		return
	}
	t.State = stateOffering
	t.Offers++
	t.OpenOffer, t.OpenOfferFrom = 0, ""
	switch {
	case after != "":
		t.OfferedID = t.around(after)[0]
	case t.Rules.FirstBanker == int32(tablev1.FirstBanker_FIRST_BANKER_LOT):
		// Source: RULES.md CF-FIRST-BANKER (a) by lot.
		t.OfferedID = t.Seats[lot(len(t.Seats))].PlayerID
	case t.Rules.FirstBanker == int32(tablev1.FirstBanker_FIRST_BANKER_AUCTION):
		// Source: RULES.md CF-FIRST-BANKER (b) by auction.
		openAuction(c)
		return
	default:
		// Source: RULES.md CF-FIRST-BANKER (c) by acceptance, from seat 1.
		t.OfferedID = t.Seats[0].PlayerID
	}
	c.emit("", &eventsv1.BankOffered{PlayerId: t.OfferedID})
}

// offerOpen auctions a passed bank at the bank just held: any seated
// player but the passer may take it (CF-PASS, pass_mode auction).
func offerOpen(c *change, passer string, amount int64) {
	t := c.t
	if tableAbandoned(c) {
		return
	}
	t.State, t.OfferedID = stateOffering, ""
	t.Offers++
	t.OpenOffer, t.OpenOfferFrom = amount, passer
	c.emit("", &eventsv1.BankOffered{Amount: amount})
}

// tableAbandoned counts one more offer of the bank; when the table has offered
// it abandon_after_offers times in a row with no taker, it closes the
// table instead and reports true.
func tableAbandoned(c *change) bool {
	t := c.t
	t.Untaken++
	limit := int(t.Rules.AbandonAfter)
	if limit == 0 {
		limit = 20 // tables stored before the house rule
	}
	if t.Untaken <= limit {
		return false
	}
	closeTable(c, fmt.Sprintf("abandoned: the bank was offered %d times in a row with no taker", limit), "", true)
	return true
}

// closeTable closes the table between coups: the bank, the bids and the
// open coup's (empty) betting are given up, their holds released by the
// saga; seat time is billed; the table is read-only from now on.
func closeTable(c *change, reason, by string, automatic bool) {
	t := c.t
	if t.BankHoldID != "" {
		t.PendingVoids = append(t.PendingVoids, t.BankHoldID)
	}
	for _, b := range t.Bids {
		t.PendingVoids = append(t.PendingVoids, b.HoldID)
	}
	for i := range t.Seats {
		billSeat(t, &t.Seats[i], c.now)
	}
	t.BankerID, t.Bank, t.BankHoldID, t.OfferedID = "", 0, "", ""
	t.OpenOffer, t.OpenOfferFrom, t.Bids, t.AuctionPassed = 0, "", nil, nil
	t.Coup, t.BancoSuivi = nil, ""
	t.State = stateClosed
	t.ShoeToClose = true // its reveal becomes public (SHOE-RESHUFFLE's close)
	c.emit("", &eventsv1.TableClosed{Reason: reason, Abandoned: automatic, By: by})
}

// lot draws a seat index in [0, n) from crypto/rand.
func lot(n int) int {
	i, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0 // crypto/rand does not fail on supported systems
	}
	return int(i.Int64())
}

// openAuction starts an auction of the first bank (CF-FIRST-BANKER).
func openAuction(c *change) {
	t := c.t
	if tableAbandoned(c) {
		return
	}
	t.State, t.OfferedID = stateAuction, ""
	t.Bids, t.AuctionPassed = nil, nil
	t.Auctions++
	c.emit("", &eventsv1.BankAuctionOpened{Round: int32(t.Auctions)})
}

// closeAuction gives the bank to the highest bid, whose hold becomes the
// bank's; with no bid the auction opens again.
func closeAuction(c *change) {
	t := c.t
	if len(t.Bids) == 0 {
		openAuction(c)
		return
	}
	win := t.Bids[len(t.Bids)-1]
	t.Bids, t.AuctionPassed = nil, nil
	takeBank(c, win.PlayerID, win.Amount, win.HoldID)
}

// takeBank makes player the banker with a bank escrowed by hold, and opens
// the betting of his first coup.
func takeBank(c *change, player string, amount int64, hold string) {
	t := c.t
	t.BankerID, t.Bank, t.BankHoldID, t.OfferedID = player, amount, hold, ""
	t.OpenOffer, t.OpenOfferFrom = 0, ""
	t.BancoSuivi = "" // banco suivi is against the banker who won it
	t.BankerCoups, t.Untaken = 0, 0
	c.emit("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: player, Bank: amount})
	t.Coup = newCoup(t)
	t.State = stateBetting
}

// closeBetting ends the betting when the bank is covered, a banco was
// called, or every punter has had his turn (CF-BET-ORDER). A round with no
// bet opens again; bets over the bank wait for the banker (CF-BANK-RAISE).
func closeBetting(c *change) {
	cp := c.t.Coup
	if cp.covered() < cp.Bank && !cp.Banco && cp.Turn < len(cp.Order) {
		return
	}
	if len(cp.Bets) == 0 {
		// A new round, with whoever is seated now (and the gallery).
		cp.Order = bettingOrder(c.t)
		cp.Turn = 0
		cp.Round++
		c.emit(cp.ID, &eventsv1.BettingReopened{})
		return
	}
	if cp.covered() > cp.Bank {
		// Source: RULES.md CF-BANK-RAISE: the banker raises or the excess goes.
		c.t.State = stateRaise
		return
	}
	startDeal(c)
}

// startDeal gives the player's hand to its holder and starts the deal:
// the largest bet, ties to the punter earlier in betting order
// (CF-HAND-HOLDER); the banco caller holds it.
func startDeal(c *change) {
	cp := c.t.Coup
	holder := cp.Bets[0]
	for _, b := range cp.Bets[1:] {
		if b.Amount > holder.Amount { // Source: RULES.md CF-HAND-HOLDER (ties keep the earlier bet)
			holder = b
		}
	}
	cp.HandHolder = holder.PlayerID
	c.t.State = stateDealing
}

// engineCoup is the rules engine's view of a coup.
func engineCoup(cp *coup) (rules.Coup, error) {
	rc := rules.Coup{PlayerStood: cp.PlayerStood, BankerStood: cp.BankerStood, Banco: cp.Banco}
	for _, code := range cp.Player {
		card, err := rules.ParseCard(code)
		if err != nil {
			return rc, err
		}
		rc.Player = append(rc.Player, card)
	}
	for _, code := range cp.Banker {
		card, err := rules.ParseCard(code)
		if err != nil {
			return rc, err
		}
		rc.Banker = append(rc.Banker, card)
	}
	return rc, nil
}

// advance moves a table through every step that needs no decision:
// releasing cancelled holds, dealing, drawing by the tableau, settling,
// opening the next shoe. The caller holds the table's lock. Every call it
// makes is idempotent, so after a crash it is simply called again.
func (s *Service) advance(ctx context.Context, id string) error {
	for {
		again, err := s.advancePass(ctx, id)
		if err != nil {
			s.markStuck(id)
			return err
		}
		if !again {
			s.unstick(id)
			return nil
		}
	}
}

// advancePass runs the automatic steps from the stored table and saves
// once. It reports whether another pass is due: seat fees are charged only
// once they are stored, so that a retried charge is the same request.
func (s *Service) advancePass(ctx context.Context, id string) (again bool, err error) {
	t, err := s.load(id)
	if err != nil {
		return false, err
	}
	c := &change{t: t, now: s.now()}
	if t.coreTable() {
		changed, err := s.advanceCore(ctx, c)
		if changed {
			if serr := s.save(c, "", nil, nil); serr != nil && err == nil {
				err = serr
			}
		}
		return false, err
	}
	changed := false
	for {
		var progressed bool
		switch {
		case len(t.PendingVoids) > 0:
			// Released before fees are charged: a banker who lost the
			// bank pays his seat fee from what comes back to him.
			err = s.releaseHolds(ctx, c)
			progressed = err == nil
		case t.ShoeToClose:
			err = s.closeShoe(ctx, t, true)
			progressed = err == nil
			if progressed {
				t.ShoeToClose = false
			}
		case len(t.PendingFees) > 0 && changed:
			again = true
		case len(t.PendingFees) > 0:
			err = s.chargeFees(ctx, c)
			progressed = err == nil
		case len(t.PendingResizes) > 0:
			err = s.resizeHolds(ctx, c)
			progressed = err == nil
		case t.State == stateDealing:
			progressed, err = s.dealStep(ctx, c)
		case t.State == stateSettling:
			err = s.settle(ctx, c)
			progressed = err == nil
		}
		if err != nil || !progressed {
			break
		}
		changed = true
	}
	// The steps' calls are idempotent, so one save for all of them keeps
	// the coup crash-safe: after a crash they are simply made again and
	// answer the same.
	if changed {
		if serr := s.save(c, "", nil, nil); serr != nil && err == nil {
			err = serr
		}
	}
	return again && err == nil, err
}

// releaseHolds voids the holds of cancelled bets and of a bank given up.
func (s *Service) releaseHolds(ctx context.Context, c *change) error {
	for _, h := range c.t.PendingVoids {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := s.wallet.VoidHold(cctx, &walletv1.VoidHoldRequest{RequestId: "void/" + h, HoldId: h})
		cancel()
		// A hold already resolved needs no release.
		if err != nil && errs.Reason(err) != "HOLD_NOT_OPEN" {
			return fmt.Errorf("void hold %s: %w", h, err)
		}
	}
	c.t.PendingVoids = nil
	return nil
}

// resizeHolds cuts bet holds down to the bets the table decided.
func (s *Service) resizeHolds(ctx context.Context, c *change) error {
	for _, r := range c.t.PendingResizes {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := s.wallet.ResizeHold(cctx, &walletv1.ResizeHoldRequest{RequestId: r.RequestID, HoldId: r.HoldID, Amount: r.Amount})
		cancel()
		if err != nil {
			return fmt.Errorf("cut back hold %s: %w", r.HoldID, err)
		}
	}
	c.t.PendingResizes = nil
	return nil
}

// dealStep applies one step of the coup's hand state machine: a card, a
// recorded choice, the move to DECISION, or the result. It reports whether
// the table changed.
func (s *Service) dealStep(ctx context.Context, c *change) (bool, error) {
	t, cp := c.t, c.t.Coup
	hr := t.Rules.engineRules()
	rc, err := engineCoup(cp)
	if err != nil {
		return false, err
	}
	step, err := rules.NextStep(rc, hr)
	if err != nil {
		return false, fmt.Errorf("coup %s: %w", cp.ID, err)
	}
	switch step.Kind {
	case rules.StepDealPlayer, rules.StepDealBanker:
		hand := eventsv1.Hand_HAND_PLAYER
		if step.Kind == rules.StepDealBanker {
			hand = eventsv1.Hand_HAND_BANKER
		}
		return true, s.dealTo(ctx, c, hand, step.Rule)
	case rules.StepPlayerChoice:
		return s.applyChoice(ctx, c, eventsv1.Hand_HAND_PLAYER, &cp.PlayerChoice, &cp.PlayerStood, cp.HandHolder)
	case rules.StepBankerChoice:
		return s.applyChoice(ctx, c, eventsv1.Hand_HAND_BANKER, &cp.BankerChoice, &cp.BankerStood, cp.BankerID)
	case rules.StepDone:
		s.result(c, rc, step)
		return true, nil
	}
	return false, fmt.Errorf("coup %s: unknown step %v", cp.ID, step.Kind)
}

// applyChoice carries out a recorded draw/stand choice, or puts the table
// in DECISION for the hand's holder when none is recorded yet.
func (s *Service) applyChoice(ctx context.Context, c *change, hand eventsv1.Hand, ch *choice, stood *bool, by string) (bool, error) {
	switch *ch {
	case choiceDraw:
		*ch = choiceNone
		return true, s.dealTo(ctx, c, hand, "")
	case choiceStand:
		*ch = choiceNone
		*stood = true
		return true, nil
	}
	// Wait for the hand's holder: the state changes, the coup goes no further.
	c.t.State = stateDecision
	c.t.Coup.DecisionHand = int32(hand)
	c.t.Coup.DecisionBy = by
	return true, nil
}

// dealTo deals the coup's next card from the shoe to hand. rule names the
// tableau rule when a third card is drawn by rule ("" when by choice).
func (s *Service) dealTo(ctx context.Context, c *change, hand eventsv1.Hand, rule string) error {
	t, cp := c.t, c.t.Coup
	n := cp.CardsDealt + 1
	handName := "player"
	if hand == eventsv1.Hand_HAND_BANKER {
		handName = "banker"
	}
	deal := func() (*shoev1.DealCardResponse, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return s.shoe.DealCard(cctx, &shoev1.DealCardRequest{
			RequestId: cp.ID + "/card/" + strconv.Itoa(n), ShoeId: t.ShoeID, CoupId: cp.ID, Hand: handName,
		})
	}
	resp, err := deal()
	if err != nil && n == 1 && shoeSpent(err) {
		// A coup that has no card yet starts on a fresh shoe when the
		// current one is spent (e.g. after a voided cut-card coup).
		if err = s.nextShoe(ctx, t); err == nil {
			resp, err = deal()
		}
	}
	if err != nil {
		return fmt.Errorf("deal card %d of coup %s: %w", n, cp.ID, err)
	}
	code := resp.GetCard().GetCode()
	card, err := rules.ParseCard(code)
	if err != nil {
		return fmt.Errorf("shoe dealt %q: %w", code, err)
	}
	t.ShoeDealt[card.Rank-1]++
	cards := &cp.Player
	if hand == eventsv1.Hand_HAND_BANKER {
		cards = &cp.Banker
	}
	if len(*cards) == 2 && rule != "" {
		// A third card drawn by the tableau (CF-PLAYER-DRAW, CF-BANKER-DRAW).
		c.emit(cp.ID, &eventsv1.DrawDecided{Hand: hand, Draw: true, Rule: rule})
	}
	*cards = append(*cards, code)
	cp.CardsDealt = n
	failpoint("card-" + strconv.Itoa(n))
	t.CutCardOut = t.CutCardOut || resp.GetCutCardOut()
	total, _ := handTotal(*cards)
	c.emit(cp.ID, &eventsv1.CardDealt{Hand: hand, Card: resp.GetCard(), Position: int32(len(*cards)), Total: int32(total)})
	return nil
}

// handTotal is the HAND-TOTAL of card codes.
func handTotal(codes []string) (int, error) {
	cards := make([]rules.Card, 0, len(codes))
	for _, code := range codes {
		card, err := rules.ParseCard(code)
		if err != nil {
			return 0, err
		}
		cards = append(cards, card)
	}
	return rules.Total(cards), nil
}

// result records the decided coup (CF-RESULT) and moves to SETTLING.
func (s *Service) result(c *change, rc rules.Coup, step rules.Step) {
	cp := c.t.Coup
	pt, bt := rules.Total(rc.Player), rules.Total(rc.Banker)
	if step.Natural {
		// Source: RULES.md CF-NATURAL-PLAYER, CF-NATURAL-BANKER
		if rules.IsNatural(rc.Player) {
			c.emit(cp.ID, &eventsv1.NaturalShown{Hand: eventsv1.Hand_HAND_PLAYER, Total: int32(pt), Cards: cardsProto(cp.Player)})
		}
		if rules.IsNatural(rc.Banker) {
			c.emit(cp.ID, &eventsv1.NaturalShown{Hand: eventsv1.Hand_HAND_BANKER, Total: int32(bt), Cards: cardsProto(cp.Banker)})
		}
	}
	cp.Outcome, cp.Natural = step.Outcome, step.Natural
	c.emit(cp.ID, &eventsv1.CoupResulted{Outcome: eventOutcome(step.Outcome), PlayerTotal: int32(pt), BankerTotal: int32(bt),
		Natural: step.Natural, PlayerCards: cardsProto(cp.Player), BankerCards: cardsProto(cp.Banker)})
	c.t.State = stateSettling
}

func eventOutcome(o rules.Outcome) eventsv1.Outcome { return game.EventOutcome(o) }

// settle moves the coup's money through wallet-svc in one call keyed by
// the coup id, then holds the bank after a win or stand-off (CF-HOLD) or
// takes it from a banker who lost (CF-LOSE), and opens the next shoe when
// the cut card came out during the coup (SHOE-RESHUFFLE).
func (s *Service) settle(ctx context.Context, c *change) error {
	t, cp := c.t, c.t.Coup
	req := &walletv1.SettleCoupRequest{
		CoupId: cp.ID, BankHoldId: t.BankHoldID, Outcome: walletv1.CoupOutcome(eventOutcome(cp.Outcome)),
		CommissionBp: t.Rules.CommissionBP, CommissionRounding: walletv1.CommissionRounding(t.Rules.Rounding),
		// Source: RULES.md CF-BANK-WINS house rules first_coup_exempt, and
		// hourly_fee instead of commission.
		CommissionExempt: (t.Rules.FirstCoupFree && t.BankerCoups == 0) || t.Rules.HourlyFee > 0,
	}
	for _, b := range cp.Bets {
		req.Bets = append(req.Bets, &walletv1.CoupBet{HoldId: b.HoldID, Amount: b.Amount})
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	resp, err := s.wallet.SettleCoup(cctx, req)
	cancel()
	if err != nil {
		return fmt.Errorf("settle coup %s: %w", cp.ID, err)
	}
	failpoint("after-settle")

	if t.CutCardOut {
		// Source: RULES.md SHOE-RESHUFFLE: the cut card's coup is finished; the shoe closes and the next coup uses a new one.
		if err := s.nextShoe(ctx, t); err != nil {
			return err
		}
	}

	cp.Settled, cp.SettleTime = true, time.Now().UTC()
	cp.Winnings, cp.Commission = resp.GetBankerWinnings(), resp.GetCommission()
	cp.BankerNet, cp.NewBank = resp.GetBankerNet(), resp.GetNewBank()
	cp.DecisionHand, cp.DecisionBy = 0, ""
	t.CoupsPlayed++
	t.BankerCoups++
	for i := range t.Seats {
		billSeat(t, &t.Seats[i], s.now())
	}
	t.LastCoup, t.Coup = cp, nil
	c.emit(cp.ID, &eventsv1.CoupSettled{
		Outcome: eventOutcome(cp.Outcome), BankerWinnings: cp.Winnings, Commission: cp.Commission,
		BankerNet: cp.BankerNet, NewBank: cp.NewBank,
	})
	t.BancoSuivi = ""
	if cp.Banco && cp.Outcome == rules.OutcomeBankWins {
		// Source: RULES.md CF-BANCO-PRIORITY: banco suivi for the caller who lost.
		t.BancoSuivi = cp.Bets[0].PlayerID
	}
	if cp.Outcome == rules.OutcomeBankLoses {
		// Source: RULES.md CF-LOSE: the bank is lost and offered in turn.
		prev := t.BankerID
		t.PendingVoids = append(t.PendingVoids, t.BankHoldID)
		t.BankerID, t.Bank, t.BankHoldID = "", 0, ""
		c.emit(cp.ID, &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST, PreviousBankerPlayerId: prev})
		offerBank(c, prev)
		return nil
	}
	// Source: RULES.md CF-HOLD, CF-BANK-SIZE: the bank is the previous bank plus winnings after commission.
	t.Bank = cp.NewBank
	c.emit(cp.ID, &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, BankerPlayerId: t.BankerID, PreviousBankerPlayerId: t.BankerID, Bank: t.Bank})
	t.Coup = newCoup(t)
	t.State = stateBetting
	return nil
}

// trimExcess removes the bets over the stake in reverse order of play
// (CF-BANK-RAISE): the last bets are cut back and bets cut to nothing are
// cancelled. Their escrow is resized (or released) by the saga before the
// deal, each call idempotent, keyed by the coup and the hold: the
// decision is stored first, so no wallet reply can be lost in between.
func (s *Service) trimExcess(c *change) {
	cp := c.t.Coup
	// A raise whose answer was lost may have grown the bank hold: it is
	// brought back to the bank before the deal.
	for _, id := range s.raiseIntents(c.t.ID) {
		c.t.PendingResizes = append(c.t.PendingResizes, resize{RequestID: "reset/" + id, HoldID: c.t.BankHoldID, Amount: c.t.Bank})
		c.intents = append(c.intents, id)
	}
	need := cp.covered() - cp.Bank
	for i := len(cp.Bets) - 1; i >= 0 && need > 0; i-- {
		b := &cp.Bets[i]
		cut := min(need, b.Amount)
		need -= cut
		if cut == b.Amount {
			c.t.PendingVoids = append(c.t.PendingVoids, b.HoldID)
			c.emit(cp.ID, &eventsv1.BetReduced{PlayerId: b.PlayerID})
			cp.Bets = append(cp.Bets[:i:i], cp.Bets[i+1:]...)
			continue
		}
		// Stored with the decision, carried out before the deal (advancePass).
		c.t.PendingResizes = append(c.t.PendingResizes, resize{RequestID: cp.ID + "/trim/" + b.HoldID, HoldID: b.HoldID, Amount: b.Amount - cut})
		b.Amount -= cut
		c.emit(cp.ID, &eventsv1.BetReduced{PlayerId: b.PlayerID, Amount: b.Amount})
	}
	startDeal(c)
}

// billSeat queues the seat time of st not billed yet, under the
// hourly_fee house rule (CF-BANK-WINS), and starts a new period.
func billSeat(t *table, st *seat, now time.Time) {
	if t.Rules.HourlyFee <= 0 {
		return
	}
	secs := int64(now.Sub(st.Since) / time.Second)
	if st.Since.IsZero() || secs <= 0 {
		st.Since = now
		return
	}
	hr := t.Rules.engineRules()
	hr.HourlyFee = t.Rules.HourlyFee
	owed := secs + t.UnpaidSeconds[st.PlayerID]
	if fee, err := rules.HourlyFeeDue(hr, owed); err != nil || fee == 0 {
		return // less than one minor unit so far: the time accrues
	}
	t.Fees++
	t.PendingFees = append(t.PendingFees, seatFee{ID: "table/" + t.ID + "/fee/" + strconv.Itoa(t.Fees), PlayerID: st.PlayerID, Seconds: owed})
	delete(t.UnpaidSeconds, st.PlayerID)
	st.Since = st.Since.Add(time.Duration(secs) * time.Second)
}

// chargeFees charges the stored seat fees. A fee the player's available
// balance cannot pay is recorded unpaid (event seat_fee_charged) rather
// than holding up the table.
func (s *Service) chargeFees(ctx context.Context, c *change) error {
	t := c.t
	for _, f := range t.PendingFees {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		resp, err := s.wallet.ChargeFee(cctx, &walletv1.ChargeFeeRequest{
			RequestId: f.ID, AccountId: "player:" + f.PlayerID, FeeType: walletv1.FeeType_FEE_TYPE_HOURLY,
			HourlyFee: t.Rules.HourlyFee, SeatSeconds: f.Seconds, Reference: "tables/" + t.ID + "/seats",
			Rounding: walletv1.CommissionRounding(t.Rules.Rounding),
		})
		cancel()
		paid := err == nil
		if err != nil && !definite(err) {
			return fmt.Errorf("charge seat fee %s: %w", f.ID, err)
		}
		if err != nil && errs.Reason(err) != reasonInsufficientFunds {
			// Any other refusal (e.g. a player with no account) is recorded
			// unpaid too: a fee never holds up the table.
			s.log.Warn("seat fee refused; recorded unpaid", "table", t.ID, "player", f.PlayerID, "err", err)
		}
		fee := resp.GetFee()
		if !paid {
			hr := t.Rules.engineRules()
			hr.HourlyFee = t.Rules.HourlyFee
			fee, _ = rules.HourlyFeeDue(hr, f.Seconds)
		}
		c.emit("", &eventsv1.SeatFeeCharged{PlayerId: f.PlayerID, SeatSeconds: f.Seconds, Fee: fee, Paid: paid})
		if !paid && t.seatOf(f.PlayerID) != nil {
			// Owed, and charged with his next fee at this table.
			if t.UnpaidSeconds == nil {
				t.UnpaidSeconds = map[string]int64{}
			}
			t.UnpaidSeconds[f.PlayerID] += f.Seconds
		}
	}
	t.PendingFees = nil
	return nil
}

// closeShoe closes the table's shoe (its reveal becomes public); a shoe
// already closed is done, and one that refuses (e.g. a prepared shoe
// before 5/6) is left behind with a warning. Without an answer it returns
// the error, to be retried. Idempotent by a request id of the table and
// the shoe's number; tableClosed forces the close (the table closed).
func (s *Service) closeShoe(ctx context.Context, t *table, tableClosed bool) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := &shoev1.CloseShoeRequest{RequestId: "table/" + t.ID + "/close/" + strconv.Itoa(t.Shoes), ShoeId: t.ShoeID}
	if tableClosed {
		// Before 5/6 are out: forced, with the reason.
		req.RequestId, req.Force, req.Reason = req.RequestId+"/table-closed", true, "the table closed"
	}
	_, err := s.shoe.CloseShoe(cctx, req)
	if err != nil && errs.Reason(err) != "SHOE_CLOSED" {
		if definite(err) {
			s.log.Warn("shoe not closed", "table", t.ID, "shoe", t.ShoeID, "err", err)
			return nil
		}
		return fmt.Errorf("close shoe %s: %w", t.ShoeID, err)
	}
	return nil
}

// nextShoe closes the table's shoe (its reveal becomes public) and opens
// the next one. Both calls are idempotent by request ids derived from the
// table and the shoe's number, so a retried settlement repeats them
// harmlessly.
func (s *Service) nextShoe(ctx context.Context, t *table) error {
	if err := s.closeShoe(ctx, t, false); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := &shoev1.CreateShoeRequest{
		RequestId: "table/" + t.ID + "/shoe/" + strconv.Itoa(t.Shoes+1),
		Decks:     t.Rules.Decks, CutCardFromEnd: t.Rules.CutCardFromEnd, Burn: t.Rules.Burn, Owner: t.ID,
		// The table's part of the shuffle (SHOE-SHUFFLE, commit-reveal).
		ClientSeed: "table/" + t.ID + "/shoe/" + strconv.Itoa(t.Shoes+1),
		Variant:    shoeVariant(t.Variant),
	}
	if t.Rules.CutByPlayer && len(t.Seats) > 0 {
		// Source: RULES.md SHOE-CUT: a player cuts, the next after the banker.
		req.CutterPlayerId = t.around(t.BankerID)[0]
		req.CutTimeLimit = durationpb.New(time.Duration(t.Rules.OfferTimeMS) * time.Millisecond)
	}
	shoe, err := s.shoe.CreateShoe(cctx, req)
	if err != nil {
		return fmt.Errorf("open next shoe: %w", err)
	}
	t.ShoeID, t.Shoes, t.CutCardOut, t.Certification = shoe.GetShoe().GetShoeId(), t.Shoes+1, false, false
	t.ShoeDecks, t.ShoeDealt, t.ShoeVoidHidden = shoe.GetShoe().GetDecks(), [13]int{}, [13]int{}
	return nil
}

// shoeSpent reports whether shoe-svc refused a deal because the shoe can
// deal no new coup.
func shoeSpent(err error) bool {
	switch errs.Reason(err) {
	case "CUT_CARD_OUT", "SHOE_CLOSED", "SHOE_EXHAUSTED":
		return true
	}
	return false
}

// awaitingCut reports whether shoe-svc refused a deal because the shoe
// waits for its cutter (SHOE-CUT): the retry loop deals once it is cut.
func awaitingCut(err error) bool { return errs.Reason(err) == "SHOE_NOT_CUT" }

// logStuck logs why a table could not go on; waiting for a cut is normal.
func (s *Service) logStuck(id string, err error) {
	if awaitingCut(err) {
		s.log.Debug("table waits for the shoe to be cut", "table", id)
		return
	}
	s.log.Warn("table not advanced; will retry", "table", id, "err", err)
}

// markStuck queues a table for the retry loop, noting when it first
// failed to advance.
func (s *Service) markStuck(id string) {
	s.mu.Lock()
	if _, ok := s.stuck[id]; !ok {
		s.stuck[id] = s.now()
	}
	s.mu.Unlock()
}

// retryPass is one pass of the retry loop, tables in id order: it
// advances the tables left mid-coup (and interrupts a coup stuck before
// its result for longer than InterruptAfter), applies the turns whose
// time has run out, and rolls back the escrow intents older than the
// grace period.
func (s *Service) retryPass(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.stuck))
	for id := range s.stuck {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		unlock := s.lock(id)
		if err := s.advance(ctx, id); err != nil && ctx.Err() == nil {
			s.logStuck(id, err)
			s.mu.Lock()
			since, ok := s.stuck[id]
			s.mu.Unlock()
			if ok && s.now().Sub(since) >= s.interruptAfter {
				if ierr := s.interrupt(ctx, id, err); ierr != nil && ctx.Err() == nil {
					s.log.Warn("interrupted coup not voided yet; will retry", "table", id, "err", ierr)
				}
			}
		}
		unlock()
	}
	s.expireDue(ctx)
	if err := s.recoverIntents(ctx, intentGrace); err != nil {
		s.log.Warn("escrow intents", "err", err)
	}
}

// interrupt voids a coup that could not go on for InterruptAfter (shoe-svc
// or wallet-svc unreachable, or refusing) before its result: every bet is
// returned (the player is never worse off than before the coup), its
// cards are discarded, and the banker keeps his bank (as CF-ERROR). A
// coup with a result is never voided: its settlement is retried until
// the wallet takes it. The caller holds the table's lock.
func (s *Service) interrupt(ctx context.Context, id string, cause error) error {
	t, err := s.load(id)
	if err != nil {
		return err
	}
	c := &change{t: t, now: s.now()}
	reason := fmt.Sprintf("interrupted: the coup could not go on for %s (%v)", s.interruptAfter, cause)
	if len(reason) > 500 {
		reason = reason[:500]
	}
	switch {
	case t.coreTable():
		cmd := t.core().interrupt(t, reason)
		if cmd == nil {
			return nil // only a coup before its result is voided
		}
		if err := s.applyCore(ctx, c, cmd); err != nil {
			return err
		}
	case t.Coup == nil || t.State != stateDealing || t.Coup.turned():
		return nil
	default:
		voidCoup(c, reason, auth.Caller{Subject: trust.Table, Role: auth.RoleService})
	}
	if err := s.save(c, "", nil, nil); err != nil {
		return err
	}
	s.log.Warn("coup interrupted and voided; every bet returned", "table", id, "cause", cause)
	s.mu.Lock()
	s.stuck[id] = s.now() // the returns go on from here
	s.mu.Unlock()
	return s.advance(ctx, id)
}

func (s *Service) unstick(id string) {
	s.mu.Lock()
	delete(s.stuck, id)
	s.mu.Unlock()
}

// retryLoop advances, at start and then every RetryInterval, the tables
// left mid-coup by a crash or an unavailable dependency, and applies the
// turns whose time has run out (so a time limit is kept to within one
// RetryInterval).
func (s *Service) retryLoop(ctx context.Context) error {
	if err := s.recoverIntents(ctx, 0); err != nil { // all of them: left by the previous run
		return err
	}
	tick := time.NewTicker(s.retry)
	defer tick.Stop()
	for {
		s.retryPass(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// scanUnfinished queues every table that a previous run left mid-coup or
// with holds to release.
//
// It also gives every pending turn its full time limit again, counted
// from now (the restart): a player is never timed out for the time the
// service was down. The new deadlines are stored (one write per table
// with a pending turn).
func (s *Service) scanUnfinished() error {
	now := s.now()
	var extended []*table
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
			t := new(table)
			if err := json.Unmarshal(v, t); err != nil {
				return fmt.Errorf("table %s: %w", k, err)
			}
			if t.State == stateDealing || t.State == stateSettling || len(t.PendingVoids) > 0 || len(t.PendingResizes) > 0 || t.ShoeToClose || corePending(t) {
				s.markStuck(t.ID)
			}
			if key, ms := waitKey(t); key != "" && key == t.WaitKey {
				if full := now.Add(time.Duration(ms) * time.Millisecond).UTC(); t.Deadline.Before(full) {
					t.Deadline = full
					extended = append(extended, t)
				}
			}
			s.track(t)
			return nil
		})
	})
	if err != nil || len(extended) == 0 {
		return err // nothing to write: no commit at start
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTables)
		for _, t := range extended {
			// Only over the record read above (nothing serves yet, but
			// Recover may be called later).
			var now table
			if err := json.Unmarshal(b.Get([]byte(t.ID)), &now); err != nil || now.EventSeq != t.EventSeq || now.WaitKey != t.WaitKey {
				continue
			}
			v, err := json.Marshal(t)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(t.ID), v); err != nil {
				return err
			}
		}
		return nil
	})
}
