package rules

import (
	"fmt"
	"math"
)

// BanqueBet is one punter's bet against the bank (BQ-BETS).
type BanqueBet struct {
	// On is TableRight, TableLeft or TableBoth (à cheval).
	On Table
	// Amount is the stake in minor units.
	Amount int64
}

// BanqueSettlement is the money of a settled banque coup.
type BanqueSettlement struct {
	// Bets are the bets' results, indexed like the bets.
	Bets []StakeResult
	// BankerNet is the banker's gain: the stakes lost minus the amounts
	// paid.
	BankerNet int64
	// NewBank is bank + BankerNet (BQ-BANK: he keeps the bank until it is
	// exhausted or he passes).
	NewBank int64
}

// SettleBanque settles the bets of a banque coup with the tables' results
// (from the bank's side). A bet on one table wins even money when the bank
// loses to that table, loses when the bank beats it, and is returned on a
// stand-off (BQ-BETS, CF-STANDOFF). An à cheval bet loses only if the bank
// beats both hands and wins only if the bank loses to both; otherwise it is
// returned (BQ-CHEVAL). The bank pays no commission (BQ-BANK: the house
// took its fee at the auction).
//
// Errors: bank or a bet <= 0 (ErrInvalidAmount), bets totalling more than
// the bank (ErrBetsExceedBank: the banker risks only what is covered), an
// undeclared outcome or table (ErrInvalidOutcome), overflow (ErrOverflow).
func SettleBanque(bank int64, bets []BanqueBet, right, left Outcome) (BanqueSettlement, error) {
	if bank <= 0 {
		return BanqueSettlement{}, fmt.Errorf("%w: bank %d is not positive", ErrInvalidAmount, bank)
	}
	if !right.Valid() || !left.Valid() {
		return BanqueSettlement{}, fmt.Errorf("%w: right %d, left %d", ErrInvalidOutcome, int(right), int(left))
	}
	var covered int64
	for i, b := range bets {
		if b.Amount <= 0 {
			return BanqueSettlement{}, fmt.Errorf("%w: bet %d is %d, not positive", ErrInvalidAmount, i, b.Amount)
		}
		if b.On < TableRight || b.On > TableBoth {
			return BanqueSettlement{}, fmt.Errorf("%w: bet %d on table %d", ErrInvalidOutcome, i, int(b.On))
		}
		if covered > math.MaxInt64-b.Amount {
			return BanqueSettlement{}, fmt.Errorf("%w: bets total", ErrOverflow)
		}
		covered += b.Amount
	}
	if covered > bank {
		// Source: RULES.md BQ-BANK (he does not risk the part no bet covers), CF-BET-LIMIT
		return BanqueSettlement{}, fmt.Errorf("%w: bets total %d, bank %d", ErrBetsExceedBank, covered, bank)
	}
	s := BanqueSettlement{Bets: make([]StakeResult, len(bets))}
	for i, b := range bets {
		r := StakeResult{Rule: RuleBQBets}
		o := right
		switch b.On {
		case TableLeft:
			o = left
		case TableBoth:
			// Source: RULES.md BQ-CHEVAL (loses only if the bank beats both
			// hands, wins only if the bank loses to both, else returned)
			r.Rule = RuleBQCheval
			switch {
			case right == OutcomeBankWins && left == OutcomeBankWins:
				o = OutcomeBankWins
			case right == OutcomeBankLoses && left == OutcomeBankLoses:
				o = OutcomeBankLoses
			default:
				o = OutcomeStandOff
			}
		}
		switch o {
		case OutcomeBankWins:
			r.Lost = b.Amount
			s.BankerNet += b.Amount
		case OutcomeBankLoses:
			r.Won = b.Amount
			s.BankerNet -= b.Amount
		default:
			// Source: RULES.md CF-STANDOFF
			r.Returned = true
		}
		s.Bets[i] = r
	}
	// |BankerNet| <= covered <= bank, so NewBank is in 0..2*bank.
	if s.BankerNet > 0 && bank > math.MaxInt64-s.BankerNet {
		return BanqueSettlement{}, fmt.Errorf("%w: new bank", ErrOverflow)
	}
	s.NewBank = bank + s.BankerNet
	return s, nil
}
