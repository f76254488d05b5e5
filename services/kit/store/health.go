package store

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// WriteCheck tells whether a service's bbolt file still takes writes, for
// its readiness (/readyz): a file on a full or failing disk, or closed,
// leaves the service unable to do its job while it still answers reads.
//
// A write transaction committed since the last check proves the file
// writable at no cost. When none was (an idle service), the check commits
// a small one of its own (meta "write-probe": the time), at most once per
// ProbeEvery (two fdatasyncs), and answers its result; until the next
// probe is due it answers the last result. A probe that has not finished
// within ProbeTimeout (a writer stuck, a disk that hangs) answers an
// error at once; it goes on in the background, and no other starts while
// it runs.
type WriteCheck struct {
	db   *bolt.DB
	path string // db's, kept: a closed DB forgets it
	now  func() time.Time

	mu      sync.Mutex
	lastTx  uint64
	checked time.Time // last probe, or last time a commit was seen
	lastErr error
	running chan struct{} // closed when the probe in flight ends; nil when none
	started time.Time     // when the probe in flight started
}

// ProbeEvery is how often an idle file is probed with a write of its own;
// ProbeTimeout how long a check waits for it.
const (
	ProbeEvery   = 10 * time.Second
	ProbeTimeout = 2 * time.Second
)

var keyWriteProbe = []byte("write-probe")

// NewWriteCheck returns the write check of db, a file opened with Open;
// now is the clock (nil: time.Now).
func NewWriteCheck(db *bolt.DB, now func() time.Time) *WriteCheck {
	if now == nil {
		now = time.Now
	}
	// Only commits from now on prove anything.
	id, _ := txid(db)
	return &WriteCheck{db: db, path: db.Path(), now: now, lastTx: id}
}

// Check returns nil when the file takes writes, else why not.
func (w *WriteCheck) Check() error {
	id, err := txid(w.db)
	if err != nil {
		return fmt.Errorf("store %s: %w", w.path, err)
	}
	now := w.now()
	w.mu.Lock()
	if id > w.lastTx && w.running == nil {
		// Someone committed since: writable.
		w.lastTx, w.checked, w.lastErr = id, now, nil
		w.mu.Unlock()
		return nil
	}
	if w.running == nil && (w.checked.IsZero() || now.Sub(w.checked) >= ProbeEvery) {
		w.running, w.started = make(chan struct{}), now
		go w.probe(w.running)
	}
	running, started, last := w.running, w.started, w.lastErr
	w.mu.Unlock()
	if running == nil {
		return last
	}
	t := time.NewTimer(ProbeTimeout)
	defer t.Stop()
	select {
	case <-running:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.lastErr
	case <-t.C:
		return fmt.Errorf("store %s: a write has not finished in %s", w.path, w.now().Sub(started).Round(time.Millisecond))
	}
}

// probe commits a write of its own and records the result.
func (w *WriteCheck) probe(done chan struct{}) {
	err := w.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if b == nil {
			return errors.New("no meta bucket")
		}
		return b.Put(keyWriteProbe, be64(w.now()))
	})
	if err != nil {
		err = fmt.Errorf("store %s is not writable: %w", w.path, err)
	}
	id, _ := txid(w.db)
	w.mu.Lock()
	w.lastErr, w.checked, w.running = err, w.now(), nil
	if err == nil && id > w.lastTx {
		w.lastTx = id
	}
	w.mu.Unlock()
	close(done)
}
