package oracle

import (
	"fmt"
	"math/big"
)

// Rounding is the house rule commission_rounding, numbered as
// chemmy.table.v1.CommissionRounding: how a fraction of a minor unit
// becomes one (CF-BANK-WINS: "down to the minor unit by default").
type Rounding int

// The roundings; 0 (unspecified) is the default, down.
const (
	RoundDown   Rounding = 1 // the fraction is dropped
	RoundHalfUp Rounding = 2 // half a unit and above rounds up
	RoundUp     Rounding = 3 // any fraction rounds up
)

// Share is bp basis points (1/10000) of amount, rounded by r: a
// commission (CF-BANK-WINS), the banque auction's fee (BQ-BANK). Computed
// with big integers: no overflow to think about.
func Share(amount, bp int64, r Rounding) int64 {
	return divide(new(big.Int).Mul(big.NewInt(amount), big.NewInt(bp)), 10000, r)
}

// divide is n/d for n >= 0, rounded by r.
func divide(n *big.Int, d int64, r Rounding) int64 {
	q, m := new(big.Int).QuoRem(n, big.NewInt(d), new(big.Int))
	switch r {
	case RoundUp:
		if m.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
	case RoundHalfUp:
		if new(big.Int).Mul(m, big.NewInt(2)).Cmp(big.NewInt(d)) >= 0 {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// HourlyFee is the seat fee for seconds of seat time at perHour minor
// units an hour (CF-BANK-WINS house rule hourly_fee: charged instead of
// the commission), pro rata, a fraction rounded by the table's
// commission_rounding. (HouseRules.hourly_fee in table.proto says
// "rounded down"; the table sends its commission_rounding with each fee,
// ChargeFeeRequest.rounding, and a fee is the house's take as a
// commission is: the oracle reads it so.)
func HourlyFee(perHour, seconds int64, r Rounding) int64 {
	if perHour <= 0 || seconds <= 0 {
		return 0
	}
	return divide(new(big.Int).Mul(big.NewInt(perHour), big.NewInt(seconds)), 3600, r)
}

// CheminSettlement is the money of a settled chemin de fer coup.
type CheminSettlement struct {
	// Bets is, per bet, what the punter wins (+) or loses (-).
	Bets []int64
	// Winnings is the banker's gross winnings (the bets he took),
	// Commission the house's share of it, Net what the bank gains (or,
	// negative, loses), NewBank the bank after the coup.
	Winnings, Commission, Net, NewBank int64
}

// SettleChemin settles a chemin de fer coup: bank is the banker's whole
// bank, bets what each punter covered (in any order), commissionBP and
// r the house rules commission_bp and commission_rounding; exempt when
// the coup pays no commission (first_coup_exempt for a banker's first
// coup, or a table charging hourly_fee).
//
//   - CF-BET-LIMIT: the bets together are at most the bank.
//   - CF-BANK-WINS: the banker collects every bet and pays the house its
//     commission on them, commissionBP basis points rounded by r.
//   - CF-BANK-LOSES: each punter takes from the bank what he covered.
//   - CF-STANDOFF: every bet is returned.
//   - CF-UNCOVERED, CF-BANK-SIZE: what no bet covered stays in the bank;
//     the next bank is the bank plus the net.
func SettleChemin(bank int64, bets []int64, o Outcome, commissionBP int64, r Rounding, exempt bool) (CheminSettlement, error) {
	var covered int64
	for i, b := range bets {
		if b <= 0 {
			return CheminSettlement{}, fmt.Errorf("oracle: bet %d is %d", i, b)
		}
		covered += b
	}
	if bank <= 0 || covered > bank {
		return CheminSettlement{}, fmt.Errorf("oracle: bets of %d against a bank of %d (CF-BET-LIMIT)", covered, bank)
	}
	st := CheminSettlement{Bets: make([]int64, len(bets))}
	switch o {
	case BankWins:
		st.Winnings = covered
		if !exempt {
			st.Commission = Share(covered, commissionBP, r)
		}
		st.Net = covered - st.Commission
		for i, b := range bets {
			st.Bets[i] = -b
		}
	case BankLoses:
		st.Net = -covered
		copy(st.Bets, bets)
	case StandOff:
	default:
		return CheminSettlement{}, fmt.Errorf("oracle: no outcome to settle")
	}
	st.NewBank = bank + st.Net
	return st, nil
}
