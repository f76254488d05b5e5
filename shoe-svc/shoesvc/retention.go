package shoesvc

import (
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// retention is how long the idempotency records are kept (store.Sweep,
// Config.RequestRetention; keep 0: store.DefaultRetention, 7 days;
// negative: for ever): keep after their first save, except that the
// records of a shoe still open (OPEN or AWAITING_CUT) are kept as long as
// it is, another keep at a time. A table deals a coup's cards with
// request ids derived from the coup and may send them again however late
// while its shoe is in play: such a retry must still be answered the card
// it was dealt, never deal another. Once the shoe is closed its records
// go after keep, and a request sent again is a new request (a deal then
// answers that the shoe is closed).
func retention(keep time.Duration) store.Retention {
	return store.Retention{Keep: keep, Extend: shoeStillOpen}
}

// shoeStillOpen reports whether the record key (in tx) belongs to a shoe
// that exists and is not closed.
func shoeStillOpen(tx *bolt.Tx, key string) bool {
	id := shoeOfRecord(tx, key)
	if id == "" {
		return false
	}
	shoe := &shoev1.Shoe{}
	if err := loadShoe(tx, id, shoe); err != nil {
		return false
	}
	return shoe.GetState() != shoev1.ShoeState_SHOE_STATE_CLOSED
}

// shoeOfRecord is the id of the shoe an idempotency record belongs to
// (the keys are listed in doc.go): the shoe id in the key of a deal, cut,
// close, move or claim; the created shoe's id in the answer of a create;
// "" for any other key.
func shoeOfRecord(tx *bolt.Tx, key string) string {
	for _, prefix := range []string{"shoe/deal/", "shoe/cut/", "shoe/close/", "shoe/move/", "shoe/claim/"} {
		if rest, ok := strings.CutPrefix(key, prefix); ok {
			// A shoe id ([Config.IDPrefix] and a ULID) holds no "/".
			id, _, _ := strings.Cut(rest, "/")
			return id
		}
	}
	if !strings.HasPrefix(key, "shoe/create/") && !strings.HasPrefix(key, "shoe/create-from-order/") {
		return ""
	}
	_, answer, found := store.Get(tx, key)
	if !found {
		return ""
	}
	// CreateShoeResponse and CreateShoeFromOrderResponse both hold the shoe
	// as field 1.
	resp := &shoev1.CreateShoeResponse{}
	if err := proto.Unmarshal(answer, resp); err != nil {
		return ""
	}
	return resp.GetShoe().GetShoeId()
}
