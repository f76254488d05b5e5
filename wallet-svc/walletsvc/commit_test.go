package walletsvc

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// Concurrent requests are group-committed by the file's shared
// store.Committer, which counts them (chemmy_store_group_*{db="wallet"}).
// A request that fails, finally (its failure stored, in the group) or not
// (rolled back: the group runs again without it), never fails or undoes
// another; a request sent twice at once is applied once; a request whose
// group was rolled back is applied once, not twice.
func TestGroupCommitIsolatesRequests(t *testing.T) {
	const name = "wallet-groups" // this test's file: its own counters
	e := &env{t: t, path: filepath.Join(t.TempDir(), name+".db")}
	e.start()
	t.Cleanup(e.stop)
	e.deposit("player:bank", 1000)
	e.deposit("player:p", 100)
	e.deposit("player:d", 10)
	bank := e.hold("player:bank", 1000)
	bet := e.hold("player:p", 100)

	const n = 300 // more than store.MaxGroup
	before := store.Snapshot()[name]
	errs := make([]error, n)
	resps := make([]proto.Message, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			switch i % 6 {
			case 0, 1, 3, 4: // deposits, each request id sent twice at once
				var r *walletv1.DepositResponse
				r, err = e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: fmt.Sprintf("group-dep-%d", i/3), AccountId: "player:d", Amount: 10})
				resps[i] = r
			case 2: // a final failure: stored in the group
				_, err = e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: fmt.Sprintf("wd-%d", i), AccountId: "player:d", Amount: 1_000_000})
			case 5: // not final (INVALID_AMOUNT): rolls its group back
				_, err = e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("c%d", i), BankHoldId: bank.GetHoldId(),
					Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 50}}, Outcome: bankWins})
			}
			errs[i] = err
		})
	}
	wg.Wait()
	deposits := 0
	for i, err := range errs {
		switch i % 6 {
		case 0, 3:
			deposits++
			if err != nil || errs[i+1] != nil {
				t.Fatalf("deposit %d: %v / %v", i/3, err, errs[i+1])
			}
			if !proto.Equal(resps[i], resps[i+1]) {
				t.Errorf("deposit %d sent twice: %v, then %v", i/3, resps[i], resps[i+1])
			}
		case 2:
			wantErr(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
		case 5:
			wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
			if err := e.storedFailure(fmt.Sprintf("c%d", i)); err != nil {
				t.Errorf("c%d: a failure that is not final was stored: %v", i, err)
			}
		}
	}
	e.net.Add(int64(deposits) * 10)
	e.wantBal("player:d", 10+int64(deposits)*10, 0)
	e.wantBal("player:p", 100, 100)
	e.wantBal("player:bank", 1000, 1000)

	// Every committed request was one call of the shared committer: the
	// deposits (twice each), the stored withdrawal failures; the rolled
	// back settlements were not committed.
	got := store.Snapshot()[name]
	calls, groups := got.Calls-before.Calls, got.Groups-before.Groups
	if want := uint64(n / 6 * 5); calls != want || groups == 0 || groups > calls {
		t.Errorf("committer counts: %d calls in %d groups, want %d calls", calls, groups, want)
	}
	t.Logf("%d calls in %d groups", calls, groups)

	// A withdrawal's stored failure is its answer; the coup left nothing
	// behind and settles afresh once its bet is right.
	_, err := e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: "wd-2", AccountId: "player:d", Amount: 1})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	e.settle(&walletv1.SettleCoupRequest{CoupId: "c5", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankWins})
	e.wantBal("player:p", 0, 0)
	e.wantBal("player:bank", 1100, 1100)
	e.audit()
}
