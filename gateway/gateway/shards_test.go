package gateway

import (
	"context"
	"fmt"
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
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
}

func (l *lister) ListTables(context.Context, *tablev1.ListTablesRequest) (*tablev1.ListTablesResponse, error) {
	var out []*tablev1.Table
	for _, id := range l.ids {
		out = append(out, &tablev1.Table{TableId: id})
	}
	return &tablev1.ListTablesResponse{Tables: out}, nil
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
