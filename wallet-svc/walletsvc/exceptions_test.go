package walletsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// refusingProxy is an operator wallet over HTTP for the tests: the
// reference wallet behind a proxy that refuses, signed and naming the
// transaction as the protocol asks, the credits refuse picks (the
// reference wallet never sees them).
type refusingProxy struct {
	secret []byte
	srv    *httptest.Server
	tr     *http.Transport
	mu     sync.Mutex
	refuse func(tx opwallet.Transaction) (status int, code string)
	// refused counts the refusals by transaction id.
	refused map[string]int
}

func newRefusingProxy(t *testing.T, target string, secret []byte) *refusingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &refusingProxy{secret: secret, refused: map[string]int{}, tr: &http.Transport{}}
	u.Path = ""
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = p.tr
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		var tx opwallet.Transaction
		if strings.HasSuffix(r.URL.Path, "/"+opwallet.OpCredit) && json.Unmarshal(body, &tx) == nil {
			p.mu.Lock()
			st, code := 0, ""
			if p.refuse != nil {
				st, code = p.refuse(tx)
			}
			if st != 0 {
				p.refused[tx.TransactionID]++
			}
			p.mu.Unlock()
			if st != 0 {
				b, _ := json.Marshal(opwallet.Refusal{Code: code, Message: "refused by the test", TransactionID: tx.TransactionID})
				ts := time.Now().Unix()
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set(opwallet.HeaderTimestamp, strconv.FormatInt(ts, 10))
				w.Header().Set(opwallet.HeaderSignature, opwallet.Sign(p.secret, ts, r.URL.Path, b))
				w.WriteHeader(st)
				_, _ = w.Write(b)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { p.srv.Close(); p.tr.CloseIdleConnections() })
	return p
}

func (p *refusingProxy) setRefuse(fn func(tx opwallet.Transaction) (int, string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = fn
}

func (p *refusingProxy) refusals(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused[id]
}

// waitFor polls cond (no timing is asserted: the deadline only ends a
// test that would otherwise hang).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// exceptions lists the exception list (all of it with resolved).
func (e *env) exceptions(resolved bool) []*walletv1.OperatorException {
	e.t.Helper()
	var out []*walletv1.OperatorException
	tok := ""
	for {
		r, err := e.c.ListOperatorExceptions(as(auditor), &walletv1.ListOperatorExceptionsRequest{IncludeResolved: resolved, PageSize: 2, PageToken: tok})
		if err != nil {
			e.t.Fatalf("ListOperatorExceptions: %v", err)
		}
		out = append(out, r.GetExceptions()...)
		if tok = r.GetNextPageToken(); tok == "" {
			return out
		}
	}
}

// relayLooked returns once a pass of the operator relay that started
// after the call has ended: it saw what was queued before.
func (e *env) relayLooked() {
	e.t.Helper()
	for range 2 {
		p := e.svc.relayPasses.Load()
		e.svc.notifyOperator()
		waitFor(e.t, "a pass of the relay", func() bool { return e.svc.relayPasses.Load() > p })
	}
}

func (e *env) openExceptions(kind string) float64 {
	return e.gauge(e.svc.opMetrics.queues, "chemmy_operator_exceptions_open", map[string]string{"operator": e.svc.opID, "kind": kind})
}

// refRecord finds the reference wallet's record of a kind for a player
// and round (the last one), or nil.
func refRecord(t testing.TB, ref *refwallet.Server, kind, player, round string) *refwallet.Record {
	t.Helper()
	recs, err := ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	var found *refwallet.Record
	for i := range recs {
		r := recs[i]
		if r.Kind == kind && r.Request.PlayerID == player && r.Request.RoundID == round {
			found = &r
		}
	}
	return found
}

// TestRefusedWalletEntryDoesNotStall: issue 23's "a wallet queue that
// never stalls", through a real seamless wallet-svc and a real HTTP
// operator wallet (the reference one behind a proxy that refuses chosen
// credits). A credit refused for good (UNKNOWN_PLAYER) becomes an
// exception at once, and the player's next coup's credit and round_end
// go through while it is open; the refused round's round_end waits for
// it. Once the operator accepts, RetryOperatorException sends it again
// under a new id, then the round ends. A credit refused again and again
// (PLAYER_BLOCKED) becomes an exception after relayRefusalLimit
// refusals, the next coup flowing meanwhile; SettleOperatorException
// closes it with a reason, kept (who, when, why) across a restart.
// Money is conserved: chemmy's ledger balances, and each player's money
// at the operator is his funding plus his winnings (the credit settled
// outside chemmy paid by the operator by hand).
func TestRefusedWalletEntryDoesNotStall(t *testing.T) {
	secret := []byte("test-secret")
	ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(t.TempDir(), "ref.db"),
		Secret: secret, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	funding := map[string]int64{"alice": 10000, "bob": 10000}
	for p, v := range funding {
		if _, err := ref.Fund(p, v); err != nil {
			t.Fatal(err)
		}
	}
	proxy := newRefusingProxy(t, ref.BaseURL(), secret)
	client, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: proxy.srv.URL + refwallet.PathPrefix, Secret: secret, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	e.config = func(c *Config) {
		c.Operator, c.OperatorID, c.operatorBackoff, c.roundIdle = client, "casino-1", time.Millisecond, 20*time.Millisecond
	}
	e.start()
	t.Cleanup(e.stop)

	// Bob banks 500 in C1; each coup alice bets 100 and the bank loses:
	// she is owed 200 in the coup's round.
	bank := e.stake("player:bob", 500, coupRef("T1", "C1"))
	coup := func(c string) {
		t.Helper()
		a := e.stake("player:alice", 100, coupRef("T1", c))
		e.settle(&walletv1.SettleCoupRequest{CoupId: c, BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankLoses})
	}
	credited := func(round string) bool {
		r := refRecord(t, ref, opwallet.OpCredit, "alice", round)
		return r != nil && r.Status == refwallet.StatusApplied
	}
	ended := func(round string) bool { return refRecord(t, ref, opwallet.OpRoundEnd, "alice", round) != nil }

	// C1: the operator refuses alice's credit for good.
	proxy.setRefuse(func(tx opwallet.Transaction) (int, string) {
		if tx.PlayerID == "alice" && tx.RoundID == "C1" {
			return http.StatusNotFound, opwallet.CodeUnknownPlayer
		}
		return 0, ""
	})
	coup("C1")
	waitFor(t, "the refused credit to become an exception", func() bool { return len(e.exceptions(false)) == 1 })
	exc := e.exceptions(false)[0]
	c1 := exc.GetTransaction()
	if c1.GetKind() != "credit" || c1.GetRoundId() != "C1" || c1.GetAmount() != 200 || c1.GetStatus() != "refused" ||
		exc.GetState() != "open" || exc.GetCause() != "refused_for_good" || exc.GetOperatorCode() != opwallet.CodeUnknownPlayer ||
		exc.GetOperatorStatus() != http.StatusNotFound || exc.GetRefusals() != 1 || proxy.refusals(c1.GetTransactionId()) != 1 {
		t.Fatalf("exception %v", exc)
	}
	if got := e.openExceptions("credit"); got != 1 {
		t.Fatalf("chemmy_operator_exceptions_open{kind=credit} %v, want 1", got)
	}
	// C2: alice's next credit is not held behind the refused one.
	coup("C2")
	waitFor(t, "alice's credit of C2 at the operator", func() bool { return credited("C2") && ended("C2") })
	if ended("C1") {
		t.Fatal("round C1 ended while its credit is an open exception")
	}
	// The report shows it.
	txs, totals := e.report()
	if tot := totals["credit"]; tot.GetRefusedCount() != 1 || tot.GetExceptionCount() != 1 || tot.GetExceptionAmount() != 200 {
		t.Fatalf("credit totals %v", tot)
	}
	for _, x := range txs {
		if x.GetTransactionId() == c1.GetTransactionId() && (x.GetExceptionState() != "open" || x.GetOperatorCode() != opwallet.CodeUnknownPlayer) {
			t.Fatalf("report of the refused credit %v", x)
		}
	}
	r, err := e.c.GetOperatorReport(as(operator), &walletv1.GetOperatorReportRequest{Day: e.svc.now().UTC().Format(time.DateOnly)})
	if err != nil || r.GetOpenExceptionCount() != 1 {
		t.Fatalf("report %v %v", r.GetOpenExceptionCount(), err)
	}

	// The operator accepts it now: retried, under a new id.
	proxy.setRefuse(nil)
	retry := &walletv1.RetryOperatorExceptionRequest{RequestId: "retry-c1", TransactionId: c1.GetTransactionId(), Reason: "alice's account restored"}
	rr, err := e.c.RetryOperatorException(as(operator), retry)
	if err != nil {
		t.Fatal(err)
	}
	newID := c1.GetTransactionId() + ".r2"
	if x := rr.GetException(); x.GetState() != "retried" || x.GetRetryTransactionId() != newID || x.GetResolvedBy() != operator.Subject ||
		x.GetResolvedByRole() != "operator" || x.GetResolveReason() != retry.Reason || x.GetResolveTime() == nil ||
		rr.GetRetry().GetTransactionId() != newID || rr.GetRetry().GetRetryOfTransactionId() != c1.GetTransactionId() ||
		rr.GetRetry().GetAmount() != 200 || rr.GetRetry().GetStatus() != "pending" {
		t.Fatalf("retry %v", rr)
	}
	if again, err := e.c.RetryOperatorException(as(operator), retry); err != nil || again.GetRetry().GetTransactionId() != newID {
		t.Fatalf("the same retry again: %v %v", again, err)
	}
	_, err = e.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{RequestId: "retry-c1-again", TransactionId: c1.GetTransactionId()})
	wantErr(t, err, codes.FailedPrecondition, "OPERATOR_EXCEPTION_RESOLVED")
	if st := errs.Info(err).GetMetadata()["state"]; st != "retried" {
		t.Fatalf("metadata state %q", st)
	}
	e.drain()
	if rec := refRecord(t, ref, opwallet.OpCredit, "alice", "C1"); rec == nil || rec.Request.TransactionID != newID || rec.Status != refwallet.StatusApplied {
		t.Fatalf("the retry at the operator: %+v", rec)
	}
	// The round ends after it.
	if end := refRecord(t, ref, opwallet.OpRoundEnd, "alice", "C1"); end == nil || end.Seq < refRecord(t, ref, opwallet.OpCredit, "alice", "C1").Seq {
		t.Fatalf("round_end of C1 %+v", end)
	}
	if got := e.openExceptions("credit"); got != 0 {
		t.Fatalf("open credit exceptions %v after the retry", got)
	}

	// C3: refused again and again (PLAYER_BLOCKED is not for good by
	// itself); C4 goes through meanwhile.
	proxy.setRefuse(func(tx opwallet.Transaction) (int, string) {
		if tx.PlayerID == "alice" && tx.RoundID == "C3" {
			return http.StatusForbidden, opwallet.CodePlayerBlocked
		}
		return 0, ""
	})
	coup("C3")
	coup("C4")
	waitFor(t, "alice's credit of C4 at the operator", func() bool { return credited("C4") && ended("C4") })
	waitFor(t, "the credit of C3 to become an exception", func() bool { return len(e.exceptions(false)) == 1 })
	exc = e.exceptions(false)[0]
	c3 := exc.GetTransaction()
	if c3.GetRoundId() != "C3" || exc.GetCause() != "refused_repeatedly" || exc.GetRefusals() != relayRefusalLimit ||
		exc.GetOperatorCode() != opwallet.CodePlayerBlocked || proxy.refusals(c3.GetTransactionId()) != relayRefusalLimit {
		t.Fatalf("exception %v, %d refusals at the proxy", exc, proxy.refusals(c3.GetTransactionId()))
	}
	if ended("C3") {
		t.Fatal("round C3 ended while its credit is an open exception")
	}
	// Settled outside chemmy: operators only, with a reason.
	settle := &walletv1.SettleOperatorExceptionRequest{RequestId: "settle-c3", TransactionId: c3.GetTransactionId(), Reason: "paid by bank transfer, ticket 42"}
	if _, err := e.c.SettleOperatorException(as(auditor), settle); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("an auditor settled it: %v", err)
	}
	_, err = e.c.SettleOperatorException(as(operator), &walletv1.SettleOperatorExceptionRequest{RequestId: "settle-c3-x", TransactionId: c3.GetTransactionId(), Reason: "  "})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	sr, err := e.c.SettleOperatorException(as(operator), settle)
	if err != nil {
		t.Fatal(err)
	}
	if x := sr.GetException(); x.GetState() != "settled_outside" || x.GetResolvedBy() != operator.Subject || x.GetResolvedByRole() != "operator" ||
		x.GetResolveReason() != settle.Reason || x.GetResolveRequestId() != "settle-c3" || x.GetResolveTime() == nil ||
		x.GetTransaction().GetExceptionState() != "settled_outside" {
		t.Fatalf("settled %v", x)
	}
	if _, err := ref.Fund("alice", 200); err != nil { // the operator pays alice by hand
		t.Fatal(err)
	}
	waitFor(t, "the round_end of C3 once its exception is settled", func() bool { return ended("C3") })
	if rec := refRecord(t, ref, opwallet.OpCredit, "alice", "C3"); rec != nil {
		t.Fatalf("a credit of C3 reached the operator: %+v", rec)
	}

	// The bank comes back; everything drains; the books agree.
	e.void(bank)
	e.drainAll()
	if got := e.openExceptions("credit"); got != 0 {
		t.Fatalf("open credit exceptions %v", got)
	}
	_, totals = e.report()
	if tot := totals["credit"]; tot.GetRefusedCount() != 2 || tot.GetRefusedAmount() != 400 || tot.GetExceptionCount() != 0 ||
		tot.GetSettledOutsideCount() != 1 || tot.GetSettledOutsideAmount() != 200 || tot.GetPendingCount() != 0 {
		t.Fatalf("credit totals %v", tot)
	}
	audit, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{})
	if err != nil || !audit.GetBalanced() {
		t.Fatalf("audit %v %v", audit.GetDiscrepancies(), err)
	}
	if err := ref.CheckBooks(); err != nil {
		t.Fatalf("the operator's books: %v", err)
	}
	bals, err := ref.Balances()
	if err != nil {
		t.Fatal(err)
	}
	bal := map[string]int64{}
	for _, b := range bals {
		bal[b.PlayerID] = b.Balance
	}
	if bal["alice"] != 10400 || bal["bob"] != 9600 {
		t.Fatalf("balances at the operator %v", bal)
	}
	e.wantBooks(bal, funding)
	// Every round of alice's ended once, nothing after its round_end.
	recs, _ := ref.Transactions()
	endAt := map[string]uint64{}
	for _, r := range recs {
		if r.Kind == opwallet.OpRoundEnd {
			k := r.Request.PlayerID + "/" + r.Request.RoundID
			if endAt[k] != 0 {
				t.Fatalf("round %s ended twice", k)
			}
			endAt[k] = r.Seq
		}
	}
	for _, r := range recs {
		if at := endAt[r.Request.PlayerID+"/"+r.Request.RoundID]; r.Kind != opwallet.OpRoundEnd && (at == 0 || r.Seq > at) {
			t.Fatalf("%s %s of %s/%s: round_end at %d", r.Kind, r.Request.TransactionID, r.Request.PlayerID, r.Request.RoundID, at)
		}
	}
	// The audit trail of both survives a restart.
	e.restart()
	all := e.exceptions(true)
	if len(all) != 2 || all[0].GetState() != "retried" || all[0].GetResolveReason() != retry.Reason ||
		all[1].GetState() != "settled_outside" || all[1].GetResolvedBy() != operator.Subject || all[1].GetResolveReason() != settle.Reason {
		t.Fatalf("exceptions after a restart %v", all)
	}
	if len(e.exceptions(false)) != 0 {
		t.Fatal("an exception is still open")
	}
}

// TestOperatorOrderKept: the order that matters is kept, and only it. A
// credit of a round is not sent while a debit of that round is being
// called (the fake operator blocks it), while the same player's credit
// of another round goes through; the debit's outcome unknown, its
// rollback goes before the waiting credit (no rollback after a credit),
// and it only once the debit's call is over. A rollback refused for good
// holds the credit and the round_end of its round until it is settled,
// and nothing else. The fake operator flags any call out of order.
func TestOperatorOrderKept(t *testing.T) {
	op := newFakeOp()
	for _, p := range []string{"alice", "bob", "carol"} {
		op.fund(p, 1000)
	}
	e := newSeamless(t, op)
	bank := e.stake("player:bob", 500, coupRef("T1", "C1"))
	bank2 := e.stake("player:carol", 500, coupRef("T2", "D1"))
	h1 := e.stake("player:alice", 100, coupRef("T1", "C1"))
	d1 := e.stake("player:alice", 100, coupRef("T2", "D1"))

	// Alice's second stake in C1: its debit hangs, then gets no answer.
	release := make(chan struct{})
	op.setBefore(func(o string, tx opwallet.Transaction) {
		if o == opwallet.OpDebit && strings.HasPrefix(tx.TransactionID, "db-h2-") {
			<-release
		}
	})
	op.setFault(func(o string, tx opwallet.Transaction) fault {
		if o == opwallet.OpDebit && strings.HasPrefix(tx.TransactionID, "db-h2-") {
			return faultNotApplied
		}
		return faultNone
	})
	placed := make(chan error, 1)
	go func() {
		_, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "h2", AccountId: "player:alice", Amount: 50, Reference: coupRef("T1", "C1")})
		placed <- err
	}()
	waitFor(t, "the debit of h2 at the operator", func() bool { return op.debitsInProgress("alice", "C1") == 1 })
	// Meanwhile her first stake in C1 is cut to 60: 40 is owed back to
	// her in C1, a credit that must wait for the debit.
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "cut", HoldId: h1.GetHoldId(), Amount: 60}); err != nil {
		t.Fatal(err)
	}
	// And her coup at the other table is settled: its credit goes.
	e.settle(&walletv1.SettleCoupRequest{CoupId: "D1", BankHoldId: bank2.GetHoldId(), Bets: bets(d1), Outcome: bankLoses})
	waitFor(t, "alice's credit of D1", func() bool { return op.bal("alice") == 1000-100-100+200 })
	e.relayLooked()
	for _, c := range op.answeredCalls() {
		if c.op == opwallet.OpCredit && c.round == "C1" {
			t.Fatalf("credit %s of C1 sent while a debit of C1 is being called", c.id)
		}
	}
	close(release)
	if err := <-placed; status.Code(err) != codes.Unavailable {
		t.Fatalf("PlaceHold h2: %v, want UNAVAILABLE", err)
	}
	e.drain()
	var rollbackAt, creditAt int
	for i, c := range op.answeredCalls() {
		switch {
		case c.op == opwallet.OpRollback && c.target == "db-h2-1":
			rollbackAt = i + 1
		case c.op == opwallet.OpCredit && c.player == "alice" && c.round == "C1":
			creditAt = i + 1
		}
	}
	if rollbackAt == 0 || creditAt == 0 || rollbackAt > creditAt {
		t.Fatalf("rollback of db-h2-1 at %d, credit of C1 at %d: want the rollback first", rollbackAt, creditAt)
	}
	wantNoViolations(t, op)

	// C2: alice bets twice on bob's bank and withdraws one bet: its
	// rollback is refused for good, so the round's payout and round_end
	// wait for it; her round D2 at the other table does not.
	op.setFault(func(o string, tx opwallet.Transaction) fault {
		if o == opwallet.OpRollback && tx.RoundID == "C2" {
			return faultRefuse
		}
		return faultNone
	})
	op.setRefuseCode(opwallet.CodeInvalidRequest)
	w := e.stake("player:alice", 30, coupRef("T1", "C2"))
	a := e.stake("player:alice", 70, coupRef("T1", "C2"))
	e.void(w)
	waitFor(t, "the refused rollback to become an exception", func() bool { return e.openExceptions("rollback") == 1 })
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C2", BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankLoses})
	d2 := e.stake("player:alice", 10, coupRef("T2", "D2"))
	e.settle(&walletv1.SettleCoupRequest{CoupId: "D2", BankHoldId: bank2.GetHoldId(), Bets: bets(d2), Outcome: bankLoses})
	waitFor(t, "alice's round D2 to end", func() bool { _, n := op.roundEnd("alice", "D2"); return n == 1 })
	e.relayLooked()
	for _, c := range op.answeredCalls() {
		if c.round == "C2" && c.player == "alice" && c.op != opwallet.OpDebit {
			t.Fatalf("%s %s of C2 sent while the round's rollback is an open exception", c.op, c.id)
		}
	}
	rb := e.exceptions(false)[0].GetTransaction()
	if _, err := e.c.SettleOperatorException(as(operator), &walletv1.SettleOperatorExceptionRequest{RequestId: "s-rb", TransactionId: rb.GetTransactionId(),
		Reason: "stake refunded by hand"}); err != nil {
		t.Fatal(err)
	}
	op.payOutside("alice", 30)
	e.drainAll()
	var order []string
	for _, c := range op.answeredCalls() {
		if c.round == "C2" && c.player == "alice" {
			order = append(order, c.op)
		}
	}
	if strings.Join(order, ",") != "debit,debit,credit,round_end" {
		t.Fatalf("alice's calls in C2: %v", order)
	}
	e.void(bank)
	e.void(bank2)
	e.drainAll()
	wantNoViolations(t, op)
	e.wantConserved(op)
}

// TestOperatorExceptionRequests: the exception API's checks, roles,
// paging, and that an open exception keeps a ledger from leaving
// seamless mode.
func TestOperatorExceptionRequests(t *testing.T) {
	if got := retryID("cr-01J"); got != "cr-01J.r2" {
		t.Fatal(got)
	}
	if got := retryID("cr-01J.r2"); got != "cr-01J.r3" {
		t.Fatal(got)
	}
	// A transfer wallet has none.
	tw := newEnv(t)
	if r, err := tw.c.ListOperatorExceptions(as(operator), &walletv1.ListOperatorExceptionsRequest{}); err != nil || len(r.GetExceptions()) != 0 {
		t.Fatalf("%v %v", r, err)
	}
	_, err := tw.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{RequestId: "r", TransactionId: "cr-x"})
	wantErr(t, err, codes.NotFound, "OPERATOR_EXCEPTION_NOT_FOUND")

	op, e := seamlessWith(t, "alice", "bob")
	op.setRefuseCode(opwallet.CodeCurrencyMismatch)
	op.setFault(func(o string, tx opwallet.Transaction) fault {
		if o == opwallet.OpCredit && tx.PlayerID == "alice" {
			return faultRefuse
		}
		return faultNone
	})
	bank := e.stake("player:bob", 500, coupRef("T1", "C1"))
	var debit string
	for _, c := range []string{"C1", "C2", "C3"} {
		a := e.stake("player:alice", 10, coupRef("T1", c))
		e.settle(&walletv1.SettleCoupRequest{CoupId: c, BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankLoses})
	}
	waitFor(t, "three exceptions", func() bool { return e.openExceptions("credit") == 3 })
	txs, _ := e.report()
	for _, x := range txs {
		if x.GetKind() == "debit" {
			debit = x.GetTransactionId()
		}
	}
	// Paging, oldest first.
	r, err := e.c.ListOperatorExceptions(as(operator), &walletv1.ListOperatorExceptionsRequest{PageSize: 2})
	if err != nil || len(r.GetExceptions()) != 2 || r.GetNextPageToken() == "" || r.GetOpenCount() != 3 || r.GetOperatorId() != "casino-1" ||
		r.GetExceptions()[0].GetTransaction().GetRoundId() != "C1" {
		t.Fatalf("%v %v", r, err)
	}
	r, err = e.c.ListOperatorExceptions(as(operator), &walletv1.ListOperatorExceptionsRequest{PageSize: 2, PageToken: r.GetNextPageToken()})
	if err != nil || len(r.GetExceptions()) != 1 || r.GetNextPageToken() != "" || r.GetExceptions()[0].GetTransaction().GetRoundId() != "C3" {
		t.Fatalf("%v %v", r, err)
	}
	first := e.exceptions(false)[0].GetTransaction().GetTransactionId()
	for _, c := range []struct {
		call   func() error
		code   codes.Code
		reason string
	}{
		{func() error {
			_, err := e.c.ListOperatorExceptions(as(operator), &walletv1.ListOperatorExceptionsRequest{OperatorId: "other"})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{func() error {
			_, err := e.c.ListOperatorExceptions(as(operator), &walletv1.ListOperatorExceptionsRequest{PageToken: "x"})
			return err
		}, codes.InvalidArgument, "INVALID_PAGE_TOKEN"},
		{func() error {
			_, err := e.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{TransactionId: first})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{func() error {
			_, err := e.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{RequestId: "r1"})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{func() error {
			_, err := e.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{RequestId: "r2", TransactionId: first,
				Reason: strings.Repeat("x", 501)})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{func() error {
			_, err := e.c.SettleOperatorException(as(operator), &walletv1.SettleOperatorExceptionRequest{RequestId: "s1", TransactionId: first})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{func() error {
			_, err := e.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{RequestId: "r3", TransactionId: "cr-nope"})
			return err
		}, codes.NotFound, "OPERATOR_EXCEPTION_NOT_FOUND"},
		{func() error {
			_, err := e.c.SettleOperatorException(as(operator), &walletv1.SettleOperatorExceptionRequest{RequestId: "s2", TransactionId: debit, Reason: "x"})
			return err
		}, codes.NotFound, "OPERATOR_EXCEPTION_NOT_FOUND"},
	} {
		wantErr(t, c.call(), c.code, c.reason)
	}
	// Roles: the table service none of it, auditors read only.
	if _, err := e.c.ListOperatorExceptions(as(tableSvc), &walletv1.ListOperatorExceptionsRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("table-svc listed: %v", err)
	}
	if _, err := e.c.RetryOperatorException(as(auditor), &walletv1.RetryOperatorExceptionRequest{RequestId: "r4", TransactionId: first}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("an auditor retried: %v", err)
	}
	// The same request_id with another request.
	if _, err := e.c.SettleOperatorException(as(operator), &walletv1.SettleOperatorExceptionRequest{RequestId: "s3", TransactionId: first, Reason: "by hand"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.SettleOperatorException(as(operator), &walletv1.SettleOperatorExceptionRequest{RequestId: "s3", TransactionId: first, Reason: "other"})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	_, err = e.c.RetryOperatorException(as(operator), &walletv1.RetryOperatorExceptionRequest{RequestId: "r5", TransactionId: first})
	wantErr(t, err, codes.FailedPrecondition, "OPERATOR_EXCEPTION_RESOLVED")
	if got := e.openExceptions("credit"); got != 2 {
		t.Fatalf("open credit exceptions %v, want 2", got)
	}
	// Open exceptions keep the ledger in seamless mode.
	e.stop()
	_, _, err = MigrateMode(e.path, ModeTransfer, "tester@host", time.Now())
	var refusal *MigrateRefusal
	if !errors.As(err, &refusal) || !strings.Contains(strings.Join(refusal.Blockers, "\n"), "operator exception open: credit") {
		t.Fatalf("MigrateMode: %v", err)
	}
	e.start()
}
