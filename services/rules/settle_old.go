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
	// Split reports the three-way split of OLD-SETTLE.
	Split bool
	// NextBanker is the seat of the punter who showed baccarat and takes
	// the bank for the next coup (OLD-BACCARAT), or -1 when the banker
	// keeps it.
	NextBanker int
}

// SettleOld settles a finished OLD coup c (NextStepOld returns StepDone)
// with the punters' stakes by seat and the banker's bank. Each punter is
// compared with the banker by OldRank; the higher wins even money and a
// tie goes to the banker (OLD-SETTLE; a banker's 9 or 19 takes every stake
// even against a 9 or 19, OLD-NATURAL). Choices made where the text is
// open:
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
	var total int64
	for i, s := range stakes {
		if s <= 0 {
			return OldSettlement{}, fmt.Errorf("%w: stake %d is %d, not positive", ErrInvalidAmount, i, s)
		}
		if total > math.MaxInt64/2-s {
			return OldSettlement{}, fmt.Errorf("%w: stakes total", ErrOverflow)
		}
		total += s
	}
	if 2*total > bank {
		// Source: RULES.md OLD-STAKE (the banker holds double each stake)
		return OldSettlement{}, fmt.Errorf("%w: %s: stakes %d need a bank of %d, bank %d", ErrBetsExceedBank, RuleOLDStake, total, 2*total, bank)
	}
	natural := step.Rule == RuleOLDNatural
	banker := OldRank(OldPoints(c.Banker))
	s := OldSettlement{Net: make([]int64, n), Rule: make([]string, n), NextBanker: -1}
	var tied []int
	for i, h := range c.Punters {
		p := OldRank(OldPoints(h))
		s.Rule[i] = RuleOLDSettle
		if natural {
			s.Rule[i] = RuleOLDNatural
		}
		switch {
		case p > banker:
			s.Net[i] = stakes[i]
		default:
			// Source: RULES.md OLD-SETTLE (a tie goes to the banker),
			// OLD-NATURAL (the banker's 9 or 19 takes all stakes)
			s.Net[i] = -stakes[i]
			if p == banker {
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
		s.Rule[a], s.Rule[b] = RuleOLDSettle, RuleOLDSettle
		s.Split = true
	}
	for _, v := range s.Net {
		s.BankerNet -= v
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
