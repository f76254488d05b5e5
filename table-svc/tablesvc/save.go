package tablesvc

import (
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// save writes the table, its events and the idempotency record (when key
// is not empty; resp is stored with it) in one transaction, then wakes the
// relay.
func (s *Service) save(c *change, key string, hash, resp []byte) error {
	return s.saveAll(saving{c, key, hash, resp})
}

// saving is a change to save with the idempotency record of its request
// (key, hash, resp; none when key is empty).
type saving struct {
	c          *change
	key        string
	hash, resp []byte
}

// saveAll saves changes of different tables in one transaction, as save
// does one.
func (s *Service) saveAll(cs ...saving) error {
	vs := make([][]byte, len(cs))
	for i, sv := range cs {
		c := sv.c
		s.stampDeadline(c.t)
		v, err := encodeTable(c.t)
		if err != nil {
			releaseRecords(vs)
			return err
		}
		vs[i] = v
	}
	defer releaseRecords(vs) // bbolt keeps them until the commit is over
	// Group-committed with the other tables' writes: the function only
	// writes values computed here, so running it again after a rolled
	// back group changes nothing.
	err := s.commit.Update(func(tx *bolt.Tx) error {
		for i, sv := range cs {
			if err := writeChange(tx, sv, vs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	events := false
	for _, sv := range cs {
		c := sv.c
		if err == nil {
			s.track(c.t)
			s.metrics.committed(c.t, c.events)
			events = events || len(c.events)+len(c.private) > 0
			s.handToWatches(c)
		}
		c.events, c.private = nil, nil
	}
	if events {
		s.base.Relay.Notify()
	}
	return err
}

// writeChange writes sv in tx: its table (encoded v), the escrow intents
// it resolved, its events in the outbox and the round history, and its
// idempotency record when sv.key is not empty.
func writeChange(tx *bolt.Tx, sv saving, v []byte) error {
	c := sv.c
	if err := tx.Bucket(bucketTables).Put([]byte(c.t.ID), v); err != nil {
		return err
	}
	for _, id := range c.intents {
		if err := tx.Bucket(bucketIntents).Delete([]byte(id)); err != nil {
			return err
		}
	}
	if err := putEvents(tx, c.t, c.events); err != nil {
		return err
	}
	if err := putPrivate(tx, c.private); err != nil {
		return err
	}
	// The round history keeps the coup's events in full (history.go).
	if err := recordRounds(tx, c); err != nil {
		return err
	}
	// The coups it ends, as the public saw them (recent.go).
	if err := recordRecentCoups(tx, c); err != nil {
		return err
	}
	if sv.key != "" {
		return store.Save(tx, sv.key, sv.hash, sv.resp)
	}
	return nil
}

// seen reports whether the request was already applied; an id reused for
// another request is ALREADY_EXISTS REQUEST_ID_REUSED.
func (s *Service) seen(key string, hash []byte) (bool, error) {
	var (
		found bool
		resp  []byte
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		resp, found, err = store.Lookup(tx, key, hash)
		return err
	})
	if err == store.ErrRequestReused {
		return true, fail(codes.AlreadyExists, reasonRequestIDReused, "request_id %q was used for another request", key)
	}
	if err == nil && found && string(resp) == abandoned {
		return true, fail(codes.Aborted, reasonRequestAbandoned, "request %q was cut off and rolled back; send it again with a new request_id", key)
	}
	return found, err
}

// handToWatches hands c's events, committed, to the local watches of its
// table (watchhub.go), as published.
func (s *Service) handToWatches(c *change) {
	if len(c.events) == 0 || !s.hub.watched(c.t.ID) {
		return
	}
	pub := make([]*eventsv1.TableEvent, len(c.events))
	for i, ev := range c.events {
		pub[i] = c.t.publicEvent(ev)
	}
	s.hub.publish(c.t.ID, pub)
}

// putEvents stores evs, table t's events of one save, in the outbox as
// one message (tx: the save's transaction): their published versions
// (publicEvent) in a TableEventBatch on "chemmy.table.<id>.v2", its id
// the first event's (docs/events.md).
func putEvents(tx *bolt.Tx, t *table, evs []*eventsv1.TableEvent) error {
	if len(evs) == 0 {
		return nil
	}
	pub := make([]*eventsv1.TableEvent, len(evs))
	for i, ev := range evs {
		pub[i] = t.publicEvent(ev)
	}
	batch, err := tableevents.Batch(pub)
	if err != nil {
		return err
	}
	b, err := proto.Marshal(batch)
	if err != nil {
		return err
	}
	return outbox.PutEvents(tx, tableevents.BatchSubject(batch.GetTableId()), evs[0].GetEventId(), len(evs), tableevents.Kinds(evs), b)
}

// putPrivate stores c's one-player events in the outbox, in the
// transaction tx of the change (save).
func putPrivate(tx *bolt.Tx, evs []*eventsv1.TableEvent) error {
	for _, ev := range evs {
		b, err := proto.Marshal(ev)
		if err != nil {
			return err
		}
		if err := outbox.Put(tx, privateSubject(ev), ev.GetEventId(), b); err != nil {
			return err
		}
	}
	return nil
}
