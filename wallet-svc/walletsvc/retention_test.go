package walletsvc

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// TestRequestRecordsExpireCoupsStay: with a short RequestRetention the
// wallet's background sweep deletes the records of request ids (a
// Deposit retried after that is applied again, as documented), while the
// records of coup settlements, answers and final failures, stay: a coup
// is settled exactly once however late it is retried.
func TestRequestRecordsExpireCoupsStay(t *testing.T) {
	svc, err := Start(context.Background(), Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "w.db"),
		Trust: trust.Config{Insecure: true}, Logger: slog.New(slog.DiscardHandler), RequestRetention: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(svc.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close(); svc.Stop(); _ = svc.Wait() }()
	e := &env{t: t, svc: svc, conn: conn, c: walletv1.NewWalletServiceClient(conn)}
	dep := &walletv1.DepositRequest{RequestId: "d1", AccountId: "player:p", Amount: 5000}
	if _, err := e.c.Deposit(as(operator), dep); err != nil {
		t.Fatal(err)
	}
	e.net.Add(5000)
	e.deposit("player:bank", 5000)
	_, err = e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: "w1", AccountId: "player:p", Amount: 1 << 40})
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	bank, bet := e.hold("player:bank", 1000), e.hold("player:p", 500)
	settle := &walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankLoses}
	first := e.settle(settle)
	missing := &walletv1.SettleCoupRequest{CoupId: "c2", BankHoldId: "nope", Outcome: standOff}
	_, err = e.c.SettleCoup(as(tableSvc), missing)
	wantErr(t, err, codes.NotFound, "HOLD_NOT_FOUND")

	present := func(key string) (found bool) {
		_ = svc.db.View(func(tx *bolt.Tx) error { _, _, found = store.Get(tx, key); return nil })
		return found
	}
	for deadline := time.Now().Add(10 * time.Second); present("req/d1") || present("fail/req/w1"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request records were not swept")
		}
	}
	for _, k := range []string{"coup/c1", "fail/coup/c2"} {
		if !present(k) {
			t.Errorf("%s was swept", k)
		}
	}
	// An expired request id is a new request.
	if _, err := e.c.Deposit(as(operator), dep); err != nil {
		t.Fatal(err)
	}
	e.net.Add(5000)
	e.wantBal("player:p", 10000+500, 0)
	// The coups answer as they did.
	if again := e.settle(settle); again.GetNewBank() != first.GetNewBank() || len(again.GetTransfers()) != len(first.GetTransfers()) ||
		again.GetTransfers()[0].GetTransferId() != first.GetTransfers()[0].GetTransferId() {
		t.Fatalf("coup c1 answered %v, first %v", again, first)
	}
	_, err = e.c.SettleCoup(as(tableSvc), missing)
	wantErr(t, err, codes.NotFound, "HOLD_NOT_FOUND")
	e.wantBal("player:p", 10000+500, 0)
	e.audit()
}
