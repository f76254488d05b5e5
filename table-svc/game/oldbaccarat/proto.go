package oldbaccarat

import (
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// eventProto is an event payload of chemmy.events.v1.
type eventProto = proto.Message

func timestamp(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }
