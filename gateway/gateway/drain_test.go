package gateway

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestDrainEndsWatchStreams: a stopping gateway ends a WatchTable stream
// it holds with UNAVAILABLE GATEWAY_DRAINING, so that the client watches
// again through another gateway (a rolling update), instead of holding
// the stream until its stop timeout cuts the connection (UNAVAILABLE
// without a reason). It then stops cleanly.
func TestDrainEndsWatchStreams(t *testing.T) {
	e := startEnv(t)
	e.table.holdWatch.Store(true)
	watch, err := tablev1.NewTableServiceClient(e.conn).WatchTable(e.as("tok-carol"), &tablev1.WatchTableRequest{TableId: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetTable().GetTableId() != "t1" {
		t.Fatalf("first message: %v, %v", m, err)
	}
	e.gw.Stop()
	_, err = watch.Recv()
	if status.Code(err) != codes.Unavailable || errs.Info(err).GetReason() != ReasonGatewayDraining {
		t.Fatalf("the watch ended with %v, want UNAVAILABLE %s", err, ReasonGatewayDraining)
	}
	if err := e.gw.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

// TestDrainEndsHTTPWatchStreams: the same over HTTP, a WatchTable stream
// of JSON lines: its last line is the error GATEWAY_DRAINING.
func TestDrainEndsHTTPWatchStreams(t *testing.T) {
	e := startEnv(t)
	e.table.holdWatch.Store(true)
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, "http://"+e.gw.HTTPAddr()+"/chemmy.table.v1.TableService/WatchTable", strings.NewReader(`{"tableId":"t1"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok-carol")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"tableId":"t1"`) {
		t.Fatalf("first line %q (%d), %v", lines.Text(), resp.StatusCode, lines.Err())
	}
	e.gw.Stop()
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	var m struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(last), &m); err != nil || m.Error["code"] != "unavailable" || reason(m.Error) != ReasonGatewayDraining {
		t.Fatalf("last line %q (%v), want the error unavailable %s", last, err, ReasonGatewayDraining)
	}
}
