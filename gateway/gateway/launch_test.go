package gateway

import (
	"testing"

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
