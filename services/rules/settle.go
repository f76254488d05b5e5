package rules

import (
	"fmt"
	"math"
)

// Settlement is the money of one settled coup, in integer minor units.
// Payouts and Lost are indexed like the bets passed to SettleChemin.
type Settlement struct {
	// Outcome is the outcome that was settled.
	Outcome Outcome
	// Payouts is, per bet, what the punter receives from the bank on top
	// of his stake back: the bet itself when the bank loses (even money,
	// CF-BANK-LOSES), 0 otherwise.
	Payouts []int64
	// Lost is, per bet, the stake the punter loses to the banker: the bet
	// itself when the bank wins (CF-BANK-WINS), 0 otherwise.
	Lost []int64
	// BankerWinnings is the banker's gross winnings, the sum of Lost.
	BankerWinnings int64
	// Commission is the house's commission on BankerWinnings:
	// HouseRules.CommissionBP basis points rounded by
	// HouseRules.CommissionRounding (CF-BANK-WINS). 0 unless the bank wins,
	// and 0 when the coup is exempt.
	Commission int64
	// BankerNet is BankerWinnings - Commission - sum(Payouts); negative
	// when the bank loses.
	BankerNet int64
	// NewBank is the bank after the coup, bank + BankerNet (CF-BANK-SIZE).
	// The uncovered part of the bank is always in it (CF-UNCOVERED).
	NewBank int64
	// Uncovered is the part of the bank no bet covered, bank - the bets
	// (CF-UNCOVERED): not at risk in the coup, it never moves.
	Uncovered int64
}

// SettleChemin settles a chemin de fer coup: bank is the banker's bank for
// the coup, bets the punters' bets in any fixed order (each the part of the
// bank it covers), outcome the result of the coup. commissionExempt waives
// the commission (house rules first_coup_exempt or hourly_fee).
//
// Bank wins: every bet is lost to the banker, who pays the commission on
// the total (CF-BANK-WINS). Bank loses: every bet is paid even money from
// the bank (CF-BANK-LOSES). Stand-off: every bet is returned (CF-STANDOFF).
// The part of the bank no bet covers is never at risk (CF-UNCOVERED). An
// empty bets list settles to zero movement.
//
// Errors: bank <= 0 or any bet <= 0 (ErrInvalidAmount); bets totalling more
// than the bank (ErrBetsExceedBank, CF-BET-LIMIT); an undeclared outcome
// (ErrInvalidOutcome); house rules out of range (ErrInvalidHouseRules); an
// amount beyond int64 (ErrOverflow).
func SettleChemin(bank int64, bets []int64, outcome Outcome, hr HouseRules, commissionExempt bool) (Settlement, error) {
	if bank <= 0 {
		return Settlement{}, fmt.Errorf("%w: bank %d is not positive", ErrInvalidAmount, bank)
	}
	if !outcome.Valid() {
		return Settlement{}, fmt.Errorf("%w: %d", ErrInvalidOutcome, int(outcome))
	}
	if err := hr.Validate(); err != nil {
		return Settlement{}, err
	}
	var covered int64
	for i, b := range bets {
		if b <= 0 {
			return Settlement{}, fmt.Errorf("%w: bet %d is %d, not positive", ErrInvalidAmount, i, b)
		}
		if covered > math.MaxInt64-b {
			return Settlement{}, fmt.Errorf("%w: bets total", ErrOverflow)
		}
		covered += b
	}
	if covered > bank {
		// Source: RULES.md CF-BET-LIMIT (the banker never pays beyond the bank)
		return Settlement{}, fmt.Errorf("%w: bets total %d, bank %d", ErrBetsExceedBank, covered, bank)
	}

	s := Settlement{
		Outcome: outcome,
		Payouts: make([]int64, len(bets)),
		Lost:    make([]int64, len(bets)),
	}
	switch outcome {
	case OutcomeBankWins:
		// Source: RULES.md CF-BANK-WINS (the banker collects all bets less commission)
		copy(s.Lost, bets)
		s.BankerWinnings = covered
		if !commissionExempt {
			s.Commission = Commission(covered, hr.CommissionBP, hr.CommissionRounding)
		}
		s.BankerNet = s.BankerWinnings - s.Commission
	case OutcomeBankLoses:
		// Source: RULES.md CF-BANK-LOSES (each punter takes what he covered, even money)
		copy(s.Payouts, bets)
		s.BankerNet = -covered
	case OutcomeStandOff:
		// Source: RULES.md CF-STANDOFF (all bets are returned)
	}
	// Source: RULES.md CF-UNCOVERED (bank - covered stays with the banker in
	// every outcome, so NewBank >= bank - covered >= 0)
	if s.BankerNet > 0 && bank > math.MaxInt64-s.BankerNet {
		return Settlement{}, fmt.Errorf("%w: new bank", ErrOverflow)
	}
	// Source: RULES.md CF-BANK-SIZE (the previous bank plus winnings after commission)
	s.NewBank = bank + s.BankerNet
	s.Uncovered = bank - covered
	return s, nil
}

// BankLimit applies the house betting limit to the bank after a coup
// (CF-BANK-LIMIT): of newBank (minor units), at most limit stays at stake
// (kept) and the excess is set aside, no longer at stake; limit <= 0 is no
// limit (kept is newBank). kept + setAside = newBank.
func BankLimit(newBank, limit int64) (kept, setAside int64) {
	if limit <= 0 || newBank <= limit {
		return newBank, 0
	}
	// Source: RULES.md CF-BANK-LIMIT (the excess is set aside and not at stake)
	return limit, newBank - limit
}
