package puntobanco

import (
	"errors"
	"testing"

	"github.com/chemmy/chemmy/table-svc/game"
)

// TestRulesBounds: each house rule at both ends of its documented range
// is taken and one step outside it is refused INVALID_HOUSE_RULE (the
// ranges of chemmy.table.v1.PuntoBancoRules: decks 6 or 8, PB-DECKS; cut
// card 6..16 from the end; burn 3 or 4; 1..15 seats; min_bet > 0;
// max_bet and house_limit 0 (none) or at least min_bet; betting window
// 1..600 s; result pause 0..60 s).
func TestRulesBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*Rules)
		ok   bool
	}{
		{"decks 6", func(r *Rules) { r.Decks = 6 }, true},
		{"decks 8", func(r *Rules) { r.Decks = 8 }, true},
		{"decks 7", func(r *Rules) { r.Decks = 7 }, false},
		{"cut 5", func(r *Rules) { r.CutCardFromEnd = 5 }, false},
		{"cut 6", func(r *Rules) { r.CutCardFromEnd = 6 }, true},
		{"cut 16", func(r *Rules) { r.CutCardFromEnd = 16 }, true},
		{"cut 17", func(r *Rules) { r.CutCardFromEnd = 17 }, false},
		{"burn 2", func(r *Rules) { r.Burn = 2 }, false},
		{"burn 3", func(r *Rules) { r.Burn = 3 }, true},
		{"burn 4", func(r *Rules) { r.Burn = 4 }, true},
		{"burn 5", func(r *Rules) { r.Burn = 5 }, false},
		{"seats 0", func(r *Rules) { r.MaxSeats = 0 }, false},
		{"seats 1", func(r *Rules) { r.MaxSeats = 1 }, true},
		{"seats 15", func(r *Rules) { r.MaxSeats = 15 }, true},
		{"seats 16", func(r *Rules) { r.MaxSeats = 16 }, false},
		{"min bet 0", func(r *Rules) { r.MinBet = 0 }, false},
		{"min bet 1", func(r *Rules) { r.MinBet = 1 }, true},
		{"max bet -1", func(r *Rules) { r.MaxBet = -1 }, false},
		{"max bet none", func(r *Rules) { r.MaxBet = 0 }, true},
		{"max bet under min", func(r *Rules) { r.MaxBet = r.MinBet - 1 }, false},
		{"max bet = min", func(r *Rules) { r.MaxBet = r.MinBet }, true},
		{"house limit -1", func(r *Rules) { r.HouseLimit = -1 }, false},
		{"house limit none", func(r *Rules) { r.HouseLimit = 0 }, true},
		{"house limit under min", func(r *Rules) { r.HouseLimit = r.MinBet - 1 }, false},
		{"house limit = min", func(r *Rules) { r.HouseLimit = r.MinBet }, true},
		{"window 999 ms", func(r *Rules) { r.BettingWindowMS = 999 }, false},
		{"window 1 s", func(r *Rules) { r.BettingWindowMS = 1000 }, true},
		{"window 600 s", func(r *Rules) { r.BettingWindowMS = 600000 }, true},
		{"window 600.001 s", func(r *Rules) { r.BettingWindowMS = 600001 }, false},
		{"pause -1", func(r *Rules) { r.ResultPauseMS = -1 }, false},
		{"pause 0", func(r *Rules) { r.ResultPauseMS = 0 }, true},
		{"pause 60 s", func(r *Rules) { r.ResultPauseMS = 60000 }, true},
		{"pause 60.001 s", func(r *Rules) { r.ResultPauseMS = 60001 }, false},
	} {
		r := baseRules()
		c.set(&r)
		err := r.Validate()
		var ge *game.Error
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case !c.ok && (!errors.As(err, &ge) || ge.Reason != ReasonInvalidHouseRule):
			t.Errorf("%s: %v, want INVALID_HOUSE_RULE", c.name, err)
		}
	}
}
