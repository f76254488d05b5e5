package sim

import (
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
		case *eventsv1.PlayerSeated:
			e.Payload = &eventsv1.TableEvent_PlayerSeated{PlayerSeated: m}
		case *eventsv1.BankOffered:
			e.Payload = &eventsv1.TableEvent_BankOffered{BankOffered: m}
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
	add("", &eventsv1.PlayerSeated{PlayerId: "b", SeatNumber: 1})
	add("", &eventsv1.PlayerSeated{PlayerId: "p", SeatNumber: 2})
	add("", &eventsv1.BankOffered{PlayerId: "b"})
	add("", &eventsv1.BankChanged{Reason: eventsv1.BankChangeReason_BANK_CHANGE_REASON_ACCEPTED, BankerPlayerId: "b", Bank: 1000})
	add("C", &eventsv1.BetPlaced{PlayerId: "p", Amount: 400, Uncovered: 600})
	for _, d := range dealOrder(len(player), len(banker)) {
		add("C", d)
	}
	for _, c := range choices {
		add("C", c)
	}
	add("C", &eventsv1.CoupResulted{Outcome: outcome, PlayerCards: cards(player...), BankerCards: cards(banker...),
		PlayerTotal: int32(total(player)), BankerTotal: int32(total(banker))})
	add("C", settled)
	return out
}

// dealOrder is the card_dealt events of hands of p and b cards, as
// CF-DEAL deals them (face down: no card).
func dealOrder(p, b int) []*eventsv1.CardDealt {
	P, B := eventsv1.Hand_HAND_PLAYER, eventsv1.Hand_HAND_BANKER
	out := []*eventsv1.CardDealt{{Hand: P, Position: 1}, {Hand: B, Position: 1}, {Hand: P, Position: 2}, {Hand: B, Position: 2}}
	if p == 3 {
		out = append(out, &eventsv1.CardDealt{Hand: P, Position: 3})
	}
	if b == 3 {
		out = append(out, &eventsv1.CardDealt{Hand: B, Position: 3})
	}
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
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand), delta, new([]interruptM))
	if invariants(s) != "" {
		t.Fatalf("clean coup: %v", s.res.Violations)
	}
	if delta["b"] != 380 || delta["p"] != -400 || delta["house"] != 20 {
		t.Errorf("money: %v", delta)
	}

	// The banker drew a third card on 7, where the tableau stands.
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S", "KD"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand), map[string]int64{}, new([]interruptM))
	if invariants(s) != "coup-follows-cards" {
		t.Errorf("banker drew on 7: %s", invariants(s))
	}

	// The player chose to stand but was dealt a third card.
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D", "AH"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand), map[string]int64{}, new([]interruptM))
	if !strings.Contains(invariants(s), "coup-follows-cards") {
		t.Errorf("stood but drew: %s", invariants(s))
	}

	// The commission is wrong.
	bad := proto.Clone(win).(*eventsv1.CoupSettled)
	bad.Commission, bad.BankerNet, bad.NewBank = 40, 360, 1360
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, bad, stand), map[string]int64{}, new([]interruptM))
	if invariants(s) != "settlement-follows-result" {
		t.Errorf("wrong commission: %s", invariants(s))
	}

	// The player's time ran out on 5 and he stood: the default is to draw.
	timedOut := &eventsv1.DrawDecided{Hand: eventsv1.Hand_HAND_PLAYER, Draw: false, PlayerId: "p"}
	s = checker()
	s.replay(replayTable(), coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win,
		&eventsv1.TurnTimedOut{PlayerId: "p", Turn: "decision", Action: "stand"}, timedOut), map[string]int64{}, new([]interruptM))
	if invariants(s) != "coup-follows-cards" {
		t.Errorf("stood on 5 when his time ran out: %s", invariants(s))
	}

	// A coup with a bet that never ends.
	s = checker()
	evs := coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand)
	s.replay(replayTable(), evs[:5], map[string]int64{}, new([]interruptM))
	if invariants(s) != "coup-ends-once" {
		t.Errorf("coup left open: %s", invariants(s))
	}
}

// voided is evs and then a coup_voided event for coup C.
func voided(evs []*eventsv1.TableEvent, reason string) []*eventsv1.TableEvent {
	e := ev(uint64(len(evs)+1), "", "C")
	e.Payload = &eventsv1.TableEvent_CoupVoided{CoupVoided: &eventsv1.CoupVoided{Reason: reason, By: "table", ByRole: "service"}}
	return append(slices.Clone(evs), e)
}

func TestReplayChecksInterruptedCoups(t *testing.T) {
	win := &eventsv1.CoupSettled{Outcome: eventsv1.Outcome_OUTCOME_BANK_WINS, BankerWinnings: 400, Commission: 20, BankerNet: 380, NewBank: 1380}
	stand := &eventsv1.DrawDecided{Hand: eventsv1.Hand_HAND_PLAYER, Draw: false, PlayerId: "p"}
	evs := coupEvents([]string{"2C", "3D"}, []string{"4H", "3S"}, eventsv1.Outcome_OUTCOME_BANK_WINS, win, stand)
	// Interrupted after two cards, before its result: clean, and noted.
	s := checker()
	var in []interruptM
	s.replay(replayTable(), voided(evs[:7], "interrupted: the coup could not go on for 20s"), map[string]int64{}, &in)
	if invariants(s) != "" || len(in) != 1 || in[0].c.banker != "b" || len(in[0].c.bets) != 1 || s.res.CoupsInterrupted != 1 {
		t.Fatalf("interrupted before its result: %q, %d interrupted, %+v", invariants(s), len(in), in)
	}
	// A croupier's void is not an interruption.
	s, in = checker(), nil
	s.replay(replayTable(), voided(evs[:7], "sim: misdeal"), map[string]int64{}, &in)
	if invariants(s) != "" || len(in) != 0 {
		t.Fatalf("croupier's void: %q, %d interrupted", invariants(s), len(in))
	}
	// Interrupted after its result.
	s, in = checker(), nil
	result := len(evs) - 1 // the coup_resulted, before the settlement
	s.replay(replayTable(), voided(evs[:result], "interrupted: the coup could not go on"), map[string]int64{}, &in)
	if invariants(s) != "coup-interrupted" {
		t.Errorf("interrupted after its result: %q", invariants(s))
	}
}

// TestCheckInterruptOnTime: a coup dealing without a result past
// InterruptAfter is reported after the second retry pass past it (the
// first may have seen its first failure late), and not before; a
// restart of table-svc starts the count again.
func TestCheckInterruptOnTime(t *testing.T) {
	clk := newClock()
	s := checker()
	s.cfg = Config{InterruptAfter: 20 * time.Second}
	s.clock = clk
	s.cl = &cluster{clock: clk, up: map[string]bool{svcTable: true, svcWallet: true}, tableStart: clk.Now()}
	tb := &simTable{n: 1}
	tb.view = &tablev1.Table{State: stDealing, Coup: &tablev1.Coup{CoupId: "C", Number: 3}}
	s.tables = []*simTable{tb}
	step := func(d time.Duration) {
		clk.advance(d, true)
		s.noteDealing(tb)
		s.checkInterrupt(tb)
	}
	step(0)
	step(19 * time.Second)
	step(time.Second) // 20 s: the pass that should interrupt it
	if invariants(s) != "" {
		t.Fatalf("reported at the first pass past the limit: %q", invariants(s))
	}
	// table-svc restarted: its time starts again.
	s.cl.tableStart = clk.Now()
	step(10 * time.Second)
	step(5 * time.Second)
	if invariants(s) != "" {
		t.Fatalf("reported %v after a restart: %q", 15*time.Second, invariants(s))
	}
	step(5 * time.Second)
	step(time.Second)
	if invariants(s) != "interrupt-on-time" {
		t.Fatalf("a coup dealing 21 s after the restart, two passes past the limit: %q", invariants(s))
	}
	// wallet-svc down: table-svc cannot void (it asks the wallet first);
	// two passes after its return, it is late again.
	s = checker()
	s.cfg, s.clock = Config{InterruptAfter: 20 * time.Second}, clk
	s.cl = &cluster{clock: clk, up: map[string]bool{svcTable: true}, tableStart: clk.Now()}
	tb.dealCoup, tb.dealLate = "", 0
	tb.view = &tablev1.Table{State: stDealing, Coup: &tablev1.Coup{CoupId: "D", Number: 4}}
	step(0)
	step(25 * time.Second)
	step(time.Second)
	step(time.Second)
	if invariants(s) != "" {
		t.Fatalf("reported while wallet-svc is down: %q", invariants(s))
	}
	s.cl.setUp(svcWallet, true)
	step(time.Second)
	if invariants(s) != "" {
		t.Fatalf("reported at the first pass after wallet-svc came back: %q", invariants(s))
	}
	step(time.Second)
	if invariants(s) != "interrupt-on-time" {
		t.Fatalf("two passes after wallet-svc came back: %q", invariants(s))
	}
	// A result, or another coup, ends the watch.
	s = checker()
	s.cfg, s.clock, s.cl = Config{InterruptAfter: 20 * time.Second}, clk, &cluster{clock: clk, up: map[string]bool{svcTable: true, svcWallet: true}, tableStart: clk.Now()}
	tb.dealCoup = ""
	step(0)
	tb.view.Coup.Outcome = tablev1.Outcome_OUTCOME_BANK_WINS
	step(30 * time.Second)
	step(30 * time.Second)
	if invariants(s) != "" {
		t.Fatalf("a coup with its result: %q", invariants(s))
	}
}

func TestCloseChecks(t *testing.T) {
	tb := &simTable{n: 1}
	betting := func(bets int) *tablev1.Table {
		v := &tablev1.Table{State: stBetting, BankerPlayerId: "b", Bank: 500, Coup: &tablev1.Coup{CoupId: "C"}}
		for range bets {
			v.Coup.Bets = append(v.Coup.Bets, &tablev1.Bet{PlayerId: "p", Amount: 100})
		}
		return v
	}
	closed := &tablev1.Table{State: stClosed}
	wrongState := errWithReason(t, codes.FailedPrecondition, "WRONG_STATE")
	for _, c := range []struct {
		name          string
		before, after *tablev1.Table
		err           error
		want          string
	}{
		{"closed between coups", betting(0), closed, nil, ""},
		{"refused mid-coup", betting(1), nil, wrongState, ""},
		{"accepted mid-coup", betting(1), closed, nil, "close-between-coups"},
		{"refused while waiting", &tablev1.Table{State: stWaiting}, nil, wrongState, "close-between-coups"},
		{"a bank left", betting(0), &tablev1.Table{State: stClosed, BankerPlayerId: "b", Bank: 500}, nil, "table-closed"},
		{"no answer", betting(1), nil, status.Error(codes.Unavailable, "down"), ""},
	} {
		s := checker()
		s.checkClose(tb, c.before, c.after, c.err)
		if got := invariants(s); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	a := &action{t: tb, who: "p", desc: "PlaceBet 100"}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"refused TABLE_CLOSED", errWithReason(t, codes.FailedPrecondition, "TABLE_CLOSED"), ""},
		{"accepted", nil, "closed-read-only"},
		{"refused otherwise", wrongState, "closed-read-only"},
		{"no answer", status.Error(codes.Unavailable, "down"), ""},
	} {
		s := checker()
		s.checkClosedRefuses(a, closed, c.err)
		if got := invariants(s); got != c.want {
			t.Errorf("closed table, %s: %q, want %q", c.name, got, c.want)
		}
	}
	// Events: after table_closed only its seat fees and the croupier's
	// record of it.
	evs := []*eventsv1.TableEvent{ev(1, "a", ""), ev(2, "b", ""), ev(3, "c", ""), ev(4, "d", "")}
	evs[0].Payload = &eventsv1.TableEvent_TableClosed{TableClosed: &eventsv1.TableClosed{Reason: "sim"}}
	evs[1].Payload = &eventsv1.TableEvent_SeatFeeCharged{SeatFeeCharged: &eventsv1.SeatFeeCharged{PlayerId: "p"}}
	evs[2].Payload = &eventsv1.TableEvent_StaffAction{StaffAction: &eventsv1.StaffAction{Action: "close_table"}}
	evs[3].Payload = &eventsv1.TableEvent_PlayerSeated{PlayerSeated: &eventsv1.PlayerSeated{PlayerId: "q"}}
	feeTable := func() *simTable {
		tb := replayTable()
		tb.rules = &tablev1.HouseRules{HourlyFee: 600}
		return tb
	}
	s := checker()
	s.replay(feeTable(), evs[:3], map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "" {
		t.Errorf("close, its fee and its record: %q", got)
	}
	s = checker()
	s.replay(feeTable(), evs, map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "closed-read-only" {
		t.Errorf("a player seated after the close: %q", got)
	}
}

// errWithReason is a status error with an ErrorInfo reason.
func errWithReason(t *testing.T, code codes.Code, reason string) error {
	st, err := status.New(code, reason).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "table.chemmy"})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// TestClusterMovesAService: a service whose port another process took
// while it was down starts on another port, and its callers follow.
func TestClusterMovesAService(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the suite")
	}
	f := newFaults(1, func(string, ...any) {})
	c, err := newCluster(t.TempDir(), slog.New(slog.DiscardHandler), newClock(), f, newRelayFaults(1), 0, 0)
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

// pbCoup is a punto banco coup: p bets 1000 on the bank, q 500 on the
// player; the player's natural 9 beats the bank's 5; then settled.
func pbCoup(player []string, settled *eventsv1.CoupSettled) []*eventsv1.TableEvent {
	var out []*eventsv1.TableEvent
	add := func(e *eventsv1.TableEvent) {
		e.Sequence, e.TableId, e.CoupId = uint64(len(out)+1), "T", "C"
		out = append(out, e)
	}
	add(&eventsv1.TableEvent{Payload: &eventsv1.TableEvent_BetPlaced{BetPlaced: &eventsv1.BetPlaced{PlayerId: "p", Amount: 1000, Spot: "bank"}}})
	add(&eventsv1.TableEvent{Payload: &eventsv1.TableEvent_BetPlaced{BetPlaced: &eventsv1.BetPlaced{PlayerId: "q", Amount: 500, Spot: "player"}}})
	banker := []string{"2C", "3D"}
	for _, d := range dealOrder(len(player), len(banker)) {
		add(&eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CardDealt{CardDealt: d}})
	}
	add(&eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CoupResulted{CoupResulted: &eventsv1.CoupResulted{
		Outcome: eventsv1.Outcome_OUTCOME_BANK_LOSES, Natural: true, PlayerCards: cards(player...), BankerCards: cards(banker...),
		PlayerTotal: int32(total(player)), BankerTotal: 5}}})
	add(&eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CoupSettled{CoupSettled: settled}})
	return out
}

func TestReplayPBChecksCardsAndMoney(t *testing.T) {
	pbTable := func() *simTable {
		return &simTable{n: 1, id: "T", players: []string{"p", "q"}, view: &tablev1.Table{},
			pb: &tablev1.PuntoBancoRules{CommissionBp: proto.Int64(500), TiePays: 8, BankNaturalPays: 9, PairPays: 11}}
	}
	right := &eventsv1.CoupSettled{Outcome: eventsv1.Outcome_OUTCOME_BANK_LOSES, HouseNet: 500}
	s := checker()
	delta := map[string]int64{}
	s.replayPB(pbTable(), pbCoup([]string{"9H", "KD"}, right), delta, new([]interruptM))
	if got := invariants(s); got != "" || delta["p"] != -1000 || delta["q"] != 500 || delta["house:bank"] != 500 || s.res.CoupsSettled != 1 {
		t.Fatalf("clean coup: %q, delta %v", got, delta)
	}
	s = checker()
	s.replayPB(pbTable(), pbCoup([]string{"9H", "KD"}, &eventsv1.CoupSettled{Outcome: eventsv1.Outcome_OUTCOME_BANK_LOSES, HouseNet: 400}), map[string]int64{}, new([]interruptM))
	if got := invariants(s); got != "settlement-follows-result" {
		t.Errorf("house:bank paid 100 too much: %q", got)
	}
	// A third card to a natural.
	s = checker()
	s.replayPB(pbTable(), pbCoup([]string{"9H", "KD", "2S"}, right), map[string]int64{}, new([]interruptM))
	if got := invariants(s); !strings.HasPrefix(got, "coup-follows-cards") {
		t.Errorf("a third card to a natural: %q", got)
	}
}
