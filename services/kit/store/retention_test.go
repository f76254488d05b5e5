package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at makes Save see the clock at t for the rest of the test.
func at(t *testing.T, when time.Time) {
	t.Helper()
	old := now
	now = func() time.Time { return when }
	t.Cleanup(func() { now = old })
}

func openTest(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "s.db"), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var hashA = Hash(wrapperspb.String("a"))

// expire deletes the records saved before cutoff, batch at a time.
func expire(db *bolt.DB, cutoff time.Time, batch int, forever func(string) bool) (int, bool, error) {
	return Expire(db, cutoff.Add(time.Hour), Retention{Keep: time.Hour, Batch: batch, Forever: forever})
}

func save(t *testing.T, db *bolt.DB, keys ...string) {
	t.Helper()
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, k := range keys {
			if err := Save(tx, k, hashA, []byte("resp-"+k)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// present lists which of keys still have a record.
func present(t *testing.T, db *bolt.DB, keys ...string) string {
	t.Helper()
	var out []string
	_ = db.View(func(tx *bolt.Tx) error {
		for _, k := range keys {
			if _, found, err := Lookup(tx, k, hashA); err != nil {
				t.Fatal(err)
			} else if found {
				out = append(out, k)
			}
		}
		return nil
	})
	return strings.Join(out, ",")
}

// TestExpireDeletesOnlyOldRecords: records first saved before the cutoff
// go, younger ones and those kept for ever stay; saving a key again does
// not extend its life.
func TestExpireDeletesOnlyOldRecords(t *testing.T) {
	db := openTest(t)
	at(t, t0)
	save(t, db, "old1", "old2", "keep/1")
	at(t, t0.Add(2*24*time.Hour))
	save(t, db, "young", "old1") // old1 saved again: still as old as its first save
	forever := func(k string) bool { return strings.HasPrefix(k, "keep/") }
	n, more, err := expire(db, t0.Add(24*time.Hour), 100, forever)
	if err != nil || n != 2 || more {
		t.Fatalf("Expire: %d deleted, more %v, %v", n, more, err)
	}
	all := []string{"old1", "old2", "keep/1", "young"}
	if got := present(t, db, all...); got != "keep/1,young" {
		t.Fatalf("left %q", got)
	}
	// The kept record left the index: later sweeps do not visit it again.
	if n, _, _ := expire(db, t0.Add(30*24*time.Hour), 100, forever); n != 1 {
		t.Fatalf("second sweep deleted %d, want 1 (young)", n)
	}
	if got := present(t, db, all...); got != "keep/1" {
		t.Fatalf("left %q", got)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketExpiry).Cursor().First(); k != nil {
			t.Errorf("index entry left: %x", k)
		}
		return nil
	})
}

// TestExpireInSmallBatches: one call deletes at most batch records and
// says whether more are due.
func TestExpireInSmallBatches(t *testing.T) {
	db := openTest(t)
	at(t, t0)
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	save(t, db, keys...)
	var calls, total int
	for more := true; more; calls++ {
		n, m, err := expire(db, t0.Add(time.Second), 3, nil)
		if err != nil || n > 3 {
			t.Fatalf("batch: %d, %v", n, err)
		}
		total, more = total+n, m
	}
	if total != 10 || calls != 4 || present(t, db, keys...) != "" {
		t.Fatalf("%d deleted in %d calls; left %q", total, calls, present(t, db, keys...))
	}
}

// TestDeleteThenSaveAgain: a key deleted and saved again lives from its
// new save, not the old one.
func TestDeleteThenSaveAgain(t *testing.T) {
	db := openTest(t)
	at(t, t0)
	save(t, db, "k")
	if err := db.Update(func(tx *bolt.Tx) error { return Delete(tx, "k") }); err != nil {
		t.Fatal(err)
	}
	at(t, t0.Add(48*time.Hour))
	save(t, db, "k")
	if n, _, err := expire(db, t0.Add(24*time.Hour), 10, nil); n != 0 || err != nil || present(t, db, "k") != "k" {
		t.Fatalf("the new record was expired by its old time: %d %v", n, err)
	}
}

// TestLegacyRecordsAreIndexed: records written before the index existed
// are indexed (as if saved at the first sweep) in batches, and then
// expire like the others.
func TestLegacyRecordsAreIndexed(t *testing.T) {
	db := openTest(t)
	var keys []string
	if err := db.Update(func(tx *bolt.Tx) error {
		for i := range 7 {
			k := fmt.Sprintf("legacy%d", i)
			keys = append(keys, k)
			if err := tx.Bucket(bucketRequests).Put([]byte(k), append(append([]byte(nil), hashA...), 'x')); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Delete(keyIndexed) // a file from before the index
	}); err != nil {
		t.Fatal(err)
	}
	at(t, t0)
	save(t, db, "new") // indexed by Save, and not again
	calls := 0
	for more := true; more; calls++ {
		var err error
		if more, err = IndexLegacy(db, t0.Add(time.Hour), 3); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 3 {
		t.Errorf("%d calls to index 8 records by 3", calls)
	}
	if more, err := IndexLegacy(db, t0.Add(time.Hour), 3); more || err != nil {
		t.Fatalf("after done: %v %v", more, err)
	}
	if n, _, _ := expire(db, t0.Add(time.Minute), 100, nil); n != 1 {
		t.Fatalf("only the new record is older than its index time: deleted %d", n)
	}
	if n, _, _ := expire(db, t0.Add(2*time.Hour), 100, nil); n != 7 || present(t, db, keys...) != "" {
		t.Fatalf("legacy records: deleted %d, left %q", n, present(t, db, keys...))
	}
}

// TestSweepRuns: the background sweep deletes expired records and stops
// with its context; a negative retention keeps everything.
func TestSweepRuns(t *testing.T) {
	db := openTest(t)
	at(t, time.Now().Add(-2*time.Hour))
	save(t, db, "a", "b", "coup/1")
	at(t, time.Now())
	save(t, db, "c")
	if got := (Retention{}).WithDefaults(); got.Keep != 7*24*time.Hour || got.Batch != DefaultSweepBatch || got.Every != time.Minute {
		t.Errorf("defaults: %+v", got)
	}
	done := make(chan struct{})
	Sweep(context.Background(), db, Retention{Keep: -1}, nil) // returns at once
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		Sweep(ctx, db, Retention{Keep: time.Hour, Every: 10 * time.Millisecond, Batch: 1,
			Forever: func(k string) bool { return strings.HasPrefix(k, "coup/") }}, nil)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for present(t, db, "a", "b", "coup/1", "c") != "coup/1,c" {
		if time.Now().After(deadline) {
			t.Fatalf("not swept: %q", present(t, db, "a", "b", "coup/1", "c"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestGetAndDelete(t *testing.T) {
	db := openTest(t)
	save(t, db, "k")
	_ = db.View(func(tx *bolt.Tx) error {
		h, resp, found := Get(tx, "k")
		if !found || string(h) != string(hashA) || string(resp) != "resp-k" {
			t.Errorf("Get: %x %q %v", h, resp, found)
		}
		if _, _, found := Get(tx, "nope"); found {
			t.Error("Get of a missing key found it")
		}
		return nil
	})
	if err := db.Update(func(tx *bolt.Tx) error { return Delete(tx, "k") }); err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketExpiry).Cursor().First(); k != nil || tx.Bucket(bucketSaved).Get([]byte("k")) != nil {
			t.Error("Delete left index entries")
		}
		return nil
	})
	if present(t, db, "k") != "" {
		t.Error("Delete left the record")
	}
}

// TestExtendKeepsWhatIsStillNeeded: a record Extend keeps is indexed again
// as saved at the sweep, and expires a retention later unless kept again.
func TestExtendKeepsWhatIsStillNeeded(t *testing.T) {
	db := openTest(t)
	at(t, t0)
	save(t, db, "shoe/open/1", "shoe/closed/1")
	var asked []string
	r := Retention{Keep: 24 * time.Hour, Extend: func(tx *bolt.Tx, key string) bool {
		if tx.Bucket(bucketRequests).Get([]byte(key)) == nil {
			t.Errorf("Extend(%s) cannot read the record", key)
		}
		asked = append(asked, key)
		return strings.HasPrefix(key, "shoe/open/")
	}}
	if n, more, err := Expire(db, t0.Add(25*time.Hour), r); n != 1 || more || err != nil {
		t.Fatalf("first sweep: %d %v %v", n, more, err)
	}
	if got := present(t, db, "shoe/open/1", "shoe/closed/1"); got != "shoe/open/1" {
		t.Fatalf("left %q", got)
	}
	if n, _, _ := Expire(db, t0.Add(48*time.Hour), r); n != 0 || len(asked) != 2 {
		t.Fatalf("the kept record came due again too early: %d deleted, asked %v", n, asked)
	}
	r.Extend = nil
	if n, _, _ := Expire(db, t0.Add(50*time.Hour), r); n != 1 || present(t, db, "shoe/open/1") != "" {
		t.Fatalf("a retention after it was kept: %d deleted", n)
	}
	if n, _, _ := Expire(db, t0.Add(500*time.Hour), Retention{Keep: -1}); n != 0 {
		t.Fatal("a negative retention deleted something")
	}
}
