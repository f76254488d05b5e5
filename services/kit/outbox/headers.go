package outbox

import (
	"strings"

	"github.com/nats-io/nats.go"
)

// Headers every published event carries, so that a reader (nats sub,
// chemmy events) knows what the protobuf payload is without guessing from
// the subject.
const (
	// TypeHeader is the payload's protobuf message type, e.g.
	// "chemmy.events.v1.TableEvent".
	TypeHeader = "Chemmy-Event-Type"
	// KindHeader is the payload's kind (the oneof field set), e.g.
	// "bet_placed": the subject's last token.
	KindHeader = "Chemmy-Event-Kind"
	// ContentTypeHeader is "application/protobuf".
	ContentTypeHeader = "Content-Type"
)

// eventTypes maps a subject's second token (chemmy.<service>.<id>.<kind>)
// to its payload type.
var eventTypes = map[string]string{
	"table":  "chemmy.events.v1.TableEvent",
	"shoe":   "chemmy.events.v1.ShoeEvent",
	"wallet": "chemmy.events.v1.WalletEvent",
	// One player's own table events (chemmy.player.<id>.reality_check).
	"player": "chemmy.events.v1.TableEvent",
}

// EventType is the protobuf type of the payload published on subject
// ("chemmy.table.T1.bet_placed" → "chemmy.events.v1.TableEvent"), and its
// kind ("bet_placed"); empty when the subject is not an event's.
func EventType(subject string) (typ, kind string) {
	parts := strings.Split(subject, ".")
	if len(parts) < 4 || parts[0] != "chemmy" {
		return "", ""
	}
	return eventTypes[parts[1]], parts[len(parts)-1]
}

// Headers are the headers of the message published on subject: its type
// and kind (none for a subject that is not an event's). Never nil: the
// publisher adds Nats-Msg-Id to it.
func Headers(subject string) nats.Header {
	h := nats.Header{}
	typ, kind := EventType(subject)
	if typ == "" {
		return h
	}
	h.Set(TypeHeader, typ)
	h.Set(KindHeader, kind)
	h.Set(ContentTypeHeader, "application/protobuf")
	return h
}
