package banque

import (
	"slices"
	"testing"
)

// TestIdleRule: who is seated, who may be stood up now, and the banker
// passes his bank first (BQ-BANK).
func TestIdleRule(t *testing.T) {
	seats := []Seat{{PlayerID: "bk", Side: SideRight, Number: 1}, {PlayerID: "r1", Side: SideRight, Number: 2},
		{PlayerID: "l1", Side: SideLeft, Number: 3}, {PlayerID: "r2", Side: SideRight, Number: 4}}
	all := []string{"bk", "r1", "l1", "r2"}
	if got := Seated(State{Seats: seats}); !slices.Equal(got, all) {
		t.Errorf("seated %v, want %v", got, all)
	}
	for _, c := range []struct {
		name string
		s    State
		want []string
	}{
		{"betting, no bet yet: the banker too", State{Phase: PhaseBetting, Seats: seats, Banker: "bk", Coup: &Coup{}}, all},
		{"betting, no coup yet", State{Phase: PhaseBetting, Seats: seats, Banker: "bk"}, all},
		{"betting, r1 bet against bk's bank", State{Phase: PhaseBetting, Seats: seats, Banker: "bk",
			Coup: &Coup{Bets: []Bet{{PlayerID: "r1", Side: SideRight, Amount: 100}}}}, []string{"l1", "r2"}},
		{"auction: not the highest bidder, not the winner owing his fee", State{Phase: PhaseAuction, Seats: seats,
			Auction: &Auction{HighPlayerID: "r1", Fee: &FeeDue{PlayerID: "l1"}}}, []string{"bk", "r2"}},
		{"auction: a banker is not stood up outside the betting", State{Phase: PhaseAuction, Seats: seats, Banker: "bk",
			Auction: &Auction{}}, []string{"r1", "l1", "r2"}},
		{"dealing", State{Phase: PhaseDealing, Seats: seats, Coup: &Coup{}}, nil},
		{"decision", State{Phase: PhaseDecision, Seats: seats, Coup: &Coup{}}, nil},
		{"settling", State{Phase: PhaseSettling, Seats: seats, Coup: &Coup{}}, nil},
		{"closed", State{Phase: PhaseClosed, Seats: seats}, nil},
	} {
		if got := Standable(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: standable %v, want %v", c.name, got, c.want)
		}
	}
	s := State{Phase: PhaseBetting, Seats: seats, Banker: "bk", Coup: &Coup{}}
	if cmd := GiveUpBank(s, "bk"); cmd != (PassBank{PlayerID: "bk"}) {
		t.Errorf("the banker gives up his bank with %v, want PassBank", cmd)
	}
	if cmd := GiveUpBank(s, "r1"); cmd != nil {
		t.Errorf("a punter gives up a bank with %v", cmd)
	}
	if cmd := GiveUpBank(State{Phase: PhaseBetting, Seats: seats}, ""); cmd != nil {
		t.Errorf("a house bank is given up with %v", cmd)
	}
}
