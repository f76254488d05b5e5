package walletsvc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// Two operators' callers: the default operator's ("operator", as the
// wallet's Config.OperatorID default) and acme's.
var (
	opStaff    = auth.Caller{Subject: "op-1", Role: auth.RoleOperator, Operator: "operator"}
	acmeStaff  = auth.Caller{Subject: "op-1", Role: auth.RoleOperator, Operator: "acme"}
	acmeAudit  = auth.Caller{Subject: "aud-1", Role: auth.RoleAuditor, Operator: "acme"}
	opAudit    = auth.Caller{Subject: "aud-1", Role: auth.RoleAuditor, Operator: "operator"}
	allAudit   = auth.Caller{Subject: "aud-all", Role: auth.RoleAuditor, Operator: auth.AllOperators}
	acmeBob    = auth.Caller{Subject: "bob", Role: auth.RolePlayer, Operator: "acme"}
	acmeCroup  = auth.Caller{Subject: "croupier-1", Role: auth.RoleCroupier, Operator: "acme"}
	acmeSvcReq = "acme" // table-svc's operator_id for acme's tables
)

func balanceAs(t *testing.T, e *env, c auth.Caller, id string) (int64, error) {
	t.Helper()
	r, err := e.c.GetAccount(as(c), &walletv1.GetAccountRequest{AccountId: id})
	return r.GetAccount().GetBalance(), err
}

// TestOperatorsShareNothing: two operators' "player:bob" are two
// accounts; every read or write of the other's answers NOT_FOUND; holds,
// a coup's settlement and its commission stay on the table's operator's
// accounts; request and coup ids are per operator; each operator's audit
// balances apart and a deployment-wide auditor sees both and their sum.
func TestOperatorsShareNothing(t *testing.T) {
	e := newEnv(t)
	ctxOp, ctxAcme := as(opStaff), as(acmeStaff)
	// The same request id at both operators: two deposits, no reuse.
	if _, err := e.c.Deposit(ctxOp, &walletv1.DepositRequest{RequestId: "dep-1", AccountId: "player:bob", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Deposit(ctxAcme, &walletv1.DepositRequest{RequestId: "dep-1", AccountId: "player:bob", Amount: 300}); err != nil {
		t.Fatalf("acme's deposit under the default operator's request id: %v", err)
	}
	if _, err := e.c.Deposit(ctxAcme, &walletv1.DepositRequest{RequestId: "dep-2", AccountId: "player:ann", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Deposit(ctxOp, &walletv1.DepositRequest{RequestId: "dep-3", AccountId: "player:carol", Amount: 70}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who  auth.Caller
		acct string
		want int64
	}{{opAudit, "player:bob", 1000}, {auditor, "player:bob", 1000}, {acmeAudit, "player:bob", 300},
		{acmeBob, "player:bob", 300}, {acmeCroup, "player:ann", 500}, {allAudit, "player:bob", 1000}} {
		if got, err := balanceAs(t, e, c.who, c.acct); err != nil || got != c.want {
			t.Errorf("%s@%s reads %s: %d, %v; want %d", c.who.Subject, c.who.Operator, c.acct, got, err, c.want)
		}
	}
	// A player never chooses his operator: operator_id from him is ignored.
	r, err := e.c.GetAccount(as(acmeBob), &walletv1.GetAccountRequest{AccountId: "player:bob", OperatorId: "operator"})
	if err != nil || r.GetAccount().GetBalance() != 300 || r.GetAccount().GetAccountId() != "player:bob" {
		t.Errorf("acme's bob naming operator_id \"operator\": %v, %v; want his own 300 on player:bob", r.GetAccount(), err)
	}
	// The other operator's account: NOT_FOUND, as one that does not exist.
	_, err = balanceAs(t, e, acmeAudit, "player:carol")
	wantErr(t, err, codes.NotFound, reasonAccountNotFound)
	if msg := status.Convert(err).Message(); msg != `no account "player:carol"` {
		t.Errorf("message %q, want that of an account that does not exist", msg)
	}
	_, err = e.c.Withdraw(ctxAcme, &walletv1.WithdrawRequest{RequestId: "wd-1", AccountId: "player:carol", Amount: 1})
	wantErr(t, err, codes.NotFound, reasonAccountNotFound)
	_, err = e.c.ListStatement(as(acmeAudit), &walletv1.ListStatementRequest{AccountId: "player:carol"})
	wantErr(t, err, codes.NotFound, reasonAccountNotFound)
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "h-x", AccountId: "player:carol", Amount: 1, OperatorId: acmeSvcReq})
	wantErr(t, err, codes.NotFound, reasonAccountNotFound)
	// An account id that names an operator is no account id.
	_, err = balanceAs(t, e, opAudit, "acme/player:bob")
	wantErr(t, err, codes.InvalidArgument, reasonInvalidAccount)
	// An error's message names the API's id, never the ledger's key.
	_, err = e.c.Withdraw(ctxAcme, &walletv1.WithdrawRequest{RequestId: "wd-2", AccountId: "player:bob", Amount: 301})
	wantErr(t, err, codes.FailedPrecondition, reasonInsufficient)
	if msg := status.Convert(err).Message(); strings.Contains(msg, "acme") || !strings.Contains(msg, "player:bob") {
		t.Errorf("message %q: want player:bob without the operator", msg)
	}

	// A coup at an acme table: bob banks 200, ann bets 100, the bank wins
	// with 5% commission: ann loses 100, bob wins 100 less 5.
	place := func(op, req, acct string, amount int64, bank bool) *walletv1.Hold {
		t.Helper()
		p := walletv1.HoldPurpose_HOLD_PURPOSE_UNSPECIFIED
		if bank {
			p = walletv1.HoldPurpose_HOLD_PURPOSE_BANK
		}
		r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: req, AccountId: acct, Amount: amount, Purpose: p, OperatorId: op})
		if err != nil {
			t.Fatalf("PlaceHold %s %s at %q: %v", req, acct, op, err)
		}
		if r.GetHold().GetAccountId() != acct {
			t.Errorf("hold's account %q, want %q", r.GetHold().GetAccountId(), acct)
		}
		return r.GetHold()
	}
	bank := place(acmeSvcReq, "bank-1", "player:bob", 200, true)
	bet := place(acmeSvcReq, "bet-1", "player:ann", 100, false)
	// The default operator's table, with the same request ids: its own holds.
	opBank := place("", "bank-1", "player:bob", 400, true)
	if opBank.GetHoldId() == bank.GetHoldId() {
		t.Fatal("the default operator's PlaceHold answered with acme's hold")
	}
	// acme's holds are not the default operator's to touch.
	_, err = e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v-1", HoldId: bet.GetHoldId()})
	wantErr(t, err, codes.NotFound, reasonHoldNotFound)
	_, err = e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "coup-1", BankHoldId: opBank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 100}}, Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS})
	wantErr(t, err, codes.NotFound, reasonHoldNotFound)
	sr, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "coup-1", BankHoldId: bank.GetHoldId(), OperatorId: acmeSvcReq,
		Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 100}}, Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS, CommissionBp: 500})
	if err != nil {
		t.Fatalf("acme's SettleCoup: %v", err)
	}
	if sr.GetCommission() != 5 {
		t.Errorf("commission %d, want 5", sr.GetCommission())
	}
	for _, tr := range sr.GetTransfers() {
		if strings.Contains(tr.GetDebitAccountId()+tr.GetCreditAccountId(), "/") {
			t.Errorf("transfer %s -> %s names a ledger key", tr.GetDebitAccountId(), tr.GetCreditAccountId())
		}
	}
	// The coup id is per operator: the default operator's coup-1 is unsettled.
	for _, c := range []struct {
		op   string
		want bool
	}{{acmeSvcReq, true}, {"", false}} {
		g, err := e.c.GetCoupSettlement(as(tableSvc), &walletv1.GetCoupSettlementRequest{CoupId: "coup-1", OperatorId: c.op})
		if err != nil || g.GetSettled() != c.want {
			t.Errorf("GetCoupSettlement(coup-1) at %q: %v, %v; want %v", c.op, g.GetSettled(), err, c.want)
		}
	}
	for _, c := range []struct {
		who  auth.Caller
		acct string
		want int64
	}{
		{acmeAudit, "player:bob", 300 + 95}, {acmeAudit, "player:ann", 400}, {acmeAudit, "house:commission", 5},
		{opAudit, "player:bob", 1000}, {opAudit, "house:commission", 0}, {acmeAudit, "external:funding", -800},
	} {
		if got, err := balanceAs(t, e, c.who, c.acct); err != nil || got != c.want {
			t.Errorf("%s's %s: %d, %v; want %d", c.who.Operator, c.acct, got, err, c.want)
		}
	}
	// The statement of acme's bob: his deposit and his coup, API ids only.
	st, err := e.c.ListStatement(as(acmeBob), &walletv1.ListStatementRequest{AccountId: "player:bob"})
	if err != nil {
		t.Fatal(err)
	}
	var net int64
	for _, en := range st.GetEntries() {
		net += en.GetAmount()
		if strings.Contains(en.GetTransfer().GetDebitAccountId()+en.GetTransfer().GetCreditAccountId(), "/") {
			t.Errorf("statement names a ledger key: %v", en.GetTransfer())
		}
	}
	if len(st.GetEntries()) != 3 || net != 395 {
		t.Errorf("acme bob's statement: %d entries summing to %d, want 3 (deposit, win, commission) summing to 395", len(st.GetEntries()), net)
	}

	// Audits: each operator's own books, balanced; the deployment's sum.
	audit := func(c auth.Caller, op string) *walletv1.AuditLedgerResponse {
		t.Helper()
		r, err := e.c.AuditLedger(as(c), &walletv1.AuditLedgerRequest{OperatorId: op})
		if err != nil {
			t.Fatalf("AuditLedger as %s: %v", c.Operator, err)
		}
		if !r.GetBalanced() {
			t.Errorf("AuditLedger as %s: %v", c.Operator, r.GetDiscrepancies())
		}
		return r
	}
	inWallet := func(r *walletv1.AuditLedgerResponse) int64 {
		var n int64
		for _, c := range r.GetCurrencies() {
			if c.GetSumOfBalances() != 0 {
				t.Errorf("%s sums to %d", c.GetCurrencyCode(), c.GetSumOfBalances())
			}
			n += c.GetInWallet()
		}
		return n
	}
	ra := audit(acmeAudit, "operator") // his request's operator_id is ignored
	if len(ra.GetOperators()) != 1 || ra.GetOperators()[0].GetOperatorId() != "acme" || inWallet(ra) != 800 {
		t.Errorf("acme's audit: operators %v, in wallet %d; want acme's only, 800", ra.GetOperators(), inWallet(ra))
	}
	// acme's two deposits, ann's lost bet, bob's commission: nothing of
	// the default operator's three deposits.
	if ra.GetTransfersReplayed() != 4 || ra.GetOperators()[0].GetTransfersReplayed() != 4 {
		t.Errorf("acme's audit replayed %d transfers, want his 4", ra.GetTransfersReplayed())
	}
	ro := audit(opAudit, "")
	if len(ro.GetOperators()) != 1 || ro.GetOperators()[0].GetOperatorId() != "operator" || inWallet(ro) != 1070 {
		t.Errorf("the default operator's audit: operators %v, in wallet %d; want his only, 1070", ro.GetOperators(), inWallet(ro))
	}
	rall := audit(allAudit, "")
	if len(rall.GetOperators()) != 2 || inWallet(rall) != 1870 {
		t.Errorf("the deployment's audit: operators %v, in wallet %d; want 2, 1870", rall.GetOperators(), inWallet(rall))
	}
	for _, b := range rall.GetOperators() {
		want := map[string]int64{"acme": 800, "operator": 1070}[b.GetOperatorId()]
		var got int64
		for _, c := range b.GetCurrencies() {
			got += c.GetInWallet()
			if c.GetSumOfBalances() != 0 {
				t.Errorf("%s's %s sums to %d", b.GetOperatorId(), c.GetCurrencyCode(), c.GetSumOfBalances())
			}
		}
		if !b.GetBalanced() || got != want {
			t.Errorf("%s's books: balanced %v, in wallet %d; want balanced, %d", b.GetOperatorId(), b.GetBalanced(), got, want)
		}
	}
	if one := audit(allAudit, "acme"); len(one.GetOperators()) != 1 || inWallet(one) != 800 {
		t.Errorf("the deployment's auditor naming acme: %v", one.GetOperators())
	}
}

// TestOperatorOfOldAccounts: the default operator's accounts are keyed
// as before operators ("player:bob", "house:commission"), so a ledger
// written before reads unchanged as his; another operator's are apart.
func TestOperatorOfOldAccounts(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:bob", 250) // a caller of no operator: as before
	if _, err := e.c.Deposit(as(acmeStaff), &walletv1.DepositRequest{RequestId: "d", AccountId: "player:bob", Amount: 40}); err != nil {
		t.Fatal(err)
	}
	e.stop()
	db, err := bolt.Open(e.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		a := tx.Bucket(bucketAccounts)
		for _, c := range []struct {
			key  string
			want int64
		}{{"player:bob", 250}, {"acme/player:bob", 40}, {"house:commission", 0}, {"external:funding", -250}, {"acme/external:funding", -40}} {
			v := a.Get([]byte(c.key))
			if v == nil {
				t.Errorf("no record %q", c.key)
				continue
			}
			if b, _, _ := decodeAccount(v); b != c.want {
				t.Errorf("%q: %d, want %d", c.key, b, c.want)
			}
		}
		if a.Get([]byte("operator/player:bob")) != nil {
			t.Error("the default operator's account was keyed with its operator")
		}
		return nil
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e.start()
	if got, err := balanceAs(t, e, opStaff, "player:bob"); err != nil || got != 250 {
		t.Errorf("the default operator's bob: %d, %v; want 250", got, err)
	}
	if got, err := balanceAs(t, e, acmeStaff, "player:bob"); err != nil || got != 40 {
		t.Errorf("acme's bob: %d, %v; want 40", got, err)
	}
}

func TestOperatorIDChecked(t *testing.T) {
	e := newEnv(t)
	_, err := e.c.GetAccount(as(tableSvc), &walletv1.GetAccountRequest{AccountId: "house:commission", OperatorId: "Acme/x"})
	wantErr(t, err, codes.InvalidArgument, reasonInvalidArgument)
}

// TestMigrateModeSeesEveryOperator: the move to seamless mode is refused
// while any operator's player has money in the wallet, not only the
// default operator's.
func TestMigrateModeSeesEveryOperator(t *testing.T) {
	e := newEnv(t)
	if _, err := e.c.Deposit(as(acmeStaff), &walletv1.DepositRequest{RequestId: "d", AccountId: "player:dan", Amount: 300}); err != nil {
		t.Fatal(err)
	}
	e.stop()
	_, _, err := MigrateMode(e.path, ModeSeamless, "tester@host", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	wantRefusal(t, err, ModeTransfer, ModeSeamless, "acme/player:dan: balance 300, held 0 (minor units of EUR)")
}

// TestOperatorEvents: a transfer's and a limit change's events name the
// API's account ids and carry their operator.
func TestOperatorEvents(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:bob", 10)
	if _, err := e.c.Deposit(as(acmeStaff), &walletv1.DepositRequest{RequestId: "d", AccountId: "player:bob", Amount: 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.SetPlayerLimits(as(acmeStaff), &walletv1.SetPlayerLimitsRequest{RequestId: "l", AccountId: "player:bob",
		Limits: &walletv1.PlayerLimits{DailyLossLimit: 500}}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range e.outboxEvents() {
		x := o.ev
		if tr := x.GetTransferRecorded(); tr != nil {
			got[fmt.Sprintf("%s %s->%s %d", x.GetOperatorId(), tr.GetDebitAccountId(), tr.GetCreditAccountId(), tr.GetAmount())] = "transfer"
		}
		if ch := x.GetPlayerLimitsChanged().GetChange(); ch != nil {
			got[x.GetOperatorId()+" limits "+ch.GetAccountId()] = "limits"
		}
	}
	for _, want := range []string{"operator external:funding->player:bob 10", "acme external:funding->player:bob 20", "acme limits player:bob"} {
		if got[want] == "" {
			t.Errorf("no event %q among %v", want, got)
		}
	}
	// The limit change as acme's staff lists it, none as the default's.
	for c, want := range map[auth.Caller]int{acmeStaff: 1, opStaff: 0} {
		r, err := e.c.ListLimitChanges(as(c), &walletv1.ListLimitChangesRequest{})
		if err != nil || len(r.GetChanges()) != want {
			t.Fatalf("%s's ListLimitChanges: %v, %v; want %d", c.Operator, r.GetChanges(), err, want)
		}
		if want == 1 && r.GetChanges()[0].GetAccountId() != "player:bob" {
			t.Errorf("change of %q, want player:bob", r.GetChanges()[0].GetAccountId())
		}
	}
}

// TestOperatorReportOfAnother: the operator report and exception list
// are the caller's operator's (his seamless wallet's: opwallets.go);
// another operator's staff get their own, empty, never naming the
// default operator.
func TestOperatorReportOfAnother(t *testing.T) {
	e := newEnv(t)
	r, err := e.c.GetOperatorReport(as(acmeStaff), &walletv1.GetOperatorReportRequest{Day: "2026-01-02"})
	if err != nil || r.GetOperatorId() != "acme" || len(r.GetTransactions()) != 0 {
		t.Errorf("acme's report: %v, %v", r, err)
	}
	x, err := e.c.ListOperatorExceptions(as(acmeAudit), &walletv1.ListOperatorExceptionsRequest{})
	if err != nil || x.GetOperatorId() != "acme" || len(x.GetExceptions()) != 0 {
		t.Errorf("acme's exceptions: %v, %v", x, err)
	}
	if r, err := e.c.GetOperatorReport(as(opStaff), &walletv1.GetOperatorReportRequest{Day: "2026-01-02"}); err != nil || r.GetOperatorId() != "operator" {
		t.Errorf("the default operator's report: %v, %v", r, err)
	}
}
