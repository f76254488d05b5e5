package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// serverSeries counts the series of reg's grpc_server_* metrics (each
// bucket, sum and count of a histogram one), and the label values among
// them that hold marker.
func serverSeries(t *testing.T, reg prometheus.Gatherer, marker string) (n, marked int) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "grpc_server_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), marker) {
					marked++
				}
			}
			if h := m.GetHistogram(); h != nil {
				n += len(h.GetBucket()) + 2
			} else {
				n++
			}
		}
	}
	return n, marked
}

// TestMadeUpMethodsAddNoSeries: calls of made-up method names, without a
// token (UNAUTHENTICATED), with one (UNIMPLEMENTED), in a public service
// or an unknown one, over gRPC and over HTTP, are counted under
// grpc_service and grpc_method "unknown": the gateway's grpc_server_*
// series do not grow with the number of names (each name used to add
// some twenty); the methods of the contracts keep their own names.
func TestMadeUpMethodsAddNoSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startEnvConfig(t, func(c *Config) { c.Registry = reg })
	if _, err := gatewayv1.NewGatewayServiceClient(e.conn).GetCaller(e.as("tok-alice"), &gatewayv1.GetCallerRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tablev1.NewTableServiceClient(e.conn).GetTable(e.as("tok-alice"), &tablev1.GetTableRequest{TableId: "t1"}); err != nil {
		t.Fatal(err)
	}
	madeUp := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			for _, c := range []struct {
				method, token string
				want          codes.Code
			}{
				{fmt.Sprintf("/chemmy.table.v1.TableService/MadeUp%d", i), "", codes.Unauthenticated},
				{fmt.Sprintf("/made.up%d.Service/MadeUp", i), "", codes.Unauthenticated},
				{fmt.Sprintf("/chemmy.table.v1.TableService/MadeUp%d", i), "tok-alice", codes.Unimplemented},
				{fmt.Sprintf("/made.up%d.Service/MadeUp", i), "tok-alice", codes.Unimplemented},
			} {
				if err := e.conn.Invoke(e.as(c.token), c.method, &emptypb.Empty{}, &emptypb.Empty{}); status.Code(err) != c.want {
					t.Fatalf("%s (token %q): %v, want %v", c.method, c.token, err, c.want)
				}
			}
			resp, err := http.Post(fmt.Sprintf("http://%s/chemmy.table.v1.TableService/MadeUp%d", e.gw.HTTPAddr(), i), "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("HTTP MadeUp%d: %d, want 404", i, resp.StatusCode)
			}
		}
	}
	madeUp(0, 3)
	few, marked := serverSeries(t, reg, "MadeUp")
	if marked != 0 {
		t.Fatalf("%d series name a made-up method", marked)
	}
	madeUp(3, 50)
	many, marked := serverSeries(t, reg, "made.up")
	if many != few || marked != 0 {
		t.Errorf("grpc_server_* series: %d after 12 made-up calls, %d after 200 (%d name a made-up service); want no growth", few, many, marked)
	}
	if _, n := serverSeries(t, reg, "unknown"); n == 0 {
		t.Error("no series labelled unknown")
	}
	for _, m := range []string{"GetCaller", "GetTable"} {
		if _, n := serverSeries(t, reg, m); n == 0 {
			t.Errorf("%s has no series of its own", m)
		}
	}
}
