package walletsvc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/chemmy/chemmy/services/kit/store"
)

// keyOpEndedIndexed, in the "wallet" bucket, says that the rounds ended
// before the "op-ended" index existed were indexed (indexEndedRounds).
var keyOpEndedIndexed = []byte("op-ended-indexed")

// indexEndedRounds indexes, once per ledger file, the rounds that ended
// without EndedAt (a version without the index): they are taken as
// ended now, so they go one retention after this start.
func (s *Service) indexEndedRounds(now time.Time) error {
	return s.commit.Update(func(tx *bolt.Tx) error {
		w := tx.Bucket(bucketWallet)
		if w.Get(keyOpEndedIndexed) != nil {
			return nil
		}
		ended := tx.Bucket(bucketOpEnded)
		type stamp struct {
			key string
			r   *roundRec
		}
		var todo []stamp
		err := tx.Bucket(bucketOpRounds).ForEach(func(k, v []byte) error {
			r := &roundRec{}
			if err := json.Unmarshal(v, r); err != nil {
				return err
			}
			if r.Ended && r.EndedAt.IsZero() {
				todo = append(todo, stamp{string(k), r})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, t := range todo {
			t.r.EndedAt = now
			if err := putJSON(tx, bucketOpRounds, t.key, t.r); err != nil {
				return err
			}
			if err := ended.Put(idleKey(now, t.key), nil); err != nil {
				return err
			}
		}
		return w.Put(keyOpEndedIndexed, []byte{1})
	})
}

// expireRounds deletes, in one transaction, up to batch player round
// records ("op-rounds") that ended before now - keep, with their
// "op-ended" entries (and an "op-idle" entry left behind, if any); a
// round still open or not ended is never deleted. more reports that
// some may be left.
func (s *Service) expireRounds(now time.Time, keep time.Duration, batch int) (n int, more bool, err error) {
	cutoff := now.Add(-keep).UnixNano()
	err = s.commit.Update(func(tx *bolt.Tx) error {
		rounds, ended, idle := tx.Bucket(bucketOpRounds), tx.Bucket(bucketOpEnded), tx.Bucket(bucketOpIdle)
		var done [][]byte
		c := ended.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) < 8 || int64(binary.BigEndian.Uint64(k)) > cutoff {
				break
			}
			if len(done) == batch {
				more = true
				break
			}
			done = append(done, k)
		}
		for _, k := range done {
			key := string(k[8:])
			r := &roundRec{}
			found, err := getJSON(tx, bucketOpRounds, key, r)
			if err != nil {
				return err
			}
			if found && r.Ended && r.Open == 0 {
				if err := rounds.Delete([]byte(key)); err != nil {
					return err
				}
				if !r.IdleSince.IsZero() {
					if err := idle.Delete(idleKey(r.IdleSince, key)); err != nil {
						return err
					}
				}
				n++
			}
			if err := ended.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	return n, more, err
}

// roundSweepLoop deletes the ended round records older than the
// request retention r (its Keep, Every and Batch; negative Keep: never),
// on the service clock, until ctx is done.
func (s *Service) roundSweepLoop(ctx context.Context, r store.Retention) {
	r = r.WithDefaults()
	if r.Keep < 0 {
		return
	}
	if err := s.indexEndedRounds(s.now()); err != nil {
		s.log.Warn("indexing ended operator rounds", "err", err)
	}
	for {
		total := 0
		for more := true; more; {
			n, m, err := s.expireRounds(s.now(), r.Keep, r.Batch)
			if err != nil {
				s.log.Warn("sweeping ended operator rounds", "err", err)
				break
			}
			total, more = total+n, m
		}
		if total > 0 {
			s.log.Info("ended operator round records deleted", "count", total, "retention", r.Keep)
		}
		t := time.NewTimer(r.Every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
