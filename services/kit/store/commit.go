package store

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MaxGroup bounds the functions a Committer commits in one transaction.
const MaxGroup = 256

// Committer group-commits read-write transactions: many writers, one
// fsync. It needs no background goroutine and no timer: the caller that
// finds no commit running becomes the leader, commits everything queued
// (its own function included) in one transaction, and hands the leadership
// to the first function queued meanwhile. A lone writer therefore commits
// at once (no added latency, unlike bbolt's DB.Batch and its delay); under
// load one commit serves every writer that queued during the previous one.
//
// The functions of a group run one after another in one transaction, each
// seeing the changes of those before it, as if committed in that order.
// When one returns an error (or panics) the group's transaction is rolled
// back, that function is run again alone (its error, or its commit, is
// its own) and the others are run again together. Like DB.Batch's, a
// function may therefore run more than once, always in a transaction that
// was rolled back: it must leave nothing outside the transaction from a
// run that did not commit (assigning results that the next run assigns
// again is fine). A function must not call the Committer itself.
//
// A Committer is the only group committer of its file; other writers
// (db.Update) simply take turns with it.
//
// Under concurrent load the leader may wait a little before committing
// (see CommitDelay): when the previous commit served more than one
// writer, it waits until as many writers are queued (one more after a
// group of three or more while they keep coming), or for the delay,
// whichever comes first, so that they share its two fdatasyncs. A
// writer alone (the previous commit served one) never waits.
type Committer struct {
	db      *bolt.DB
	stats   *dbStats
	mu      sync.Mutex
	queue   []*call
	running bool
	// riders are the functions Ride queued for the next transaction.
	riders []func(*bolt.Tx) error
	// delay is the longest a leader waits for writers (0: never);
	// lastGroup the number of functions the previous commit served;
	// arrived is signalled when a writer queues while the leader waits.
	delay     time.Duration
	lastGroup int
	// steady counts the gathers that reached their count before the
	// delay since the last one that did not; a gather waits for one more
	// writer than the previous group only when there were enough.
	steady  int
	waiting bool
	arrived chan struct{}
	// wait starts the delay's timer: its channel and its Stop (newTimer;
	// tests replace it).
	wait func(time.Duration) (<-chan time.Time, func() bool)
}

// DefaultCommitDelay is the longest a leader waits for more writers
// under concurrent load (CommitDelay): 2 ms. Measured with make load at 16
// tables on a 2-core machine, it took the suite from about 14 fsyncs per
// coup to about 6, with coups per second and PlaceBet p99 no worse (the
// fdatasyncs saved cost more than the wait; docs/performance.md), and
// changed nothing at 2 or 4 tables.
const DefaultCommitDelay = 2 * time.Millisecond

// CommitDelay is the delay of the Committers made from now on: the
// environment variable CHEMMY_COMMIT_DELAY (a Go duration, "0" for none)
// when set and valid, else DefaultCommitDelay.
var CommitDelay = commitDelayFromEnv()

func commitDelayFromEnv() time.Duration {
	if v, ok := os.LookupEnv("CHEMMY_COMMIT_DELAY"); ok {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 && d <= time.Second {
			return d
		}
	}
	return DefaultCommitDelay
}

func newTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

type call struct {
	fn   func(*bolt.Tx) error
	err  error
	done bool
	wake chan struct{} // receives once: finished, or now the leader
	// flush: Flush's call, which writes nothing of its own (the riders'
	// commit): not counted as a writer's call.
	flush bool
}

// NewCommitter returns a new group committer for db. Writers that should
// share commits must share the Committer: see CommitterFor.
func NewCommitter(db *bolt.DB) *Committer {
	return &Committer{db: db, stats: statsOf(db), delay: CommitDelay, steady: growAfter, arrived: make(chan struct{}, 1), wait: newTimer}
}

var shared struct {
	mu sync.Mutex
	by map[*bolt.DB]*Committer
}

// CommitterFor returns the Committer shared by every writer of db (a
// service's handlers and its outbox relay), made on first use. db must
// have been opened with Open (the shared committer is forgotten when the
// file is found closed).
func CommitterFor(db *bolt.DB) *Committer {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if c := shared.by[db]; c != nil {
		return c
	}
	if shared.by == nil {
		shared.by = map[*bolt.DB]*Committer{}
	}
	c := NewCommitter(db)
	shared.by[db] = c
	return c
}

// forget drops the shared committer of a closed file.
func forget(db *bolt.DB) {
	shared.mu.Lock()
	delete(shared.by, db)
	shared.mu.Unlock()
}

// Update runs fn in a read-write transaction and returns once that
// transaction has committed (nil), or fn's changes were rolled back (fn's
// error, or the commit's).
func (c *Committer) Update(fn func(*bolt.Tx) error) error {
	return c.update(&call{fn: fn, wake: make(chan struct{}, 1)})
}

func (c *Committer) update(me *call) error {
	c.mu.Lock()
	c.queue = append(c.queue, me)
	lead := !c.running
	c.running = true
	if c.waiting {
		select {
		case c.arrived <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	if !lead {
		<-me.wake
		if me.done {
			return me.err
		}
	}
	// The leader: me is queue[0] and nobody else takes from the queue.
	c.gather()
	c.mu.Lock()
	n := min(len(c.queue), MaxGroup)
	group := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.lastGroup = n
	c.mu.Unlock()
	c.commit(group)
	c.mu.Lock()
	if len(c.queue) > 0 {
		c.queue[0].wake <- struct{}{}
	} else {
		c.running = false
	}
	c.mu.Unlock()
	return me.err
}

// growAfter is how many gathers in a row must reach their count before
// the delay for the next to wait for one writer more than the last group
// (after one that did not, the groups have reached the number of writers
// there are: waiting for one more would only add the delay).
const growAfter = 8

// gather is the leader's wait under concurrent load: when the previous
// commit served more than one function, it waits until as many are
// queued (one more when it served three or more and the last growAfter
// gathers reached their count in time, so that groups grow with the
// load), at most MaxGroup, or for c.delay, whichever comes first.
func (c *Committer) gather() {
	c.mu.Lock()
	want := c.lastGroup
	if want >= 3 && c.steady >= growAfter {
		want++
	}
	want = min(want, MaxGroup)
	if c.delay <= 0 || want <= 1 || len(c.queue) >= want {
		c.mu.Unlock()
		return
	}
	c.waiting = true
	c.mu.Unlock()
	timeout, stop := c.wait(c.delay)
	defer stop()
	for {
		timedOut := false
		select {
		case <-c.arrived:
		case <-timeout:
			timedOut = true
		}
		c.mu.Lock()
		if timedOut || len(c.queue) >= want {
			if len(c.queue) >= want {
				c.steady++
			} else {
				c.steady = 0
			}
			c.waiting = false
			select { // a signal sent since is for this wait
			case <-c.arrived:
			default:
			}
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

var errGroupFailed = errors.New("store: a function of the group failed")

// Ride queues fn to run in the next transaction the Committer commits,
// whoever's it is, without asking for a commit of its own: work that may
// wait (the outbox relay's removal of published messages) rides on the
// writes that come anyway. fn runs before the group's functions; it must
// be idempotent (it runs again in each try until one commits) and change
// only what no writer reads for its answer. A rider that fails is
// dropped (its transaction is tried again without it), so riders never
// fail a writer. Flush commits the riders when no writer comes.
func (c *Committer) Ride(fn func(*bolt.Tx) error) {
	c.mu.Lock()
	c.riders = append(c.riders, fn)
	c.mu.Unlock()
}

// Riding reports how many riders wait for a commit.
func (c *Committer) Riding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.riders)
}

// Flush commits the riders waiting, if any, in a transaction of their
// own (grouped with any writer's), and returns once they are committed.
func (c *Committer) Flush() error {
	if c.Riding() == 0 {
		return nil
	}
	return c.update(&call{fn: func(*bolt.Tx) error { return nil }, wake: make(chan struct{}, 1), flush: true})
}

// takeRiders returns the riders queued so far (they stay queued until
// dropRiders is called after their commit).
func (c *Committer) takeRiders() []func(*bolt.Tx) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.riders[:len(c.riders):len(c.riders)]
}

// dropRiders forgets the first n riders (committed, or failed).
func (c *Committer) dropRiders(n int) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	c.riders = append([]func(*bolt.Tx) error(nil), c.riders[n:]...)
	c.mu.Unlock()
}

// ride runs riders in tx: the first error is the rider's.
func ride(riders []func(*bolt.Tx) error, tx *bolt.Tx) error {
	for _, r := range riders {
		if err := safeRun(r, tx); err != nil {
			return err
		}
	}
	return nil
}

var errRiderFailed = errors.New("store: a rider failed")

// commit runs group in one transaction; a failing function is run again
// alone and the rest together.
func (c *Committer) commit(group []*call) {
	riders := c.takeRiders()
	for len(group) > 0 {
		failed := -1
		start := time.Now()
		err := c.db.Update(func(tx *bolt.Tx) error {
			if err := ride(riders, tx); err != nil {
				return errRiderFailed
			}
			for i, cl := range group {
				if err := safeRun(cl.fn, tx); err != nil {
					if len(group) == 1 {
						return err
					}
					failed = i
					return errGroupFailed
				}
			}
			return nil
		})
		if errors.Is(err, errRiderFailed) {
			// Dropped: the group is tried again without the riders.
			c.dropRiders(len(riders))
			riders = nil
			continue
		}
		if err == nil {
			c.dropRiders(len(riders))
			riders = nil
		}
		if failed < 0 {
			c.count(writers(group), err == nil, time.Since(start))
			for _, cl := range group {
				c.finish(cl, err)
			}
			return
		}
		bad := group[failed]
		start = time.Now()
		err = c.db.Update(func(tx *bolt.Tx) error { return safeRun(bad.fn, tx) })
		c.count(writers([]*call{bad}), err == nil, time.Since(start))
		c.finish(bad, err)
		group = append(group[:failed:failed], group[failed+1:]...)
	}
}

// writers is the number of writers' calls in group (Flush's aside).
func writers(group []*call) int {
	n := 0
	for _, cl := range group {
		if !cl.flush {
			n++
		}
	}
	return n
}

func (c *Committer) count(calls int, committed bool, took time.Duration) {
	if c.stats == nil || !committed {
		return
	}
	c.stats.calls.Add(uint64(calls))
	c.stats.groups.Add(1)
	c.stats.groupNanos.Add(uint64(took))
}

func (c *Committer) finish(cl *call, err error) {
	cl.err, cl.done = err, true
	cl.wake <- struct{}{}
}

// safeRun turns a panic in fn into an error, so that the leader, which
// runs other writers' functions, never dies holding the leadership.
func safeRun(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return fn(tx)
}
