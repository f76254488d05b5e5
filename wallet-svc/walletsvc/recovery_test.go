package walletsvc

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// storedFailure returns the failure stored for the coup, or nil.
func (e *env) storedFailure(coup string) error {
	e.t.Helper()
	var out error
	_ = e.svc.db.View(func(tx *bolt.Tx) error {
		if _, b, found := store.Get(tx, failKey(coupKey(coup))); found {
			out = statusFrom(e.t, b)
		}
		return nil
	})
	return out
}

func statusFrom(t testing.TB, b []byte) error {
	t.Helper()
	st := &spb.Status{}
	if err := proto.Unmarshal(b, st); err != nil {
		t.Fatal(err)
	}
	return status.FromProto(st).Err()
}

// TestSettleCoupMismatchIsNotStored is the wallet's side of the lost trim
// reply: the table trimmed a bet from 600 to 400 (ResizeHold applied, its
// reply lost), then settled the coup with the bet at 600. The wallet
// refuses, but does not make that the coup's answer for ever: nothing is
// stored, the table may settle again under the same coup id once it has
// reconciled, with a corrected request or after resizing the hold back,
// and the holds can still be voided.
func TestSettleCoupMismatchIsNotStored(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:bank", 5000)
	e.deposit("player:p", 5000)
	bank := e.hold("player:bank", 2000)
	bet := e.hold("player:p", 600)
	trim := &walletv1.ResizeHoldRequest{RequestId: "c1/trim/" + bet.GetHoldId(), HoldId: bet.GetHoldId(), Amount: 400}
	if _, err := e.c.ResizeHold(as(tableSvc), trim); err != nil { // the reply the table never got
		t.Fatal(err)
	}
	before := e.audit()
	stale := &walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 600}}, Outcome: bankWins, CommissionBp: 500}
	for range 2 {
		_, err := e.c.SettleCoup(as(tableSvc), stale)
		wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
	}
	if err := e.storedFailure("c1"); err != nil {
		t.Fatalf("a mismatch that may still change was stored as the coup's answer: %v", err)
	}
	if after := e.audit(); after.transfers != before.transfers {
		t.Fatal("a refused settlement moved money")
	}
	// The table learns the hold's amount (its trim replayed) and settles
	// the coup with the bet at 400, under the same coup id.
	r, err := e.c.ResizeHold(as(tableSvc), trim)
	if err != nil || r.GetHold().GetAmount() != 400 {
		t.Fatalf("trim replay: %v %v", r, err)
	}
	fixed := &walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 400}}, Outcome: bankWins, CommissionBp: 500}
	if s := e.settle(fixed); s.GetNewBank() != 2000+400-20 {
		t.Fatalf("settled: %v", s)
	}
	e.settle(fixed) // the settlement is the coup's answer now
	_, err = e.c.SettleCoup(as(tableSvc), stale)
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")

	// Coup 2: the other way out, the hold resized back to what the table
	// recorded; the same request then settles.
	bet2 := e.hold("player:p", 600)
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "c2/trim", HoldId: bet2.GetHoldId(), Amount: 400}); err != nil {
		t.Fatal(err)
	}
	req2 := &walletv1.SettleCoupRequest{CoupId: "c2", BankHoldId: bank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet2.GetHoldId(), Amount: 600}}, Outcome: standOff}
	_, err = e.c.SettleCoup(as(tableSvc), req2)
	wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
	if _, err := e.c.ResizeHold(as(tableSvc), &walletv1.ResizeHoldRequest{RequestId: "c2/untrim", HoldId: bet2.GetHoldId(), Amount: 600}); err != nil {
		t.Fatal(err)
	}
	e.settle(req2)

	// Coup 3: bets over the bank while a raise is in flight; and then the
	// table gives up: the holds can be voided, after which the coup's
	// answer is final (HOLD_NOT_OPEN) and stored.
	bet3 := e.hold("player:p", 2500)
	req3 := &walletv1.SettleCoupRequest{CoupId: "c3", BankHoldId: bank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet3.GetHoldId(), Amount: 2500}}, Outcome: bankLoses}
	_, err = e.c.SettleCoup(as(tableSvc), req3)
	wantErr(t, err, codes.InvalidArgument, "BETS_EXCEED_BANK")
	if e.storedFailure("c3") != nil {
		t.Fatal("BETS_EXCEED_BANK stored")
	}
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "void/" + bet3.GetHoldId(), HoldId: bet3.GetHoldId()}); err != nil {
		t.Fatalf("the bet's escrow cannot be released: %v", err)
	}
	_, err = e.c.SettleCoup(as(tableSvc), req3)
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	if err := e.storedFailure("c3"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a final failure is stored: %v", err)
	}
	e.wantBal("player:p", 5000-400, 0)
	e.audit()
}

// TestStaleStoredCoupFailureIsForgotten: a coup whose settlement an older
// version refused for a mismatch (stored under the coup id for ever) can
// still be settled: the stale failure is dropped, whatever request it was
// stored for.
func TestStaleStoredCoupFailureIsForgotten(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:bank", 5000)
	e.deposit("player:p", 5000)
	bank := e.hold("player:bank", 1000)
	bet := e.hold("player:p", 400)
	stale := failf(codes.InvalidArgument, reasonInvalidAmount, "bet 0: amount 600 differs from hold %q's 400", bet.GetHoldId())
	if err := e.svc.db.Update(func(tx *bolt.Tx) error {
		b, err := marshal.Marshal(status.Convert(stale).Proto())
		if err != nil {
			return err
		}
		return store.Save(tx, failKey(coupKey("old")), store.Hash(&walletv1.SettleCoupRequest{CoupId: "old"}), b)
	}); err != nil {
		t.Fatal(err)
	}
	r := e.settle(&walletv1.SettleCoupRequest{CoupId: "old", BankHoldId: bank.GetHoldId(),
		Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 400}}, Outcome: bankLoses})
	if r.GetNewBank() != 600 || e.storedFailure("old") != nil {
		t.Fatalf("%v, stored failure %v", r, e.storedFailure("old"))
	}
	// A final failure stored by an older version stays the answer.
	final := failf(codes.FailedPrecondition, reasonHoldNotOpen, "hold was already resolved")
	if err := e.svc.db.Update(func(tx *bolt.Tx) error {
		b, err := marshal.Marshal(status.Convert(final).Proto())
		if err != nil {
			return err
		}
		return store.Save(tx, failKey(coupKey("older")), store.Hash(&walletv1.SettleCoupRequest{CoupId: "older"}), b)
	}); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "older", BankHoldId: bank.GetHoldId(), Outcome: standOff})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	e.audit()
}

// TestHouseBankShortIsNotStored: a punto banco coup house:bank cannot pay
// is refused without storing it; once the house is funded the same
// settlement goes through.
func TestHouseBankShortIsNotStored(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:q", 10000)
	h := e.hold("player:q", 1000)
	req := &walletv1.SettlePuntoBancoRequest{CoupId: "pb1", Outcome: walletv1.PuntoBancoOutcome_PUNTO_BANCO_OUTCOME_TIE,
		Bets: []*walletv1.PuntoBancoBet{{HoldId: h.GetHoldId(), Amount: 1000, Type: walletv1.PuntoBancoBetType_PUNTO_BANCO_BET_TYPE_TIE}}}
	_, err := e.c.SettlePuntoBanco(as(tableSvc), req)
	wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	e.deposit(AccountHouseBank, 8000)
	r, err := e.c.SettlePuntoBanco(as(tableSvc), req)
	if err != nil || r.GetHouseNet() != -8000 {
		t.Fatalf("%v %v", r, err)
	}
	e.wantBal("player:q", 18000, 0)
	e.audit()
}
