package sim

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
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

// pbEngineRules are a punto banco table's house rules as the rules
// engine takes them.
func pbEngineRules(pr *tablev1.PuntoBancoRules) rules.PuntoBancoRules {
	return rules.PuntoBancoRules{
		CommissionBP: pr.GetCommissionBp(), CommissionRounding: roundingOf(pr.GetCommissionRounding()),
		TiePays: pr.GetTiePays(), BankNaturalPays: pr.GetBankNaturalPays(), NoCommission: pr.GetNoCommission(), PairPays: pr.GetPairPays(),
	}
}

// pbBets are the punto banco bets by their bet_placed spot.
var pbBets = func() map[string]rules.PuntoBancoBet {
	out := map[string]rules.PuntoBancoBet{}
	for b := rules.BetBank; b <= rules.BetBankPair; b++ {
		out[b.String()] = b
	}
	return out
}()

// replayPB is replay for a punto banco table: every coup's result from
// its cards by the fixed tableau (PB-TABLEAU), its settlement from the
// result and the stakes (PB-BETS), each coup ending once (an interrupted
// one before its result), nothing after the close. delta collects each
// player's money won, the house's commissions ("house") and what
// house:bank won ("house:bank").
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

// checkTableauPB plays a punto banco coup's cards through the fixed
// tableau: every card one it called for, none missing, the result its.
func (s *sim) checkTableauPB(t *simTable, c *coupM) {
	bad := func(format string, args ...any) {
		s.violate("coup-follows-cards", c.id, "t%d %s: "+format, append([]any{t.n, s.coupName(t, c.id)}, args...)...)
	}
	P, errP := cardsOf(c.resulted.GetPlayerCards())
	B, errB := cardsOf(c.resulted.GetBankerCards())
	if errP != nil || errB != nil {
		bad("cards: %v %v", errP, errB)
		return
	}
	if c.cards != len(P)+len(B) {
		bad("%d card_dealt events for %d cards in the result", c.cards, len(P)+len(B))
	}
	var rc rules.Coup
	for range 8 {
		step, err := rules.NextStepPuntoBanco(rc)
		if err != nil {
			bad("the tableau refuses the cards %v / %v: %v", P, B, err)
			return
		}
		switch step.Kind {
		case rules.StepDealPlayer:
			if len(rc.Player) == len(P) {
				bad("the tableau deals the player a card he did not get (%v / %v)", P, B)
				return
			}
			rc.Player = P[:len(rc.Player)+1]
		case rules.StepDealBanker:
			if len(rc.Banker) == len(B) {
				bad("the tableau deals the bank a card it did not get (%v / %v)", P, B)
				return
			}
			rc.Banker = B[:len(rc.Banker)+1]
		case rules.StepDone:
			res := c.resulted
			switch {
			case len(rc.Player) != len(P) || len(rc.Banker) != len(B):
				bad("cards beyond the tableau: %v / %v, the coup was over at %v / %v", P, B, rc.Player, rc.Banker)
			case res.GetOutcome() != game.EventOutcome(step.Outcome):
				bad("result %s, the tableau makes %s from %v / %v", res.GetOutcome(), game.EventOutcome(step.Outcome), P, B)
			case res.GetNatural() != step.Natural:
				bad("natural %t, the tableau says %t", res.GetNatural(), step.Natural)
			case int(res.GetPlayerTotal()) != rules.Total(P) || int(res.GetBankerTotal()) != rules.Total(B):
				bad("totals %d / %d, the cards make %d / %d", res.GetPlayerTotal(), res.GetBankerTotal(), rules.Total(P), rules.Total(B))
			}
			return
		default:
			bad("the fixed tableau asked for a choice (%v)", step.Kind)
			return
		}
	}
	bad("the tableau did not finish")
}

// checkSettlementPB computes a punto banco coup's money by the rules
// engine from its cards and stakes (PB-BETS), compares it with
// coup_settled (the commission, what house:bank won), and adds it to
// delta.
func (s *sim) checkSettlementPB(t *simTable, c *coupM, ev *eventsv1.CoupSettled, delta map[string]int64) {
	bad := func(format string, args ...any) {
		s.violate("settlement-follows-result", c.id, "t%d %s: "+format, append([]any{t.n, s.coupName(t, c.id)}, args...)...)
	}
	P, _ := cardsOf(c.resulted.GetPlayerCards())
	B, _ := cardsOf(c.resulted.GetBankerCards())
	res, err := rules.ResultPuntoBanco(rules.Coup{Player: P, Banker: B})
	if err != nil {
		bad("no result from %v / %v: %v", P, B, err)
		return
	}
	stakes := make([]rules.PuntoBancoStake, len(c.bets))
	for i, b := range c.bets {
		stakes[i] = rules.PuntoBancoStake{Bet: pbBets[b.spot], Amount: b.amount}
	}
	results, err := rules.SettlePuntoBanco(stakes, res, pbEngineRules(t.pb))
	if err != nil {
		bad("the rules engine cannot settle %v: %v", stakes, err)
		return
	}
	var houseNet, commission int64
	for i, r := range results {
		houseNet += r.Lost - r.Won
		commission += r.Commission
		delta[c.bets[i].player] += r.Net()
	}
	if ev.GetOutcome() != c.resulted.GetOutcome() || ev.GetHouseNet() != houseNet || ev.GetCommission() != commission {
		bad("settled %s, house:bank won %d, commission %d; the rules make %s, %d, %d (stakes %v)",
			ev.GetOutcome(), ev.GetHouseNet(), ev.GetCommission(), c.resulted.GetOutcome(), houseNet, commission, stakes)
	}
	delta["house:bank"] += houseNet
	delta["house"] += commission
}
