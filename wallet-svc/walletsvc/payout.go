package walletsvc

import (
	"errors"
	"math"
	"math/bits"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// Pure settlement math for baccarat banque and the house fees (punto
// banco settles through rules.SettlePuntoBanco): no I/O, integers in minor
// units, every product checked for overflow.

// errOverflow: an amount times a multiplier does not fit an int64.
var errOverflow = errors.New("amount overflows")

// mulDiv returns a*b/d rounded by r (a, b >= 0, d > 0), or errOverflow.
func mulDiv(a, b, d int64, r walletv1.CommissionRounding) (int64, error) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(d) {
		return 0, errOverflow
	}
	q, rem := bits.Div64(hi, lo, uint64(d))
	switch r {
	case walletv1.CommissionRounding_COMMISSION_ROUNDING_HALF_UP:
		if rem >= uint64(d)-rem { // rem/d >= 1/2
			q++
		}
	case walletv1.CommissionRounding_COMMISSION_ROUNDING_UP:
		if rem > 0 {
			q++
		}
	}
	if q > math.MaxInt64 {
		return 0, errOverflow
	}
	return int64(q), nil
}

// betResult is what one bet did: the stake lost, or the winnings (stake
// excluded) and the commission on them.
type betResult struct {
	lost, won, commission int64
}

// bpDenominator is the basis points of a whole (commission_bp 10000 is
// 100%).
const bpDenominator = 10000

// banqueResult settles one bet against the bank of a baccarat banque coup,
// from the bank's results against the right and the left hand (RULES.md
// BQ-BETS, BQ-CHEVAL): a bet on one side follows that side, even money, a
// stand-off returns it; an à cheval bet loses only if the bank beats both
// hands, wins only if it loses to both, and is returned otherwise.
func banqueResult(side walletv1.BanqueSide, amount int64, right, left walletv1.CoupOutcome) (betResult, error) {
	one := func(o walletv1.CoupOutcome) betResult {
		switch o {
		case walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS:
			return betResult{lost: amount}
		case walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES:
			return betResult{won: amount}
		}
		return betResult{}
	}
	switch side {
	case walletv1.BanqueSide_BANQUE_SIDE_RIGHT:
		return one(right), nil
	case walletv1.BanqueSide_BANQUE_SIDE_LEFT:
		return one(left), nil
	case walletv1.BanqueSide_BANQUE_SIDE_CHEVAL:
		if right == left {
			return one(right), nil // both beaten, both lost, or both stand-offs
		}
		return betResult{}, nil
	}
	return betResult{}, errors.New("unknown side")
}

// Fees.
const (
	// bankAuctionFeeBP is the banque bank auction fee: 2.5% of the bid
	// (RULES.md BQ-BANK).
	bankAuctionFeeBP = 250
	secondsPerHour   = 3600
)

// bankAuctionFee is 2.5% of bid, rounded by r.
func bankAuctionFee(bid int64, r walletv1.CommissionRounding) (int64, error) {
	return mulDiv(bid, bankAuctionFeeBP, bpDenominator, r)
}

// hourlyFee is perHour per seat-hour for seatSeconds, rounded by r
// (RULES.md CF-BANK-WINS house rule hourly_fee).
func hourlyFee(perHour, seatSeconds int64, r walletv1.CommissionRounding) (int64, error) {
	return mulDiv(perHour, seatSeconds, secondsPerHour, r)
}
