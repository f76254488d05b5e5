package walletsvc

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds the requests committed in one transaction.
const maxGroup = 256

// committer group-commits read-write transactions without a background
// goroutine or a timer: the caller that finds no commit running becomes the
// leader, commits everything queued (its own request included) in one
// transaction, and hands leadership to the first request queued meanwhile.
// A lone request therefore commits at once; under load one fsync serves
// many requests. Like bbolt's DB.Batch, a function may run more than once
// (always in a transaction that was rolled back): it must not leak state
// from a run that returned an error or whose group was rolled back.
type committer struct {
	db      *bolt.DB
	mu      sync.Mutex
	queue   []*call
	running bool
}

type call struct {
	fn   func(*bolt.Tx) error
	err  error
	done bool
	wake chan struct{} // receives once: finished, or now the leader
}

func newCommitter(db *bolt.DB) *committer { return &committer{db: db} }

// do runs fn in a read-write transaction and returns once that
// transaction has committed (nil) or fn's changes were rolled back (fn's
// error, or the commit's).
func (c *committer) do(fn func(*bolt.Tx) error) error {
	me := &call{fn: fn, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, me)
	lead := !c.running
	c.running = true
	c.mu.Unlock()
	if !lead {
		<-me.wake
		if me.done {
			return me.err
		}
	}
	// Leader: me is queue[0], nobody else takes from the queue.
	c.mu.Lock()
	n := min(len(c.queue), maxGroup)
	group := c.queue[:n:n]
	c.queue = c.queue[n:]
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

var errGroupFailed = errors.New("group member failed")

// commit runs group in one transaction; a failing member is rerun alone
// and the rest together.
func (c *committer) commit(group []*call) {
	for len(group) > 0 {
		failed := -1
		err := c.db.Update(func(tx *bolt.Tx) error {
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
		if failed < 0 {
			for _, cl := range group {
				c.finish(cl, err)
			}
			return
		}
		bad := group[failed]
		c.finish(bad, c.db.Update(func(tx *bolt.Tx) error { return safeRun(bad.fn, tx) }))
		group = append(group[:failed:failed], group[failed+1:]...)
	}
}

func (c *committer) finish(cl *call, err error) {
	cl.err, cl.done = err, true
	cl.wake <- struct{}{}
}

// safeRun turns a panic in fn into an error so that the leader, which runs
// other requests' functions, never dies holding the leadership.
func safeRun(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return fn(tx)
}
