package walletsvc

import (
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/types/known/durationpb"

	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/store"
)

func (e *env) cancel(id string) *walletv1.CancelPlaceHoldResponse {
	e.t.Helper()
	r, err := e.c.CancelPlaceHold(as(tableSvc), &walletv1.CancelPlaceHoldRequest{RequestId: id})
	if err != nil {
		e.t.Fatalf("CancelPlaceHold(%s): %v", id, err)
	}
	return r
}

func (e *env) placeHold(id, acct string, amount int64) (*walletv1.Hold, error) {
	r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: id, AccountId: acct, Amount: amount, Reference: coupRef("T1", "C-"+id)})
	return r.GetHold(), err
}

// TestCancelPlaceHold (transfer mode): a hold placed is voided and
// returned; a request id cancelled before its PlaceHold arrived holds
// nothing when the late PlaceHold comes (no orphan hold); a retry under a
// cancelled id is refused; the cancel is idempotent.
func TestCancelPlaceHold(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 1000)
	h, err := e.placeHold("p1", "player:alice", 300)
	if err != nil {
		t.Fatal(err)
	}
	r := e.cancel("p1")
	if r.GetHold().GetHoldId() != h.GetHoldId() || r.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("cancel of a placed hold: %v", r)
	}
	e.wantBal("player:alice", 1000, 0)
	if again := e.cancel("p1"); again.GetHold().GetHoldId() != h.GetHoldId() {
		t.Fatalf("repeat: %v", again)
	}
	_, err = e.placeHold("p1", "player:alice", 300)
	wantErr(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")

	// Cancelled before the PlaceHold arrives: the late one holds nothing.
	if r := e.cancel("p2"); r.GetHold() != nil {
		t.Fatalf("cancel of nothing: %v", r)
	}
	_, err = e.placeHold("p2", "player:alice", 300)
	wantErr(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")
	e.wantBal("player:alice", 1000, 0)

	// A raise cancelled: a late ResizeHold under its id grows nothing.
	bank := e.hold("player:alice", 100)
	e.cancel("raise-1")
	_, err = e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "raise-1", HoldId: bank.GetHoldId(), Amount: 500})
	wantErr(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")
	e.wantBal("player:alice", 1000, 100)

	// A hold resolved before the cancel is returned as it stands.
	h3, err := e.placeHold("p3", "player:alice", 50)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "v3", HoldId: h3.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	if r := e.cancel("p3"); r.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("cancel of a voided hold: %v", r)
	}
	_, err = e.c.CancelPlaceHold(as(tableSvc), &walletv1.CancelPlaceHoldRequest{})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = e.c.CancelPlaceHold(as(auth.Caller{Subject: "alice", Role: auth.RolePlayer}), &walletv1.CancelPlaceHoldRequest{RequestId: "p9"})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")
	e.audit()
}

// TestSeamlessCancelNeverDebits: with the operator down, the PlaceHold's
// debit is rolled back; cancelling it calls no operator, and a late or
// retried PlaceHold under it is refused without a new debit. A hold that
// was debited is voided by the cancel and its debit rolled back. The
// round of a cancelled stake that never stood ends at once (no retry of
// it can come): no idle wait.
func TestSeamlessCancelNeverDebits(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	e := newSeamlessAt(t, op, newFrozenClock()) // the idle wait never passes by itself
	op.setFault(func(o string, _ opwallet.Transaction) fault {
		if o == opwallet.OpDebit {
			return faultLostAnswer // applied, no answer: as a 5xx after the debit
		}
		return faultNone
	})
	_, err := e.placeHold("s1", "player:alice", 100)
	wantErr(t, err, codes.Unavailable, "OPERATOR_UNAVAILABLE")
	if r := e.cancel("s1"); r.GetHold() != nil {
		t.Fatalf("cancel: %v", r)
	}
	for range 3 { // the table's retries, the late copies
		_, err = e.placeHold("s1", "player:alice", 100)
		wantErr(t, err, codes.FailedPrecondition, "REQUEST_CANCELLED")
	}
	if n := op.count(opwallet.OpDebit); n != 1 {
		t.Fatalf("%d debits, want the one before the cancel", n)
	}
	e.drainAll()
	if op.bal("alice") != 1000 {
		t.Fatalf("operator balance %d after the rollback, want 1000", op.bal("alice"))
	}
	if st, n := op.roundEnd("alice", "C-s1"); st != opwallet.RoundCancelled || n != 1 {
		t.Fatalf("round of the cancelled stake: %q x%d, want cancelled once", st, n)
	}

	op.setFault(nil)
	h, err := e.placeHold("s2", "player:alice", 200)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.cancel("s2"); r.GetHold().GetHoldId() != h.GetHoldId() || r.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("cancel: %v", r)
	}
	e.drainAll()
	if op.bal("alice") != 1000 {
		t.Fatalf("operator balance %d after the cancel, want 1000", op.bal("alice"))
	}
	if st, n := op.roundEnd("alice", "C-s2"); st != opwallet.RoundCancelled || n != 1 {
		t.Fatalf("round of the cancelled hold: %q x%d, want cancelled once", st, n)
	}
	if n := op.count(opwallet.OpDebit); n != 2 {
		t.Fatalf("%d debits, want 2", n)
	}
	txs, _ := e.report()
	st := map[string]string{}
	for _, x := range txs {
		st[x.GetTransactionId()] = x.GetStatus()
	}
	if st["db-s2-1"] != statusRolledBack {
		t.Fatalf("statuses %v", st)
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}

// TestSeamlessCancelWaitsForTheDebit: a cancel that comes while the
// PlaceHold's debit is with the operator waits for its outcome, then
// voids the hold it made.
func TestSeamlessCancelWaitsForTheDebit(t *testing.T) {
	op, e := seamlessWith(t, "alice")
	started, release := make(chan struct{}), make(chan struct{})
	op.setFault(func(o string, tx opwallet.Transaction) fault {
		if o == opwallet.OpDebit && tx.TransactionID == "db-w1-1" {
			close(started)
			<-release
		}
		return faultNone
	})
	placed := make(chan *walletv1.Hold, 1)
	go func() {
		h, err := e.placeHold("w1", "player:alice", 100)
		if err != nil {
			t.Error(err)
		}
		placed <- h
	}()
	<-started // the PlaceHold holds w1's lock until the debit's outcome
	cancelled := make(chan *walletv1.CancelPlaceHoldResponse, 1)
	go func() {
		r, err := e.c.CancelPlaceHold(as(tableSvc), &walletv1.CancelPlaceHoldRequest{RequestId: "w1"})
		if err != nil {
			t.Error(err)
		}
		cancelled <- r
	}()
	close(release)
	h, r := <-placed, <-cancelled
	if h == nil || r.GetHold().GetHoldId() != h.GetHoldId() || r.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("placed %v, cancel %v", h, r)
	}
	e.drain()
	if op.bal("alice") != 1000 {
		t.Fatalf("operator balance %d, want 1000", op.bal("alice"))
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}

// TestCancelPlaceHoldOfAnOlderVersion: a hold placed before "placed/"
// records existed is still found (its PlaceHold's stored answer), while
// the stored answer of another method under a request id (a ResizeHold
// of a bank) is never taken for a PlaceHold's.
func TestCancelPlaceHoldOfAnOlderVersion(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", 1000)
	forget := func(id string) { // as an older version stored it
		t.Helper()
		if err := e.svc.db.Update(func(tx *bolt.Tx) error { return store.Delete(tx, placedKey(id)) }); err != nil {
			t.Fatal(err)
		}
	}
	h, err := e.placeHold("old", "player:alice", 300)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "old-bank", AccountId: "player:alice", Amount: 100,
		Reference: coupRef("T1", "C1"), Purpose: walletv1.HoldPurpose_HOLD_PURPOSE_BANK, Ttl: durationpb.New(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	bank := r.GetHold()
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "raise", HoldId: bank.GetHoldId(), Amount: 200}); err != nil {
		t.Fatal(err)
	}
	forget("old")
	forget("old-bank")
	if c := e.cancel("old"); c.GetHold().GetHoldId() != h.GetHoldId() || c.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("cancel of an older PlaceHold: %v", c)
	}
	if c := e.cancel("raise"); c.GetHold() != nil {
		t.Fatalf("a ResizeHold taken for a PlaceHold: %v", c)
	}
	e.wantBal("player:alice", 1000, 200) // the bank stands
	if c := e.cancel("old-bank"); c.GetHold().GetHoldId() != bank.GetHoldId() || c.GetHold().GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("cancel of an older bank PlaceHold with a ttl: %v", c)
	}
	e.wantBal("player:alice", 1000, 0)
}
