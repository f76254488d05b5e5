package gateway

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// A test-only streaming service, since the contracts have no streaming
// RPC yet: chemmy.gatewaytest.v1.StreamService.Watch(JoinTableRequest)
// returns (stream GetTableResponse). It is forwarded to the table stub.
const (
	streamService = "chemmy.gatewaytest.v1.StreamService"
	watchMethod   = "/" + streamService + "/Watch"
)

func init() {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("chemmy/gatewaytest/v1/stream.proto"),
		Package:    proto.String("chemmy.gatewaytest.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"chemmy/table/v1/table.proto"},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("StreamService"),
			Method: []*descriptorpb.MethodDescriptorProto{{
				Name:            proto.String("Watch"),
				InputType:       proto.String(".chemmy.table.v1.JoinTableRequest"),
				OutputType:      proto.String(".chemmy.table.v1.GetTableResponse"),
				ServerStreaming: proto.Bool(true),
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	if err := protoregistry.GlobalFiles.RegisterFile(fd); err != nil {
		panic(err)
	}
}

// stubTable is a table-svc stand-in. GetTable echoes what it received:
// table_id = caller subject, banker_player_id = caller role,
// banco_suivi_player_id = caller operator, offered_player_id = the
// x-chemmy-* and authorization metadata it saw beyond the identity,
// shoe_id = the x-note metadata.
type stubTable struct {
	tablev1.UnimplementedTableServiceServer
	mu      sync.Mutex
	betsFor []string // player_id of every PlaceBet that reached the stub
	// holdWatch makes WatchTable a stream that stays open (TestDrainEndsWatchStreams)
	holdWatch atomic.Bool
}

func (s *stubTable) GetTable(ctx context.Context, _ *tablev1.GetTableRequest) (*tablev1.GetTableResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var extra []string
	for k, v := range md {
		if (strings.HasPrefix(k, "x-chemmy-") && k != auth.MDSubject && k != auth.MDRole && k != auth.MDOperator) || k == "authorization" {
			extra = append(extra, k+"="+strings.Join(v, ","))
		}
	}
	if len(md.Get(auth.MDSubject)) != 1 || len(md.Get(auth.MDRole)) != 1 {
		extra = append(extra, "identity not single-valued")
	}
	c, ok := auth.FromIncoming(ctx)
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "stub: no identity")
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-backend-header", "h1"))
	_ = grpc.SetTrailer(ctx, metadata.Pairs("x-backend-trailer", "t1"))
	return &tablev1.GetTableResponse{Table: &tablev1.Table{
		TableId:            c.Subject,
		BankerPlayerId:     string(c.Role),
		BancoSuiviPlayerId: c.Operator,
		OfferedPlayerId:    strings.Join(extra, ";"),
		ShoeId:             strings.Join(md.Get("x-note"), ","),
		// A baccarat (0) against a 5: the zero total must show in JSON.
		LastCoup: &tablev1.Coup{PlayerTotal: 0, BankerTotal: 5},
	}}, nil
}

func (s *stubTable) PlaceBet(_ context.Context, r *tablev1.PlaceBetRequest) (*tablev1.PlaceBetResponse, error) {
	s.mu.Lock()
	s.betsFor = append(s.betsFor, r.GetPlayerId())
	s.mu.Unlock()
	return nil, errs.New(codes.FailedPrecondition, "table.chemmy", "NOT_YOUR_TURN", "it is not %s's turn", r.GetPlayerId())
}

// ListTables fails UNAVAILABLE on its own, without ErrorInfo: the gateway
// must pass that through and not call it BACKEND_UNAVAILABLE.
func (s *stubTable) ListTables(context.Context, *tablev1.ListTablesRequest) (*tablev1.ListTablesResponse, error) {
	return nil, status.Error(codes.Unavailable, "stub: shoe service down")
}

func (s *stubTable) JoinTable(_ context.Context, r *tablev1.JoinTableRequest) (*tablev1.JoinTableResponse, error) {
	return &tablev1.JoinTableResponse{Table: &tablev1.Table{TableId: r.GetTableId()}}, nil
}

func (s *stubTable) bets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.betsFor...)
}

// watch serves the test streaming method: three GetTableResponses whose
// table_id is "<player_id>-<n>", with a header and a trailer.
func watch(_ any, ss grpc.ServerStream) error {
	if m, _ := grpc.MethodFromServerStream(ss); m != watchMethod {
		return status.Errorf(codes.Unimplemented, "stub: unknown method %s", m)
	}
	var req tablev1.JoinTableRequest
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	if err := ss.SendHeader(metadata.Pairs("x-stream-header", "sh")); err != nil {
		return err
	}
	for i := range 3 {
		id := req.GetPlayerId() + "-" + string(rune('0'+i))
		if err := ss.SendMsg(&tablev1.GetTableResponse{Table: &tablev1.Table{TableId: id}}); err != nil {
			return err
		}
	}
	ss.SetTrailer(metadata.Pairs("x-stream-trailer", "st"))
	return nil
}

type stubWallet struct {
	walletv1.UnimplementedWalletServiceServer
	mu      sync.Mutex
	settled int
	// revoked: the game-launch session tokens AuthenticateLaunchSession
	// refuses SESSION_EXPIRED; any other chls_ token is bob's, at t1
	// (chls_old: a session that names no operator; any other: casino-b's).
	revoked map[string]bool
}

func (s *stubWallet) AuthenticateLaunchSession(_ context.Context, r *walletv1.AuthenticateLaunchSessionRequest) (*walletv1.AuthenticateLaunchSessionResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked[r.GetToken()] {
		return nil, errs.New(codes.Unauthenticated, "wallet.chemmy", ReasonSessionExpired, "the game-launch session was revoked")
	}
	op := "casino-b"
	if r.GetToken() == "chls_old" {
		op = ""
	}
	return &walletv1.AuthenticateLaunchSessionResponse{LaunchSession: &walletv1.LaunchSession{
		LaunchSessionId: "ls-1", PlayerId: "bob", TableId: "t1", OperatorId: op}}, nil
}

func (s *stubWallet) revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked == nil {
		s.revoked = map[string]bool{}
	}
	s.revoked[token] = true
}

func (s *stubWallet) GetAccount(_ context.Context, r *walletv1.GetAccountRequest) (*walletv1.GetAccountResponse, error) {
	return &walletv1.GetAccountResponse{Account: &walletv1.Account{AccountId: r.GetAccountId(), Balance: 100}}, nil
}

func (s *stubWallet) SettleCoup(context.Context, *walletv1.SettleCoupRequest) (*walletv1.SettleCoupResponse, error) {
	s.mu.Lock()
	s.settled++
	s.mu.Unlock()
	return &walletv1.SettleCoupResponse{}, nil
}

func (s *stubWallet) settledCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}

// serveStub serves a backend on 127.0.0.1:0; stop stops it (also at
// cleanup).
func serveStub(t *testing.T, register func(*grpc.Server), opts ...grpc.ServerOption) (addr string, stop func()) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	register(srv)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	var once sync.Once
	stop = func() { once.Do(func() { srv.Stop(); <-done }) }
	t.Cleanup(stop)
	return lis.Addr().String(), stop
}

// closedAddr is an address nobody listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}

// WatchTable, once holdWatch is set, sends the table once, then holds the
// stream open until the caller (or the gateway) ends it; before, it is
// unimplemented.
func (s *stubTable) WatchTable(r *tablev1.WatchTableRequest, ss grpc.ServerStreamingServer[tablev1.WatchTableResponse]) error {
	if !s.holdWatch.Load() {
		return status.Error(codes.Unimplemented, "stub: WatchTable")
	}
	if err := ss.Send(&tablev1.WatchTableResponse{Update: &tablev1.WatchTableResponse_Table{Table: &tablev1.Table{TableId: r.GetTableId()}}}); err != nil {
		return err
	}
	<-ss.Context().Done()
	return ss.Context().Err()
}
