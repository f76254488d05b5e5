package walletsvc

import (
	"github.com/chemmy/chemmy/services/kit/trust"
	"math"
	"reflect"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

func TestSystemAccountsExistFromStart(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{AccountCommission, AccountExternal} {
		a := e.account(id)
		if a.GetBalance() != 0 || a.GetCurrencyCode() != "EUR" {
			t.Errorf("%s = %v", id, a)
		}
	}
	e.audit()
}

func TestDepositWithdraw(t *testing.T) {
	e := newEnv(t)
	r := e.deposit("player:alice", 1000)
	if a := r.GetAccount(); a.GetAccountId() != "player:alice" || a.GetBalance() != 1000 || a.GetAvailable() != 1000 || a.GetCurrencyCode() != "EUR" {
		t.Fatalf("deposit account = %v", a)
	}
	if tr := r.GetTransfer(); tr.GetDebitAccountId() != AccountExternal || tr.GetCreditAccountId() != "player:alice" ||
		tr.GetAmount() != 1000 || tr.GetReason() != "deposit" || len(tr.GetTransferId()) != 26 || tr.GetCreateTime() == nil {
		t.Fatalf("deposit transfer = %v", tr)
	}
	e.audit()
	e.wantBal(AccountExternal, -1000, 0)

	w, err := e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: "w1", AccountId: "player:alice", Amount: 300})
	if err != nil {
		t.Fatal(err)
	}
	e.net.Add(-300)
	if w.GetAccount().GetBalance() != 700 || w.GetTransfer().GetCreditAccountId() != AccountExternal || w.GetTransfer().GetReason() != "withdrawal" {
		t.Fatalf("withdraw = %v", w)
	}
	e.audit()
	e.wantBal("player:alice", 700, 0)
	e.wantBal(AccountExternal, -700, 0)

	// The whole available balance may leave.
	if _, err := e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: "w2", AccountId: "player:alice", Amount: 700}); err != nil {
		t.Fatal(err)
	}
	e.net.Add(-700)
	e.wantBal("player:alice", 0, 0)
	e.audit()
}

func TestInvalidRequests(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 100)
	before := e.audit()
	op, svc := as(operator), as(tableSvc)
	for name, tc := range map[string]struct {
		call   func() error
		code   codes.Code
		reason string
	}{
		"deposit zero": {func() error {
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "x1", AccountId: "player:bob", Amount: 0})
			return err
		}, codes.InvalidArgument, "INVALID_AMOUNT"},
		"deposit negative": {func() error {
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "x2", AccountId: "player:bob", Amount: -5})
			return err
		}, codes.InvalidArgument, "INVALID_AMOUNT"},
		"deposit to house": {func() error {
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "x3", AccountId: AccountCommission, Amount: 5})
			return err
		}, codes.InvalidArgument, "INVALID_ACCOUNT"},
		"bad player id": {func() error {
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "x4", AccountId: "player:a b", Amount: 5})
			return err
		}, codes.InvalidArgument, "INVALID_ACCOUNT"},
		"player id too long": {func() error {
			id := "player:" + string(make([]byte, 65))
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "x5", AccountId: id, Amount: 5})
			return err
		}, codes.InvalidArgument, "INVALID_ACCOUNT"},
		"no request id": {func() error {
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{AccountId: "player:bob", Amount: 5})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		"overflow": {func() error {
			_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "x6", AccountId: "player:alice", Amount: math.MaxInt64})
			return err
		}, codes.InvalidArgument, "INVALID_AMOUNT"},
		"withdraw unknown": {func() error {
			_, err := e.c.Withdraw(op, &walletv1.WithdrawRequest{RequestId: "x7", AccountId: "player:nobody", Amount: 5})
			return err
		}, codes.NotFound, "ACCOUNT_NOT_FOUND"},
		"withdraw too much": {func() error {
			_, err := e.c.Withdraw(op, &walletv1.WithdrawRequest{RequestId: "x8", AccountId: "player:alice", Amount: 101})
			return err
		}, codes.FailedPrecondition, "INSUFFICIENT_FUNDS"},
		"hold too much": {func() error {
			_, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: "x9", AccountId: "player:alice", Amount: 101})
			return err
		}, codes.FailedPrecondition, "INSUFFICIENT_FUNDS"},
		"hold on unknown": {func() error {
			_, err := e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: "x10", AccountId: "player:nobody", Amount: 1})
			return err
		}, codes.NotFound, "ACCOUNT_NOT_FOUND"},
		"void unknown": {func() error {
			_, err := e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: "x11", HoldId: "01NOPE"})
			return err
		}, codes.NotFound, "HOLD_NOT_FOUND"},
		"get unknown": {func() error {
			_, err := e.c.GetAccount(op, &walletv1.GetAccountRequest{AccountId: "player:nobody"})
			return err
		}, codes.NotFound, "ACCOUNT_NOT_FOUND"},
		"get malformed": {func() error {
			_, err := e.c.GetAccount(op, &walletv1.GetAccountRequest{AccountId: "bank:1"})
			return err
		}, codes.InvalidArgument, "INVALID_ACCOUNT"},
	} {
		t.Run(name, func(t *testing.T) { wantErr(t, tc.call(), tc.code, tc.reason) })
	}
	after := e.audit()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("failed requests changed the ledger:\n%v\n%v", before, after)
	}
	// A failed request is stored with its failure (AIP-155): a retry with
	// the same id fails the same way even after the cause went; a new id
	// is a new attempt.
	e.deposit("player:alice", 1)
	_, err := e.c.Withdraw(op, &walletv1.WithdrawRequest{RequestId: "x8", AccountId: "player:alice", Amount: 101})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	if _, err := e.c.Withdraw(op, &walletv1.WithdrawRequest{RequestId: "x8-again", AccountId: "player:alice", Amount: 101}); err != nil {
		t.Fatalf("new attempt after the cause went: %v", err)
	}
	e.net.Add(-101)
	e.audit()
}

func TestOverflowOfTheWallet(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:a", math.MaxInt64)
	// No player balance overflows, but external:funding would.
	_, err := e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: "big", AccountId: "player:b", Amount: 2})
	wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
	e.audit()
	// A hold of everything works; settlement sums are checked too.
	h := e.hold("player:a", math.MaxInt64)
	if h.GetAmount() != math.MaxInt64 {
		t.Fatal(h)
	}
	e.audit()
}

func TestIdempotentRetries(t *testing.T) {
	e := newEnv(t)
	op, svc := as(operator), as(tableSvc)
	dep := &walletv1.DepositRequest{RequestId: "d1", AccountId: "player:alice", Amount: 500}
	r1, err := e.c.Deposit(op, dep)
	if err != nil {
		t.Fatal(err)
	}
	e.net.Add(500)
	r2, err := e.c.Deposit(op, dep)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(r1, r2) {
		t.Fatalf("retry response differs:\n%v\n%v", r1, r2)
	}
	e.wantBal("player:alice", 500, 0)
	st := e.audit()
	if st.transfers != 1 {
		t.Fatalf("%d transfers, want 1", st.transfers)
	}

	wd := &walletv1.WithdrawRequest{RequestId: "w1", AccountId: "player:alice", Amount: 100}
	w1, err := e.c.Withdraw(op, wd)
	if err != nil {
		t.Fatal(err)
	}
	e.net.Add(-100)
	w2, err := e.c.Withdraw(op, wd)
	if err != nil || !proto.Equal(w1, w2) {
		t.Fatalf("withdraw retry: %v %v %v", err, w1, w2)
	}
	e.wantBal("player:alice", 400, 0)

	ph := &walletv1.PlaceHoldRequest{RequestId: "h1", AccountId: "player:alice", Amount: 150, Reference: "tables/T/coups/1/bets/alice"}
	h1, err := e.c.PlaceHold(svc, ph)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := e.c.PlaceHold(svc, ph)
	if err != nil || !proto.Equal(h1, h2) {
		t.Fatalf("hold retry: %v %v %v", err, h1, h2)
	}
	e.wantBal("player:alice", 400, 150)
	e.audit()

	vh := &walletv1.VoidHoldRequest{RequestId: "v1", HoldId: h1.GetHold().GetHoldId()}
	v1, err := e.c.VoidHold(svc, vh)
	if err != nil {
		t.Fatal(err)
	}
	if v1.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED || v1.GetHold().GetAmount() != 150 {
		t.Fatalf("voided hold = %v", v1.GetHold())
	}
	v2, err := e.c.VoidHold(svc, vh)
	if err != nil || !proto.Equal(v1, v2) {
		t.Fatalf("void retry: %v %v %v", err, v1, v2)
	}
	e.wantBal("player:alice", 400, 0)
	// Voided exactly once: another request is refused.
	_, err = e.c.VoidHold(svc, &walletv1.VoidHoldRequest{RequestId: "v2", HoldId: h1.GetHold().GetHoldId()})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	e.wantBal("player:alice", 400, 0)
	e.audit()
}

func TestRequestIDReused(t *testing.T) {
	e := newEnv(t)
	op, svc := as(operator), as(tableSvc)
	if _, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "r1", AccountId: "player:alice", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	e.net.Add(500)
	before := e.audit()
	_, err := e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "r1", AccountId: "player:alice", Amount: 501})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	_, err = e.c.Deposit(op, &walletv1.DepositRequest{RequestId: "r1", AccountId: "player:bob", Amount: 500})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	// The same fields under another method are another request.
	_, err = e.c.Withdraw(op, &walletv1.WithdrawRequest{RequestId: "r1", AccountId: "player:alice", Amount: 500})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	_, err = e.c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: "r1", AccountId: "player:alice", Amount: 500})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	if after := e.audit(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused request changed the ledger")
	}
}

func TestHoldsLimitAvailable(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 1000)
	h := e.hold("player:alice", 700)
	if h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN || h.GetAccountId() != "player:alice" || h.GetReference() != "test" || len(h.GetHoldId()) != 26 {
		t.Fatalf("hold = %v", h)
	}
	e.wantBal("player:alice", 1000, 700)
	before := e.audit()
	_, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "big", AccountId: "player:alice", Amount: 301})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	_, err = e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: "wbig", AccountId: "player:alice", Amount: 301})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	if after := e.audit(); !reflect.DeepEqual(before, after) {
		t.Fatal("insufficient funds moved something")
	}
	e.hold("player:alice", 300)
	e.wantBal("player:alice", 1000, 1000)
	e.audit()
}

func TestRoles(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 100)
	e.deposit("player:bob", 100)
	alice := as(auth.Caller{Subject: "alice", Role: auth.RolePlayer})
	croupier := as(auth.Caller{Subject: "c1", Role: auth.RoleCroupier})

	_, err := e.c.Deposit(alice, &walletv1.DepositRequest{RequestId: "p1", AccountId: "player:alice", Amount: 1})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.Withdraw(as(tableSvc), &walletv1.WithdrawRequest{RequestId: "p2", AccountId: "player:alice", Amount: 1})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.PlaceHold(croupier, &walletv1.PlaceHoldRequest{RequestId: "p3", AccountId: "player:alice", Amount: 1})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.PlaceHold(as(operator), &walletv1.PlaceHoldRequest{RequestId: "p3", AccountId: "player:alice", Amount: 1})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.VoidHold(alice, &walletv1.VoidHoldRequest{RequestId: "p4", HoldId: "h"})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.SettleCoup(as(auditor), &walletv1.SettleCoupRequest{CoupId: "c", BankHoldId: "h"})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	_, err = e.c.GetAccount(t.Context(), &walletv1.GetAccountRequest{AccountId: "player:alice"})
	wantErr(t, err, codes.Unauthenticated, "UNAUTHENTICATED")

	// A player reads only his own account.
	r, err := e.c.GetAccount(alice, &walletv1.GetAccountRequest{AccountId: "player:alice"})
	if err != nil || r.GetAccount().GetBalance() != 100 {
		t.Fatalf("own account: %v %v", r, err)
	}
	for _, id := range []string{"player:bob", AccountCommission, AccountExternal, "player:nobody", "player:bob@USD", "house:bank@USD"} {
		_, err = e.c.GetAccount(alice, &walletv1.GetAccountRequest{AccountId: id})
		wantErr(t, err, codes.PermissionDenied, "NOT_YOUR_ACCOUNT")
		_, err = e.c.ListStatement(alice, &walletv1.ListStatementRequest{AccountId: id})
		wantErr(t, err, codes.PermissionDenied, "NOT_YOUR_ACCOUNT")
	}
	// His account in another currency is his too (docs/walkthroughs/chemin-de-fer.md, "Currency").
	_, err = e.c.GetAccount(alice, &walletv1.GetAccountRequest{AccountId: "player:alice@USD"})
	wantErr(t, err, codes.NotFound, "ACCOUNT_NOT_FOUND")
	_, err = e.c.ListStatement(alice, &walletv1.ListStatementRequest{AccountId: "player:alice@USD"})
	wantErr(t, err, codes.NotFound, "ACCOUNT_NOT_FOUND")
	for _, c := range []auth.Caller{{Subject: "c1", Role: auth.RoleCroupier}, operator, auditor, tableSvc} {
		if _, err := e.c.GetAccount(as(c), &walletv1.GetAccountRequest{AccountId: "player:bob"}); err != nil {
			t.Errorf("%s GetAccount: %v", c.Role, err)
		}
	}
	e.audit()
}

func TestRestartKeepsEverything(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:banker", 1000)
	e.deposit("player:p", 1000)
	bank := e.hold("player:banker", 1000)
	bet := e.hold("player:p", 400)
	req := &walletv1.SettleCoupRequest{CoupId: "coup-1", BankHoldId: bank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 400}}, Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS, CommissionBp: 500}
	r1, err := e.c.SettleCoup(as(tableSvc), req)
	if err != nil {
		t.Fatal(err)
	}
	open := e.hold("player:p", 100)
	before := e.audit()

	e.restart()

	if after := e.audit(); !reflect.DeepEqual(before, after) {
		t.Fatalf("restart changed the ledger:\n%v\n%v", before, after)
	}
	e.wantBal("player:banker", 1380, 1380)
	e.wantBal("player:p", 600, 100)
	e.wantBal(AccountCommission, 20, 0)
	r2, err := e.c.SettleCoup(as(tableSvc), req)
	if err != nil || !proto.Equal(r1, r2) {
		t.Fatalf("settle retry after restart: %v\n%v\n%v", err, r1, r2)
	}
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v", HoldId: open.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	e.wantBal("player:p", 600, 0)
	e.audit()
}

func TestCurrencyIsKept(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:a", 5)
	e.stop()
	_, err := Start(t.Context(), Config{ListenAddr: "127.0.0.1:0", DBPath: e.path, Currency: "USD", Trust: trust.Config{Insecure: true}})
	if err == nil {
		t.Fatal("started an EUR ledger in USD")
	}
	e.start()
	if a := e.account("player:a"); a.GetCurrencyCode() != "EUR" || a.GetBalance() != 5 {
		t.Fatal(a)
	}
	if _, err := Start(t.Context(), Config{DBPath: t.TempDir() + "/x.db", Currency: "eur", Trust: trust.Config{Insecure: true}}); err == nil {
		t.Fatal("accepted currency eur")
	}
}
