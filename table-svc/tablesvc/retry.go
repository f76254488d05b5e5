package tablesvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/chemmy/chemmy/table-svc/game"
)

// intentGrace is how long an escrow intent left by a failed call waits
// for the client's retry before it is rolled back.
const intentGrace = 30 * time.Second

// logStuck logs why a table could not go on; waiting for a cut is normal.
func (s *Service) logStuck(id string, err error) {
	if awaitingCut(err) {
		s.log.Debug("table waits for the shoe to be cut", "table", id)
		return
	}
	s.log.Warn("table not advanced; will retry", "table", id, "err", err)
}

// retryPass is one pass of the retry loop, tables in id order: it
// advances the tables left mid-coup (and interrupts a coup stuck before
// its result for longer than InterruptAfter), applies the turns whose
// time has run out, and rolls back the escrow intents older than the
// grace period.
func (s *Service) retryPass(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.stuck))
	for id := range s.stuck {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		unlock := s.lock(id)
		if err := s.advance(ctx, id); err != nil && ctx.Err() == nil {
			s.logStuck(id, err)
			s.mu.Lock()
			since, ok := s.stuck[id]
			s.mu.Unlock()
			if ok && s.now().Sub(since) >= s.interruptAfter && !errors.Is(err, errAwaitingSeeds) {
				if ierr := s.interrupt(ctx, id, err); ierr != nil && ctx.Err() == nil {
					s.log.Warn("interrupted coup not voided yet; will retry", "table", id, "err", ierr)
				}
			}
		}
		unlock()
	}
	s.expireDue(ctx)
	if err := s.recoverIntents(ctx, intentGrace); err != nil {
		s.log.Warn("escrow intents", "err", err)
	}
}

// interrupt voids a coup that could not go on for InterruptAfter (shoe-svc
// or wallet-svc unreachable, or refusing) before its result: every bet is
// returned (the player is never worse off than before the coup), its
// cards are discarded, and the banker keeps his bank (as CF-ERROR). A
// coup with a result is never voided: its settlement is retried until
// the wallet takes it. The caller holds the table's lock.
func (s *Service) interrupt(ctx context.Context, id string, cause error) error {
	t, err := s.load(id)
	if err != nil {
		return err
	}
	c := &change{t: t, now: s.now()}
	reason := fmt.Sprintf("interrupted: the coup could not go on for %s (%v)", s.interruptAfter, cause)
	if len(reason) > 500 {
		reason = reason[:500]
	}
	cmd := t.adapter().interrupt(t, reason)
	if cmd == nil {
		return nil // only a coup before its result is voided
	}
	if v, ok := cmd.(game.Voiding); ok {
		if err := s.voidable(ctx, t, v); err != nil {
			// Settled at the wallet (the retry loop finishes it), or
			// the wallet does not answer: nothing is voided.
			s.log.Warn("coup not interrupted", "table", id, "err", err)
			return nil
		}
	}
	if err := s.applyCore(ctx, c, cmd); err != nil {
		return err
	}
	if err := s.save(c, "", nil, nil); err != nil {
		return err
	}
	s.log.Warn("coup interrupted and voided; every bet returned", "table", id, "cause", cause)
	s.mu.Lock()
	s.stuck[id] = s.now() // the returns go on from here
	s.mu.Unlock()
	return s.advance(ctx, id)
}

// retryLoop advances, at start and then every RetryInterval, the tables
// left mid-coup by a crash or an unavailable dependency, and applies the
// turns whose time has run out (so a time limit is kept to within one
// RetryInterval).
func (s *Service) retryLoop(ctx context.Context) error {
	if err := s.recoverIntents(ctx, 0); err != nil { // all of them: left by the previous run
		return err
	}
	tick := time.NewTicker(s.retry)
	defer tick.Stop()
	for {
		s.retryPass(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// scanUnfinished queues every table that a previous run left mid-coup or
// with holds to release.
//
// It also gives every pending turn its full time limit again, counted
// from now (the restart): a player is never timed out for the time the
// service was down. The new deadlines are stored (one write per table
// with a pending turn).
func (s *Service) scanUnfinished() error {
	now := s.now()
	type moved struct {
		t   *table
		key string // the wait key as stored
	}
	var extended []moved
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
			t := new(table)
			if err := decodeTable(v, t); err != nil {
				return fmt.Errorf("table %s: %w", k, err)
			}
			if corePending(t) {
				s.markStuck(t.ID)
			}
			key := t.WaitKey
			moved1 := t.adapter().restart(t, now)
			if moved1 {
				coreDeadline(t) // a core with its own turn clock stamped it itself
			}
			// A seed window running too (seeds.go).
			if t.Entropy.restart(now, s.seedWindow) || moved1 {
				extended = append(extended, moved{t, key})
			}
			s.track(t)
			return nil
		})
	})
	if err != nil || len(extended) == 0 {
		return err // nothing to write: no commit at start
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTables)
		for _, m := range extended {
			t := m.t
			// Only over the record read above (nothing serves yet, but
			// Recover may be called later).
			var now table
			if err := decodeTable(b.Get([]byte(t.ID)), &now); err != nil || now.EventSeq != t.EventSeq || now.WaitKey != m.key {
				continue
			}
			v, err := encodeTable(t)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(t.ID), v); err != nil {
				return err
			}
		}
		return nil
	})
}
