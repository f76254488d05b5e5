package rules

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The money's bounds, at the edge: a new bank of exactly MaxInt64 fits,
// one more overflows (CF-BANK-SIZE, ErrOverflow).
func TestSettleAtTheEdgeOfInt64(t *testing.T) {
	free := HouseRules{} // no commission: the banker wins the whole stake
	if s, err := SettleChemin(math.MaxInt64-100, []int64{100}, OutcomeBankWins, free, false); err != nil || s.NewBank != math.MaxInt64 {
		t.Errorf("chemin de fer, new bank MaxInt64: %+v, %v", s, err)
	}
	if _, err := SettleChemin(math.MaxInt64-99, []int64{100}, OutcomeBankWins, free, false); !errors.Is(err, ErrOverflow) {
		t.Errorf("chemin de fer, new bank MaxInt64+1: %v, want ErrOverflow", err)
	}
	right := []BanqueBet{{On: TableRight, Amount: 100}}
	if s, err := SettleBanque(math.MaxInt64-100, right, OutcomeBankWins, OutcomeStandOff); err != nil || s.NewBank != math.MaxInt64 {
		t.Errorf("banque, new bank MaxInt64: %+v, %v", s, err)
	}
	if _, err := SettleBanque(math.MaxInt64-99, right, OutcomeBankWins, OutcomeStandOff); !errors.Is(err, ErrOverflow) {
		t.Errorf("banque, new bank MaxInt64+1: %v, want ErrOverflow", err)
	}
	// Bets that total exactly MaxInt64 are added up without overflow.
	all := []BanqueBet{{On: TableRight, Amount: math.MaxInt64 - 1}, {On: TableLeft, Amount: 1}}
	if s, err := SettleBanque(math.MaxInt64, all, OutcomeStandOff, OutcomeStandOff); err != nil || s.NewBank != math.MaxInt64 {
		t.Errorf("banque, bets totalling MaxInt64: %+v, %v", s, err)
	}
}

// OLD-DECKS's 16 punters settle; OLD-STAKE's refusal says the bank needed
// (double the stakes).
func TestOLDSettleBounds(t *testing.T) {
	for n, ok := range map[int]bool{1: false, 2: true, 16: true, 17: false} {
		stakes, results := make([]int64, n), make([]Outcome, n)
		for i := range stakes {
			stakes[i], results[i] = 10, OutcomeBankWins
		}
		if _, err := SettleOldResults(stakes, results, false); (err == nil) != ok {
			t.Errorf("%d punters: %v, want settled %v", n, err, ok)
		}
	}
	_, err := OldBankAfter(100, []int64{30, 30}, 0)
	if !errors.Is(err, ErrBetsExceedBank) || !strings.Contains(err.Error(), "need a bank of 120") {
		t.Errorf("stakes of 60 on a bank of 100: %v, want ErrBetsExceedBank needing 120", err)
	}
	// The banker's net runs from losing every stake to winning every one.
	for net, want := range map[int64]int64{-50: 50, 0: 100, 50: 150} {
		if got, err := OldBankAfter(100, []int64{20, 30}, net); err != nil || got != want {
			t.Errorf("OldBankAfter(100, [20 30], %d) = %d, %v; want %d", net, got, err, want)
		}
	}
	if got, err := OldBankAfter(math.MaxInt64-50, []int64{20, 30}, 50); err != nil || got != math.MaxInt64 {
		t.Errorf("a new bank of MaxInt64: %d, %v", got, err)
	}
	if _, err := OldBankAfter(math.MaxInt64-49, []int64{20, 30}, 50); !errors.Is(err, ErrOverflow) {
		t.Errorf("a new bank of MaxInt64+1: %v, want ErrOverflow", err)
	}
	for _, net := range []int64{-51, 51} {
		if _, err := OldBankAfter(100, []int64{20, 30}, net); !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("OldBankAfter(100, [20 30], %d): %v, want ErrInvalidAmount", net, err)
		}
	}
	if _, err := OldBankAfter(0, []int64{0, 0}, 0); !errors.Is(err, ErrInvalidAmount) {
		t.Errorf("a bank of 0: %v, want ErrInvalidAmount", err)
	}
}

// OLD-DRAW: a hand that drew may not also have declined, and a hand over
// 3 (a rank of 4..9) may not draw. Seat 1 draws first (OldDrawOrder(2)).
func TestOLDDrawRefusals(t *testing.T) {
	banker := cards("2D 4D") // 6: no natural anywhere
	legal := OldCoup{Punters: [][]Card{cards("2C 3C"), cards("5C 5D 2H")}, Banker: banker}
	if _, err := NextStepOld(legal); err != nil {
		t.Fatalf("seat 1 (10 points, rank 0) drew, seat 0 (5) had no draw: %v", err)
	}
	for name, c := range map[string]OldCoup{
		"drew and stood": {Punters: [][]Card{cards("2C 3C"), cards("5C 5D 2H")}, Banker: banker, Stood: []bool{false, true}},
		"drew on 5":      {Punters: [][]Card{cards("2C 3C 2S"), cards("5C 5D 2H")}, Banker: banker},
	} {
		if _, err := NextStepOld(c); !errors.Is(err, ErrIllegalState) {
			t.Errorf("%s: %v, want ErrIllegalState", name, err)
		}
	}
}

// The house's totals reach MaxInt64 (and MinInt64) exactly without an
// overflow; one more overflows.
func TestTotalHouseAtTheEdge(t *testing.T) {
	const top = math.MaxInt64
	for name, tt := range map[string]struct {
		results []StakeResult
		ok      bool
	}{
		"commission to MaxInt64":   {[]StakeResult{{Commission: top - 1}, {Commission: 1}}, true},
		"commission past MaxInt64": {[]StakeResult{{Commission: top}, {Commission: 1}}, false},
		"house net to MaxInt64":    {[]StakeResult{{Lost: top - 1}, {Lost: 1}}, true},
		"house net past MaxInt64":  {[]StakeResult{{Lost: top}, {Lost: 1}}, false},
		"house net to MinInt64":    {[]StakeResult{{Won: top}, {Won: 1}}, true},
		"house net past MinInt64":  {[]StakeResult{{Won: top}, {Won: 1}, {Won: 1}}, false},
	} {
		_, err := TotalHouse(tt.results)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrOverflow)) {
			t.Errorf("%s: %v, want ok %v", name, err, tt.ok)
		}
	}
	// OLD-STAKE: the banker covers double the stakes, so their total may
	// reach MaxInt64/2 and no more.
	if total, err := oldCover([]int64{top/2 - 1, 1}); err != nil || total != top/2 {
		t.Errorf("oldCover to MaxInt64/2: %d, %v", total, err)
	}
	if _, err := oldCover([]int64{top / 2, 1}); !errors.Is(err, ErrOverflow) {
		t.Errorf("oldCover past MaxInt64/2: %v, want ErrOverflow", err)
	}
}
