package walletsvc

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/wallet-svc/walletevents"
)

// TestTurnoverLimits: what a player puts at stake counts towards his
// turnover, per UTC day and per session, whatever becomes of the stake; a
// stake over either limit is refused with its name, and the limit frees
// again with the next session or day.
func TestTurnoverLimits(t *testing.T) {
	clk, e := newClockedEnv(t)
	const alice = "player:alice"
	e.deposit(alice, 100000)
	e.setLimits(alice, &walletv1.PlayerLimits{DailyTurnoverLimit: 1000, SessionTurnoverLimit: 700})

	h1 := e.hold(alice, 400)
	h2 := e.hold(alice, 100)
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: e.id("grow"), HoldId: h2.GetHoldId(), Amount: 300}); err != nil {
		t.Fatal(err) // 400 + 100 + 200 = 700: the session's limit, reached not passed
	}
	e.void(h1) // a stake returned still counts
	e.void(h2)
	_, err := e.tryHold(alice, 1)
	wantLimit(t, err, limitSessionTurn)
	play := e.limits(alice).GetPlay()
	if play.GetDailyTurnover() != 700 || play.GetSessionTurnover() != 700 {
		t.Fatalf("turnover %d today, %d this session; want 700, 700", play.GetDailyTurnover(), play.GetSessionTurnover())
	}

	// A pause longer than the session gap: a new session, the day's 700
	// still counted.
	clk.Advance(DefaultSessionGap + time.Minute)
	e.void(e.hold(alice, 300))
	_, err = e.tryHold(alice, 1)
	wantLimit(t, err, limitDailyTurn)
	play = e.limits(alice).GetPlay()
	if play.GetDailyTurnover() != 1000 || play.GetSessionTurnover() != 300 {
		t.Fatalf("turnover %d today, %d this session; want 1000, 300", play.GetDailyTurnover(), play.GetSessionTurnover())
	}

	// The next UTC day (2026-12-02): free again.
	clk.Advance(14 * time.Hour)
	e.void(e.hold(alice, 700))
	e.wantBal(alice, 100000, 0)
	e.audit()
}

func (e *env) limits(acct string) *walletv1.GetPlayerLimitsResponse {
	e.t.Helper()
	r, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: acct})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// outboxEvent is one wallet event in the outbox, and its message.
type outboxEvent struct {
	msg outbox.Message
	ev  *eventsv1.WalletEvent
}

// outboxEvents are the wallet events in the outbox, in order, each
// message read as a reader of the stream reads it (walletevents.Decode,
// told by its subject as the relay publishes no type header on a batch).
func (e *env) outboxEvents() []outboxEvent {
	e.t.Helper()
	msgs, err := outbox.Pending(e.svc.db, 10000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []outboxEvent
	for _, m := range msgs {
		evs, err := walletevents.Decode(m.Headers().Get(outbox.TypeHeader), m.Subject, m.Payload)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, ev := range evs {
			out = append(out, outboxEvent{m, ev})
		}
	}
	return out
}

// limitEvents are the player_limits_changed events in the outbox.
func (e *env) limitEvents() []*eventsv1.PlayerLimitsChanged {
	e.t.Helper()
	var out []*eventsv1.PlayerLimitsChanged
	for _, x := range e.outboxEvents() {
		m, ev := x.msg, x.ev
		if c := ev.GetPlayerLimitsChanged(); c != nil {
			if m.Subject != "chemmy.wallet."+ev.GetEventId()+".player_limits_changed" || m.ID != ev.GetEventId() {
				e.t.Errorf("subject %q id %q for event %s", m.Subject, m.ID, ev.GetEventId())
			}
			out = append(out, c)
		}
	}
	return out
}

// TestLimitChangesAudited: every change of a player's limits is an event
// and kept with his limits: who, when, the limits in effect before and
// after, what was asked, the pending looser set and its time.
func TestLimitChangesAudited(t *testing.T) {
	clk, e := newClockedEnv(t)
	const alice = "player:alice"
	t0 := clk.Now()
	e.setLimits(alice, &walletv1.PlayerLimits{DailyLossLimit: 500, DailyTurnoverLimit: 5000})
	clk.Advance(time.Minute)
	t1 := clk.Now()
	e.setLimits(alice, &walletv1.PlayerLimits{DailyLossLimit: 2000, DailyTurnoverLimit: 5000}) // looser: waits

	changes := e.limits(alice).GetChanges()
	if len(changes) != 2 {
		t.Fatalf("%d changes recorded, want 2", len(changes))
	}
	first, second := changes[1], changes[0] // newest first
	for i, c := range []struct {
		ch                 *walletv1.LimitChange
		at                 time.Time
		oldLoss, newLoss   int64
		asked, pendingLoss int64
	}{{first, t0, 0, 500, 500, 0}, {second, t1, 500, 500, 2000, 2000}} {
		ch := c.ch
		if ch.GetAccountId() != alice || ch.GetChangedBy() != operator.Subject || ch.GetChangedByRole() != string(operator.Role) ||
			!ch.GetChangeTime().AsTime().Equal(c.at) || ch.GetOverride() || ch.GetEventId() == "" {
			t.Errorf("change %d: %v", i, ch)
		}
		if ch.GetOldLimits().GetDailyLossLimit() != c.oldLoss || ch.GetNewLimits().GetDailyLossLimit() != c.newLoss ||
			ch.GetRequestedLimits().GetDailyLossLimit() != c.asked || ch.GetPendingLimits().GetDailyLossLimit() != c.pendingLoss {
			t.Errorf("change %d: old %d new %d asked %d pending %d, want %d %d %d %d", i, ch.GetOldLimits().GetDailyLossLimit(),
				ch.GetNewLimits().GetDailyLossLimit(), ch.GetRequestedLimits().GetDailyLossLimit(), ch.GetPendingLimits().GetDailyLossLimit(),
				c.oldLoss, c.newLoss, c.asked, c.pendingLoss)
		}
	}
	if want := t1.Add(DefaultLimitsCoolingOff); !second.GetPendingEffectiveTime().AsTime().Equal(want) {
		t.Errorf("pending from %v, want %v", second.GetPendingEffectiveTime().AsTime(), want)
	}
	if first.GetPendingLimits() != nil {
		t.Errorf("a stricter change left limits pending: %v", first)
	}
	evs := e.limitEvents()
	if len(evs) != 2 || !proto.Equal(evs[0].GetChange(), first) || !proto.Equal(evs[1].GetChange(), second) {
		t.Errorf("events %v, want the two changes in order", evs)
	}

	// A retried request records nothing more.
	req := &walletv1.SetPlayerLimitsRequest{RequestId: "same", AccountId: alice, Limits: &walletv1.PlayerLimits{DailyLossLimit: 400}}
	for range 2 {
		if _, err := e.c.SetPlayerLimits(as(operator), req); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.limits(alice).GetChanges()); n != 3 {
		t.Errorf("%d changes after a retried request, want 3", n)
	}
	e.restart()
	if n := len(e.limits(alice).GetChanges()); n != 3 {
		t.Errorf("%d changes after a restart, want 3", n)
	}
}

// TestLimitOverride: where the deployment allows it, an operator lifts a
// limit at once, with a reason, on the record; elsewhere the override is
// refused and nothing changes.
func TestLimitOverride(t *testing.T) {
	const alice = "player:alice"
	lift := func(e *env, reason string) error {
		_, err := e.c.SetPlayerLimits(as(operator), &walletv1.SetPlayerLimitsRequest{RequestId: e.id("lift"), AccountId: alice,
			Limits: &walletv1.PlayerLimits{MaxStake: 5000}, Override: true, OverrideReason: reason})
		return err
	}

	// Not allowed by default.
	_, e := newClockedEnv(t)
	e.deposit(alice, 10000)
	e.setLimits(alice, &walletv1.PlayerLimits{MaxStake: 500})
	err := lift(e, "player verified, regulator rule 4.2")
	wantErr(t, err, codes.FailedPrecondition, "LIMIT_OVERRIDE_NOT_ALLOWED")
	if l := e.limits(alice); l.GetLimits().GetMaxStake() != 500 || len(l.GetChanges()) != 1 {
		t.Fatalf("a refused override changed the limits: %v", l)
	}

	// Allowed.
	clk := newFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	e = &env{t: t, path: t.TempDir() + "/wallet.db", clock: clk.Now, config: func(c *Config) { c.LimitsOverride = true }}
	e.start()
	t.Cleanup(e.stop)
	e.deposit(alice, 10000)
	e.setLimits(alice, &walletv1.PlayerLimits{MaxStake: 500})
	_, err = e.tryHold(alice, 1000)
	wantLimit(t, err, limitMaxStake)
	wantErr(t, lift(e, " "), codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = e.c.SetPlayerLimits(as(operator), &walletv1.SetPlayerLimitsRequest{RequestId: "reason-alone", AccountId: alice,
		Limits: &walletv1.PlayerLimits{MaxStake: 5000}, OverrideReason: "why"})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	if err := lift(e, "player verified, regulator rule 4.2"); err != nil {
		t.Fatal(err)
	}
	l := e.limits(alice)
	if l.GetLimits().GetMaxStake() != 5000 || l.GetPendingLimits() != nil {
		t.Fatalf("the override did not take effect at once: %v", l)
	}
	e.void(e.hold(alice, 1000)) // no cooling-off
	ch := l.GetChanges()[0]
	if !ch.GetOverride() || ch.GetOverrideReason() != "player verified, regulator rule 4.2" || ch.GetOldLimits().GetMaxStake() != 500 ||
		ch.GetNewLimits().GetMaxStake() != 5000 || ch.GetPendingLimits() != nil || !ch.GetChangeTime().AsTime().Equal(clk.Now()) {
		t.Errorf("the override's record: %v", ch)
	}
	evs := e.limitEvents()
	if len(evs) != 2 || !evs[1].GetChange().GetOverride() || !strings.Contains(evs[1].GetChange().GetOverrideReason(), "4.2") {
		t.Errorf("the override's event: %v", evs)
	}
}

// TestSeamlessOperatorBalancesInReport: the reconciliation report gives,
// for each transaction the operator answered, the player's balance it
// answered: a round's first debit's plus its amount is his balance before
// the round, its last credit's his balance after it. alice (1000 at the
// operator) bets 100 against bob's bank of 200 and wins: 900 after the
// debit, 1100 after the payout of 200.
func TestSeamlessOperatorBalancesInReport(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	op.fund("bob", 1000)
	e := newSeamless(t, op)
	bank := e.stake("player:bob", 200, coupRef("T1", "C1"))
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankLoses})
	e.drain()
	txs, _ := e.report()
	got := map[string]int64{}
	for _, x := range txs {
		if x.GetPlayerId() != "alice" || x.GetRoundId() != "C1" {
			continue
		}
		if x.OperatorBalance == nil {
			t.Errorf("alice's %s %s: no operator balance (status %s)", x.GetKind(), x.GetTransactionId(), x.GetStatus())
			continue
		}
		got[x.GetKind()] = x.GetOperatorBalance()
		if x.GetKind() == "debit" && x.GetOperatorBalance()+x.GetAmount() != 1000 {
			t.Errorf("alice's balance before the round: %d + %d, want 1000", x.GetOperatorBalance(), x.GetAmount())
		}
	}
	if got["debit"] != 900 || got["credit"] != 1100 {
		t.Errorf("alice's answered balances %v, want debit 900, credit 1100", got)
	}
	wantNoViolations(t, op)
}
