package rules

import (
	"fmt"
	"math"
)

// PuntoBancoStake is one stake on the layout, in minor units.
type PuntoBancoStake struct {
	Bet    PuntoBancoBet
	Amount int64
}

// StakeResult is the settlement of one stake, in minor units.
type StakeResult struct {
	// Won is the gross winnings paid on top of the stake (0 unless won).
	Won int64
	// Commission is taken from Won (winning bank bets only).
	Commission int64
	// Lost is the stake lost to the house (0 unless lost).
	Lost int64
	// Returned is the stake given back without gain (a push).
	Returned bool
	// Rule is the RULES.md ID that settled the stake.
	Rule string
}

// Net is the bettor's gain: Won - Commission - Lost.
func (r StakeResult) Net() int64 { return r.Won - r.Commission - r.Lost }

// HouseTotals are what the house took from settled stakes against its
// bank, in minor units.
type HouseTotals struct {
	// Commission is the sum of the stakes' commissions (PB-BETS), the
	// house's commission account's.
	Commission int64
	// HouseNet is the stakes lost minus the winnings paid, commission
	// excluded: what the house's bank gained (negative: paid out).
	HouseNet int64
}

// TotalHouse sums settled stakes into the house's totals (PB-BANK: the
// house banks). Errors: a total beyond int64 (ErrOverflow).
func TotalHouse(results []StakeResult) (HouseTotals, error) {
	var t HouseTotals
	for i, r := range results {
		net := r.Lost - r.Won // both >= 0: never overflows
		if (r.Commission > 0 && t.Commission > math.MaxInt64-r.Commission) ||
			(net > 0 && t.HouseNet > math.MaxInt64-net) || (net < 0 && t.HouseNet < math.MinInt64-net) {
			return HouseTotals{}, fmt.Errorf("%w: the totals at stake %d", ErrOverflow, i)
		}
		t.Commission += r.Commission
		t.HouseNet += net
	}
	return t, nil
}

// SettlePuntoBanco settles stakes (minor units) on the result res
// (PB-BETS): the bank bet wins 1 to 1 less the commission of its own
// winnings, the player bet 1 to 1, and both push on a tie; the tie bet
// wins TiePays to 1 and otherwise loses; the bank natural bet wins
// BankNaturalPays to 1 when the bank's first two cards are a natural,
// whatever the outcome; the player pair and bank pair bets win PairPays to
// 1 when that hand's first two cards are a pair, whatever the outcome. The
// house banks (PB-BANK): no bank limits the stakes here.
//
// With pr.NoCommission a winning bank bet pays 1 to 1 with no commission,
// except when res.BankTotal is 6: it then pays half the stake, rounded
// down to the minor unit (the answer to the PB-BANK reading "the rounding
// of a banker win on 6 paying half"; the house keeps the fraction, as with
// the default commission rounding; a stake of 1 wins 0 and gets its stake
// back).
//
// Errors: a stake <= 0 (ErrInvalidAmount); an unknown bet or outcome, a
// BankTotal outside 0..9, or, in the no-commission game, a bank win with
// BankTotal 0, which no coup can give (ErrInvalidOutcome); house rules
// out of range (ErrInvalidHouseRules); a payout beyond int64
// (ErrOverflow).
func SettlePuntoBanco(stakes []PuntoBancoStake, res PuntoBancoResult, pr PuntoBancoRules) ([]StakeResult, error) {
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	if !res.Outcome.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidOutcome, int(res.Outcome))
	}
	if res.BankTotal < 0 || res.BankTotal > 9 {
		return nil, fmt.Errorf("%w: bank total %d outside 0..9", ErrInvalidOutcome, res.BankTotal)
	}
	if pr.NoCommission && res.Outcome == OutcomeBankWins && res.BankTotal == 0 {
		// A bank win needs a total above the player's: a missing bank
		// total would pay a win on 6 in full.
		return nil, fmt.Errorf("%w: the bank wins with a total of 0", ErrInvalidOutcome)
	}
	out := make([]StakeResult, len(stakes))
	for i, s := range stakes {
		if s.Amount <= 0 {
			return nil, fmt.Errorf("%w: stake %d is %d, not positive", ErrInvalidAmount, i, s.Amount)
		}
		r := StakeResult{Rule: RulePBBets}
		even := func(wins bool) {
			switch {
			case res.Outcome == OutcomeStandOff:
				// Source: RULES.md PB-BETS (on a tie, bank and player bets push)
				r.Returned = true
			case wins:
				r.Won = s.Amount
			default:
				r.Lost = s.Amount
			}
		}
		pays := func(wins bool, ratio int64) error {
			if !wins {
				r.Lost = s.Amount
				return nil
			}
			if s.Amount > math.MaxInt64/ratio {
				return fmt.Errorf("%w: stake %d pays %d to 1", ErrOverflow, i, ratio)
			}
			r.Won = s.Amount * ratio
			return nil
		}
		var err error
		switch s.Bet {
		case BetBank:
			even(res.Outcome == OutcomeBankWins)
			switch {
			case !pr.NoCommission:
				// Source: RULES.md PB-BETS (commission on winning bank bets)
				r.Commission = Commission(r.Won, pr.CommissionBP, pr.CommissionRounding)
			case r.Won > 0 && res.BankTotal == 6:
				// Source: RULES.md PB-BANK (reading: in the no-commission game a bank win on 6 pays half, rounded down to the minor unit)
				r.Won = s.Amount / 2
			default:
				// Source: RULES.md PB-BETS (no-commission game, a common extension: 1 to 1, no commission)
			}
		case BetPlayer:
			// Source: RULES.md PB-BETS (player bet, even money)
			even(res.Outcome == OutcomeBankLoses)
		case BetTie:
			// Source: RULES.md PB-BETS (tie bet, a common extension)
			err = pays(res.Outcome == OutcomeStandOff, pr.TiePays)
		case BetBankNatural:
			// Source: RULES.md PB-BETS (the bank gets a natural 8 or 9)
			err = pays(res.BankNatural, pr.BankNaturalPays)
		case BetPlayerPair:
			// Source: RULES.md PB-BETS (player pair, a common extension)
			err = pays(res.PlayerPair, pr.PairPays)
		case BetBankPair:
			// Source: RULES.md PB-BETS (bank pair, a common extension)
			err = pays(res.BankPair, pr.PairPays)
		default:
			return nil, fmt.Errorf("%w: stake %d on bet %d", ErrInvalidOutcome, i, int(s.Bet))
		}
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
