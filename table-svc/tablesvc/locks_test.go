package tablesvc

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestLockTableExcludesAndEmpties: many goroutines lock random keys at
// once (a few hot keys and many one-off keys); at most one holds a key at
// a time, and when all are done the table holds no entry.
func TestLockTableExcludesAndEmpties(t *testing.T) {
	var lt lockTable
	const hot = 16
	var inside [hot]atomic.Int32
	var count [hot]int // written only under the key's lock: -race checks exclusion too
	const workers, rounds = 32, 400
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				if r%2 == 0 {
					i := rand.IntN(hot)
					unlock := lt.lock(fmt.Sprintf("hot-%d", i))
					if n := inside[i].Add(1); n != 1 {
						t.Errorf("key hot-%d held by %d at once", i, n)
					}
					count[i]++
					inside[i].Add(-1)
					unlock()
					continue
				}
				unlock := lt.lock(fmt.Sprintf("once-%d-%d-%x", w, r, rand.Uint64()))
				unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, c := range count {
		total += c
	}
	if total != workers*rounds/2 {
		t.Errorf("%d hot sections ran, want %d", total, workers*rounds/2)
	}
	if n := lt.len(); n != 0 {
		t.Errorf("lock table holds %d entries after every unlock, want 0", n)
	}
}

// TestLockTableKeepsAwaitedEntry: an entry stays while a waiter is queued
// on it, the waiter gets the same lock, and the last unlock removes it.
func TestLockTableKeepsAwaitedEntry(t *testing.T) {
	var lt lockTable
	unlock := lt.lock("t1")
	got := make(chan func())
	go func() { got <- lt.lock("t1") }()
	waitFor(t, func() bool { return lt.refs("t1") == 2 }, "the second locker to queue")
	select {
	case <-got:
		t.Fatal("second locker got the lock while the first held it")
	default:
	}
	unlock()
	unlock2 := <-got
	if n := lt.len(); n != 1 {
		t.Fatalf("%d entries while the second locker holds t1, want 1", n)
	}
	unlock2()
	if n := lt.len(); n != 0 {
		t.Fatalf("%d entries after the last unlock, want 0", n)
	}
}

// TestUnknownTableIDsLeaveNoLocks: thousands of actions on tables that do
// not exist each fail TABLE_NOT_FOUND and leave no lock entry behind.
func TestUnknownTableIDsLeaveNoLocks(t *testing.T) {
	h := newHarness(t)
	const workers, perWorker = 8, 300
	var wg sync.WaitGroup
	var bad atomic.Int32
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				// A context a call: 300 calls under one 10 s deadline
				// failed on a loaded machine.
				ctx := h.as("alice")
				id := fmt.Sprintf("ghost-%d-%d-%x", w, i, rand.Uint64())
				var err error
				if i%2 == 0 {
					_, err = h.tables.JoinTable(ctx, &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
				} else {
					_, err = h.tables.LeaveTable(ctx, &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
				}
				if status.Code(err) != codes.NotFound || errs.Reason(err) != reasonTableNotFound {
					if bad.Add(1) <= 3 {
						t.Errorf("action on unknown table %s: %v, want NOT_FOUND %s", id, err, reasonTableNotFound)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := h.table.locks.len(); n != 0 {
		t.Errorf("lock table holds %d entries after %d calls on unknown tables, want 0", n, workers*perWorker)
	}
}

// refs is the number of holders and waiters of key (0 when absent).
func (lt *lockTable) refs(key string) int {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if e := lt.m[key]; e != nil {
		return e.refs
	}
	return 0
}

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
