package oracle

import "fmt"

// The old baccarat with aces at eleven (OLD-*), with the readings the
// docs/walkthroughs/old-baccarat.md states (The old baccarat).

// OldValue is a card's value in the old game (OLD-VALUES): ace 11, king,
// queen, jack and ten 10, the others their face.
func OldValue(code string) (int, error) {
	switch r := rank(code); r {
	case "":
		return 0, fmt.Errorf("oracle: %q is not a card", code)
	case "A":
		return 11, nil
	case "T", "J", "Q", "K":
		return 10, nil
	default:
		return int(r[0] - '0'), nil
	}
}

// OldPoints is a hand's points: the sum of its values (not reduced).
func OldPoints(codes []string) (int, error) {
	sum := 0
	for _, c := range codes {
		v, err := OldValue(c)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// OldRank is how points rank (OLD-RANK): by their last digit, 9, 19 and
// 29 best, then 8, 18, 28, and so on; baccarat (10, 20, 30) worst.
func OldRank(points int) int { return points % 10 }

// oldNatural: two cards making 8, 9, 18 or 19 (OLD-NATURAL).
func oldNatural(points int) bool {
	return points == 8 || points == 9 || points == 18 || points == 19
}

// OldHand is one punter's hand as played.
type OldHand struct {
	Points int
	// MayDraw: his two cards allowed him a third (OLD-DRAW); Drew: he
	// took it.
	MayDraw, Drew bool
	// Outcome against the banker, from the bank's side; Split: he is one
	// of the two punters who tied the banker and share the pool
	// (OLD-SETTLE).
	Outcome Outcome
	Split   bool
	// Baccarat: his points end in 0 after the draw (OLD-BACCARAT).
	Baccarat bool
}

// OldPlay is a coup of the old game as the rules play it.
type OldPlay struct {
	Natural       bool
	BankerPoints  int
	BankerMayDraw bool
	Punters       []OldHand
}

// PlayOld judges a coup of the old game from the banker's and each
// punter's cards:
//
//   - OLD-NATURAL: a two-card 8, 9, 18 or 19 anywhere ends the deal: no
//     third card anywhere; the banker's 9 or 19 takes every stake, and
//     otherwise each punter is compared with the banker by rank, a tie
//     going to the banker (a punter's 9 or 19 beats the banker's 8 or
//     18);
//   - OLD-DRAW: otherwise a hand whose two cards' last digit is below 4
//     may draw one card (and only then), the banker too;
//   - OLD-SETTLE: each punter against the banker by rank, a tie to the
//     banker, except that when no natural was shown and exactly two
//     punters tie the banker those two share the pool with him.
func PlayOld(banker []string, punters [][]string) (OldPlay, error) {
	var p OldPlay
	hands := append([][]string{banker}, punters...)
	two := make([]int, len(hands))
	for i, h := range hands {
		if len(h) < 2 || len(h) > 3 {
			return p, fmt.Errorf("oracle: a hand of %d cards (%v): two or three", len(h), h)
		}
		var err error
		if two[i], err = OldPoints(h[:2]); err != nil {
			return p, err
		}
		p.Natural = p.Natural || oldNatural(two[i])
	}
	points := make([]int, len(hands))
	for i, h := range hands {
		points[i], _ = OldPoints(h)
		may := !p.Natural && OldRank(two[i]) < 4
		if len(h) == 3 && !may {
			return p, fmt.Errorf("oracle: %v drew on %d points (natural shown: %t): only a last digit below 4 may draw, and none after a natural (OLD-DRAW, OLD-NATURAL)", h, two[i], p.Natural)
		}
		if i == 0 {
			p.BankerPoints, p.BankerMayDraw = points[0], may
			continue
		}
		p.Punters = append(p.Punters, OldHand{Points: points[i], MayDraw: may, Drew: len(h) == 3, Baccarat: OldRank(points[i]) == 0})
	}
	bank := OldRank(p.BankerPoints)
	var ties []int
	for i := range p.Punters {
		h := &p.Punters[i]
		h.Outcome = BankWins // a tie goes to the banker
		switch r := OldRank(h.Points); {
		case r > bank:
			h.Outcome = BankLoses
		case r == bank:
			ties = append(ties, i)
		}
	}
	if !p.Natural && len(ties) == 2 {
		for _, i := range ties {
			p.Punters[i].Outcome, p.Punters[i].Split = StandOff, true
		}
	}
	return p, nil
}

// SettleOld is the money of a coup of the old game: stakes by punter (as
// PlayOld's), even money; the two split punters and the banker each
// receive a third of the pool of their two stakes and the banker's
// double of each (002's worked example: stakes 100 and 200, 300 each).
// It returns each punter's net and the banker's.
func SettleOld(p OldPlay, stakes []int64) ([]int64, int64, error) {
	if len(stakes) != len(p.Punters) {
		return nil, 0, fmt.Errorf("oracle: %d stakes for %d punters", len(stakes), len(p.Punters))
	}
	nets := make([]int64, len(stakes))
	var pool int64
	for i, h := range p.Punters {
		if h.Split {
			pool += 3 * stakes[i] // his stake and the banker's double of it
		}
	}
	var banker int64
	for i, h := range p.Punters {
		switch {
		case stakes[i] <= 0:
			return nil, 0, fmt.Errorf("oracle: stake %d is %d", i, stakes[i])
		case h.Split:
			nets[i] = pool/3 - stakes[i]
		case h.Outcome == BankLoses:
			nets[i] = stakes[i]
		default:
			nets[i] = -stakes[i]
		}
		banker -= nets[i]
	}
	return nets, banker, nil
}

// FirstBaccarat is the punter who takes the bank after the coup
// (OLD-BACCARAT): the first, in the order given (the draw order: the
// banker's right, then his left, outwards), whose hand shows baccarat;
// -1 for none (the banker's own baccarat changes nothing).
func FirstBaccarat(p OldPlay) int {
	for i, h := range p.Punters {
		if h.Baccarat {
			return i
		}
	}
	return -1
}
