package tablesvc

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
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
