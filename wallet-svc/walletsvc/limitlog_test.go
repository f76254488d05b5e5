package walletsvc

import (
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// TestListLimitChanges: every account's limit changes, oldest first, a
// page at a time, filtered by account and by time; the changes of a
// ledger file recorded before the log are logged once at start, in time
// order.
func TestListLimitChanges(t *testing.T) {
	clk, e := newClockedEnv(t)
	type set struct {
		acct string
		loss int64
	}
	plan := []set{{"player:alice", 500}, {"player:bob", 300}, {"player:alice", 400}, {"player:carol", 100}, {"player:bob", 200}}
	var at []time.Time
	for _, p := range plan {
		at = append(at, clk.Now())
		e.setLimits(p.acct, &walletv1.PlayerLimits{DailyLossLimit: p.loss})
		clk.Advance(time.Minute)
	}
	list := func(req *walletv1.ListLimitChangesRequest) []set {
		t.Helper()
		var got []set
		for pages := 0; ; pages++ {
			r, err := e.c.ListLimitChanges(as(auditor), req)
			if err != nil {
				t.Fatalf("ListLimitChanges(%v): %v", req, err)
			}
			if len(r.GetChanges()) > int(req.GetPageSize()) || pages > len(plan) {
				t.Fatalf("page %d: %d changes for a page size of %d", pages, len(r.GetChanges()), req.GetPageSize())
			}
			for _, ch := range r.GetChanges() {
				got = append(got, set{ch.GetAccountId(), ch.GetNewLimits().GetDailyLossLimit()})
			}
			if r.GetNextPageToken() == "" {
				return got
			}
			req.PageToken = r.GetNextPageToken()
		}
	}
	same := func(what string, got, want []set) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
	}
	same("all", list(&walletv1.ListLimitChangesRequest{PageSize: 2}), plan)
	same("bob's", list(&walletv1.ListLimitChangesRequest{PageSize: 1, AccountId: "player:bob"}), []set{plan[1], plan[4]})
	same("from the 2nd to before the 4th", list(&walletv1.ListLimitChangesRequest{PageSize: 10,
		StartTime: timestamppb.New(at[1]), EndTime: timestamppb.New(at[3])}), plan[1:3])

	_, err := e.c.ListLimitChanges(as(auditor), &walletv1.ListLimitChangesRequest{PageToken: "x"})
	wantErr(t, err, codes.InvalidArgument, "INVALID_PAGE_TOKEN")
	_, err = e.c.ListLimitChanges(as(auditor), &walletv1.ListLimitChangesRequest{StartTime: timestamppb.New(at[2]), EndTime: timestamppb.New(at[1])})
	wantErr(t, err, codes.InvalidArgument, reasonInvalidArgument)
	_, err = e.c.ListLimitChanges(as(auditor), &walletv1.ListLimitChangesRequest{AccountId: "house:commission"})
	wantErr(t, err, codes.InvalidArgument, "INVALID_ACCOUNT")
	_, err = e.c.ListLimitChanges(as(auth.Caller{Subject: "alice", Role: auth.RolePlayer}), &walletv1.ListLimitChangesRequest{})
	wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED")

	// A ledger file of a version without the log: logged at start.
	if err := e.svc.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bucketLimitChangeLog); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketLimitChangeLog); err != nil {
			return err
		}
		return tx.Bucket(bucketWallet).Delete(keyLimitChangesLogged)
	}); err != nil {
		t.Fatal(err)
	}
	e.restart()
	same("logged at start", list(&walletv1.ListLimitChangesRequest{PageSize: 3}), plan)
	e.setLimits("player:dave", &walletv1.PlayerLimits{DailyLossLimit: 50})
	same("and after", list(&walletv1.ListLimitChangesRequest{PageSize: 3}), append(plan, set{"player:dave", 50}))
}
