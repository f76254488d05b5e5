package odds

import (
	"fmt"
	"math/big"

	"github.com/chemmy/chemmy/services/rules"
)

// BetOdds are the exact odds of one bet.
type BetOdds struct {
	// Bet names the bet: "bank", "player", "tie" or "bank_natural".
	Bet string
	// Pays is the payout as printed on the layout, e.g. "8 to 1".
	Pays string
	// Win, Lose and Push count the deals where the bet wins, loses or is
	// returned.
	Win, Lose, Push *big.Int
	// EV is the bettor's expected gain per unit staked, exact.
	EV *big.Rat
}

// HouseEdge is -EV: the house's expected gain per unit staked.
func (b BetOdds) HouseEdge() *big.Rat { return new(big.Rat).Neg(b.EV) }

// PuntoBancoOdds are the exact odds of one punto banco coup.
type PuntoBancoOdds struct {
	// Deals is the number of ordered six-card deals of the shoe.
	Deals *big.Int
	// BankWins, PlayerWins and Ties count the deals by result.
	BankWins, PlayerWins, Ties *big.Int
	// BankNaturals counts the deals where the bank's first two cards are 8
	// or 9.
	BankNaturals *big.Int
	// Bets are the bank, player, tie and bank natural bets, in that order.
	Bets []BetOdds
}

// Prob returns count / Deals, exact.
func (o PuntoBancoOdds) Prob(count *big.Int) *big.Rat {
	return new(big.Rat).SetFrac(count, o.Deals)
}

// PuntoBanco returns the exact odds of a punto banco coup dealt from s
// under the fixed tableau (PB-TABLEAU) and the bets of PB-BETS with the
// payouts and commission of pr: the bank bet pays 1 to 1 less pr's
// commission (the exact rate; the rounding of a real payout to minor units
// is not in the EV), the player bet 1 to 1, both pushed on a tie; the tie
// bet pays pr.TiePays to 1; the bank natural bet pr.BankNaturalPays to 1.
// Not covered: pr.NoCommission (the bank bet is always priced with pr's
// commission; the half pay on 6 would need the bank wins counted by
// total) and the pair bets (no entry in Bets).
// Errors wrap ErrInvalidShoe or rules.ErrInvalidHouseRules.
func PuntoBanco(s Shoe, pr rules.PuntoBancoRules) (PuntoBancoOdds, error) {
	if err := s.Validate(); err != nil {
		return PuntoBancoOdds{}, err
	}
	if err := pr.Validate(); err != nil {
		return PuntoBancoOdds{}, err
	}
	p, b, _ := PuntoBancoStrategy().resolve(puntoBancoRules(), false)
	c := buildTable(s).counts(&p, &b)
	o := PuntoBancoOdds{
		Deals:        c.Deals,
		BankWins:     c.BankWins.Num(),
		PlayerWins:   c.PlayerWins.Num(),
		Ties:         c.Ties.Num(),
		BankNaturals: c.BankNaturals,
	}
	o.Bets = puntoBancoBets(o, pr)
	return o, nil
}

func puntoBancoBets(o PuntoBancoOdds, pr rules.PuntoBancoRules) []BetOdds {
	deals := new(big.Rat).SetInt(o.Deals)
	ev := func(win *big.Rat, lose *big.Int) *big.Rat {
		r := new(big.Rat).Sub(win, new(big.Rat).SetInt(lose))
		return r.Quo(r, deals)
	}
	decided := new(big.Int).Add(o.BankWins, o.PlayerWins)

	// Source: RULES.md PB-BETS (the house takes a commission on winning bank bets)
	keep := big.NewRat(rules.MaxCommissionBP-pr.CommissionBP, rules.MaxCommissionBP)
	bankWin := new(big.Rat).Mul(new(big.Rat).SetInt(o.BankWins), keep)
	tiePays := new(big.Rat).SetInt(new(big.Int).Mul(o.Ties, big.NewInt(pr.TiePays)))
	natPays := new(big.Rat).SetInt(new(big.Int).Mul(o.BankNaturals, big.NewInt(pr.BankNaturalPays)))
	notNatural := new(big.Int).Sub(o.Deals, o.BankNaturals)
	return []BetOdds{
		{
			Bet: "bank", Pays: fmt.Sprintf("1 to 1 less %s%%", big.NewRat(pr.CommissionBP, 100).FloatString(2)),
			Win: o.BankWins, Lose: o.PlayerWins, Push: o.Ties,
			EV: ev(bankWin, o.PlayerWins),
		},
		{
			Bet: "player", Pays: "1 to 1",
			Win: o.PlayerWins, Lose: o.BankWins, Push: o.Ties,
			EV: ev(new(big.Rat).SetInt(o.PlayerWins), o.BankWins),
		},
		{
			Bet: "tie", Pays: fmt.Sprintf("%d to 1", pr.TiePays),
			Win: o.Ties, Lose: decided, Push: new(big.Int),
			EV: ev(tiePays, decided),
		},
		{
			Bet: "bank_natural", Pays: fmt.Sprintf("%d to 1", pr.BankNaturalPays),
			Win: o.BankNaturals, Lose: notNatural, Push: new(big.Int),
			EV: ev(natPays, notNatural),
		},
	}
}
