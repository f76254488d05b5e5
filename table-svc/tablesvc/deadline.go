package tablesvc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/table-svc/game"
)

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

// standUpIdle stands up, under the table's lock, every player of t whose
// inactivity limit has run out at now (in seat order), in one change.
// A stand-up the core refuses is logged and his session's clock starts
// again (he is not retried at once).
func (s *Service) standUpIdle(ctx context.Context, t *table, now time.Time) error {
	c := &change{t: t, now: s.now()}
	svc := auth.Caller{Subject: "table-svc", Role: auth.RoleService}
	for _, p := range seatedPlayers(t) {
		due, ok := s.idleCandidates(t)[p]
		if !ok || due.After(now) {
			continue
		}
		action, detail := "stood_up_inactive", "player "+p
		if ss := t.Sessions[p]; ss != nil {
			detail += ", session " + ss.ID + ", inactive since " + ss.Active.Format(time.RFC3339)
			if !ss.Stop.IsZero() {
				action, detail = stoppedAction, stoppedDetail(p, ss)
			}
		}
		err := s.standUp(ctx, c, p, svc)
		if err == nil {
			c.emit("", &eventsv1.StaffAction{Action: action, ActorId: svc.Subject, ActorRole: string(svc.Role), Detail: detail})
		} else if ss := t.Sessions[p]; ss != nil && !ss.Stop.IsZero() {
			s.log.Warn("a player who stopped at a reality check could not be stood up; retried in a minute", "table", t.ID, "player", p, "err", err)
			ss.Stop = now.UTC().Add(time.Minute)
		} else {
			s.log.Warn("an idle player could not be stood up; his inactivity counts again from now", "table", t.ID, "player", p, "err", err)
			if t.Sessions == nil {
				t.Sessions = map[string]*session{}
			}
			if t.Sessions[p] == nil {
				t.Sessions[p] = &session{}
			}
			t.Sessions[p].Active = now.UTC()
		}
	}
	if err := s.save(c, "", nil, nil); err != nil {
		return err
	}
	return s.advance(ctx, t.ID)
}

// standUp frees p's seat within c: first, when p holds a bank his game
// lets him give up now, the command giving it up (giveUpBank), then the
// core's Leave, the command of LeaveTable.
func (s *Service) standUp(ctx context.Context, c *change, p string, svc auth.Caller) error {
	if give := giveUpBank(c.t, p); give != nil {
		if err := s.applyCore(ctx, c, give); err != nil {
			return err
		}
	}
	cmd, err := c.t.adapter().command(c.t, "LeaveTable", &tablev1.LeaveTableRequest{TableId: c.t.ID, PlayerId: p}, svc)
	if err != nil {
		return err
	}
	return s.applyCore(ctx, c, cmd)
}

// seedsDue acts on the seed protocol's deadline at table t (the caller
// holds its lock): at the end of a commitment round the coup goes on
// (its commitments are fixed, or the shoe is seeded with none); at the
// reveal deadline with a seed missing the shoe is abandoned.
func (s *Service) seedsDue(ctx context.Context, t *table) error {
	if t.Entropy.Revealing && len(t.Entropy.missing()) > 0 {
		c := &change{t: t, now: s.now()}
		if err := s.abandonShoe(ctx, c); err != nil {
			s.markStuck(t.ID)
			return err
		}
		if err := s.save(c, "", nil, nil); err != nil {
			return err
		}
	}
	return s.advance(ctx, t.ID)
}

// abandonShoe gives up the table's shoe whose committed seeds were not
// all revealed in time: it is closed unused (forced, its reveal public),
// the withholders are named (shoe_abandoned) and refused seeds at this
// table from then on, and a new shoe, collecting, replaces it in the
// game core with a commitment round of one seed window. Each call is
// idempotent by a request id of the table and the shoe's number, so a
// retry after a crash repeats them harmlessly.
func (s *Service) abandonShoe(ctx context.Context, c *change) error {
	t := c.t
	missing := t.Entropy.missing()
	old, number := t.ShoeID, t.Shoes
	reason := "seed withheld by " + strings.Join(missing, ", ")
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := s.shoe.CloseShoe(cctx, &shoev1.CloseShoeRequest{RequestId: fmt.Sprintf("table/%s/close/%d/abandoned", t.ID, number),
		ShoeId: old, Force: true, Reason: clip("abandoned: " + reason)})
	if err != nil && errs.Reason(err) != "SHOE_CLOSED" {
		if !definite(err) {
			return fmt.Errorf("close abandoned shoe %s: %w", old, err)
		}
		s.log.Warn("abandoned shoe not closed", "table", t.ID, "shoe", old, "err", err)
	}
	if err := s.openShoe(ctx, t, true); err != nil {
		return err
	}
	for _, p := range missing {
		if !slices.Contains(t.SeedWithheld, p) {
			t.SeedWithheld = append(t.SeedWithheld, p)
		}
	}
	slices.Sort(t.SeedWithheld)
	t.Entropy.CommitBy = c.now.Add(s.seedWindow)
	c.emit("", &eventsv1.ShoeAbandoned{ShoeId: old, ShoeNumber: int32(number), WithheldPlayerIds: missing, Reason: reason})
	s.log.Warn("shoe abandoned: a committed seed was not revealed", "table", t.ID, "shoe", old, "withheld", missing)
	return s.applyCore(ctx, c, game.ShoeOpened{ShoeID: t.ShoeID, Number: int32(t.Shoes), Abandoned: true})
}
