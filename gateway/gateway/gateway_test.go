package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/trust"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testTokens = `
tokens:
  - {token: "tok-alice", subject: alice, role: player}
  - {token: "tok-bob", subject: bob, role: player}
  - {token: "tok-carol", subject: carol, role: croupier}
  - {token: "tok-olga", subject: olga, role: operator}
  - {token: "tok-audrey", subject: audrey, role: auditor}
  - {token: "tok-bobusd", subject: "bob@USD", role: player}
`

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type env struct {
	gw     *Gateway
	table  *stubTable
	wallet *stubWallet
	conn   *grpc.ClientConn
	// stopTable stops the table backend.
	stopTable func()
	// ctx bounds every test call.
	ctx context.Context
}

// startEnv starts table and wallet stubs (shoe points nowhere) and a
// gateway in front of them, with the test streaming service routed to the
// table stub.
func startEnv(t *testing.T) *env {
	t.Helper()
	return startEnvWith(t, LimitConfig{Rate: -1})
}

// startEnvWith is startEnv with the gateway's limits lim.
func startEnvWith(t *testing.T, lim LimitConfig) *env {
	t.Helper()
	return startEnvConfig(t, func(c *Config) { c.Limits = lim })
}

// startEnvConfig is startEnv with its gateway Config changed by edit
// (limits off unless edit sets them).
func startEnvConfig(t *testing.T, edit func(*Config)) *env {
	t.Helper()
	e := &env{table: &stubTable{}, wallet: &stubWallet{}}
	var cancelCalls context.CancelFunc
	e.ctx, cancelCalls = context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancelCalls)
	tableAddr, stopTable := serveStub(t, func(s *grpc.Server) { tablev1.RegisterTableServiceServer(s, e.table) },
		grpc.UnknownServiceHandler(watch))
	e.stopTable = stopTable
	walletAddr, _ := serveStub(t, func(s *grpc.Server) { walletv1.RegisterWalletServiceServer(s, e.wallet) })

	pol := defaultPolicy()
	pol[watchMethod] = rule{Roles: allRoles, SelfField: "player_id"}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{
		ListenAddr: "127.0.0.1:0",
		TokensFile: writeFile(t, testTokens),
		TableAddr:  tableAddr,
		WalletAddr: walletAddr,
		ShoeAddr:   closedAddr(t),
		HTTPAddr:   "127.0.0.1:0",
		Trust:      trust.Config{Insecure: true},
		Limits:     LimitConfig{Rate: -1},
		Logger:     slog.New(slog.DiscardHandler),
	}
	edit(&cfg)
	gw, err := start(ctx, cfg, options{policy: pol, extraRoutes: map[string]extraRoute{streamService: {tableAddr, trust.Table}}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	e.gw = gw
	e.conn, err = grpc.NewClient(gw.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.conn.Close()
		cancel()
		if err := gw.Wait(); err != nil {
			t.Errorf("gateway Wait: %v", err)
		}
	})
	return e
}

// as returns a call context with token as bearer token (none if empty)
// and kv as further metadata.
func (e *env) as(token string, kv ...string) context.Context {
	ctx := e.ctx
	if token != "" {
		kv = append(kv, "authorization", "Bearer "+token)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func wantStatus(t *testing.T, err error, code codes.Code, domain, reason string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("error = %v, want code %v", err, code)
	}
	info := errs.Info(err)
	if reason == "" {
		if info != nil {
			t.Fatalf("error %v carries ErrorInfo %v, want none", err, info)
		}
		return
	}
	if info == nil || info.GetReason() != reason || info.GetDomain() != domain {
		t.Fatalf("error = %v with ErrorInfo %v, want %s/%s", err, info, domain, reason)
	}
}

func TestForwardSetsIdentityAndStripsForgery(t *testing.T) {
	e := startEnv(t)
	var header, trailer metadata.MD
	resp, err := tablev1.NewTableServiceClient(e.conn).GetTable(
		e.as("tok-alice", auth.MDSubject, "bob", auth.MDRole, "operator", auth.MDOperator, "casino-b", "x-chemmy-extra", "z", "x-note", "kept"),
		&tablev1.GetTableRequest{TableId: "t1"}, grpc.Header(&header), grpc.Trailer(&trailer))
	if err != nil {
		t.Fatal(err)
	}
	tb := resp.GetTable()
	if tb.GetTableId() != "alice" || tb.GetBankerPlayerId() != "player" || tb.GetBancoSuiviPlayerId() != DefaultOperatorID {
		t.Errorf("backend saw caller %q/%q of operator %q, want alice/player of %q", tb.GetTableId(), tb.GetBankerPlayerId(), tb.GetBancoSuiviPlayerId(), DefaultOperatorID)
	}
	if tb.GetOfferedPlayerId() != "" {
		t.Errorf("backend saw metadata it should not: %s", tb.GetOfferedPlayerId())
	}
	if tb.GetShoeId() != "kept" {
		t.Errorf("x-note = %q, want other metadata forwarded", tb.GetShoeId())
	}
	if got := header.Get("x-backend-header"); !slices.Equal(got, []string{"h1"}) {
		t.Errorf("header x-backend-header = %v", got)
	}
	if got := trailer.Get("x-backend-trailer"); !slices.Equal(got, []string{"t1"}) {
		t.Errorf("trailer x-backend-trailer = %v", got)
	}

	// Staff roles reach the backend as themselves too.
	resp, err = tablev1.NewTableServiceClient(e.conn).GetTable(e.as("tok-audrey"), &tablev1.GetTableRequest{})
	if err != nil || resp.GetTable().GetTableId() != "audrey" || resp.GetTable().GetBankerPlayerId() != "auditor" {
		t.Fatalf("auditor GetTable = %v, %v", resp, err)
	}
}

func TestBackendStatusPassesThrough(t *testing.T) {
	e := startEnv(t)
	tc := tablev1.NewTableServiceClient(e.conn)
	_, err := tc.PlaceBet(e.as("tok-alice"), &tablev1.PlaceBetRequest{TableId: "t1", PlayerId: "alice", Amount: 5})
	wantStatus(t, err, codes.FailedPrecondition, "table.chemmy", "NOT_YOUR_TURN")
	if msg := status.Convert(err).Message(); msg != "it is not alice's turn" {
		t.Errorf("message = %q", msg)
	}
	// A backend's own UNAVAILABLE is the backend's answer, not ours.
	_, err = tc.ListTables(e.as("tok-alice"), &tablev1.ListTablesRequest{})
	wantStatus(t, err, codes.Unavailable, "", "")
	if msg := status.Convert(err).Message(); msg != "stub: shoe service down" {
		t.Errorf("message = %q", msg)
	}
}

func TestAuthorization(t *testing.T) {
	e := startEnv(t)
	tc := tablev1.NewTableServiceClient(e.conn)
	wc := walletv1.NewWalletServiceClient(e.conn)
	sc := shoev1.NewShoeServiceClient(e.conn)
	const gw = Domain
	tests := []struct {
		name   string
		call   func() error
		code   codes.Code
		domain string
		reason string
	}{
		{"no token", func() error {
			_, err := tc.GetTable(e.as(""), &tablev1.GetTableRequest{})
			return err
		}, codes.Unauthenticated, gw, ReasonTokenMissing},
		{"not bearer", func() error {
			_, err := tc.GetTable(metadata.AppendToOutgoingContext(e.as(""), "authorization", "Basic tok-alice"), &tablev1.GetTableRequest{})
			return err
		}, codes.Unauthenticated, gw, ReasonTokenMissing},
		{"unknown token", func() error {
			_, err := tc.GetTable(e.as("tok-mallory"), &tablev1.GetTableRequest{})
			return err
		}, codes.Unauthenticated, gw, ReasonTokenUnknown},
		{"forged identity without token", func() error {
			_, err := tc.GetTable(e.as("", auth.MDSubject, "olga", auth.MDRole, "operator"), &tablev1.GetTableRequest{})
			return err
		}, codes.Unauthenticated, gw, ReasonTokenMissing},
		{"player creates table", func() error {
			_, err := tc.CreateTable(e.as("tok-alice"), &tablev1.CreateTableRequest{})
			return err
		}, codes.PermissionDenied, gw, ReasonRoleNotAllowed},
		{"auditor bets", func() error {
			_, err := tc.PlaceBet(e.as("tok-audrey"), &tablev1.PlaceBetRequest{PlayerId: "audrey"})
			return err
		}, codes.PermissionDenied, gw, ReasonRoleNotAllowed},
		{"croupier deposits", func() error {
			_, err := wc.Deposit(e.as("tok-carol"), &walletv1.DepositRequest{})
			return err
		}, codes.PermissionDenied, gw, ReasonRoleNotAllowed},
		{"croupier deals", func() error {
			_, err := sc.DealCard(e.as("tok-carol"), &shoev1.DealCardRequest{})
			return err
		}, codes.PermissionDenied, gw, ReasonRoleNotAllowed},
		{"alice bets for bob", func() error {
			_, err := tc.PlaceBet(e.as("tok-alice"), &tablev1.PlaceBetRequest{TableId: "t1", PlayerId: "bob", Amount: 5})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"alice joins without player_id", func() error {
			_, err := tc.JoinTable(e.as("tok-alice"), &tablev1.JoinTableRequest{TableId: "t1"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"alice reads bob's account", func() error {
			_, err := wc.GetAccount(e.as("tok-alice"), &walletv1.GetAccountRequest{AccountId: "player:bob"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		// A player whose id looks like another's account in a currency
		// ("bob@USD") names no account of his own.
		{"bob@USD reads bob's USD account", func() error {
			_, err := wc.GetAccount(e.as("tok-bobusd"), &walletv1.GetAccountRequest{AccountId: "player:bob@USD"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"bob@USD reads bob's statement", func() error {
			_, err := wc.ListStatement(e.as("tok-bobusd"), &walletv1.ListStatementRequest{AccountId: "player:bob@USD"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"alice reads bob's USD account", func() error {
			_, err := wc.GetAccount(e.as("tok-alice"), &walletv1.GetAccountRequest{AccountId: "player:bob@USD"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"alice reads alicex's account", func() error {
			_, err := wc.GetAccount(e.as("tok-alice"), &walletv1.GetAccountRequest{AccountId: "player:alicex"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"alice reads the house account", func() error {
			_, err := wc.GetAccount(e.as("tok-alice"), &walletv1.GetAccountRequest{AccountId: "house:commission"})
			return err
		}, codes.PermissionDenied, gw, ReasonNotYourself},
		{"operator settles", func() error {
			_, err := wc.SettleCoup(e.as("tok-olga"), &walletv1.SettleCoupRequest{})
			return err
		}, codes.PermissionDenied, gw, ReasonMethodNotPublic},
		{"operator places hold", func() error {
			_, err := wc.PlaceHold(e.as("tok-olga"), &walletv1.PlaceHoldRequest{})
			return err
		}, codes.PermissionDenied, gw, ReasonMethodNotPublic},
		{"unknown method", func() error {
			return e.conn.Invoke(e.as("tok-olga"), "/chemmy.table.v1.TableService/Explode", &tablev1.GetTableRequest{}, &tablev1.GetTableResponse{})
		}, codes.Unimplemented, "", ""},
		{"unknown service", func() error {
			return e.conn.Invoke(e.as("tok-olga"), "/chemmy.secret.v1.Vault/Open", &tablev1.GetTableRequest{}, &tablev1.GetTableResponse{})
		}, codes.Unimplemented, "", ""},
		// Allowed calls reach the backend.
		// A player's moves are his alone: no croupier bets for him.
		{"croupier bets for bob", func() error {
			_, err := tc.PlaceBet(e.as("tok-carol"), &tablev1.PlaceBetRequest{TableId: "t1", PlayerId: "bob", Amount: 5})
			return err
		}, codes.PermissionDenied, Domain, ReasonRoleNotAllowed},
		{"bob bets for himself", func() error {
			_, err := tc.PlaceBet(e.as("tok-bob"), &tablev1.PlaceBetRequest{TableId: "t1", PlayerId: "bob", Amount: 5})
			return err
		}, codes.FailedPrecondition, "table.chemmy", "NOT_YOUR_TURN"},
		{"alice joins as herself", func() error {
			_, err := tc.JoinTable(e.as("tok-alice"), &tablev1.JoinTableRequest{TableId: "t1", PlayerId: "alice"})
			return err
		}, codes.OK, "", ""},
		{"alice reads her account", func() error {
			r, err := wc.GetAccount(e.as("tok-alice"), &walletv1.GetAccountRequest{AccountId: "player:alice"})
			if err == nil && r.GetAccount().GetBalance() != 100 {
				t.Errorf("GetAccount = %v", r)
			}
			return err
		}, codes.OK, "", ""},
		// A player has an account in each currency (player:<id>@<CUR>):
		// his too.
		{"alice reads her USD account", func() error {
			_, err := wc.GetAccount(e.as("tok-alice"), &walletv1.GetAccountRequest{AccountId: "player:alice@USD"})
			return err
		}, codes.OK, "", ""},
		{"auditor reads bob's account", func() error {
			_, err := wc.GetAccount(e.as("tok-audrey"), &walletv1.GetAccountRequest{AccountId: "player:bob"})
			return err
		}, codes.OK, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if tt.code == codes.OK {
				if err != nil {
					t.Fatalf("error = %v, want none", err)
				}
				return
			}
			wantStatus(t, err, tt.code, tt.domain, tt.reason)
		})
	}
	if got := e.table.bets(); !slices.Equal(got, []string{"bob"}) {
		t.Errorf("bets that reached table-svc: %v, want only bob's own", got)
	}
	if n := e.wallet.settledCount(); n != 0 {
		t.Errorf("SettleCoup reached wallet-svc %d times", n)
	}
}

func TestGetCaller(t *testing.T) {
	e := startEnvConfig(t, func(c *Config) {
		c.TokensFile = writeFile(t, testTokens+`
  - {token: "tok-lux", subject: lea, role: operator, operator: casino-b}
  - {token: "tok-ceo", subject: ceo, role: auditor, operator: "*"}
`)
	})
	gc := gatewayv1.NewGatewayServiceClient(e.conn)
	for tok, want := range map[string]*gatewayv1.GetCallerResponse{
		"tok-alice":  {Subject: "alice", Role: gatewayv1.Role_ROLE_PLAYER, OperatorId: DefaultOperatorID},
		"tok-carol":  {Subject: "carol", Role: gatewayv1.Role_ROLE_CROUPIER, OperatorId: DefaultOperatorID},
		"tok-olga":   {Subject: "olga", Role: gatewayv1.Role_ROLE_OPERATOR, OperatorId: DefaultOperatorID},
		"tok-audrey": {Subject: "audrey", Role: gatewayv1.Role_ROLE_AUDITOR, OperatorId: DefaultOperatorID},
		"tok-lux":    {Subject: "lea", Role: gatewayv1.Role_ROLE_OPERATOR, OperatorId: "casino-b"},
		"tok-ceo":    {Subject: "ceo", Role: gatewayv1.Role_ROLE_AUDITOR, OperatorId: auth.AllOperators},
		// A game-launch session's player is of the session's operator, or
		// of the default one for a session that names none.
		"chls_new": {Subject: "bob", Role: gatewayv1.Role_ROLE_PLAYER, LaunchSessionId: "ls-1", OperatorId: "casino-b"},
		"chls_old": {Subject: "bob", Role: gatewayv1.Role_ROLE_PLAYER, LaunchSessionId: "ls-1", OperatorId: DefaultOperatorID},
	} {
		got, err := gc.GetCaller(e.as(tok), &gatewayv1.GetCallerRequest{})
		if err != nil || !proto.Equal(got, want) {
			t.Errorf("GetCaller(%s) = %v, %v; want %v", tok, got, err, want)
		}
	}
	_, err := gc.GetCaller(e.as(""), &gatewayv1.GetCallerRequest{})
	wantStatus(t, err, codes.Unauthenticated, Domain, ReasonTokenMissing)
	_, err = gc.GetCaller(e.as("nope"), &gatewayv1.GetCallerRequest{})
	wantStatus(t, err, codes.Unauthenticated, Domain, ReasonTokenUnknown)
}

func TestBackendUnavailable(t *testing.T) {
	e := startEnv(t)
	// The shoe backend never ran.
	_, err := shoev1.NewShoeServiceClient(e.conn).GetShoe(e.as("tok-audrey"), &shoev1.GetShoeRequest{})
	wantStatus(t, err, codes.Unavailable, Domain, ReasonBackendUnavailable)

	// The table backend answered, then stopped.
	tc := tablev1.NewTableServiceClient(e.conn)
	if _, err := tc.GetTable(e.as("tok-alice"), &tablev1.GetTableRequest{}); err != nil {
		t.Fatal(err)
	}
	e.stopTable()
	_, err = tc.GetTable(e.as("tok-alice"), &tablev1.GetTableRequest{})
	wantStatus(t, err, codes.Unavailable, Domain, ReasonBackendUnavailable)
	if msg := status.Convert(err).Message(); msg != tableService+" is unavailable" {
		t.Errorf("message = %q, want no internal detail", msg)
	}
}

func TestServerStreamingPassthrough(t *testing.T) {
	e := startEnv(t)
	desc := &grpc.StreamDesc{ServerStreams: true}
	ctx := e.as("tok-alice")
	cs, err := e.conn.NewStream(ctx, desc, watchMethod)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(&tablev1.JoinTableRequest{PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	hdr, err := cs.Header()
	if err != nil || !slices.Equal(hdr.Get("x-stream-header"), []string{"sh"}) {
		t.Errorf("header = %v, %v", hdr, err)
	}
	var got []string
	for {
		var m tablev1.GetTableResponse
		err := cs.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.GetTable().GetTableId())
	}
	if !slices.Equal(got, []string{"alice-0", "alice-1", "alice-2"}) {
		t.Errorf("messages = %v", got)
	}
	if tr := cs.Trailer(); !slices.Equal(tr.Get("x-stream-trailer"), []string{"st"}) {
		t.Errorf("trailer = %v", tr)
	}

	// The self check applies to the first message of a stream.
	cs, err = e.conn.NewStream(e.as("tok-alice"), desc, watchMethod)
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.SendMsg(&tablev1.JoinTableRequest{PlayerId: "bob"})
	_ = cs.CloseSend()
	err = cs.RecvMsg(&tablev1.GetTableResponse{})
	wantStatus(t, err, codes.PermissionDenied, Domain, ReasonNotYourself)
}

func TestHealth(t *testing.T) {
	e := startEnv(t)
	hc := healthpb.NewHealthClient(e.conn)
	for _, svc := range []string{"", tableService, walletService, shoeService, gatewayService} {
		r, err := hc.Check(e.as(""), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v", svc, r, err)
		}
	}
}

func TestReflection(t *testing.T) {
	e := startEnv(t)
	want := []string{
		"chemmy.gateway.v1.GatewayService",
		"chemmy.shoe.v1.ShoeService",
		"chemmy.table.v1.TableService",
		"chemmy.wallet.v1.WalletService",
		"grpc.health.v1.Health",
		"grpc.reflection.v1.ServerReflection",
		"grpc.reflection.v1alpha.ServerReflection",
	}

	stream, err := reflectionv1.NewServerReflectionClient(e.conn).ServerReflectionInfo(e.as(""))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.CloseSend() }()
	if err := stream.Send(&reflectionv1.ServerReflectionRequest{
		MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		got = append(got, s.GetName())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
	// describe works for a forwarded service.
	if err := stream.Send(&reflectionv1.ServerReflectionRequest{
		MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: tableService},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err = stream.Recv()
	if err != nil || len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Fatalf("FileContainingSymbol = %v, %v", resp, err)
	}
	// ... with the contracts' comments (grpcurl describe shows them).
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(resp.GetFileDescriptorResponse().GetFileDescriptorProto()[0], &fdp); err != nil {
		t.Fatal(err)
	}
	var comments int
	for _, l := range fdp.GetSourceCodeInfo().GetLocation() {
		if strings.TrimSpace(l.GetLeadingComments()) != "" {
			comments++
		}
	}
	if fdp.GetName() != "chemmy/table/v1/table.proto" || comments < 50 {
		t.Errorf("reflection gives %s with %d comments", fdp.GetName(), comments)
	}

	// v1alpha (older grpcurl) lists the same.
	alpha, err := reflectionv1alpha.NewServerReflectionClient(e.conn).ServerReflectionInfo(e.as("tok-alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = alpha.CloseSend() }()
	if err := alpha.Send(&reflectionv1alpha.ServerReflectionRequest{
		MessageRequest: &reflectionv1alpha.ServerReflectionRequest_ListServices{},
	}); err != nil {
		t.Fatal(err)
	}
	aresp, err := alpha.Recv()
	if err != nil || len(aresp.GetListServicesResponse().GetService()) != len(want) {
		t.Fatalf("v1alpha ListServices = %v, %v", aresp, err)
	}
}

func TestStartStop(t *testing.T) {
	pki, err := trust.NewDevPKI(t.TempDir(), trust.Gateway, trust.Table)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Start(context.Background(), Config{
		ListenAddr: "127.0.0.1:0",
		TokensFile: writeFile(t, testTokens),
		TableAddr:  closedAddr(t), WalletAddr: closedAddr(t), ShoeAddr: closedAddr(t),
		Trust:  pki.Config(trust.Gateway),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Stop()
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Run(ctx, Config{ListenAddr: "127.0.0.1:0", TokensFile: writeFile(t, testTokens),
		TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: trust.Config{Insecure: true}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Run with cancelled ctx = %v", err)
	}

	insecure := trust.Config{Insecure: true}
	for name, c := range map[string]Config{
		"no TLS":              {ListenAddr: "127.0.0.1:0", TokensFile: writeFile(t, testTokens), TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1"},
		"another's cert":      {ListenAddr: "127.0.0.1:0", TokensFile: writeFile(t, testTokens), TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: pki.Config(trust.Table)},
		"jwks without issuer": {ListenAddr: "127.0.0.1:0", JWKS: writeFile(t, `{"keys":[]}`), TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: insecure},
		"no token file":       {ListenAddr: "127.0.0.1:0", TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: insecure},
		"missing file":        {ListenAddr: "127.0.0.1:0", TokensFile: filepath.Join(t.TempDir(), "nope.yaml"), TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: insecure},
		"no wallet addr":      {ListenAddr: "127.0.0.1:0", TokensFile: writeFile(t, testTokens), TableAddr: "a:1", ShoeAddr: "c:1", Trust: insecure},
		"bad listen":          {ListenAddr: "127.0.0.1:-1", TokensFile: writeFile(t, testTokens), TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: insecure},
		// A NaN rate is neither off (< 0) nor a rate (> 0): every call
		// would find no token bucket.
		"NaN rate limit": {ListenAddr: "127.0.0.1:0", TokensFile: writeFile(t, testTokens), TableAddr: "a:1", WalletAddr: "b:1", ShoeAddr: "c:1", Trust: insecure,
			Limits: LimitConfig{Rate: math.NaN()}},
	} {
		c.Logger = slog.New(slog.DiscardHandler)
		if g, err := Start(context.Background(), c); err == nil {
			g.Stop()
			_ = g.Wait()
			t.Errorf("%s: Start succeeded", name)
		}
	}
}

// TestMalformedRequest: a request message that does not decode as the
// method's input (bad wire format, a string that is not UTF-8) is refused
// by the gateway as INVALID_ARGUMENT MALFORMED_REQUEST, for every role and
// for unary and streaming calls alike, and reaches no backend (whose
// decoding would fail it as INTERNAL, without a reason).
func TestMalformedRequest(t *testing.T) {
	e := startEnv(t)
	for _, body := range [][]byte{{0xff, 0xff, 0xff}, {0x0a, 0x05, 'a'}, {0x0a, 0x02, 0xc3, 0x28}} {
		for _, c := range []struct{ method, token string }{
			{"/chemmy.table.v1.TableService/GetTable", "tok-carol"},
			{"/chemmy.table.v1.TableService/GetTable", "tok-alice"},
			{"/chemmy.table.v1.TableService/PlaceBet", "tok-alice"},
			{"/chemmy.wallet.v1.WalletService/Deposit", "tok-olga"},
			{"/chemmy.wallet.v1.WalletService/GetAccount", "tok-audrey"},
		} {
			var out frame
			err := e.conn.Invoke(e.as(c.token), c.method, &frame{data: body}, &out, grpc.ForceCodec(rawCodec{}))
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || errs.Info(err).GetReason() != ReasonMalformedRequest {
				t.Errorf("%s as %s with %x: %v, want INVALID_ARGUMENT %s", c.method, c.token, body, err, ReasonMalformedRequest)
			}
		}
		cs, err := e.conn.NewStream(e.as("tok-carol"), &grpc.StreamDesc{ServerStreams: true}, watchMethod, grpc.ForceCodec(rawCodec{}))
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.SendMsg(&frame{data: body}); err != nil {
			t.Fatal(err)
		}
		_ = cs.CloseSend()
		err = cs.RecvMsg(&frame{})
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || errs.Info(err).GetReason() != ReasonMalformedRequest {
			t.Errorf("Watch with %x: %v, want INVALID_ARGUMENT %s", body, err, ReasonMalformedRequest)
		}
	}
	e.table.mu.Lock()
	defer e.table.mu.Unlock()
	if len(e.table.betsFor) != 0 {
		t.Errorf("a malformed PlaceBet reached table-svc: %v", e.table.betsFor)
	}
}

// TestMalformedLocalRequest: the methods the gateway serves itself
// (GetCaller, health, reflection) answer a request that does not decode
// as INVALID_ARGUMENT MALFORMED_REQUEST too, after authentication (no
// token: UNAUTHENTICATED), where gRPC's own decoding answered INTERNAL;
// a request that decodes is answered as before.
func TestMalformedLocalRequest(t *testing.T) {
	e := startEnv(t)
	malformed := func(what string, err error) {
		t.Helper()
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || errs.Info(err).GetReason() != ReasonMalformedRequest {
			t.Errorf("%s: %v, want INVALID_ARGUMENT %s", what, err, ReasonMalformedRequest)
		}
	}
	const health = "/grpc.health.v1.Health/Check"
	for _, body := range [][]byte{{0xff, 0xff, 0xff}, {0x0a, 0x05, 'a'}} {
		for _, tok := range []string{"tok-alice", "tok-carol", "tok-olga", "tok-audrey"} {
			err := e.conn.Invoke(e.as(tok), getCaller, &frame{data: body}, &frame{}, grpc.ForceCodec(rawCodec{}))
			malformed(fmt.Sprintf("GetCaller as %s with %x", tok, body), err)
		}
		err := e.conn.Invoke(e.as(""), getCaller, &frame{data: body}, &frame{}, grpc.ForceCodec(rawCodec{}))
		wantStatus(t, err, codes.Unauthenticated, Domain, ReasonTokenMissing)
		err = e.conn.Invoke(e.as(""), health, &frame{data: body}, &frame{}, grpc.ForceCodec(rawCodec{}))
		malformed(fmt.Sprintf("health Check with %x", body), err)
		// Reflection: a bidirectional stream.
		cs, err := e.conn.NewStream(e.as(""), &grpc.StreamDesc{ServerStreams: true, ClientStreams: true},
			"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", grpc.ForceCodec(rawCodec{}))
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.SendMsg(&frame{data: body}); err != nil {
			t.Fatal(err)
		}
		_ = cs.CloseSend()
		malformed(fmt.Sprintf("reflection with %x", body), cs.RecvMsg(&frame{}))
	}
	got, err := gatewayv1.NewGatewayServiceClient(e.conn).GetCaller(e.as("tok-alice"), &gatewayv1.GetCallerRequest{})
	if err != nil || got.GetSubject() != "alice" {
		t.Errorf("GetCaller: %v %v", got, err)
	}
	if r, err := healthpb.NewHealthClient(e.conn).Check(e.as(""), &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health Check: %v %v", r, err)
	}
}
