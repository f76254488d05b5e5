// Package gateway is chemmy's one public gRPC endpoint. It authenticates
// callers by bearer token, enforces the role/method policy (policy.go),
// and forwards chemmy.table.v1.TableService, chemmy.wallet.v1.WalletService
// and chemmy.shoe.v1.ShoeService calls unchanged to their backends with the
// caller's identity in metadata. It serves chemmy.gateway.v1.GatewayService
// itself, plus gRPC health and server reflection for all public services.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/buildinfo"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// extraRoute is a forwarded service added by tests.
type extraRoute struct{ addr, identity string }

// Config is what Start needs.
type Config struct {
	// ListenAddr is the public gRPC address, e.g. "127.0.0.1:7000" or
	// "127.0.0.1:0".
	ListenAddr string
	// TokensFile is the YAML token file (see README.md); optional when
	// JWKS is given.
	TokensFile string
	// DefaultOperator is the operator (tenant) of the token-file entries
	// that name none and of the JWT issuer: an operator id (1 to 64 of
	// a-z, 0-9, '.', '_', '-'). Empty: DefaultOperatorID ("operator").
	DefaultOperator string
	// JWKS is the operator's JSON Web Key Set: a file path or an http(s)
	// URL. Bearer JWTs signed by one of its keys are accepted, with the
	// issuer JWTIssuer and the audience JWTAudience (both then required).
	JWKS, JWTIssuer, JWTAudience string
	// OperatorsFile is the operators file (package operators,
	// docs/operators.md): each operator's JWT issuer and JWKS; a JWT's
	// iss names its operator. Not with JWKS or JWTIssuer (refused);
	// JWTAudience is then the aud of the operators whose entry names
	// none.
	OperatorsFile string
	// JWTMaxLifetime is the longest an operator JWT may live: exp - iat,
	// or exp - now when it has no iat; a longer one is refused
	// UNAUTHENTICATED TOKEN_LIFETIME_TOO_LONG. 0: DefaultJWTMaxLifetime
	// (24 h); negative: no bound.
	JWTMaxLifetime time.Duration
	// ReloadInterval is how often the token file, the operators file and
	// the JWKS are read again; default 10 s.
	ReloadInterval time.Duration
	// Trust: the gateway's certificate (identity "gateway"), key and the
	// suite's CA, for mutual TLS to the backends and for signing caller
	// assertions; or Insecure (plaintext, identity metadata: development).
	Trust trust.Config
	// Limits: per-caller rate and stream caps. They are this gateway's:
	// each replica counts its own callers (README.md, "Abuse limits").
	Limits LimitConfig
	// TrustedProxies are the address ranges of the load balancers or
	// ingresses in front of the gateway (ParseTrustedProxies). A call from
	// one of them is counted, for the failed-authentication limit, against
	// the client named in its X-Forwarded-For header (HTTP) or
	// x-forwarded-for metadata (gRPC); from anyone else that header is
	// ignored. Default none: every client is its network address.
	TrustedProxies []netip.Prefix
	// MaxMessageBytes bounds a request message; default 1 MiB.
	MaxMessageBytes int
	// Conn bounds the public listeners' connections (gRPC and HTTP
	// together, and per client address) and how long one may stay slow or
	// idle (connlimit.go); zero values take the defaults.
	Conn ConnConfig
	// Backend addresses. TableAddr and ShoeAddr may list several,
	// comma-separated: the table-svc shards and each one's shoe-svc, shard
	// i at position i, as many of each (shards.go, package shard).
	TableAddr  string
	WalletAddr string
	ShoeAddr   string
	// MetricsAddr serves Prometheus /metrics, /healthz and /readyz; empty
	// serves none.
	MetricsAddr string
	// Ready, when set, is more of what /readyz (on MetricsAddr and
	// HTTPAddr) requires besides the gateway's own Ready: chemmy run
	// passes the whole suite's, so that the gateway's HTTP /readyz says
	// not ready, and why, when a service behind it is not.
	Ready func() error
	// Registry receives the gateway's metrics (gRPC server and client);
	// nil: a registry of its own, with the Go and process collectors.
	Registry *prometheus.Registry
	// HTTPAddr serves every public RPC as HTTP/JSON (Connect, gRPC-Web,
	// NDJSON streams; http.go), the table console, /healthz and /readyz;
	// empty serves none.
	HTTPAddr string
	// Logger; nil means slog.Default(). Lines logged with a traced call's
	// context carry its trace_id and span_id (grpcx.TraceLogger).
	Logger *slog.Logger
}

// stopTimeout bounds the graceful drain of calls in flight (long server
// streams included) at shutdown.
const stopTimeout = 10 * time.Second

// Gateway is a started gateway.
type Gateway struct {
	log      *slog.Logger
	srv      *grpc.Server
	health   *health.Server
	lis      net.Listener
	httpLis  net.Listener
	backends []*backend
	px       *proxy
	cancel   context.CancelFunc
	done     chan struct{}

	mu   sync.Mutex
	errs []error
}

// Start loads the token file, connects the backends (lazily: a backend
// that is down fails its calls, not the start) and serves until ctx is
// done or Stop is called.
func Start(ctx context.Context, c Config) (*Gateway, error) {
	return start(ctx, c, options{policy: defaultPolicy()})
}

// options are the parts of the gateway tests replace.
type options struct {
	policy policy
	// extraRoutes forwards more services (name → address and identity).
	extraRoutes map[string]extraRoute
}

func start(ctx context.Context, c Config, o options) (*Gateway, error) {
	log := grpcx.TraceLogger(c.Logger).With("service", "gateway")
	if c.ReloadInterval <= 0 {
		c.ReloadInterval = 10 * time.Second
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 1 << 20
	}
	if math.IsNaN(c.Limits.Rate) {
		return nil, errors.New("gateway: the rate limit is NaN: give calls per second, 0 for the default or a negative number for none")
	}
	ids, err := newIdentities(c, log, time.Now)
	if err != nil {
		return nil, err
	}
	mat, err := trust.Load(c.Trust)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	var signer *trust.Signer
	if mat == nil {
		log.Warn("INSECURE: plaintext to the backends, caller identity sent as plain metadata; development only")
	} else {
		if name, err := mat.Name(); err != nil || name != trust.Gateway {
			return nil, fmt.Errorf("gateway: the certificate must name %s (URI SAN %s): %q %v", trust.Gateway, trust.IdentityURI(trust.Gateway), name, err)
		}
		signer = trust.NewSigner(mat, nil)
	}
	rules, err := o.policy.compile(protoregistry.GlobalFiles)
	if err != nil {
		return nil, err
	}

	g := &Gateway{log: log, done: make(chan struct{})}
	px := newProxy(log, signer)
	type route struct{ svc, addrs, identity string }
	routes := []route{
		{tableService, c.TableAddr, trust.Table}, {walletService, c.WalletAddr, trust.Wallet}, {shoeService, c.ShoeAddr, trust.Shoe},
	}
	for svc, r := range o.extraRoutes {
		routes = append(routes, route{svc, r.addr, r.identity})
	}
	// The gateway's outgoing calls to the backends, by method and code.
	clientMetrics := grpcx.NewClientMetrics()
	for _, r := range routes {
		addrs, err := splitAddrs(r.addrs)
		if err != nil {
			g.closeBackends()
			return nil, fmt.Errorf("gateway: address of %s: %w", r.svc, err)
		}
		if len(addrs) > 1 && r.svc == walletService {
			g.closeBackends()
			return nil, fmt.Errorf("gateway: one wallet-svc address, got %d (the wallet is not sharded)", len(addrs))
		}
		for _, addr := range addrs {
			be, err := dialBackend(r.svc, addr, r.identity, mat, append(grpcx.ServiceClientTracing(trust.Gateway),
				grpc.WithChainUnaryInterceptor(clientMetrics.UnaryClientInterceptor()),
				grpc.WithChainStreamInterceptor(clientMetrics.StreamClientInterceptor()))...)
			if err != nil {
				g.closeBackends()
				return nil, fmt.Errorf("gateway: %w", err)
			}
			g.backends = append(g.backends, be)
			px.routes[r.svc] = append(px.routes[r.svc], be)
		}
	}
	if nt, ns := len(px.routes[tableService]), len(px.routes[shoeService]); nt != ns {
		g.closeBackends()
		return nil, fmt.Errorf("gateway: %d table-svc shards but %d shoe-svc addresses: each shard has its shoe-svc, in the same order", nt, ns)
	}

	reg := c.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector())
	}
	metrics := grpcx.NewServerMetrics()
	if err := reg.Register(metrics); err != nil {
		g.closeBackends()
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	if err := reg.Register(clientMetrics); err != nil {
		g.closeBackends()
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	if err := reg.Register(ids.reloadErrors); err != nil {
		g.closeBackends()
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	if exp := mat.Collector(); exp != nil {
		if err := reg.Register(exp); err != nil {
			g.closeBackends()
			return nil, fmt.Errorf("gateway: metrics: %w", err)
		}
	}
	cc := c.Conn.withDefaults(processNofile())
	conns := newConnLimiter(cc, c.TrustedProxies)
	if err := conns.register(reg); err != nil {
		g.closeBackends()
		return nil, err
	}
	lim := newLimits(c.Limits, time.Now)
	az := &authz{ids: ids, rules: rules, files: protoregistry.GlobalFiles, failures: lim, proxies: c.TrustedProxies}
	if ws := px.routes[walletService]; len(ws) == 1 {
		az.launch = &launchSessions{wallet: walletv1.NewWalletServiceClient(ws[0].conn), insecure: mat == nil, defaultOperator: ids.defaultOperator}
	}
	g.px = px
	g.srv = newServer(serverParts{log: log, metrics: metrics, known: g.knownMethod(px), az: az, lim: lim, px: px,
		size: sizeLimit{max: c.MaxMessageBytes}}, append(grpcx.ServerTracing(trust.Gateway), grpc.MaxRecvMsgSize(recvCeiling(c.MaxMessageBytes)),
		// A connection that says nothing (not even its HTTP/2 preface and
		// settings) is closed after cc.Handshake, one with no call open
		// after cc.IdleTimeout.
		grpc.ConnectionTimeout(cc.Handshake),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: cc.IdleTimeout}))...)

	g.health = health.NewServer()
	registerLocal(g.srv, &healthpb.Health_ServiceDesc, g.health)
	registerLocal(g.srv, &gatewayv1.GatewayService_ServiceDesc, callerServer{})
	commented, err := commentedFiles()
	if err != nil {
		g.closeBackends()
		return nil, err
	}
	refl := reflection.ServerOptions{
		Services:           publicServices{g.srv},
		DescriptorResolver: reflectionResolver{commented, protoregistry.GlobalFiles},
		ExtensionResolver:  protoregistry.GlobalTypes,
	}
	registerLocal(g.srv, &reflectionv1.ServerReflection_ServiceDesc, reflection.NewServerV1(refl))
	registerLocal(g.srv, &reflectionv1alpha.ServerReflection_ServiceDesc, reflection.NewServer(refl))
	metrics.InitializeMetrics(g.srv)

	lis, err := net.Listen("tcp", c.ListenAddr)
	if err != nil {
		g.closeBackends()
		return nil, fmt.Errorf("gateway: listen: %w", err)
	}
	g.lis = conns.listen(lis, "grpc", nil)
	for name := range (publicServices{g.srv}).GetServiceInfo() {
		g.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	g.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)

	ctx, g.cancel = context.WithCancel(ctx)
	var wg sync.WaitGroup
	if err := g.startHTTP(ctx, c, cc, conns, &wg); err != nil {
		g.cancel()
		_ = g.lis.Close()
		g.closeBackends()
		return nil, err
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		ids.reloadLoop(ctx, c.ReloadInterval)
	}()
	go func() {
		defer wg.Done()
		g.report(g.serve(ctx))
	}()
	go func() {
		defer wg.Done()
		g.report(grpcx.ServeMetrics(ctx, c.MetricsAddr, reg, g.probeReady(c.Ready)))
	}()
	go func() {
		wg.Wait()
		g.closeBackends()
		close(g.done)
	}()
	log.Info("serving", "addr", g.Addr(), "table", c.TableAddr, "wallet", c.WalletAddr,
		"shoe", c.ShoeAddr, "tokens_file", c.TokensFile, "jwks", c.JWKS, "trusted_proxies", c.TrustedProxies, "mtls", mat != nil, "metrics", c.MetricsAddr, "http", c.HTTPAddr,
		"max_conns", cc.MaxConns, "max_conns_per_addr", cc.MaxConnsPerAddr, "open_files_limit", processNofile())
	return g, nil
}

// Ready is nil while the gateway serves (its gRPC health SERVING:
// between its start and its shutdown), else an error saying it does not.
func (g *Gateway) Ready() error {
	r, err := g.health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errors.New("gateway: not serving (starting or stopping)")
	}
	return nil
}

// probeReady is what /readyz answers: Ready, then more (Config.Ready).
func (g *Gateway) probeReady(more func() error) func() error {
	return func() error {
		if err := g.Ready(); err != nil || more == nil {
			return err
		}
		return more()
	}
}

// Run starts the gateway and serves until ctx is done.
func Run(ctx context.Context, c Config) error {
	g, err := Start(ctx, c)
	if err != nil {
		return err
	}
	return g.Wait()
}

// Addr is the address the gateway listens on.
func (g *Gateway) Addr() string { return g.lis.Addr().String() }

// Stop asks the gateway to stop; Wait waits for it.
func (g *Gateway) Stop() { g.cancel() }

// Wait blocks until the gateway has stopped and returns the first error
// that stopped it, if any.
func (g *Gateway) Wait() error {
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	return errors.Join(g.errs...)
}

func (g *Gateway) report(err error) {
	if err == nil {
		return
	}
	g.mu.Lock()
	g.errs = append(g.errs, err)
	g.mu.Unlock()
	g.cancel()
}

// serve serves until ctx is done, then reports NOT_SERVING, drains calls
// in flight for up to stopTimeout and stops.
func (g *Gateway) serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- g.srv.Serve(g.lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	g.health.Shutdown()
	g.px.drain()
	done := make(chan struct{})
	go func() { g.srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		g.log.Warn("graceful stop timed out; stopping")
		g.srv.Stop()
		<-done
	}
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	g.log.Info("stopped")
	return nil
}

func (g *Gateway) closeBackends() {
	for _, be := range g.backends {
		if err := be.conn.Close(); err != nil {
			g.log.Warn("close backend", "backend", be.name, "err", err)
		}
	}
	g.backends = nil
}

// serverParts are what newServer puts together.
type serverParts struct {
	log     *slog.Logger
	metrics *grpcprom.ServerMetrics
	// known says which methods the metrics count under their own name
	// (others: grpcx.UnknownMethod).
	known func(fullMethod string) bool
	size  sizeLimit
	az    *authz
	lim   *limits
	px    *proxy
}

// newServer builds the gRPC server: recovery, metrics, logging, the
// request size limit, then authentication and roles, then the abuse
// limits; a raw codec so forwarded messages stay bytes; the proxy for
// every service not registered locally.
func newServer(p serverParts, opts ...grpc.ServerOption) *grpc.Server {
	log := p.log
	recover := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in handler", "panic", p)
		return status.Errorf(codes.Internal, "internal error")
	})
	return grpc.NewServer(append([]grpc.ServerOption{
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(p.px.handle),
		grpc.ChainUnaryInterceptor(
			recovery.UnaryServerInterceptor(recover),
			grpcx.UnaryServerMetrics(p.metrics, p.known),
			grpcx.UnaryAccessLog(log),
			p.size.unary,
			p.az.unary,
			p.lim.unary,
		),
		grpc.ChainStreamInterceptor(
			recovery.StreamServerInterceptor(recover),
			grpcx.StreamServerMetrics(p.metrics, p.known),
			grpcx.StreamAccessLog(log),
			p.size.stream,
			p.az.stream,
			p.lim.stream,
		),
	}, opts...)...)
}

// knownMethod reports whether a full method is one the gateway serves: a
// method of a service registered on its server (its own: GatewayService,
// health, reflection), or of a forwarded service's contract. Any other
// name, made up by the caller, is counted in the metrics as
// grpcx.UnknownMethod, so that made-up names add no series.
func (g *Gateway) knownMethod(px *proxy) func(string) bool {
	local := grpcx.RegisteredMethods(func() *grpc.Server { return g.srv })
	return func(m string) bool {
		if local(m) {
			return true
		}
		svc, name, ok := splitMethod(m)
		if !ok || len(px.routes[svc]) == 0 {
			return false
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc + "." + name))
		if err != nil {
			return false
		}
		_, isMethod := d.(protoreflect.MethodDescriptor)
		return isMethod
	}
}

// publicServices lists for reflection and health the services registered
// on the server and the forwarded ones.
type publicServices struct{ srv *grpc.Server }

func (p publicServices) GetServiceInfo() map[string]grpc.ServiceInfo {
	m := p.srv.GetServiceInfo()
	for _, name := range []string{tableService, walletService, shoeService} {
		m[name] = grpc.ServiceInfo{Metadata: "forwarded"}
	}
	return m
}
