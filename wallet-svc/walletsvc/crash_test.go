package walletsvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// TestCrashDuringSettlements builds the wallet-svc binary, streams
// settlements at it from concurrent clients (one per table), kills it with
// SIGKILL at random moments several times, restarts it on the same file,
// and has every client retry each request with the same id until it is
// answered. Then every request is sent once more (each must return its
// first answer), the auditor's check must pass, and replaying the transfer
// log from the file must show each deposit and each coup applied exactly
// once, with the balances they imply.
func TestCrashDuringSettlements(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a process")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "wallet-svc")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/chemmy/chemmy/wallet-svc")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build wallet-svc: %v\n%s", err, out)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()

	var mu sync.Mutex
	var cmd *exec.Cmd
	start := func() {
		c := exec.Command(bin, "-listen", addr, "-data-dir", dir, "-log-level", "error", "-insecure")
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		cmd = c
		mu.Unlock()
	}
	start()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := walletv1.NewWalletServiceClient(conn)

	const tables, coups, bet, fund = 4, 40, 100, 1_000_000
	var kills atomic.Int32
	done := make(chan struct{})
	killerDone := make(chan struct{})
	go func() { // the killer
		defer close(killerDone)
		rng := rand.New(rand.NewPCG(1, 2))
		for range 4 {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(100+rng.IntN(400)) * time.Millisecond):
			}
			mu.Lock()
			_ = cmd.Process.Kill() // SIGKILL
			_ = cmd.Wait()
			mu.Unlock()
			kills.Add(1)
			start()
		}
	}()

	// retry sends call until it is answered (any answer but "not there").
	retry := func(call func(ctx context.Context) (proto.Message, error)) (proto.Message, error) {
		for {
			ctx, cancel := context.WithTimeout(as(tableSvc), 3*time.Second)
			r, err := call(ctx)
			cancel()
			switch status.Code(err) {
			case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Unknown:
				time.Sleep(20 * time.Millisecond)
				continue
			}
			return r, err
		}
	}
	type answered struct {
		call func(ctx context.Context) (proto.Message, error)
		resp proto.Message
	}
	var all [tables][]answered
	var wg sync.WaitGroup
	errc := make(chan error, tables)
	for tb := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do := func(call func(ctx context.Context) (proto.Message, error)) (proto.Message, error) {
				r, err := retry(call)
				if err != nil {
					return nil, err
				}
				all[tb] = append(all[tb], answered{call, r})
				return r, nil
			}
			op := func(ctx context.Context) context.Context { return asOn(ctx, operator) }
			banker, punter := fmt.Sprintf("player:b%d", tb), fmt.Sprintf("player:p%d", tb)
			for _, p := range []string{banker, punter} {
				req := &walletv1.DepositRequest{RequestId: "dep-" + p, AccountId: p, Amount: fund}
				if _, err := do(func(ctx context.Context) (proto.Message, error) { return c.Deposit(op(ctx), req) }); err != nil {
					errc <- err
					return
				}
			}
			bankReq := &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("t%d-bank", tb), AccountId: banker, Amount: 1000}
			r, err := do(func(ctx context.Context) (proto.Message, error) { return c.PlaceHold(ctx, bankReq) })
			if err != nil {
				errc <- err
				return
			}
			bank := r.(*walletv1.PlaceHoldResponse).GetHold()
			for i := range coups {
				hreq := &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("t%d-bet-%d", tb, i), AccountId: punter, Amount: bet}
				r, err := do(func(ctx context.Context) (proto.Message, error) { return c.PlaceHold(ctx, hreq) })
				if err != nil {
					errc <- err
					return
				}
				h := r.(*walletv1.PlaceHoldResponse).GetHold()
				sreq := &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("t%d-coup-%d", tb, i), BankHoldId: bank.GetHoldId(),
					Bets: bets(h), Outcome: bankWins, CommissionBp: 500}
				if _, err := do(func(ctx context.Context) (proto.Message, error) { return c.SettleCoup(ctx, sreq) }); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	<-killerDone
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if kills.Load() == 0 {
		t.Fatal("the service was never killed")
	}
	t.Logf("killed %d times during %d settlements", kills.Load(), tables*coups)
	// Every request again: each returns its first answer.
	for tb := range tables {
		for _, a := range all[tb] {
			r, err := retry(a.call)
			if err != nil || !proto.Equal(r, a.resp) {
				t.Fatalf("retry after the crashes: %v\n got %v\nwant %v", err, r, a.resp)
			}
		}
	}
	ar, err := retry(func(ctx context.Context) (proto.Message, error) {
		return c.AuditLedger(asOn(ctx, auditor), &walletv1.AuditLedgerRequest{})
	})
	if err != nil || !ar.(*walletv1.AuditLedgerResponse).GetBalanced() {
		t.Fatalf("audit: %v %v", err, ar)
	}
	mu.Lock()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	mu.Unlock()

	// Replay the log from the file.
	db, err := bolt.Open(filepath.Join(dir, "wallet.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := readLedger(t, db) // checks the log replays to the stored balances
	refs := map[string]int{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTransfers).ForEach(func(_, v []byte) error {
			tr := &walletv1.Transfer{}
			if err := proto.Unmarshal(v, tr); err != nil {
				return err
			}
			refs[tr.GetReference()]++
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Bank wins every coup: bet_lost 100 and commission 5 (5% of 100).
	const commission = bet * 500 / 10000
	for tb := range tables {
		for i := range coups {
			if n := refs[fmt.Sprintf("t%d-coup-%d", tb, i)]; n != 2 {
				t.Errorf("coup t%d-coup-%d: %d transfers, want 2", tb, i, n)
			}
		}
		for _, p := range []string{"b", "p"} {
			if n := refs[fmt.Sprintf("dep-player:%s%d", p, tb)]; n != 1 {
				t.Errorf("deposit of %s%d applied %d times", p, tb, n)
			}
		}
		if got, want := st.balances[fmt.Sprintf("player:b%d", tb)], int64(fund+coups*(bet-commission)); got != want {
			t.Errorf("banker %d: %d, want %d", tb, got, want)
		}
		if got, want := st.balances[fmt.Sprintf("player:p%d", tb)], int64(fund-coups*bet); got != want {
			t.Errorf("punter %d: %d, want %d", tb, got, want)
		}
	}
	if got, want := st.balances[AccountCommission], int64(tables*coups*commission); got != want {
		t.Errorf("commission %d, want %d", got, want)
	}
	if want := tables * (2 + 2*coups); st.transfers != want {
		t.Errorf("%d transfers, want %d", st.transfers, want)
	}
}

func asOn(ctx context.Context, c auth.Caller) context.Context { return auth.Outgoing(ctx, c) }
