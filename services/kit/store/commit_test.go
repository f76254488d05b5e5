package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

var bucketThings = []byte("things")

func openThings(t testing.TB, name string) *bolt.DB {
	db, err := Open(filepath.Join(t.TempDir(), name+".db"), 1, bucketThings)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Many writers at once: every function commits exactly once, in some
// order, each seeing those committed before it; a failing one changes
// nothing and gets its own error, and does not fail the others.
func TestCommitterGroups(t *testing.T) {
	db := openThings(t, "committer-groups")
	before := Snapshot()["committer-groups"] // -count=N: earlier runs' files
	c := NewCommitter(db)
	errOdd := errors.New("odd")
	const writers = MaxGroup + 44 // more than one group can take
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketThings)
				if err := b.Put([]byte(fmt.Sprintf("w%03d", i)), []byte{1}); err != nil {
					return err
				}
				// A counter every committed function increments.
				n := uint64(0)
				if v := b.Get([]byte("count")); v != nil {
					n = binary.BigEndian.Uint64(v)
				}
				if err := b.Put([]byte("count"), binary.BigEndian.AppendUint64(nil, n+1)); err != nil {
					return err
				}
				if i%7 == 3 {
					return errOdd
				}
				if i%11 == 5 {
					panic("boom")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	want := 0
	if err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketThings)
		for i := range writers {
			present := b.Get([]byte(fmt.Sprintf("w%03d", i))) != nil
			switch {
			case i%7 == 3:
				if !errors.Is(errs[i], errOdd) || present {
					t.Errorf("writer %d: err %v, present %v; want its error and nothing stored", i, errs[i], present)
				}
			case i%11 == 5:
				if errs[i] == nil || present {
					t.Errorf("writer %d (panics): err %v, present %v", i, errs[i], present)
				}
			default:
				want++
				if errs[i] != nil || !present {
					t.Errorf("writer %d: err %v, present %v", i, errs[i], present)
				}
			}
		}
		if got := binary.BigEndian.Uint64(b.Get([]byte("count"))); got != uint64(want) {
			t.Errorf("count %d, want %d (each committed function once)", got, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n, b := Snapshot()["committer-groups"], before
	n.Commits, n.Calls, n.Groups = n.Commits-b.Commits, n.Calls-b.Calls, n.Groups-b.Groups
	if n.Calls != uint64(want) || n.Groups == 0 || n.Groups > n.Calls || n.Commits < n.Groups {
		t.Errorf("counts %+v, want %d calls", n, want)
	}
}

// A lone writer commits at once; the commit counter follows every write
// transaction, the committer's and others'.
func TestCommitCounters(t *testing.T) {
	db := openThings(t, "committer-counters")
	before := Snapshot()["committer-counters"]
	c := NewCommitter(db)
	for i := range 3 {
		if err := c.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put([]byte{byte(i)}, nil) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put([]byte("x"), nil) }); err != nil {
		t.Fatal(err)
	}
	_ = db.Update(func(tx *bolt.Tx) error { return errors.New("rolled back") })
	got := Snapshot()["committer-counters"]
	if d := got.Commits - before.Commits; d != 4 {
		t.Errorf("commits %d, want 4", d)
	}
	if got.Calls-before.Calls != 3 || got.Groups-before.Groups != 3 {
		t.Errorf("committer counts %+v", got)
	}
	if got.Fsyncs() != got.Commits*FsyncsPerCommit {
		t.Errorf("fsyncs %d", got.Fsyncs())
	}
	db.Close()
	if after := Snapshot()["committer-counters"]; after.Commits != got.Commits {
		t.Errorf("closed file: commits %d, want %d kept", after.Commits, got.Commits)
	}
}

// BenchmarkCommit: puts from many writers, one transaction each
// (db.Update), through a Committer, and through bbolt's Batch.
func BenchmarkCommit(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		for _, mode := range []string{"update", "committer", "batch"} {
			b.Run(fmt.Sprintf("%s/writers=%d", mode, writers), func(b *testing.B) {
				db := openThings(b, "bench")
				db.MaxBatchSize = writers
				c := NewCommitter(db)
				var seq sync.Mutex
				n := 0
				next := func() []byte {
					seq.Lock()
					defer seq.Unlock()
					n++
					return binary.BigEndian.AppendUint64(nil, uint64(n))
				}
				put := func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put(next(), make([]byte, 200)) }
				b.SetParallelism(max(1, writers/2))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						var err error
						switch mode {
						case "update":
							err = db.Update(put)
						case "committer":
							err = c.Update(put)
						default:
							err = db.Batch(put)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// Every writer of a file shares one committer; another file has its own.
func TestCommitterForIsShared(t *testing.T) {
	a, b := openThings(t, "shared-a"), openThings(t, "shared-b")
	if CommitterFor(a) != CommitterFor(a) || CommitterFor(a) == CommitterFor(b) {
		t.Fatal("CommitterFor: one committer per file expected")
	}
}

// A rider commits with the next writer's transaction (no commit of its
// own), again after a rolled-back try; Flush commits it when no writer
// comes; a failing rider is dropped without failing the writer.
func TestCommitterRiders(t *testing.T) {
	db := openThings(t, "committer-riders")
	c := NewCommitter(db)
	put := func(k string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put([]byte(k), []byte{1}) }
	}
	has := func(k string) bool {
		var ok bool
		_ = db.View(func(tx *bolt.Tx) error { ok = tx.Bucket(bucketThings).Get([]byte(k)) != nil; return nil })
		return ok
	}
	before := Snapshot()["committer-riders"]
	c.Ride(put("rider1"))
	if has("rider1") || c.Riding() != 1 {
		t.Fatal("a rider committed before any commit")
	}
	errNo := errors.New("no")
	if err := c.Update(func(*bolt.Tx) error { return errNo }); err != errNo {
		t.Fatalf("failing writer: %v", err)
	}
	if has("rider1") || c.Riding() != 1 {
		t.Fatal("a rider committed with a rolled-back transaction, or was dropped")
	}
	if err := c.Update(put("writer")); err != nil {
		t.Fatal(err)
	}
	if !has("rider1") || !has("writer") || c.Riding() != 0 {
		t.Fatal("the rider did not commit with the writer")
	}
	if got := Snapshot()["committer-riders"].Commits - before.Commits; got != 1 {
		t.Errorf("commits: %d, want 1 (the writer's, carrying the rider)", got)
	}
	c.Ride(func(*bolt.Tx) error { return errNo })
	c.Ride(put("rider2"))
	if err := c.Update(put("writer2")); err != nil || !has("writer2") {
		t.Fatalf("a failing rider failed the writer: %v", err)
	}
	if has("rider2") || c.Riding() != 0 {
		t.Error("the riders of a failed ride are dropped together")
	}
	c.Ride(put("rider3"))
	if err := c.Flush(); err != nil || !has("rider3") || c.Riding() != 0 {
		t.Fatalf("Flush: %v, rider committed %v", err, has("rider3"))
	}
	n := Snapshot()["committer-riders"].Commits
	if err := c.Flush(); err != nil || Snapshot()["committer-riders"].Commits != n {
		t.Errorf("Flush with no rider committed: %v", err)
	}
	// The writers' calls (the durable writes): writer, writer2, not the
	// failing one nor Flush's commit of riders alone.
	if got := Snapshot()["committer-riders"].Calls - before.Calls; got != 2 {
		t.Errorf("writer calls: %d, want 2 (Flush is not a writer)", got)
	}
}
