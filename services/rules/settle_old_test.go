package rules

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// TestOldOutcome: OLD-RANK comparisons worked by hand (points modulo 10, 9
// best, baccarat 0 worst), from the bank's side.
func TestOldOutcome(t *testing.T) {
	for _, tt := range []struct {
		punter, banker int
		want           Outcome
	}{
		{17, 27, OutcomeStandOff},  // 7 and 7
		{19, 8, OutcomeBankLoses},  // 9 beats 8
		{8, 19, OutcomeBankWins},   // 8 loses to 9
		{20, 10, OutcomeStandOff},  // baccarat and baccarat
		{21, 30, OutcomeBankLoses}, // 1 beats baccarat
		{29, 9, OutcomeStandOff},   // 9 and 9
		{12, 13, OutcomeBankWins},  // 2 loses to 3
	} {
		if got := OldOutcome(tt.punter, tt.banker); got != tt.want {
			t.Errorf("OldOutcome(%d, %d) = %v, want %v", tt.punter, tt.banker, got, tt.want)
		}
	}
}

// TestSettleOldResults: the money of OLD coups from the results, worked by
// hand (OLD-SETTLE, OLD-NATURAL, OLD-STAKE).
func TestSettleOldResults(t *testing.T) {
	tie, lost, won := OutcomeStandOff, OutcomeBankWins, OutcomeBankLoses
	for _, tt := range []struct {
		name    string
		bank    int64
		stakes  []int64
		results []Outcome
		natural bool
		want    OldSettlement
	}{
		{
			// 002's three-way split: 100 and 300 tie the banker; the pool
			// 100+300 + 2*100+2*300 = 1200 in three is 400 each, so the
			// 100 gains 300 and the 300 gains 100; the 200 beats him (+200).
			// The banker: 400 - 800 (his double) - 200 = -600; 1500 - 600 = 900.
			name: "three-way split", bank: 1500, stakes: []int64{100, 300, 200}, results: []Outcome{tie, tie, won},
			want: OldSettlement{Net: []int64{300, 100, 200}, Rule: []string{RuleOLDSettle, RuleOLDSettle, RuleOLDSettle},
				BankerNet: -600, NewBank: 900, Split: true, Pooled: []bool{true, true, false}, NextBanker: -1},
		},
		{
			// The same ties after a natural: both go to the banker (no
			// split); the 200 still wins. Banker +100 +300 -200 = +200.
			name: "ties after a natural", bank: 1500, stakes: []int64{100, 300, 200}, results: []Outcome{tie, tie, won}, natural: true,
			want: OldSettlement{Net: []int64{-100, -300, 200}, Rule: []string{RuleOLDNatural, RuleOLDNatural, RuleOLDNatural},
				BankerNet: 200, NewBank: 1700, Pooled: []bool{false, false, false}, NextBanker: -1},
		},
		{
			// One tie goes to the banker: +100 +200 = +300.
			name: "one tie", bank: 600, stakes: []int64{100, 200}, results: []Outcome{tie, lost},
			want: OldSettlement{Net: []int64{-100, -200}, Rule: []string{RuleOLDSettle, RuleOLDSettle},
				BankerNet: 300, NewBank: 900, Pooled: []bool{false, false}, NextBanker: -1},
		},
		{
			// Three ties: no split, all to the banker: +600.
			name: "three ties", bank: 1200, stakes: []int64{100, 200, 300}, results: []Outcome{tie, tie, tie},
			want: OldSettlement{Net: []int64{-100, -200, -300}, Rule: []string{RuleOLDSettle, RuleOLDSettle, RuleOLDSettle},
				BankerNet: 600, NewBank: 1800, Pooled: []bool{false, false, false}, NextBanker: -1},
		},
		{
			// 50 and 70 tie (split: +70 and +50), 30 lost: banker
			// -70 -50 +30 = -90; cover 2*150 = 300 <= 400; 400 - 90 = 310.
			name: "split and a loss", bank: 400, stakes: []int64{50, 30, 70}, results: []Outcome{tie, lost, tie},
			want: OldSettlement{Net: []int64{70, -30, 50}, Rule: []string{RuleOLDSettle, RuleOLDSettle, RuleOLDSettle},
				BankerNet: -90, NewBank: 310, Split: true, Pooled: []bool{true, false, true}, NextBanker: -1},
		},
		{
			// Everyone beats the banker, whose bank is exactly double the
			// stakes (OLD-STAKE): he pays 300 of his 600.
			name: "the banker pays all", bank: 600, stakes: []int64{100, 200}, results: []Outcome{won, won},
			want: OldSettlement{Net: []int64{100, 200}, Rule: []string{RuleOLDSettle, RuleOLDSettle},
				BankerNet: -300, NewBank: 300, Pooled: []bool{false, false}, NextBanker: -1},
		},
	} {
		got, err := SettleOldResults(tt.stakes, tt.results, tt.natural)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.NewBank != 0 {
			t.Errorf("%s: SettleOldResults has no bank, new bank %d", tt.name, got.NewBank)
		}
		if got.NewBank, err = OldBankAfter(tt.bank, tt.stakes, got.BankerNet); err != nil {
			t.Fatalf("%s: OldBankAfter: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestSettleOldResultsErrors(t *testing.T) {
	two := []Outcome{OutcomeBankWins, OutcomeBankLoses}
	for _, tt := range []struct {
		name    string
		stakes  []int64
		results []Outcome
		want    error
	}{
		{"one punter", []int64{100}, two[:1], ErrIllegalState},
		{"seventeen punters", make([]int64, 17), make([]Outcome, 17), ErrIllegalState},
		{"results short", []int64{100, 200}, two[:1], ErrIllegalState},
		{"zero stake", []int64{100, 0}, two, ErrInvalidAmount},
		{"no result", []int64{100, 200}, []Outcome{OutcomeBankWins, 0}, ErrInvalidOutcome},
		// (MaxInt64/2 + 1) * 2 does not fit an int64.
		{"stakes overflow", []int64{math.MaxInt64 / 2, 1}, two, ErrOverflow},
	} {
		if _, err := SettleOldResults(tt.stakes, tt.results, false); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestOldBankAfter: OLD-STAKE (double the stakes) and the new bank, by
// hand.
func TestOldBankAfter(t *testing.T) {
	for _, tt := range []struct {
		name      string
		bank      int64
		stakes    []int64
		bankerNet int64
		want      int64
		err       error
	}{
		{"exactly double, banker loses all", 600, []int64{100, 200}, -300, 300, nil},
		{"banker wins all", 600, []int64{100, 200}, 300, 900, nil},
		{"split", 1500, []int64{100, 300, 200}, -600, 900, nil},
		// 2 * (100 + 200) = 600 > 599.
		{"bank under double", 599, []int64{100, 200}, 0, 0, ErrBetsExceedBank},
		{"no bank", 0, []int64{100, 200}, 0, 0, ErrInvalidAmount},
		{"zero stake", 600, []int64{100, 0}, 0, 0, ErrInvalidAmount},
		{"loss beyond the stakes", 1000, []int64{100, 200}, -301, 0, ErrInvalidAmount},
		{"gain beyond the stakes", 1000, []int64{100, 200}, 301, 0, ErrInvalidAmount},
		{"new bank overflows", math.MaxInt64, []int64{10}, 10, 0, ErrOverflow},
	} {
		got, err := OldBankAfter(tt.bank, tt.stakes, tt.bankerNet)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("%s: %d, %v; want %d, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}
