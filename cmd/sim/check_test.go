package sim

import (
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// The checkers must see what they are meant to see: each is fed a
// history with one fault planted, and a clean one.

func checker() *sim {
	return &sim{res: &Result{}, seen: map[string]bool{}, coupNo: map[string]int64{}, stored: map[*eventsv1.TableEvent]stored{}}
}

func invariants(s *sim) string {
	var out []string
	for _, v := range s.res.Violations {
		out = append(out, v.Invariant)
	}
	return strings.Join(out, ",")
}

func ev(seq uint64, id, coup string) *eventsv1.TableEvent {
	return &eventsv1.TableEvent{Sequence: seq, EventId: id, TableId: "T", CoupId: coup}
}

func TestSequencedFindsGapsAndDuplicates(t *testing.T) {
	tb := &simTable{n: 1}
	s := checker()
	if out := s.sequenced(tb, []*eventsv1.TableEvent{ev(1, "a", ""), ev(2, "b", ""), ev(3, "c", "")}, 3); len(out) != 3 || invariants(s) != "" {
		t.Fatalf("clean: %d events, %s", len(out), invariants(s))
	}
	s = checker()
	s.sequenced(tb, []*eventsv1.TableEvent{ev(1, "a", ""), ev(3, "c", "")}, 3)
	if invariants(s) != "events-gapless" {
		t.Errorf("gap: %s", invariants(s))
	}
	s = checker()
	s.sequenced(tb, []*eventsv1.TableEvent{ev(1, "a", ""), ev(2, "b", ""), ev(2, "b", "")}, 2)
	if invariants(s) != "events-unduplicated" {
		t.Errorf("republished: %s", invariants(s))
	}
	s = checker()
	s.sequenced(tb, []*eventsv1.TableEvent{ev(1, "a", ""), ev(2, "b", ""), ev(2, "x", "")}, 2)
	if invariants(s) != "events-unduplicated" {
		t.Errorf("two events, one sequence: %s", invariants(s))
	}
}

func cards(codes ...string) []*shoev1.Card {
	var out []*shoev1.Card
	for _, c := range codes {
		out = append(out, &shoev1.Card{Code: c})
	}
	return out
}

// coupEvents is a whole coup: a bank of 1000, one bet of 400, the given
// cards (player then banker), the result and the settlement.
func coupEvents(player, banker []string, outcome eventsv1.Outcome, settled *eventsv1.CoupSettled, choices ...proto.Message) []*eventsv1.TableEvent {
	var out []*eventsv1.TableEvent
	add := func(coup string, p proto.Message) {
		e := ev(uint64(len(out)+1), "", coup)
		switch m := p.(type) {
		case *eventsv1.BankChanged:
			e.Payload = &eventsv1.TableEvent_BankChanged{BankChanged: m}
		case *eventsv1.BetPlaced:
			e.Payload = &eventsv1.TableEvent_BetPlaced{BetPlaced: m}
		case *eventsv1.CardDealt:
			e.Payload = &eventsv1.TableEvent_CardDealt{CardDealt: m}
		case *eventsv1.DrawDecided:
			e.Payload = &eventsv1.TableEvent_DrawDecided{DrawDecided: m}
		case *eventsv1.TurnTimedOut:
			e.Payload = &eventsv1.TableEvent_TurnTimedOut{TurnTimedOut: m}
		case *eventsv1.CoupResulted:
			e.Payload = &eventsv1.TableEvent_CoupResulted{CoupResulted: m}
		case *eventsv1.CoupSettled:
			e.Payload = &eventsv1.TableEvent_CoupSettled{CoupSettled: m}
		}
		out = append(out, e)
	}
	add("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: "b", Bank: 1000})
	add("C", &eventsv1.BetPlaced{PlayerId: "p", Amount: 400})
	for range len(player) + len(banker) {
		add("C", &eventsv1.CardDealt{})
	}
	for _, c := range choices {
		add("C", c)
	}
	add("C", &eventsv1.CoupResulted{Outcome: outcome, PlayerCards: cards(player...), BankerCards: cards(banker...),
		PlayerTotal: int32(total(player)), BankerTotal: int32(total(banker))})
	add("C", settled)
	return out
}

func total(codes []string) int {
	n := 0
	for _, c := range codes {
		switch c[0] {
		case 'A':
			n++
		case 'T', 'J', 'Q', 'K':
		default:
			n += int(c[0] - '0')
		}
	}
	return n % 10
}

func replayTable() *simTable {
	return &simTable{n: 1, id: "T", players: []string{"b", "p"}, view: &tablev1.Table{},
		rules: &tablev1.HouseRules{CommissionBp: proto.Int64(500), BankerOption_3Vs_9: proto.Bool(true), BankerOption_5Vs_4: proto.Bool(true)}}
}

func TestReplayChecksCardsAndMoney(t *testing.T) {
	win := &eventsv1.CoupSettled{Outcome: eventsv1.Outcome_OUTCOME_BANK_WINS, BankerWinnings: 400, Commission: 20, BankerNet: 380, NewBank: 1380}
	// Player 2+3=5 stands by choice, banker 9 natural? No: banker 4+3=7
	// stands; 7 beats 5.
	stand := &eventsv1.DrawDecided{Hand: eventsv1.Hand_HAND_PLAYER, Draw: false, PlayerId: "p"}
	s := checker()
	delta := map[string]int64{}
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand), delta)
	if invariants(s) != "" {
		t.Fatalf("clean coup: %v", s.res.Violations)
	}
	if delta["b"] != 380 || delta["p"] != -400 || delta["house"] != 20 {
		t.Errorf("money: %v", delta)
	}

	// The banker drew a third card on 7, where the tableau stands.
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S", "KD"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand), map[string]int64{})
	if invariants(s) != "coup-follows-cards" {
		t.Errorf("banker drew on 7: %s", invariants(s))
	}

	// The player chose to stand but was dealt a third card.
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D", "AH"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand), map[string]int64{})
	if !strings.Contains(invariants(s), "coup-follows-cards") {
		t.Errorf("stood but drew: %s", invariants(s))
	}

	// The commission is wrong.
	bad := proto.Clone(win).(*eventsv1.CoupSettled)
	bad.Commission, bad.BankerNet, bad.NewBank = 40, 360, 1360
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, bad, stand), map[string]int64{})
	if invariants(s) != "settlement-follows-result" {
		t.Errorf("wrong commission: %s", invariants(s))
	}

	// The player's time ran out on 5 and he stood: the default is to draw.
	timedOut := &eventsv1.DrawDecided{Hand: eventsv1.Hand_HAND_PLAYER, Draw: false, PlayerId: "p"}
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win,
		&eventsv1.TurnTimedOut{PlayerId: "p", Turn: "decision", Action: "stand"}, timedOut), map[string]int64{})
	if invariants(s) != "coup-follows-cards" {
		t.Errorf("stood on 5 when his time ran out: %s", invariants(s))
	}

	// A coup with a bet that never ends.
	s = checker()
	evs := coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand)
	s.replay(replayTable(), evs[:2], map[string]int64{})
	if invariants(s) != "coup-ends-once" {
		t.Errorf("coup left open: %s", invariants(s))
	}
}

// TestClusterMovesAService: a service whose port another process took
// while it was down starts on another port, and its callers follow.
func TestClusterMovesAService(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the suite")
	}
	f := newFaults(1, func(string, ...any) {})
	c, err := newCluster(t.TempDir(), slog.New(slog.DiscardHandler), newClock(), f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	old := c.walletAddr
	if err := c.stop(svcWallet); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", old)
	if err != nil {
		t.Skipf("port %s not free again: %v", old, err)
	}
	defer l.Close()
	if err := c.start(svcWallet); err != nil {
		t.Fatal(err)
	}
	if c.walletAddr == old || !c.isUp(svcTable) {
		t.Fatalf("wallet at %s (was %s), table-svc up %t", c.walletAddr, old, c.isUp(svcTable))
	}
	s := &sim{cl: c, players: map[string]*simPlayer{"p": {id: "p"}}}
	if err := s.deposit("p", 100); err != nil {
		t.Fatal(err)
	}
	// table-svc reaches the moved wallet: a bank is escrowed.
	ctx, cancel := s.as("operator")
	defer cancel()
	sh, err := c.shoes.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "shoe", Cards: (&sim{rng: rand.New(rand.NewPCG(1, 1)), cfg: Config{ShortShoes: true}}).shoeOrder()})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.tables.CreateTable(ctx, &tablev1.CreateTableRequest{RequestId: "t", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: &tablev1.HouseRules{CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	s.players["q"] = &simPlayer{id: "q"}
	for _, p := range []string{"p", "q"} {
		pctx, cancel := s.as(p)
		if _, err := c.tables.JoinTable(pctx, &tablev1.JoinTableRequest{RequestId: "j" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	pctx, cancel := s.as("p")
	defer cancel()
	if _, err := c.tables.AcceptBank(pctx, &tablev1.AcceptBankRequest{RequestId: "b", TableId: id, PlayerId: "p", Amount: 100}); err != nil {
		t.Fatalf("AcceptBank through the moved wallet: %v", err)
	}
}
