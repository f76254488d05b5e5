package rules

import "fmt"

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
	// NoCommission is the no-commission game (a common extension, not in
	// the sources): a winning bank bet pays 1 to 1 with no commission,
	// except a bank win with a final total of 6, which pays 1 to 2 (half
	// the stake, rounded down to the minor unit: see SettlePuntoBanco).
	// CommissionBP and CommissionRounding are then still validated but
	// not applied. Default false.
	NoCommission bool
	// PairPays is the payout of the player pair and bank pair bets, N to 1
	// (a common extension, not in the sources; default 11).
	PairPays int64
}

// DefaultPuntoBancoRules returns commission 500 bp rounded down, tie 8 to
// 1, bank natural 9 to 1, pairs 11 to 1, the commission game.
func DefaultPuntoBancoRules() PuntoBancoRules {
	return PuntoBancoRules{CommissionBP: DefaultCommissionBP, CommissionRounding: RoundDown, TiePays: 8, BankNaturalPays: 9,
		PairPays: 11}
}

// MaxPuntoBancoPays bounds a payout ratio (TiePays, BankNaturalPays,
// PairPays) so a payout of any int64 stake is checked for overflow in one
// multiplication.
const MaxPuntoBancoPays = 1000

// Validate checks the ranges: commission 0..10000 bp, a known rounding,
// payouts (tie, bank natural, pair) 1..MaxPuntoBancoPays to 1. Errors wrap
// ErrInvalidHouseRules.
func (pr PuntoBancoRules) Validate() error {
	if err := (HouseRules{CommissionBP: pr.CommissionBP, CommissionRounding: pr.CommissionRounding}).Validate(); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		pays int64
	}{{"tie", pr.TiePays}, {"bank natural", pr.BankNaturalPays}, {"pair", pr.PairPays}} {
		if p.pays < 1 || p.pays > MaxPuntoBancoPays {
			return fmt.Errorf("%w: %s payout %d to 1 outside 1..%d", ErrInvalidHouseRules, p.name, p.pays, MaxPuntoBancoPays)
		}
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
	// BankTotal is the bank's final total, 0..9 (the no-commission game
	// pays half on a bank win with 6).
	BankTotal int
	// PlayerPair and BankPair report that the first two cards of the
	// player's or the bank's hand have the same rank (7-7, K-K; ten and
	// king are not a pair).
	PlayerPair, BankPair bool
}

// ResultPuntoBanco returns the result of c, which must be finished
// (NextStepPuntoBanco returns StepDone): the outcome, the bank natural,
// the bank's final total and the pairs. Errors wrap ErrIllegalState.
func ResultPuntoBanco(c Coup) (PuntoBancoResult, error) {
	s, err := NextStepPuntoBanco(c)
	if err != nil {
		return PuntoBancoResult{}, err
	}
	if s.Kind != StepDone {
		return PuntoBancoResult{}, fmt.Errorf("%w: coup not finished: waits for %v", ErrIllegalState, s.Kind)
	}
	return PuntoBancoResult{
		Outcome:     s.Outcome,
		BankNatural: IsNatural(c.Banker[:2]),
		BankTotal:   Total(c.Banker),
		PlayerPair:  c.Player[0].Rank == c.Player[1].Rank,
		BankPair:    c.Banker[0].Rank == c.Banker[1].Rank,
	}, nil
}

// PuntoBancoBet is what a punto banco stake is on (PB-BETS).
type PuntoBancoBet int

// The punto banco bets. The zero value is not a bet.
const (
	BetBank        PuntoBancoBet = iota + 1 // the bank's hand wins: 1 to 1 less commission
	BetPlayer                               // the player's hand wins: 1 to 1
	BetTie                                  // equal totals: TiePays to 1
	BetBankNatural                          // the bank's first two cards are 8 or 9: BankNaturalPays to 1
	BetPlayerPair                           // the player's first two cards have the same rank: PairPays to 1
	BetBankPair                             // the bank's first two cards have the same rank: PairPays to 1
)

// String returns "bank", "player", "tie", "bank_natural", "player_pair",
// "bank_pair" or "invalid".
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
	case BetPlayerPair:
		return "player_pair"
	case BetBankPair:
		return "bank_pair"
	}
	return "invalid"
}
