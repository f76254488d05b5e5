package walletsvc

import (
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// A settlement with release_bank_hold where the bank loses (RULES.md
// CF-LOSE: the bank passes) releases what is left of the bank hold in its
// own transaction: one durable write for the coup's money and the
// outgoing bank, no VoidHold after; the banker's remainder is available,
// the hold VOIDED, the books balanced. A retry (with or without the flag)
// answers the same; a bank that wins keeps its hold open.
func TestSettleCoupReleasesLostBank(t *testing.T) {
	const name = "wallet-release" // this test's file: its own counters
	e := &env{t: t, path: filepath.Join(t.TempDir(), name+".db")}
	e.start()
	t.Cleanup(e.stop)
	e.deposit("player:b", 1000)
	e.deposit("player:x", 500)
	bank := e.hold("player:b", 1000)
	bet := e.hold("player:x", 400)
	req := &walletv1.SettleCoupRequest{CoupId: "c1", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankLoses,
		CommissionBp: 500, ReleaseBankHold: true}
	before := store.Snapshot()[name]
	r := e.settle(req)
	if got := store.Snapshot()[name].Calls - before.Calls; got != 1 {
		t.Errorf("durable writes: %d, want 1", got)
	}
	// The bank pays 400 and keeps 600, released: b 1000-400 = 600, none held.
	if !r.GetBankHoldReleased() || r.GetNewBank() != 600 || r.GetBankerNet() != -400 || r.GetBankerStake() != nil {
		t.Fatalf("settlement %v", r)
	}
	e.wantBal("player:b", 600, 0)
	e.wantBal("player:x", 900, 0)
	if h := readLedger(t, e.svc.db).holds[bank.GetHoldId()]; h.GetState() != walletv1.HoldState_HOLD_STATE_VOIDED {
		t.Fatalf("bank hold %v; want VOIDED", h)
	}
	for _, again := range []bool{true, false} {
		retry := proto.CloneOf(req)
		retry.ReleaseBankHold = again
		if r2 := e.settle(retry); !proto.Equal(r2, r) {
			t.Errorf("retry (release %v): %v, want %v", again, r2, r)
		}
	}
	_, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "void/" + bank.GetHoldId(), HoldId: bank.GetHoldId()})
	wantErr(t, err, codes.FailedPrecondition, "HOLD_NOT_OPEN")
	e.wantBal("player:b", 600, 0)
	e.audit()

	// A bank that wins is held (CF-HOLD): the flag changes nothing.
	bank2 := e.hold("player:b", 600)
	r = e.settle(&walletv1.SettleCoupRequest{CoupId: "c2", BankHoldId: bank2.GetHoldId(), Bets: bets(e.hold("player:x", 100)),
		Outcome: bankWins, CommissionExempt: true, ReleaseBankHold: true})
	if r.GetBankHoldReleased() || r.GetNewBank() != 700 {
		t.Fatalf("bank wins: %v", r)
	}
	e.wantBal("player:b", 700, 700)
	e.audit()
}
