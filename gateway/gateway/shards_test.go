package gateway

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestPageTokens(t *testing.T) {
	for _, c := range []struct {
		k     int
		inner string
	}{{0, ""}, {1, "01JD0Q7Z8V9W5M3K2H1G0F9E8D"}, {2, "with\x00nul"}} {
		k, inner, err := parsePageToken(pageToken(c.k, c.inner), 3)
		if err != nil || k != c.k || inner != c.inner {
			t.Errorf("round trip of (%d, %q): (%d, %q, %v)", c.k, c.inner, k, inner, err)
		}
	}
	if k, inner, err := parsePageToken("", 3); err != nil || k != 0 || inner != "" {
		t.Errorf("empty token: (%d, %q, %v)", k, inner, err)
	}
	// Another gateway's or a client's token, or one for a shard that is
	// gone, is refused rather than guessed.
	for _, tok := range []string{"x", "g1.", "g1.!!", pageToken(3, ""), pageToken(-1, ""), "g1." + "MDE"} {
		if _, _, err := parsePageToken(tok, 3); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
}

func TestSplitAddrs(t *testing.T) {
	got, err := splitAddrs(" a:1, b:2 ,c:3")
	if err != nil || len(got) != 3 || got[0] != "a:1" || got[1] != "b:2" || got[2] != "c:3" {
		t.Errorf("splitAddrs = %q, %v", got, err)
	}
	for _, bad := range []string{"", "a:1,", ",a:1", "a:1,,b:2"} {
		if _, err := splitAddrs(bad); err == nil {
			t.Errorf("splitAddrs(%q): no error", bad)
		}
	}
}

// lister is a table-svc shard that lists its tables.
type lister struct {
	tablev1.UnimplementedTableServiceServer
	ids []string

	mu    sync.Mutex
	asked []string // ListRounds: "player_id|table_id" of each call
}

func (l *lister) ListTables(context.Context, *tablev1.ListTablesRequest) (*tablev1.ListTablesResponse, error) {
	var out []*tablev1.Table
	for _, id := range l.ids {
		out = append(out, &tablev1.Table{TableId: id})
	}
	return &tablev1.ListTablesResponse{Tables: out}, nil
}

// ListRounds lists the shard's rounds (coup ids), one per page when
// asked for one, and records the player_id it was asked for.
func (l *lister) ListRounds(_ context.Context, req *tablev1.ListRoundsRequest) (*tablev1.ListRoundsResponse, error) {
	l.mu.Lock()
	l.asked = append(l.asked, req.GetPlayerId()+"|"+req.GetTableId())
	l.mu.Unlock()
	resp := &tablev1.ListRoundsResponse{}
	i := 0
	if req.GetPageToken() != "" {
		i, _ = strconv.Atoi(req.GetPageToken())
	}
	for ; i < len(l.ids) && len(resp.Rounds) < int(req.GetPageSize()); i++ {
		resp.Rounds = append(resp.Rounds, &tablev1.Round{CoupId: l.ids[i]})
	}
	if i < len(l.ids) {
		resp.NextPageToken = strconv.Itoa(i)
	}
	return resp, nil
}

// TestListRoundsFansOut: a player's ListRounds pages over every shard
// (one down is named in unreachable) with the page tokens of ListTables;
// one naming a table goes to that table's shard only; a player must name
// himself.
func TestListRoundsFansOut(t *testing.T) {
	l0, l2 := &lister{ids: []string{"s0-a", "s0-b", "s0-c"}}, &lister{ids: []string{"s2-d"}}
	up, _ := serveStub(t, func(s *grpc.Server) { tablev1.RegisterTableServiceServer(s, l0) })
	up2, _ := serveStub(t, func(s *grpc.Server) { tablev1.RegisterTableServiceServer(s, l2) })
	down := closedAddr(t)
	e := startEnvConfig(t, func(c *Config) {
		c.TableAddr = up + "," + down + "," + up2
		c.ShoeAddr = down + "," + down + "," + down
	})
	tc := tablev1.NewTableServiceClient(e.conn)
	var got, unreachable []string
	tok := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the pages do not end")
		}
		resp, err := tc.ListRounds(e.as("tok-alice"), &tablev1.ListRoundsRequest{PlayerId: "alice", PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRounds() {
			got = append(got, r.GetCoupId())
		}
		unreachable = append(unreachable, resp.GetUnreachable()...)
		if tok = resp.GetNextPageToken(); tok == "" {
			break
		}
	}
	if fmt.Sprint(got) != "[s0-a s0-b s0-c s2-d]" || fmt.Sprint(unreachable) != "[shard-1]" {
		t.Fatalf("rounds %v, unreachable %v", got, unreachable)
	}
	l0.mu.Lock()
	asked := len(l0.asked)
	l0.mu.Unlock()
	resp, err := tc.ListRounds(e.as("tok-audrey"), &tablev1.ListRoundsRequest{TableId: "s2-t", PageSize: 10})
	if err != nil || len(resp.GetRounds()) != 1 || resp.GetRounds()[0].GetCoupId() != "s2-d" {
		t.Fatalf("a table's rounds: %v %v", resp, err)
	}
	l0.mu.Lock()
	if len(l0.asked) != asked {
		t.Errorf("shard 0 was asked for table s2-t's rounds: %v", l0.asked)
	}
	l0.mu.Unlock()
	for _, req := range []*tablev1.ListRoundsRequest{{}, {PlayerId: "bob"}} {
		_, err := tc.ListRounds(e.as("tok-alice"), req)
		if errs.Reason(err) != ReasonNotYourself {
			t.Errorf("alice lists %v: %v", req, err)
		}
	}
}

// TestListTablesSkipsAShardDown: one shard that does not answer leaves
// the lobby to the others, named in unreachable; a shard's own refusal is
// still the answer.
func TestListTablesSkipsAShardDown(t *testing.T) {
	up, _ := serveStub(t, func(s *grpc.Server) { tablev1.RegisterTableServiceServer(s, &lister{ids: []string{"s0-a", "s0-b"}}) })
	up2, _ := serveStub(t, func(s *grpc.Server) { tablev1.RegisterTableServiceServer(s, &lister{ids: []string{"s2-c"}}) })
	down := closedAddr(t)
	e := startEnvConfig(t, func(c *Config) {
		c.TableAddr = up + "," + down + "," + up2
		c.ShoeAddr = down + "," + down + "," + down
	})
	resp, err := tablev1.NewTableServiceClient(e.conn).ListTables(e.as("tok-carol"), &tablev1.ListTablesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tbl := range resp.GetTables() {
		ids = append(ids, tbl.GetTableId())
	}
	if fmt.Sprint(ids) != "[s0-a s0-b s2-c]" || fmt.Sprint(resp.GetUnreachable()) != "[shard-1]" {
		t.Fatalf("tables %v, unreachable %v; want shards 0 and 2's tables, shard-1 unreachable", ids, resp.GetUnreachable())
	}
	// A shard that answers with its own error is not skipped.
	e = startEnvConfig(t, func(c *Config) {
		c.TableAddr = up + "," + c.TableAddr // the stub table's ListTables fails on its own
		c.ShoeAddr = down + "," + down
	})
	_, err = tablev1.NewTableServiceClient(e.conn).ListTables(e.as("tok-carol"), &tablev1.ListTablesRequest{})
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "stub: shoe service down" {
		t.Fatalf("a shard's own refusal: %v", err)
	}
}
