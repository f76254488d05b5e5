package rules

import (
	"fmt"
	"math"
)

// Rule IDs of punto banco as they appear in Step.Rule and settlements.
const (
	RulePBTableau = "PB-TABLEAU"
	RulePBBets    = "PB-BETS"
)

// PuntoBancoRules are the house rules of a punto banco table (PB-*).
type PuntoBancoRules struct {
	// CommissionBP is the commission on a winning bank bet's winnings, in
	// basis points, 0..10000 (PB-BETS, usually 5%).
	CommissionBP int64
	// CommissionRounding rounds each bank bet's commission; zero is
	// RoundDown.
	CommissionRounding Rounding
	// TiePays is the tie bet's payout, N to 1 (a common extension, not in
	// the sources; default 8).
	TiePays int64
	// BankNaturalPays is the payout of the bet that the bank gets a natural
	// 8 or 9, N to 1 (PB-BETS; default 9).
	BankNaturalPays int64
}

// DefaultPuntoBancoRules returns commission 500 bp rounded down, tie 8 to
// 1, bank natural 9 to 1.
func DefaultPuntoBancoRules() PuntoBancoRules {
	return PuntoBancoRules{CommissionBP: DefaultCommissionBP, CommissionRounding: RoundDown, TiePays: 8, BankNaturalPays: 9}
}

// maxPays bounds a payout ratio so a payout of any int64 stake is checked
// for overflow in one multiplication.
const maxPays = 1000

// Validate checks the ranges: commission 0..10000 bp, a known rounding,
// payouts 1..1000 to 1. Errors wrap ErrInvalidHouseRules.
func (pr PuntoBancoRules) Validate() error {
	if err := (HouseRules{CommissionBP: pr.CommissionBP, CommissionRounding: pr.CommissionRounding}).Validate(); err != nil {
		return err
	}
	if pr.TiePays < 1 || pr.TiePays > maxPays || pr.BankNaturalPays < 1 || pr.BankNaturalPays > maxPays {
		return fmt.Errorf("%w: payouts tie %d, bank natural %d outside 1..%d", ErrInvalidHouseRules, pr.TiePays, pr.BankNaturalPays, maxPays)
	}
	return nil
}

// pbHouseRules are the chemin de fer rules with every option removed: the
// PB-TABLEAU.
var pbHouseRules = HouseRules{CommissionBP: DefaultCommissionBP}

// NextStepPuntoBanco is NextStep for punto banco: the fixed tableau with
// every option removed (PB-TABLEAU). The player draws on 5 and the banker
// draws on 3 after a 9 and on 5 after a 4, so a coup never waits for a
// choice: the steps are StepDealPlayer, StepDealBanker and StepDone. The
// Banco flag is illegal (PB-BANK: there is no banco), and so is a stand
// flag where the tableau draws. Errors wrap ErrIllegalState.
func NextStepPuntoBanco(c Coup) (Step, error) {
	if c.Banco {
		// Source: RULES.md PB-BANK (there is no banco)
		return illegal("PB-BANK", "a punto banco coup is never played banco")
	}
	if len(c.Player) >= 2 && len(c.Player) <= maxHand && c.PlayerStood && Total(c.Player[:2]) == 5 {
		// Source: RULES.md PB-TABLEAU (the player draws on 5)
		return illegal(RulePBTableau, "player stood on 5")
	}
	s, err := NextStep(c, pbHouseRules)
	if err != nil {
		return s, err
	}
	switch s.Kind {
	case StepPlayerChoice:
		// Source: RULES.md PB-TABLEAU (the player draws on 5)
		return Step{Kind: StepDealPlayer, Rule: RulePBTableau}, nil
	case StepBankerChoice:
		// Unreachable: with both options off the banker never chooses.
		return illegal(RulePBTableau, "banker choice under the fixed tableau")
	}
	if s.Rule == RulePlayerDraw || s.Rule == RuleBankerDraw {
		// Source: RULES.md PB-TABLEAU (the chemin de fer tableau without options)
		s.Rule = RulePBTableau
	}
	return s, nil
}

// PuntoBancoResult is the result of a finished punto banco coup.
type PuntoBancoResult struct {
	// Outcome is the result from the bank's side.
	Outcome Outcome
	// BankNatural reports that the bank's first two cards total 8 or 9.
	BankNatural bool
}

// ResultPuntoBanco returns the result of c, which must be finished
// (NextStepPuntoBanco returns StepDone). Errors wrap ErrIllegalState.
func ResultPuntoBanco(c Coup) (PuntoBancoResult, error) {
	s, err := NextStepPuntoBanco(c)
	if err != nil {
		return PuntoBancoResult{}, err
	}
	if s.Kind != StepDone {
		return PuntoBancoResult{}, fmt.Errorf("%w: coup not finished: waits for %v", ErrIllegalState, s.Kind)
	}
	return PuntoBancoResult{Outcome: s.Outcome, BankNatural: IsNatural(c.Banker[:2])}, nil
}

// PuntoBancoBet is what a punto banco stake is on (PB-BETS).
type PuntoBancoBet int

// The punto banco bets. The zero value is not a bet.
const (
	BetBank        PuntoBancoBet = iota + 1 // the bank's hand wins: 1 to 1 less commission
	BetPlayer                               // the player's hand wins: 1 to 1
	BetTie                                  // equal totals: TiePays to 1
	BetBankNatural                          // the bank's first two cards are 8 or 9: BankNaturalPays to 1
)

// String returns "bank", "player", "tie", "bank_natural" or "invalid".
func (b PuntoBancoBet) String() string {
	switch b {
	case BetBank:
		return "bank"
	case BetPlayer:
		return "player"
	case BetTie:
		return "tie"
	case BetBankNatural:
		return "bank_natural"
	}
	return "invalid"
}

// PuntoBancoStake is one stake on the layout, in minor units.
type PuntoBancoStake struct {
	Bet    PuntoBancoBet
	Amount int64
}

// StakeResult is the settlement of one stake, in minor units.
type StakeResult struct {
	// Won is the gross winnings paid on top of the stake (0 unless won).
	Won int64
	// Commission is taken from Won (winning bank bets only).
	Commission int64
	// Lost is the stake lost to the house (0 unless lost).
	Lost int64
	// Returned is the stake given back without gain (a push).
	Returned bool
	// Rule is the RULES.md ID that settled the stake.
	Rule string
}

// Net is the bettor's gain: Won - Commission - Lost.
func (r StakeResult) Net() int64 { return r.Won - r.Commission - r.Lost }

// SettlePuntoBanco settles stakes on the result res (PB-BETS): the bank
// bet wins 1 to 1 less the commission of its own winnings, the player bet
// 1 to 1, and both push on a tie; the tie bet wins TiePays to 1 and
// otherwise loses; the bank natural bet wins BankNaturalPays to 1 when the
// bank's first two cards are a natural, whatever the outcome. The house
// banks (PB-BANK): no bank limits the stakes here.
//
// Errors: a stake <= 0 (ErrInvalidAmount), an unknown bet or outcome
// (ErrInvalidOutcome), house rules out of range (ErrInvalidHouseRules), a
// payout beyond int64 (ErrOverflow).
func SettlePuntoBanco(stakes []PuntoBancoStake, res PuntoBancoResult, pr PuntoBancoRules) ([]StakeResult, error) {
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	if !res.Outcome.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidOutcome, int(res.Outcome))
	}
	out := make([]StakeResult, len(stakes))
	for i, s := range stakes {
		if s.Amount <= 0 {
			return nil, fmt.Errorf("%w: stake %d is %d, not positive", ErrInvalidAmount, i, s.Amount)
		}
		r := StakeResult{Rule: RulePBBets}
		even := func(wins bool) {
			switch {
			case res.Outcome == OutcomeStandOff:
				// Source: RULES.md PB-BETS (on a tie, bank and player bets push)
				r.Returned = true
			case wins:
				r.Won = s.Amount
			default:
				r.Lost = s.Amount
			}
		}
		pays := func(wins bool, ratio int64) error {
			if !wins {
				r.Lost = s.Amount
				return nil
			}
			if s.Amount > math.MaxInt64/ratio {
				return fmt.Errorf("%w: stake %d pays %d to 1", ErrOverflow, i, ratio)
			}
			r.Won = s.Amount * ratio
			return nil
		}
		var err error
		switch s.Bet {
		case BetBank:
			// Source: RULES.md PB-BETS (commission on winning bank bets)
			even(res.Outcome == OutcomeBankWins)
			r.Commission = Commission(r.Won, pr.CommissionBP, pr.CommissionRounding)
		case BetPlayer:
			// Source: RULES.md PB-BETS (player bet, even money)
			even(res.Outcome == OutcomeBankLoses)
		case BetTie:
			// Source: RULES.md PB-BETS (tie bet, a common extension)
			err = pays(res.Outcome == OutcomeStandOff, pr.TiePays)
		case BetBankNatural:
			// Source: RULES.md PB-BETS (the bank gets a natural 8 or 9)
			err = pays(res.BankNatural, pr.BankNaturalPays)
		default:
			return nil, fmt.Errorf("%w: stake %d on bet %d", ErrInvalidOutcome, i, int(s.Bet))
		}
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
