package puntobanco

import (
	"slices"
	"testing"
)

// TestIdleRule: who is seated, who may be stood up now, and nobody has a
// bank to give up (the house banks, PB-BANK).
func TestIdleRule(t *testing.T) {
	seats := []Seat{{PlayerID: "a", Number: 1}, {PlayerID: "b", Number: 2}, {PlayerID: "c", Number: 3}}
	all := []string{"a", "b", "c"}
	if got := Seated(State{Seats: seats}); !slices.Equal(got, all) {
		t.Errorf("seated %v, want %v", got, all)
	}
	for _, c := range []struct {
		name string
		s    State
		want []string
	}{
		{"betting, no coup yet", State{Phase: PhaseBetting, Seats: seats}, all},
		{"betting, a bet", State{Phase: PhaseBetting, Seats: seats, Coup: &Coup{Bets: []Bet{{PlayerID: "a", Spot: SpotBank, Amount: 100}}}},
			[]string{"b", "c"}},
		{"the result's pause", State{Phase: PhaseResult, Seats: seats, LastCoup: &Coup{Bets: []Bet{{PlayerID: "a"}}}}, all},
		{"dealing", State{Phase: PhaseDealing, Seats: seats, Coup: &Coup{}}, nil},
		{"settling", State{Phase: PhaseSettling, Seats: seats, Coup: &Coup{}}, nil},
		{"closed", State{Phase: PhaseClosed, Seats: seats}, nil},
	} {
		if got := Standable(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: standable %v, want %v", c.name, got, c.want)
		}
	}
	if cmd := GiveUpBank(State{Phase: PhaseBetting, Seats: seats}, "a"); cmd != nil {
		t.Errorf("a player gives up a bank with %v", cmd)
	}
}
