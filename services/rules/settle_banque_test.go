package rules

import (
	"errors"
	"reflect"
	"testing"
)

// TestSettleBanqueCoup: hand-worked banque settlements (BQ-BETS,
// BQ-CHEVAL, BQ-BANK), with a player's bank and with the house's, with and
// without the house's commission. Every expected amount is worked out in
// the comment beside it, not by the code under test.
func TestSettleBanqueCoup(t *testing.T) {
	bets := []BanqueBet{{TableRight, 300}, {TableLeft, 200}, {TableBoth, 100}}
	tests := []struct {
		name        string
		bank        int64
		bets        []BanqueBet
		right, left Outcome
		hr          HouseRules
		// won and lost per bet; returned per bet
		won, lost []int64
		returned  []bool
		want      BanqueSettlement // the totals only
	}{
		{
			// The bank beats the right (takes 300), loses to the left (pays
			// 200); à cheval is returned (BQ-CHEVAL). Winnings 300-200 = 100;
			// no commission; 1000-600 = 400 uncovered; new bank 1100.
			name: "player's bank, split result, no commission", bank: 1000, bets: bets,
			right: OutcomeBankWins, left: OutcomeBankLoses,
			won: []int64{0, 200, 0}, lost: []int64{300, 0, 0}, returned: []bool{false, false, true},
			want: BanqueSettlement{BankerWinnings: 100, Commission: 0, BankerNet: 100, Uncovered: 400, NewBank: 1100},
		},
		{
			// As above with 5%: 5% of 100 = 5 exactly; net 95; new bank 1095.
			name: "player's bank, 5% commission", bank: 1000, bets: bets,
			right: OutcomeBankWins, left: OutcomeBankLoses, hr: HouseRules{CommissionBP: 500},
			won: []int64{0, 200, 0}, lost: []int64{300, 0, 0}, returned: []bool{false, false, true},
			want: BanqueSettlement{BankerWinnings: 100, Commission: 5, BankerNet: 95, Uncovered: 400, NewBank: 1095},
		},
		{
			// The bank beats both: it takes 300 + 200 + 100 = 600; 5% of
			// 600 = 30; net 570; uncovered 600-600 = 0; new bank 1170.
			name: "bank beats both hands, cheval lost", bank: 600, bets: bets,
			right: OutcomeBankWins, left: OutcomeBankWins, hr: HouseRules{CommissionBP: 500},
			won: []int64{0, 0, 0}, lost: []int64{300, 200, 100}, returned: []bool{false, false, false},
			want: BanqueSettlement{BankerWinnings: 600, Commission: 30, BankerNet: 570, Uncovered: 0, NewBank: 1170},
		},
		{
			// The bank loses to both: it pays 600 (à cheval paid once);
			// no commission on a loss; new bank 1000-600 = 400.
			name: "bank loses both hands, cheval paid once", bank: 1000, bets: bets,
			right: OutcomeBankLoses, left: OutcomeBankLoses, hr: HouseRules{CommissionBP: 500, CommissionRounding: RoundUp},
			won: []int64{300, 200, 100}, lost: []int64{0, 0, 0}, returned: []bool{false, false, false},
			want: BanqueSettlement{BankerWinnings: -600, Commission: 0, BankerNet: -600, Uncovered: 400, NewBank: 400},
		},
		{
			// Stand-off on both: every bet returned, nothing moves.
			name: "two stand-offs", bank: 1000, bets: bets,
			right: OutcomeStandOff, left: OutcomeStandOff, hr: HouseRules{CommissionBP: 500},
			won: []int64{0, 0, 0}, lost: []int64{0, 0, 0}, returned: []bool{true, true, true},
			want: BanqueSettlement{Uncovered: 400, NewBank: 1000},
		},
		{
			// The house's bank (0): it takes 150 and 49 = 199; 5% of 199 =
			// 9.95: down 9; no uncovered part, no new bank.
			name: "house bank, 9.95 rounds down", bank: 0,
			bets:  []BanqueBet{{TableRight, 150}, {TableBoth, 49}},
			right: OutcomeBankWins, left: OutcomeBankWins, hr: HouseRules{CommissionBP: 500},
			won: []int64{0, 0}, lost: []int64{150, 49}, returned: []bool{false, false},
			want: BanqueSettlement{BankerWinnings: 199, Commission: 9, BankerNet: 190},
		},
		{
			// 9.95 half up: 10.
			name: "house bank, 9.95 rounds half up", bank: 0,
			bets:  []BanqueBet{{TableRight, 150}, {TableBoth, 49}},
			right: OutcomeBankWins, left: OutcomeBankWins, hr: HouseRules{CommissionBP: 500, CommissionRounding: RoundHalfUp},
			won: []int64{0, 0}, lost: []int64{150, 49}, returned: []bool{false, false},
			want: BanqueSettlement{BankerWinnings: 199, Commission: 10, BankerNet: 189},
		},
		{
			// 2.5% of 41 = 1.025: up 2, half up 1.
			name: "house bank, 1.025 rounds up", bank: 0,
			bets:  []BanqueBet{{TableLeft, 41}},
			right: OutcomeBankLoses, left: OutcomeBankWins, hr: HouseRules{CommissionBP: 250, CommissionRounding: RoundUp},
			won: []int64{0}, lost: []int64{41}, returned: []bool{false},
			want: BanqueSettlement{BankerWinnings: 41, Commission: 2, BankerNet: 39},
		},
		{
			name: "house bank, 1.025 rounds half up", bank: 0,
			bets:  []BanqueBet{{TableLeft, 41}},
			right: OutcomeBankLoses, left: OutcomeBankWins, hr: HouseRules{CommissionBP: 250, CommissionRounding: RoundHalfUp},
			won: []int64{0}, lost: []int64{41}, returned: []bool{false},
			want: BanqueSettlement{BankerWinnings: 41, Commission: 1, BankerNet: 40},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SettleBanqueCoup(tt.bank, tt.bets, tt.right, tt.left, tt.hr)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range got.Bets {
				if r.Won != tt.won[i] || r.Lost != tt.lost[i] || r.Returned != tt.returned[i] || r.Commission != 0 {
					t.Errorf("bet %d: %+v, want won %d lost %d returned %t", i, r, tt.won[i], tt.lost[i], tt.returned[i])
				}
			}
			got.Bets = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if tt.hr == (HouseRules{}) && tt.bank > 0 {
				// Without a commission SettleBanque is the same settlement.
				plain, err := SettleBanque(tt.bank, tt.bets, tt.right, tt.left)
				if err != nil || plain.NewBank != tt.want.NewBank || plain.BankerNet != tt.want.BankerNet {
					t.Errorf("SettleBanque: %+v, %v", plain, err)
				}
			}
		})
	}
}

func TestSettleBanqueCoupErrors(t *testing.T) {
	one := []BanqueBet{{TableRight, 100}}
	for _, tt := range []struct {
		name        string
		bank        int64
		bets        []BanqueBet
		right, left Outcome
		hr          HouseRules
		want        error
	}{
		{"negative bank", -1, one, OutcomeBankWins, OutcomeBankWins, HouseRules{}, ErrInvalidAmount},
		{"zero bet", 100, []BanqueBet{{TableLeft, 0}}, OutcomeBankWins, OutcomeBankWins, HouseRules{}, ErrInvalidAmount},
		{"bets over the bank", 150, []BanqueBet{{TableRight, 100}, {TableBoth, 51}}, OutcomeBankWins, OutcomeBankWins, HouseRules{}, ErrBetsExceedBank},
		{"no table", 100, []BanqueBet{{0, 10}}, OutcomeBankWins, OutcomeBankWins, HouseRules{}, ErrInvalidOutcome},
		{"no outcome", 100, one, 0, OutcomeBankWins, HouseRules{}, ErrInvalidOutcome},
		{"commission over 100%", 100, one, OutcomeBankWins, OutcomeBankWins, HouseRules{CommissionBP: 10001}, ErrInvalidHouseRules},
		{"bets overflow", 0, []BanqueBet{{TableRight, 1 << 62}, {TableLeft, 1 << 62}}, OutcomeBankWins, OutcomeBankWins, HouseRules{}, ErrOverflow},
	} {
		if _, err := SettleBanqueCoup(tt.bank, tt.bets, tt.right, tt.left, tt.hr); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// A house bank has no cover: any total settles.
	if s, err := SettleBanqueCoup(0, []BanqueBet{{TableRight, 1 << 40}}, OutcomeBankLoses, OutcomeBankWins, HouseRules{}); err != nil ||
		s.Bets[0].Won != 1<<40 || s.NewBank != 0 {
		t.Errorf("house bank: %+v, %v", s, err)
	}
}
