package sim

import (
	"context"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/chemmy/chemmy/cmd/sim/oracle"
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// Baccarat banque (BQ-*) and the old baccarat (OLD-*) tables, played
// beside the others. Their players act on what the table waits for (a
// bid, a bet in turn or a stake, a decision, the banker's move of top
// cards, the bank offered to a baccarat) or anything else (refused: it
// must change nothing), and time runs out on the rest. Their coups are
// judged at rest by the oracle (oracle.PlayBanque and SettleBanque, with
// the auction's fee; oracle.PlayOld and SettleOld), and their money
// counts in balances-follow-events. The order of their betting and
// deals is not judged (the oracle does not model it), nor their turns'
// time limits (turn-time-limit; a window or an auction runs from its
// first bid or stake), nor when CloseTable may be refused.

// banqueDecks, oldDecks: the shoes of those games (BQ-DECKS, OLD-DECKS).
const (
	banqueDecks = 3
	oldDecks    = 2
)

// core reports whether t is a banque or an old-game table.
func (t *simTable) core() bool { return t.bq != nil || t.old != nil }

// randomBanqueRules draws a banque table's house rules: the house's bank
// now and then, else an auctioned one with or without a commission, the
// banco on both tables, limits and time limits.
func (s *sim) randomBanqueRules() *tablev1.BanqueRules {
	r := s.rng
	br := &tablev1.BanqueRules{
		MaxSeatsPerSide:        int32(2 + r.IntN(3)),
		MinBet:                 100,
		MinimumBank:            int64(500 * (1 + r.IntN(4))),
		CommissionRounding:     tablev1.CommissionRounding(1 + r.IntN(3)),
		AuctionTimeLimitMs:     int32(5000 * (1 + r.IntN(6))),
		BetTimeLimitMs:         int32(5000 * (1 + r.IntN(6))),
		DecisionTimeLimitMs:    int32(5000 * (1 + r.IntN(6))),
		CertificationRealMoney: true,
	}
	if r.IntN(3) == 0 {
		br.HouseBank = true
		if r.IntN(2) == 0 {
			br.HouseLimit = int64(1000 + 500*r.IntN(4))
		}
	} else {
		br.CommissionBp = []int64{0, 0, 250, 500}[r.IntN(4)]
		br.BancoBothTables = r.IntN(3) == 0
	}
	if r.IntN(3) == 0 {
		br.MaxBet = int64(500 + 500*r.IntN(4))
	}
	return br
}

// randomOldRules draws an old-game table's house rules (three or four
// seats, so that its two decks last).
func (s *sim) randomOldRules() *tablev1.OldBaccaratRules {
	r := s.rng
	return &tablev1.OldBaccaratRules{
		MaxSeats:               int32(3 + r.IntN(2)),
		MinimumBank:            int64(500 * (1 + r.IntN(3))),
		MinStake:               100,
		MaxMoveTop:             proto.Int32(int32(r.IntN(11))),
		AuctionWindowMs:        int32(5000 * (1 + r.IntN(6))),
		StakingWindowMs:        int32(5000 * (1 + r.IntN(6))),
		CutTimeLimitMs:         int32(5000 * (1 + r.IntN(3))),
		DecisionTimeLimitMs:    int32(5000 * (1 + r.IntN(6))),
		BankOfferTimeLimitMs:   int32(5000 * (1 + r.IntN(6))),
		StandOnTimeout:         r.IntN(2) == 0,
		CertificationRealMoney: true,
	}
}

func banqueRulesBrief(br *tablev1.BanqueRules) string {
	return fmt.Sprintf("baccarat banque, seats %d a side, bets %d..%d, house bank %t (limit %d), minimum bank %d, commission %dbp %s, banco both tables %t, turns %d/%d/%d ms",
		br.GetMaxSeatsPerSide(), br.GetMinBet(), br.GetMaxBet(), br.GetHouseBank(), br.GetHouseLimit(), br.GetMinimumBank(), br.GetCommissionBp(),
		br.GetCommissionRounding(), br.GetBancoBothTables(), br.GetAuctionTimeLimitMs(), br.GetBetTimeLimitMs(), br.GetDecisionTimeLimitMs())
}

func oldRulesBrief(or *tablev1.OldBaccaratRules) string {
	return fmt.Sprintf("old baccarat, seats %d, minimum bank %d, stakes %d..%d, move top %d, stand on timeout %t, windows %d/%d ms, turns %d/%d/%d ms",
		or.GetMaxSeats(), or.GetMinimumBank(), or.GetMinStake(), or.GetMaxStake(), or.GetMaxMoveTop(), or.GetStandOnTimeout(),
		or.GetAuctionWindowMs(), or.GetStakingWindowMs(), or.GetCutTimeLimitMs(), or.GetDecisionTimeLimitMs(), or.GetBankOfferTimeLimitMs())
}

// minimumBank is a core table's smallest bid for the bank.
func (t *simTable) minimumBank() int64 {
	if t.bq != nil {
		return t.bq.GetMinimumBank()
	}
	return t.old.GetMinimumBank()
}

// chooseCore is what happens next at a banque or old-game table.
func (s *sim) chooseCore(t *simTable) *action {
	if a, ok := s.interject(t, s.rng.Float64(), [4]float64{0.08, 0.11, 0.13, 0.15}); ok {
		return a
	}
	v := t.view
	cp := v.GetCoup()
	seated := seatedOf(v)
	switch v.GetState() {
	case stWaiting:
		return s.misc(t)
	case stAuction:
		if len(seated) == 0 {
			return s.misc(t)
		}
		p := seated[s.rng.IntN(len(seated))]
		if s.rng.Float64() < 0.7 {
			return s.bid(t, p, max(v.GetHighestBid(), t.minimumBank()-50)+int64(50*(1+s.rng.IntN(10))))
		}
		return s.simple(t, p, "DeclineBank")
	case stOffering:
		p := v.GetOfferedPlayerId()
		if p == "" && len(seated) > 0 {
			p = seated[s.rng.IntN(len(seated))]
		}
		if s.rng.Float64() < 0.75 {
			amount := v.GetOpenOfferAmount()
			if amount == 0 {
				amount = t.minimumBank()
			}
			return s.acceptBank(t, p, amount)
		}
		return s.simple(t, p, "DeclineBank")
	case stBetting:
		amount := int64(100 + 50*s.rng.IntN(20))
		if t.bq != nil {
			p := cp.GetTurnPlayerId()
			if p == "" {
				return s.misc(t)
			}
			switch r := s.rng.Float64(); {
			case r < 0.6:
				if u := cp.GetUncovered(); u > 0 && s.rng.IntN(2) == 0 {
					amount = max(1, min(amount, u))
				}
				side := tablev1.BanqueSide(1 + s.rng.IntN(3))
				return s.placeBet(t, &tablev1.PlaceBetRequest{RequestId: s.nextID(), TableId: t.id, PlayerId: p, Amount: amount, Side: side})
			case r < 0.68:
				return s.simple(t, p, "CallBanco")
			}
			return s.simple(t, p, "DeclineBet")
		}
		banker := v.GetBankerPlayerId()
		if banker != "" && s.rng.IntN(6) == 0 {
			return s.moveTop(t, banker)
		}
		if len(seated) == 0 {
			return s.misc(t)
		}
		p := seated[s.rng.IntN(len(seated))]
		if s.rng.IntN(5) == 0 {
			return s.simple(t, p, "DeclineBet")
		}
		if s.rng.IntN(4) != 0 {
			// OLD-STAKE: the bank covers twice the stakes.
			amount = 100 + 50*s.rng.Int64N(max(1, v.GetBank()/200))
		}
		return s.bet(t, p, amount, false)
	case stDecision:
		return s.decide(t, cp.GetDecisionPlayerId(), s.rng.IntN(2) == 0)
	case stDealing:
		if t.old != nil && v.GetBankerPlayerId() != "" && s.rng.IntN(2) == 0 {
			return s.moveTop(t, v.GetBankerPlayerId())
		}
		if s.rng.Float64() < 0.1 {
			return s.void(t)
		}
	}
	return nil
}

// moveTop: the old game's banker announces how many top cards he moves
// to the bottom after the cut (OLD-CUT), now and then more than allowed.
func (s *sim) moveTop(t *simTable, p string) *action {
	n := int32(s.rng.IntN(int(t.old.GetMaxMoveTop()) + 1))
	if s.rng.IntN(10) == 0 {
		n = t.old.GetMaxMoveTop() + 1
	}
	req := &tablev1.MoveTopCardsRequest{RequestId: s.nextID(), TableId: t.id, PlayerId: p, Count: n}
	return &action{t: t, who: p, desc: fmt.Sprintf("MoveTopCards %d", n), call: func(ctx context.Context) (answer, error) {
		return s.cl.tables.MoveTopCards(ctx, req)
	}}
}

// hugeBank stands for the bank of a banque table the house holds: it
// covers every bet (BQ-BANK).
const hugeBank = math.MaxInt64 / 4

// replayCore is replay for a banque or old-game table: every coup's
// hands judged by the oracle from their cards, its settlement from them
// and its bets; the banque auction's fee; each coup ending once (an
// interrupted one before its result); nothing after the close. delta
// collects each player's money won, the house's commissions and fees
// ("house") and what house:bank won ("house:bank").
func (s *sim) replayCore(t *simTable, evs []*eventsv1.TableEvent, delta map[string]int64, interrupts *[]interruptM) {
	book := coupBook{}
	closed := false
	var banker string
	var bank int64
	for _, ev := range evs {
		s.checkReadOnly(t, ev, &closed)
		c := book.of(ev)
		name := func() string { return s.coupName(t, ev.GetCoupId()) }
		switch p := ev.GetPayload().(type) {
		case *eventsv1.TableEvent_BankChanged:
			switch p.BankChanged.GetReason() {
			case eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED:
				banker, bank = p.BankChanged.GetBankerPlayerId(), p.BankChanged.GetBank()
				if t.bq != nil {
					// BQ-BANK: the highest bidder pays the house 2.5% of his bid.
					fee := oracle.AuctionFee(bank, roundingOf(t.bq.GetCommissionRounding()))
					delta[banker] -= fee
					delta["house"] += fee
				}
			case eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD, eventsv1.BankChangeReason_BANK_CHANGE_REASON_RAISED:
				bank = p.BankChanged.GetBank()
			default:
				banker, bank = "", 0
			}
		case *eventsv1.TableEvent_BetPlaced:
			c.bets = append(c.bets, betM{player: p.BetPlaced.GetPlayerId(), amount: p.BetPlaced.GetAmount(), spot: p.BetPlaced.GetSpot()})
			c.money = true
		case *eventsv1.TableEvent_BancoCalled:
			// BQ-BETS: the whole bank, à cheval.
			c.bets = []betM{{player: p.BancoCalled.GetPlayerId(), amount: p.BancoCalled.GetAmount(), spot: oracle.SideCheval}}
			c.banco, c.money = true, true
		case *eventsv1.TableEvent_CardDealt:
			c.cards++
			c.money = true
		case *eventsv1.TableEvent_CoupResulted:
			if c.resulted != nil {
				s.violate("coup-ends-once", c.id, "t%d %s has two results", t.n, name())
			}
			c.resulted = p.CoupResulted
			s.checkCoreResult(t, c)
		case *eventsv1.TableEvent_CoupSettled:
			c.settled++
			s.res.CoupsSettled++
			if c.resulted == nil {
				s.violate("coup-follows-cards", c.id, "t%d %s was settled without a result", t.n, name())
				continue
			}
			// The bank goes on at the oracle's new bank (the old game
			// writes no bank_changed for it: coup_settled's new_bank says it).
			bank = s.checkCoreSettlement(t, c, p.CoupSettled, banker, bank, delta)
		case *eventsv1.TableEvent_CoupVoided:
			s.coupVoided(t, c, p.CoupVoided, banker, interrupts)
		}
	}
	s.checkCoupsEnd(t, book)
}

// checkCoreResult judges a banque or old-game coup's hands by the
// oracle: every card dealt is in the result, each hand's total and
// outcome against the bank the oracle's from the cards.
func (s *sim) checkCoreResult(t *simTable, c *coupM) {
	bad := func(format string, args ...any) {
		s.violate("coup-follows-cards", c.id, "t%d %s: "+format, append([]any{t.n, s.coupName(t, c.id)}, args...)...)
	}
	res := c.resulted
	banker := codesOf(res.GetBankerCards())
	n := len(banker)
	for _, h := range res.GetHands() {
		n += len(h.GetCards())
	}
	if c.cards != n {
		bad("%d card_dealt events for %d cards in the result", c.cards, n)
	}
	if t.bq != nil {
		var right, left []string
		for _, h := range res.GetHands() {
			switch h.GetHand() {
			case eventsv1.Hand_HAND_RIGHT:
				right = codesOf(h.GetCards())
			case eventsv1.Hand_HAND_LEFT:
				left = codesOf(h.GetCards())
			}
		}
		play, err := oracle.PlayBanque(right, left, banker)
		if err != nil {
			bad("%v", err)
			return
		}
		c.banque = &play
		if int(res.GetBankerTotal()) != play.BankerTotal {
			bad("the banker's total %d, the cards %v make %d", res.GetBankerTotal(), banker, play.BankerTotal)
		}
		for _, h := range res.GetHands() {
			want := play.Right
			if h.GetHand() == eventsv1.Hand_HAND_LEFT {
				want = play.Left
			}
			if int(h.GetTotal()) != want.Total || h.GetOutcome() != eventOutcome(want.Outcome) {
				bad("the %s hand %v: %d, %s; the oracle makes %d, %s (the bank %v)", h.GetHand(), codesOf(h.GetCards()), h.GetTotal(), h.GetOutcome(),
					want.Total, eventOutcome(want.Outcome), banker)
			}
		}
		return
	}
	var punters [][]string
	for _, h := range res.GetHands() {
		punters = append(punters, codesOf(h.GetCards()))
	}
	play, err := oracle.PlayOld(banker, punters)
	if err != nil {
		bad("%v", err)
		return
	}
	c.old = &play
	if int(res.GetBankerTotal()) != play.BankerPoints {
		bad("the banker's points %d, the cards %v make %d", res.GetBankerTotal(), banker, play.BankerPoints)
	}
	for i, h := range res.GetHands() {
		want := play.Punters[i]
		outcome := eventOutcome(want.Outcome)
		if want.Split && s.cfg.Avoid.SplitOutcome && h.GetOutcome() == eventsv1.Outcome_OUTCOME_BANK_LOSES {
			// Failure 11: the table calls a split hand a win (its net is
			// positive); the money is judged all the same.
			outcome = h.GetOutcome()
		}
		if int(h.GetTotal()) != want.Points || h.GetOutcome() != outcome {
			bad("%s's hand %v: %d, %s; the oracle makes %d, %s (the banker %v)", h.GetHolderPlayerId(), codesOf(h.GetCards()), h.GetTotal(), h.GetOutcome(),
				want.Points, eventOutcome(want.Outcome), banker)
		}
	}
}

// checkCoreSettlement computes a banque or old-game coup's money by the
// oracle from its hands and bets, compares it with coup_settled, adds it
// to delta and returns the bank after it (coup_settled's when the oracle
// cannot tell).
func (s *sim) checkCoreSettlement(t *simTable, c *coupM, ev *eventsv1.CoupSettled, banker string, bank int64, delta map[string]int64) int64 {
	bad := func(format string, args ...any) {
		s.violate("settlement-follows-result", c.id, "t%d %s: "+format, append([]any{t.n, s.coupName(t, c.id)}, args...)...)
	}
	if t.bq != nil {
		if c.banque == nil {
			return ev.GetNewBank() // coup-follows-cards said why
		}
		house := t.bq.GetHouseBank()
		if house {
			bank = hugeBank
		}
		bets := make([]oracle.BanqueBet, len(c.bets))
		for i, b := range c.bets {
			bets[i] = oracle.BanqueBet{Side: b.spot, Amount: b.amount}
		}
		st, err := oracle.SettleBanque(bank, *c.banque, bets, t.bq.GetCommissionBp(), roundingOf(t.bq.GetCommissionRounding()))
		if err != nil {
			bad("the oracle cannot settle bank %d, bets %v: %v", bank, bets, err)
			return ev.GetNewBank()
		}
		wantBank := st.NewBank
		if house {
			wantBank = 0
		}
		if ev.GetBankerWinnings() != st.Net || ev.GetCommission() != st.Commission || ev.GetBankerNet() != st.Net-st.Commission ||
			ev.GetNewBank() != wantBank || (house && ev.GetHouseNet() != st.Net) {
			bad("winnings %d, commission %d, net %d, new bank %d, house net %d; the oracle makes %d, %d, %d, %d (bank %d, bets %v, %s)",
				ev.GetBankerWinnings(), ev.GetCommission(), ev.GetBankerNet(), ev.GetNewBank(), ev.GetHouseNet(),
				st.Net, st.Commission, st.Net-st.Commission, wantBank, bank, bets, banqueRulesBrief(t.bq))
		}
		for i, b := range c.bets {
			delta[b.player] += st.Bets[i]
		}
		if house {
			delta["house:bank"] += st.Net
		} else {
			delta[banker] += st.Net - st.Commission
		}
		delta["house"] += st.Commission
		return wantBank
	}
	if c.old == nil {
		return ev.GetNewBank()
	}
	res := c.resulted
	stake := map[string]int64{}
	for _, b := range c.bets {
		stake[b.player] += b.amount
	}
	stakes := make([]int64, len(res.GetHands()))
	for i, h := range res.GetHands() {
		stakes[i] = stake[h.GetHolderPlayerId()]
	}
	nets, bankerNet, err := oracle.SettleOld(*c.old, stakes)
	if err != nil {
		bad("the oracle cannot settle stakes %v: %v", stakes, err)
		return ev.GetNewBank()
	}
	if ev.GetBankerNet() != bankerNet || ev.GetNewBank() != bank+bankerNet {
		bad("banker net %d, new bank %d; the oracle makes %d, %d (bank %d, stakes %v)", ev.GetBankerNet(), ev.GetNewBank(), bankerNet, bank+bankerNet, bank, stakes)
	}
	for i, h := range res.GetHands() {
		delta[h.GetHolderPlayerId()] += nets[i]
	}
	delta[banker] += bankerNet
	return bank + bankerNet
}
