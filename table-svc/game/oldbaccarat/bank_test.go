package oldbaccarat

import "testing"

// TestKeptBank: once a coup is settled the banker keeping his bank has
// his limits asked again while the next coup has no stake; he never has
// to give up the bank (OLD-BACCARAT), so he gives it up by leaving.
func TestKeptBank(t *testing.T) {
	for _, coup := range []*Coup{nil, {ID: "c2"}} {
		banker, bank, giveUp, ok := KeptBank(State{Phase: PhaseStaking, BankerID: "bk", Bank: 800, Coup: coup})
		if banker != "bk" || bank != 800 || giveUp != (Leave{PlayerID: "bk"}) || !ok {
			t.Errorf("coup %v: %q %d %v %v, want bk 800 Leave true", coup, banker, bank, giveUp, ok)
		}
	}
	for _, c := range []struct {
		name string
		s    State
	}{
		{"no banker", State{Phase: PhaseStaking}},
		{"the bank offered after a baccarat", State{Phase: PhaseOffering, BankerID: "bk", Bank: 800, OfferedTo: "a"}},
		{"a stake already", State{Phase: PhaseStaking, BankerID: "bk", Bank: 800, Coup: &Coup{ID: "c2", Hands: []Hand{{PlayerID: "a", Stake: 100}}}}},
		{"an empty bank", State{Phase: PhaseStaking, BankerID: "bk"}},
	} {
		if banker, bank, giveUp, ok := KeptBank(c.s); ok || banker != "" || bank != 0 || giveUp != nil {
			t.Errorf("%s: %q %d %v %v, want nothing", c.name, banker, bank, giveUp, ok)
		}
	}
}
