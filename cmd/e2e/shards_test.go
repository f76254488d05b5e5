package e2e

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/shard"
)

// TestShardedTables runs three table-svc shards, each with its shoe-svc,
// behind one gateway and one wallet: tables spread over the shards by
// their CreateTable request, every call on a table reaches its shard (a
// coup plays on each), a table's shoe lives on the table's shard, a
// prepared shoe takes its table to its own shard, ListTables pages over
// all shards, and ids naming no shard are refused.
func TestShardedTables(t *testing.T) {
	const shards = 3
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, Shards: shards})
	if len(st.TableAddrs) != shards || len(st.ShoeAddrs) != shards {
		t.Fatalf("stack: %d table-svc, %d shoe-svc; want %d each", len(st.TableAddrs), len(st.ShoeAddrs), shards)
	}
	c := dial(t, st.GatewayAddr)
	players := []string{"alice", "bob", "carol"}
	c.fund(t, 100000, players...)
	before := sum(c.balances(t))

	// Twelve tables: the shard of each follows from its request.
	var ids []string
	byShard := map[int][]string{}
	for i := range 12 {
		resp, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: fmt.Sprintf("shard-table-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		id := resp.GetTable().GetTableId()
		k, ok := shard.Of(id)
		if !ok || !strings.HasPrefix(id, shard.Prefix(k)) {
			t.Fatalf("table id %q has no shard prefix", id)
		}
		ids = append(ids, id)
		byShard[k] = append(byShard[k], id)

		// A retry lands on the same shard and answers the same table.
		again, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: fmt.Sprintf("shard-table-%d", i)})
		if err != nil || again.GetTable().GetTableId() != id {
			t.Fatalf("retried CreateTable: %v, %q; want %q", err, again.GetTable().GetTableId(), id)
		}
		// The table's shoe is its shard's.
		if sh := resp.GetTable().GetShoeId(); sh != "" {
			if got, _ := shard.Of(sh); got != k {
				t.Fatalf("table %s (shard %d) has shoe %s of shard %d", id, k, sh, got)
			}
			if _, err := c.shoe.GetShoe(as(t, "auditor"), &shoev1.GetShoeRequest{ShoeId: sh}); err != nil {
				t.Fatalf("GetShoe %s through the gateway: %v", sh, err)
			}
		}
	}
	if len(byShard) != shards {
		t.Fatalf("tables by shard: %v; want every one of the %d shards used", byShard, shards)
	}

	// A coup on one table of each shard.
	for k := range shards {
		id := byShard[k][0]
		tbl := playCoup(t, c, id, players)
		if !tbl.GetLastCoup().GetSettled() {
			t.Fatalf("shard %d: coup not settled: %v", k, tbl.GetLastCoup())
		}
		// A coup's id names its shard too (ListCardFates by coup_id).
		if got, _ := shard.Of(tbl.GetLastCoup().GetCoupId()); got != k || !strings.HasPrefix(tbl.GetLastCoup().GetCoupId(), shard.Prefix(k)) {
			t.Errorf("coup %q of a table of shard %d", tbl.GetLastCoup().GetCoupId(), k)
		}
	}
	if after := sum(c.balances(t)); after != before {
		t.Errorf("money: %d before, %d after the coups; the wallet is shared by every shard", before, after)
	}

	// ListTables: every table once, over pages of five.
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("ListTables does not end")
		}
		resp, err := c.table.ListTables(as(t, "croupier"), &tablev1.ListTablesRequest{PageSize: 5, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(resp.GetTables()); n > 5 {
			t.Fatalf("page of %d tables, asked for 5", n)
		}
		for _, tbl := range resp.GetTables() {
			if seen[tbl.GetTableId()] {
				t.Fatalf("table %s listed twice", tbl.GetTableId())
			}
			seen[tbl.GetTableId()] = true
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("table %s not listed", id)
		}
	}
	if len(seen) != len(ids) {
		t.Errorf("listed %d tables, made %d", len(seen), len(ids))
	}
	_, err := c.table.ListTables(as(t, "croupier"), &tablev1.ListTablesRequest{PageToken: "not-a-token"})
	wantReason(t, err, codes.InvalidArgument, gateway.ReasonPageTokenInvalid)

	// Ids naming a shard this deployment does not have.
	_, err = c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: shard.Prefix(7) + "01JD0Q7Z8V9W5M3K2H1G0F9E8D"})
	wantReason(t, err, codes.NotFound, gateway.ReasonShardNotFound)
	_, err = c.shoe.GetShoe(as(t, "croupier"), &shoev1.GetShoeRequest{ShoeId: "s01-x"})
	wantReason(t, err, codes.NotFound, gateway.ReasonShardNotFound)

	// A prepared shoe is made on one shard; the table that names it is
	// made there too.
	order := make([]string, 0, 40)
	for len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "shard-order", Cards: order, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	shoeID := sh.GetShoe().GetShoeId()
	ks, _ := shard.Of(shoeID)
	resp, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "shard-prepared", ShoeId: shoeID})
	if err != nil {
		t.Fatal(err)
	}
	if kt, _ := shard.Of(resp.GetTable().GetTableId()); kt != ks {
		t.Errorf("table on prepared shoe %s (shard %d) made on shard %d", shoeID, ks, kt)
	}

	// WatchTable follows a table to its shard.
	last := byShard[shards-1][0]
	stream, err := c.table.WatchTable(as(t, "croupier"), &tablev1.WatchTableRequest{TableId: last})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.Recv()
	if errors.Is(err, io.EOF) || err != nil {
		t.Fatalf("WatchTable %s: %v", last, err)
	}
	if got := msg.GetTable().GetTableId(); got != last {
		t.Errorf("WatchTable snapshot of %q, want %q", got, last)
	}
}

// playCoup seats players at table id, the first banks 1000, the others bet
// 600 and 400, and any decision is answered "draw"; it returns the table
// after the coup.
func playCoup(t *testing.T, c *client, id string, players []string) *tablev1.Table {
	t.Helper()
	for _, p := range players {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "j-" + id + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, players[0]), &tablev1.AcceptBankRequest{RequestId: "a-" + id, TableId: id, PlayerId: players[0], Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	var tbl *tablev1.Table
	for i, p := range players[1:] {
		resp, err := c.table.PlaceBet(as(t, p), &tablev1.PlaceBetRequest{RequestId: "b-" + id + p, TableId: id, PlayerId: p, Amount: int64(600 - 200*i)})
		if err != nil {
			t.Fatal(err)
		}
		tbl = resp.GetTable()
	}
	for k := 0; tbl.GetState() == tablev1.TableState_TABLE_STATE_DECISION; k++ {
		who := tbl.GetCoup().GetDecisionPlayerId()
		d, err := c.table.DecideDraw(as(t, who), &tablev1.DecideDrawRequest{RequestId: fmt.Sprintf("d-%s-%d", id, k), TableId: id, PlayerId: who, Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
		if err != nil {
			t.Fatal(err)
		}
		tbl = d.GetTable()
	}
	return tbl
}

// wantReason fails unless err is a status with code and an ErrorInfo
// reason.
func wantReason(t *testing.T, err error, code codes.Code, reason string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Fatalf("got %v, want %v %s", err, code, reason)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() == reason {
			return
		}
	}
	t.Fatalf("got %v, want reason %s", err, reason)
}
