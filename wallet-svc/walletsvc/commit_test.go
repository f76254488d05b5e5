package walletsvc

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Group commit: failing and panicking members leave no trace, the others
// all commit, whatever groups they fall into.
func TestCommitterIsolatesFailures(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bucket := []byte("b")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		t.Fatal(err)
	}
	c := newCommitter(db)
	const n = 300
	errBad := errors.New("bad")
	results := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = c.do(func(tx *bolt.Tx) error {
				b := tx.Bucket(bucket)
				// Write first, then fail: the write must vanish.
				if err := b.Put(fmt.Appendf(nil, "k%03d", i), []byte("v")); err != nil {
					return err
				}
				switch i % 7 {
				case 3:
					return errBad
				case 5:
					panic("boom")
				}
				// Count successes in the same transaction.
				v := b.Get([]byte("count"))
				var cnt int
				if v != nil {
					fmt.Sscan(string(v), &cnt)
				}
				return b.Put([]byte("count"), fmt.Append(nil, cnt+1))
			})
		})
	}
	wg.Wait()
	want := 0
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for i := range n {
			got := b.Get(fmt.Appendf(nil, "k%03d", i)) != nil
			switch i % 7 {
			case 3:
				if !errors.Is(results[i], errBad) || got {
					t.Errorf("%d: err %v, written %v", i, results[i], got)
				}
			case 5:
				if results[i] == nil || got {
					t.Errorf("%d: err %v, written %v", i, results[i], got)
				}
			default:
				want++
				if results[i] != nil || !got {
					t.Errorf("%d: err %v, written %v", i, results[i], got)
				}
			}
		}
		if v := string(b.Get([]byte("count"))); v != fmt.Sprint(want) {
			t.Errorf("count %s, want %d", v, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
