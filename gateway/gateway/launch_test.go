package gateway

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoregistry"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestSessionBoundToItsTable: a caller of a launch session bound to a
// table acts at that table only; a request naming no table is his as
// before, and a session of the lobby ("") goes anywhere.
func TestSessionBoundToItsTable(t *testing.T) {
	rules, err := defaultPolicy().compile(protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	bob := auth.Caller{Subject: "bob", Role: auth.RolePlayer, Session: "ls-1"}
	bet := rules["/chemmy.table.v1.TableService/PlaceBet"]
	get := rules["/chemmy.table.v1.TableService/GetTable"]
	acct := rules["/chemmy.wallet.v1.WalletService/GetAccount"]
	for _, c := range []struct {
		name  string
		r     compiledRule
		table string
		msg   any
		ok    bool
	}{
		{"his table", bet, "T1", &tablev1.PlaceBetRequest{TableId: "T1", PlayerId: "bob"}, true},
		{"another table", bet, "T1", &tablev1.PlaceBetRequest{TableId: "T2", PlayerId: "bob"}, false},
		{"another table's view", get, "T1", &tablev1.GetTableRequest{TableId: "T2"}, false},
		{"the lobby", get, "", &tablev1.GetTableRequest{TableId: "T2"}, true},
		{"no table named", acct, "T1", &walletv1.GetAccountRequest{AccountId: "player:bob"}, true},
	} {
		err := c.r.checkSelf(bob, c.table, c.msg)
		if c.ok != (err == nil) {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && (status.Code(err) != codes.PermissionDenied || errs.Reason(err) != ReasonSessionOtherTable) {
			t.Errorf("%s: %v, want PERMISSION_DENIED %s", c.name, err, ReasonSessionOtherTable)
		}
	}
}

// TestRevokedSessionEndsItsWatch: a WatchTable stream opened with a
// game-launch session token ends UNAUTHENTICATED SESSION_EXPIRED once
// the session is revoked (checked again every launchRecheck), instead of
// showing the table to a player the operator logged out.
func TestRevokedSessionEndsItsWatch(t *testing.T) {
	saved := launchRecheck
	launchRecheck = 20 * time.Millisecond
	t.Cleanup(func() { launchRecheck = saved })
	e := startEnv(t)
	e.table.holdWatch.Store(true)
	const token = LaunchTokenPrefix + "bob-at-t1"
	watch, err := tablev1.NewTableServiceClient(e.conn).WatchTable(e.as(token), &tablev1.WatchTableRequest{TableId: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetTable().GetTableId() != "t1" {
		t.Fatalf("first message: %v, %v", m, err)
	}
	e.wallet.revoke(token)
	_, err = watch.Recv()
	if status.Code(err) != codes.Unauthenticated || errs.Reason(err) != ReasonSessionExpired {
		t.Fatalf("the watch ended with %v, want UNAUTHENTICATED %s", err, ReasonSessionExpired)
	}
}
