package walletsvc

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chemmy/chemmy/services/kit/trust"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	operator = auth.Caller{Subject: "op-1", Role: auth.RoleOperator}
	tableSvc = auth.Caller{Subject: "table-svc", Role: auth.RoleService}
	auditor  = auth.Caller{Subject: "aud-1", Role: auth.RoleAuditor}
)

// env is a running wallet service with a client.
type env struct {
	t      testing.TB
	path   string
	svc    *Service
	conn   *grpc.ClientConn
	c      walletv1.WalletServiceClient
	net    atomic.Int64 // deposits - withdrawals acknowledged
	nextID atomic.Int64
	// clock, when set before start, is the service's clock.
	clock func() time.Time
	// config, when set before start, changes the service's Config.
	config func(*Config)
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *env) start() {
	e.t.Helper()
	c := Config{ListenAddr: "127.0.0.1:0", DBPath: e.path, Trust: trust.Config{Insecure: true},
		Logger: slog.New(slog.DiscardHandler), now: e.clock}
	if e.config != nil {
		e.config(&c)
	}
	svc, err := Start(context.Background(), c)
	if err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	conn, err := grpc.NewClient(svc.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	e.svc, e.conn, e.c = svc, conn, walletv1.NewWalletServiceClient(conn)
}

func (e *env) stop() {
	if e.svc == nil {
		return
	}
	_ = e.conn.Close()
	e.svc.Stop()
	if err := e.svc.Wait(); err != nil {
		e.t.Errorf("Wait: %v", err)
	}
	e.svc = nil
}

func (e *env) restart() {
	e.t.Helper()
	e.stop()
	e.start()
}

func as(c auth.Caller) context.Context { return auth.Outgoing(context.Background(), c) }

func (e *env) id(prefix string) string { return fmt.Sprintf("%s-%d", prefix, e.nextID.Add(1)) }

func (e *env) deposit(acct string, amount int64) *walletv1.DepositResponse {
	e.t.Helper()
	r, err := e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: e.id("dep"), AccountId: acct, Amount: amount})
	if err != nil {
		e.t.Fatalf("Deposit(%s, %d): %v", acct, amount, err)
	}
	e.net.Add(amount)
	return r
}

func (e *env) hold(acct string, amount int64) *walletv1.Hold {
	e.t.Helper()
	r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: acct, Amount: amount, Reference: "test"})
	if err != nil {
		e.t.Fatalf("PlaceHold(%s, %d): %v", acct, amount, err)
	}
	return r.GetHold()
}

func (e *env) account(id string) *walletv1.Account {
	e.t.Helper()
	r, err := e.c.GetAccount(as(auditor), &walletv1.GetAccountRequest{AccountId: id})
	if err != nil {
		e.t.Fatalf("GetAccount(%s): %v", id, err)
	}
	return r.GetAccount()
}

// wantBal checks an account's balance and held.
func (e *env) wantBal(id string, balance, held int64) {
	e.t.Helper()
	a := e.account(id)
	if a.GetBalance() != balance || a.GetHeld() != held || a.GetAvailable() != balance-held {
		e.t.Errorf("%s: balance %d held %d available %d, want balance %d held %d",
			id, a.GetBalance(), a.GetHeld(), a.GetAvailable(), balance, held)
	}
}

func wantErr(t testing.TB, err error, code codes.Code, reason string) {
	t.Helper()
	if status.Code(err) != code || errs.Reason(err) != reason {
		t.Fatalf("got %v (reason %q), want %s %s", err, errs.Reason(err), code, reason)
	}
	if info := errs.Info(err); info.GetDomain() != Domain {
		t.Fatalf("domain %q, want %q", info.GetDomain(), Domain)
	}
}

// ledgerState is everything in the ledger, for audits and before/after
// comparisons.
type ledgerState struct {
	balances  map[string]int64
	held      map[string]int64
	holds     map[string]*walletv1.Hold
	transfers int
}

func readLedger(t testing.TB, db *bolt.DB) ledgerState {
	t.Helper()
	st := ledgerState{balances: map[string]int64{}, held: map[string]int64{}, holds: map[string]*walletv1.Hold{}}
	err := db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketAccounts).ForEach(func(k, v []byte) error {
			b, h, err := decodeAccount(v)
			st.balances[string(k)], st.held[string(k)] = b, h
			return err
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketHolds).ForEach(func(k, v []byte) error {
			h := &walletv1.Hold{}
			st.holds[string(k)] = h
			return proto.Unmarshal(v, h)
		}); err != nil {
			return err
		}
		// Replaying the transfer log must give the balances.
		replay := map[string]int64{}
		var last uint64
		if err := tx.Bucket(bucketTransfers).ForEach(func(k, v []byte) error {
			seq := binary.BigEndian.Uint64(k)
			if len(k) != 8 || seq <= last {
				return fmt.Errorf("transfer key %x out of order", k)
			}
			last = seq
			tr := &walletv1.Transfer{}
			if err := proto.Unmarshal(v, tr); err != nil {
				return err
			}
			if tr.GetAmount() <= 0 {
				return fmt.Errorf("transfer %s amount %d", tr.GetTransferId(), tr.GetAmount())
			}
			replay[tr.GetDebitAccountId()] -= tr.GetAmount()
			replay[tr.GetCreditAccountId()] += tr.GetAmount()
			st.transfers++
			return nil
		}); err != nil {
			return err
		}
		for id, b := range st.balances {
			if replay[id] != b {
				return fmt.Errorf("%s: balance %d, transfer log gives %d", id, b, replay[id])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read ledger: %v", err)
	}
	return st
}

// audit checks the ledger's invariants: the sum of all balances is 0, the
// money in the wallet is deposits - withdrawals, held is the sum of the
// open holds, 0 <= held <= balance, only external:funding is negative, and
// the transfer log replays to the balances.
func (e *env) audit() ledgerState {
	e.t.Helper()
	st := readLedger(e.t, e.svc.db)
	var sum, inside int64
	openHeld := map[string]int64{}
	for _, h := range st.holds {
		if h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
			openHeld[h.GetAccountId()] += h.GetAmount()
		}
		if h.GetAmount() < 0 {
			e.t.Errorf("hold %s amount %d", h.GetHoldId(), h.GetAmount())
		}
	}
	for id, b := range st.balances {
		sum += b
		if !isExternal(id) {
			inside += b
			if b < 0 || st.held[id] < 0 || st.held[id] > b {
				e.t.Errorf("%s: balance %d held %d", id, b, st.held[id])
			}
		}
		if st.held[id] != openHeld[id] {
			e.t.Errorf("%s: held %d, open holds sum to %d", id, st.held[id], openHeld[id])
		}
	}
	if sum != 0 {
		e.t.Errorf("conservation: balances sum to %d, want 0", sum)
	}
	if want := e.net.Load(); inside != want {
		e.t.Errorf("money in the wallet %d, want deposits - withdrawals = %d", inside, want)
	}
	return st
}
