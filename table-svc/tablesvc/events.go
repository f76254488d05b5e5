package tablesvc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/nats-io/nats.go/jetstream"
)

// payloadOneof is the "payload" oneof of TableEvent.
var payloadOneof = (&eventsv1.TableEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("payload")

// setPayload puts p, one of the payload messages of TableEvent, into ev.
// Any other message is a programming error.
func setPayload(ev *eventsv1.TableEvent, p proto.Message) {
	name := p.ProtoReflect().Descriptor().FullName()
	fields := payloadOneof.Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); fd.Message() != nil && fd.Message().FullName() == name {
			ev.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(p.ProtoReflect()))
			return
		}
	}
	panic(fmt.Sprintf("tablesvc: %s is not a TableEvent payload", name))
}

// subject is the NATS subject of an event:
// "chemmy.table.<table_id>.<payload field name>".
func subject(ev *eventsv1.TableEvent) string {
	kind := "unknown"
	if fd := ev.ProtoReflect().WhichOneof(payloadOneof); fd != nil {
		kind = string(fd.Name())
	}
	return "chemmy.table." + ev.GetTableId() + "." + kind
}

// publishedCheck tells the outbox relay which of the events found in the
// outbox at start were published already (outbox.PublishedCheck): a
// table's events carry a gapless sequence, so an event whose sequence is
// not above that of the table's last event in the stream was. It
// remembers each table's last sequence, and asks the stream again for an
// event above it.
func (s *Service) publishedCheck() outbox.PublishedCheck {
	var mu sync.Mutex
	last := map[string]uint64{}
	return func(ctx context.Context, js jetstream.JetStream, m outbox.Message) (bool, error) {
		ev := new(eventsv1.TableEvent)
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			return false, nil // not a table event: publish it
		}
		if ev.GetSequence() == 0 {
			// A one-player event (a reality check) is outside the table's
			// sequence: published again, deduplicated by its id.
			return false, nil
		}
		mu.Lock()
		seq, ok := last[ev.GetTableId()]
		mu.Unlock()
		// A table's last event only moves up: a cached answer that says
		// "published" stays true; one that does not is asked again.
		if !ok || ev.GetSequence() > seq {
			st, err := js.Stream(ctx, outbox.StreamName)
			if err != nil {
				return false, err
			}
			raw, err := st.GetLastMsgForSubject(ctx, "chemmy.table."+ev.GetTableId()+".>")
			switch {
			case errors.Is(err, jetstream.ErrMsgNotFound):
			case err != nil:
				return false, err
			default:
				prev := new(eventsv1.TableEvent)
				if err := proto.Unmarshal(raw.Data, prev); err != nil {
					return false, err
				}
				seq = prev.GetSequence()
			}
			mu.Lock()
			last[ev.GetTableId()] = seq
			mu.Unlock()
		}
		return ev.GetSequence() <= seq, nil
	}
}
