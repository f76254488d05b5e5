package chemindefer

import (
	"slices"
	"testing"
)

func seats(ids ...string) []Seat {
	out := make([]Seat, len(ids))
	for i, id := range ids {
		out[i] = Seat{Number: int32(i + 1), PlayerID: id}
	}
	return out
}

// TestIdleRule: who is seated, who may be stood up now, and the banker
// gives up nothing first (Leave passes the bank, CF-PASS).
func TestIdleRule(t *testing.T) {
	abc := seats("a", "b", "c")
	if got := Seated(State{Seats: abc, Gallery: []string{"g"}}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("seated %v, want a b c (not the gallery)", got)
	}
	if got := Seated(State{}); len(got) != 0 {
		t.Errorf("no seat: seated %v", got)
	}
	for _, c := range []struct {
		name string
		s    State
		want []string
	}{
		{"waiting", State{Phase: PhaseWaiting, Seats: abc}, []string{"a", "b", "c"}},
		{"offering", State{Phase: PhaseOffering, Seats: abc, OfferedID: "b"}, []string{"a", "b", "c"}},
		{"betting, no bet yet: the banker too", State{Phase: PhaseBetting, Seats: abc, BankerID: "a", Coup: &Coup{}},
			[]string{"a", "b", "c"}},
		{"betting, b bet against a's bank", State{Phase: PhaseBetting, Seats: abc, BankerID: "a",
			Coup: &Coup{Bets: []Bet{{PlayerID: "b", Amount: 100}}}}, []string{"c"}},
		{"betting, a banco called", State{Phase: PhaseBetting, Seats: abc, BankerID: "a", Coup: &Coup{Banco: true}},
			[]string{"b", "c"}},
		{"auction: not the highest bidder", State{Phase: PhaseAuction, Seats: abc,
			Bids: []Bet{{PlayerID: "b", Amount: 100}, {PlayerID: "c", Amount: 200}}}, []string{"a", "b"}},
		{"dealing", State{Phase: PhaseDealing, Seats: abc, Coup: &Coup{}}, nil},
		{"decision", State{Phase: PhaseDecision, Seats: abc, Coup: &Coup{}}, nil},
		{"settling", State{Phase: PhaseSettling, Seats: abc, Coup: &Coup{}}, nil},
		{"bank raise", State{Phase: PhaseRaise, Seats: abc, Coup: &Coup{}}, nil},
		{"closed", State{Phase: PhaseClosed, Seats: abc}, nil},
	} {
		if got := Standable(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: standable %v, want %v", c.name, got, c.want)
		}
	}
	if cmd := GiveUpBank(State{Phase: PhaseBetting, Seats: abc, BankerID: "a", Coup: &Coup{}}, "a"); cmd != nil {
		t.Errorf("the banker gives up his bank with %v, want nothing (Leave passes it)", cmd)
	}
}
