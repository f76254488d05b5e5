package walletsvc

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// newSeamless starts a seamless wallet on op.
func newSeamless(t testing.TB, op *fakeOp) *env {
	t.Helper()
	return newSeamlessAt(t, op, nil)
}

// frozenClock is a service clock that stands still until the test moves
// it (the operator relay's retries keep real time).
type frozenClock struct{ at atomic.Int64 }

func newFrozenClock() *frozenClock {
	c := &frozenClock{}
	c.at.Store(time.Now().UnixNano())
	return c
}

func (c *frozenClock) now() time.Time { return time.Unix(0, c.at.Load()) }

// newSeamlessAt starts a seamless wallet on op. With a clock, the
// service runs on it and a round with nothing staked waits the default
// minute (endIdle ends it); without, on time.Now, and waits 20 ms.
func newSeamlessAt(t testing.TB, op *fakeOp, clock *frozenClock) *env {
	t.Helper()
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	idle := 20 * time.Millisecond
	if clock != nil {
		e.clock, idle = clock.now, 0
	}
	e.config = func(c *Config) {
		c.Operator, c.OperatorID, c.operatorBackoff, c.roundIdle = op, "casino-1", time.Millisecond, idle
	}
	e.start()
	t.Cleanup(e.stop)
	return e
}

// endIdle moves clock past the idle wait of the rounds with nothing
// staked and ends them (as the relay does on its next pass).
func (e *env) endIdle(clock *frozenClock) {
	e.t.Helper()
	clock.at.Add(int64(defaultRoundIdle))
	if _, err := e.svc.endIdleRounds(); err != nil {
		e.t.Fatalf("endIdleRounds: %v", err)
	}
}

// seamlessWith starts a seamless wallet on a fake operator where each
// of players has 1000.
func seamlessWith(t testing.TB, players ...string) (*fakeOp, *env) {
	t.Helper()
	op := newFakeOp()
	for _, p := range players {
		op.fund(p, 1000)
	}
	return op, newSeamless(t, op)
}

func coupRef(table, coup string) string { return "tables/" + table + "/coups/" + coup }

func (e *env) stake(acct string, amount int64, ref string) *walletv1.Hold {
	e.t.Helper()
	r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: acct, Amount: amount, Reference: ref})
	if err != nil {
		e.t.Fatalf("PlaceHold(%s, %d): %v", acct, amount, err)
	}
	return r.GetHold()
}

// outboxDepth is the number of operator transactions waiting (with
// idle, and of rounds waiting to end).
func (e *env) outboxDepth(idle bool) int {
	var n int
	_ = e.svc.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketOpOutbox).Stats().KeyN
		if idle {
			n += tx.Bucket(bucketOpIdle).Stats().KeyN
		}
		return nil
	})
	return n
}

// drain waits until the operator outbox is empty.
func (e *env) drain() {
	e.t.Helper()
	e.waitOutbox(false)
}

// drainAll waits until the operator outbox is empty and no round waits
// to end.
func (e *env) drainAll() {
	e.t.Helper()
	e.waitOutbox(true)
}

func (e *env) waitOutbox(idle bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.outboxDepth(idle) > 0 {
		if time.Now().After(deadline) {
			e.t.Fatalf("the operator outbox still holds %d entries", e.outboxDepth(idle))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// report reads the whole report of today.
func (e *env) report() ([]*walletv1.OperatorTransaction, map[string]*walletv1.OperatorTotals) {
	e.t.Helper()
	var txs []*walletv1.OperatorTransaction
	var totals map[string]*walletv1.OperatorTotals
	tok := ""
	for {
		r, err := e.c.GetOperatorReport(as(auditor), &walletv1.GetOperatorReportRequest{OperatorId: "casino-1",
			Day: e.svc.now().UTC().Format(time.DateOnly), PageSize: 7, PageToken: tok})
		if err != nil {
			e.t.Fatalf("GetOperatorReport: %v", err)
		}
		txs = append(txs, r.GetTransactions()...)
		totals = map[string]*walletv1.OperatorTotals{}
		for _, t := range r.GetTotals() {
			totals[t.GetKind()] = t
		}
		if tok = r.GetNextPageToken(); tok == "" {
			return txs, totals
		}
	}
}

// wantNoViolations fails on any rule the fake operator saw broken.
func wantNoViolations(t testing.TB, op *fakeOp) {
	t.Helper()
	if _, _, v := op.snapshot(); len(v) > 0 {
		t.Fatalf("operator saw %d violations, first: %s", len(v), v[0])
	}
}

func TestSeamlessBetIsDebitedThenHeld(t *testing.T) {
	op, e := seamlessWith(t, "alice")
	h := e.stake("player:alice", 300, coupRef("T1", "C1"))
	if op.bal("alice") != 700 {
		t.Fatalf("operator balance %d, want 700", op.bal("alice"))
	}
	e.wantBal("player:alice", 300, 300)
	e.wantBal(AccountOperator, -300, 0)
	txs, _ := e.report()
	if len(txs) != 1 || txs[0].GetKind() != "debit" || txs[0].GetStatus() != "applied" || txs[0].GetRoundId() != "C1" ||
		txs[0].GetTableId() != "T1" || txs[0].GetReason() != "bet" || txs[0].GetOperatorTransactionId() == "" {
		t.Fatalf("report %v", txs)
	}
	if h.GetAmount() != 300 {
		t.Fatal(h)
	}
	// A bank (PlaceHold's purpose) is debited as one.
	if _, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "bank", AccountId: "player:alice", Amount: 200,
		Reference: coupRef("T1", "C2"), Purpose: walletv1.HoldPurpose_HOLD_PURPOSE_BANK}); err != nil {
		t.Fatal(err)
	}
	if txs, _ := e.report(); len(txs) != 2 || txs[1].GetReason() != "bank" || txs[1].GetAmount() != 200 {
		t.Fatalf("report after a bank %v", txs)
	}
	// The operator holds the money: no deposit or withdrawal of a player.
	_, err := e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: "d", AccountId: "player:alice", Amount: 5})
	wantErr(t, err, codes.FailedPrecondition, "SEAMLESS_WALLET")
	_, err = e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: "w", AccountId: "player:alice", Amount: 5})
	wantErr(t, err, codes.FailedPrecondition, "SEAMLESS_WALLET")
	// house:bank is still funded the transfer way.
	e.deposit(AccountHouseBank, 100)
	// A limit refuses before any debit.
	if _, err := e.c.SetPlayerLimits(as(operator), &walletv1.SetPlayerLimitsRequest{RequestId: "l", AccountId: "player:alice",
		Limits: &walletv1.PlayerLimits{MaxStake: 100}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "big", AccountId: "player:alice", Amount: 200, Reference: coupRef("T1", "C1")})
	wantErr(t, err, codes.FailedPrecondition, "LIMIT_REACHED")
	if op.bal("alice") != 500 || op.count("debit") != 2 {
		t.Fatalf("balance %d after %d debits", op.bal("alice"), op.count("debit"))
	}
	e.wantConserved(op)
}

func TestSeamlessDebitRefusedOrUnknown(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	// The clock stands still: no round ends for want of a stake before
	// the test says so (endIdle), however slow a step.
	clock := newFrozenClock()
	e := newSeamlessAt(t, op, clock)
	var mode atomic.Int32
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		if o == opwallet.OpDebit {
			return fault(mode.Load())
		}
		return faultNone
	})
	place := func(id string) error {
		_, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: id, AccountId: "player:alice", Amount: 100, Reference: coupRef("T1", "C"+id)})
		return err
	}
	// A definite refusal: OPERATOR_REFUSED with the code, final.
	mode.Store(int32(faultRefuse))
	err := place("r1")
	wantErr(t, err, codes.FailedPrecondition, "OPERATOR_REFUSED")
	if md := errs.Info(err).GetMetadata(); md["operator_code"] != opwallet.CodePlayerBlocked {
		t.Fatalf("metadata %v", md)
	}
	mode.Store(int32(faultNone))
	wantErr(t, place("r1"), codes.FailedPrecondition, "OPERATOR_REFUSED") // the stored answer
	// The operator's INSUFFICIENT_FUNDS is ours.
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "poor", AccountId: "player:alice", Amount: 5000, Reference: coupRef("T1", "C9")})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	e.wantBal("player:alice", 0, 0)

	// Unknown outcome, applied by the operator: UNAVAILABLE, rolled back.
	mode.Store(int32(faultLostAnswer))
	wantErr(t, place("u1"), codes.Unavailable, "OPERATOR_UNAVAILABLE")
	e.wantBal("player:alice", 0, 0)
	e.drain()
	if op.bal("alice") != 1000 {
		t.Fatalf("balance %d after the rollback, want 1000", op.bal("alice"))
	}
	// Unknown outcome, not applied: the rollback moves nothing.
	mode.Store(int32(faultNotApplied))
	wantErr(t, place("u2"), codes.Unavailable, "OPERATOR_UNAVAILABLE")
	e.drain()
	if op.bal("alice") != 1000 {
		t.Fatalf("balance %d, want 1000", op.bal("alice"))
	}
	// The retry of u1 is a new debit (attempt 2), in the same round, and
	// stands.
	mode.Store(int32(faultNone))
	if err := place("u1"); err != nil {
		t.Fatal(err)
	}
	if op.bal("alice") != 900 {
		t.Fatalf("balance %d, want 900", op.bal("alice"))
	}
	e.drain()
	if st, n := op.roundEnd("alice", "Cu1"); n != 0 {
		t.Fatalf("round Cu1 ended %q while its stake stands", st)
	}
	// The rounds with only a debit rolled back (u2) or refused (r1, and
	// C9 for want of funds) wait for a stake...
	for _, r := range []string{"Cu2", "Cr1", "C9"} {
		if st, n := op.roundEnd("alice", r); n != 0 {
			t.Fatalf("round %s ended %q before its wait", r, st)
		}
	}
	// ...and end cancelled once they waited in vain.
	e.endIdle(clock)
	e.drainAll()
	for _, r := range []string{"Cu2", "Cr1", "C9"} {
		if st, n := op.roundEnd("alice", r); st != opwallet.RoundCancelled || n != 1 {
			t.Fatalf("round %s %q x%d", r, st, n)
		}
	}
	if st, n := op.roundEnd("alice", "Cu1"); n != 0 {
		t.Fatalf("round Cu1 ended %q while its stake stands", st)
	}
	txs, totals := e.report()
	seen := map[string]string{}
	for _, x := range txs {
		seen[x.GetTransactionId()] = x.GetStatus()
	}
	if seen["db-u1-1"] != "rolled_back" || seen["db-u1-2"] != "applied" || seen["db-r1-1"] != "refused" || seen["db-u2-1"] != "rolled_back" {
		t.Fatalf("statuses %v", seen)
	}
	if d := totals["debit"]; d.GetSettledAmount() != 300 || d.GetPendingCount() != 0 || d.GetCount() != 5 {
		t.Fatalf("debit totals %v", d)
	}
	// A duplicate answer is success.
	mode.Store(int32(faultDuplicate))
	if err := place("dup"); err != nil {
		t.Fatal(err)
	}
	e.wantBal("player:alice", 200, 200)
	wantNoViolations(t, op)
	e.wantConserved(op)
}

// TestSeamlessRefusedRoundEnds: a round where the only debit was refused
// (here CURRENCY_MISMATCH) ends cancelled after the idle wait, once; a
// stake in it meanwhile keeps it open.
func TestSeamlessRefusedRoundEnds(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	op.setRefuseCode(opwallet.CodeCurrencyMismatch)
	clock := newFrozenClock()
	e := newSeamlessAt(t, op, clock)
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		if o == opwallet.OpDebit {
			return faultRefuse
		}
		return faultNone
	})
	for _, c := range []string{"C1", "C2"} {
		_, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "m-" + c, AccountId: "player:alice", Amount: 100, Reference: coupRef("T1", c)})
		wantErr(t, err, codes.FailedPrecondition, "OPERATOR_REFUSED")
	}
	op.setFault(nil)
	h := e.stake("player:alice", 100, coupRef("T1", "C2")) // C2 gets a stake after all
	e.drain()
	e.endIdle(clock)
	e.drainAll()
	if st, n := op.roundEnd("alice", "C1"); st != opwallet.RoundCancelled || n != 1 {
		t.Fatalf("round C1 %q x%d, want cancelled once", st, n)
	}
	if st, n := op.roundEnd("alice", "C2"); n != 0 {
		t.Fatalf("round C2 ended %q while its stake stands", st)
	}
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v", HoldId: h.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	e.drainAll()
	if st, n := op.roundEnd("alice", "C2"); st != opwallet.RoundCancelled || n != 1 {
		t.Fatalf("round C2 %q x%d, want cancelled once", st, n)
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}

// chemin plays a coup of chemin de fer: bob banks 200, alice bets 100,
// carol 50, all debited.
func TestSeamlessCheminDeFer(t *testing.T) {
	op := newFakeOp()
	for _, p := range []string{"alice", "bob", "carol", "dave"} {
		op.fund(p, 1000)
	}
	e := newSeamless(t, op)
	bank := e.stake("player:bob", 200, coupRef("T1", "C1"))
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	c := e.stake("player:carol", 50, coupRef("T1", "C1"))
	r := e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(a, c), Outcome: bankLoses})
	if r.GetNewBank() != 50 {
		t.Fatal(r)
	}
	e.drain()
	// The punters are credited their stakes and winnings; the bank stays.
	if op.bal("alice") != 1100 || op.bal("carol") != 1050 || op.bal("bob") != 800 {
		t.Fatalf("balances %d %d %d", op.bal("alice"), op.bal("carol"), op.bal("bob"))
	}
	for _, p := range []string{"alice", "carol"} {
		if st, n := op.roundEnd(p, "C1"); st != opwallet.RoundCompleted || n != 1 {
			t.Fatalf("%s round_end %q x%d", p, st, n)
		}
	}
	if _, n := op.roundEnd("bob", "C1"); n != 0 {
		t.Fatal("bob's round ended while his bank is still up")
	}
	e.wantBal("player:alice", 0, 0)
	e.wantBal("player:bob", 50, 50)

	// Coup 2 on the same bank: he raises it by 150 (a debit), dave bets
	// 200, the bank wins: the bank is 400, kept.
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "raise", HoldId: bank.GetHoldId(), Amount: 200}); err != nil {
		t.Fatal(err)
	}
	if op.bal("bob") != 650 {
		t.Fatalf("bob %d after the raise", op.bal("bob"))
	}
	d := e.stake("player:dave", 200, coupRef("T1", "C2"))
	r = e.settle(&walletv1.SettleCoupRequest{CoupId: "C2", BankHoldId: bank.GetHoldId(), Bets: bets(d), Outcome: bankWins, BankLimit: 300})
	if r.GetNewBank() != 300 || r.GetSetAside() != 100 {
		t.Fatal(r)
	}
	e.drain()
	// The part over the bank limit comes back at once, a payout in the
	// bank's round (C1, still open: no movement follows a round's end).
	if op.bal("bob") != 750 || op.bal("dave") != 800 {
		t.Fatalf("bob %d dave %d", op.bal("bob"), op.bal("dave"))
	}
	if st, _ := op.roundEnd("dave", "C2"); st != opwallet.RoundCompleted {
		t.Fatalf("dave's round %q", st)
	}
	// The bank passes: it comes back to bob, a bank_return.
	e.void(bank)
	e.drain()
	if op.bal("bob") != 1050 {
		t.Fatalf("bob %d after his bank came back", op.bal("bob"))
	}
	if st, n := op.roundEnd("bob", "C1"); st != opwallet.RoundCompleted || n != 1 {
		t.Fatalf("bob's round C1 %q x%d", st, n)
	}
	_, ledger, _ := op.snapshot()
	var returned bool
	for _, x := range ledger {
		returned = returned || (x.player == "bob" && x.reason == "bank_return" && x.amount == 300 && x.round == "C1")
	}
	if !returned {
		t.Fatalf("no bank_return of 300 in C1: %v", ledger)
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}

func TestSeamlessVoidedCoupRollsBack(t *testing.T) {
	op, e := seamlessWith(t, "alice", "bob")
	bank := e.stake("player:bob", 200, coupRef("T1", "C1"))
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "raise", HoldId: bank.GetHoldId(), Amount: 300}); err != nil {
		t.Fatal(err)
	}
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	e.void(a)
	e.void(bank)
	e.drain()
	if op.bal("alice") != 1000 || op.bal("bob") != 1000 {
		t.Fatalf("balances %d %d", op.bal("alice"), op.bal("bob"))
	}
	_, ledger, _ := op.snapshot()
	var rollbacks, credits int
	for _, x := range ledger {
		switch x.op {
		case "rollback":
			rollbacks++
		case "credit":
			credits++
		}
	}
	if rollbacks != 3 || credits != 0 {
		t.Fatalf("%d rollbacks %d credits, want 3 and 0: %v", rollbacks, credits, ledger)
	}
	for _, p := range []string{"alice", "bob"} {
		if st, n := op.roundEnd(p, "C1"); st != opwallet.RoundCancelled || n != 1 {
			t.Fatalf("%s round %q x%d", p, st, n)
		}
	}
	// A stake after his round ended opens a new round of the coup.
	e.stake("player:alice", 10, coupRef("T1", "C1"))
	txs, _ := e.report()
	if last := txs[len(txs)-1]; last.GetRoundId() != "C1.2" {
		t.Fatalf("new round %q", last.GetRoundId())
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}

func TestSeamlessCreditAfterRestart(t *testing.T) {
	op, e := seamlessWith(t, "alice", "bob")
	// Credits get no answer, the first one applied regardless.
	var lost atomic.Bool
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		if o != opwallet.OpCredit {
			return faultNone
		}
		if lost.CompareAndSwap(false, true) {
			return faultLostAnswer
		}
		return faultNotApplied
	})
	bank := e.stake("player:bob", 200, coupRef("T1", "C1"))
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankLoses})
	// Wait for two failed tries of the credit, then stop mid-outbox.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if op.count("credit") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the credit was not tried")
		}
		time.Sleep(time.Millisecond)
	}
	e.stop()
	op.setFault(nil)
	e.start()
	e.drain()
	_, ledger, _ := op.snapshot()
	var credits int
	for _, x := range ledger {
		if x.op == "credit" {
			credits++
		}
	}
	if credits != 1 || op.bal("alice") != 1100 {
		t.Fatalf("%d credits, alice %d: want 1 and 1100", credits, op.bal("alice"))
	}
	if st, n := op.roundEnd("alice", "C1"); st != opwallet.RoundCompleted || n != 1 {
		t.Fatalf("round %q x%d", st, n)
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}

func TestSeamlessDebitInFlightAtCrash(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	var crash atomic.Bool
	crash.Store(true)
	e.config = func(c *Config) {
		c.Operator, c.OperatorID, c.operatorBackoff, c.roundIdle = op, "casino-1", time.Millisecond, 20*time.Millisecond
		c.crashAfterDebit = func(string) bool { return crash.Load() }
	}
	e.start()
	t.Cleanup(e.stop)
	_, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "h", AccountId: "player:alice", Amount: 100, Reference: coupRef("T1", "C1")})
	if status.Code(err) != codes.Internal || op.bal("alice") != 900 {
		t.Fatalf("got %v, operator balance %d", err, op.bal("alice"))
	}
	crash.Store(false)
	e.restart()
	e.drain()
	if op.bal("alice") != 1000 {
		t.Fatalf("balance %d after the restart, want 1000", op.bal("alice"))
	}
	txs, _ := e.report()
	if txs[0].GetStatus() != "rolled_back" {
		t.Fatalf("debit %v", txs[0])
	}
	// The table retries: a new debit.
	if _, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "h", AccountId: "player:alice", Amount: 100, Reference: coupRef("T1", "C1")}); err != nil {
		t.Fatal(err)
	}
	e.wantBal("player:alice", 100, 100)
	wantNoViolations(t, op)
	e.wantConserved(op)
}

// wantConserved checks, with the outbox drained, that chemmy's books
// balance, that no player has money available in chemmy, and that each
// player's money at the operator plus what chemmy holds for him is what
// he was funded with plus his net winnings inside chemmy (the house's
// commission and fees left).
func (e *env) wantConserved(op *fakeOp) {
	e.t.Helper()
	e.drainAll()
	r, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	if !r.GetBalanced() {
		e.t.Fatalf("audit: %v", r.GetDiscrepancies())
	}
	bal, _, _ := op.snapshot()
	e.wantBooks(bal, op.funding)
}

// wantBooks is wantConserved's check of chemmy's ledger against the
// operator's balances and funding by player id.
func (e *env) wantBooks(bal, funding map[string]int64) {
	e.t.Helper()
	st := readLedger(e.t, e.svc.db)
	var total, funded, chemmy int64
	for p, b := range bal {
		total += b
		funded += funding[p]
		acct := "player:" + p
		if st.balances[acct] != st.held[acct] {
			e.t.Errorf("%s: balance %d held %d in chemmy: available money not swept", acct, st.balances[acct], st.held[acct])
		}
		chemmy += st.held[acct]
	}
	house := st.balances[AccountCommission]
	if st.balances[AccountOperator] != -chemmy-house {
		e.t.Errorf("external:operator %d, the players hold %d, the house took %d", st.balances[AccountOperator], chemmy, house)
	}
	if total+chemmy+house != funded {
		e.t.Errorf("operator %d + chemmy %d + commission %d != funding %d", total, chemmy, house, funded)
	}
}

// TestSeamlessRandomFaults plays many coups with random operator faults
// and random voids, then checks conservation, the rules (no rollback
// after a credit, nothing after a round's end, each round ended once)
// and that the report's settled net equals the operator's ledger.
func TestSeamlessRandomFaults(t *testing.T) {
	op := newFakeOp()
	players := []string{"p0", "p1", "p2", "p3", "p4"}
	for _, p := range players {
		op.fund(p, 100000)
	}
	rng := rand.New(rand.NewPCG(7, 15))
	var rmu = make(chan struct{}, 1)
	pick := func(n int) int { rmu <- struct{}{}; defer func() { <-rmu }(); return rng.IntN(n) }
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		switch pick(20) {
		case 0:
			if o != opwallet.OpDebit {
				return faultNotApplied // refusals of the others: TestSeamlessCreditRefused
			}
			return faultRefuse
		case 1:
			return faultLostAnswer
		case 2:
			return faultNotApplied
		case 3:
			return faultDuplicate
		}
		return faultNone
	})
	e := newSeamless(t, op)
	coups := 60
	if testing.Short() {
		coups = 15
	}
	playCoups(e, players, 0, coups, pick)
	e.drainAll()
	wantNoViolations(t, op)
	e.wantConserved(op)
	// Every round with a transaction ended exactly once.
	txs, totals := e.report()
	rounds := map[string]bool{}
	for _, x := range txs {
		if x.GetKind() != "round_end" && x.GetStatus() != "refused" {
			rounds[x.GetPlayerId()+"/"+x.GetRoundId()] = true
		}
		if x.GetStatus() == "pending" {
			t.Errorf("transaction still pending: %v", x)
		}
	}
	op.mu.Lock()
	for r := range rounds {
		if op.endCount[r] != 1 {
			t.Errorf("round %s ended %d times", r, op.endCount[r])
		}
	}
	op.mu.Unlock()
	// The report's settled credits equal the operator's credits, and its
	// net equals the operator's net (a debit of unknown outcome counts
	// with its rollback).
	_, ledger, _ := op.snapshot()
	var opNet, opCredits int64
	for _, x := range ledger {
		opNet += x.amount
		if x.op == "credit" {
			opCredits += x.amount
		}
	}
	net := totals["credit"].GetSettledAmount() + totals["rollback"].GetSettledAmount() - totals["debit"].GetSettledAmount()
	if net != opNet || totals["credit"].GetSettledAmount() != opCredits {
		t.Fatalf("report net %d credits %d, operator net %d credits %d", net, totals["credit"].GetSettledAmount(), opNet, opCredits)
	}
	if net == 0 || opCredits == 0 {
		t.Fatal("nothing was played")
	}
	t.Logf("%d operator transactions (%d rounds); calls: debit %d, credit %d, rollback %d, round_end %d; operator net %d",
		len(txs), len(rounds), op.count("debit"), op.count("credit"), op.count("rollback"), op.count("round_end"), opNet)
}

// playCoups plays coups K<first>... of chemin de fer on table T1 among players, the
// bank going round: random bets, withdrawn bets and voided coups (pick
// draws), every stake retried under its request id while the operator
// does not answer.
func playCoups(e *env, players []string, first, coups int, pick func(int) int) {
	e.t.Helper()
	for c := first; c < first+coups; c++ {
		coup := fmt.Sprintf("K%d", c)
		ref := coupRef("T1", coup)
		banker := players[c%len(players)]
		// A stake is retried with its request id until it stands or is refused.
		stake := func(acct string, amount int64) *walletv1.Hold {
			id := e.id("s")
			for {
				r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: id, AccountId: acct, Amount: amount, Reference: ref})
				if err == nil {
					return r.GetHold()
				}
				if status.Code(err) != codes.Unavailable {
					return nil
				}
			}
		}
		bank := stake("player:"+banker, 500)
		if bank == nil {
			continue
		}
		if pick(4) == 0 { // the banker raises his bank (CF-BANK-RAISE), retried likewise
			id := e.id("raise")
			for {
				r, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: id, HoldId: bank.GetHoldId(), Amount: 600})
				if err == nil {
					bank = r.GetHold()
				}
				if status.Code(err) != codes.Unavailable {
					break
				}
			}
		}
		var hs []*walletv1.Hold
		var total int64
		for _, p := range players {
			if p == banker || pick(3) == 0 {
				continue
			}
			amount := int64(10 + pick(100))
			if total+amount > 500 {
				break
			}
			if h := stake("player:"+p, amount); h != nil {
				if pick(8) == 0 {
					e.void(h) // a bet withdrawn
					continue
				}
				hs = append(hs, h)
				total += amount
			}
		}
		if pick(6) == 0 {
			for _, h := range append(hs, bank) {
				e.void(h) // the coup is voided
			}
			continue
		}
		outcome := []walletv1.CoupOutcome{bankWins, bankLoses, standOff}[pick(3)]
		e.settle(&walletv1.SettleCoupRequest{CoupId: coup, BankHoldId: bank.GetHoldId(), Bets: bets(hs...), Outcome: outcome, CommissionBp: 500})
		e.void(bank) // the bank passes
	}
}

// TestSeamlessCreditRefusedIsKept: an operator must not refuse a credit;
// a refusal that is not for good (PLAYER_BLOCKED) is logged, counted and
// sent again with the normal backoff until it takes it (a refusal for
// good, or too many: exceptions_test.go).
func TestSeamlessCreditRefusedIsKept(t *testing.T) {
	op, e := seamlessWith(t, "alice", "bob")
	var refused atomic.Int32
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		if o == opwallet.OpCredit && refused.Add(1) == 1 {
			return faultRefuse
		}
		return faultNone
	})
	bank := e.stake("player:bob", 200, coupRef("T1", "C1"))
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankLoses})
	e.drain()
	if got := testutil.ToFloat64(e.svc.opMetrics.refusals.WithLabelValues(e.svc.opID, "credit")); got != 1 {
		t.Fatalf("refusals counted %v, want 1", got)
	}
	if op.bal("alice") != 1100 {
		t.Fatalf("alice %d, want 1100", op.bal("alice"))
	}
	if got := testutil.ToFloat64(e.svc.opMetrics.calls.WithLabelValues(e.svc.opID, "credit", "ok")); got != 1 {
		t.Fatalf("credits ok %v, want 1", got)
	}
	wantNoViolations(t, op)
}

// TestSeamlessLimitsCountPlayNotTransfers: the operator's debits and
// credits are not play; the game's transfers are.
func TestSeamlessLimitsCountPlayNotTransfers(t *testing.T) {
	op, e := seamlessWith(t, "alice", "bob")
	if _, err := e.c.SetPlayerLimits(as(operator), &walletv1.SetPlayerLimitsRequest{RequestId: "l", AccountId: "player:alice",
		Limits: &walletv1.PlayerLimits{DailyLossLimit: 150}}); err != nil {
		t.Fatal(err)
	}
	bank := e.stake("player:bob", 500, coupRef("T1", "C1"))
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(a), Outcome: bankWins})
	r, err := e.c.GetPlayerLimits(as(operator), &walletv1.GetPlayerLimitsRequest{AccountId: "player:alice"})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetPlay().GetDailyLoss() != 100 {
		t.Fatalf("daily loss %d, want 100", r.GetPlay().GetDailyLoss())
	}
	debits := op.count("debit")
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "again", AccountId: "player:alice", Amount: 100, Reference: coupRef("T1", "C2")})
	wantLimit(t, err, limitDailyLoss)
	if op.count("debit") != debits {
		t.Fatal("a stake the limits refuse was debited")
	}
	if _, err := e.c.CheckStake(as(tableSvc), &walletv1.CheckStakeRequest{AccountId: "player:alice", Amount: 50}); err != nil {
		t.Fatal(err)
	}
	e.stake("player:alice", 50, coupRef("T1", "C2"))
	e.wantConserved(op)
}

func TestOperatorReportRequests(t *testing.T) {
	_, e := seamlessWith(t, "alice")
	day := time.Now().UTC().Format(time.DateOnly)
	for _, c := range []struct {
		req    *walletv1.GetOperatorReportRequest
		reason string
	}{
		{&walletv1.GetOperatorReportRequest{Day: "2026-13-01"}, "INVALID_ARGUMENT"},
		{&walletv1.GetOperatorReportRequest{Day: day, OperatorId: "other"}, "INVALID_ARGUMENT"},
		{&walletv1.GetOperatorReportRequest{Day: day, PageSize: -1}, "INVALID_ARGUMENT"},
		{&walletv1.GetOperatorReportRequest{Day: day, PageToken: "x"}, "INVALID_PAGE_TOKEN"},
	} {
		_, err := e.c.GetOperatorReport(as(operator), c.req)
		wantErr(t, err, codes.InvalidArgument, c.reason)
	}
	// Players and the table service may not read it.
	if _, err := e.c.GetOperatorReport(as(tableSvc), &walletv1.GetOperatorReportRequest{Day: day}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("table-svc: %v", err)
	}
	e.stake("player:alice", 10, coupRef("T1", "C1"))
	r, err := e.c.GetOperatorReport(as(operator), &walletv1.GetOperatorReportRequest{Day: day})
	if err != nil || len(r.GetTransactions()) != 1 || r.GetOperatorId() != "casino-1" {
		t.Fatalf("%v %v", r, err)
	}
	// Another day has nothing.
	r, err = e.c.GetOperatorReport(as(auditor), &walletv1.GetOperatorReportRequest{Day: "2020-01-01"})
	if err != nil || len(r.GetTransactions()) != 0 || len(r.GetTotals()) != 0 {
		t.Fatalf("%v %v", r, err)
	}
}
