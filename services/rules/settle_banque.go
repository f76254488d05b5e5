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

// BanqueSettlement is the money of a settled banque coup, in minor units.
type BanqueSettlement struct {
	// Bets are the bets' results, indexed like the bets.
	Bets []StakeResult
	// BankerWinnings is the stakes lost to the bank minus the amounts it
	// paid, before commission; negative when it paid more.
	BankerWinnings int64
	// Commission is the house's commission on positive BankerWinnings
	// (the house rule commission_bp, rounded by commission_rounding; see
	// SettleBanqueCoup), else 0.
	Commission int64
	// BankerNet is the banker's gain: BankerWinnings - Commission.
	BankerNet int64
	// Uncovered is the part of the bank no bet covered, bank - the bets
	// (CF-UNCOVERED): never at stake. 0 with a house bank.
	Uncovered int64
	// NewBank is bank + BankerNet (BQ-BANK: he keeps the bank until it is
	// exhausted or he passes); 0 with a house bank.
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
	return SettleBanqueCoup(bank, bets, right, left, HouseRules{})
}

// SettleBanqueCoup is SettleBanque with the house's options: bank is the
// banker's bank, or 0 when the house holds the bank (BQ-BANK; the house's
// float pays and collects, so no bank bounds the bets here and Uncovered
// and NewBank are 0); hr.CommissionBP (basis points, 0..10000) and
// hr.CommissionRounding are a commission the house takes from the
// banker's positive BankerWinnings of the coup, on the total, not per bet
// (a house rule, by analogy with CF-BANK-WINS; 0, the usual setting, takes
// none: BQ-BANK's fee is the auction's, BanqueAuctionFee). The other
// fields of hr are not used.
//
// Errors: a bank < 0 or a bet <= 0 (ErrInvalidAmount), bets totalling more
// than a banker's bank (ErrBetsExceedBank), an undeclared outcome or table
// (ErrInvalidOutcome), hr out of range (ErrInvalidHouseRules), overflow
// (ErrOverflow).
func SettleBanqueCoup(bank int64, bets []BanqueBet, right, left Outcome, hr HouseRules) (BanqueSettlement, error) {
	if bank < 0 {
		return BanqueSettlement{}, fmt.Errorf("%w: bank %d is negative", ErrInvalidAmount, bank)
	}
	if !right.Valid() || !left.Valid() {
		return BanqueSettlement{}, fmt.Errorf("%w: right %d, left %d", ErrInvalidOutcome, int(right), int(left))
	}
	if err := hr.Validate(); err != nil {
		return BanqueSettlement{}, err
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
	if bank > 0 && covered > bank {
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
			s.BankerWinnings += b.Amount
		case OutcomeBankLoses:
			r.Won = b.Amount
			s.BankerWinnings -= b.Amount
		default:
			// Source: RULES.md CF-STANDOFF
			r.Returned = true
		}
		s.Bets[i] = r
	}
	// Source: RULES.md CF-BANK-WINS (by analogy: the commission on the
	// banker's winnings of the coup, rounded by commission_rounding)
	s.Commission = Commission(s.BankerWinnings, hr.CommissionBP, hr.CommissionRounding)
	s.BankerNet = s.BankerWinnings - s.Commission
	if bank == 0 {
		return s, nil // the house's bank
	}
	// |BankerNet| <= covered <= bank, so NewBank is in 0..2*bank.
	if s.BankerNet > 0 && bank > math.MaxInt64-s.BankerNet {
		return BanqueSettlement{}, fmt.Errorf("%w: new bank", ErrOverflow)
	}
	// Source: RULES.md CF-UNCOVERED (the part no bet covers never moves)
	s.Uncovered = bank - covered
	s.NewBank = bank + s.BankerNet
	return s, nil
}
