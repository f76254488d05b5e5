package rules

import (
	"fmt"
	"math"
	"math/bits"
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

// mulDiv is a*b/d rounded by r to a whole minor unit, computed exactly
// in 128 bits: RoundDown (or zero, or an unknown r) drops the fraction,
// RoundHalfUp rounds half a unit and more up, RoundUp rounds any fraction
// up. a, b >= 0 and d > 0; ok is false when they are not, or when the
// result does not fit an int64. Every share of an amount this package
// computes (commissions, fees) is one mulDiv.
func mulDiv(a, b, d int64, r Rounding) (q int64, ok bool) {
	if a < 0 || b < 0 || d <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(d) {
		return 0, false // the quotient needs more than 64 bits
	}
	uq, rem := bits.Div64(hi, lo, uint64(d))
	if uq > math.MaxInt64 {
		return 0, false
	}
	switch r {
	case RoundHalfUp:
		if rem >= uint64(d)-rem { // rem/d >= 1/2
			uq++
		}
	case RoundUp:
		if rem > 0 {
			uq++
		}
	}
	if uq > math.MaxInt64 {
		return 0, false
	}
	return int64(uq), true
}

// Commission is bp basis points of winnings (minor units), rounded by r
// (CF-BANK-WINS, commission_rounding; zero r rounds down). It never
// overflows for winnings >= 0 and bp in 0..10000; outside those ranges it
// returns 0. An unknown r rounds down; SettleChemin rejects it first.
func Commission(winnings, bp int64, r Rounding) int64 {
	if winnings <= 0 || bp <= 0 || bp > MaxCommissionBP {
		return 0
	}
	// Source: RULES.md CF-BANK-WINS (commission_rounding: down, the
	// default; half_up; up). At most winnings: it always fits.
	c, _ := mulDiv(winnings, bp, MaxCommissionBP, r)
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
	// Source: RULES.md CF-BANK-WINS (hourly_fee, pro rata, rounded as the commission)
	fee, ok := mulDiv(hr.HourlyFee, seatSeconds, secondsPerHour, hr.CommissionRounding)
	if !ok {
		return 0, fmt.Errorf("%w: hourly fee %d for %d s", ErrOverflow, hr.HourlyFee, seatSeconds)
	}
	return fee, nil
}
