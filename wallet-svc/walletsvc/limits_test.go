package walletsvc

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// newClockedEnv is a wallet on a fake clock at 2026-12-01 10:00 UTC.
func newClockedEnv(t *testing.T) (*fakeClock, *env) {
	clk := newFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	e := &env{t: t, path: t.TempDir() + "/wallet.db", clock: clk.Now}
	e.start()
	t.Cleanup(e.stop)
	return clk, e
}

func (e *env) void(h *walletv1.Hold) {
	e.t.Helper()
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: e.id("void"), HoldId: h.GetHoldId()}); err != nil {
		e.t.Fatal(err)
	}
}

// wantLimit fails unless err is LIMIT_REACHED naming limit.
func wantLimit(t *testing.T, err error, limit string) {
	t.Helper()
	wantErr(t, err, codes.FailedPrecondition, reasonLimitReached)
	if got := errs.Info(err).GetMetadata()["limit"]; got != limit {
		t.Fatalf("LIMIT_REACHED names %q, want %q (%v)", got, limit, err)
	}
}

func (e *env) setLimits(acct string, l *walletv1.PlayerLimits) *walletv1.GetPlayerLimitsResponse {
	e.t.Helper()
	r, err := e.c.SetPlayerLimits(as(operator), &walletv1.SetPlayerLimitsRequest{RequestId: e.id("limits"), AccountId: acct, Limits: l})
	if err != nil {
		e.t.Fatalf("SetPlayerLimits(%s): %v", acct, err)
	}
	return r.GetLimits()
}

func (e *env) tryHold(acct string, amount int64) (*walletv1.Hold, error) {
	r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: acct, Amount: amount, Reference: "test"})
	return r.GetHold(), err
}

// TestPlayerLimits: each limit refuses a stake with its name; a lower
// limit is at once, a higher one after the cooling-off; losses count
// from the settlements; the limits survive a restart; nothing moves on a
// refusal.
func TestPlayerLimits(t *testing.T) {
	clk, e := newClockedEnv(t)
	const alice, bob = "player:alice", "player:bob"
	e.deposit(alice, 10000)
	e.deposit(bob, 10000)

	e.setLimits(alice, &walletv1.PlayerLimits{MaxStake: 500, DailyLossLimit: 1000})
	_, err := e.tryHold(alice, 600)
	wantLimit(t, err, limitMaxStake)
	e.wantBal(alice, 10000, 0)

	// alice banks 500 and loses it to bob: a loss of 500 today.
	bank := e.hold(alice, 500)
	bet := e.hold(bob, 500)
	e.settle(&walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES})
	e.wantBal(alice, 9500, 0)
	got, err := e.c.GetPlayerLimits(as(auth.Caller{Subject: "alice", Role: auth.RolePlayer}), &walletv1.GetPlayerLimitsRequest{AccountId: alice})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.GetPlay(); p.GetDailyLoss() != 500 || p.GetSessionLoss() != 500 || p.GetDay() != "2026-12-01" {
		t.Fatalf("alice's play: %v; want a loss of 500 today and this session", p)
	}
	_, err = e.c.GetPlayerLimits(as(auth.Caller{Subject: "bob", Role: auth.RolePlayer}), &walletv1.GetPlayerLimitsRequest{AccountId: alice})
	wantErr(t, err, codes.PermissionDenied, reasonNotYourAccount)

	// 500 lost + 500 at stake reaches the daily limit of 1000; 100 more
	// could pass it.
	open := e.hold(alice, 500)
	_, err = e.tryHold(alice, 100)
	wantLimit(t, err, limitDailyLoss)
	e.void(open)

	// A higher maximum waits for the cooling-off; the old one holds.
	r := e.setLimits(alice, &walletv1.PlayerLimits{MaxStake: 2000, DailyLossLimit: 1000})
	if r.GetLimits().GetMaxStake() != 500 || r.GetPendingLimits().GetMaxStake() != 2000 ||
		!r.GetPendingEffectiveTime().AsTime().Equal(clk.Now().Add(DefaultLimitsCoolingOff)) {
		t.Fatalf("after a raise: %v; want 500 in effect, 2000 pending for 24 h", r)
	}
	_, err = e.tryHold(alice, 600)
	wantLimit(t, err, limitMaxStake)
	e.restart() // the limits are stored
	clk.Advance(DefaultLimitsCoolingOff + time.Second)
	h := e.hold(alice, 600) // a new day, the raise in effect
	e.void(h)

	// A lower limit is at once; self-exclusion refuses every stake.
	r = e.setLimits(alice, &walletv1.PlayerLimits{MaxStake: 2000, DailyLossLimit: 1000,
		SelfExcludedUntil: timestamppb.New(clk.Now().Add(7 * 24 * time.Hour))})
	if r.GetPendingLimits() != nil {
		t.Fatalf("a stricter change left a pending one: %v", r)
	}
	_, err = e.tryHold(alice, 100)
	wantLimit(t, err, limitSelfExclusion)
	// Lifting it early waits for the cooling-off.
	r = e.setLimits(alice, &walletv1.PlayerLimits{MaxStake: 2000, DailyLossLimit: 1000})
	if r.GetLimits().GetSelfExcludedUntil() == nil || r.GetPendingLimits() == nil {
		t.Fatalf("lifting a self-exclusion: %v; want it in effect and the lifting pending", r)
	}
	_, err = e.tryHold(alice, 100)
	wantLimit(t, err, limitSelfExclusion)
	e.wantBal(alice, 9500, 0)
}

// TestSessionLimits: a session is play without a pause longer than the
// session gap; its time and loss limits end with it.
func TestSessionLimits(t *testing.T) {
	clk, e := newClockedEnv(t)
	const carol, dave = "player:carol", "player:dave"
	e.deposit(carol, 10000)
	e.deposit(dave, 10000)
	e.setLimits(carol, &walletv1.PlayerLimits{SessionTimeLimit: durationpb.New(time.Hour), SessionLossLimit: 300})

	// Play every 20 minutes: the session goes on.
	for range 3 {
		e.void(e.hold(carol, 100))
		clk.Advance(20 * time.Minute)
	}
	_, err := e.tryHold(carol, 100) // 60 minutes into the session
	wantLimit(t, err, limitSessionTime)
	clk.Advance(DefaultSessionGap + time.Second) // a pause ends it
	bank := e.hold(carol, 300)

	// A loss of 300 in the new session: nothing more at stake this session.
	bet := e.hold(dave, 300)
	e.settle(&walletv1.SettleCoupRequest{CoupId: "s1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_LOSES})
	_, err = e.tryHold(carol, 1)
	wantLimit(t, err, limitSessionLoss)
	clk.Advance(DefaultSessionGap + time.Second)
	e.void(e.hold(carol, 300))
}

// TestCheckStake: the verdict on a stake already held, without noting any
// play.
func TestCheckStake(t *testing.T) {
	clk, e := newClockedEnv(t)
	const erin = "player:erin"
	e.deposit(erin, 5000)
	bank := e.hold(erin, 1000)
	if _, err := e.c.CheckStake(as(tableSvc), &walletv1.CheckStakeRequest{AccountId: erin, Amount: 1000}); err != nil {
		t.Fatalf("no limits: %v", err)
	}
	e.setLimits(erin, &walletv1.PlayerLimits{MaxStake: 800})
	_, err := e.c.CheckStake(as(tableSvc), &walletv1.CheckStakeRequest{AccountId: erin, Amount: bank.GetAmount()})
	wantLimit(t, err, limitMaxStake)
	before, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: erin})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	_, _ = e.c.CheckStake(as(tableSvc), &walletv1.CheckStakeRequest{AccountId: erin, Amount: 700})
	after, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: erin})
	if err != nil {
		t.Fatal(err)
	}
	if !after.GetPlay().GetLastPlayTime().AsTime().Equal(before.GetPlay().GetLastPlayTime().AsTime()) {
		t.Fatalf("CheckStake noted play: last play %v, then %v", before.GetPlay().GetLastPlayTime(), after.GetPlay().GetLastPlayTime())
	}
	_, err = e.c.CheckStake(as(auth.Caller{Subject: "erin", Role: auth.RolePlayer}), &walletv1.CheckStakeRequest{AccountId: erin, Amount: 1})
	wantErr(t, err, codes.PermissionDenied, reason(walletv1.ErrorReason_ERROR_REASON_ROLE_NOT_ALLOWED))
}

func TestLimitChange(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cur := limitsRecord{Limits: limitSet{DailyLoss: 1000, MaxStake: 500}}
	// Stricter fields at once, looser ones pending (the whole new set).
	r := cur.change(limitSet{DailyLoss: 800, MaxStake: 900}, now, time.Hour)
	if r.Limits.DailyLoss != 800 || r.Limits.MaxStake != 500 || r.Pending == nil || r.Pending.MaxStake != 900 || !r.PendingAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("change = %+v", r)
	}
	if got := r.effective(now.Add(time.Hour)).Limits; got.MaxStake != 900 || got.DailyLoss != 800 {
		t.Fatalf("after the cooling-off: %+v", got)
	}
	// Removing a limit is looser; setting one where there was none, stricter.
	r = cur.change(limitSet{MaxStake: 500, SessionLoss: 50}, now, time.Hour)
	if r.Limits.DailyLoss != 1000 || r.Limits.SessionLoss != 50 || r.Pending == nil || r.Pending.DailyLoss != 0 {
		t.Fatalf("remove daily, add session: %+v", r)
	}
	// The latest change replaces a pending one.
	r = r.change(limitSet{DailyLoss: 1000, MaxStake: 500, SessionLoss: 50}, now, time.Hour)
	if r.Pending != nil {
		t.Fatalf("no looser field, yet pending: %+v", r)
	}
	// A past self-exclusion is none.
	past := limitsRecord{Limits: limitSet{SelfExcludedUntil: now.Add(-time.Hour)}}
	if r := past.change(limitSet{}, now, time.Hour); r.Pending != nil {
		t.Fatalf("an ended self-exclusion made a change pending: %+v", r)
	}
}

// SettleCoup answers, with the new bank, what CheckStake of the banker
// and that bank answers right after it (banker_stake), this coup's
// result counted in his losses: the table need not ask.
func TestSettleCoupChecksBankerStake(t *testing.T) {
	_, e := newClockedEnv(t)
	for i, c := range []struct {
		name    string
		limits  *walletv1.PlayerLimits
		outcome walletv1.CoupOutcome
		limit   string // "" when allowed
	}{
		{"no limits", nil, bankWins, ""},
		{"the bank grown past the maximum stake", &walletv1.PlayerLimits{MaxStake: 1200}, bankWins, limitMaxStake},
		// Losing 500 and 500 left at stake: over 900 only with this coup's loss counted.
		{"this coup's loss counted", &walletv1.PlayerLimits{DailyLossLimit: 900}, bankLoses, limitDailyLoss},
		{"within the daily loss", &walletv1.PlayerLimits{DailyLossLimit: 1100}, bankLoses, ""},
	} {
		banker, punter := fmt.Sprintf("player:banker%d", i), fmt.Sprintf("player:punter%d", i)
		e.deposit(banker, 5000)
		e.deposit(punter, 5000)
		bank, bet := e.hold(banker, 1000), e.hold(punter, 500)
		if c.limits != nil {
			e.setLimits(banker, c.limits)
		}
		r, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("stake-%d", i), BankHoldId: bank.GetHoldId(),
			Bets: bets(bet), Outcome: c.outcome})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := r.GetBankerStake()
		if got == nil || got.GetAllowed() != (c.limit == "") || got.GetLimit() != c.limit {
			t.Errorf("%s: banker_stake %v, want limit %q", c.name, got, c.limit)
		}
		_, err = e.c.CheckStake(as(tableSvc), &walletv1.CheckStakeRequest{AccountId: banker, Amount: r.GetNewBank()})
		if (err == nil) != got.GetAllowed() || (err != nil && errs.Info(err).GetMetadata()["limit"] != got.GetLimit()) {
			t.Errorf("%s: CheckStake after it says %v, the settlement %v", c.name, err, got)
		}
	}
}
