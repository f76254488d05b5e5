package tableevents

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
)

func exp(x int32) *int32 { return &x }

// coup is three events of one save of table T1 sharing everything but
// their ids, sequences and payloads, then one of another coup at another
// time.
func coup() []*eventsv1.TableEvent {
	at := timestamppb.New(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
	ev := func(id string, seq uint64, p any) *eventsv1.TableEvent {
		e := &eventsv1.TableEvent{EventId: id, TableId: "T1", CoupId: "C1", Sequence: seq, OccurTime: at,
			Certification: true, CurrencyCode: "EUR", CurrencyExponent: exp(2), OperatorId: "op"}
		switch p := p.(type) {
		case *eventsv1.BetPlaced:
			e.Payload = &eventsv1.TableEvent_BetPlaced{BetPlaced: p}
		case *eventsv1.CardDealt:
			e.Payload = &eventsv1.TableEvent_CardDealt{CardDealt: p}
		case *eventsv1.CoupResulted:
			e.Payload = &eventsv1.TableEvent_CoupResulted{CoupResulted: p}
		}
		return e
	}
	return []*eventsv1.TableEvent{
		ev("E1", 7, &eventsv1.BetPlaced{PlayerId: "bob", Amount: 300}),
		ev("E2", 8, &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER, Card: &shoev1.Card{FaceDown: true}, Position: 1}),
		ev("E3", 9, &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER, Card: &shoev1.Card{FaceDown: true}, Position: 1}),
		ev("E4", 10, &eventsv1.CoupResulted{Outcome: eventsv1.Outcome_OUTCOME_BANK_WINS, PlayerTotal: 3, BankerTotal: 9}),
	}
}

// roundTrip is evs batched, marshalled, decoded as a reader does.
func roundTrip(t *testing.T, evs []*eventsv1.TableEvent) (*eventsv1.TableEventBatch, []*eventsv1.TableEvent) {
	t.Helper()
	want := make([]*eventsv1.TableEvent, len(evs))
	for i, ev := range evs {
		want[i] = proto.Clone(ev).(*eventsv1.TableEvent)
	}
	b, err := Batch(evs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if !proto.Equal(evs[i], want[i]) {
			t.Fatalf("Batch changed event %d: %v", i, evs[i])
		}
	}
	data, err := proto.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(BatchType, BatchSubject("T1"), data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events back, want %d", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("event %d\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	return b, got
}

// TestBatchSharesFields: the fields a save's events share are written once
// in the batch, none in its events, and a reader gets each event whole.
func TestBatchSharesFields(t *testing.T) {
	evs := coup()[:3]
	b, _ := roundTrip(t, evs)
	if b.GetTableId() != "T1" || b.GetCoupId() != "C1" || b.GetOperatorId() != "op" || b.GetCurrencyCode() != "EUR" ||
		b.GetCurrencyExponent() != 2 || !b.GetCertification() || b.GetOccurTime() == nil {
		t.Errorf("batch %v", b)
	}
	for _, e := range b.GetEvents() {
		if e.GetTableId() != "" || e.GetCoupId() != "" || e.GetOperatorId() != "" || e.GetCurrencyCode() != "" ||
			e.CurrencyExponent != nil || e.GetCertification() || e.GetOccurTime() != nil || e.GetEventId() == "" || e.GetSequence() == 0 {
			t.Errorf("batched event %v repeats the batch's fields or lost its own", e)
		}
	}
	// Smaller than the events one by one, each with its own copy.
	one := 0
	for _, ev := range coup()[:3] {
		one += proto.Size(ev)
	}
	if n := proto.Size(b); n >= one {
		t.Errorf("batch %d bytes, events alone %d", n, one)
	}
}

// TestBatchKeepsWhatDiffers: a field the events do not all share stays in
// each event and the batch leaves it unset; a coup shared but by
// table-level events, and times that differ, are written once with the
// exceptions and offsets; two coups leave each event its own.
func TestBatchKeepsWhatDiffers(t *testing.T) {
	evs := coup()
	evs[3].CoupId = ""                                                           // a table-level event after the coup's
	evs[3].OccurTime = timestamppb.New(evs[0].GetOccurTime().AsTime().Add(1500)) // 1.5 µs later
	evs[2].Certification = false
	evs[1].CurrencyExponent = nil
	b, _ := roundTrip(t, evs)
	if b.GetCertification() || b.CurrencyExponent != nil {
		t.Errorf("batch %v", b)
	}
	if b.GetOperatorId() != "op" || b.GetCurrencyCode() != "EUR" || b.GetCoupId() != "C1" || !slices.Equal(b.GetCouplessEvents(), []uint32{3}) {
		t.Errorf("batch %v: shared fields lost", b)
	}
	if !b.GetOccurTime().AsTime().Equal(evs[0].GetOccurTime().AsTime()) || !slices.Equal(b.GetOccurOffsetsNs(), []int64{0, 0, 0, 1500}) {
		t.Errorf("batch times %v %v", b.GetOccurTime(), b.GetOccurOffsetsNs())
	}
	evs = coup()
	evs[2].CoupId = "C2"
	evs[0].CoupId = ""
	b, _ = roundTrip(t, evs)
	if b.GetCoupId() != "" || len(b.GetCouplessEvents()) != 0 || b.GetEvents()[1].GetCoupId() != "C1" || b.GetEvents()[2].GetCoupId() != "C2" {
		t.Errorf("two coups in one batch: %v", b)
	}
	evs = coup()
	evs[1].OccurTime = nil
	if b, _ = roundTrip(t, evs); b.GetOccurTime() != nil || len(b.GetOccurOffsetsNs()) != 0 {
		t.Errorf("an event without a time: %v", b)
	}
}

// TestBatchCutsIDPrefixes: ULIDs made in one save share their first
// characters; each is cut of those it shares with the previous and put
// back whole.
func TestBatchCutsIDPrefixes(t *testing.T) {
	evs := coup()
	ids := []string{"01M8VHC9R0BBMCC93KZF6XDPN9", "01M8VHC9R0BBMCC93KZH5JHYVN", "01M8VHC9R0BBMCC93KZR8RAJWA", "01M8VHC9T6Q305GVSG1FXA3WGN"}
	for i, id := range ids {
		evs[i].EventId = id
	}
	b, _ := roundTrip(t, evs)
	if !slices.Equal(b.GetEventIdPrefixes(), []uint32{0, 19, 19, 8}) || b.GetEvents()[0].GetEventId() != ids[0] || b.GetEvents()[1].GetEventId() != "H5JHYVN" {
		t.Errorf("prefixes %v, events %v", b.GetEventIdPrefixes(), b.GetEvents())
	}
}

// TestEventsRefusesBadLists: a batch whose lists do not fit its events is
// refused, not read wrong.
func TestEventsRefusesBadLists(t *testing.T) {
	for name, change := range map[string]func(b *eventsv1.TableEventBatch){
		"offsets":          func(b *eventsv1.TableEventBatch) { b.OccurOffsetsNs = []int64{1} },
		"offsets, no time": func(b *eventsv1.TableEventBatch) { b.OccurTime, b.OccurOffsetsNs = nil, []int64{0, 0, 0, 0} },
		"prefixes":         func(b *eventsv1.TableEventBatch) { b.EventIdPrefixes = []uint32{0, 1} },
		"long prefix":      func(b *eventsv1.TableEventBatch) { b.EventIdPrefixes = []uint32{0, 9, 0, 0} },
		"coupless":         func(b *eventsv1.TableEventBatch) { b.CouplessEvents = []uint32{7} },
		"coupless order":   func(b *eventsv1.TableEventBatch) { b.CouplessEvents = []uint32{2, 1} },
	} {
		b, err := Batch(coup())
		if err != nil {
			t.Fatal(err)
		}
		change(b)
		if _, err := Events(b); err == nil {
			t.Errorf("%s: accepted %v", name, b)
		}
	}
}

// TestBatchCoversEveryField: every field of TableEvent set on two events
// comes back from a batch (a field added to TableEvent and not handled
// by Batch fails here).
func TestBatchCoversEveryField(t *testing.T) {
	a, c := new(eventsv1.TableEvent), new(eventsv1.TableEvent)
	fields := a.ProtoReflect().Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
			continue // the payload
		}
		for j, m := range []*eventsv1.TableEvent{a, c} {
			var v protoreflect.Value
			switch fd.Kind() {
			case protoreflect.StringKind:
				v = protoreflect.ValueOfString(string(fd.Name()) + "-" + string(rune('a'+j)))
			case protoreflect.Uint64Kind:
				v = protoreflect.ValueOfUint64(uint64(10 + j))
			case protoreflect.Int32Kind:
				v = protoreflect.ValueOfInt32(int32(3 + j))
			case protoreflect.BoolKind:
				v = protoreflect.ValueOfBool(true)
			case protoreflect.MessageKind:
				v = protoreflect.ValueOfMessage(timestamppb.New(time.Unix(int64(100+j), 0)).ProtoReflect())
			default:
				t.Fatalf("field %s of kind %s: teach this test and Batch about it", fd.Name(), fd.Kind())
			}
			m.ProtoReflect().Set(fd, v)
		}
	}
	c.TableId = a.TableId
	a.Payload = &eventsv1.TableEvent_BettingReopened{BettingReopened: &eventsv1.BettingReopened{}}
	c.Payload = &eventsv1.TableEvent_BettingReopened{BettingReopened: &eventsv1.BettingReopened{}}
	roundTrip(t, []*eventsv1.TableEvent{a, c})
	roundTrip(t, []*eventsv1.TableEvent{a})
}

// TestBatchRefusesMixedTables: a batch is one table's.
func TestBatchRefusesMixedTables(t *testing.T) {
	evs := coup()
	evs[1].TableId = "T2"
	if _, err := Batch(evs); err == nil {
		t.Error("a batch of two tables' events")
	}
	if _, err := Batch(nil); err == nil {
		t.Error("an empty batch")
	}
}

// TestKinds: each kind once, in order of first appearance.
func TestKinds(t *testing.T) {
	if got := Kinds(coup()); got != "bet_placed,card_dealt,coup_resulted" {
		t.Errorf("Kinds = %q", got)
	}
	if got := Kind(&eventsv1.TableEvent{}); got != "unknown" {
		t.Errorf("Kind of no payload = %q", got)
	}
	if got := Subject(coup()[1]); got != "chemmy.table.T1.card_dealt" {
		t.Errorf("Subject = %q", got)
	}
}

// TestDecodeBothVersions: a version 1 message (one TableEvent on
// chemmy.table.<id>.<kind>) and a batch decode by their type header, or
// without it by their subject; another service's message is refused.
func TestDecodeBothVersions(t *testing.T) {
	ev := coup()[0]
	one, _ := proto.Marshal(ev)
	for _, typ := range []string{EventType, ""} {
		got, err := Decode(typ, Subject(ev), one)
		if err != nil || len(got) != 1 || !proto.Equal(got[0], ev) {
			t.Errorf("version 1, type %q: %v, %v", typ, got, err)
		}
	}
	b, _ := Batch(coup())
	data, _ := proto.Marshal(b)
	got, err := Decode("", BatchSubject("T1"), data)
	if err != nil || len(got) != 4 || got[3].GetSequence() != 10 || got[3].GetTableId() != "T1" {
		t.Errorf("batch by subject: %v, %v", got, err)
	}
	if _, err := Decode("chemmy.events.v1.WalletEvent", "chemmy.wallet.X.transfer_recorded", one); err == nil ||
		!strings.Contains(err.Error(), "not a table event") {
		t.Errorf("a wallet event decoded as a table's: %v", err)
	}
	// A wallet batch has no type header either: its subject says it is
	// not a table's.
	if _, err := Decode("", "chemmy.wallet.X.v2", one); err == nil || !strings.Contains(err.Error(), "not a table event") {
		t.Errorf("a wallet batch decoded as a table's: %v", err)
	}
	if _, err := Decode(BatchType, BatchSubject("T1"), []byte{0xff}); err == nil {
		t.Error("garbage decoded")
	}
}
