package sim

import (
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// coreCoup is a coup of a banque or old-game table: the bank accepted
// by alice at bank, the bets, six cards dealt, the result's hands and
// the banker's cards, then settled.
func coreCoup(bank int64, bets []*eventsv1.BetPlaced, hands []*eventsv1.HandResult, banker []string, settled *eventsv1.CoupSettled) []*eventsv1.TableEvent {
	var out []*eventsv1.TableEvent
	add := func(coup string, e *eventsv1.TableEvent) {
		e.Sequence, e.TableId, e.CoupId = uint64(len(out)+1), "T", coup
		out = append(out, e)
	}
	add("", &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_BankChanged{BankChanged: &eventsv1.BankChanged{
		Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: "alice", Bank: bank}}})
	for _, b := range bets {
		add("C", &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_BetPlaced{BetPlaced: b}})
	}
	n := len(banker)
	for _, h := range hands {
		n += len(h.GetCards())
	}
	for range n {
		add("C", &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CardDealt{CardDealt: &eventsv1.CardDealt{}}})
	}
	add("C", &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CoupResulted{CoupResulted: &eventsv1.CoupResulted{
		BankerCards: cards(banker...), BankerTotal: 9, Hands: hands}}})
	add("C", &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CoupSettled{CoupSettled: settled}})
	return out
}

// TestReplayCoreChecksHandsAndMoney: a banque and an old-game coup (the
// crash tests' of cmd/e2e: the banker's natural 9 takes every bet) are
// judged by the oracle, their money counted (the banque auction's fee
// too), the old game's next coup against the bank the last one left; a
// wrong new bank, a wrong hand outcome are found.
func TestReplayCoreChecksHandsAndMoney(t *testing.T) {
	bankWins := eventsv1.Outcome_OUTCOME_BANK_WINS
	banque := func(settled *eventsv1.CoupSettled, left eventsv1.Outcome) (*simTable, []*eventsv1.TableEvent) {
		tb := &simTable{n: 1, id: "T", view: &tablev1.Table{}, bq: &tablev1.BanqueRules{}}
		return tb, coreCoup(2000, []*eventsv1.BetPlaced{{PlayerId: "carol", Amount: 400, Spot: "cheval"}, {PlayerId: "bob", Amount: 500, Spot: "right"}},
			[]*eventsv1.HandResult{
				{Hand: eventsv1.Hand_HAND_RIGHT, HolderPlayerId: "bob", Total: 5, Cards: cards("2C", "3D"), Outcome: bankWins},
				{Hand: eventsv1.Hand_HAND_LEFT, HolderPlayerId: "carol", Total: 7, Cards: cards("7H", "KS"), Outcome: left},
			}, []string{"4C", "5H"}, settled)
	}
	right := &eventsv1.CoupSettled{Outcome: bankWins, BankerWinnings: 900, BankerNet: 900, NewBank: 2900}
	s := checker()
	delta := map[string]int64{}
	tb, evs := banque(right, bankWins)
	s.replayCore(tb, evs, delta, new([]interruptM))
	if got := invariants(s); got != "" || delta["alice"] != 850 || delta["bob"] != -500 || delta["carol"] != -400 || delta["house"] != 50 || s.res.CoupsSettled != 1 {
		t.Fatalf("clean banque coup: %q, delta %v", got, delta)
	}
	s = checker()
	tb, evs = banque(&eventsv1.CoupSettled{Outcome: bankWins, BankerWinnings: 900, BankerNet: 900, NewBank: 2800}, bankWins)
	s.replayCore(tb, evs, map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "settlement-follows-result" {
		t.Errorf("a bank short of 100: %q", got)
	}
	s = checker()
	tb, evs = banque(right, eventsv1.Outcome_OUTCOME_STAND_OFF)
	s.replayCore(tb, evs, map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "coup-follows-cards" {
		t.Errorf("the left hand's 7 against a 9 a stand-off: %q", got)
	}

	old := func(settled *eventsv1.CoupSettled) (*simTable, []*eventsv1.TableEvent) {
		tb := &simTable{n: 1, id: "T", view: &tablev1.Table{}, old: &tablev1.OldBaccaratRules{}}
		return tb, coreCoup(10000, []*eventsv1.BetPlaced{{PlayerId: "bob", Amount: 1000}, {PlayerId: "carol", Amount: 2000}},
			[]*eventsv1.HandResult{
				{Hand: eventsv1.Hand_HAND_PUNTER, HolderPlayerId: "bob", Total: 5, Cards: cards("2C", "3D"), Outcome: bankWins},
				{Hand: eventsv1.Hand_HAND_PUNTER, HolderPlayerId: "carol", Total: 17, Cards: cards("7H", "KS"), Outcome: bankWins},
			}, []string{"4C", "5D"}, settled)
	}
	s = checker()
	delta = map[string]int64{}
	tb, evs = old(&eventsv1.CoupSettled{Outcome: bankWins, BankerNet: 3000, NewBank: 13000})
	s.replayCore(tb, evs, delta, new([]interruptM))
	if got := invariants(s); got != "" || delta["alice"] != 3000 || delta["bob"] != -1000 || delta["carol"] != -2000 || delta["house"] != 0 {
		t.Fatalf("clean old-game coup: %q, delta %v", got, delta)
	}
	// The next coup, with no bank_changed between (the old game writes
	// none): judged against the bank the last one left, 13000.
	_, next := old(&eventsv1.CoupSettled{Outcome: bankWins, BankerNet: 3000, NewBank: 16000})
	for _, e := range next[1:] {
		e.Sequence, e.CoupId = uint64(len(evs)+1), "D"
		evs = append(evs, e)
	}
	s = checker()
	s.replayCore(tb, evs, map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "" || s.res.CoupsSettled != 2 {
		t.Fatalf("two old-game coups: %q", got)
	}
	s = checker()
	tb, evs = old(&eventsv1.CoupSettled{Outcome: bankWins, BankerNet: 2000, NewBank: 12000})
	s.replayCore(tb, evs, map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "settlement-follows-result" {
		t.Errorf("carol's stake taken as 1000: %q", got)
	}
}

// TestReplayOldSplit: two punters and the banker tie at 14 points, no
// natural: the three share the pool (OLD-SETTLE, 002's example: stakes
// 100 and 200, 300 each). The hands tied the bank: written won by the
// punters (from their nets) they break coup-follows-cards, unless the
// checker switch of failure 11 (split-outcome) takes the table's reading.
func TestReplayOldSplit(t *testing.T) {
	split := func(out eventsv1.Outcome) []*eventsv1.TableEvent {
		evs := coreCoup(10000, []*eventsv1.BetPlaced{{PlayerId: "bob", Amount: 100}, {PlayerId: "carol", Amount: 200}},
			[]*eventsv1.HandResult{
				{Hand: eventsv1.Hand_HAND_PUNTER, HolderPlayerId: "bob", Total: 14, Cards: cards("AH", "3D"), Outcome: out},
				{Hand: eventsv1.Hand_HAND_PUNTER, HolderPlayerId: "carol", Total: 14, Cards: cards("4D", "TS"), Outcome: out},
			}, []string{"3S", "AD"}, &eventsv1.CoupSettled{Outcome: eventsv1.Outcome_OUTCOME_BANK_LOSES, BankerNet: -300, NewBank: 9700})
		evs[len(evs)-2].GetCoupResulted().BankerTotal = 14
		return evs
	}
	for _, tc := range []struct {
		out     eventsv1.Outcome
		lenient bool
		want    string
	}{
		{eventsv1.Outcome_OUTCOME_STAND_OFF, false, ""},
		{eventsv1.Outcome_OUTCOME_BANK_LOSES, false, "coup-follows-cards"},
		{eventsv1.Outcome_OUTCOME_BANK_LOSES, true, ""},
	} {
		s := checker()
		s.cfg.Avoid.SplitOutcome = tc.lenient
		delta := map[string]int64{}
		s.replayCore(&simTable{n: 1, id: "T", view: &tablev1.Table{}, old: &tablev1.OldBaccaratRules{}}, split(tc.out), delta, new([]interruptM))
		if got := invariants(s); got != tc.want || delta["bob"] != 200 || delta["carol"] != 100 || delta["alice"] != -300 {
			t.Errorf("hands %s, switch %t: %q (want %q), delta %v", tc.out, tc.lenient, got, tc.want, delta)
		}
	}
}
