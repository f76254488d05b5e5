package rules

import "fmt"

// DefaultCommissionBP is the default commission, 5% (CF-BANK-WINS).
const DefaultCommissionBP = 500

// HouseRules are the house rules this package needs to play and settle a
// coup. The other house rules of the table (decks, burn, limits, ...) belong
// to the services that apply them.
type HouseRules struct {
	// BankerOption3vs9 is banker_option_3_vs_9: the banker may choose on 3
	// after giving the player a 9; when off he draws (CF-BANKER-DRAW).
	BankerOption3vs9 bool
	// BankerOption5vs4 is banker_option_5_vs_4: the banker may choose on 5
	// after giving the player a 4; when off he draws (CF-BANKER-DRAW).
	BankerOption5vs4 bool
	// BancoFreePlay is banco_free_play: in a coup played banco, the banco
	// player and then the banker may draw or stand at will
	// (CF-BANCO-FREEDOM).
	BancoFreePlay bool
	// CommissionBP is commission_bp: the commission on the banker's
	// winnings, in basis points (1/100 of a percent), 0..10000.
	CommissionBP int64
	// CommissionRounding is commission_rounding; zero means RoundDown.
	CommissionRounding Rounding
	// FirstCoupExempt is first_coup_exempt: the first coup of a player as
	// banker pays no commission (default off; see CommissionExempt).
	FirstCoupExempt bool
	// HourlyFee is hourly_fee: when > 0, the table charges this fee per
	// seat-hour, in minor units, instead of commission (default 0, off;
	// see CommissionExempt and HourlyFeeDue).
	HourlyFee int64
}

// DefaultHouseRules returns the defaults of RULES.md: both banker options on,
// banco free play off, commission 500 bp (5%) rounded down.
func DefaultHouseRules() HouseRules {
	return HouseRules{
		BankerOption3vs9:   true,
		BankerOption5vs4:   true,
		BancoFreePlay:      false,
		CommissionBP:       DefaultCommissionBP,
		CommissionRounding: RoundDown,
	}
}

// Validate checks the ranges of hr: CommissionBP in 0..10000, a known
// CommissionRounding (or zero) and HourlyFee >= 0. Errors wrap ErrInvalidHouseRules.
func (hr HouseRules) Validate() error {
	if hr.CommissionBP < 0 || hr.CommissionBP > MaxCommissionBP {
		return fmt.Errorf("%w: commission_bp %d outside 0..%d", ErrInvalidHouseRules, hr.CommissionBP, MaxCommissionBP)
	}
	switch hr.CommissionRounding {
	case 0, RoundDown, RoundHalfUp, RoundUp:
	default:
		return fmt.Errorf("%w: commission_rounding %d", ErrInvalidHouseRules, int(hr.CommissionRounding))
	}
	if hr.HourlyFee < 0 {
		return fmt.Errorf("%w: hourly_fee %d is negative", ErrInvalidHouseRules, hr.HourlyFee)
	}
	return nil
}

// CommissionExempt reports whether a coup pays no commission under the
// house rules (CF-BANK-WINS): every coup when the table charges
// hr.HourlyFee instead, and the first coup of a player as banker with
// hr.FirstCoupExempt. Pass the result to SettleChemin.
func (hr HouseRules) CommissionExempt(firstCoupOfBanker bool) bool {
	// Source: RULES.md CF-BANK-WINS (hourly_fee instead of commission; first_coup_exempt)
	return hr.HourlyFee > 0 || (hr.FirstCoupExempt && firstCoupOfBanker)
}
