package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// withToken is a context whose calls carry a bearer token (a launch
// session's).
func withToken(t *testing.T, token string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// launchRig is a seamless rig with a punto banco table (the house banks,
// a player may bet on both bank and player: every coup he bets in owes
// him a credit) and the operator's way to launch players.
type launchRig struct {
	*seamlessRig
	t     *testing.T
	table string
}

func newLaunchRig(t *testing.T) *launchRig {
	r := &launchRig{seamlessRig: newSeamlessRig(t, refwallet.Faults{}), t: t}
	if _, err := r.c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/float", AccountId: "house:bank", Amount: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	r.table = r.newTable("pb")
	return r
}

func (r *launchRig) newTable(name string) string {
	r.t.Helper()
	zero := int32(0)
	tb, err := r.c.table.CreateTable(as(r.t, "operator"), &tablev1.CreateTableRequest{RequestId: r.t.Name() + "/table/" + name,
		Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{BettingWindowMs: 1000, ResultPauseMs: &zero}})
	if err != nil {
		r.t.Fatal(err)
	}
	return tb.GetTable().GetTableId()
}

// launch makes a launch session as the operator.
func (r *launchRig) launch(rid, player, table string, ttl time.Duration) *walletv1.CreateLaunchSessionResponse {
	r.t.Helper()
	req := &walletv1.CreateLaunchSessionRequest{RequestId: r.t.Name() + "/launch/" + rid, PlayerId: player, TableId: table}
	if ttl > 0 {
		req.Ttl = durationpb.New(ttl)
	}
	resp, err := r.c.wallet.CreateLaunchSession(as(r.t, "operator"), req)
	if err != nil {
		r.t.Fatalf("CreateLaunchSession %s: %v", rid, err)
	}
	if !strings.HasPrefix(resp.GetToken(), "chls_") || resp.GetLaunchSession().GetPlayerId() != player {
		r.t.Fatalf("CreateLaunchSession %s: %v", rid, resp)
	}
	return resp
}

// get is the table as the croupier sees it.
func (r *launchRig) get(id string) *tablev1.Table {
	r.t.Helper()
	resp, err := r.c.table.GetTable(as(r.t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.GetTable()
}

// poll waits until ok, looking every 50 ms (for at most a minute: a
// bound on a hang, not a timed assertion).
func (r *launchRig) poll(what string, ok func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			r.t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// betBoth bets on the bank and on the player with ctx (the player's
// token) and returns the coup's id.
func (r *launchRig) betBoth(ctx context.Context, rid, player string) string {
	r.t.Helper()
	r.poll("the betting to open", func() bool {
		s := r.get(r.table).GetState()
		return s == tablev1.TableState_TABLE_STATE_BETTING
	})
	var coup string
	for i, spot := range []tablev1.BetSpot{tablev1.BetSpot_BET_SPOT_BANK, tablev1.BetSpot_BET_SPOT_PLAYER} {
		resp, err := r.c.table.PlaceBet(ctx, &tablev1.PlaceBetRequest{RequestId: fmt.Sprintf("%s/%s/%d", r.t.Name(), rid, i),
			TableId: r.table, PlayerId: player, Spot: spot, Amount: 100})
		if err != nil {
			r.t.Fatalf("%s: %s bets on %s: %v", rid, player, spot, err)
		}
		coup = resp.GetTable().GetCoup().GetCoupId()
	}
	return coup
}

// operatorTxs are the operator's records of player's transactions of
// kind in round (any round for "").
func (r *launchRig) operatorTxs(player, kind, round string) []refwallet.Record {
	r.t.Helper()
	recs, err := r.ref.Transactions()
	if err != nil {
		r.t.Fatal(err)
	}
	var out []refwallet.Record
	for _, rec := range recs {
		if rec.Request.PlayerID == player && rec.Kind == kind && (round == "" || rec.Request.RoundID == round) {
			out = append(out, rec)
		}
	}
	return out
}

// operatorBalance is player's balance in the operator's wallet.
func (r *launchRig) operatorBalance(player string) int64 {
	r.t.Helper()
	bals, err := r.ref.Balances()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, b := range bals {
		if b.PlayerID == player {
			return b.Balance
		}
	}
	r.t.Fatalf("no operator account for %s", player)
	return 0
}

// money is every balance of both sides: the operator's players and
// chemmy's accounts of them and of the house.
func (r *launchRig) money(players ...string) int64 {
	r.t.Helper()
	bals, err := r.ref.Balances()
	if err != nil {
		r.t.Fatal(err)
	}
	var n int64
	for _, b := range bals {
		n += b.Balance
	}
	for _, a := range []string{"house:bank", "house:commission"} {
		n += r.c.account(r.t, a).GetBalance()
	}
	for _, p := range players {
		n += r.c.account(r.t, "player:"+p).GetBalance()
	}
	return n
}

// TestGameLaunchSession: the operator launches players into a game with
// game-launch sessions (wallet CreateLaunchSession), in seamless wallet
// mode against the reference operator wallet, through the real services:
//
//   - bob's client uses only his session's token: he sits, bets, the coup
//     settles, and the operator's wallet saw the session's id on his debit
//     and on his credit; the token bound to a table is refused on another
//     (SESSION_OTHER_TABLE);
//   - the operator revokes the session while bob has bets in a coup: his
//     next call is refused UNAUTHENTICATED SESSION_EXPIRED, his balance
//     unchanged, while the coup he bet in settles and credits him (in the
//     session);
//   - a session of a short ttl expires: polled until refused;
//   - the operator's wallet answers a debit in a session SESSION_EXPIRED:
//     the bet is refused FAILED_PRECONDITION SESSION_EXPIRED, nothing held,
//     no money moved anywhere.
func TestGameLaunchSession(t *testing.T) {
	r := newLaunchRig(t)
	for _, p := range []string{"bob", "carol", "dave"} {
		if _, err := r.ref.Fund(p, 10_000); err != nil {
			t.Fatal(err)
		}
	}
	everyone := []string{"bob", "carol", "dave"}

	// The operator's wallet ends dave's session on its side: his bet's
	// debit is refused, the bet with it; nothing moves.
	dave := r.launch("dave", "dave", r.table, 0)
	r.ref.ExpireSession(dave.GetLaunchSession().GetLaunchSessionId())
	before, daveBefore := r.money(everyone...), r.operatorBalance("dave")
	r.poll("the betting to open", func() bool { return r.get(r.table).GetState() == tablev1.TableState_TABLE_STATE_BETTING })
	_, err := r.c.table.PlaceBet(withToken(t, dave.GetToken()), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/dave-bet",
		TableId: r.table, PlayerId: "dave", Spot: tablev1.BetSpot_BET_SPOT_BANK, Amount: 100})
	wantReason(t, err, codes.FailedPrecondition, "SESSION_EXPIRED")
	if code := errs.Info(err).GetMetadata()["operator_code"]; code != opwallet.CodeSessionExpired {
		t.Errorf("dave's refused bet: operator_code %q, want %s", code, opwallet.CodeSessionExpired)
	}
	if a := r.c.account(t, "player:dave"); a.GetHeld() != 0 || a.GetBalance() != 0 {
		t.Errorf("dave after the refusal: %v", a)
	}
	if after := r.money(everyone...); after != before || r.operatorBalance("dave") != daveBefore {
		t.Errorf("money moved on a refused debit: %d before, %d after; dave at the operator %d, then %d", before, after, daveBefore, r.operatorBalance("dave"))
	}
	for _, rec := range r.operatorTxs("dave", opwallet.OpDebit, "") {
		if rec.Status != refwallet.StatusRefused || rec.Moved != 0 || rec.Request.SessionID != dave.GetLaunchSession().GetLaunchSessionId() {
			t.Errorf("the operator's wallet recorded dave's debit %+v", rec)
		}
	}

	// bob, launched to the table, plays with his token alone.
	bob := r.launch("bob", "bob", r.table, 0)
	sid := bob.GetLaunchSession().GetLaunchSessionId()
	bobCtx := func() context.Context { return withToken(t, bob.GetToken()) }
	if _, err := r.c.table.JoinTable(bobCtx(), &tablev1.JoinTableRequest{RequestId: t.Name() + "/bob-join", TableId: r.table, PlayerId: "bob"}); err != nil {
		t.Fatalf("bob sits with his session token: %v", err)
	}
	who, err := gatewayv1.NewGatewayServiceClient(r.c.conn).GetCaller(bobCtx(), &gatewayv1.GetCallerRequest{})
	// He is of the operator of the member of staff who launched him (the
	// token file's default operator): the session recorded it.
	if err != nil || who.GetSubject() != "bob" || who.GetRole() != gatewayv1.Role_ROLE_PLAYER || who.GetLaunchSessionId() != sid ||
		who.GetOperatorId() != gateway.DefaultOperatorID || bob.GetLaunchSession().GetOperatorId() != gateway.DefaultOperatorID {
		t.Fatalf("GetCaller with bob's token: %v %v", who, err)
	}
	coup := r.betBoth(bobCtx(), "coup1", "bob")
	r.poll("coup "+coup+" settled", func() bool {
		lc := r.get(r.table).GetLastCoup()
		return lc.GetCoupId() == coup && lc.GetSettled()
	})
	r.poll("bob's credit of coup "+coup, func() bool { return len(r.operatorTxs("bob", opwallet.OpCredit, coup)) > 0 })
	for _, kind := range []string{opwallet.OpDebit, opwallet.OpCredit} {
		recs := r.operatorTxs("bob", kind, coup)
		if len(recs) == 0 {
			t.Fatalf("no %s of bob's in coup %s at the operator", kind, coup)
		}
		for _, rec := range recs {
			if rec.Request.SessionID != sid {
				t.Errorf("bob's %s %s carries session %q, want %q", kind, rec.Request.TransactionID, rec.Request.SessionID, sid)
			}
		}
	}
	// His token is for his table only; and it is his, not the operator's.
	other := r.newTable("other")
	_, err = r.c.table.GetTable(bobCtx(), &tablev1.GetTableRequest{TableId: other})
	wantReason(t, err, codes.PermissionDenied, "SESSION_OTHER_TABLE")
	_, err = r.c.wallet.GetAccount(bobCtx(), &walletv1.GetAccountRequest{AccountId: "player:carol"})
	wantReason(t, err, codes.PermissionDenied, "NOT_YOURSELF")
	// Nobody reads the token back.
	got, err := r.c.wallet.GetLaunchSession(as(t, "auditor"), &walletv1.GetLaunchSessionRequest{LaunchSessionId: sid})
	if err != nil || got.GetLaunchSession().GetPlayerId() != "bob" || got.GetLaunchSession().GetTableId() != r.table ||
		strings.Contains(got.String(), bob.GetToken()) {
		t.Fatalf("GetLaunchSession: %v %v", got, err)
	}

	// Revoked while he has bets in a coup: the coup settles and credits
	// him; his next call is refused, nothing moves.
	coup = r.betBoth(bobCtx(), "coup2", "bob")
	rev, err := r.c.wallet.RevokeLaunchSession(as(t, "operator"), &walletv1.RevokeLaunchSessionRequest{RequestId: t.Name() + "/revoke",
		LaunchSessionId: sid, Reason: "player logged out"})
	if err != nil || rev.GetLaunchSession().GetRevokeTime() == nil {
		t.Fatalf("RevokeLaunchSession: %v %v", rev, err)
	}
	still := r.get(r.table).GetLastCoup().GetCoupId() != coup
	bobAt := r.operatorBalance("bob")
	_, err = r.c.table.PlaceBet(bobCtx(), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/after-revoke",
		TableId: r.table, PlayerId: "bob", Spot: tablev1.BetSpot_BET_SPOT_TIE, Amount: 100})
	wantReason(t, err, codes.Unauthenticated, "SESSION_EXPIRED")
	_, err = r.c.wallet.GetAccount(bobCtx(), &walletv1.GetAccountRequest{AccountId: "player:bob"})
	wantReason(t, err, codes.Unauthenticated, "SESSION_EXPIRED")
	r.poll("coup "+coup+" settled", func() bool {
		lc := r.get(r.table).GetLastCoup()
		return lc.GetCoupId() == coup && lc.GetSettled()
	})
	r.poll("bob's credit of coup "+coup, func() bool { return len(r.operatorTxs("bob", opwallet.OpCredit, coup)) > 0 })
	for _, rec := range r.operatorTxs("bob", opwallet.OpCredit, coup) {
		if rec.Request.SessionID != sid || rec.Status != refwallet.StatusApplied {
			t.Errorf("bob's credit after the revocation: %+v", rec)
		}
	}
	if n := len(r.operatorTxs("bob", opwallet.OpDebit, "")); n != 4 {
		t.Errorf("bob has %d debits at the operator, want his 4 bets'", n)
	}
	if got := r.operatorBalance("bob"); got <= bobAt {
		t.Errorf("bob at the operator: %d at the revocation, %d after the coup he bet in: not credited", bobAt, got)
	}
	t.Logf("the revoked session's coup was still open at the revocation: %v", still)
	// Revoking again changes nothing.
	again, err := r.c.wallet.RevokeLaunchSession(as(t, "operator"), &walletv1.RevokeLaunchSessionRequest{RequestId: t.Name() + "/revoke-again",
		LaunchSessionId: sid, Reason: "twice"})
	if err != nil || !again.GetLaunchSession().GetRevokeTime().AsTime().Equal(rev.GetLaunchSession().GetRevokeTime().AsTime()) ||
		again.GetLaunchSession().GetRevokeReason() != "player logged out" {
		t.Errorf("revoked twice: %v %v", again, err)
	}

	// carol's lobby session of a second expires; her next call is
	// refused (polled: she may or may not get a call in before).
	carol := r.launch("carol", "carol", "", time.Second)
	var last error
	r.poll("carol's session to expire", func() bool {
		_, last = r.c.wallet.GetAccount(withToken(t, carol.GetToken()), &walletv1.GetAccountRequest{AccountId: "player:carol"})
		return errs.Reason(last) == "SESSION_EXPIRED"
	})
	wantReason(t, last, codes.Unauthenticated, "SESSION_EXPIRED")
	carolAt := r.operatorBalance("carol")
	_, err = r.c.table.PlaceBet(withToken(t, carol.GetToken()), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/carol-bet",
		TableId: r.table, PlayerId: "carol", Spot: tablev1.BetSpot_BET_SPOT_BANK, Amount: 100})
	wantReason(t, err, codes.Unauthenticated, "SESSION_EXPIRED")
	if got := r.operatorBalance("carol"); got != carolAt || len(r.operatorTxs("carol", opwallet.OpDebit, "")) != 0 {
		t.Errorf("carol's expired session moved money: %d, then %d", carolAt, got)
	}

	// The demo tokens work as before, without a session.
	if _, err := r.c.wallet.GetAccount(as(t, "alice"), &walletv1.GetAccountRequest{AccountId: "player:alice"}); err != nil && errs.Reason(err) != "ACCOUNT_NOT_FOUND" {
		t.Errorf("alice's demo token: %v", err)
	}
	// An unknown launch token is unknown.
	_, err = r.c.wallet.GetAccount(withToken(t, "chls_nothing"), &walletv1.GetAccountRequest{AccountId: "player:bob"})
	wantReason(t, err, codes.Unauthenticated, "TOKEN_UNKNOWN")
}

// TestGameLaunchSessionDevelopment: in development mode (plaintext,
// identity metadata) and the transfer wallet, a launch token works the
// same: the gateway names itself to wallet-svc to ask about it, the
// session travels to the table and the wallet (which checks it at the
// hold and at a bank raise), and a revocation refuses the next call.
func TestGameLaunchSessionDevelopment(t *testing.T) {
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, Insecure: true})
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	tb, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table"})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	resp, err := c.wallet.CreateLaunchSession(as(t, "operator"), &walletv1.CreateLaunchSessionRequest{RequestId: t.Name() + "/launch", PlayerId: "bob", TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.GetLaunchSession().GetLaunchSessionId()
	bob := func() context.Context { return withToken(t, resp.GetToken()) }
	if _, err := c.table.JoinTable(as(t, "alice"), &tablev1.JoinTableRequest{RequestId: t.Name() + "/alice", TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.JoinTable(bob(), &tablev1.JoinTableRequest{RequestId: t.Name() + "/bob", TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	// The bank goes round until bob's: he puts it up in his session.
	for i := 0; ; i++ {
		got, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetTable().GetOfferedPlayerId()
		if p == "bob" {
			break
		}
		if i > 4 || p == "" {
			t.Fatalf("the bank is offered to %q", p)
		}
		if _, err := c.table.DeclineBank(as(t, p), &tablev1.DeclineBankRequest{RequestId: fmt.Sprintf("%s/decline/%d", t.Name(), i), TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	// A session in another currency than the table's passes the gateway;
	// the wallet, which the session reached through table-svc, refuses
	// the stake: nothing held.
	usd, err := c.wallet.CreateLaunchSession(as(t, "operator"), &walletv1.CreateLaunchSessionRequest{RequestId: t.Name() + "/launch-usd", PlayerId: "bob", CurrencyCode: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.table.AcceptBank(withToken(t, usd.GetToken()), &tablev1.AcceptBankRequest{RequestId: t.Name() + "/bank-usd", TableId: id, PlayerId: "bob", Amount: 500})
	wantReason(t, err, codes.FailedPrecondition, "SESSION_EXPIRED")
	if a := c.account(t, "player:bob"); a.GetHeld() != 0 || a.GetBalance() != 5000 {
		t.Fatalf("bob after the refused bank: %v", a)
	}
	if _, err := c.table.AcceptBank(bob(), &tablev1.AcceptBankRequest{RequestId: t.Name() + "/bank", TableId: id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatalf("bob's bank in his session: %v", err)
	}
	if a := c.account(t, "player:bob"); a.GetHeld() != 500 {
		t.Fatalf("bob's bank: %v", a)
	}
	// alice bets over his bank; his raise is a stake too: asked in the
	// USD session, the wallet refuses it (nothing raised, the table still
	// waits for him); in his own session it goes through.
	if _, err := c.table.PlaceBet(as(t, "alice"), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/over", TableId: id, PlayerId: "alice", Amount: 700, OverBank: true}); err != nil {
		t.Fatal(err)
	}
	_, err = c.table.RaiseBank(withToken(t, usd.GetToken()), &tablev1.RaiseBankRequest{RequestId: t.Name() + "/raise-usd", TableId: id, PlayerId: "bob", Raise: true})
	wantReason(t, err, codes.FailedPrecondition, "SESSION_EXPIRED")
	if a := c.account(t, "player:bob"); a.GetHeld() != 500 || a.GetBalance() != 5000 {
		t.Fatalf("bob after the refused raise: %v", a)
	}
	if got, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id}); err != nil || got.GetTable().GetState() != tablev1.TableState_TABLE_STATE_BANK_RAISE {
		t.Fatalf("the table after the refused raise: %v %v", got, err)
	}
	if _, err := c.table.RaiseBank(bob(), &tablev1.RaiseBankRequest{RequestId: t.Name() + "/raise", TableId: id, PlayerId: "bob", Raise: true}); err != nil {
		t.Fatalf("bob's raise in his session: %v", err)
	}
	if _, err := c.wallet.RevokeLaunchSession(as(t, "operator"), &walletv1.RevokeLaunchSessionRequest{RequestId: t.Name() + "/revoke", LaunchSessionId: sid}); err != nil {
		t.Fatal(err)
	}
	_, err = c.table.GetTable(bob(), &tablev1.GetTableRequest{TableId: id})
	wantReason(t, err, codes.Unauthenticated, "SESSION_EXPIRED")
}
