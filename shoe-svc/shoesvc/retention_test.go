package shoesvc

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// TestRequestRecordsExpireOpenShoesStay: with a short RequestRetention
// (and a shard's shoe ids) the background sweep deletes the records of a
// closed shoe (a create sent again is then a new request), while those of
// a shoe still open stay as long as it is open (a deal sent again however
// late is answered the card it was dealt), and go once it is closed.
func TestRequestRecordsExpireOpenShoesStay(t *testing.T) {
	s, err := start(context.Background(), Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "shoe.db"),
		Logger: quietLogger(), Trust: trust.Config{Insecure: true}, RequestRetention: 300 * time.Millisecond, IDPrefix: "s1-"}, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if err := s.Wait(); err != nil {
			t.Errorf("wait: %v", err)
		}
	})
	c := dial(t, s.Addr())
	fromOrderAs := func(rid string, cards ...string) *shoev1.Shoe {
		resp, err := c.CreateShoeFromOrder(as(tableSvc), &shoev1.CreateShoeFromOrderRequest{RequestId: rid, Cards: cards, TestShoe: true})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetShoe()
	}
	// The open shoe's records are the oldest: the sweep meets them first.
	open := fromOrderAs("open", "9H", "TD", "KS", "2C", "3C")
	if _, err := c.ClaimShoe(as(tableSvc), &shoev1.ClaimShoeRequest{RequestId: "claim", ShoeId: open.GetShoeId(), TableId: "T1"}); err != nil {
		t.Fatal(err)
	}
	openDeal := deal(t, c, open.GetShoeId(), "coup1/card/1")
	closed := fromOrderAs("closed", "AH", "5D")
	deal(t, c, closed.GetShoeId(), "coup2/card/1")
	deal(t, c, closed.GetShoeId(), "coup2/card/2") // the last card closes the shoe
	if st := getShoe(t, c, closed.GetShoeId()).GetState(); st != shoev1.ShoeState_SHOE_STATE_CLOSED {
		t.Fatalf("the two-card shoe is %s after both deals, want closed", st)
	}

	const caller = `"service:table-svc"`
	key := func(kind, shoe, rid string) string {
		if shoe == "" {
			return "shoe/" + kind + "/" + caller + "/" + rid
		}
		return "shoe/" + kind + "/" + shoe + "/" + rid
	}
	present := func(key string) (found bool) {
		_ = s.db.View(func(tx *bolt.Tx) error { _, _, found = store.Get(tx, key); return nil })
		return found
	}
	waitGone := func(keys ...string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); slices.ContainsFunc(keys, present); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the records %v were not all swept", keys)
			}
		}
	}
	openKeys := []string{key("create-from-order", "", "open"), key("claim", open.GetShoeId(), "claim"), key("deal", open.GetShoeId(), "coup1/card/1")}
	waitGone(key("create-from-order", "", "closed"), key("deal", closed.GetShoeId(), "coup2/card/1"), key("deal", closed.GetShoeId(), "coup2/card/2"))
	for _, k := range openKeys {
		if !present(k) {
			t.Errorf("%s was swept while its shoe is open", k)
		}
	}
	// A late retry of the open shoe's deal gets its card, not the next.
	if again := deal(t, c, open.GetShoeId(), "coup1/card/1"); !proto.Equal(again, openDeal) {
		t.Fatalf("the deal sent again answered %v, first %v", again, openDeal)
	}
	if st := getShoe(t, c, open.GetShoeId()); st.GetCardsDealt() != 1 {
		t.Fatalf("the open shoe has dealt %d cards after the retry, want 1", st.GetCardsDealt())
	}
	// An expired create is a new request: another shoe.
	if again := fromOrderAs("closed", "AH", "5D"); again.GetShoeId() == closed.GetShoeId() {
		t.Fatalf("the create sent again after its record expired answered the first shoe %s", closed.GetShoeId())
	}
	// Once closed, the open shoe's records go too.
	for i := 2; i <= 5; i++ {
		deal(t, c, open.GetShoeId(), "coup1/card/"+strconv.Itoa(i))
	}
	waitGone(openKeys...)
}
