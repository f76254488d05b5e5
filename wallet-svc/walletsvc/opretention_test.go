package walletsvc

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestEndedRoundsExpire: the player round records that ended more than
// the retention ago are deleted with their index entries, on the service
// clock; an open round is kept however old, and a round ended by a
// version without the index is indexed as ended at the next start.
func TestEndedRoundsExpire(t *testing.T) {
	op := newFakeOp()
	for _, p := range []string{"alice", "bob"} {
		op.fund(p, 1000)
	}
	clock := newFrozenClock()
	// No background sweep (negative retention): the test sweeps itself.
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db"), clock: clock.now}
	e.config = func(c *Config) {
		c.Operator, c.operatorBackoff, c.RequestRetention = op, time.Millisecond, -1
	}
	e.start()
	t.Cleanup(e.stop)
	e.void(e.stake("player:alice", 100, coupRef("T1", "C1")))
	e.stake("player:bob", 100, coupRef("T1", "C1"))
	e.drain()
	aliceC1, bobC1, carolC0 := roundKey("player:alice", "C1"), roundKey("player:bob", "C1"), roundKey("player:carol", "C0")
	// A round ended by an older version: no EndedAt, not indexed.
	if err := e.svc.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketWallet).Delete(keyOpEndedIndexed); err != nil {
			return err
		}
		return putJSON(tx, bucketOpRounds, carolC0, &roundRec{Txs: 2, Staked: true, Ended: true})
	}); err != nil {
		t.Fatal(err)
	}
	clock.at.Add(int64(30 * time.Minute))
	if err := e.svc.indexEndedRounds(clock.now()); err != nil {
		t.Fatal(err)
	}
	has := func(key string) (found bool) {
		_ = e.svc.db.View(func(tx *bolt.Tx) error { found = tx.Bucket(bucketOpRounds).Get([]byte(key)) != nil; return nil })
		return found
	}
	indexed := func() (n int) {
		_ = e.svc.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketOpEnded).Stats().KeyN; return nil })
		return n
	}
	expire := func() int {
		t.Helper()
		n, more, err := e.svc.expireRounds(e.svc.now(), time.Hour, 1)
		for more && err == nil {
			var m int
			m, more, err = e.svc.expireRounds(e.svc.now(), time.Hour, 1)
			n += m
		}
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if indexed() != 2 || !has(aliceC1) || !has(bobC1) || !has(carolC0) {
		t.Fatalf("%d ended rounds indexed, want 2 (alice's and carol's)", indexed())
	}
	if n := expire(); n != 0 {
		t.Fatalf("%d rounds deleted before the retention", n)
	}
	clock.at.Add(int64(45 * time.Minute)) // alice's ended 75 min ago, carol's counts from 45 min ago
	if n := expire(); n != 1 || has(aliceC1) || !has(carolC0) || !has(bobC1) || indexed() != 1 {
		t.Fatalf("deleted %d; alice %v carol %v bob %v; %d indexed", n, has(aliceC1), has(carolC0), has(bobC1), indexed())
	}
	clock.at.Add(int64(24 * time.Hour))
	if n := expire(); n != 1 || has(carolC0) || !has(bobC1) || indexed() != 0 {
		t.Fatalf("deleted %d; carol %v bob %v; %d indexed", n, has(carolC0), has(bobC1), indexed())
	}
	wantNoViolations(t, op)
	e.wantConserved(op)
}
