package tablesvc

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// TestIntentRolledBack: a hold the wallet made for a request the table
// never stored (table-svc died in between) is released, and the request
// id is answered REQUEST_ABANDONED, so no escrow is left behind; the
// intent counts in chemmy_table_escrow_intents until then.
func TestIntentRolledBack(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	// What PlaceBet does up to its save: the intent and the hold.
	req := &tablev1.PlaceBetRequest{RequestId: "cut-off", TableId: id, PlayerId: "bob", Amount: 300}
	tbl, err := h.table.load(id)
	if err != nil {
		t.Fatal(err)
	}
	c := &change{t: tbl, key: "PlaceBet/player/bob/cut-off", hash: store.Hash(req)}
	if _, _, err := h.table.hold(context.Background(), c, "table/"+id+"/bet/cut-off", "bob", 300, "x", false); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 300 {
		t.Fatalf("bob held %d", held)
	}
	wantIntents(t, h, 1)
	// Too young for the periodic pass; rolled back once old enough.
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 300 {
		t.Fatalf("rolled back within the grace time: held %d", held)
	}
	wantIntents(t, h, 1)
	h.clock.Advance(intentGrace)
	if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 0 {
		t.Fatalf("the cut-off bet is still held: %d", held)
	}
	wantIntents(t, h, 0)
	_, err = h.tables.PlaceBet(h.as("bob"), req)
	wantReason(t, err, codes.Aborted, reasonRequestAbandoned)
	// With a new request id the bet goes through.
	tbl2 := h.mustBet(id, "bob", 300)
	if b := tbl2.GetLastCoup().GetBets(); len(b) != 1 || b[0].GetAmount() != 300 {
		t.Fatalf("the new bet was not played: %v", tbl2.GetLastCoup())
	}
}

// wantIntents checks chemmy_table_escrow_intents on the service's registry.
func wantIntents(t *testing.T, h *harness, n int) {
	t.Helper()
	want := fmt.Sprintf(`
# HELP chemmy_table_escrow_intents Escrow intents whose action was not stored (a wallet hold cut off), waiting for recovery to cancel them (NaN: the store is closed).
# TYPE chemmy_table_escrow_intents gauge
chemmy_table_escrow_intents %d
`, n)
	if err := testutil.GatherAndCompare(h.table.base.Server.Registry, strings.NewReader(want), "chemmy_table_escrow_intents"); err != nil {
		t.Fatal(err)
	}
}

// walletDown is a client interceptor that, while on, answers the
// wallet's PlaceHold UNAVAILABLE without reaching it (an operator's wallet
// that does not answer, in seamless mode: every PlaceHold would be a new
// debit); it counts the PlaceHolds the table sends and keeps the last.
type walletDown struct {
	mu     sync.Mutex
	on     bool
	placed int
	last   *walletv1.PlaceHoldRequest
}

func (d *walletDown) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*walletv1.PlaceHoldRequest); ok {
		d.mu.Lock()
		d.placed++
		d.last = proto.Clone(r).(*walletv1.PlaceHoldRequest)
		on := d.on
		d.mu.Unlock()
		if on {
			return status.Error(codes.Unavailable, "the operator's wallet does not answer (test)")
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (d *walletDown) count() (int, *walletv1.PlaceHoldRequest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.placed, d.last
}

// TestIntentRecoveryNeverPlacesAHold: a bet whose hold got no answer
// leaves an intent; recovering it never asks for the hold again (in
// seamless mode each ask is a new operator debit, one per pass while the
// operator is down) but cancels the wallet request id, so that the
// PlaceHold still on its way holds nothing when it arrives.
func TestIntentRecoveryNeverPlacesAHold(t *testing.T) {
	h := newHarness(t)
	down := &walletDown{}
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		t.Fatal(err)
	}
	h.startTableRetry(-1, grpc.WithChainUnaryInterceptor(down.intercept))
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	down.mu.Lock()
	down.on = true
	down.mu.Unlock()
	if _, err := h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: "down", TableId: id, PlayerId: "bob", Amount: 300}); status.Code(err) != codes.Unavailable {
		t.Fatalf("PlaceBet with the wallet down: %v, want UNAVAILABLE", err)
	}
	asked, late := down.count()
	h.clock.Advance(intentGrace)
	for range 3 {
		if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := down.count(); n != asked {
		t.Fatalf("recovery asked the wallet for the hold %d more times", n-asked)
	}
	var left int
	_ = h.table.db.View(func(tx *bolt.Tx) error {
		left = tx.Bucket(bucketIntents).Stats().KeyN
		return nil
	})
	if left != 0 {
		t.Fatalf("%d intents left after recovery", left)
	}
	// The PlaceHold that got no answer arrives late: refused, nothing held.
	_, err := h.wallets.PlaceHold(h.asRole("table-svc", auth.RoleService), late)
	wantReason(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")
	if _, held := h.account("player:bob"); held != 0 {
		t.Fatalf("bob holds %d", held)
	}
	_, err = h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: "down", TableId: id, PlayerId: "bob", Amount: 300})
	wantReason(t, err, codes.Aborted, reasonRequestAbandoned)
}

// TestSeamlessDownOperatorIsDebitedOnce: in seamless mode, with the
// operator's wallet answering 500 to everything, one PlaceBet makes one
// debit; recovering its intent pass after pass makes no other (it used to
// ask for the hold again: a new debit each pass, applied half the time),
// and once the operator answers again the player has all his money back.
func TestSeamlessDownOperatorIsDebitedOnce(t *testing.T) {
	secret := []byte("test-secret")
	ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(t.TempDir(), "operator.db"),
		Secret: secret, Seed: 7, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections) // after wallet-svc stopped (goleak)
	op, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: ref.BaseURL(), Secret: secret, Client: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, func(c *walletsvc.Config) { c.Operator, c.OperatorID = op, "casino-1" })
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		t.Fatal(err)
	}
	h.startTableRetry(-1)
	for _, p := range []string{"alice", "bob"} {
		if _, err := ref.Fund(p, 10000); err != nil {
			t.Fatal(err)
		}
	}
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	if err := ref.SetFaults(refwallet.Faults{Error: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: "down", TableId: id, PlayerId: "bob", Amount: 300}); status.Code(err) != codes.Unavailable {
		t.Fatalf("PlaceBet with the operator down: %v, want UNAVAILABLE", err)
	}
	for range 3 {
		h.clock.Advance(intentGrace)
		if err := h.table.recoverIntents(context.Background(), intentGrace); err != nil {
			t.Fatal(err)
		}
	}
	debits := func() (n int) {
		r, err := h.wallets.GetOperatorReport(h.as("auditor"), &walletv1.GetOperatorReportRequest{OperatorId: "casino-1",
			Day: time.Now().UTC().Format(time.DateOnly)})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.GetTransactions() {
			if x.GetKind() == opwallet.OpDebit && x.GetPlayerId() == "bob" {
				n++
			}
		}
		return n
	}
	if n := debits(); n != 1 {
		t.Fatalf("bob was debited %d times for one bet, want once", n)
	}
	if err := ref.SetFaults(refwallet.Faults{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		bals, err := ref.Balances()
		if err != nil {
			t.Fatal(err)
		}
		bob := int64(-1)
		for _, b := range bals {
			if b.PlayerID == "bob" {
				bob = b.Balance
			}
		}
		if bob == 10000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob has %d at the operator, want 10000 once the rollback is through", bob)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := ref.CheckBooks(); err != nil {
		t.Fatal(err)
	}
}
