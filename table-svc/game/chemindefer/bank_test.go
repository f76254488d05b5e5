package chemindefer

import "testing"

// TestKeptBank: once a coup is settled the banker who keeps his bank
// (CF-HOLD) has his limits asked again for his whole bank (the part set
// aside by the house limit too) while the next coup has no bet; he gives
// it up by passing it (CF-PASS).
func TestKeptBank(t *testing.T) {
	kept := State{Phase: PhaseBetting, BankerID: "a", Bank: 500, Rules: Rules{HouseLimit: 200}, Coup: &Coup{ID: "c2"}}
	banker, bank, giveUp, ok := KeptBank(kept)
	if banker != "a" || bank != 500 || giveUp != (PassBank{PlayerID: "a"}) || !ok {
		t.Errorf("kept: %q %d %v %v, want a 500 PassBank true", banker, bank, giveUp, ok)
	}
	for _, c := range []struct {
		name string
		edit func(*State)
	}{
		{"no banker", func(s *State) { s.BankerID = "" }},
		{"the bank offered (lost)", func(s *State) { s.Phase = PhaseOffering }},
		{"no coup", func(s *State) { s.Coup = nil }},
		{"a bet already", func(s *State) { s.Coup.Bets = []Bet{{PlayerID: "b", Amount: 100}} }},
		{"an empty bank", func(s *State) { s.Bank = 0 }},
	} {
		s := kept
		s.Coup = &Coup{ID: "c2"}
		c.edit(&s)
		if banker, bank, giveUp, ok := KeptBank(s); ok || banker != "" || bank != 0 || giveUp != nil {
			t.Errorf("%s: %q %d %v %v, want nothing", c.name, banker, bank, giveUp, ok)
		}
	}
}
