package outbox

import (
	"strings"

	"github.com/nats-io/nats.go"
)

// Headers every published event carries, so that a reader (nats sub,
// chemmy events) knows what the protobuf payload is without guessing from
// the subject (the published-event contract: docs/events.md).
const (
	// TypeHeader is the protobuf message type of an event alone, e.g.
	// "chemmy.events.v1.TableEvent"; a batch has none (Message.Headers).
	TypeHeader = "Chemmy-Event-Type"
	// KindHeader is the payload's kind (the oneof field set), e.g.
	// "bet_placed": the subject's last token. A message of one event only.
	KindHeader = "Chemmy-Event-Kind"
	// KindsHeader is a batch's kinds (outbox.PutEvents), each once, in
	// order of first appearance, comma-separated: "bet_placed,card_dealt".
	// A batch carries it instead of KindHeader.
	KindsHeader = "Chemmy-Event-Kinds"
	// ContentTypeHeader is "application/protobuf"; a batch leaves it out
	// (every payload is protobuf).
	ContentTypeHeader = "Content-Type"
)

// BatchVersion is the last token of the subject of a batch of events
// ("chemmy.table.<table_id>.v2"): version 2 of the published-event
// contract.
const BatchVersion = "v2"

// eventTypes maps a subject's second token (chemmy.<service>.<id>.<kind>)
// to its payload type.
var eventTypes = map[string]string{
	"table":  "chemmy.events.v1.TableEvent",
	"shoe":   "chemmy.events.v1.ShoeEvent",
	"wallet": "chemmy.events.v1.WalletEvent",
	// One player's own table events (chemmy.player.<id>.reality_check).
	"player": "chemmy.events.v1.TableEvent",
}

// batchTypes maps a batch subject's second token
// (chemmy.<service>.<id>.v2) to its payload type.
var batchTypes = map[string]string{
	"table":  "chemmy.events.v1.TableEventBatch",
	"wallet": "chemmy.events.v1.WalletEventBatch",
}

// EventType is the protobuf type of the payload published on subject
// ("chemmy.table.T1.bet_placed" → "chemmy.events.v1.TableEvent"), and its
// kind ("bet_placed"); empty when the subject is not an event's. A batch's
// subject ("chemmy.table.T1.v2") gives the batch's type
// ("chemmy.events.v1.TableEventBatch") and no kind.
func EventType(subject string) (typ, kind string) {
	parts := strings.Split(subject, ".")
	if len(parts) < 4 || parts[0] != "chemmy" {
		return "", ""
	}
	if parts[len(parts)-1] == BatchVersion {
		if typ := batchTypes[parts[1]]; typ != "" {
			return typ, ""
		}
	}
	return eventTypes[parts[1]], parts[len(parts)-1]
}

// Headers are the headers of m as published: a batch's (a "v2" subject)
// its kinds (KindsHeader) only, when it has any, else those of
// Headers(m.Subject). A batch has no TypeHeader: its subject names its
// type (EventType; every reader in this repository falls back on it),
// and the header would cost 40-50 bytes of every stored batch. Never
// nil: the publisher adds Nats-Msg-Id to it.
func (m Message) Headers() nats.Header {
	typ, kind := EventType(m.Subject)
	if kind != "" || typ == "" {
		return Headers(m.Subject)
	}
	h := nats.Header{}
	if m.Kinds != "" {
		h.Set(KindsHeader, m.Kinds)
	}
	return h
}

// Headers are the headers of the message of one event published on
// subject: its type and kind (none for a subject that is not an
// event's). Never nil: the publisher adds Nats-Msg-Id to it.
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
