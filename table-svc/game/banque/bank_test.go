package banque

import "testing"

// TestKeptBank: once a coup is settled a player banker keeping his bank
// (BQ-BANK) has his limits asked again while the next coup has no bet; he
// gives it up by passing it (auctioned again). A house bank is not asked.
func TestKeptBank(t *testing.T) {
	for _, coup := range []*Coup{nil, {ID: "c2"}} {
		banker, bank, giveUp, ok := KeptBank(State{Phase: PhaseBetting, Banker: "bk", Bank: 1000, Coup: coup})
		if banker != "bk" || bank != 1000 || giveUp != (PassBank{PlayerID: "bk"}) || !ok {
			t.Errorf("coup %v: %q %d %v %v, want bk 1000 PassBank true", coup, banker, bank, giveUp, ok)
		}
	}
	for _, c := range []struct {
		name string
		s    State
	}{
		{"a house bank", State{Phase: PhaseBetting, Coup: &Coup{ID: "c2"}}},
		{"the bank auctioned", State{Phase: PhaseAuction, Banker: "bk", Bank: 1000}},
		{"a bet already", State{Phase: PhaseBetting, Banker: "bk", Bank: 1000, Coup: &Coup{ID: "c2", Bets: []Bet{{PlayerID: "r", Amount: 10}}}}},
		{"an empty bank", State{Phase: PhaseBetting, Banker: "bk"}},
	} {
		if banker, bank, giveUp, ok := KeptBank(c.s); ok || banker != "" || bank != 0 || giveUp != nil {
			t.Errorf("%s: %q %d %v %v, want nothing", c.name, banker, bank, giveUp, ok)
		}
	}
}
