// Package tableevents writes and reads table events as chemmy publishes
// them to NATS JetStream (the published-event contract, docs/events.md).
//
// Version 2 (this one): the events of one table-svc save (one bbolt
// transaction) are ONE message, a chemmy.events.v1.TableEventBatch on
// "chemmy.table.<table_id>.v2" (BatchSubject), with headers
// Chemmy-Event-Kinds (Kinds) and Nats-Msg-Id, its first event's event_id;
// no Chemmy-Event-Type (the subject names the type; Decode reads a batch
// with or without it). The fields its
// events share are written once in the batch (Batch) and copied back into
// each event by a reader (Events). A one-player event (a reality check and
// its answer) is published alone, a chemmy.events.v1.TableEvent on
// "chemmy.player.<player_id>.<kind>".
//
// Version 1 published each table event alone on
// "chemmy.table.<table_id>.<kind>"; Decode reads both, so a reader of a
// stream written by both versions gets every event.
package tableevents

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// Payload types of the Chemmy-Event-Type header.
var (
	// BatchType is "chemmy.events.v1.TableEventBatch".
	BatchType = string((&eventsv1.TableEventBatch{}).ProtoReflect().Descriptor().FullName())
	// EventType is "chemmy.events.v1.TableEvent".
	EventType = string((&eventsv1.TableEvent{}).ProtoReflect().Descriptor().FullName())
)

// Version is the last token of a batch's subject: the version of the
// published table-event contract.
const Version = "v2"

// BatchSubject is the subject of table tableID's batches:
// "chemmy.table.<tableID>.v2".
func BatchSubject(tableID string) string { return "chemmy.table." + tableID + "." + Version }

// TableSubjects is the filter of every message of table tableID, of
// either version: "chemmy.table.<tableID>.>".
func TableSubjects(tableID string) string { return "chemmy.table." + tableID + ".>" }

// payloadOneof is the "payload" oneof of TableEvent.
var payloadOneof = (&eventsv1.TableEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("payload")

// Kind is the kind of ev: the snake_case name of its payload field
// ("bet_placed"); "unknown" when it has none.
func Kind(ev *eventsv1.TableEvent) string {
	if fd := ev.ProtoReflect().WhichOneof(payloadOneof); fd != nil {
		return string(fd.Name())
	}
	return "unknown"
}

// Subject is ev's subject in version 1, "chemmy.table.<table_id>.<kind>":
// how `chemmy events` names each event of a batch.
func Subject(ev *eventsv1.TableEvent) string {
	return "chemmy.table." + ev.GetTableId() + "." + Kind(ev)
}

// Kinds is the Chemmy-Event-Kinds header of a batch of evs: their kinds,
// each once, in order of first appearance, comma-separated.
func Kinds(evs []*eventsv1.TableEvent) string {
	var b strings.Builder
	seen := make([]string, 0, len(evs))
	for _, ev := range evs {
		k := Kind(ev)
		dup := false
		for _, s := range seen {
			if s == k {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		seen = append(seen, k)
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
	}
	return b.String()
}

// Batch is the batch of evs, events of one table in sequence order (at
// least one): the fields they all share are set once in the batch and
// left unset in its events (a coup id shared but by events of no coup,
// with coupless_events; times that differ, as offsets from the first);
// each event's id is cut of the prefix it shares with the previous one.
// evs are not changed (the batch's events are new messages sharing their
// payloads). Events of different tables, or none: an error.
func Batch(evs []*eventsv1.TableEvent) (*eventsv1.TableEventBatch, error) {
	if len(evs) == 0 {
		return nil, errors.New("tableevents: an empty batch")
	}
	first := evs[0]
	b := &eventsv1.TableEventBatch{TableId: first.GetTableId(), OperatorId: first.GetOperatorId(),
		CurrencyCode: first.GetCurrencyCode(), CurrencyExponent: first.CurrencyExponent,
		OccurTime: first.GetOccurTime(), Certification: first.GetCertification()}
	sameTime := true
	for _, ev := range evs {
		if ev.GetTableId() != b.TableId {
			return nil, fmt.Errorf("tableevents: events of tables %q and %q in one batch", b.TableId, ev.GetTableId())
		}
		if ev.GetOperatorId() != b.OperatorId {
			b.OperatorId = ""
		}
		if ev.GetCurrencyCode() != b.CurrencyCode {
			b.CurrencyCode = ""
		}
		if ev.CurrencyExponent == nil || b.CurrencyExponent == nil || *ev.CurrencyExponent != *b.CurrencyExponent {
			b.CurrencyExponent = nil
		}
		if ev.GetOccurTime() == nil {
			b.OccurTime = nil
		} else if b.OccurTime != nil && !proto.Equal(ev.GetOccurTime(), b.OccurTime) {
			sameTime = false
		}
		b.Certification = b.Certification && ev.GetCertification()
		// The coup: the one coup id of the events that have one.
		switch c := ev.GetCoupId(); {
		case c == "":
		case b.CoupId == "":
			b.CoupId = c
		case c != b.CoupId:
			b.CoupId = "\x00" // two coups: each event keeps its own
		}
	}
	if b.CoupId == "\x00" {
		b.CoupId = ""
	}
	if b.OccurTime != nil && !sameTime {
		base := b.OccurTime.AsTime()
		b.OccurOffsetsNs = make([]int64, len(evs))
		for i, ev := range evs {
			b.OccurOffsetsNs[i] = int64(ev.GetOccurTime().AsTime().Sub(base))
		}
	}
	b.Events = make([]*eventsv1.TableEvent, len(evs))
	if len(evs) > 1 {
		b.EventIdPrefixes = make([]uint32, len(evs))
	}
	for i, ev := range evs {
		e := &eventsv1.TableEvent{EventId: ev.GetEventId(), Sequence: ev.GetSequence(), Payload: ev.Payload}
		if i > 0 {
			n := commonPrefix(evs[i-1].GetEventId(), e.EventId)
			b.EventIdPrefixes[i], e.EventId = uint32(n), e.EventId[n:]
		}
		if b.OperatorId == "" {
			e.OperatorId = ev.GetOperatorId()
		}
		if b.CurrencyCode == "" {
			e.CurrencyCode = ev.GetCurrencyCode()
		}
		if b.CurrencyExponent == nil {
			e.CurrencyExponent = ev.CurrencyExponent
		}
		if b.CoupId == "" {
			e.CoupId = ev.GetCoupId()
		} else if ev.GetCoupId() == "" {
			b.CouplessEvents = append(b.CouplessEvents, uint32(i))
		}
		if b.OccurTime == nil {
			e.OccurTime = ev.GetOccurTime()
		}
		if !b.Certification {
			e.Certification = ev.GetCertification()
		}
		b.Events[i] = e
	}
	return b, nil
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Events are b's events made whole: the batch's set fields copied into
// each, its coupless events left without the coup, each time the batch's
// plus its offset, each event id's prefix put back (b's events are
// changed and returned; they share the batch's currency_exponent). A
// batch whose lists do not fit its events: an error.
func Events(b *eventsv1.TableEventBatch) ([]*eventsv1.TableEvent, error) {
	evs := b.GetEvents()
	if n := len(b.GetOccurOffsetsNs()); n > 0 && (n != len(evs) || b.GetOccurTime() == nil) {
		return nil, fmt.Errorf("tableevents: a batch of %d events with %d time offsets", len(evs), n)
	}
	if n := len(b.GetEventIdPrefixes()); n > 0 && n != len(evs) {
		return nil, fmt.Errorf("tableevents: a batch of %d events with %d id prefixes", len(evs), n)
	}
	coupless := b.GetCouplessEvents()
	prev := ""
	for i, e := range evs {
		if p := b.GetEventIdPrefixes(); len(p) > 0 {
			if int(p[i]) > len(prev) {
				return nil, fmt.Errorf("tableevents: event %d of a batch shares %d characters of a %d-character id", i, p[i], len(prev))
			}
			e.EventId = prev[:p[i]] + e.EventId
		}
		prev = e.EventId
		e.TableId = b.GetTableId()
		if b.GetOperatorId() != "" {
			e.OperatorId = b.GetOperatorId()
		}
		if b.GetCurrencyCode() != "" {
			e.CurrencyCode = b.GetCurrencyCode()
		}
		if b.CurrencyExponent != nil {
			e.CurrencyExponent = b.CurrencyExponent
		}
		if b.GetCoupId() != "" {
			if len(coupless) > 0 && coupless[0] == uint32(i) {
				coupless = coupless[1:]
			} else {
				e.CoupId = b.GetCoupId()
			}
		}
		if t := b.GetOccurTime(); t != nil {
			if off := b.GetOccurOffsetsNs(); len(off) > 0 {
				e.OccurTime = timestamppb.New(t.AsTime().Add(time.Duration(off[i])))
			} else {
				e.OccurTime = t
			}
		}
		if b.GetCertification() {
			e.Certification = true
		}
	}
	if len(coupless) > 0 {
		return nil, fmt.Errorf("tableevents: coupless events %v not in a batch of %d, or out of order", coupless, len(evs))
	}
	return evs, nil
}

// Decode is the table events of one message of the stream, of either
// version: typ is its Chemmy-Event-Type header (empty: told by subject,
// a "chemmy.table.<id>.v2" subject being a batch, another of
// "chemmy.table." or "chemmy.player." an event alone), data its payload. A
// batch gives its events made whole (Events), a TableEvent itself; a
// message of another type (a wallet's, a shoe's), or undecodable, an
// error.
func Decode(typ, subject string, data []byte) ([]*eventsv1.TableEvent, error) {
	if typ == "" {
		switch {
		case strings.HasPrefix(subject, "chemmy.table.") && strings.HasSuffix(subject, "."+Version):
			typ = BatchType
		case strings.HasPrefix(subject, "chemmy.table."), strings.HasPrefix(subject, "chemmy.player."):
			typ = EventType
		}
	}
	switch typ {
	case BatchType:
		b := new(eventsv1.TableEventBatch)
		if err := proto.Unmarshal(data, b); err != nil {
			return nil, fmt.Errorf("tableevents: %s: %w", subject, err)
		}
		return Events(b)
	case EventType:
		ev := new(eventsv1.TableEvent)
		if err := proto.Unmarshal(data, ev); err != nil {
			return nil, fmt.Errorf("tableevents: %s: %w", subject, err)
		}
		return []*eventsv1.TableEvent{ev}, nil
	}
	return nil, fmt.Errorf("tableevents: %s: not a table event (%s)", subject, typ)
}
