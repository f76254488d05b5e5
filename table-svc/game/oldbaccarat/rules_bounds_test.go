package oldbaccarat

import (
	"errors"
	"testing"

	"github.com/chemmy/chemmy/table-svc/game"
)

// TestRulesBounds: each house rule at both ends of its documented range
// is taken and one step outside it is refused INVALID_HOUSE_RULE (the
// ranges of chemmy.table.v1.OldBaccaratRules: 3..17 seats, OLD-DECKS: at
// least three players and 16 punters besides the banker; min_stake
// 1..2^50; max_stake 0 (none) or at least min_stake; min_bank at least
// twice min_stake, OLD-STAKE, and at most 2^50; max_move_top 0..52; each
// time limit 1..600 s).
func TestRulesBounds(t *testing.T) {
	type set func(*Rules)
	cases := []struct {
		name string
		set  set
		ok   bool
	}{
		{"seats 2", func(r *Rules) { r.MaxSeats = 2 }, false},
		{"seats 3", func(r *Rules) { r.MaxSeats = 3 }, true},
		{"seats 17", func(r *Rules) { r.MaxSeats = 17 }, true},
		{"seats 18", func(r *Rules) { r.MaxSeats = 18 }, false},
		{"min stake 0", func(r *Rules) { r.MinStake = 0 }, false},
		{"min stake 1", func(r *Rules) { r.MinStake = 1 }, true},
		{"min stake 2^50", func(r *Rules) { r.MinStake, r.MinBank = 1<<50, 1<<50 }, false}, // the bank cannot cover it twice
		{"min stake 2^50+1", func(r *Rules) { r.MinStake = 1<<50 + 1 }, false},
		{"max stake -1", func(r *Rules) { r.MaxStake = -1 }, false},
		{"max stake none", func(r *Rules) { r.MaxStake = 0 }, true},
		{"max stake under min", func(r *Rules) { r.MaxStake = r.MinStake - 1 }, false},
		{"max stake = min", func(r *Rules) { r.MaxStake = r.MinStake }, true},
		{"bank under twice the stake", func(r *Rules) { r.MinBank = 2*r.MinStake - 1 }, false},
		{"bank twice the stake", func(r *Rules) { r.MinBank = 2 * r.MinStake }, true},
		{"bank 2^50", func(r *Rules) { r.MinBank = 1 << 50 }, true},
		{"bank 2^50+1", func(r *Rules) { r.MinBank = 1<<50 + 1 }, false},
		{"stake 2^49, bank 2^50", func(r *Rules) { r.MinStake, r.MinBank = 1<<49, 1<<50 }, true},
		{"move top -1", func(r *Rules) { r.MaxMoveTop = -1 }, false},
		{"move top 0", func(r *Rules) { r.MaxMoveTop = 0 }, true},
		{"move top 52", func(r *Rules) { r.MaxMoveTop = 52 }, true},
		{"move top 53", func(r *Rules) { r.MaxMoveTop = 53 }, false},
	}
	windows := map[string]func(*Rules) *int32{
		"auction":    func(r *Rules) *int32 { return &r.AuctionWindowMS },
		"staking":    func(r *Rules) *int32 { return &r.StakingWindowMS },
		"cut":        func(r *Rules) *int32 { return &r.CutMS },
		"decision":   func(r *Rules) *int32 { return &r.DecisionMS },
		"bank offer": func(r *Rules) *int32 { return &r.BankOfferMS },
	}
	for name, field := range windows {
		for _, w := range []struct {
			ms int32
			ok bool
		}{{999, false}, {1000, true}, {600000, true}, {600001, false}} {
			cases = append(cases, struct {
				name string
				set  set
				ok   bool
			}{name, func(r *Rules) { *field(r) = w.ms }, w.ok})
		}
	}
	for _, c := range cases {
		r := DefaultRules()
		c.set(&r)
		err := r.Validate()
		var ge *game.Error
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case !c.ok && (!errors.As(err, &ge) || ge.Reason != ReasonInvalidHouseRule):
			t.Errorf("%s (%+v): %v, want INVALID_HOUSE_RULE", c.name, r, err)
		}
	}
}
