package rules

import (
	"fmt"
	"math"
)

// Rounding is how a commission that is not a whole number of minor units is
// rounded (house rule commission_rounding, CF-BANK-WINS).
type Rounding int

// The rounding modes. The zero value is treated as RoundDown.
const (
	RoundDown   Rounding = iota + 1 // toward zero: the banker keeps the fraction (default)
	RoundHalfUp                     // to nearest, half a minor unit rounds up
	RoundUp                         // away from zero: the house takes the fraction
)

// String returns "down", "half_up", "up" or "invalid"; the zero value is
// "down".
func (r Rounding) String() string {
	switch r {
	case 0, RoundDown:
		return "down"
	case RoundHalfUp:
		return "half_up"
	case RoundUp:
		return "up"
	}
	return "invalid"
}

// MaxCommissionBP is the largest commission, 100% in basis points.
const MaxCommissionBP = 10000

// Commission is bp basis points of winnings (minor units), rounded by r
// (CF-BANK-WINS, commission_rounding; zero r rounds down). It never
// overflows for winnings >= 0 and bp in 0..10000; outside those ranges it
// returns 0. An unknown r rounds down; SettleChemin rejects it first.
func Commission(winnings, bp int64, r Rounding) int64 {
	if winnings <= 0 || bp <= 0 || bp > MaxCommissionBP {
		return 0
	}
	// Split winnings so no product exceeds winnings: w*bp/10000 =
	// (w/10000)*bp + (w%10000)*bp/10000.
	q, rem := winnings/MaxCommissionBP, winnings%MaxCommissionBP
	c := q * bp
	frac := rem * bp // < 10000*10000
	c += frac / MaxCommissionBP
	frac %= MaxCommissionBP
	switch r {
	case RoundHalfUp:
		// Source: RULES.md CF-BANK-WINS (commission_rounding half_up)
		if 2*frac >= MaxCommissionBP {
			c++
		}
	case RoundUp:
		// Source: RULES.md CF-BANK-WINS (commission_rounding up)
		if frac > 0 {
			c++
		}
	default:
		// Source: RULES.md CF-BANK-WINS (commission_rounding down, the default)
	}
	return c
}

// BanqueAuctionFeeBP is the fee of the bank's auction, 2.5% of the bid
// (BQ-BANK).
const BanqueAuctionFeeBP = 250

// BanqueAuctionFee is the fee the highest bidder pays the house for the
// bank: 2.5% of bid, rounded by r (BQ-BANK). A bid <= 0 pays 0.
func BanqueAuctionFee(bid int64, r Rounding) int64 {
	// Source: RULES.md BQ-BANK (the bidder pays the house 2.5% of the bid)
	return Commission(bid, BanqueAuctionFeeBP, r)
}

// secondsPerHour converts the hourly fee.
const secondsPerHour = 3600

// HourlyFeeDue is the fee for seatSeconds of play at hr.HourlyFee minor
// units per hour (CF-BANK-WINS hourly_fee), pro rata and rounded by
// hr.CommissionRounding. No fee (0) when the table does not charge one.
// Errors: negative seconds (ErrInvalidAmount), house rules out of range
// (ErrInvalidHouseRules), a fee beyond int64 (ErrOverflow).
func HourlyFeeDue(hr HouseRules, seatSeconds int64) (int64, error) {
	if err := hr.Validate(); err != nil {
		return 0, err
	}
	if seatSeconds < 0 {
		return 0, fmt.Errorf("%w: %d seat seconds", ErrInvalidAmount, seatSeconds)
	}
	if hr.HourlyFee == 0 || seatSeconds == 0 {
		return 0, nil
	}
	hours, rem := seatSeconds/secondsPerHour, seatSeconds%secondsPerHour
	if hours > 0 && hr.HourlyFee > math.MaxInt64/hours {
		return 0, fmt.Errorf("%w: hourly fee %d for %d s", ErrOverflow, hr.HourlyFee, seatSeconds)
	}
	fee := hr.HourlyFee * hours
	// The part hour: fee*rem/3600 without overflow, split like Commission.
	q, r := hr.HourlyFee/secondsPerHour, hr.HourlyFee%secondsPerHour
	part := q * rem
	frac := r * rem // < 3600*3600
	part += frac / secondsPerHour
	frac %= secondsPerHour
	switch hr.CommissionRounding {
	case RoundHalfUp:
		if 2*frac >= secondsPerHour {
			part++
		}
	case RoundUp:
		if frac > 0 {
			part++
		}
	}
	if fee > math.MaxInt64-part {
		return 0, fmt.Errorf("%w: hourly fee %d for %d s", ErrOverflow, hr.HourlyFee, seatSeconds)
	}
	return fee + part, nil
}
