package walletsvc

import (
	"errors"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// The wallet's settlement shapes. Commissions and fees are computed by the
// rules engine (services/rules: Commission, BanqueAuctionFee,
// HourlyFeeDue), as are the chemin de fer and punto banco settlements;
// banqueResult below is still the wallet's own.

// betResult is what one bet did: the stake lost, or the winnings (stake
// excluded) and the commission on them.
type betResult struct {
	lost, won, commission int64
}

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
