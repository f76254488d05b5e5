// Package app starts the parts every chemmy service has: its bbolt file,
// the NATS connection and outbox relay, the gRPC server (health,
// reflection, metrics, role checks) and the metrics endpoint, and stops
// them in order. A service's Start calls Start here with a function that
// registers its gRPC service.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"

	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// Config is what Start needs.
type Config struct {
	// Name of the service, for logs and the NATS connection name.
	Name string
	// ListenAddr is the gRPC address, e.g. ":7001" or "127.0.0.1:0".
	ListenAddr string
	// DBPath is the bbolt file; its directory is created.
	DBPath string
	// Schema is the storage schema version checked at open.
	Schema uint32
	// Buckets the service uses (the outbox's is added).
	Buckets [][]byte
	// NATSURL of the JetStream server; empty keeps events in the outbox.
	NATSURL string
	// MetricsAddr serves Prometheus /metrics (Registry), /healthz and
	// /readyz (Ready); empty serves none.
	MetricsAddr string
	// StallAfter is how long the outbox relay may go without publishing
	// while events wait, or keep failing, before the service reports not
	// ready (outbox.Relay.Health); 0: outbox.DefaultStallAfter (30 s).
	StallAfter time.Duration
	// Registry receives the service's metrics (gRPC server, outbox relay,
	// store counters, and what the service adds: Base.Server.Registry);
	// nil means a new registry with the Go and process collectors. A
	// process running several services (chemmy run) gives each its own
	// registry without those and serves them together.
	Registry *prometheus.Registry
	// NATSNkeyFile holds the nkey seed the service authenticates to NATS
	// with; empty connects without credentials.
	NATSNkeyFile string
	// Stream: the limits of the CHEMMY stream, used only when this service
	// is the one that creates it (an existing stream is never changed);
	// zero fields take outbox's defaults (7 days, 1 GiB, 1 replica);
	// limits outbox.StreamLimits.Validate refuses fail Start.
	Stream outbox.StreamLimits
	// Trust: the service's certificate, key and the suite's CA, or
	// Insecure (plaintext, metadata identity: development only).
	Trust trust.Config
	// Services may call this service on their own behalf, with the role
	// "service" (e.g. table-svc for wallet-svc). Other callers come
	// through the gateway with a signed assertion.
	Services []string
	// GatewayMethods the gateway may call on its own behalf, with the
	// role "service" (trust.Authenticator.GatewayMethods).
	GatewayMethods []string
	// Policy and Domain: role checks and their error domain.
	Policy auth.Policy
	Domain string
	Logger *slog.Logger
	// Hook, when set, is called with the service's parts (its store, its
	// outbox relay) once they are made, before the service serves or its
	// relay runs: for tests. The simulation (cmd/sim) sets the relay's
	// interceptor there (outbox.Relay.WithInterceptor: its calls to
	// JetStream fail, hang, time out) and keeps the store, to copy it at
	// the instant it kills the service mid-request. Nil in production.
	Hook func(*Base)
}

// Base is a started service.
type Base struct {
	DB     *bolt.DB
	Relay  *outbox.Relay
	Server *grpcx.Server
	Log    *slog.Logger
	// JS is the JetStream context, nil when no NATS URL was given.
	JS jetstream.JetStream
	// Stream is Config.Stream: pass it to outbox.CreateStream wherever the
	// service makes sure the stream exists.
	Stream outbox.StreamLimits

	writes  *store.WriteCheck
	lis     net.Listener
	metrics net.Listener // nil without Config.MetricsAddr
	nc      *nats.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	pending []func(context.Context) error
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
	done    chan struct{}
}

// Start opens the store, connects NATS, builds the server, lets register
// add the service, and serves until ctx is done (or Stop). Background
// loops given to Go run until then too.
func Start(ctx context.Context, c Config, register func(b *Base, s *grpc.Server) error) (*Base, error) {
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	// Lines logged with a traced call's context carry its trace id.
	log = grpcx.TraceLogger(log).With("service", c.Name)
	if err := c.Stream.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	mat, err := trust.Load(c.Trust)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	var authn auth.Authenticator = auth.Metadata{}
	if mat == nil {
		log.Warn("INSECURE: plaintext gRPC, and the caller identity metadata of anyone who connects is believed; development only")
	} else {
		ta := trust.NewAuthenticator(mat, c.Name, c.Services, nil)
		ta.GatewayMethods = c.GatewayMethods
		authn = ta
	}
	db, err := store.Open(c.DBPath, c.Schema, append([][]byte{outbox.Bucket}, c.Buckets...)...)
	if err != nil {
		return nil, err
	}
	b := &Base{DB: db, Log: log, done: make(chan struct{})}
	var js jetstream.JetStream
	if c.NATSURL != "" {
		b.nc, err = outbox.Connect(c.NATSURL, "chemmy-"+c.Name, c.NATSNkeyFile, nats.CustomInboxPrefix(natsauth.InboxPrefix(c.Name)))
		if err == nil {
			js, err = jetstream.New(b.nc)
		}
		if err != nil {
			b.closeAll()
			return nil, fmt.Errorf("%s: nats: %w", c.Name, err)
		}
	}
	b.JS, b.Stream = js, c.Stream
	b.Relay = outbox.NewRelay(db, js, log).WithStreamLimits(c.Stream).WithStallAfter(c.StallAfter)
	b.writes = store.NewWriteCheck(db, nil)
	b.Server = grpcx.New(grpcx.Options{Name: c.Name, Logger: c.Logger, Policy: c.Policy, Auth: authn, Domain: c.Domain,
		ServerOptions: mat.ServerOption(), Registry: c.Registry})
	// The relay's backlog, published and error counts, and the store's
	// commits and fsyncs of this service's file, on its own registry.
	if err := b.Relay.Register(b.Server.Registry); err != nil {
		b.closeAll()
		return nil, err
	}
	if err := b.Server.Registry.Register(store.CollectorOf(db)); err != nil {
		b.closeAll()
		return nil, fmt.Errorf("%s: store metrics: %w", c.Name, err)
	}
	// When its certificates expire (chemmy_certificate_expiry_timestamp_seconds).
	if exp := mat.Collector(); exp != nil {
		if err := b.Server.Registry.Register(exp); err != nil {
			b.closeAll()
			return nil, fmt.Errorf("%s: certificate metrics: %w", c.Name, err)
		}
	}
	if err := register(b, b.Server.GRPC); err != nil {
		b.closeAll()
		return nil, err
	}
	if c.Hook != nil {
		c.Hook(b)
	}
	b.lis, err = net.Listen("tcp", c.ListenAddr)
	if err != nil {
		b.closeAll()
		return nil, fmt.Errorf("%s: listen: %w", c.Name, err)
	}
	if c.MetricsAddr != "" {
		if b.metrics, err = net.Listen("tcp", c.MetricsAddr); err != nil {
			_ = b.lis.Close()
			b.closeAll()
			return nil, fmt.Errorf("%s: metrics listen: %w", c.Name, err)
		}
	}
	ctx, b.cancel = context.WithCancel(ctx)
	b.Go(func(ctx context.Context) error { return b.Server.Serve(ctx, b.lis) })
	b.Go(func(ctx context.Context) error { b.Relay.Run(ctx); return nil })
	if b.metrics != nil {
		b.Go(func(ctx context.Context) error {
			return grpcx.ServeGathererOn(ctx, b.metrics, b.Server.Registry, b.Ready)
		})
	}
	b.ctx = ctx
	for _, f := range b.pending {
		b.Go(f)
	}
	b.pending = nil
	go func() {
		b.wg.Wait()
		b.closeAll()
		close(b.done)
	}()
	log.Info("serving", "addr", b.Addr(), "db", c.DBPath, "nats", c.NATSURL != "")
	return b, nil
}

// Go runs f in the background until the service stops; an error it
// returns is reported by Wait. Called before Start has finished (from
// register), f starts when serving starts.
func (b *Base) Go(f func(ctx context.Context) error) {
	if b.ctx == nil {
		b.pending = append(b.pending, f)
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if err := f(b.ctx); err != nil {
			b.mu.Lock()
			b.errs = append(b.errs, err)
			b.mu.Unlock()
			b.cancel()
		}
	}()
}

// Addr is the address the gRPC server listens on.
func (b *Base) Addr() string { return b.lis.Addr().String() }

// MetricsAddr is the address of /metrics, /healthz and /readyz, as bound;
// empty when none is served.
func (b *Base) MetricsAddr() string {
	if b.metrics == nil {
		return ""
	}
	return b.metrics.Addr().String()
}

// Ready is nil while the service can do its job, else every reason it
// cannot (its /readyz answers 503 with them): its gRPC server does not
// serve (starting or stopping); its events are not being published (the
// outbox relay has published none while events wait, or failed at every
// attempt, for longer than Config.StallAfter: outbox.Relay.Health); its
// store does not take writes (store.WriteCheck: a full or failing disk, a
// closed file).
func (b *Base) Ready() error {
	var errs []error
	if err := b.Server.Ready(); err != nil {
		errs = append(errs, err)
	}
	if err := b.Relay.Health(); err != nil {
		errs = append(errs, err)
	}
	if err := b.writes.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Stop asks the service to stop; Wait waits for it.
func (b *Base) Stop() { b.cancel() }

// Wait blocks until the service has stopped and its store is closed, and
// returns the first error of its loops, if any.
func (b *Base) Wait() error {
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return errors.Join(b.errs...)
}

func (b *Base) closeAll() {
	if b.nc != nil {
		_ = b.nc.Drain()
	}
	if err := b.DB.Close(); err != nil {
		b.Log.Warn("close store", "err", err)
	}
}
