package tablesvc

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/store"
)

// TestRequestRecordsExpire: with a short RequestRetention table-svc's
// background sweep deletes the idempotency records of its requests
// (CreateTable's and a player's), and a request_id sent again after that
// is a new request, as documented (Config.RequestRetention): the
// CreateTable opens another table, the JoinTable seats the player again.
func TestRequestRecordsExpire(t *testing.T) {
	h := newHarness(t)
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Config{
		Trust: devMode, ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(h.dir, "table.db"),
		ShoeAddr: h.shoeSvc.Addr(), WalletAddr: h.wallet.Addr(), RetryInterval: 20 * time.Millisecond,
		Clock: h.clock.Now, RequestRetention: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.table = s
	h.tables = tablev1.NewTableServiceClient(h.dial(s.Addr()))

	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: []string{"KD", "KD", "KD", "KD"}, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	create := &tablev1.CreateTableRequest{RequestId: "create-1", HouseRules: certMoney(nil), ShoeId: sh.GetShoe().GetShoeId()}
	first, err := h.tables.CreateTable(h.as("op"), create)
	if err != nil {
		t.Fatal(err)
	}
	id := first.GetTable().GetTableId()
	join := &tablev1.JoinTableRequest{RequestId: "join-1", TableId: id, PlayerId: "alice"}
	if _, err := h.tables.JoinTable(h.as("alice"), join); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.LeaveTable(h.as("alice"), &tablev1.LeaveTableRequest{RequestId: "leave-1", TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}

	present := func(key string) (found bool) {
		_ = s.db.View(func(tx *bolt.Tx) error { _, _, found = store.Get(tx, key); return nil })
		return found
	}
	keys := []string{"CreateTable/operator/operator-1/create-1", "JoinTable/player/alice/join-1", "LeaveTable/player/alice/leave-1"}
	waitFor(t, func() bool {
		return !slices.ContainsFunc(keys, present)
	}, fmt.Sprintf("the request records %v to be swept", keys))

	// Expired request ids are new requests: this one names the first
	// table's shoe, which is taken (not the first answer again, and the
	// first table is left as it is).
	_, err = h.tables.CreateTable(h.as("op"), create)
	if status.Code(err) != codes.FailedPrecondition || errs.Reason(err) != reasonShoeUnusable {
		t.Fatalf("CreateTable sent again after its record expired: %v; want FAILED_PRECONDITION %s (a new request for a taken shoe)", err, reasonShoeUnusable)
	}
	if _, err := h.tables.GetTable(h.as("op"), &tablev1.GetTableRequest{TableId: id}); err != nil {
		t.Fatalf("the first table after the second CreateTable: %v", err)
	}
	fresh, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: "create-1"})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.GetTable().GetTableId() == id {
		t.Fatalf("a new CreateTable with the expired request id answered the first table %s", id)
	}
	v, err := h.tables.JoinTable(h.as("alice"), join)
	if err != nil {
		t.Fatal(err)
	}
	if got := seatedOf(v.GetTable()); len(got) != 1 || got[0] != "alice" {
		t.Fatalf("JoinTable sent again after its record expired: seated %v, want alice seated again", got)
	}
}

func seatedOf(v *tablev1.Table) []string {
	var out []string
	for _, st := range v.GetSeats() {
		out = append(out, st.GetPlayerId())
	}
	return out
}
