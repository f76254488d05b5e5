package walletsvc

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// countingOp counts every call to the operator's wallet, balance probes
// included.
type countingOp struct {
	opwallet.Operator
	n atomic.Int64
}

func (c *countingOp) Balance(ctx context.Context, r opwallet.BalanceRequest) (opwallet.Result, error) {
	c.n.Add(1)
	return c.Operator.Balance(ctx, r)
}

func (c *countingOp) Debit(ctx context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	c.n.Add(1)
	return c.Operator.Debit(ctx, tx)
}

func (c *countingOp) Credit(ctx context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	c.n.Add(1)
	return c.Operator.Credit(ctx, tx)
}

func (c *countingOp) Rollback(ctx context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	c.n.Add(1)
	return c.Operator.Rollback(ctx, tx)
}

func (c *countingOp) RoundEnd(ctx context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	c.n.Add(1)
	return c.Operator.RoundEnd(ctx, tx)
}

// fileState is a ledger file's money and mode, read with the service
// stopped.
type fileState struct {
	balances, held map[string]int64
	transfers      int
	mode           ModeInfo
}

func readFile(t *testing.T, path string) fileState {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := readLedger(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := ReadMode(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{balances: st.balances, held: st.held, transfers: st.transfers, mode: info}
}

// startIn starts a service on path in transfer mode (op nil) or seamless
// mode, and returns Start's error.
func startIn(t *testing.T, path string, op opwallet.Operator) error {
	t.Helper()
	svc, err := Start(context.Background(), Config{ListenAddr: "127.0.0.1:0", DBPath: path, Trust: trust.Config{Insecure: true},
		Logger: slog.New(slog.DiscardHandler), Operator: op, operatorBackoff: time.Millisecond})
	if err == nil {
		svc.Stop()
		_ = svc.Wait()
		t.Fatalf("%s: started", path)
	}
	return err
}

// wantModeError fails unless err is the refusal of a start in mode
// wanted on path, of mode recorded, naming both and the ways out.
func wantModeError(t *testing.T, err error, path, recorded, wanted string) {
	t.Helper()
	var me *ModeError
	if !errors.As(err, &me) || me.Recorded != recorded || me.Wanted != wanted || me.Path != path {
		t.Fatalf("got %v, want a ModeError %s -> %s on %s", err, recorded, wanted, path)
	}
	msg := err.Error()
	for _, s := range []string{"used in " + recorded + " mode", "asks for " + wanted + " mode", "Nothing was changed",
		"chemmy run -wallet " + recorded, "wallet-svc -wallet-mode " + recorded,
		"chemmy wallet migrate -data-dir " + filepath.Dir(path) + " -to " + wanted, "docs/guide-integration.md, \"Changing the wallet mode\""} {
		if !strings.Contains(msg, s) {
			t.Errorf("the refusal does not say %q: %s", s, msg)
		}
	}
}

// TestModeRefusedAtStart: a ledger file records the wallet mode of its
// first start, and a start in the other mode is refused before anything
// happens: issue 23, where the first seamless coup on a transfer-mode
// file paid each player's whole balance out to the operator's wallet as
// a payout. The operator's wallet sees no call at all (not even the
// probe), and the file keeps its money and its mode.
func TestModeRefusedAtStart(t *testing.T) {
	t.Run("transfer file, seamless start", func(t *testing.T) {
		e := newEnv(t)
		e.deposit("player:alice", 5000)
		e.deposit("player:bob", 5000)
		bank := e.hold("player:alice", 1000)
		bet := e.hold("player:bob", 600)
		e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankWins})
		e.stop()
		before := readFile(t, e.path)
		if before.mode.Mode != ModeTransfer || before.mode.Inferred || len(before.mode.Log) != 1 ||
			before.mode.Log[0].How != ModeHowFirstStart || before.mode.Log[0].To != ModeTransfer {
			t.Fatalf("mode after the first start: %+v", before.mode)
		}
		op := newFakeOp()
		op.fund("alice", 5000)
		op.fund("bob", 5000)
		counted := &countingOp{Operator: op}
		wantModeError(t, startIn(t, e.path, counted), e.path, ModeTransfer, ModeSeamless)
		wantModeError(t, CheckMode(e.path, ModeSeamless), e.path, ModeTransfer, ModeSeamless)
		if n := counted.n.Load(); n != 0 {
			t.Fatalf("the operator's wallet saw %d calls", n)
		}
		if after := readFile(t, e.path); !reflect.DeepEqual(before, after) {
			t.Fatalf("the refused start changed the file:\n%+v\n%+v", before, after)
		}
		if err := CheckMode(e.path, ModeTransfer); err != nil {
			t.Fatal(err)
		}
		e.start()
		e.wantBal("player:bob", 4400, 0)
	})
	t.Run("seamless file, transfer start", func(t *testing.T) {
		op, e := seamlessWith(t, "alice", "bob")
		bank := e.stake("player:alice", 500, coupRef("T1", "C1"))
		bet := e.stake("player:bob", 300, coupRef("T1", "C1"))
		e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankLoses})
		e.drain()
		e.stop()
		before := readFile(t, e.path)
		if before.mode.Mode != ModeSeamless || len(before.mode.Log) != 1 {
			t.Fatalf("mode after the first start: %+v", before.mode)
		}
		wantModeError(t, startIn(t, e.path, nil), e.path, ModeSeamless, ModeTransfer)
		wantModeError(t, CheckMode(e.path, ModeTransfer), e.path, ModeSeamless, ModeTransfer)
		if after := readFile(t, e.path); !reflect.DeepEqual(before, after) {
			t.Fatalf("the refused start changed the file:\n%+v\n%+v", before, after)
		}
		e.start()
		wantNoViolations(t, op)
	})
	t.Run("no file yet", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "wallet.db")
		for _, m := range []string{ModeTransfer, ModeSeamless} {
			if err := CheckMode(path, m); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
		}
		if err := CheckMode(path, "bogus"); err == nil {
			t.Fatal("mode bogus accepted")
		}
		// An empty file (a start that went no further) is new too.
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := CheckMode(path, ModeSeamless); err != nil {
			t.Fatalf("empty file: %v", err)
		}
	})
}

// forgetMode makes path look like a file of a version that did not
// record its mode.
func forgetMode(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketWallet).Delete(keyMode); err != nil {
			return err
		}
		return tx.DeleteBucket(bucketModeLog)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestModeOfOlderFile: a file written before the mode was recorded is
// taken for what it holds: transfers and no operator transaction,
// transfer; operator transactions, seamless; nothing, new (either mode).
// Its next start records it ("inferred").
func TestModeOfOlderFile(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:bob", 5000)
	e.stop()
	forgetMode(t, e.path)
	if info, err := ReadMode(e.path); err != nil || info.Mode != ModeTransfer || !info.Inferred || len(info.Log) != 0 {
		t.Fatalf("older transfer file: %+v %v", info, err)
	}
	op := &countingOp{Operator: newFakeOp()}
	wantModeError(t, startIn(t, e.path, op), e.path, ModeTransfer, ModeSeamless)
	if info, _ := ReadMode(e.path); !info.Inferred || op.n.Load() != 0 {
		t.Fatalf("the refused start recorded %+v, or called the operator %d times", info, op.n.Load())
	}
	e.start()
	e.stop()
	info, err := ReadMode(e.path)
	if err != nil || info.Mode != ModeTransfer || info.Inferred || len(info.Log) != 1 || info.Log[0].How != ModeHowInferred || info.Log[0].Note == "" {
		t.Fatalf("after a transfer start: %+v %v", info, err)
	}

	fop, s := seamlessWith(t, "alice")
	s.void(s.stake("player:alice", 100, coupRef("T1", "C1")))
	s.drain()
	s.stop()
	forgetMode(t, s.path)
	wantModeError(t, startIn(t, s.path, nil), s.path, ModeSeamless, ModeTransfer)
	s.start()
	s.stop()
	if info, err := ReadMode(s.path); err != nil || info.Mode != ModeSeamless || info.Inferred {
		t.Fatalf("older seamless file: %+v %v", info, err)
	}
	wantNoViolations(t, fop)

	// Started once, nothing in it: new, whatever it is started in.
	n := newEnv(t)
	n.stop()
	forgetMode(t, n.path)
	n.config = func(c *Config) { c.Operator = newFakeOp() }
	n.start()
	n.stop()
	if info, _ := ReadMode(n.path); info.Mode != ModeSeamless || info.Log[0].How != ModeHowFirstStart {
		t.Fatalf("empty older file: %+v", info)
	}
}

// wantRefusal fails unless err is a MigrateRefusal of from -> to naming
// each of want.
func wantRefusal(t *testing.T, err error, from, to string, want ...string) {
	t.Helper()
	var r *MigrateRefusal
	if !errors.As(err, &r) || r.From != from || r.To != to {
		t.Fatalf("got %v, want a refusal of %s -> %s", err, from, to)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the refusal does not say %q:\n%s", w, err)
		}
	}
}

// TestMigrateMode: MigrateMode changes the recorded mode and nothing
// else, only when the file holds nothing of the mode it leaves: transfer
// to seamless with every player account at 0 (it names those that are
// not), seamless to transfer with nothing owed to the operator nor open
// (it names the transactions and rounds); each change is logged with who
// and when. After a move to seamless, a coup moves only its own stakes
// and winnings through the operator; moving back works.
func TestMigrateMode(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 1000)
	e.deposit("player:bob", 500)
	e.deposit(AccountHouseBank, 2000)
	bobBet := e.hold("player:bob", 500)
	e.stop()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, _, err := MigrateMode(e.path, ModeSeamless, "tester@host", now)
	wantRefusal(t, err, ModeTransfer, ModeSeamless, "player:alice: balance 1000, held 0 (minor units of EUR)",
		"player:bob: balance 500, held 500 (minor units of EUR): at stake", "Withdraw", "Nothing was changed")
	if strings.Contains(err.Error(), "house:bank") {
		t.Errorf("the house's float blocks the move: %v", err)
	}
	if info, _ := ReadMode(e.path); info.Mode != ModeTransfer || len(info.Log) != 1 {
		t.Fatalf("after the refusal: %+v", info)
	}

	// The players' money goes back to the platform; the house's float stays.
	e.start()
	e.void(bobBet)
	for acct, amount := range map[string]int64{"player:alice": 1000, "player:bob": 500} {
		if _, err := e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: e.id("w"), AccountId: acct, Amount: amount}); err != nil {
			t.Fatal(err)
		}
		e.net.Add(-amount)
	}
	e.stop()
	before := readFile(t, e.path)
	from, changed, err := MigrateMode(e.path, ModeSeamless, "tester@host", now)
	if err != nil || from != ModeTransfer || !changed {
		t.Fatalf("migrate: %v %v %v", from, changed, err)
	}
	after := readFile(t, e.path)
	if !reflect.DeepEqual(before.balances, after.balances) || before.transfers != after.transfers {
		t.Fatalf("the migration moved money:\n%+v\n%+v", before, after)
	}
	want := ModeChange{Seq: 2, Time: now, From: ModeTransfer, To: ModeSeamless, How: ModeHowMigrate, By: "tester@host"}
	if after.mode.Mode != ModeSeamless || len(after.mode.Log) != 2 || after.mode.Log[1] != want {
		t.Fatalf("mode log %+v, want %+v last", after.mode, want)
	}
	if _, changed, err := MigrateMode(e.path, ModeSeamless, "tester@host", now); changed || err != nil {
		t.Fatalf("again: %v %v", changed, err)
	}
	wantModeError(t, startIn(t, e.path, nil), e.path, ModeSeamless, ModeTransfer)

	// Seamless: one coup, the operator's credits lost for now.
	op := newFakeOp()
	op.fund("alice", 1000)
	op.fund("bob", 1000)
	op.fund("carol", 1000)
	var lose atomic.Bool
	lose.Store(true)
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		if o == opwallet.OpCredit && lose.Load() {
			return faultNotApplied
		}
		return faultNone
	})
	e.config = func(c *Config) {
		c.Operator, c.OperatorID, c.operatorBackoff, c.roundIdle = op, "casino-1", time.Millisecond, 20*time.Millisecond
	}
	e.start()
	commission := e.account(AccountCommission).GetBalance()
	bank := e.stake("player:alice", 400, coupRef("T1", "C1"))
	bet := e.stake("player:bob", 400, coupRef("T1", "C1"))
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankLoses})
	// carol's bank of the next coup is up.
	carolBank, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "carol-bank", AccountId: "player:carol", Amount: 300,
		Reference: coupRef("T1", "C2"), Purpose: walletv1.HoldPurpose_HOLD_PURPOSE_BANK})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a credit tried", func() bool { return op.count(opwallet.OpCredit) > 0 })
	e.stop()
	wantModeError(t, startIn(t, e.path, nil), e.path, ModeSeamless, ModeTransfer)
	_, _, err = MigrateMode(e.path, ModeTransfer, "tester@host", now)
	wantRefusal(t, err, ModeSeamless, ModeTransfer, "not yet acknowledged: credit of 800 (minor units of EUR) for bob in round C1",
		"round C1 of player:alice is still open (1 hold(s)", "round C2 of player:carol is still open (1 hold(s)", "player:carol: balance 300, held 300 (minor units of EUR)",
		"GetOperatorReport")

	// The credits go out, the banks come back (alice's, lost, is empty
	// but up until the table takes it down): nothing left open.
	lose.Store(false)
	e.start()
	e.void(bank)
	e.void(carolBank.GetHold())
	e.drainAll()
	_, ledger, _ := op.snapshot()
	for _, x := range ledger {
		if (x.round != "C1" && x.round != "C2") || (x.op == "credit" && x.reason == whyPayout && x.player != "bob") {
			t.Errorf("the operator saw a movement of no coup played here: %+v", x)
		}
	}
	bal, _, _ := op.snapshot()
	var total int64
	for _, b := range bal {
		total += b
	}
	if got := e.account(AccountCommission).GetBalance() - commission; total+got != 3000 || bal["bob"] != 1400 || bal["alice"] != 600 || bal["carol"] != 1000 {
		t.Fatalf("operator balances %v + commission %d, funded 3000", bal, got)
	}
	wantNoViolations(t, op)
	e.stop()

	// And back to transfer.
	if from, changed, err := MigrateMode(e.path, ModeTransfer, "tester@host", now.Add(time.Hour)); err != nil || from != ModeSeamless || !changed {
		t.Fatalf("migrate back: %v %v %v", from, changed, err)
	}
	info, err := ReadMode(e.path)
	if err != nil || info.Mode != ModeTransfer || len(info.Log) != 3 || info.Log[2].From != ModeSeamless || info.Log[2].To != ModeTransfer {
		t.Fatalf("after the move back: %+v %v", info, err)
	}
	wantModeError(t, startIn(t, e.path, op), e.path, ModeTransfer, ModeSeamless)
	e.config = nil
	e.start()
	e.deposit("player:alice", 700)
	e.wantBal("player:alice", 700, 0)
	e.audit()
}

// TestMigrateModeOfNoFile: there is no mode to change on a data dir never
// used, or a file never used; nor a mode other than the two.
func TestMigrateModeOfNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wallet.db")
	if _, _, err := MigrateMode(path, ModeSeamless, "x", time.Now()); err == nil || !strings.Contains(err.Error(), "no ledger file") {
		t.Fatalf("no file: %v", err)
	}
	e := newEnv(t)
	e.stop()
	forgetMode(t, e.path)
	if _, _, err := MigrateMode(e.path, ModeSeamless, "x", time.Now()); err == nil || !strings.Contains(err.Error(), "never been used") {
		t.Fatalf("unused file: %v", err)
	}
	if _, _, err := MigrateMode(e.path, "bogus", "x", time.Now()); err == nil {
		t.Fatal("mode bogus accepted")
	}
}

// TestMigrateModeInUse: a running service's ledger file is not migrated
// (nor is its mode read): they wait for its lock, then say it is in use.
func TestMigrateModeInUse(t *testing.T) {
	e := newEnv(t)
	e.deposit(AccountHouseBank, 100)
	if _, _, err := MigrateMode(e.path, ModeSeamless, "x", time.Now()); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Fatalf("migrate while running: %v", err)
	}
	if _, err := ReadMode(e.path); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Fatalf("mode while running: %v", err)
	}
	e.stop()
	if _, changed, err := MigrateMode(e.path, ModeSeamless, "x", time.Now()); err != nil || !changed {
		t.Fatalf("migrate once stopped: %v %v", changed, err)
	}
}
