package oracle

import "fmt"

// PuntoBancoRules are a punto banco table's house rules
// (chemmy.table.v1.PuntoBancoRules, as the table resolved them).
type PuntoBancoRules struct {
	// CommissionBP and Rounding: the commission on a winning bank bet's
	// winnings (PB-BETS, default 500 bp), rounded by commission_rounding.
	CommissionBP int64
	Rounding     Rounding
	// NoCommission: a winning bank bet pays even money without
	// commission, except a bank win on a total of 6, which pays half the
	// stake, rounded down.
	NoCommission bool
	// TiePays, BankNaturalPays, PairPays: "to 1" (8, 9 and 11 by
	// default).
	TiePays, BankNaturalPays, PairPays int64
}

// The punto banco spots, as bet_placed names them.
const (
	SpotBank        = "bank"
	SpotPlayer      = "player"
	SpotTie         = "tie"
	SpotBankNatural = "bank_natural"
	SpotPlayerPair  = "player_pair"
	SpotBankPair    = "bank_pair"
)

// Stake is one punto banco bet.
type Stake struct {
	Spot   string
	Amount int64
}

// BetResult is what one bet did: Won is paid from the house bank on top
// of the stake returned, Commission goes from the bettor to the house's
// commission, Lost goes from the stake to the house bank. A push is all
// zero (the stake comes back).
type BetResult struct {
	Won, Commission, Lost int64
}

// Net is what the bettor gains (negative: loses).
func (r BetResult) Net() int64 { return r.Won - r.Commission - r.Lost }

// SettlePuntoBanco settles every stake of a punto banco coup against the
// house (PB-BANK) from the coup's play (PlayPuntoBanco):
//
//   - bank: even money less the commission, a push on a tie (PB-BETS; on
//     a tie bank and player push); the no-commission game as above;
//   - player: even money, a push on a tie;
//   - tie: TiePays to 1 on equal totals, lost otherwise;
//   - bank natural: BankNaturalPays to 1 when the bank's first two cards
//     make 8 or 9, whatever the result (PB-BETS: "a bet that the bank gets
//     a natural 8 or 9"), lost otherwise;
//   - player pair, bank pair: PairPays to 1 when that hand's first two
//     cards have the same rank, lost otherwise.
func SettlePuntoBanco(p Play, stakes []Stake, r PuntoBancoRules) ([]BetResult, error) {
	out := make([]BetResult, len(stakes))
	for i, s := range stakes {
		if s.Amount <= 0 {
			return nil, fmt.Errorf("oracle: stake %d is %d", i, s.Amount)
		}
		res := &out[i]
		wins := func(ok bool, pays int64) {
			if ok {
				res.Won = s.Amount * pays
			} else {
				res.Lost = s.Amount
			}
		}
		switch s.Spot {
		case SpotBank:
			switch p.Outcome {
			case BankWins:
				res.Won = s.Amount
				if r.NoCommission {
					if p.BankerTotal == 6 {
						res.Won = s.Amount / 2
					}
				} else {
					res.Commission = Share(s.Amount, r.CommissionBP, r.Rounding)
				}
			case BankLoses:
				res.Lost = s.Amount
			}
		case SpotPlayer:
			switch p.Outcome {
			case BankLoses:
				res.Won = s.Amount
			case BankWins:
				res.Lost = s.Amount
			}
		case SpotTie:
			wins(p.Outcome == StandOff, r.TiePays)
		case SpotBankNatural:
			wins(p.BankNatural, r.BankNaturalPays)
		case SpotPlayerPair:
			wins(p.PlayerPair, r.PairPays)
		case SpotBankPair:
			wins(p.BankerPair, r.PairPays)
		default:
			return nil, fmt.Errorf("oracle: no punto banco spot %q", s.Spot)
		}
	}
	return out, nil
}
