package main

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// fakeMsg is a stream message as a consumer gets it: subject, headers,
// payload (the rest of jetstream.Msg unused).
type fakeMsg struct {
	jetstream.Msg
	subject string
	header  nats.Header
	data    []byte
}

func (m fakeMsg) Subject() string                           { return m.subject }
func (m fakeMsg) Headers() nats.Header                      { return m.header }
func (m fakeMsg) Data() []byte                              { return m.data }
func (m fakeMsg) Metadata() (*jetstream.MsgMetadata, error) { return &jetstream.MsgMetadata{}, nil }

// TestMessageEventsWallet: a wallet message of either version prints as
// version 1 published each transfer alone: a version 1 WalletEvent as
// it is, a version 2 WalletEventBatch (no type header) as its transfers,
// one line each, with the batch's shared fields and the transfer ids
// put back.
func TestMessageEventsWallet(t *testing.T) {
	at := timestamppb.New(timestamppb.Now().AsTime().Truncate(1e9))
	v1, _ := proto.Marshal(&eventsv1.WalletEvent{EventId: "T0", Sequence: 1, OccurTime: at, OperatorId: "acme",
		Payload: &eventsv1.WalletEvent_TransferRecorded{TransferRecorded: &eventsv1.TransferRecorded{
			TransferId: "T0", DebitAccountId: "external:funding", CreditAccountId: "player:bob", Amount: 500, CurrencyCode: "EUR", Reason: "deposit", Reference: "d1"}}})
	// Written by hand as wallet-svc writes a batch: the shared fields
	// once, each transfer without them and without its transfer_id.
	v2, _ := proto.Marshal(&eventsv1.WalletEventBatch{OperatorId: "acme", OccurTime: at, CurrencyCode: "EUR", CurrencyExponent: proto.Int32(2), Reference: "coup-7",
		Events: []*eventsv1.WalletEvent{
			{EventId: "T1", Sequence: 2, Payload: &eventsv1.WalletEvent_TransferRecorded{TransferRecorded: &eventsv1.TransferRecorded{
				DebitAccountId: "hold:p", CreditAccountId: "player:b", Amount: 100, Reason: "bet_lost", DebitBalanceAfter: 0, CreditBalanceAfter: 600}}},
			{EventId: "T2", Sequence: 3, Payload: &eventsv1.WalletEvent_TransferRecorded{TransferRecorded: &eventsv1.TransferRecorded{
				DebitAccountId: "player:b", CreditAccountId: "house:commission", Amount: 5, Reason: "commission", DebitBalanceAfter: 595, CreditBalanceAfter: 5}}},
		}})
	type line struct {
		Subject, Type, Kind, Error string
		Event                      map[string]any
	}
	var got []line
	for _, m := range []fakeMsg{
		{subject: "chemmy.wallet.T0.transfer_recorded", header: nats.Header{"Chemmy-Event-Type": {"chemmy.events.v1.WalletEvent"}, "Chemmy-Event-Kind": {"transfer_recorded"}}, data: v1},
		{subject: "chemmy.wallet.T1.v2", header: nats.Header{}, data: v2},
	} {
		for _, e := range messageEvents(m) {
			b, err := json.Marshal(e.printed)
			if err != nil {
				t.Fatal(err)
			}
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				t.Fatal(err)
			}
			got = append(got, l)
			if !ofOperator(e.msg, "acme") || ofOperator(e.msg, "casino-x") {
				t.Errorf("event %s: not acme's alone", b)
			}
		}
	}
	want := []struct {
		id, ref, cur, amount, seq string
	}{{"T0", "d1", "EUR", "500", "1"}, {"T1", "coup-7", "EUR", "100", "2"}, {"T2", "coup-7", "EUR", "5", "3"}}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		l := got[i]
		tr, _ := l.Event["transferRecorded"].(map[string]any)
		if l.Error != "" || l.Type != "chemmy.events.v1.WalletEvent" || l.Kind != "transfer_recorded" || l.Subject != "chemmy.wallet."+w.id+".transfer_recorded" ||
			l.Event["eventId"] != w.id || l.Event["sequence"] != w.seq || l.Event["operatorId"] != "acme" || l.Event["occurTime"] != at.AsTime().Format("2006-01-02T15:04:05Z") ||
			tr["transferId"] != w.id || tr["reference"] != w.ref || tr["currencyCode"] != w.cur || tr["amount"] != w.amount {
			t.Errorf("line %d: %+v", i, l)
		}
	}
	if e := got[2].Event["transferRecorded"].(map[string]any)["currencyExponent"]; e != float64(2) {
		t.Errorf("exponent %v, want 2", e)
	}
	// A batch cut short prints its error, one line.
	if evs := messageEvents(fakeMsg{subject: "chemmy.wallet.T1.v2", header: nats.Header{}, data: v2[:len(v2)-3]}); len(evs) != 1 || evs[0].printed.Error == "" {
		t.Errorf("a broken batch: %+v", evs)
	}
}
