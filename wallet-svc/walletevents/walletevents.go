// Package walletevents writes and reads wallet events as chemmy publishes
// them to NATS JetStream (the published-event contract, docs/events.md).
//
// Version 2 (this one): the transfers of one wallet-svc transaction (one
// bbolt commit) are ONE message, a chemmy.events.v1.WalletEventBatch on
// "chemmy.wallet.<first event_id>.v2" (Subject), whose only header is
// Nats-Msg-Id, its first event's event_id. The fields its events share are
// written once in the batch (Batch) and copied back into each event by a
// reader (Events). A player's limits change is published alone, a
// chemmy.events.v1.WalletEvent on
// "chemmy.wallet.<event_id>.player_limits_changed".
//
// Version 1 published each transfer alone, a WalletEvent on
// "chemmy.wallet.<transfer_id>.transfer_recorded"; Decode reads both.
package walletevents

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// Payload types of the messages.
var (
	// BatchType is "chemmy.events.v1.WalletEventBatch".
	BatchType = string((&eventsv1.WalletEventBatch{}).ProtoReflect().Descriptor().FullName())
	// EventType is "chemmy.events.v1.WalletEvent".
	EventType = string((&eventsv1.WalletEvent{}).ProtoReflect().Descriptor().FullName())
)

// Version is the last token of a batch's subject.
const Version = "v2"

// Subject is the subject of a batch whose first event is firstID:
// "chemmy.wallet.<firstID>.v2".
func Subject(firstID string) string { return "chemmy.wallet." + firstID + "." + Version }

// IsBatchSubject reports whether subject is a wallet batch's
// ("chemmy.wallet.<id>.v2").
func IsBatchSubject(subject string) bool {
	return strings.HasPrefix(subject, "chemmy.wallet.") && strings.HasSuffix(subject, "."+Version)
}

// Batch is evs (transfer_recorded events, sequence order, at least one)
// as one batch: the operator, time, currency, exponent and reference they
// all share written once and left unset in them, and each transfer's
// transfer_id left out when it is its event's event_id. evs is not
// changed. An empty evs, or an event that is not a transfer, is an error.
func Batch(evs []*eventsv1.WalletEvent) (*eventsv1.WalletEventBatch, error) {
	if len(evs) == 0 {
		return nil, errors.New("walletevents: an empty batch")
	}
	for _, e := range evs {
		if e.GetTransferRecorded() == nil {
			return nil, fmt.Errorf("walletevents: event %s is not a transfer", e.GetEventId())
		}
	}
	first, ft := evs[0], evs[0].GetTransferRecorded()
	sameOp, sameTime, sameCur, sameExp, sameRef := true, true, true, true, true
	for _, e := range evs[1:] {
		t := e.GetTransferRecorded()
		sameOp = sameOp && e.GetOperatorId() == first.GetOperatorId()
		sameTime = sameTime && proto.Equal(e.GetOccurTime(), first.GetOccurTime())
		sameCur = sameCur && t.GetCurrencyCode() == ft.GetCurrencyCode()
		sameExp = sameExp && (t.CurrencyExponent == nil) == (ft.CurrencyExponent == nil) && t.GetCurrencyExponent() == ft.GetCurrencyExponent()
		sameRef = sameRef && t.GetReference() == ft.GetReference()
	}
	b := &eventsv1.WalletEventBatch{Events: make([]*eventsv1.WalletEvent, len(evs))}
	if sameOp {
		b.OperatorId = first.GetOperatorId()
	}
	if sameTime {
		b.OccurTime = first.GetOccurTime()
	}
	if sameCur {
		b.CurrencyCode = ft.GetCurrencyCode()
	}
	if sameExp {
		b.CurrencyExponent = ft.CurrencyExponent
	}
	if sameRef {
		b.Reference = ft.GetReference()
	}
	for i, e := range evs {
		c := proto.CloneOf(e)
		t := c.GetTransferRecorded()
		if b.OperatorId != "" {
			c.OperatorId = ""
		}
		if b.OccurTime != nil {
			c.OccurTime = nil
		}
		if b.CurrencyCode != "" {
			t.CurrencyCode = ""
		}
		if b.CurrencyExponent != nil {
			t.CurrencyExponent = nil
		}
		if b.Reference != "" {
			t.Reference = ""
		}
		if t.TransferId == c.EventId {
			t.TransferId = ""
		}
		b.Events[i] = c
	}
	return b, nil
}

// Events is b's events made whole: each a copy of its event with the
// batch's set fields (operator_id, occur_time, currency_code,
// currency_exponent, reference) and, when unset, its transfer_id (its
// event_id) put back. A batch without events, or with an event that is
// not a transfer, is malformed: an error.
func Events(b *eventsv1.WalletEventBatch) ([]*eventsv1.WalletEvent, error) {
	if len(b.GetEvents()) == 0 {
		return nil, errors.New("walletevents: a batch without events")
	}
	out := make([]*eventsv1.WalletEvent, len(b.GetEvents()))
	for i, e := range b.GetEvents() {
		c := proto.CloneOf(e)
		t := c.GetTransferRecorded()
		if t == nil {
			return nil, fmt.Errorf("walletevents: event %d (%s) of a batch is not a transfer", i, c.GetEventId())
		}
		if b.GetOperatorId() != "" {
			c.OperatorId = b.GetOperatorId()
		}
		if b.GetOccurTime() != nil {
			c.OccurTime = proto.CloneOf(b.GetOccurTime())
		}
		if b.GetCurrencyCode() != "" {
			t.CurrencyCode = b.GetCurrencyCode()
		}
		if b.CurrencyExponent != nil {
			t.CurrencyExponent = proto.Int32(b.GetCurrencyExponent())
		}
		if b.GetReference() != "" {
			t.Reference = b.GetReference()
		}
		if t.TransferId == "" {
			t.TransferId = c.GetEventId()
		}
		out[i] = c
	}
	return out, nil
}

// Decode is the wallet events of one message of the stream, of either
// version: typ is its Chemmy-Event-Type header (empty: told by subject, a
// "chemmy.wallet.<id>.v2" subject being a batch), data its payload. A
// batch gives its events made whole (Events), a WalletEvent itself; a
// message of another type, or undecodable, an error.
func Decode(typ, subject string, data []byte) ([]*eventsv1.WalletEvent, error) {
	if typ == "" && strings.HasPrefix(subject, "chemmy.wallet.") {
		typ = EventType
		if IsBatchSubject(subject) {
			typ = BatchType
		}
	}
	switch typ {
	case BatchType:
		b := new(eventsv1.WalletEventBatch)
		if err := proto.Unmarshal(data, b); err != nil {
			return nil, fmt.Errorf("walletevents: %s: %w", subject, err)
		}
		return Events(b)
	case EventType:
		ev := new(eventsv1.WalletEvent)
		if err := proto.Unmarshal(data, ev); err != nil {
			return nil, fmt.Errorf("walletevents: %s: %w", subject, err)
		}
		return []*eventsv1.WalletEvent{ev}, nil
	}
	return nil, fmt.Errorf("walletevents: %s: not a wallet event (%s)", subject, typ)
}
