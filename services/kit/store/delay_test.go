package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// fakeWait replaces a Committer's timer: started receives each delay asked
// for, and the returned channel fires only when the test sends on fire.
type fakeWait struct {
	started chan time.Duration
	fire    chan time.Time
}

func installFakeWait(c *Committer) *fakeWait {
	f := &fakeWait{started: make(chan time.Duration, 16), fire: make(chan time.Time)}
	c.wait = func(d time.Duration) (<-chan time.Time, func() bool) {
		f.started <- d
		return f.fire, func() bool { return true }
	}
	return f
}

func put(key byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error { return tx.Bucket(bucketThings).Put([]byte{key}, []byte{key}) }
}

// A writer alone never waits: one after another, no timer is started.
func TestCommitDelayLoneWriterNeverWaits(t *testing.T) {
	c := NewCommitter(openThings(t, "delay-lone"))
	c.delay = time.Hour
	f := installFakeWait(c)
	for i := range 5 {
		if err := c.Update(put(byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case d := <-f.started:
		t.Fatalf("a lone writer waited (%v)", d)
	default:
	}
}

// After a commit that served n writers, the next leader waits until
// n are queued (n+1 from three on while the gathers before came in time:
// groups grow with the load) and commits them together, without the
// timer firing.
func TestCommitDelayGathers(t *testing.T) {
	for _, c := range []struct{ last, steady, want int }{
		{2, growAfter, 2}, {3, growAfter, 4}, {3, growAfter - 1, 3}, {MaxGroup, growAfter, MaxGroup},
	} {
		t.Run(fmt.Sprintf("after%d-steady%d", c.last, c.steady), func(t *testing.T) {
			name := fmt.Sprintf("delay-gather-%d-%d", c.last, c.steady)
			db := openThings(t, name)
			cm := NewCommitter(db)
			cm.delay = time.Hour
			f := installFakeWait(cm)
			cm.lastGroup, cm.steady = c.last, c.steady
			before := Snapshot()[name]
			var wg sync.WaitGroup
			errs := make(chan error, c.want)
			wg.Add(1)
			go func() { defer wg.Done(); errs <- cm.Update(put(0)) }()
			if d := <-f.started; d != time.Hour { // the leader waits
				t.Fatalf("delay %v", d)
			}
			for i := 1; i < c.want; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); errs <- cm.Update(put(byte(i))) }()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			got := Snapshot()[name]
			if calls, groups := got.Calls-before.Calls, got.Groups-before.Groups; calls != uint64(c.want) || groups != 1 {
				t.Fatalf("%d functions in %d commits, want %d in 1", calls, groups, c.want)
			}
		})
	}
}

// When fewer writers come than last time, the leader commits those that
// came once the delay is over, and the next leader, having served one,
// does not wait.
func TestCommitDelayEndsAtTheDelay(t *testing.T) {
	db := openThings(t, "delay-timeout")
	c := NewCommitter(db)
	c.delay = time.Hour
	f := installFakeWait(c)
	c.lastGroup = 4
	before := Snapshot()["delay-timeout"]
	done := make(chan error, 1)
	go func() { done <- c.Update(put(1)) }()
	<-f.started
	f.fire <- time.Now()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.steady != 0 {
		t.Fatalf("after a gather that ran out of time, %d in a row counted as reached", c.steady)
	}
	if err := c.Update(put(2)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.started:
		t.Fatal("the writer after a lone commit waited")
	default:
	}
	got := Snapshot()["delay-timeout"]
	if calls, groups := got.Calls-before.Calls, got.Groups-before.Groups; calls != 2 || groups != 2 {
		t.Fatalf("%d functions in %d commits, want 2 in 2", calls, groups)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketThings).Get([]byte{1}) == nil || tx.Bucket(bucketThings).Get([]byte{2}) == nil {
			t.Error("a write is missing")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCommitDelayFromEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"0": 0, "5ms": 5 * time.Millisecond, "bogus": DefaultCommitDelay, "-1ms": DefaultCommitDelay, "1h": DefaultCommitDelay} {
		t.Setenv("CHEMMY_COMMIT_DELAY", v)
		if got := commitDelayFromEnv(); got != want {
			t.Errorf("CHEMMY_COMMIT_DELAY=%s: %v, want %v", v, got, want)
		}
	}
}
