package oldbaccarat

import (
	"slices"
	"testing"
)

// TestIdleRule: who is seated, who may be stood up now, and the banker
// gives up nothing first (Leave ends his bank, OLD-BACCARAT).
func TestIdleRule(t *testing.T) {
	seats := []Seat{{PlayerID: "bk", Number: 1}, {PlayerID: "a", Number: 2}, {PlayerID: "b", Number: 3}, {PlayerID: "c", Number: 4}}
	all := []string{"bk", "a", "b", "c"}
	if got := Seated(State{Seats: seats}); !slices.Equal(got, all) {
		t.Errorf("seated %v, want %v", got, all)
	}
	for _, c := range []struct {
		name string
		s    State
		want []string
	}{
		{"waiting", State{Phase: PhaseWaiting, Seats: seats}, all},
		{"staking, no stake yet: the banker too", State{Phase: PhaseStaking, Seats: seats, BankerID: "bk"}, all},
		{"staking, a staked", State{Phase: PhaseStaking, Seats: seats, BankerID: "bk",
			Coup: &Coup{Hands: []Hand{{PlayerID: "a", Stake: 100}}}}, []string{"b", "c"}},
		{"offered after a baccarat: not the banker", State{Phase: PhaseOffering, Seats: seats, BankerID: "bk", OfferedTo: "a"},
			[]string{"a", "b", "c"}},
		{"auction: not a bidder", State{Phase: PhaseAuction, Seats: seats,
			Auction: &Auction{Bids: []BankBid{{PlayerID: "b", Amount: 100}, {PlayerID: "c", Amount: 50}}}}, []string{"bk", "a"}},
		{"dealing", State{Phase: PhaseDealing, Seats: seats, Coup: &Coup{}}, nil},
		{"decision", State{Phase: PhaseDecision, Seats: seats, Coup: &Coup{}}, nil},
		{"settling", State{Phase: PhaseSettling, Seats: seats, Coup: &Coup{}}, nil},
		{"closed", State{Phase: PhaseClosed, Seats: seats}, nil},
	} {
		if got := Standable(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: standable %v, want %v", c.name, got, c.want)
		}
	}
	if cmd := GiveUpBank(State{Phase: PhaseStaking, Seats: seats, BankerID: "bk"}, "bk"); cmd != nil {
		t.Errorf("the banker gives up his bank with %v, want nothing (Leave ends it)", cmd)
	}
}
