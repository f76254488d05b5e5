package sim

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/chemmy/chemmy/cmd/sim/oracle"
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// Punto banco tables (RULES.md PB-*), played beside the chemin de fer
// ones: the house banks every coup against house:bank (funded by the
// operator), anyone bets on a spot, the first bet of a coup starts the
// betting window, its end deals the coup by the fixed tableau, and the
// result is shown for a pause.

// houseBankFunds is what the operator deposits to house:bank for each
// punto banco table, enough for any run's payouts.
const houseBankFunds = 10_000_000

// fundHouseBank deposits the funds of a punto banco table's bank.
func (s *sim) fundHouseBank() error {
	ctx, cancel := s.as("operator")
	defer cancel()
	if _, err := s.cl.wallets.Deposit(ctx, &walletv1.DepositRequest{RequestId: s.nextID(), AccountId: "house:bank", Amount: houseBankFunds}); err != nil {
		return fmt.Errorf("sim: fund house:bank: %w", err)
	}
	s.houseBank += houseBankFunds
	s.deposited += houseBankFunds
	return nil
}

// randomPBRules draws a punto banco table's house rules: certification
// shoe with real money, every bet and option the table offers drawn.
func (s *sim) randomPBRules() *tablev1.PuntoBancoRules {
	r := s.rng
	pr := &tablev1.PuntoBancoRules{
		Decks: 8, CutCardFromEnd: 14, MinBet: 100, MaxSeats: int32(3 + r.IntN(5)),
		CommissionBp:           proto.Int64([]int64{500, 500, 250, 1000, 0}[r.IntN(5)]),
		CommissionRounding:     tablev1.CommissionRounding(1 + r.IntN(3)),
		NoCommission:           r.IntN(4) == 0,
		BankNaturalBetOff:      r.IntN(4) == 0,
		PairBets:               r.IntN(2) == 0,
		BettingWindowMs:        int32(5000 * (1 + r.IntN(6))),
		ResultPauseMs:          proto.Int32(int32(1000 * r.IntN(6))),
		CertificationRealMoney: true,
	}
	if r.IntN(3) == 0 {
		pr.MaxBet = int64(1000 + 500*r.IntN(4))
	}
	if r.IntN(4) == 0 {
		pr.HouseLimit = int64(2000 + 1000*r.IntN(4))
	}
	return pr
}

func pbRulesBrief(pr *tablev1.PuntoBancoRules) string {
	return fmt.Sprintf("punto banco, seats %d, bets %d..%d, house limit %d, commission %dbp %s, no commission %t, tie %d:1, bank natural %d:1 (off %t), pairs %t %d:1, window %d ms, pause %d ms",
		pr.GetMaxSeats(), pr.GetMinBet(), pr.GetMaxBet(), pr.GetHouseLimit(), pr.GetCommissionBp(), pr.GetCommissionRounding(), pr.GetNoCommission(),
		pr.GetTiePays(), pr.GetBankNaturalPays(), pr.GetBankNaturalBetOff(), pr.GetPairBets(), pr.GetPairPays(), pr.GetBettingWindowMs(), pr.GetResultPauseMs())
}

// choosePB is what happens next at a punto banco table: mostly a bet on
// a spot (now and then one the table does not offer, or out of its
// limits), sometimes a seat taken or left, money in or out, a chemin de
// fer move (refused WRONG_VARIANT), a void or a close.
func (s *sim) choosePB(t *simTable) *action {
	if a, ok := s.interject(t, s.rng.Float64(), [4]float64{0.10, 0.13, 0.15, 0.17}); ok {
		return a
	}
	switch t.view.GetState() {
	case stBetting, stResult:
		p := t.players[s.rng.IntN(len(t.players))]
		spot := tablev1.BetSpot(1 + s.rng.IntN(6))
		amount := int64(100 + 50*s.rng.IntN(30))
		if s.rng.Float64() < 0.05 {
			amount = 50 // below the table minimum
		}
		return s.pbBet(t, p, spot, amount)
	}
	return nil
}

// pbBet is a punto banco PlaceBet.
func (s *sim) pbBet(t *simTable, p string, spot tablev1.BetSpot, amount int64) *action {
	return s.placeBet(t, &tablev1.PlaceBetRequest{RequestId: s.nextID(), TableId: t.id, PlayerId: p, Spot: spot, Amount: amount})
}

// pbRules are a punto banco table's house rules (as resolved: defaults
// filled in) as the oracle takes them.
func pbRules(pr *tablev1.PuntoBancoRules) oracle.PuntoBancoRules {
	return oracle.PuntoBancoRules{
		CommissionBP: pr.GetCommissionBp(), Rounding: roundingOf(pr.GetCommissionRounding()), NoCommission: pr.GetNoCommission(),
		TiePays: pr.GetTiePays(), BankNaturalPays: pr.GetBankNaturalPays(), PairPays: pr.GetPairPays(),
	}
}

// replayPB is replay for a punto banco table: every coup's result from
// its cards by the fixed tableau (PB-TABLEAU), its settlement from the
// result and the stakes (PB-BETS), both by the oracle, each coup ending
// once (an interrupted one before its result), nothing after the close.
// delta collects each player's money won, the house's commissions
// ("house") and what house:bank won ("house:bank").
func (s *sim) replayPB(t *simTable, evs []*eventsv1.TableEvent, delta map[string]int64, interrupts *[]interruptM) {
	book := coupBook{}
	closed := false
	for _, ev := range evs {
		s.checkReadOnly(t, ev, &closed)
		c := book.of(ev)
		switch p := ev.GetPayload().(type) {
		case *eventsv1.TableEvent_BetPlaced:
			c.bets = append(c.bets, betM{player: p.BetPlaced.GetPlayerId(), amount: p.BetPlaced.GetAmount(), spot: p.BetPlaced.GetSpot()})
			c.money = true
		case *eventsv1.TableEvent_CardDealt:
			c.cards++
			c.money = true
			c.dealt = append(c.dealt, dealtM{p.CardDealt.GetHand(), p.CardDealt.GetPosition()})
		case *eventsv1.TableEvent_DrawDecided:
			c.draws = append(c.draws, drawM{ev: p.DrawDecided})
		case *eventsv1.TableEvent_CoupResulted:
			if c.resulted != nil {
				s.violate("coup-ends-once", c.id, "t%d %s has two results", t.n, s.coupName(t, c.id))
			}
			c.resulted = p.CoupResulted
			s.checkTableauPB(t, c)
		case *eventsv1.TableEvent_CoupSettled:
			c.settled++
			s.res.CoupsSettled++
			if c.resulted == nil {
				s.violate("coup-follows-cards", c.id, "t%d %s was settled without a result", t.n, s.coupName(t, c.id))
				continue
			}
			s.checkSettlementPB(t, c, p.CoupSettled, delta)
		case *eventsv1.TableEvent_CoupVoided:
			s.coupVoided(t, c, p.CoupVoided, "", interrupts)
		}
	}
	s.checkCoupsEnd(t, book)
}

// checkTableauPB judges a punto banco coup's cards by the oracle's fixed
// tableau: every card one it called for, none missing, dealt in order,
// no hand asked to choose; the result, natural, totals and pairs its.
func (s *sim) checkTableauPB(t *simTable, c *coupM) {
	bad := func(format string, args ...any) {
		s.violate("coup-follows-cards", c.id, "t%d %s: "+format, append([]any{t.n, s.coupName(t, c.id)}, args...)...)
	}
	res := c.resulted
	P, B := codesOf(res.GetPlayerCards()), codesOf(res.GetBankerCards())
	if c.cards != len(P)+len(B) {
		bad("%d card_dealt events for %d cards in the result", c.cards, len(P)+len(B))
	}
	play, err := oracle.PlayPuntoBanco(P, B)
	if err != nil {
		bad("%v", err)
		return
	}
	c.play = &play
	checkDeal(c, &play, bad)
	for _, d := range c.draws {
		if d.ev.GetByChoice() {
			bad("the %s hand chose (draw=%t) at punto banco, where no hand has an option (PB-TABLEAU)", d.ev.GetHand(), d.ev.GetDraw())
		}
	}
	switch {
	case res.GetOutcome() != eventOutcome(play.Outcome):
		bad("result %s, the oracle makes %s from %v / %v", res.GetOutcome(), play.Outcome, P, B)
	case res.GetNatural() != play.Natural:
		bad("natural %t, the oracle says %t (%v / %v)", res.GetNatural(), play.Natural, P, B)
	case int(res.GetPlayerTotal()) != play.PlayerTotal || int(res.GetBankerTotal()) != play.BankerTotal:
		bad("totals %d / %d, the cards make %d / %d", res.GetPlayerTotal(), res.GetBankerTotal(), play.PlayerTotal, play.BankerTotal)
	case res.GetPlayerPair() != play.PlayerPair || res.GetBankerPair() != play.BankerPair:
		bad("pairs %t / %t, the cards make %t / %t (%v / %v)", res.GetPlayerPair(), res.GetBankerPair(), play.PlayerPair, play.BankerPair, P, B)
	}
}

// checkSettlementPB computes a punto banco coup's money by the oracle
// from its cards and stakes (PB-BETS), compares it with coup_settled (the
// commission, what house:bank won), adds it to delta and notes the
// transfers the ledger must hold for it.
func (s *sim) checkSettlementPB(t *simTable, c *coupM, ev *eventsv1.CoupSettled, delta map[string]int64) {
	bad := func(format string, args ...any) {
		s.violate("settlement-follows-result", c.id, "t%d %s: "+format, append([]any{t.n, s.coupName(t, c.id)}, args...)...)
	}
	if c.play == nil {
		return // coup-follows-cards said why
	}
	stakes := make([]oracle.Stake, len(c.bets))
	for i, b := range c.bets {
		stakes[i] = oracle.Stake{Spot: b.spot, Amount: b.amount}
	}
	results, err := oracle.SettlePuntoBanco(*c.play, stakes, pbRules(t.pb))
	if err != nil {
		bad("the oracle cannot settle %v: %v", stakes, err)
		return
	}
	var houseNet, commission int64
	want := s.wantTransfers(t, c.id)
	for i, r := range results {
		houseNet += r.Lost - r.Won
		commission += r.Commission
		p := c.bets[i].player
		delta[p] += r.Net()
		want.add("player:"+p, "house:bank", "bet_lost", r.Lost)
		want.add("house:bank", "player:"+p, "bet_won", r.Won)
		want.add("player:"+p, "house:commission", "commission", r.Commission)
	}
	if ev.GetOutcome() != eventOutcome(c.play.Outcome) || ev.GetHouseNet() != houseNet || ev.GetCommission() != commission {
		bad("settled %s, house:bank won %d, commission %d; the oracle makes %s, %d, %d (stakes %v, %s)",
			ev.GetOutcome(), ev.GetHouseNet(), ev.GetCommission(), eventOutcome(c.play.Outcome), houseNet, commission, stakes, pbRulesBrief(t.pb))
	}
	delta["house:bank"] += houseNet
	delta["house"] += commission
}
