package tablesvc

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// replayWindow is how far back in the stream a watch starts looking for
// the events that follow its snapshot: events are published within
// moments of being stored, so anything older is already in the snapshot.
const replayWindow = 2 * time.Minute

// watchInactiveThreshold is how long the JetStream server keeps a watch's
// consumer that nobody pulls from. WatchTable deletes its consumer when
// it returns; this is the backstop for a consumer it could not delete
// (the process died, NATS was unreachable just then).
const watchInactiveThreshold = 10 * time.Second

// watchDeleteTimeout bounds the deletion of a watch's consumer.
const watchDeleteTimeout = 5 * time.Second

// WatchTable sends the table as it stands, then its events in sequence
// order, one at a time, each once, skipping those the snapshot already
// holds, until the client goes away. They come from the JetStream stream
// (each batch unpacked, docs/events.md) and, on the table-svc that saves
// the table, from its saves as they commit (watchhub.go): an event from
// a save is sent when it is the next of the sequence, before the move
// that made it is answered; the stream brings the others and whatever a
// save did not hand over.
//
// Each watch reads through its own ephemeral consumer, named here and
// deleted as soon as the watch ends, so that watches that come and go do
// not pile up consumers on the server. When the consumer loses messages
// or goes away (NATS restarted, a long disconnection) the watch ends with
// UNAVAILABLE DEPENDENCY_UNAVAILABLE rather than skip events: the client
// watches again and gets a fresh snapshot.
func (s *Service) WatchTable(req *tablev1.WatchTableRequest, stream grpc.ServerStreamingServer[tablev1.WatchTableResponse]) error {
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return err
	}
	js := s.base.JS
	if js == nil {
		return fail(codes.Unavailable, reasonDependencyUnavailable, "this table-svc runs without NATS; WatchTable needs it")
	}
	ctx := stream.Context()
	v := viewerOf(ctx)
	// This process's saves of the table, from before the snapshot on: a
	// save's events come from here as it commits, or from the stream.
	feed := s.hub.subscribe(req.GetTableId())
	defer s.hub.unsubscribe(req.GetTableId(), feed)
	t, err := s.loadFor(ctx, req.GetTableId())
	if err != nil {
		return err
	}
	if err := outbox.EnsureStream(ctx, js); err != nil {
		return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
	}
	start := s.now().Add(-replayWindow)
	if t.Created.After(start) {
		start = t.Created.Add(-time.Second)
	}
	name := "watch_" + ulid.Make().String()
	opened := s.now()
	cons, err := js.CreateConsumer(ctx, outbox.StreamName, jetstream.ConsumerConfig{
		Name:              name,
		FilterSubjects:    v.watchSubjects(t.ID), // the table's, and a player's own reality checks (realitycheck.go)
		DeliverPolicy:     jetstream.DeliverByStartTimePolicy,
		OptStartTime:      &start,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: watchInactiveThreshold,
		MemoryStorage:     true,
		Replicas:          1,
	})
	if err != nil {
		if apiErr := (*jetstream.APIError)(nil); !errors.As(err, &apiErr) {
			// No answer from the server (the client went away, a
			// timeout): it may have created the consumer all the same.
			s.deleteWatchConsumer(js, name)
		}
		if ctx.Err() != nil {
			return nil
		}
		return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
	}
	defer s.deleteWatchConsumer(js, name)
	first := toProto(t, v)
	if first.RecentCoups, err = s.recentCoups(t.ID); err != nil {
		return err
	}
	if err := stream.Send(&tablev1.WatchTableResponse{Update: &tablev1.WatchTableResponse_Table{Table: first}}); err != nil {
		return err
	}
	// A missing heartbeat ends Next with an error (the default): the
	// consumer is gone or NATS unreachable.
	it, err := cons.Messages()
	if err != nil {
		return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
	}
	defer it.Stop()
	fromStream := make(chan streamed)
	go readStream(ctx, it, fromStream)
	last := t.EventSeq
	var delivered uint64 // the consumer's delivery sequence: 1, 2, 3... without gaps
	for {
		var evs []*eventsv1.TableEvent
		local := false
		select {
		case <-ctx.Done():
			return nil
		case evs = <-feed.ch:
			local = true
		case m := <-fromStream:
			if m.err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", m.err)
			}
			meta, err := m.msg.Metadata()
			if err != nil {
				return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
			}
			if meta.Sequence.Consumer != delivered+1 {
				return fail(codes.Unavailable, reasonDependencyUnavailable,
					"event stream lost messages (delivery %d after %d); watch again", meta.Sequence.Consumer, delivered)
			}
			delivered = meta.Sequence.Consumer
			// A batch (one save's events) or, on a player's subject and in
			// a stream written before batches, one event (docs/events.md).
			evs, err = tableevents.Decode(m.msg.Headers().Get(outbox.TypeHeader), m.msg.Subject(), m.msg.Data())
			if err != nil {
				s.log.Warn("undecodable event in stream", "subject", m.msg.Subject(), "err", err)
				continue
			}
		}
		for _, ev := range evs {
			if !local {
				if own, private := v.ownRealityCheck(ev, t.ID, opened); private {
					if own {
						if err := stream.Send(&tablev1.WatchTableResponse{Update: &tablev1.WatchTableResponse_Event{Event: ev}}); err != nil {
							return err
						}
					}
					continue
				}
			}
			if ev.GetSequence() <= last {
				continue // sent already (from the other source, or in the snapshot)
			}
			if local && ev.GetSequence() != last+1 {
				break // events before it are still on their way in the stream, and it with them
			}
			last = ev.GetSequence()
			if cd := ev.GetCardDealt(); cd != nil && cd.GetCard().GetFaceDown() {
				// The holder of the hand gets his own card (view.go).
				if now, err := s.load(t.ID); err == nil {
					ev = v.personalEvent(ev, now)
				}
			}
			if err := stream.Send(&tablev1.WatchTableResponse{Update: &tablev1.WatchTableResponse_Event{Event: ev}}); err != nil {
				return err
			}
		}
	}
}

// streamed is one message of a watch's consumer, or why there is none.
type streamed struct {
	msg jetstream.Msg
	err error
}

// readStream sends the messages of it to out until it fails (sending its
// error last) or ctx ends.
func readStream(ctx context.Context, it jetstream.MessagesContext, out chan<- streamed) {
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		select {
		case out <- streamed{msg, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// deleteWatchConsumer deletes a watch's consumer from the event stream,
// with a context of its own: the watch's context is already done.
func (s *Service) deleteWatchConsumer(js jetstream.JetStream, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), watchDeleteTimeout)
	defer cancel()
	err := js.DeleteConsumer(ctx, outbox.StreamName, name)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		s.log.Warn("delete watch consumer (the server drops it once idle)", "consumer", name,
			"idle_after", watchInactiveThreshold, "err", err)
	}
}
