package rules

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"
)

func TestCFBankWinsCommission(t *testing.T) {
	tests := []struct {
		winnings, bp int64
		down, half   int64
		up           int64
	}{
		{1000, 500, 50, 50, 50},
		{1001, 500, 50, 50, 51}, // 50.05
		{1009, 500, 50, 50, 51}, // 50.45
		{1010, 500, 50, 51, 51}, // 50.5: half rounds up
		{1019, 500, 50, 51, 51}, // 50.95
		{1020, 500, 51, 51, 51}, // 51
		{1, 500, 0, 0, 1},       // 0.05
		{10, 500, 0, 1, 1},      // 0.5
		{19, 500, 0, 1, 1},      // 0.95
		{12345, 0, 0, 0, 0},     // no commission
		{12345, 10000, 12345, 12345, 12345},
		{12345, 1, 1, 1, 2},        // 1.2345
		{9999, 250, 249, 250, 250}, // 249.975
		{0, 500, 0, 0, 0},
	}
	for _, tt := range tests {
		for _, m := range []struct {
			r    Rounding
			want int64
		}{{RoundDown, tt.down}, {0, tt.down}, {RoundHalfUp, tt.half}, {RoundUp, tt.up}} {
			if got := Commission(tt.winnings, tt.bp, m.r); got != m.want {
				t.Errorf("Commission(%d, %d bp, %v) = %d, want %d", tt.winnings, tt.bp, m.r, got, m.want)
			}
		}
	}
	// Out-of-range arguments give no commission.
	for _, a := range [][2]int64{{-5, 500}, {1000, -1}, {1000, 10001}} {
		if got := Commission(a[0], a[1], RoundUp); got != 0 {
			t.Errorf("Commission(%d, %d) = %d, want 0", a[0], a[1], got)
		}
	}
}

// TestCFBankWinsCommissionExact compares Commission with exact big-integer
// arithmetic, including winnings where winnings*bp overflows int64.
func TestCFBankWinsCommissionExact(t *testing.T) {
	ws := []int64{1, 9999, 10000, 10001, 123456789, 1 << 50, math.MaxInt64 / 10000, math.MaxInt64 - 1, math.MaxInt64}
	bps := []int64{0, 1, 499, 500, 5000, 9999, 10000}
	for _, w := range ws {
		for _, bp := range bps {
			num := new(big.Int).Mul(big.NewInt(w), big.NewInt(bp))
			q, r := new(big.Int).QuoRem(num, big.NewInt(10000), new(big.Int))
			down := q.Int64()
			half, up := down, down
			if r.Sign() > 0 {
				up++
			}
			if r.Int64()*2 >= 10000 {
				half++
			}
			for _, m := range []struct {
				r    Rounding
				want int64
			}{{RoundDown, down}, {RoundHalfUp, half}, {RoundUp, up}} {
				if got := Commission(w, bp, m.r); got != m.want {
					t.Errorf("Commission(%d, %d, %v) = %d, want %d", w, bp, m.r, got, m.want)
				}
			}
		}
	}
}

func TestSettleChemin(t *testing.T) {
	def := DefaultHouseRules()
	halfUp := def
	halfUp.CommissionRounding = RoundHalfUp
	up := def
	up.CommissionRounding = RoundUp
	zero := def
	zero.CommissionRounding = 0

	tests := []struct {
		name    string
		bank    int64
		bets    []int64
		outcome Outcome
		hr      HouseRules
		exempt  bool
		want    Settlement
	}{
		{
			name: "CF-BANK-WINS 5% of 1000", bank: 1000, bets: []int64{600, 400}, outcome: OutcomeBankWins, hr: def,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0, 0}, Lost: []int64{600, 400},
				BankerWinnings: 1000, Commission: 50, BankerNet: 950, NewBank: 1950},
		},
		{
			name: "CF-BANK-WINS 1001 rounds down", bank: 2000, bets: []int64{1001}, outcome: OutcomeBankWins, hr: def,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0}, Lost: []int64{1001},
				BankerWinnings: 1001, Commission: 50, BankerNet: 951, NewBank: 2951},
		},
		{
			name: "CF-BANK-WINS zero rounding is down", bank: 2000, bets: []int64{1001}, outcome: OutcomeBankWins, hr: zero,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0}, Lost: []int64{1001},
				BankerWinnings: 1001, Commission: 50, BankerNet: 951, NewBank: 2951},
		},
		{
			name: "CF-BANK-WINS 1001 half-up", bank: 2000, bets: []int64{1001}, outcome: OutcomeBankWins, hr: halfUp,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0}, Lost: []int64{1001},
				BankerWinnings: 1001, Commission: 50, BankerNet: 951, NewBank: 2951},
		},
		{
			name: "CF-BANK-WINS 1001 up", bank: 2000, bets: []int64{1001}, outcome: OutcomeBankWins, hr: up,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0}, Lost: []int64{1001},
				BankerWinnings: 1001, Commission: 51, BankerNet: 950, NewBank: 2950},
		},
		{
			name: "CF-BANK-WINS 1010 half-up", bank: 1010, bets: []int64{1000, 10}, outcome: OutcomeBankWins, hr: halfUp,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0, 0}, Lost: []int64{1000, 10},
				BankerWinnings: 1010, Commission: 51, BankerNet: 959, NewBank: 1969},
		},
		{
			name: "CF-BANK-WINS commission on the total, not per bet", bank: 100, bets: []int64{10, 10}, outcome: OutcomeBankWins, hr: halfUp,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0, 0}, Lost: []int64{10, 10},
				BankerWinnings: 20, Commission: 1, BankerNet: 19, NewBank: 119},
		},
		{
			name: "CF-BANK-WINS first_coup_exempt", bank: 1000, bets: []int64{1000}, outcome: OutcomeBankWins, hr: def, exempt: true,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0}, Lost: []int64{1000},
				BankerWinnings: 1000, Commission: 0, BankerNet: 1000, NewBank: 2000},
		},
		{
			name: "CF-BANK-WINS commission_bp 0", bank: 1000, bets: []int64{700}, outcome: OutcomeBankWins, hr: HouseRules{},
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0}, Lost: []int64{700},
				BankerWinnings: 700, Commission: 0, BankerNet: 700, NewBank: 1700},
		},
		{
			name: "CF-UNCOVERED bank wins on a partly covered bank", bank: 5000, bets: []int64{300, 200}, outcome: OutcomeBankWins, hr: def,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{0, 0}, Lost: []int64{300, 200},
				BankerWinnings: 500, Commission: 25, BankerNet: 475, NewBank: 5475},
		},
		{
			name: "CF-BANK-LOSES even money", bank: 1000, bets: []int64{600, 400}, outcome: OutcomeBankLoses, hr: def,
			want: Settlement{Outcome: OutcomeBankLoses, Payouts: []int64{600, 400}, Lost: []int64{0, 0},
				BankerNet: -1000, NewBank: 0},
		},
		{
			name: "CF-UNCOVERED bank loses keeps the uncovered part", bank: 5000, bets: []int64{300, 200}, outcome: OutcomeBankLoses, hr: def,
			want: Settlement{Outcome: OutcomeBankLoses, Payouts: []int64{300, 200}, Lost: []int64{0, 0},
				BankerNet: -500, NewBank: 4500},
		},
		{
			name: "CF-BANK-LOSES no commission even when not exempt", bank: 1000, bets: []int64{1000}, outcome: OutcomeBankLoses, hr: up,
			want: Settlement{Outcome: OutcomeBankLoses, Payouts: []int64{1000}, Lost: []int64{0},
				BankerNet: -1000, NewBank: 0},
		},
		{
			name: "CF-STANDOFF bets returned", bank: 1000, bets: []int64{600, 400}, outcome: OutcomeStandOff, hr: def,
			want: Settlement{Outcome: OutcomeStandOff, Payouts: []int64{0, 0}, Lost: []int64{0, 0}, NewBank: 1000},
		},
		{
			name: "no bets", bank: 1000, bets: nil, outcome: OutcomeBankWins, hr: def,
			want: Settlement{Outcome: OutcomeBankWins, Payouts: []int64{}, Lost: []int64{}, NewBank: 1000},
		},
		{
			name: "largest bank, covered, bank loses", bank: math.MaxInt64, bets: []int64{math.MaxInt64}, outcome: OutcomeBankLoses, hr: def,
			want: Settlement{Outcome: OutcomeBankLoses, Payouts: []int64{math.MaxInt64}, Lost: []int64{0},
				BankerNet: -math.MaxInt64, NewBank: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bets := slices.Clone(tt.bets)
			got, err := SettleChemin(tt.bank, bets, tt.outcome, tt.hr, tt.exempt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bets, tt.bets) {
				t.Errorf("bets modified: %v", bets)
			}
			if got.Outcome != tt.want.Outcome || !slices.Equal(got.Payouts, tt.want.Payouts) || !slices.Equal(got.Lost, tt.want.Lost) ||
				got.BankerWinnings != tt.want.BankerWinnings || got.Commission != tt.want.Commission ||
				got.BankerNet != tt.want.BankerNet || got.NewBank != tt.want.NewBank {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			checkSettlementInvariants(t, tt.bank, tt.bets, got)
		})
	}
}

// checkSettlementInvariants checks the identities every settlement keeps.
func checkSettlementInvariants(t *testing.T, bank int64, bets []int64, s Settlement) {
	t.Helper()
	var covered, paid, lost int64
	for i, b := range bets {
		covered += b
		paid += s.Payouts[i]
		lost += s.Lost[i]
		if s.Payouts[i] != 0 && s.Lost[i] != 0 {
			t.Errorf("bet %d both paid and lost", i)
		}
	}
	if s.BankerWinnings != lost {
		t.Errorf("BankerWinnings %d != sum(Lost) %d", s.BankerWinnings, lost)
	}
	if s.BankerNet != s.BankerWinnings-s.Commission-paid {
		t.Errorf("BankerNet %d != %d - %d - %d", s.BankerNet, s.BankerWinnings, s.Commission, paid)
	}
	if s.NewBank != bank+s.BankerNet {
		t.Errorf("NewBank %d != %d + %d", s.NewBank, bank, s.BankerNet)
	}
	// Source: RULES.md CF-UNCOVERED
	if s.NewBank < bank-covered {
		t.Errorf("NewBank %d touched the uncovered part %d", s.NewBank, bank-covered)
	}
	if s.Commission < 0 || s.Commission > s.BankerWinnings {
		t.Errorf("commission %d of %d", s.Commission, s.BankerWinnings)
	}
}

func TestSettleCheminErrors(t *testing.T) {
	def := DefaultHouseRules()
	badBP, negBP, badRounding := def, def, def
	badBP.CommissionBP = 10001
	negBP.CommissionBP = -1
	badRounding.CommissionRounding = 9
	tests := []struct {
		name    string
		bank    int64
		bets    []int64
		outcome Outcome
		hr      HouseRules
		exempt  bool
		want    error
	}{
		{"zero bank", 0, []int64{1}, OutcomeBankWins, def, false, ErrInvalidAmount},
		{"negative bank", -100, nil, OutcomeBankWins, def, false, ErrInvalidAmount},
		{"zero bet", 100, []int64{10, 0}, OutcomeBankWins, def, false, ErrInvalidAmount},
		{"negative bet", 100, []int64{-10}, OutcomeBankLoses, def, false, ErrInvalidAmount},
		{"CF-BET-LIMIT bets exceed bank", 100, []int64{60, 41}, OutcomeBankLoses, def, false, ErrBetsExceedBank},
		{"CF-BET-LIMIT one bet exceeds bank", 100, []int64{101}, OutcomeStandOff, def, false, ErrBetsExceedBank},
		{"zero outcome", 100, []int64{10}, 0, def, false, ErrInvalidOutcome},
		{"unknown outcome", 100, []int64{10}, 4, def, false, ErrInvalidOutcome},
		{"commission_bp above 10000", 100, []int64{10}, OutcomeBankWins, badBP, false, ErrInvalidHouseRules},
		{"commission_bp negative", 100, []int64{10}, OutcomeBankWins, negBP, true, ErrInvalidHouseRules},
		{"unknown rounding", 100, []int64{10}, OutcomeStandOff, badRounding, false, ErrInvalidHouseRules},
		{"bets total overflows", math.MaxInt64, []int64{math.MaxInt64, 1}, OutcomeBankWins, def, false, ErrOverflow},
		{"new bank overflows", math.MaxInt64, []int64{math.MaxInt64}, OutcomeBankWins, def, true, ErrOverflow},
		{"new bank overflows after commission", math.MaxInt64 - 10, []int64{1000}, OutcomeBankWins, def, false, ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SettleChemin(tt.bank, tt.bets, tt.outcome, tt.hr, tt.exempt)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if got.Payouts != nil || got.Lost != nil || got.NewBank != 0 {
				t.Errorf("settlement %+v returned with an error", got)
			}
		})
	}
}

func TestHouseRulesDefault(t *testing.T) {
	want := HouseRules{BankerOption3vs9: true, BankerOption5vs4: true, BancoFreePlay: false, CommissionBP: 500, CommissionRounding: RoundDown}
	if got := DefaultHouseRules(); got != want {
		t.Errorf("DefaultHouseRules() = %+v, want %+v", got, want)
	}
	if err := DefaultHouseRules().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	for r, want := range map[Rounding]string{0: "down", RoundDown: "down", RoundHalfUp: "half_up", RoundUp: "up", 7: "invalid"} {
		if r.String() != want {
			t.Errorf("Rounding(%d) = %q, want %q", int(r), r.String(), want)
		}
	}
}

func BenchmarkSettleChemin(b *testing.B) {
	hr := DefaultHouseRules()
	bets := []int64{5000, 2500, 1250, 625, 313}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SettleChemin(10000, bets, OutcomeBankWins, hr, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCFUncoveredAndBankLimit: the uncovered part of the bank
// (CF-UNCOVERED) and the house betting limit on the bank after the coup
// (CF-BANK-LIMIT), worked by hand.
func TestCFUncoveredAndBankLimit(t *testing.T) {
	for _, tt := range []struct {
		name           string
		bank           int64
		bets           []int64
		outcome        Outcome
		uncovered      int64
		newBank        int64
		limit          int64
		kept, setAside int64
	}{
		// 5000 - 300 - 200 = 4500 uncovered; the bank wins 500, 5% = 25:
		// new bank 5000 + 475 = 5475; a limit of 5000 sets 475 aside.
		{"bank wins over the limit", 5000, []int64{300, 200}, OutcomeBankWins, 4500, 5475, 5000, 5000, 475},
		{"no limit", 5000, []int64{300, 200}, OutcomeBankWins, 4500, 5475, 0, 5475, 0},
		{"under the limit", 5000, []int64{300, 200}, OutcomeBankWins, 4500, 5475, 6000, 5475, 0},
		{"exactly the limit", 5000, []int64{300, 200}, OutcomeBankWins, 4500, 5475, 5475, 5475, 0},
		// Fully covered and lost: nothing uncovered, nothing left.
		{"bank lost", 1000, []int64{1000}, OutcomeBankLoses, 0, 0, 500, 0, 0},
		// A stand-off: 1000 - 250 = 750 uncovered, the bank unchanged;
		// a limit of 800 sets 200 aside.
		{"stand-off over the limit", 1000, []int64{250}, OutcomeStandOff, 750, 1000, 800, 800, 200},
	} {
		s, err := SettleChemin(tt.bank, tt.bets, tt.outcome, DefaultHouseRules(), false)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if s.Uncovered != tt.uncovered || s.NewBank != tt.newBank {
			t.Errorf("%s: uncovered %d, new bank %d; want %d, %d", tt.name, s.Uncovered, s.NewBank, tt.uncovered, tt.newBank)
		}
		if kept, aside := BankLimit(s.NewBank, tt.limit); kept != tt.kept || aside != tt.setAside {
			t.Errorf("%s: BankLimit(%d, %d) = %d, %d; want %d, %d", tt.name, s.NewBank, tt.limit, kept, aside, tt.kept, tt.setAside)
		}
	}
}
