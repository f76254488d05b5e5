package e2e

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestWatchTableThroughGateway: the stream opens with the table as it
// stands, then follows every event in sequence, through the gateway.
func TestWatchTableThroughGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	created, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "watch-table"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	if _, err := c.table.JoinTable(as(t, "alice"), &tablev1.JoinTableRequest{RequestId: "j-alice", TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer bob-token")
	stream, err := c.table.WatchTable(ctx, &tablev1.WatchTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	snap := first.GetTable()
	if snap == nil || len(snap.GetSeats()) != 1 {
		t.Fatalf("first message %v, want the table with alice seated", first)
	}
	if _, err := c.table.JoinTable(as(t, "bob"), &tablev1.JoinTableRequest{RequestId: "j-bob", TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "bank", TableId: id, PlayerId: "alice", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var seq uint64
	for len(kinds) < 3 {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatalf("after %v: %v", kinds, err)
		}
		ev := msg.GetEvent()
		if ev == nil {
			t.Fatalf("a second snapshot: %v", msg)
		}
		if seq != 0 && ev.GetSequence() != seq+1 {
			t.Fatalf("sequence %d after %d", ev.GetSequence(), seq)
		}
		seq = ev.GetSequence()
		switch {
		case ev.GetPlayerSeated() != nil:
			kinds = append(kinds, "player_seated")
		case ev.GetBankOffered() != nil:
			kinds = append(kinds, "bank_offered")
		case ev.GetBankChanged() != nil:
			kinds = append(kinds, "bank_changed")
		default:
			t.Fatalf("unexpected event %v", ev)
		}
	}
	if kinds[0] != "player_seated" || kinds[1] != "bank_offered" || kinds[2] != "bank_changed" {
		t.Errorf("events %v", kinds)
	}
}
