package crosscheck

import (
	"fmt"
	"testing"

	"github.com/chemmy/chemmy/cmd/sim/oracle"
	"github.com/chemmy/chemmy/services/rules"
)

func cards(t *testing.T, codes []string) []rules.Card {
	t.Helper()
	out := make([]rules.Card, len(codes))
	for i, c := range codes {
		card, err := rules.ParseCard(c)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = card
	}
	return out
}

var cells = map[rules.Decision]oracle.Cell{rules.DecisionDraw: oracle.Draw, rules.DecisionStand: oracle.Stand, rules.DecisionOption: oracle.Option}

var outcomes = map[rules.Outcome]oracle.Outcome{rules.OutcomeBankWins: oracle.BankWins, rules.OutcomeBankLoses: oracle.BankLoses, rules.OutcomeStandOff: oracle.StandOff}

var roundings = map[oracle.Rounding]rules.Rounding{oracle.RoundDown: rules.RoundDown, oracle.RoundHalfUp: rules.RoundHalfUp, oracle.RoundUp: rules.RoundUp}

// TestTableau: every cell of CF-PLAYER-DRAW and CF-BANKER-DRAW, with
// each setting of the two option house rules.
func TestTableau(t *testing.T) {
	for total := 0; total <= 7; total++ {
		if got, want := cells[rules.PlayerDecision(total)], oracle.PlayerCell(total); got != want {
			t.Errorf("player on %d: the engine says %v, the oracle %v", total, got, want)
		}
	}
	for _, opts := range []oracle.CheminRules{{}, {Option3vs9: true}, {Option5vs4: true}, {Option3vs9: true, Option5vs4: true}} {
		hr := rules.HouseRules{BankerOption3vs9: opts.Option3vs9, BankerOption5vs4: opts.Option5vs4}
		for _, third := range []string{"", "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "KS"} {
			var card *rules.Card
			if third != "" {
				card = &cards(t, []string{third})[0]
			}
			for total := 0; total <= 7; total++ {
				want, err := oracle.BankerCell(total, third, opts)
				if got := cells[rules.BankerDecision(total, card, hr)]; err != nil || got != want {
					t.Errorf("banker on %d against %q, options %+v: the engine says %v, the oracle %v (%v)", total, third, opts, got, want, err)
				}
			}
		}
	}
	for p := 0; p <= 9; p++ {
		for b := 0; b <= 9; b++ {
			want := oracle.BankWins
			switch {
			case p > b:
				want = oracle.BankLoses
			case p == b:
				want = oracle.StandOff
			}
			if got := outcomes[rules.Compare(p, b)]; got != want {
				t.Errorf("%d against %d: the engine says %v, CF-RESULT %v", p, b, got, want)
			}
		}
	}
}

// pbKey is what a punto banco settlement depends on.
type pbKey struct {
	outcome                           oracle.Outcome
	bankTotal                         int
	bankNatural, playerPair, bankPair bool
}

// TestPuntoBancoDeals: every punto banco deal (the ranks of the first
// four cards, the values of the third cards the engine deals) plays as
// the oracle says; every result settles every spot as the oracle does,
// under several house rules.
func TestPuntoBancoDeals(t *testing.T) {
	ranks, values := "A23456789TJQK", "A23456789T"
	step := 1
	if testing.Short() {
		step = 7
	}
	plays := map[pbKey][2][]string{}
	n := 0
	var deal func(player, banker []string)
	deal = func(player, banker []string) {
		c := rules.Coup{Player: cards(t, player), Banker: cards(t, banker)}
		s, err := rules.NextStepPuntoBanco(c)
		if err != nil {
			t.Fatalf("%v / %v: %v", player, banker, err)
		}
		switch s.Kind {
		case rules.StepDealPlayer:
			for _, v := range values {
				deal(append(player[:len(player):len(player)], string(v)+"H"), banker)
			}
			return
		case rules.StepDealBanker:
			for _, v := range values {
				deal(player, append(banker[:len(banker):len(banker)], string(v)+"S"))
			}
			return
		case rules.StepDone:
		default:
			t.Fatalf("%v / %v: punto banco waits for %v", player, banker, s.Kind)
		}
		n++
		res, err := rules.ResultPuntoBanco(c)
		p, perr := oracle.PlayPuntoBanco(player, banker)
		switch {
		case err != nil || perr != nil:
			t.Errorf("%v / %v: engine %v, oracle %v", player, banker, err, perr)
		case outcomes[res.Outcome] != p.Outcome || s.Natural != p.Natural || res.BankTotal != p.BankerTotal ||
			res.BankNatural != p.BankNatural || res.PlayerPair != p.PlayerPair || res.BankPair != p.BankerPair:
			t.Errorf("%v / %v: the engine says %+v (natural %t), the oracle %+v", player, banker, res, s.Natural, p)
		default:
			k := pbKey{p.Outcome, p.BankerTotal, p.BankNatural, p.PlayerPair, p.BankerPair}
			if _, ok := plays[k]; !ok {
				plays[k] = [2][]string{player, banker}
			}
		}
	}
	i := 0
	for _, p1 := range ranks {
		for _, b1 := range ranks {
			for _, p2 := range ranks {
				for _, b2 := range ranks {
					if i++; i%step == 0 {
						deal([]string{string(p1) + "C", string(p2) + "D"}, []string{string(b1) + "C", string(b2) + "D"})
					}
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	spots := []rules.PuntoBancoBet{rules.BetBank, rules.BetPlayer, rules.BetTie, rules.BetBankNatural, rules.BetPlayerPair, rules.BetBankPair}
	for _, r := range []oracle.PuntoBancoRules{
		{CommissionBP: 500, Rounding: oracle.RoundDown, TiePays: 8, BankNaturalPays: 9, PairPays: 11},
		{CommissionBP: 500, Rounding: oracle.RoundHalfUp, TiePays: 9, BankNaturalPays: 8, PairPays: 12},
		{CommissionBP: 250, Rounding: oracle.RoundUp, TiePays: 8, BankNaturalPays: 9, PairPays: 11},
		{CommissionBP: 500, Rounding: oracle.RoundDown, NoCommission: true, TiePays: 8, BankNaturalPays: 9, PairPays: 11},
	} {
		pr := rules.PuntoBancoRules{CommissionBP: r.CommissionBP, CommissionRounding: roundings[r.Rounding], NoCommission: r.NoCommission,
			TiePays: r.TiePays, BankNaturalPays: r.BankNaturalPays, PairPays: r.PairPays}
		for _, hands := range plays {
			c := rules.Coup{Player: cards(t, hands[0]), Banker: cards(t, hands[1])}
			res, _ := rules.ResultPuntoBanco(c)
			p, _ := oracle.PlayPuntoBanco(hands[0], hands[1])
			for _, amount := range []int64{1, 150, 1350, 2999} {
				var stakes []rules.PuntoBancoStake
				var ostakes []oracle.Stake
				for _, b := range spots {
					stakes = append(stakes, rules.PuntoBancoStake{Bet: b, Amount: amount})
					ostakes = append(ostakes, oracle.Stake{Spot: b.String(), Amount: amount})
				}
				got, err := rules.SettlePuntoBanco(stakes, res, pr)
				want, oerr := oracle.SettlePuntoBanco(p, ostakes, r)
				if err != nil || oerr != nil {
					t.Fatalf("%v: engine %v, oracle %v", hands, err, oerr)
				}
				for i := range spots {
					if g := got[i]; g.Won != want[i].Won || g.Commission != want[i].Commission || g.Lost != want[i].Lost {
						t.Errorf("%v / %v (%s), %d on %s, %+v: the engine pays %+v, the oracle %+v", hands[0], hands[1], p.Outcome, amount, spots[i], r, g, want[i])
					}
				}
			}
		}
	}
	t.Logf("%d deals, %d kinds of result", n, len(plays))
}

// TestCheminSettlement: a grid of banks, bets, outcomes, commissions and
// roundings, and of hourly fees.
func TestCheminSettlement(t *testing.T) {
	for _, bank := range []int64{100, 1000, 1950, 3803} {
		for _, bets := range [][]int64{{100}, {33, 67}, {300, 300, 400}, {1}, {99, 1}} {
			for _, o := range []oracle.Outcome{oracle.BankWins, oracle.BankLoses, oracle.StandOff} {
				for _, bp := range []int64{0, 1, 250, 500, 1000, 10000} {
					for or, rr := range roundings {
						for _, exempt := range []bool{false, true} {
							var ro rules.Outcome
							for k, v := range outcomes {
								if v == o {
									ro = k
								}
							}
							got, err := rules.SettleChemin(bank, bets, ro, rules.HouseRules{CommissionBP: bp, CommissionRounding: rr}, exempt)
							want, oerr := oracle.SettleChemin(bank, bets, o, bp, or, exempt)
							name := fmt.Sprintf("bank %d, bets %v, %v, %d bp, rounding %d, exempt %t", bank, bets, o, bp, or, exempt)
							if (err != nil) != (oerr != nil) {
								t.Fatalf("%s: engine %v, oracle %v", name, err, oerr)
							}
							if err != nil {
								continue // both refuse: CF-BET-LIMIT
							}
							if got.BankerWinnings != want.Winnings || got.Commission != want.Commission || got.BankerNet != want.Net || got.NewBank != want.NewBank {
								t.Errorf("%s: the engine makes %+v, the oracle %+v", name, got, want)
							}
							for i := range bets {
								if got.Payouts[i]-got.Lost[i] != want.Bets[i] {
									t.Errorf("%s: bet %d: the engine %d, the oracle %d", name, i, got.Payouts[i]-got.Lost[i], want.Bets[i])
								}
							}
						}
					}
				}
			}
		}
	}
	for or, rr := range roundings {
		for perHour := int64(60); perHour <= 1200; perHour += 60 {
			for secs := int64(0); secs <= 7300; secs += 7 {
				got, err := rules.HourlyFeeDue(rules.HouseRules{HourlyFee: perHour, CommissionRounding: rr}, secs)
				if want := oracle.HourlyFee(perHour, secs, or); err != nil || got != want {
					t.Errorf("%d an hour for %d s, rounding %d: the engine %d (%v), the oracle %d", perHour, secs, or, got, err, want)
				}
			}
		}
	}
}
