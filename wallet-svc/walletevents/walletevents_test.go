package walletevents

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

var t0 = time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)

// transfer is a whole transfer_recorded event as wallet-svc records it
// (its transfer id its event id).
func transfer(id string, seq uint64, at time.Time, op, cur string, exp *int32, ref string, amount int64) *eventsv1.WalletEvent {
	return &eventsv1.WalletEvent{EventId: id, Sequence: seq, OccurTime: timestamppb.New(at), OperatorId: op,
		Payload: &eventsv1.WalletEvent_TransferRecorded{TransferRecorded: &eventsv1.TransferRecorded{
			TransferId: id, DebitAccountId: "hold:" + id, CreditAccountId: "player:b", Amount: amount, CurrencyCode: cur,
			CurrencyExponent: exp, Reason: "bet_lost", Reference: ref, DebitBalanceAfter: 0, CreditBalanceAfter: amount}}}
}

// TestBatchWritesSharedFieldsOnce: the fields every transfer shares are
// in the batch alone, each transfer keeps what is its own, and Events
// gives back the very events; a field they do not share stays in each.
func TestBatchWritesSharedFieldsOnce(t *testing.T) {
	two := proto.Int32(2)
	evs := []*eventsv1.WalletEvent{
		transfer("01A", 7, t0, "acme", "EUR", two, "coup-1", 100),
		transfer("01B", 8, t0, "acme", "EUR", two, "coup-1", 5),
	}
	b, err := Batch(evs)
	if err != nil {
		t.Fatal(err)
	}
	if b.GetOperatorId() != "acme" || !b.GetOccurTime().AsTime().Equal(t0) || b.GetCurrencyCode() != "EUR" || b.GetCurrencyExponent() != 2 || b.GetReference() != "coup-1" {
		t.Errorf("batch shares %v", b)
	}
	for i, e := range b.GetEvents() {
		tr := e.GetTransferRecorded()
		if e.GetOperatorId() != "" || e.GetOccurTime() != nil || tr.GetCurrencyCode() != "" || tr.CurrencyExponent != nil || tr.GetReference() != "" || tr.GetTransferId() != "" {
			t.Errorf("event %d keeps a shared field: %v", i, e)
		}
		if e.GetEventId() != evs[i].GetEventId() || e.GetSequence() != evs[i].GetSequence() || tr.GetAmount() != evs[i].GetTransferRecorded().GetAmount() {
			t.Errorf("event %d lost its own: %v", i, e)
		}
	}
	// Smaller than the events alone.
	var alone int
	for _, e := range evs {
		alone += proto.Size(e)
	}
	if proto.Size(b) >= alone {
		t.Errorf("batch %d bytes, the events alone %d", proto.Size(b), alone)
	}
	back, err := Events(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if !proto.Equal(back[i], evs[i]) {
			t.Errorf("event %d back\n got %v\nwant %v", i, back[i], evs[i])
		}
	}
	// evs unchanged by Batch.
	if evs[0].GetOperatorId() != "acme" || evs[1].GetTransferRecorded().GetTransferId() != "01B" {
		t.Errorf("Batch changed its input: %v", evs)
	}
}

// TestBatchKeepsWhatDiffers: fields the transfers do not share (time,
// operator, currency, exponent set on one only, reference) stay in each.
func TestBatchKeepsWhatDiffers(t *testing.T) {
	evs := []*eventsv1.WalletEvent{
		transfer("01A", 1, t0, "acme", "EUR", proto.Int32(2), "r1", 1),
		transfer("01B", 2, t0.Add(time.Millisecond), "", "JPY", nil, "r2", 2),
	}
	b, err := Batch(evs)
	if err != nil {
		t.Fatal(err)
	}
	if b.GetOperatorId() != "" || b.GetOccurTime() != nil || b.GetCurrencyCode() != "" || b.CurrencyExponent != nil || b.GetReference() != "" {
		t.Errorf("batch shares %v", b)
	}
	back, err := Events(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if !proto.Equal(back[i], evs[i]) {
			t.Errorf("event %d back\n got %v\nwant %v", i, back[i], evs[i])
		}
	}
}

// TestDecodeBothVersions: a version 1 message (a WalletEvent alone, type
// header or none) and a version 2 batch (no header: told by its
// subject) give their events whole; a message of another type, an empty
// batch, a batch holding a limits change or one cut short are errors.
func TestDecodeBothVersions(t *testing.T) {
	one := transfer("01A", 1, t0, "acme", "EUR", proto.Int32(2), "d", 500)
	v1, _ := proto.Marshal(one)
	for _, typ := range []string{"chemmy.events.v1.WalletEvent", ""} {
		got, err := Decode(typ, "chemmy.wallet.01A.transfer_recorded", v1)
		if err != nil || len(got) != 1 || !proto.Equal(got[0], one) {
			t.Errorf("v1 (type %q): %v, %v", typ, got, err)
		}
	}
	evs := []*eventsv1.WalletEvent{one, transfer("01B", 2, t0, "acme", "EUR", proto.Int32(2), "d", 7)}
	b, err := Batch(evs)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := proto.Marshal(b)
	if s := Subject("01A"); s != "chemmy.wallet.01A.v2" || !IsBatchSubject(s) || IsBatchSubject("chemmy.table.T.v2") {
		t.Errorf("Subject %q", s)
	}
	for _, typ := range []string{"", "chemmy.events.v1.WalletEventBatch"} {
		got, err := Decode(typ, "chemmy.wallet.01A.v2", v2)
		if err != nil || len(got) != 2 || !proto.Equal(got[0], evs[0]) || !proto.Equal(got[1], evs[1]) {
			t.Errorf("v2 (type %q): %v, %v", typ, got, err)
		}
	}
	limits, _ := proto.Marshal(&eventsv1.WalletEventBatch{Events: []*eventsv1.WalletEvent{{EventId: "L",
		Payload: &eventsv1.WalletEvent_PlayerLimitsChanged{PlayerLimitsChanged: &eventsv1.PlayerLimitsChanged{}}}}})
	for name, c := range map[string]struct {
		typ, subject string
		data         []byte
	}{
		"a table's":       {"chemmy.events.v1.TableEvent", "chemmy.table.T.bet_placed", v1},
		"untyped table's": {"", "chemmy.table.T.v2", v2},
		"empty batch":     {"", "chemmy.wallet.X.v2", nil},
		"limits in batch": {"", "chemmy.wallet.L.v2", limits},
		"cut short":       {"", "chemmy.wallet.01A.v2", v2[:len(v2)-2]},
	} {
		if got, err := Decode(c.typ, c.subject, c.data); err == nil || !strings.HasPrefix(err.Error(), "walletevents: ") {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	if _, err := Batch(nil); err == nil {
		t.Error("Batch(nil) accepted")
	}
	if _, err := Batch([]*eventsv1.WalletEvent{{EventId: "L"}}); err == nil {
		t.Error("Batch of a non-transfer accepted")
	}
}
