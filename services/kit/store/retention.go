package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Defaults of Retention.
const (
	// DefaultRetention is how long an idempotency record is kept after its
	// first Save: 7 days. Clients must not retry a request older than this.
	DefaultRetention = 7 * 24 * time.Hour
	// DefaultSweepInterval is how often Sweep looks for expired records.
	DefaultSweepInterval = time.Minute
	// DefaultSweepBatch is the most records one sweep transaction deletes.
	DefaultSweepBatch = 256
	// sweepPause separates two batches of one sweep, so that the
	// service's own writers get the lock in between.
	sweepPause = 5 * time.Millisecond
)

// Retention says how long a service keeps its idempotency records.
type Retention struct {
	// Keep is how long a record is kept after its first Save; 0:
	// DefaultRetention (7 days); negative: for ever (Sweep returns at once).
	Keep time.Duration
	// Every is how often Sweep runs; 0: DefaultSweepInterval (1 minute),
	// or a quarter of Keep when that is shorter.
	Every time.Duration
	// Batch is the most records deleted (or indexed) in one write
	// transaction; 0: DefaultSweepBatch (256).
	Batch int
	// Forever reports the keys that must be kept for ever whatever their
	// age (an exactly-once guarantee that outlives any client's retries);
	// nil: none. Their records stay; only their index entries go.
	Forever func(key string) bool
	// Extend, when not nil, is asked (in the sweep's write transaction,
	// which it may read) about each record due that Forever does not
	// keep: true keeps it for another Keep, counted from now (e.g. the
	// records of a shoe still open). It must be quick.
	Extend func(tx *bolt.Tx, key string) bool
}

// WithDefaults fills the zero fields of r.
func (r Retention) WithDefaults() Retention {
	if r.Keep == 0 {
		r.Keep = DefaultRetention
	}
	if r.Every <= 0 {
		r.Every = DefaultSweepInterval
		if r.Keep > 0 {
			r.Every = min(r.Every, max(r.Keep/4, 10*time.Millisecond))
		}
	}
	if r.Batch <= 0 {
		r.Batch = DefaultSweepBatch
	}
	return r
}

// now is the clock of Save (a variable for the tests).
var now = time.Now

var indexDone = []byte{1}

func be64(t time.Time) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())) }

func bucket(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	if b := tx.Bucket(name); b != nil {
		return b, nil
	}
	return tx.CreateBucketIfNotExists(name)
}

// index records at as the time key was first saved, unless it has one.
func index(tx *bolt.Tx, k []byte, at time.Time) error {
	saved, err := bucket(tx, bucketSaved)
	if err != nil {
		return err
	}
	if saved.Get(k) != nil {
		return nil
	}
	exp, err := bucket(tx, bucketExpiry)
	if err != nil {
		return err
	}
	t := be64(at)
	if err := saved.Put(k, t); err != nil {
		return err
	}
	return exp.Put(append(t, k...), nil)
}

// unindex drops key's index entries (the record is not touched).
func unindex(tx *bolt.Tx, k []byte) error {
	saved, exp := tx.Bucket(bucketSaved), tx.Bucket(bucketExpiry)
	if saved == nil || exp == nil {
		return nil
	}
	t := saved.Get(k)
	if t == nil {
		return nil
	}
	if err := exp.Delete(append(bytes.Clone(t), k...)); err != nil {
		return err
	}
	return saved.Delete(k)
}

// Expire deletes, in one write transaction, at most r.Batch records
// first saved more than r.Keep before now, oldest first; those r.Forever
// reports are kept and only leave the index, those r.Extend reports are
// kept and indexed again as saved now. It returns how many records it
// deleted and whether more are due. With a negative r.Keep it does
// nothing.
func Expire(db *bolt.DB, now time.Time, r Retention) (deleted int, more bool, err error) {
	r = r.WithDefaults()
	if r.Keep < 0 {
		return 0, false, nil
	}
	batch := r.Batch
	limit := be64(now.Add(-r.Keep))
	due := false // checked first in a read transaction: no write when nothing is due
	if err := db.View(func(tx *bolt.Tx) error {
		if exp := tx.Bucket(bucketExpiry); exp != nil {
			k, _ := exp.Cursor().First()
			due = len(k) >= 8 && bytes.Compare(k[:8], limit) < 0
		}
		return nil
	}); err != nil || !due {
		return 0, false, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		deleted, more = 0, false
		reqs, saved, exp := tx.Bucket(bucketRequests), tx.Bucket(bucketSaved), tx.Bucket(bucketExpiry)
		if saved == nil || exp == nil {
			return nil
		}
		var due [][]byte
		c := exp.Cursor()
		for k, _ := c.First(); k != nil && len(k) >= 8 && bytes.Compare(k[:8], limit) < 0; k, _ = c.Next() {
			if len(due) == batch {
				more = true
				break
			}
			due = append(due, bytes.Clone(k))
		}
		for _, k := range due {
			if err := exp.Delete(k); err != nil {
				return err
			}
			key := k[8:]
			if !bytes.Equal(saved.Get(key), k[:8]) {
				continue // a stale entry: the key was deleted and saved again since
			}
			if err := saved.Delete(key); err != nil {
				return err
			}
			if r.Forever != nil && r.Forever(string(key)) {
				continue
			}
			if r.Extend != nil && r.Extend(tx, string(key)) {
				if err := index(tx, bytes.Clone(key), now); err != nil {
					return err
				}
				continue
			}
			if err := reqs.Delete(key); err != nil {
				return err
			}
			deleted++
		}
		return nil
	})
	return deleted, more, err
}

// IndexLegacy indexes, in one write transaction, at most batch records
// saved before the index existed, as if saved at at, resuming where the
// last call stopped. It returns whether records remain to be looked at.
func IndexLegacy(db *bolt.DB, at time.Time, batch int) (more bool, err error) {
	if batch <= 0 {
		batch = DefaultSweepBatch
	}
	done := false
	if err := db.View(func(tx *bolt.Tx) error {
		done = bytes.Equal(tx.Bucket(bucketMeta).Get(keyIndexed), indexDone)
		return nil
	}); err != nil || done {
		return false, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		more = false
		meta := tx.Bucket(bucketMeta)
		progress := meta.Get(keyIndexed)
		if bytes.Equal(progress, indexDone) {
			return nil
		}
		c := tx.Bucket(bucketRequests).Cursor()
		var k []byte
		if len(progress) > 0 && progress[0] == 0 {
			after := bytes.Clone(progress[1:])
			if k, _ = c.Seek(after); k != nil && bytes.Equal(k, after) {
				k, _ = c.Next()
			}
		} else {
			k, _ = c.First()
		}
		var last []byte
		var keys [][]byte
		for ; k != nil && len(keys) < batch; k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := index(tx, k, at); err != nil {
				return err
			}
			last = k
		}
		if len(keys) < batch || last == nil {
			return meta.Put(keyIndexed, indexDone)
		}
		more = true
		return meta.Put(keyIndexed, append([]byte{0}, last...))
	})
	return more, err
}

// Sweep runs until ctx is done: every r.Every it indexes the records
// saved before the index existed (once), then deletes the records first
// saved more than r.Keep ago, r.Batch per write transaction with a short
// pause between two, so that a sweep never holds the writer long. With a
// negative r.Keep it returns at once. Errors are logged and retried at
// the next round.
func Sweep(ctx context.Context, db *bolt.DB, r Retention, log *slog.Logger) {
	r = r.WithDefaults()
	if r.Keep < 0 {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	pause := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	indexed := false
	for {
		for more := !indexed; more; {
			var err error
			if more, err = IndexLegacy(db, now(), r.Batch); err != nil {
				log.Warn("indexing old idempotency records", "err", err)
				break
			}
			indexed = !more
			if more && !pause(sweepPause) {
				return
			}
		}
		total := 0
		for more := true; more; {
			n, m, err := Expire(db, now(), r)
			if err != nil {
				log.Warn("sweeping idempotency records", "err", err)
				break
			}
			total, more = total+n, m
			if more && !pause(sweepPause) {
				return
			}
		}
		if total > 0 {
			log.Info("expired idempotency records deleted", "count", total, "retention", r.Keep)
		}
		if !pause(r.Every) {
			return
		}
	}
}
