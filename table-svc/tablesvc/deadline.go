package tablesvc

import (
	"context"
	"slices"
	"time"

	"github.com/chemmy/chemmy/table-svc/game"
)

// defaultTurnMS is the default time limit of every turn: a bet, a
// decision, a bank offer (house rules *_time_limit_ms).
const defaultTurnMS = 30000

// stampDeadline records when the table's core wants a Tick (its turns'
// time limits, a betting window, a pause): see coreDeadline.
func (s *Service) stampDeadline(t *table) { coreDeadline(t) }

// track keeps the in-memory index of deadlines in step with a saved table.
func (s *Service) track(t *table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.idleDue(t)
	if t.WaitKey != "" && (!ok || t.Deadline.Before(d)) {
		d, ok = t.Deadline, true
	}
	if sd, due := t.Entropy.due(); due && (!ok || sd.Before(d)) {
		d, ok = sd, true // the seed protocol's (seeds.go)
	}
	if !ok {
		delete(s.deadlines, t.ID)
		return
	}
	s.deadlines[t.ID] = d
}

// expireDue applies a Tick to every table whose deadline has passed: its
// core acts as the house rules say when a turn's time runs out (chemin de
// fer: RULES.md, defaults when a decision's time runs out: a punter who
// has not bet passes; the player on 5 draws; the banker at an option cell
// draws; a bank not accepted in time is offered to the next in turn; an
// auction whose time runs out goes to the highest bid; a banker who does
// not answer over-bank bets sees the excess removed; each timeout is an
// event, turn_timed_out), or ends a betting window or a pause; then
// stands up the players whose inactivity limit has run out (sessions.go).
func (s *Service) expireDue(ctx context.Context) {
	now := s.now()
	s.mu.Lock()
	var due []string
	for id, d := range s.deadlines {
		if !d.After(now) {
			due = append(due, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(due) // a fixed order: the simulation replays it
	// A timeout that leaves nothing to carry out (a bank offered to the
	// next, a bet declined with the turn passed on) is saved with the
	// others of the pass: one commit for many idle tables. Each such
	// table stays locked until its change is saved.
	var batch []staged
	flush := func() {
		if len(batch) == 0 {
			return
		}
		cs := make([]saving, len(batch))
		for i, b := range batch {
			cs[i] = saving{c: b.c}
		}
		if err := s.saveAll(cs...); err != nil && ctx.Err() == nil {
			s.log.Warn("timeouts not saved; will retry", "tables", len(batch), "err", err)
		}
		for _, b := range batch {
			b.unlock()
		}
		batch = batch[:0]
	}
	defer flush()
	for _, id := range due {
		err := s.expire(ctx, id, now, func(c *change, unlock func()) {
			batch = append(batch, staged{c, unlock})
		})
		if err != nil && ctx.Err() == nil {
			s.log.Warn("timeout (or the step it led to) not applied; will retry", "table", id, "err", err)
		}
		if len(batch) == maxExpireBatch {
			flush()
		}
	}
}

// maxExpireBatch bounds the timeouts saved in one transaction.
const maxExpireBatch = 256

// staged is a timeout applied and not saved yet, its table locked.
type staged struct {
	c      *change
	unlock func()
}

// expire applies the timeout due at table id. When it leaves nothing to
// carry out and no player to stand up, the change goes to stage (with the
// table's lock, to release once saved) instead of being saved.
func (s *Service) expire(ctx context.Context, id string, now time.Time, stage func(c *change, unlock func())) error {
	unlock := s.lock(id)
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	t, err := s.load(id)
	if err != nil {
		return err
	}
	if d, ok := t.Entropy.due(); ok && !d.After(now) {
		return s.seedsDue(ctx, t)
	}
	if t.WaitKey == "" || t.Deadline.After(now) {
		if idle, ok := s.idleDue(t); ok && !idle.After(now) {
			return s.standUpIdle(ctx, t, now)
		}
		s.track(t)
		return nil
	}
	c := &change{t: t, now: s.now()}
	if err := s.applyCore(ctx, c, game.Tick{}); err != nil {
		return err
	}
	if idle, ok := s.idleDue(t); stage != nil && !corePending(t) && (!ok || idle.After(now)) {
		locked = false
		stage(c, unlock)
		return nil
	}
	if err := s.save(c, "", nil, nil); err != nil {
		return err
	}
	if err := s.advance(ctx, id); err != nil {
		return err
	}
	if t, err = s.load(id); err != nil {
		return err
	}
	if idle, ok := s.idleDue(t); ok && !idle.After(now) {
		return s.standUpIdle(ctx, t, now)
	}
	return nil
}
