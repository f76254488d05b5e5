package rules

import (
	"fmt"
	"math"
)

// OldSettlement is the money of a settled OLD coup, in minor units.
type OldSettlement struct {
	// Net is each punter's gain (negative: lost), by seat.
	Net []int64
	// Rule is, by seat, the rule that settled the punter: OLD-NATURAL,
	// OLD-SETTLE.
	Rule []string
	// BankerNet is the banker's gain, -sum(Net).
	BankerNet int64
	// NewBank is the bank after the coup, bank + BankerNet (OLD-BANKER:
	// the banker keeps it; OldBankAfter), at least half the bank
	// (OLD-STAKE). SettleOldResults, which has no bank, leaves it 0.
	NewBank int64
	// Split reports the three-way split of OLD-SETTLE.
	Split bool
	// Pooled is, by seat, whether the punter's stake was one of the two
	// pooled in the three-way split (his Net is then the other's stake);
	// all false without a split.
	Pooled []bool
	// NextBanker is the seat of the punter who showed baccarat and takes
	// the bank for the next coup (OLD-BACCARAT), or -1 when the banker
	// keeps it (always -1 from SettleOldResults, which has no cards).
	NextBanker int
}

// OldOutcome compares a punter's final points with the banker's by
// OLD-RANK (points modulo 10, 9 best, baccarat 0 worst), from the bank's
// side: OutcomeBankWins when the banker's rank is higher,
// OutcomeBankLoses when the punter's is, OutcomeStandOff when they are
// equal: a tie, which SettleOldResults gives to the banker or to the
// three-way split. For example 17 against 27 is a tie; 19 beats 8.
func OldOutcome(punterPoints, bankerPoints int) Outcome {
	// Source: RULES.md OLD-RANK
	return Compare(OldRank(punterPoints), OldRank(bankerPoints))
}

// SettleOld settles a finished OLD coup c (NextStepOld returns StepDone)
// with the punters' stakes by seat and the banker's bank. Each punter is
// compared with the banker by OldRank (OldOutcome); the money is
// SettleOldResults's: the higher wins even money and a tie goes to the
// banker (OLD-SETTLE; a banker's 9 or 19 takes every stake even against a
// 9 or 19, OLD-NATURAL), or to the three-way split. Choices made where
// the text is open:
//
//   - The three-way split applies when no natural was shown and exactly
//     two punters tie with the banker: those two stakes and the banker's
//     double of each are pooled and split in three, so each of the three
//     receives the sum of the two stakes (002's worked example). With one,
//     or three or more, tied punters every tie goes to the banker.
//   - Baccarat (OLD-BACCARAT) is a final hand of 10, 20 or 30 points; the
//     first punter showing it in draw order takes the bank.
//
// Errors: a stake or the bank <= 0 (ErrInvalidAmount), a bank under double
// the stakes (ErrBetsExceedBank, OLD-STAKE), the wrong number of stakes or
// an unfinished coup (ErrIllegalState), overflow (ErrOverflow).
func SettleOld(c OldCoup, bank int64, stakes []int64) (OldSettlement, error) {
	step, err := NextStepOld(c)
	if err != nil {
		return OldSettlement{}, err
	}
	if step.Kind != StepDone {
		return OldSettlement{}, fmt.Errorf("%w: coup not finished: waits for %v", ErrIllegalState, step.Kind)
	}
	n := len(c.Punters)
	if len(stakes) != n {
		return OldSettlement{}, fmt.Errorf("%w: %d stakes for %d punters", ErrIllegalState, len(stakes), n)
	}
	if bank <= 0 {
		return OldSettlement{}, fmt.Errorf("%w: bank %d is not positive", ErrInvalidAmount, bank)
	}
	banker := OldPoints(c.Banker)
	results := make([]Outcome, n)
	for i, h := range c.Punters {
		results[i] = OldOutcome(OldPoints(h), banker)
	}
	s, err := SettleOldResults(stakes, results, step.Rule == RuleOLDNatural)
	if err != nil {
		return OldSettlement{}, err
	}
	if s.NewBank, err = OldBankAfter(bank, stakes, s.BankerNet); err != nil {
		return OldSettlement{}, err
	}
	for _, seat := range OldDrawOrder(n) {
		if seat >= 0 && IsOldBaccarat(OldPoints(c.Punters[seat])) {
			// Source: RULES.md OLD-BACCARAT (a punter showing baccarat takes the bank)
			s.NextBanker = seat
			break
		}
	}
	return s, nil
}

// SettleOldResults is the money of an OLD coup without the cards or the
// bank: stakes are the punters' stakes by seat (2..16, minor units),
// results each punter's OldOutcome against the banker, natural whether a
// natural (a two-card 8, 9, 18 or 19 in any hand) ended the coup
// (OLD-NATURAL). A punter who beat the banker wins his stake (even money),
// one the banker beat loses it, and a tie goes to the banker (OLD-SETTLE);
// but with no natural and exactly two ties, the two tied stakes and the
// banker's double of each are pooled and split in three (OLD-SETTLE, 002's
// worked example): each tied punter's Net is the other's stake and the
// banker pays their sum. For example stakes 100 and 300 tied, 200 winning:
// nets +300, +100, +200, banker -600. The banker never loses more than
// the stakes' total. OldBankAfter gives his bank after the coup; NewBank
// is left 0.
//
// Errors: the wrong number of stakes or results (ErrIllegalState); a stake
// <= 0 (ErrInvalidAmount); an undeclared result (ErrInvalidOutcome);
// stakes whose double overflows (ErrOverflow).
func SettleOldResults(stakes []int64, results []Outcome, natural bool) (OldSettlement, error) {
	n := len(stakes)
	if n < OldMinPunters || n > OldMaxPunters {
		// Source: RULES.md OLD-DECKS (at least three players)
		return OldSettlement{}, fmt.Errorf("%w: OLD-DECKS: %d punters, want %d..%d", ErrIllegalState, n, OldMinPunters, OldMaxPunters)
	}
	if len(results) != n {
		return OldSettlement{}, fmt.Errorf("%w: %d results for %d stakes", ErrIllegalState, len(results), n)
	}
	if _, err := oldCover(stakes); err != nil {
		return OldSettlement{}, err
	}
	for i, r := range results {
		if !r.Valid() {
			return OldSettlement{}, fmt.Errorf("%w: result %d is %d", ErrInvalidOutcome, i, int(r))
		}
	}
	s := OldSettlement{Net: make([]int64, n), Rule: make([]string, n), Pooled: make([]bool, n), NextBanker: -1}
	var tied []int
	for i, r := range results {
		s.Rule[i] = RuleOLDSettle
		if natural {
			s.Rule[i] = RuleOLDNatural
		}
		switch r {
		case OutcomeBankLoses:
			// Source: RULES.md OLD-SETTLE (the punter beat the banker: even money)
			s.Net[i] = stakes[i]
		default:
			// Source: RULES.md OLD-SETTLE (a tie goes to the banker),
			// OLD-NATURAL (the banker's 9 or 19 takes all stakes)
			s.Net[i] = -stakes[i]
			if r == OutcomeStandOff {
				tied = append(tied, i)
			}
		}
	}
	if !natural && len(tied) == 2 {
		// Source: RULES.md OLD-SETTLE (banker and two punters tie: all
		// stakes, the banker's double included, pooled and split in three)
		a, b := tied[0], tied[1]
		share := stakes[a] + stakes[b] // the pool 3*(a+b) in three
		s.Net[a], s.Net[b] = share-stakes[a], share-stakes[b]
		s.Pooled[a], s.Pooled[b] = true, true
		s.Split = true
	}
	for _, v := range s.Net {
		s.BankerNet -= v // |BankerNet| <= the stakes' total: no overflow
	}
	return s, nil
}

// OldBankAfter is the banker's bank after an OLD coup: bank + bankerNet
// (OLD-BANKER: he keeps the bank from coup to coup), where bankerNet is
// the coup's OldSettlement.BankerNet for the punters' stakes (minor
// units). It checks OLD-STAKE: the bank holds at least double the stakes,
// so the banker loses at most half of it and the new bank is positive.
// Errors: bank or a stake <= 0 (ErrInvalidAmount), stakes whose double
// or a new bank that overflows (ErrOverflow), a bank under double the
// stakes (ErrBetsExceedBank), a bankerNet the stakes cannot give (a loss
// or a gain beyond their total: ErrInvalidAmount).
func OldBankAfter(bank int64, stakes []int64, bankerNet int64) (int64, error) {
	if bank <= 0 {
		return 0, fmt.Errorf("%w: bank %d is not positive", ErrInvalidAmount, bank)
	}
	total, err := oldCover(stakes)
	if err != nil {
		return 0, err
	}
	if 2*total > bank {
		// Source: RULES.md OLD-STAKE (the banker holds double each stake)
		return 0, fmt.Errorf("%w: %s: stakes %d need a bank of %d, bank %d", ErrBetsExceedBank, RuleOLDStake, total, 2*total, bank)
	}
	if bankerNet < -total || bankerNet > total {
		return 0, fmt.Errorf("%w: a banker's net of %d on stakes of %d", ErrInvalidAmount, bankerNet, total)
	}
	if bankerNet > 0 && bank > math.MaxInt64-bankerNet {
		return 0, fmt.Errorf("%w: new bank", ErrOverflow)
	}
	// Source: RULES.md OLD-BANKER (the bank stays with the banker, with his gain or loss)
	return bank + bankerNet, nil // at least bank/2 > 0
}

// oldCover is the stakes' total, checked so that its double (the cover of
// OLD-STAKE) fits an int64. Errors: a stake <= 0 (ErrInvalidAmount),
// overflow (ErrOverflow).
func oldCover(stakes []int64) (int64, error) {
	var total int64
	for i, s := range stakes {
		if s <= 0 {
			return 0, fmt.Errorf("%w: stake %d is %d, not positive", ErrInvalidAmount, i, s)
		}
		if total > math.MaxInt64/2-s {
			return 0, fmt.Errorf("%w: stakes total", ErrOverflow)
		}
		total += s
	}
	return total, nil
}
