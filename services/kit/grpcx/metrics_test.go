package grpcx

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// grpcServerSeries counts the series of reg's grpc_server_* metrics (a
// histogram's buckets, sum and count each one), and reports whether a
// label value holds marker.
func grpcServerSeries(t *testing.T, reg prometheus.Gatherer, marker string) (n int, marked bool) {
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
					marked = true
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

// TestUnknownMethodsAddNoSeries: calls of made-up method names, to a
// server of New that hands unknown methods to a handler (as the gateway
// does, forwarding), are counted under grpc_service/grpc_method
// "unknown": the number of grpc_server_* series does not grow with the
// number of names; a registered method keeps its own.
func TestUnknownMethodsAddNoSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	refuse := func(any, grpc.ServerStream) error { return status.Error(codes.Unauthenticated, "who are you") }
	s := New(Options{Name: "probe", Logger: slog.New(slog.DiscardHandler), Registry: reg,
		ServerOptions: []grpc.ServerOption{grpc.UnknownServiceHandler(refuse)}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(serveCtx, lis) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	madeUp := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			for _, m := range []string{fmt.Sprintf("/grpc.health.v1.Health/MadeUp%d", i), fmt.Sprintf("/made.up%d.Service/Call", i)} {
				err := cc.Invoke(ctx, m, &emptypb.Empty{}, &emptypb.Empty{})
				if status.Code(err) != codes.Unauthenticated {
					t.Fatalf("%s: %v, want the handler's UNAUTHENTICATED", m, err)
				}
			}
		}
	}
	madeUp(0, 3)
	few, leaked := grpcServerSeries(t, reg, "MadeUp")
	if leaked {
		t.Fatal("a made-up method name is a label value")
	}
	madeUp(3, 60)
	many, leaked := grpcServerSeries(t, reg, "made.up")
	if leaked || many != few {
		t.Errorf("grpc_server_* series: %d after 6 made-up names, %d after 120 (a name in a label: %v); want no growth", few, many, leaked)
	}
	if _, unknown := grpcServerSeries(t, reg, "unknown"); !unknown {
		t.Error("no series labelled unknown")
	}
	if _, check := grpcServerSeries(t, reg, "Check"); !check {
		t.Error("the registered Check has no series of its own")
	}
}
