package walletsvc

import (
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/opwallet"
)

var gatewaySvc = auth.Caller{Subject: "gateway", Role: auth.RoleService}

// TestLaunchSessions: a game-launch session's token authenticates its
// player until it expires or is revoked; a retry of its creation gets a
// new token that replaces the first; a hold in a session is checked
// (the session's player, its currency, valid now) and records it; an
// expired, revoked or foreign session holds nothing.
func TestLaunchSessions(t *testing.T) {
	clk, e := newClockedEnv(t)
	e.deposit("player:bob", 1000)
	create := &walletv1.CreateLaunchSessionRequest{RequestId: "launch-1", PlayerId: "bob", TableId: "T1", Ttl: durationpb.New(time.Hour)}
	first, err := e.c.CreateLaunchSession(as(operator), create)
	if err != nil {
		t.Fatal(err)
	}
	ls := first.GetLaunchSession()
	if !strings.HasPrefix(first.GetToken(), LaunchTokenPrefix) || ls.GetPlayerId() != "bob" || ls.GetCurrencyCode() != "EUR" ||
		ls.GetTableId() != "T1" || ls.GetCreatedBy() != "op-1" || ls.GetExpireTime().AsTime().Sub(ls.GetCreateTime().AsTime()) != time.Hour {
		t.Fatalf("created %v", first)
	}
	// Only the operator launches; only the gateway authenticates.
	_, err = e.c.CreateLaunchSession(as(auditor), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-x", PlayerId: "bob"})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.AuthenticateLaunchSession(as(tableSvc), &walletv1.AuthenticateLaunchSessionRequest{Token: first.GetToken()})
	wantErr(t, err, codes.PermissionDenied, "PEER_NOT_ALLOWED")
	// A retry: the same session, a new token; the first no longer works.
	again, err := e.c.CreateLaunchSession(as(operator), create)
	if err != nil || again.GetLaunchSession().GetLaunchSessionId() != ls.GetLaunchSessionId() || again.GetToken() == first.GetToken() {
		t.Fatalf("retry: %v %v", again, err)
	}
	_, err = e.c.AuthenticateLaunchSession(as(gatewaySvc), &walletv1.AuthenticateLaunchSessionRequest{Token: first.GetToken()})
	wantErr(t, err, codes.Unauthenticated, reasonLaunchSessionNotFound)
	got, err := e.c.AuthenticateLaunchSession(as(gatewaySvc), &walletv1.AuthenticateLaunchSessionRequest{Token: again.GetToken()})
	if err != nil || got.GetLaunchSession().GetLaunchSessionId() != ls.GetLaunchSessionId() {
		t.Fatalf("authenticate: %v %v", got, err)
	}
	_, err = e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-1", PlayerId: "carol"})
	wantErr(t, err, codes.AlreadyExists, reasonRequestIDReused)
	_, err = e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-2", PlayerId: "bob", Ttl: durationpb.New(25 * time.Hour)})
	wantErr(t, err, codes.InvalidArgument, reasonInvalidArgument)
	_, err = e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-3", PlayerId: "bob", CurrencyCode: "XXQ"})
	wantErr(t, err, codes.InvalidArgument, reasonCurrencyUnknown)

	// A hold in the session records it; in another's, in an unknown
	// one or in another currency, nothing is held.
	place := func(sid, acct string) (*walletv1.Hold, error) {
		r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: acct, Amount: 100,
			Reference: "tables/T1/coups/C1/bets/bob", LaunchSessionId: sid})
		return r.GetHold(), err
	}
	h, err := place(ls.GetLaunchSessionId(), "player:bob")
	if err != nil || h.GetLaunchSessionId() != ls.GetLaunchSessionId() {
		t.Fatalf("hold in the session: %v %v", h, err)
	}
	carol, err := e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-carol", PlayerId: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ sid, acct string }{
		{carol.GetLaunchSession().GetLaunchSessionId(), "player:bob"},
		{"ls-unknown", "player:bob"},
		{ls.GetLaunchSessionId(), "player:bob@USD"},
	} {
		_, err := place(c.sid, c.acct)
		wantErr(t, err, codes.FailedPrecondition, reasonSessionExpired)
	}
	e.wantBal("player:bob", 1000, 100)

	// Expired: refused everywhere, nothing held.
	clk.Advance(time.Hour)
	_, err = e.c.AuthenticateLaunchSession(as(gatewaySvc), &walletv1.AuthenticateLaunchSessionRequest{Token: again.GetToken()})
	wantErr(t, err, codes.Unauthenticated, reasonSessionExpired)
	_, err = place(ls.GetLaunchSessionId(), "player:bob")
	wantErr(t, err, codes.FailedPrecondition, reasonSessionExpired)
	e.wantBal("player:bob", 1000, 100)

	// Revoked: the same; revoking is idempotent, the first reason stays.
	sid := carol.GetLaunchSession().GetLaunchSessionId()
	rev, err := e.c.RevokeLaunchSession(as(operator), &walletv1.RevokeLaunchSessionRequest{RequestId: "revoke-1", LaunchSessionId: sid, Reason: "logged out"})
	if err != nil || rev.GetLaunchSession().GetRevokeTime() == nil || rev.GetLaunchSession().GetRevokedBy() != "op-1" {
		t.Fatalf("revoke: %v %v", rev, err)
	}
	rev2, err := e.c.RevokeLaunchSession(as(operator), &walletv1.RevokeLaunchSessionRequest{RequestId: "revoke-2", LaunchSessionId: sid, Reason: "again"})
	if err != nil || rev2.GetLaunchSession().GetRevokeReason() != "logged out" {
		t.Fatalf("revoke again: %v %v", rev2, err)
	}
	_, err = e.c.AuthenticateLaunchSession(as(gatewaySvc), &walletv1.AuthenticateLaunchSessionRequest{Token: carol.GetToken()})
	wantErr(t, err, codes.Unauthenticated, reasonSessionExpired)
	_, err = e.c.RevokeLaunchSession(as(operator), &walletv1.RevokeLaunchSessionRequest{RequestId: "revoke-3", LaunchSessionId: "ls-nope"})
	wantErr(t, err, codes.NotFound, reasonLaunchSessionNotFound)
	// Read back: never the token.
	read, err := e.c.GetLaunchSession(as(auditor), &walletv1.GetLaunchSessionRequest{LaunchSessionId: sid})
	if err != nil || read.GetLaunchSession().GetRevokeReason() != "logged out" || strings.Contains(read.String(), "chls_") {
		t.Fatalf("GetLaunchSession: %v %v", read, err)
	}
	// A retry of an ended session's creation gets no new token.
	_, err = e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-carol", PlayerId: "carol"})
	wantErr(t, err, codes.FailedPrecondition, reasonSessionExpired)
}

// TestLaunchSessionRetention: a session, its token and its request go one
// request retention after its expiry, not before.
func TestLaunchSessionRetention(t *testing.T) {
	clk, e := newClockedEnv(t)
	resp, err := e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-r", PlayerId: "bob", Ttl: durationpb.New(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetLaunchSession().GetLaunchSessionId()
	const keep = 48 * time.Hour
	clk.Advance(time.Hour + keep - time.Second)
	if n, _, err := e.svc.expireLaunches(clk.Now(), keep, 10); err != nil || n != 0 {
		t.Fatalf("before its time: %d deleted, %v", n, err)
	}
	if _, err := e.c.GetLaunchSession(as(auditor), &walletv1.GetLaunchSessionRequest{LaunchSessionId: id}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	if n, more, err := e.svc.expireLaunches(clk.Now(), keep, 10); err != nil || n != 1 || more {
		t.Fatalf("after its time: %d deleted (more %v), %v", n, more, err)
	}
	_, err = e.c.GetLaunchSession(as(auditor), &walletv1.GetLaunchSessionRequest{LaunchSessionId: id})
	wantErr(t, err, codes.NotFound, reasonLaunchSessionNotFound)
	_, err = e.c.AuthenticateLaunchSession(as(gatewaySvc), &walletv1.AuthenticateLaunchSessionRequest{Token: resp.GetToken()})
	wantErr(t, err, codes.Unauthenticated, reasonLaunchSessionNotFound)
}

// TestLaunchSessionOperator: a session records the operator of the member
// of staff who created it, and AuthenticateLaunchSession and
// GetLaunchSession return it; one created by a caller of no operator
// names none.
func TestLaunchSessionOperator(t *testing.T) {
	_, e := newClockedEnv(t)
	lux := auth.Caller{Subject: "lea", Role: auth.RoleOperator, Operator: "casino-b"}
	made, err := e.c.CreateLaunchSession(as(lux), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-lux", PlayerId: "bob"})
	if err != nil || made.GetLaunchSession().GetOperatorId() != "casino-b" || made.GetLaunchSession().GetCreatedBy() != "lea" {
		t.Fatalf("created %v, %v", made, err)
	}
	got, err := e.c.AuthenticateLaunchSession(as(gatewaySvc), &walletv1.AuthenticateLaunchSessionRequest{Token: made.GetToken()})
	if err != nil || got.GetLaunchSession().GetOperatorId() != "casino-b" {
		t.Fatalf("authenticate: %v, %v", got, err)
	}
	luxAuditor := auth.Caller{Subject: "aud-b", Role: auth.RoleAuditor, Operator: "casino-b"}
	read, err := e.c.GetLaunchSession(as(luxAuditor), &walletv1.GetLaunchSessionRequest{LaunchSessionId: made.GetLaunchSession().GetLaunchSessionId()})
	if err != nil || read.GetLaunchSession().GetOperatorId() != "casino-b" {
		t.Fatalf("GetLaunchSession: %v, %v", read, err)
	}
	// Another operator's staff: as if it did not exist (design-tenancy step 3).
	_, err = e.c.GetLaunchSession(as(auditor), &walletv1.GetLaunchSessionRequest{LaunchSessionId: made.GetLaunchSession().GetLaunchSessionId()})
	wantErr(t, err, codes.NotFound, reasonLaunchSessionNotFound)
	_, err = e.c.RevokeLaunchSession(as(operator), &walletv1.RevokeLaunchSessionRequest{RequestId: "rv", LaunchSessionId: made.GetLaunchSession().GetLaunchSessionId()})
	wantErr(t, err, codes.NotFound, reasonLaunchSessionNotFound)
	// The same request id at another operator is another session.
	other, err := e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-lux", PlayerId: "bob"})
	if err != nil || other.GetLaunchSession().GetLaunchSessionId() == made.GetLaunchSession().GetLaunchSessionId() {
		t.Fatalf("the default operator's launch-lux: %v, %v", other, err)
	}
	// A retry keeps the session's operator.
	again, err := e.c.CreateLaunchSession(as(lux), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-lux", PlayerId: "bob"})
	if err != nil || again.GetLaunchSession().GetOperatorId() != "casino-b" {
		t.Fatalf("retry: %v, %v", again, err)
	}
	plain, err := e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: "launch-plain", PlayerId: "bob"})
	if err != nil || plain.GetLaunchSession().GetOperatorId() != "" {
		t.Fatalf("created by a caller of no operator: %v, %v", plain, err)
	}
}

// TestResizeHoldChecksLaunchSession: a resize asked in the player's
// game-launch session (a banker's raise through his launch token) checks
// it as PlaceHold does: the account's player's, in its currency, neither
// expired nor revoked; otherwise FAILED_PRECONDITION SESSION_EXPIRED and
// the hold keeps its amount. Without a session nothing is checked.
func TestResizeHoldChecksLaunchSession(t *testing.T) {
	_, e := newClockedEnv(t)
	e.deposit("player:bob", 1000)
	launch := func(player string) string {
		r, err := e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: e.id("launch"), PlayerId: player})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetLaunchSession().GetLaunchSessionId()
	}
	bob, carol := launch("bob"), launch("carol")
	bank, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "bank", AccountId: "player:bob", Amount: 300,
		Reference: "tables/T1/coups/C1", Purpose: walletv1.HoldPurpose_HOLD_PURPOSE_BANK, LaunchSessionId: bob})
	if err != nil {
		t.Fatal(err)
	}
	resize := func(sid string, amount int64) error {
		_, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: e.id("raise"), HoldId: bank.GetHold().GetHoldId(),
			Amount: amount, LaunchSessionId: sid})
		return err
	}
	if err := resize(bob, 500); err != nil {
		t.Fatalf("a raise in bob's session: %v", err)
	}
	e.wantBal("player:bob", 1000, 500)
	for _, sid := range []string{carol, "ls-unknown"} {
		wantErr(t, resize(sid, 700), codes.FailedPrecondition, reasonSessionExpired)
	}
	e.wantBal("player:bob", 1000, 500)
	if _, err := e.c.RevokeLaunchSession(as(operator), &walletv1.RevokeLaunchSessionRequest{RequestId: "revoke-bob", LaunchSessionId: bob}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, resize(bob, 700), codes.FailedPrecondition, reasonSessionExpired)
	e.wantBal("player:bob", 1000, 500)
	// Asked in no session (the table's own resizes: a bet cut back, a
	// bank brought back), nothing is checked.
	if err := resize("", 400); err != nil {
		t.Fatalf("a resize in no session: %v", err)
	}
	e.wantBal("player:bob", 1000, 400)
}

// TestSeamlessRaiseDebitCarriesItsSession: in seamless mode the debit of
// a raise asked in the player's game-launch session carries that session
// (session_id), though the bank was put up in another, since revoked;
// a raise in the revoked one is refused before any debit.
func TestSeamlessRaiseDebitCarriesItsSession(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	var mu sync.Mutex
	var debits []string // the session of each debit
	op.before = func(kind string, tx opwallet.Transaction) {
		if kind == opwallet.OpDebit {
			mu.Lock()
			debits = append(debits, tx.SessionID)
			mu.Unlock()
		}
	}
	e := newSeamless(t, op)
	launch := func(id string) string {
		r, err := e.c.CreateLaunchSession(as(operator), &walletv1.CreateLaunchSessionRequest{RequestId: id, PlayerId: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetLaunchSession().GetLaunchSessionId()
	}
	first, second := launch("launch-1"), launch("launch-2")
	bank, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "bank", AccountId: "player:alice", Amount: 200,
		Reference: coupRef("T1", "C1"), Purpose: walletv1.HoldPurpose_HOLD_PURPOSE_BANK, LaunchSessionId: first})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.RevokeLaunchSession(as(operator), &walletv1.RevokeLaunchSessionRequest{RequestId: "revoke-1", LaunchSessionId: first}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "raise-1", HoldId: bank.GetHold().GetHoldId(), Amount: 500, LaunchSessionId: first})
	wantErr(t, err, codes.FailedPrecondition, reasonSessionExpired)
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "raise-2", HoldId: bank.GetHold().GetHoldId(), Amount: 500, LaunchSessionId: second}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]string(nil), debits...)
	mu.Unlock()
	if len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("the debits' sessions %q, want the bank's %q then the raise's %q", got, first, second)
	}
	if op.bal("alice") != 500 {
		t.Fatalf("alice at the operator %d, want 500", op.bal("alice"))
	}
	e.wantBal("player:alice", 500, 500)
}
