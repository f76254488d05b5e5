package tablesvc

import (
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// lastTx is the id of the last transaction committed to table-svc's file
// (one more per commit).
func (h *harness) lastTx() int {
	var id int
	_ = h.table.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	return id
}

// Idle tables whose bank offers time out in one pass are saved together:
// one commit for them all, each offer passed on with its turn_timed_out
// event as when saved alone.
func TestIdleTimeoutsSavedTogether(t *testing.T) {
	h := newHarness(t)
	const tables = 5
	ids := make([]string, tables)
	for i := range ids {
		ids[i] = h.tableWith(&tablev1.HouseRules{BankOfferTimeLimitMs: 1000}, 0, nil, "alice", "bob")
	}
	offered := make([]string, tables)
	for i, id := range ids {
		offered[i] = h.get(id).GetOfferedPlayerId()
		if offered[i] == "" {
			t.Fatalf("table %s offers the bank to nobody", id)
		}
	}
	h.clock.Advance(time.Second)
	before := h.lastTx()
	h.expire()
	if n := h.lastTx() - before; n != 1 {
		t.Errorf("%d idle timeouts took %d commits, want 1", tables, n)
	}
	for i, id := range ids {
		if got := h.get(id).GetOfferedPlayerId(); got == offered[i] || got == "" {
			t.Errorf("table %s: the bank still offered to %q (was %q)", id, got, offered[i])
		}
		timedOut := 0
		for _, ev := range h.events(id) {
			if ev.GetTurnTimedOut() != nil {
				timedOut++
			}
		}
		if timedOut != 1 {
			t.Errorf("table %s: %d turn_timed_out events, want 1", id, timedOut)
		}
	}
	// Nothing due: nothing written.
	before = h.lastTx()
	h.expire()
	if n := h.lastTx() - before; n != 0 {
		t.Errorf("a pass with no timeout due committed %d times", n)
	}
}
