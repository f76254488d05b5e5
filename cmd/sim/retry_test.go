package sim

import (
	"context"
	"encoding/binary"
	"log/slog"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// TestJudgeRetry: a request sent again after its reply was lost answers
// as the first try did (the table as it stands now) and changes nothing;
// sent again amended, it is refused REQUEST_ID_REUSED.
func TestJudgeRetry(t *testing.T) {
	start := simEpoch
	seat := func(n int32, deadline int64) answer {
		return &tablev1.JoinTableResponse{SeatNumber: n, Table: &tablev1.Table{TableId: "T",
			TurnDeadline: timestamppb.New(start.Add(time.Duration(deadline) * time.Second))}}
	}
	state := func(seq uint64, balance int64) *rest {
		return &rest{eventSeq: seq, view: &tablev1.Table{TableId: "T"}, money: map[string][2]int64{"player:p": {balance, 0}}}
	}
	lost := func(first answer, seq uint64) *action {
		return &action{t: &simTable{n: 1}, who: "p", desc: "JoinTable", again: true, lostReply: true,
			first: &firstAnswer{resp: first, eventSeq: seq, tableStart: start}}
	}
	reused := errs.New(codes.AlreadyExists, "chemmy.table", "REQUEST_ID_REUSED", "used before")
	for _, tc := range []struct {
		name          string
		a             *action
		before, after *rest
		restarted     bool
		resp          answer
		err           error
		want          string
	}{
		{"the same answer", lost(seat(2, 5), 7), state(7, 100), state(7, 100), false, seat(2, 5), nil, ""},
		{"another seat, nothing since", lost(seat(2, 5), 7), state(7, 100), state(7, 100), false, seat(3, 5), nil, "retry-same-answer"},
		{"another seat, the table moved on", lost(seat(2, 5), 7), state(9, 100), state(9, 100), false, seat(0, 9), nil, ""},
		{"another deadline, table-svc started again", lost(seat(2, 5), 7), state(7, 100), state(7, 100), true, seat(2, 8), nil, ""},
		{"another deadline, nothing since", lost(seat(2, 5), 7), state(7, 100), state(7, 100), false, seat(2, 8), nil, "retry-same-answer"},
		{"an event written", lost(seat(2, 5), 7), state(7, 100), state(8, 100), false, seat(2, 5), nil, "retry-changes-nothing"},
		{"money moved", lost(seat(2, 5), 7), state(7, 100), state(7, 90), false, seat(2, 5), nil, "retry-changes-nothing"},
		{"a failure (idempotent-retry's)", lost(seat(2, 5), 7), state(7, 100), state(7, 100), false, nil, status.Error(codes.Unavailable, "x"), ""},
		{"amended, refused", &action{t: &simTable{n: 1}, who: "p", desc: "PlaceBet 5", again: true, amended: true},
			state(7, 100), state(7, 100), false, nil, reused, ""},
		{"amended, taken", &action{t: &simTable{n: 1}, who: "p", desc: "PlaceBet 5", again: true, amended: true},
			state(7, 100), state(8, 95), false, seat(0, 0), nil, "retry-changes-nothing,amended-retry-refused"},
		{"amended, refused otherwise", &action{t: &simTable{n: 1}, who: "p", desc: "PlaceBet 5", again: true, amended: true},
			state(7, 100), state(7, 100), false, nil, errs.New(codes.FailedPrecondition, "chemmy.table", "NOT_YOUR_TURN", "x"), "amended-retry-refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := checker()
			ts := start
			if tc.restarted {
				ts = start.Add(time.Minute)
			}
			s.judge(tc.a, tc.before, tc.after, ts, tc.resp, tc.err)
			if got := invariants(s); got != tc.want {
				t.Fatalf("violations %q, want %q: %v", got, tc.want, s.res.Violations)
			}
		})
	}
}

// TestDependencySameAnswer: an answer of shoe-svc or wallet-svc to a
// request table-svc sent before must be the first answer.
func TestDependencySameAnswer(t *testing.T) {
	f := newFaults(1, func(string, ...any) {})
	f.isUp = func(string) bool { return true }
	holdID := "h1"
	invoker := func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		reply.(*walletv1.PlaceHoldResponse).Hold = &walletv1.Hold{HoldId: holdID}
		return nil
	}
	call := func(id string) {
		if err := f.intercept(context.Background(), "/chemmy.wallet.v1.WalletService/PlaceHold", &walletv1.PlaceHoldRequest{RequestId: id},
			&walletv1.PlaceHoldResponse{}, nil, invoker); err != nil {
			t.Fatal(err)
		}
	}
	call("a")
	call("a")
	call("b")
	if m := f.takeMismatches(); len(m) != 0 {
		t.Fatalf("the same answers: %v", m)
	}
	holdID = "h2" // a second hold for the same request
	call("a")
	if m := f.takeMismatches(); len(m) != 1 {
		t.Fatalf("another answer to request a: %v", m)
	}
	// SeedShoe answers a retry with the shoe as it stands: its dealing
	// since differs, what the first one fixed may not.
	shoe := &shoev1.Shoe{ShoeId: "s", CutPosition: 40, CardsDealt: 0, CardsRemaining: 412}
	seed := func() {
		if err := f.intercept(context.Background(), "/chemmy.shoe.v1.ShoeService/SeedShoe", &shoev1.SeedShoeRequest{RequestId: "seed"},
			&shoev1.SeedShoeResponse{}, nil, func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				reply.(*shoev1.SeedShoeResponse).Shoe = proto.Clone(shoe).(*shoev1.Shoe)
				return nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	seed()
	shoe.CardsDealt, shoe.CardsRemaining = 4, 408
	seed()
	if m := f.takeMismatches(); len(m) != 0 {
		t.Fatalf("SeedShoe answered again after 4 cards: %v", m)
	}
	shoe.CutPosition = 41
	seed()
	if m := f.takeMismatches(); len(m) != 1 {
		t.Fatalf("SeedShoe answered again with another cut: %v", m)
	}
}

// relayEvent is one fault a relay call took: the key of the message
// whose fate it took, and the kind.
type relayEvent struct {
	key  uint64
	kind string
}

// publishUnderFaults publishes messages 1..n of svc through f's fates,
// windows of up to w messages, until each has passed, as the relay would
// (a faulted window is tried again from its first message), and returns
// the faults taken.
func publishUnderFaults(f *relayFaults, svc string, n, w int) []relayEvent {
	var out []relayEvent
	msg := func(k int) outbox.Message {
		return outbox.Message{Key: binary.BigEndian.AppendUint64(nil, uint64(k))}
	}
	for next := 1; next <= n; {
		var window []outbox.Message
		for k := next; k <= n && len(window) < w; k++ {
			window = append(window, msg(k))
		}
		kind := outbox.CallPublish
		if len(window) > 1 {
			kind = outbox.CallBatch
		}
		got, key := f.fateOf(svc, outbox.Call{Kind: kind, Messages: window})
		if got == "" {
			next += len(window)
			continue
		}
		out = append(out, relayEvent{key, got})
	}
	return out
}

// TestRelayFatesFollowTheSeed: a relay fault's fate depends on the seed,
// the service and the message, not on how the relay groups messages into
// calls; no message is faulted more than relayTries times; a killed
// service's relay reaches nothing; the quiet phase faults nothing.
func TestRelayFatesFollowTheSeed(t *testing.T) {
	const n = 2000
	one := publishUnderFaults(newRelayFaults(7), svcTable, n, 1)
	if len(one) == 0 {
		t.Fatal("no relay fault in 2000 messages")
	}
	for _, w := range []int{1, 7, 40} {
		if again := publishUnderFaults(newRelayFaults(7), svcTable, n, w); !slices.Equal(one, again) {
			t.Fatalf("the same seed gave other faults in windows of %d", w)
		}
	}
	tries := map[uint64]int{}
	kinds := map[string]int{}
	for _, e := range one {
		tries[e.key]++
		kinds[e.kind]++
		if tries[e.key] > relayTries {
			t.Fatalf("message %d faulted %d times", e.key, tries[e.key])
		}
	}
	for _, k := range []string{relayFail, relayLost, relayHang, relayLate} {
		if kinds[k] == 0 {
			t.Errorf("no %s in %v", k, kinds)
		}
	}
	other := publishUnderFaults(newRelayFaults(8), svcTable, n, 1)
	if slices.Equal(one, other) {
		t.Error("another seed gave the same faults")
	}
	f := newRelayFaults(7)
	f.setDead(svcWallet, true)
	if got := f.fate(svcWallet, outbox.Call{Kind: outbox.CallStream}); got != relayDead {
		t.Errorf("a killed service's relay call: %q", got)
	}
	f.setOff(true)
	if got := publishUnderFaults(f, svcTable, n, 1); len(got) != 0 {
		t.Errorf("faults in the quiet phase: %v", got)
	}
}

// TestKillKeepsWhatTheKillLeft: a service killed is down and its relay
// dead at once; what it commits after the kill (it runs on in memory
// until the request ends) is gone once it is started again on its store
// as the kill left it.
func TestKillKeepsWhatTheKillLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the suite")
	}
	f := newFaults(1, func(string, ...any) {})
	rf := newRelayFaults(1)
	c, err := newCluster(t.TempDir(), slog.New(slog.DiscardHandler), newClock(), f, rf, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	s := &sim{cl: c, players: map[string]*simPlayer{"p": {id: "p"}}}
	if err := s.deposit("p", 100); err != nil {
		t.Fatal(err)
	}
	c.kill(svcWallet)
	if c.isUp(svcWallet) || rf.fate(svcWallet, outbox.Call{Kind: outbox.CallStream}) != relayDead {
		t.Fatal("the killed wallet is up, or its relay reaches NATS")
	}
	// The dead instance still runs: a deposit it takes now is after the
	// kill.
	if err := s.deposit("p", 50); err != nil {
		t.Fatal(err)
	}
	if bal, _, err := s.account("player:p"); err != nil || bal != 150 {
		t.Fatalf("before the restart: %d, %v", bal, err)
	}
	if err := c.reap(); err != nil {
		t.Fatal(err)
	}
	if !c.isUp(svcWallet) || c.killCount(svcWallet) != 1 || c.pendingKill(svcWallet) {
		t.Fatal("the wallet is not started again")
	}
	if bal, _, err := s.account("player:p"); err != nil || bal != 100 {
		t.Fatalf("after the restart: balance %d (%v), want 100: what the kill left", bal, err)
	}
	// table-svc killed: its calls are not made until it starts again.
	c.kill(svcTable)
	err = f.intercept(context.Background(), "/chemmy.wallet.v1.WalletService/GetAccount", &walletv1.GetAccountRequest{}, &walletv1.GetAccountResponse{}, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			t.Fatal("a killed table-svc's call was made")
			return nil
		})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a killed table-svc's call: %v", err)
	}
	if err := c.reap(); err != nil {
		t.Fatal(err)
	}
	if !c.isUp(svcTable) || f.tableDead {
		t.Fatal("table-svc is not started again")
	}
}
