package gateway

import (
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
