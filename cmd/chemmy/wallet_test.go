package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

const demoTokens = "../../deploy/local/tokens.yaml"

// countingOp counts every call chemmy makes to the operator's wallet.
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

// modeRig is chemmy started and stopped on one data dir in either wallet
// mode, with a reference operator wallet of its own for seamless mode.
type modeRig struct {
	t   *testing.T
	dir string
	ref *refwallet.Server
	op  *countingOp
	st  *stack.Stack
	cc  *grpc.ClientConn
}

func newModeRig(t *testing.T) *modeRig {
	t.Helper()
	secret := []byte("issue 23")
	ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(t.TempDir(), "opwallet.db"), Secret: secret,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	http, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: ref.BaseURL(), AllowInsecureHTTP: true, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	r := &modeRig{t: t, dir: t.TempDir(), ref: ref, op: &countingOp{Operator: http}}
	t.Cleanup(r.stop)
	return r
}

// start starts chemmy in mode and returns stack.Start's error.
func (r *modeRig) start(mode string) error {
	r.t.Helper()
	c := stack.Config{DataDir: r.dir, TokensFile: demoTokens, Limits: gateway.LimitConfig{Rate: -1}, Wallet: mode,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	if mode == stack.WalletSeamless {
		c.Operator = r.op
	}
	st, err := stack.Start(context.Background(), c)
	if err != nil {
		return err
	}
	cc, err := grpc.NewClient(st.GatewayAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		st.Stop()
		r.t.Fatal(err)
	}
	r.st, r.cc = st, cc
	return nil
}

func (r *modeRig) mustStart(mode string) {
	r.t.Helper()
	if err := r.start(mode); err != nil {
		r.t.Fatalf("start %s: %v", mode, err)
	}
}

func (r *modeRig) stop() {
	if r.st == nil {
		return
	}
	_ = r.cc.Close()
	r.st.Stop()
	if err := r.st.Wait(); err != nil {
		r.t.Errorf("stack stopped with: %v", err)
	}
	r.st = nil
}

func (r *modeRig) as(who string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	r.t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token")
}

func (r *modeRig) wallet() walletv1.WalletServiceClient { return walletv1.NewWalletServiceClient(r.cc) }
func (r *modeRig) table() tablev1.TableServiceClient    { return tablev1.NewTableServiceClient(r.cc) }

func (r *modeRig) account(id string) *walletv1.Account {
	r.t.Helper()
	a, err := r.wallet().GetAccount(r.as("operator"), &walletv1.GetAccountRequest{AccountId: id})
	if err != nil {
		r.t.Fatalf("GetAccount %s: %v", id, err)
	}
	return a.GetAccount()
}

// certShoe deals the player 2C 3D (5) and the bank 9H TC (9): the bank's
// natural wins the first coup (the chemin de fer walk-through's shoe).
var certShoe = []string{"2C", "9H", "3D", "TC", "2S", "9D", "3H", "TS", "4C", "3S", "5D", "5H", "KD", "KD", "KD", "KD", "KD", "KD"}

// playCoup plays examples/coup.sh's coup on a table of its own, on a
// certification shoe: alice banks 1000, bob bets 600 and carol 400; the
// bank wins (natural 9) and alice's bank, now 1950, stays up. It returns
// the table and the coup.
func (r *modeRig) playCoup(name string) (string, *tablev1.Coup) {
	t := r.t
	t.Helper()
	shoe, err := shoev1.NewShoeServiceClient(r.cc).CreateShoeFromOrder(r.as("operator"),
		&shoev1.CreateShoeFromOrderRequest{RequestId: name + "-shoe", Cards: certShoe, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := r.table().CreateTable(r.as("operator"), &tablev1.CreateTableRequest{RequestId: name + "-table", ShoeId: shoe.GetShoe().GetShoeId(),
		HouseRules: &tablev1.HouseRules{CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := tbl.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := r.table().JoinTable(r.as(p), &tablev1.JoinTableRequest{RequestId: name + "-join-" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.table().AcceptBank(r.as("alice"), &tablev1.AcceptBankRequest{RequestId: name + "-bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		p      string
		amount int64
	}{{"bob", 600}, {"carol", 400}} { // in turn from the banker's right (CF-BET-ORDER)
		if _, err := r.table().PlaceBet(r.as(b.p), &tablev1.PlaceBetRequest{RequestId: name + "-bet-" + b.p, TableId: id, PlayerId: b.p, Amount: b.amount}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := r.table().GetTable(r.as("croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		if last := got.GetTable().GetLastCoup(); got.GetTable().GetCoupsPlayed() == 1 && last.GetSettled() {
			if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || last.GetCommission() != 50 {
				t.Fatalf("the coup: %v", last)
			}
			return id, last
		}
		if time.Now().After(deadline) {
			t.Fatalf("the coup is not settled: %v", got.GetTable())
		}
	}
}

func (r *modeRig) closeTable(id string) {
	r.t.Helper()
	if _, err := r.table().CloseTable(r.as("croupier"), &tablev1.CloseTableRequest{RequestId: "close-" + id, TableId: id, Reason: "issue 23"}); err != nil {
		r.t.Fatal(err)
	}
}

// waitReported waits until chemmy's report of today has no operator
// transaction pending.
func (r *modeRig) waitReported() {
	r.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rep, err := r.wallet().GetOperatorReport(r.as("auditor"), &walletv1.GetOperatorReportRequest{Day: time.Now().UTC().Format(time.DateOnly), PageSize: 1000})
		if err != nil {
			r.t.Fatal(err)
		}
		pending := 0
		for _, x := range rep.GetTransactions() {
			if x.GetStatus() == "pending" {
				pending++
			}
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d operator transactions still pending", pending)
		}
	}
}

// wallet runs `chemmy wallet args...` and returns its exit code and
// output.
func walletCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := walletMain(args, &out, &errOut, func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })
	return code, out.String(), errOut.String()
}

func wantAll(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, got)
		}
	}
}

// TestWalletModeSwitch is issue 23 as a new user met it, in the order of
// the README and the integration guide: chemmy in transfer mode, the players funded and a coup played
// (examples/coup.sh's), then chemmy in seamless mode on the same data
// dir. That start is refused (stack.Start, and chemmy run, which starts
// nothing: no reference operator wallet, no stack), naming both modes and
// `chemmy wallet migrate`, and the operator's wallet sees no call: no
// money is moved, where the first seamless coup used to pay each
// player's whole balance out to it. Then the way through: chemmy wallet
// migrate is refused while the players hold money in the ledger, naming
// them; once the bank is back and the money withdrawn it moves the data
// dir to seamless; a coup in seamless mode moves through the operator's
// wallet only that coup's stakes (and, once the table closes, the bank
// coming back), money is conserved; seamless to transfer is refused at
// start, and by migrate while the bank is up; once it is back, migrate
// moves the data dir back to transfer, where the players are funded by
// Deposit again.
func TestWalletModeSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stack")
	}
	r := newModeRig(t)

	// 1. Transfer mode: fund the three players, play the coup.
	r.mustStart(stack.WalletTransfer)
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := r.wallet().Deposit(r.as("operator"), &walletv1.DepositRequest{RequestId: "fund-" + p, AccountId: "player:" + p, Amount: 5000}); err != nil {
			t.Fatal(err)
		}
	}
	table1, _ := r.playCoup("t1")
	want := map[string][2]int64{"player:alice": {5950, 1950}, "player:bob": {4400, 0}, "player:carol": {4600, 0}, "house:commission": {50, 0}}
	wantBalances := func(when string) {
		t.Helper()
		for id, w := range want {
			if a := r.account(id); a.GetBalance() != w[0] || a.GetHeld() != w[1] {
				t.Errorf("%s: %s balance %d held %d, want %d and %d", when, id, a.GetBalance(), a.GetHeld(), w[0], w[1])
			}
		}
	}
	wantBalances("after the transfer coup")
	r.stop()

	// 2. Seamless on the same data dir: refused, nothing moved.
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := r.ref.Fund(p, 5000); err != nil {
			t.Fatal(err)
		}
	}
	err := r.start(stack.WalletSeamless)
	if err == nil {
		t.Fatal("chemmy started in seamless mode on a transfer-mode data dir")
	}
	migrateTo := func(mode string) string { return "chemmy wallet migrate -data-dir " + r.dir + " -to " + mode }
	wantAll(t, "the refusal", err.Error(), "used in transfer mode", "asks for seamless mode", "chemmy run -wallet transfer", migrateTo("seamless"))
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // were it to start, it would stop at once
	code := runMain(ctx, []string{"-data-dir", r.dir, "-wallet", "seamless", "-tokens", demoTokens, "-listen", "127.0.0.1:0", "-http", "",
		"-metrics-addr", "", "-nats-port", "-1", "-operator-wallet-addr", "127.0.0.1:0"}, &out, &errOut)
	if code != 1 || strings.Contains(out.String(), "running") {
		t.Fatalf("chemmy run -wallet seamless: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	wantAll(t, "chemmy run", errOut.String(), "used in transfer mode", "asks for seamless mode", migrateTo("seamless"))
	if _, err := os.Stat(filepath.Join(r.dir, "operator")); !os.IsNotExist(err) {
		t.Errorf("chemmy run started its reference operator wallet before refusing: %v", err)
	}
	recs, err := r.ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	if n := r.op.n.Load(); n != 0 || len(recs) != 0 {
		t.Fatalf("the operator's wallet saw %d calls, %d transactions", n, len(recs))
	}

	// 3. migrate: refused while the players' money is in the ledger.
	code, _, stderr := walletCmd("migrate", "-data-dir", r.dir, "-to", "seamless", "-by", "tester")
	if code != 1 {
		t.Fatalf("migrate with money in the ledger: exit %d", code)
	}
	wantAll(t, "migrate's refusal", stderr, "player:alice: balance 5950, held 1950", "player:bob: balance 4400, held 0",
		"player:carol: balance 4600, held 0", "Withdraw", "Nothing was changed")
	r.mustStart(stack.WalletTransfer)
	wantBalances("after the refusals")
	r.closeTable(table1) // alice's bank comes back
	for id, w := range want {
		if strings.HasPrefix(id, "player:") {
			if _, err := r.wallet().Withdraw(r.as("operator"), &walletv1.WithdrawRequest{RequestId: "out-" + id, AccountId: id, Amount: w[0]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.stop()
	code, stdout, stderr := walletCmd("migrate", "-data-dir", r.dir, "-to", "seamless", "-by", "tester")
	if code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, stderr)
	}
	wantAll(t, "migrate", stdout, "transfer -> seamless", "no money moved", "chemmy run -data-dir "+r.dir+" -wallet seamless")
	if code, stdout, _ := walletCmd("mode", "-data-dir", r.dir); code != 0 ||
		!strings.Contains(stdout, "seamless mode") || !strings.Contains(stdout, "2026-01-02T03:04:05Z  transfer -> seamless  migrate by tester") {
		t.Fatalf("chemmy wallet mode: exit %d\n%s", code, stdout)
	}
	if n := r.op.n.Load(); n != 0 {
		t.Fatalf("the operator's wallet saw %d calls", n)
	}

	// 4. Seamless: the same coup, through the operator's wallet.
	r.mustStart(stack.WalletSeamless)
	table2, coup := r.playCoup("t2")
	r.waitReported()
	recs, err = r.ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]int64{}
	for _, rec := range recs {
		if rec.Request.RoundID != coup.GetCoupId() || rec.Kind == opwallet.OpCredit || rec.Kind == opwallet.OpRollback {
			t.Errorf("the operator's wallet saw a movement of no stake of the coup %s: %+v", coup.GetCoupId(), rec)
		}
		moved[rec.Request.PlayerID+"/"+rec.Kind] += rec.Moved
	}
	if moved["alice/debit"] != -1000 || moved["bob/debit"] != -600 || moved["carol/debit"] != -400 || len(recs) != 5 {
		t.Fatalf("the operator's transactions (3 debits, 2 round ends): %v\n%+v", moved, recs)
	}
	conserved := func(when string) {
		t.Helper()
		bals, err := r.ref.Balances()
		if err != nil {
			t.Fatal(err)
		}
		total := r.account("player:alice").GetHeld() + r.account("house:commission").GetBalance() - 50
		for _, b := range bals {
			total += b.Balance
		}
		if total != 15000 {
			t.Errorf("%s: the operator's balances + alice's bank + the coup's commission = %d, funded 15000 (%+v)", when, total, bals)
		}
	}
	conserved("after the seamless coup")
	r.stop()

	// Seamless to transfer: refused at start, and by migrate while the
	// bank is up.
	err = r.start(stack.WalletTransfer)
	if err == nil {
		t.Fatal("chemmy started in transfer mode on a seamless data dir")
	}
	wantAll(t, "the refusal", err.Error(), "used in seamless mode", "asks for transfer mode", "chemmy run -wallet seamless", migrateTo("transfer"))
	code, _, stderr = walletCmd("migrate", "-data-dir", r.dir, "-to", "transfer", "-by", "tester")
	if code != 1 {
		t.Fatalf("migrate with a bank up: exit %d", code)
	}
	wantAll(t, "migrate's refusal", stderr, "round "+coup.GetCoupId()+" of player:alice is still open", "player:alice: balance 1950, held 1950")

	// The bank comes back; then back to transfer.
	r.mustStart(stack.WalletSeamless)
	r.closeTable(table2)
	r.waitReported()
	conserved("after the bank came back")
	bals, err := r.ref.Balances()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bals {
		if w := map[string]int64{"alice": 5950, "bob": 4400, "carol": 4600}[b.PlayerID]; b.Balance != w {
			t.Errorf("the operator's %s: %d, want %d", b.PlayerID, b.Balance, w)
		}
	}
	r.stop()
	calls := r.op.n.Load()
	if code, stdout, stderr := walletCmd("migrate", "-data-dir", r.dir, "-to", "transfer", "-by", "tester"); code != 0 || !strings.Contains(stdout, "seamless -> transfer") {
		t.Fatalf("migrate back: exit %d\n%s%s", code, stdout, stderr)
	}
	r.mustStart(stack.WalletTransfer)
	want = map[string][2]int64{"player:alice": {0, 0}, "player:bob": {0, 0}, "player:carol": {0, 0}, "house:commission": {100, 0}}
	wantBalances("back in transfer mode")
	if _, err := r.wallet().Deposit(r.as("operator"), &walletv1.DepositRequest{RequestId: "fund-again", AccountId: "player:alice", Amount: 700}); err != nil {
		t.Fatal(err)
	}
	if a := r.account("player:alice"); a.GetBalance() != 700 {
		t.Fatalf("alice after a deposit: %v", a)
	}
	audit, err := r.wallet().AuditLedger(r.as("auditor"), &walletv1.AuditLedgerRequest{})
	if err != nil || !audit.GetBalanced() {
		t.Fatalf("audit: %v %v", audit.GetDiscrepancies(), err)
	}
	r.stop()
	if n := r.op.n.Load(); n != calls {
		t.Fatalf("the operator's wallet saw %d calls in transfer mode", n-calls)
	}
}

// TestWalletCommand: chemmy wallet's usage and flag errors.
func TestWalletCommand(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: chemmy wallet mode"},
		{[]string{"bogus"}, 2, "usage: chemmy wallet mode"},
		{[]string{"migrate", "-data-dir", dir}, 2, `-to ""`},
		{[]string{"migrate", "-data-dir", dir, "-to", "cash"}, 2, `-to "cash"`},
		{[]string{"migrate", "-data-dir", dir, "-to", "seamless", "extra"}, 2, "unexpected"},
		{[]string{"migrate", "-data-dir", dir, "-to", "seamless"}, 1, "no ledger file"},
		{[]string{"mode", "-data-dir", dir}, 1, "wallet.db"},
	} {
		code, _, stderr := walletCmd(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("chemmy wallet %q: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
}
