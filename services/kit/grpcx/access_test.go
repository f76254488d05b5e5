package grpcx

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/chemmy/chemmy/services/kit/auth"
)

// probeService is a service of one unary method (Ping) and one server
// stream (Watch, open until released), by hand.
func probeService(release <-chan struct{}, opened chan<- struct{}) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "test.Probe",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Ping", Handler: func(_ any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			req := new(emptypb.Empty)
			if err := dec(req); err != nil {
				return nil, err
			}
			h := func(context.Context, any) (any, error) { return &emptypb.Empty{}, nil }
			if in == nil {
				return h(ctx, req)
			}
			return in(ctx, req, &grpc.UnaryServerInfo{FullMethod: "/test.Probe/Ping"}, h)
		}}},
		Streams: []grpc.StreamDesc{{StreamName: "Watch", ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
			if err := ss.RecvMsg(new(emptypb.Empty)); err != nil {
				return err
			}
			opened <- struct{}{}
			select {
			case <-release:
			case <-ss.Context().Done():
			}
			return nil
		}}},
	}
}

// TestAccessLog: a server of New writes one info line per call when it
// ends, with the method, the code, the duration and the caller (found by
// the role checks after the access log's interceptor); a health check is
// at debug; a refused call is logged too, without a caller. The streams
// open are counted by method (StreamsOpen) while they run.
func TestAccessLog(t *testing.T) {
	var buf lockedWriter
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	policy := auth.Policy{"/test.Probe/Ping": {auth.RolePlayer}, "/test.Probe/Watch": {auth.RolePlayer}}
	s := New(Options{Name: "probe", Logger: log, Policy: policy, Domain: "probe.chemmy", Registry: prometheus.NewRegistry()})
	release, opened := make(chan struct{}), make(chan struct{}, 1)
	s.GRPC.RegisterService(probeService(release, opened), struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(serveCtx, lis) }()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	alice := metadata.AppendToOutgoingContext(ctx, auth.MDSubject, "alice", auth.MDRole, string(auth.RolePlayer))
	if err := cc.Invoke(alice, "/test.Probe/Ping", &emptypb.Empty{}, &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := cc.Invoke(ctx, "/test.Probe/Ping", &emptypb.Empty{}, &emptypb.Empty{}); err == nil {
		t.Fatal("no identity: no error")
	}
	if _, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	st, err := cc.NewStream(alice, &grpc.StreamDesc{ServerStreams: true}, "/test.Probe/Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(&emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	<-opened
	if n := s.StreamsOpen("/test.Probe/Watch"); n != 1 {
		t.Errorf("%d Watch streams open, want 1", n)
	}
	close(release)
	if err := st.RecvMsg(new(emptypb.Empty)); err == nil {
		t.Error("the stream sent a message")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := s.StreamsOpen("/test.Probe/Watch"); n != 0 {
		t.Errorf("%d Watch streams open after the end, want 0", n)
	}

	var lines []map[string]any
	for _, l := range logLines(t, &buf.b) {
		if l["msg"] == "finished call" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d access lines, want 3 (the health check at debug): %v", len(lines), lines)
	}
	ok, refused, watch := lines[0], lines[1], lines[2]
	for k, want := range map[string]any{"level": "INFO", "service": "probe", "grpc.service": "test.Probe", "grpc.method": "Ping",
		"grpc.code": "OK", "caller": "alice", "role": "player"} {
		if ok[k] != want {
			t.Errorf("the call's line: %s = %v, want %v (%v)", k, ok[k], want, ok)
		}
	}
	if _, has := ok["grpc.time_ms"]; !has {
		t.Errorf("the call's line has no duration: %v", ok)
	}
	if refused["grpc.code"] != "Unauthenticated" || refused["level"] != "INFO" || refused["caller"] != nil {
		t.Errorf("the refused call's line %v", refused)
	}
	if watch["grpc.method"] != "Watch" || watch["grpc.code"] != "OK" || watch["caller"] != "alice" {
		t.Errorf("the stream's line %v", watch)
	}
}

// TestBuildInfoOnOwnRegistry: a server of New without a registry of its
// own (a service binary) exports chemmy_build_info with the Go and
// process metrics.
func TestBuildInfoOnOwnRegistry(t *testing.T) {
	s := New(Options{Name: "probe", Logger: slog.New(slog.DiscardHandler)})
	n, err := testutil.GatherAndCount(s.Registry, "chemmy_build_info")
	if err != nil || n != 1 {
		t.Errorf("chemmy_build_info: %d series, %v", n, err)
	}
}

// lockedWriter is a buffer written by the server's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
