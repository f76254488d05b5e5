package tablesvc

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// replayWindow is how far back in the stream a watch starts looking for
// the events that follow its snapshot: events are published within
// moments of being stored, so anything older is already in the snapshot.
const replayWindow = 2 * time.Minute

// WatchTable sends the table as it stands, then its events from the
// JetStream stream in sequence order, skipping those the snapshot already
// holds, until the client goes away.
func (s *Service) WatchTable(req *tablev1.WatchTableRequest, stream grpc.ServerStreamingServer[tablev1.WatchTableResponse]) error {
	if err := checkID("table_id", req.GetTableId()); err != nil {
		return err
	}
	js := s.base.JS
	if js == nil {
		return fail(codes.Unavailable, reasonDependencyUnavailable, "this table-svc runs without NATS; WatchTable needs it")
	}
	ctx := stream.Context()
	t, err := s.load(req.GetTableId())
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
	cons, err := js.OrderedConsumer(ctx, outbox.StreamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"chemmy.table." + t.ID + ".>"},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   &start,
	})
	if err != nil {
		return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
	}
	if err := stream.Send(&tablev1.WatchTableResponse{Update: &tablev1.WatchTableResponse_Table{Table: toProto(t)}}); err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
	}
	go func() {
		<-ctx.Done()
		it.Stop()
	}()
	last := t.EventSeq
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fail(codes.Unavailable, reasonDependencyUnavailable, "event stream: %v", err)
		}
		ev := new(eventsv1.TableEvent)
		if err := proto.Unmarshal(msg.Data(), ev); err != nil {
			s.log.Warn("undecodable event in stream", "subject", msg.Subject(), "err", err)
			continue
		}
		if ev.GetSequence() <= last {
			continue
		}
		last = ev.GetSequence()
		if err := stream.Send(&tablev1.WatchTableResponse{Update: &tablev1.WatchTableResponse_Event{Event: ev}}); err != nil {
			return err
		}
	}
}
