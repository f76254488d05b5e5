package sim

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// The order invariants (order.go) on planted histories: the chemin de
// fer walk-through (docs/walkthroughs/chemin-de-fer.md), clean, then with one fault planted at a time.

// step is one event of a history: its coup and payload.
type step struct {
	coup string
	p    proto.Message
}

// history numbers the steps as a table's events.
func history(steps []step) []*eventsv1.TableEvent {
	oneof := (&eventsv1.TableEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("payload")
	var out []*eventsv1.TableEvent
	for i, st := range steps {
		e := ev(uint64(i+1), "", st.coup)
		fields := oneof.Fields()
		for j := range fields.Len() {
			if fd := fields.Get(j); fd.Message().FullName() == st.p.ProtoReflect().Descriptor().FullName() {
				e.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(st.p.ProtoReflect()))
			}
		}
		out = append(out, e)
	}
	return out
}

func seated(p string, n int32) step {
	return step{"", &eventsv1.PlayerSeated{PlayerId: p, SeatNumber: n}}
}
func offered(p string) step { return step{"", &eventsv1.BankOffered{PlayerId: p}} }
func bankTo(reason eventsv1.BankChangeReason, banker, prev string, bank int64) step {
	return step{"", &eventsv1.BankChanged{Reason: reason, BankerPlayerId: banker, PreviousBankerPlayerId: prev, Bank: bank}}
}
func bet(coup, p string, amount, uncovered int64) step {
	return step{coup, &eventsv1.BetPlaced{PlayerId: p, Amount: amount, Uncovered: uncovered}}
}
func declined(coup, p string) step { return step{coup, &eventsv1.BetDeclined{PlayerId: p}} }
func banco(coup, p string, amount int64) step {
	return step{coup, &eventsv1.BancoCalled{PlayerId: p, Amount: amount}}
}

// played is a coup's deal, result and settlement.
func played(coup string, player, banker []string, o eventsv1.Outcome, natural bool, st *eventsv1.CoupSettled, extra ...step) []step {
	var out []step
	for _, d := range dealOrder(len(player), len(banker)) {
		out = append(out, step{coup, d})
	}
	out = append(out, extra...)
	out = append(out, step{coup, &eventsv1.CoupResulted{Outcome: o, Natural: natural, PlayerCards: cards(player...), BankerCards: cards(banker...),
		PlayerTotal: int32(total(player)), BankerTotal: int32(total(banker))}})
	st.Outcome = o
	return append(out, step{coup, st})
}

const (
	accepted = eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED
	held     = eventsv1.BankChangeReason_BANK_CHANGE_REASON_HELD
	lost     = eventsv1.BankChangeReason_BANK_CHANGE_REASON_LOST
	passed   = eventsv1.BankChangeReason_BANK_CHANGE_REASON_PASSED
	bankWins = eventsv1.Outcome_OUTCOME_BANK_WINS
	bankLoss = eventsv1.Outcome_OUTCOME_BANK_LOSES
)

// walkThrough is the chemin de fer walk-through as its table's
// events: alice, bob, carol and dave sit; alice banks 1000; bob, carol
// and dave bet 300, 300 and 400 in turn and lose to the banker's 9 (the
// bank 1950); bob calls banco and loses (3803); alice passes, bob banks
// 500, carol covers it and wins: the bank is offered to carol.
func walkThrough() []step {
	steps := []step{seated("alice", 1), seated("bob", 2), seated("carol", 3), seated("dave", 4), offered("alice"), bankTo(accepted, "alice", "", 1000),
		bet("C1", "bob", 300, 700), bet("C1", "carol", 300, 400), bet("C1", "dave", 400, 0)}
	steps = append(steps, played("C1", []string{"2C", "3D"}, []string{"9H", "TC"}, bankWins, true,
		&eventsv1.CoupSettled{BankerWinnings: 1000, Commission: 50, BankerNet: 950, NewBank: 1950})...)
	steps = append(steps, bankTo(held, "alice", "alice", 1950), banco("C2", "bob", 1950))
	steps = append(steps, played("C2", []string{"2S", "3H"}, []string{"9D", "TS"}, bankWins, true,
		&eventsv1.CoupSettled{BankerWinnings: 1950, Commission: 97, BankerNet: 1853, NewBank: 3803})...)
	steps = append(steps, bankTo(held, "alice", "alice", 3803), bankTo(passed, "", "alice", 0), offered("bob"), bankTo(accepted, "bob", "", 500),
		bet("C4", "carol", 500, 0))
	steps = append(steps, played("C4", []string{"4C", "5D"}, []string{"3S", "5H"}, bankLoss, true,
		&eventsv1.CoupSettled{BankerNet: -500, NewBank: 0})...)
	return append(steps, bankTo(lost, "", "bob", 0), offered("carol"))
}

func walkTable() *simTable {
	return &simTable{n: 1, id: "T", players: []string{"alice", "bob", "carol", "dave"},
		view: &tablev1.Table{State: stOffering, OfferedPlayerId: "carol"},
		rules: &tablev1.HouseRules{CommissionBp: proto.Int64(500), BankerOption_3Vs_9: proto.Bool(true), BankerOption_5Vs_4: proto.Bool(true),
			BettingDirection: tablev1.BettingDirection_BETTING_DIRECTION_RIGHT}}
}

// at is the index of the first step matching f.
func at(t *testing.T, steps []step, f func(step) bool) int {
	t.Helper()
	for i, st := range steps {
		if f(st) {
			return i
		}
	}
	t.Fatal("no such step")
	return -1
}

func isKind[M proto.Message](f func(M) bool) func(step) bool {
	return func(st step) bool {
		m, ok := st.p.(M)
		return ok && f(m)
	}
}

func TestOrderWalkThrough(t *testing.T) {
	s := checker()
	delta := map[string]int64{}
	s.replay(walkTable(), history(walkThrough()), delta, new([]interruptM))
	if got := invariants(s); got != "" {
		t.Fatalf("the walk-through: %v", s.res.Violations)
	}
	// The money, by the oracle: the walk-through's balances less the 10000 each.
	want := map[string]int64{"alice": 2803, "bob": -2750, "carol": 200, "dave": -400, "house": 147}
	for k, v := range want {
		if delta[k] != v {
			t.Errorf("%s won %d, the walk-through says %d", k, delta[k], v)
		}
	}
	// Betting to the left (lower seat numbers first, wrapping), dave bets
	// first after alice: the same history bets out of turn.
	left := walkTable()
	left.rules.BettingDirection = tablev1.BettingDirection_BETTING_DIRECTION_LEFT
	s = checker()
	s.replay(left, history(walkThrough()), map[string]int64{}, new([]interruptM))
	if got := invariants(s); !strings.Contains(got, "bet-order") {
		t.Errorf("betting to the right at a table that bets to the left: %q", got)
	}
}

func TestOrderFindsPlantedFaults(t *testing.T) {
	isBet := func(p string) func(step) bool {
		return isKind(func(m *eventsv1.BetPlaced) bool { return m.GetPlayerId() == p })
	}
	lostBank := isKind(func(m *eventsv1.BankChanged) bool { return m.GetReason() == lost })
	for _, c := range []struct {
		name string
		want string
		mut  func(t *testing.T, s []step) []step
	}{
		{"carol bets before bob", "bet-order", func(t *testing.T, s []step) []step {
			i := at(t, s, isBet("bob"))
			s[i], s[i+1] = bet("C1", "carol", 300, 700), bet("C1", "bob", 300, 400)
			return s
		}},
		{"the deal before dave's turn", "bet-order", func(t *testing.T, s []step) []step {
			return slices.Delete(s, at(t, s, isBet("dave")), at(t, s, isBet("dave"))+1)
		}},
		{"a wrong uncovered", "bet-order", func(t *testing.T, s []step) []step {
			s[at(t, s, isBet("carol"))] = bet("C1", "carol", 300, 500)
			return s
		}},
		{"betting reopened with dave to bet", "bet-order", func(t *testing.T, s []step) []step {
			i := at(t, s, isBet("bob"))
			return slices.Insert(slices.Delete(s, i, i+3), i, declined("C1", "bob"), step{"C1", &eventsv1.BettingReopened{}})
		}},
		{"carol's banco out of turn", "banco-priority", func(t *testing.T, s []step) []step {
			s[at(t, s, isKind(func(m *eventsv1.BancoCalled) bool { return true }))] = banco("C2", "carol", 1950)
			return s
		}},
		{"the lost bank offered to dave", "bank-order", func(t *testing.T, s []step) []step {
			s[len(s)-1] = offered("dave")
			return s
		}},
		{"the lost bank auctioned", "bank-order", func(t *testing.T, s []step) []step {
			s[len(s)-1] = step{"", &eventsv1.BankAuctionOpened{Round: 1}}
			return s
		}},
		{"the lost bank held", "bank-order", func(t *testing.T, s []step) []step {
			s[at(t, s, lostBank)] = bankTo(held, "bob", "bob", 0)
			return s[:len(s)-1]
		}},
		{"a win's bank lost", "bank-order", func(t *testing.T, s []step) []step {
			i := at(t, s, isKind(func(m *eventsv1.BankChanged) bool { return m.GetReason() == held }))
			return append(s[:i:i], bankTo(lost, "", "alice", 0), offered("bob"))
		}},
		{"the held bank's size", "bank-order", func(t *testing.T, s []step) []step {
			s[at(t, s, isKind(func(m *eventsv1.BankChanged) bool { return m.GetReason() == held }))] = bankTo(held, "alice", "alice", 2000)
			return s
		}},
		{"the passed bank offered to carol", "bank-order", func(t *testing.T, s []step) []step {
			i := at(t, s, isKind(func(m *eventsv1.BankChanged) bool { return m.GetReason() == passed }))
			s[i+1], s[i+2] = offered("carol"), bankTo(accepted, "carol", "", 500)
			return s[:i+3]
		}},
		{"the bank taken by another than offered", "bank-order", func(t *testing.T, s []step) []step {
			i := at(t, s, isKind(func(m *eventsv1.BankChanged) bool { return m.GetReason() == passed }))
			s[i+2] = bankTo(accepted, "dave", "", 500)
			return s[:i+3]
		}},
		{"a pass after a bet", "bank-order", func(t *testing.T, s []step) []step {
			i := at(t, s, isKind(func(m *eventsv1.BankChanged) bool { return m.GetReason() == passed }))
			return append(s[:i:i], bet("C3", "bob", 100, 3703), bankTo(passed, "", "alice", 0))
		}},
		{"the first bank offered to seat 2", "bank-order", func(t *testing.T, s []step) []step {
			s[4], s[5] = offered("bob"), bankTo(accepted, "bob", "", 1000)
			return s[:6]
		}},
	} {
		s := checker()
		steps := c.mut(t, walkThrough())
		s.replay(walkTable(), history(steps), map[string]int64{}, new([]interruptM))
		if got := invariants(s); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %s (%v)", c.name, got, c.want, s.res.Violations)
		}
	}
}

// TestOrderBancoSuivi: p, q and r punt against b (betting from b's
// right: p, q, r); r's banco loses, so r has banco suivi in the next coup:
// out of turn until its first bet, and asked first when another calls
// banco in his turn.
func TestOrderBancoSuivi(t *testing.T) {
	base := []step{seated("b", 1), seated("p", 2), seated("q", 3), seated("r", 4), offered("b"), bankTo(accepted, "b", "", 1000),
		declined("C1", "p"), declined("C1", "q"), banco("C1", "r", 1000)}
	base = append(base, played("C1", []string{"2C", "3D"}, []string{"9H", "TC"}, bankWins, true,
		&eventsv1.CoupSettled{BankerWinnings: 1000, Commission: 50, BankerNet: 950, NewBank: 1950})...)
	base = append(base, bankTo(held, "b", "b", 1950))
	coup2 := func(steps ...step) []step {
		out := append(slices.Clone(base), steps...)
		return append(out, played("C2", []string{"2S", "3H"}, []string{"9D", "TS"}, bankWins, true,
			&eventsv1.CoupSettled{BankerWinnings: 1950, Commission: 97, BankerNet: 1853, NewBank: 3803})...)
	}
	tb := func() *simTable {
		tb := walkTable()
		tb.players, tb.view = []string{"b", "p", "q", "r"}, &tablev1.Table{}
		return tb
	}
	for _, c := range []struct {
		name  string
		steps []step
		want  string
	}{
		{"r calls banco suivi out of turn", coup2(banco("C2", "r", 1950)), ""},
		{"p calls banco, r is asked and takes it over", coup2(banco("C2", "p", 1950), banco("C2", "r", 1950)), ""},
		{"p calls banco, r is asked and lets it stand", coup2(banco("C2", "p", 1950), declined("C2", "r")), ""},
		{"p calls banco, r is asked and his time runs out", coup2(banco("C2", "p", 1950),
			step{"C2", &eventsv1.TurnTimedOut{PlayerId: "r", Turn: "banco_suivi"}}, declined("C2", "r")), ""},
		{"p calls banco and the deal starts without asking r", coup2(banco("C2", "p", 1950)), "banco-priority"},
		{"q answers for r", coup2(banco("C2", "p", 1950), declined("C2", "q")), "banco-priority"},
		{"r's banco after p's bet", coup2(bet("C2", "p", 100, 1850), banco("C2", "r", 1950)), "banco-priority"},
		{"q's banco out of turn", coup2(banco("C2", "q", 1950)), "banco-priority"},
		{"p's banco for less than the bank", coup2(banco("C2", "p", 1000), declined("C2", "r")), "bet-order"},
	} {
		s := checker()
		s.replay(tb(), history(c.steps), map[string]int64{}, new([]interruptM))
		if got := invariants(s); !strings.Contains(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("%s: %q, want %q (%v)", c.name, got, c.want, s.res.Violations)
		}
	}
	// r's betting turn times out (he passes: bet_declined), a round with
	// no bet opens again, and he calls banco out of turn: his suivi ended
	// with his turn, as when he declines it himself (failure 8; the table
	// keeps it, which the switch suivi-timeout takes).
	timeout := coup2(declined("C2", "p"), declined("C2", "q"), step{"C2", &eventsv1.TurnTimedOut{PlayerId: "r", Turn: "bet", Action: "bet_declined"}},
		declined("C2", "r"), step{"C2", &eventsv1.BettingReopened{}}, banco("C2", "r", 1950))
	for _, c := range []struct {
		avoid bool
		want  string
	}{{false, "banco-priority"}, {true, ""}} {
		s := checker()
		s.cfg.Avoid.SuiviTimeout = c.avoid
		s.replay(tb(), history(timeout), map[string]int64{}, new([]interruptM))
		if got := invariants(s); got != c.want {
			t.Errorf("banco suivi after a timed-out turn, switch %t: %q, want %q (%v)", c.avoid, got, c.want, s.res.Violations)
		}
	}
	explicit := coup2(declined("C2", "p"), declined("C2", "q"), declined("C2", "r"), step{"C2", &eventsv1.BettingReopened{}}, banco("C2", "r", 1950))
	s := checker()
	s.cfg.Avoid.SuiviTimeout = true
	s.replay(tb(), history(explicit), map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "banco-priority" {
		t.Errorf("banco suivi after declining: %q", got)
	}

	// A new banker (betting from p's right: q, r, b): r's banco suivi
	// lapses.
	steps := append(slices.Clone(base), bankTo(passed, "", "b", 0), offered("p"), bankTo(accepted, "p", "", 500), banco("C3", "r", 500))
	s = checker()
	s.replay(tb(), history(steps), map[string]int64{}, new([]interruptM))
	if got := invariants(s); !strings.Contains(got, "banco-priority") {
		t.Errorf("banco suivi against a new banker: %q", got)
	}
}

// TestOrderHandHolder: a decision of the player's hand that timed out is
// the largest bet's (the earlier on equal bets).
func TestOrderHandHolder(t *testing.T) {
	for _, c := range []struct {
		who, want string
	}{{"carol", ""}, {"bob", "hand-holder"}, {"alice", "hand-holder"}} {
		steps := walkThrough()[:6]
		steps = append(steps, bet("C1", "bob", 300, 700), bet("C1", "carol", 400, 300), bet("C1", "dave", 300, 0))
		steps = append(steps, played("C1", []string{"2C", "3D", "4H"}, []string{"9H", "7C"}, bankLoss, false,
			&eventsv1.CoupSettled{BankerNet: -1000, NewBank: 0},
			step{"C1", &eventsv1.TurnTimedOut{PlayerId: c.who, Turn: "decision", Action: "draw"}},
			step{"C1", &eventsv1.DrawDecided{Hand: eventsv1.Hand_HAND_PLAYER, Draw: true}})...)
		s := checker()
		tb := walkTable()
		tb.view = &tablev1.Table{}
		s.replay(tb, history(steps), map[string]int64{}, new([]interruptM))
		if got := invariants(s); !strings.Contains(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("%s's decision: %q, want %q (%v)", c.who, got, c.want, s.res.Violations)
		}
	}
}

// TestOrderSeatInTurn: g, in the gallery, takes a seat in his own
// betting turn, which ends the round: the table writes betting_reopened
// before his player_seated and leaves him out of the new round (failure
// 9); the order the rules call for is his seat first, then the new round
// with him in it.
func TestOrderSeatInTurn(t *testing.T) {
	start := []step{seated("b", 1), seated("p", 2), step{"", &eventsv1.GalleryJoined{PlayerId: "g"}}, offered("b"), bankTo(accepted, "b", "", 1000),
		declined("C1", "p")}
	deal := played("C1", []string{"2C", "3D"}, []string{"9H", "TC"}, bankWins, true, &eventsv1.CoupSettled{BankerWinnings: 1000, Commission: 50, BankerNet: 950, NewBank: 1950})
	tableWay := append(slices.Clone(start), step{"C1", &eventsv1.BettingReopened{}}, seated("g", 3), bet("C1", "p", 1000, 0))
	tableWay = append(tableWay, deal...)
	rulesWay := append(slices.Clone(start), seated("g", 3), step{"C1", &eventsv1.BettingReopened{}}, declined("C1", "p"), bet("C1", "g", 1000, 0))
	rulesWay = append(rulesWay, deal...)
	tb := func() *simTable {
		tb := walkTable()
		tb.players, tb.view = []string{"b", "p", "g"}, &tablev1.Table{}
		return tb
	}
	for _, c := range []struct {
		name  string
		steps []step
		avoid bool
		want  string
	}{
		{"the table's way", tableWay, false, "bet-order"},
		{"the table's way, switch seat-in-turn", tableWay, true, ""},
		{"the rules' way", rulesWay, false, ""},
	} {
		s := checker()
		s.cfg.Avoid.SeatInTurn = c.avoid
		s.replay(tb(), history(c.steps), map[string]int64{}, new([]interruptM))
		if got := invariants(s); got != c.want {
			t.Errorf("%s: %q, want %q (%v)", c.name, got, c.want, s.res.Violations)
		}
	}
}
