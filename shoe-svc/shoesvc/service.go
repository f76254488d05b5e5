package shoesvc

import (
	"context"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of [Config].
const (
	DefaultListenAddr = "127.0.0.1:7003"
	DefaultDBPath     = "data/shoe.db"
)

// SchemaVersion is the storage schema version stored in and checked
// against the bbolt file (see the package documentation for the layout).
const SchemaVersion uint32 = 3

// Domain is the ErrorInfo domain of this service's errors.
const Domain = "shoe.chemmy"

// Config configures the shoe service. The zero value is usable.
type Config struct {
	// ListenAddr is the gRPC address; "" means "127.0.0.1:7003". Tests use
	// "127.0.0.1:0".
	ListenAddr string
	// DBPath is the bbolt file; "" means "data/shoe.db". Its directory is
	// created. One process at a time may open it.
	DBPath string
	// NATSURL is the NATS JetStream URL; "" connects to no NATS (events,
	// when there are any, stay in the outbox).
	NATSURL string
	// MetricsAddr serves Prometheus /metrics over HTTP; "" serves none.
	MetricsAddr string
	// Registry receives the service's metrics; nil: a registry of its
	// own, with the Go and process collectors.
	Registry *prometheus.Registry
	// Trust: the service's certificate, key and the suite's CA (mutual
	// TLS; callers identified by certificate and the gateway's signed
	// assertions), or Insecure for plaintext development.
	Trust trust.Config
	// NATSNkeyFile is the nkey seed file the service authenticates to
	// NATS with; empty: no credentials.
	NATSNkeyFile string
	// Stream: the limits of the CHEMMY event stream when this service
	// creates it (an existing stream is never changed).
	Stream outbox.StreamLimits
	// RequestRetention is how long the idempotency record of a request_id
	// is kept, and those of a shoe still open as long as it is (see
	// retention); default 7 days (store.DefaultRetention), negative: for
	// ever. A request_id retried after that is a new request.
	RequestRetention time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Hook, when set, is called with the service's store and outbox relay
	// before it serves (app.Config.Hook): for the simulation (cmd/sim).
	Hook func(*app.Base)
	// IDPrefix starts the id of every shoe made here: the shard's
	// "s<k>-" in a sharded deployment (package shard), "" otherwise.
	IDPrefix string
}

// Policy is the role policy of ShoeService, keyed by full method name.
func Policy() auth.Policy {
	return auth.Policy{
		shoev1.ShoeService_CreateShoe_FullMethodName:          {auth.RoleService, auth.RoleCroupier, auth.RoleOperator},
		shoev1.ShoeService_CreateShoeFromOrder_FullMethodName: {auth.RoleOperator, auth.RoleService},
		shoev1.ShoeService_GetShoe_FullMethodName: {auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator,
			auth.RoleAuditor, auth.RoleService},
		shoev1.ShoeService_DealCard_FullMethodName: {auth.RoleService, auth.RoleCroupier, auth.RoleOperator},
		// A coup's opening cards in one call: the table service only.
		shoev1.ShoeService_DealCards_FullMethodName: {auth.RoleService},
		shoev1.ShoeService_CloseShoe_FullMethodName: {auth.RoleService, auth.RoleCroupier, auth.RoleOperator},
		// A player may cut only for himself (checked in Cut).
		shoev1.ShoeService_Cut_FullMethodName: {auth.RolePlayer, auth.RoleService, auth.RoleCroupier, auth.RoleOperator},
		shoev1.ShoeService_GetShoeReveal_FullMethodName: {auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator,
			auth.RoleAuditor, auth.RoleService},
		shoev1.ShoeService_ListCardFates_FullMethodName: {auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator,
			auth.RoleAuditor, auth.RoleService},
		// The old game's banker's move (OLD-CUT) goes through his table:
		// the table service only, never public (gateway policy).
		shoev1.ShoeService_MoveTopCardsToBottom_FullMethodName: {auth.RoleService},
		// A table claims the shoe it opens on (CreateTable) and hands it
		// its players' seeds: table-svc only.
		shoev1.ShoeService_ClaimShoe_FullMethodName: {auth.RoleService},
		shoev1.ShoeService_SeedShoe_FullMethodName:  {auth.RoleService},
	}
}

// Service is a running shoe service. It implements
// shoev1.ShoeServiceServer.
type Service struct {
	shoev1.UnimplementedShoeServiceServer

	base *app.Base
	db   *bolt.DB
	// commit group-commits the writes of DealCard, Cut, CloseShoe,
	// MoveTopCardsToBottom and the cut sweep (see update).
	commit *store.Committer
	log    *slog.Logger
	relay  *outbox.Relay
	opts   options
	// idPrefix: see Config.IDPrefix.
	idPrefix string
}

// options are what only this package's tests may change (see start).
type options struct {
	// newSeed returns the server seed of one shoe: always
	// fair.NewServerSeed (crypto/rand) in production.
	newSeed func() []byte
	// now is the clock of cut deadlines: always time.Now in production.
	now func() time.Time
	// sweep is the period of the expired-cut sweep.
	sweep time.Duration
}

func productionOptions() options {
	return options{newSeed: fair.NewServerSeed, now: time.Now, sweep: time.Second}
}

var _ shoev1.ShoeServiceServer = (*Service)(nil)

// Start opens the store, starts the gRPC server and returns once it
// listens. The service runs until ctx is done or Stop is called.
func Start(ctx context.Context, c Config) (*Service, error) {
	return start(ctx, c, productionOptions())
}

// StartWithServerSeeds is Start with each new shoe's server seed taken
// from seeds (512 bytes each) instead of crypto/rand. It exists for the
// tests that play whoever runs shoe-svc, who can know every server seed
// anyway: the table's seed protocol trusts a server seed only to be
// committed before any player's seed (docs/guide-fairness.md, "Provably fair shoes").
// No chemmy binary calls it, and no Config field, flag or environment
// variable reaches it.
func StartWithServerSeeds(ctx context.Context, c Config, seeds func() []byte) (*Service, error) {
	o := productionOptions()
	o.newSeed = seeds
	return start(ctx, c, o)
}

// start is Start with the options as a parameter: the only way to inject
// a clock, reachable from this package's tests only (and server seeds,
// with StartWithServerSeeds). No Config field, flag or environment
// variable reaches it.
func start(ctx context.Context, c Config, o options) (*Service, error) {
	if c.ListenAddr == "" {
		c.ListenAddr = DefaultListenAddr
	}
	if c.DBPath == "" {
		c.DBPath = DefaultDBPath
	}
	s := &Service{opts: o, idPrefix: c.IDPrefix}
	base, err := app.Start(ctx, app.Config{
		Name:         trust.Shoe,
		Trust:        c.Trust,
		Services:     []string{trust.Table},
		NATSNkeyFile: c.NATSNkeyFile,
		Stream:       c.Stream,
		ListenAddr:   c.ListenAddr,
		DBPath:       c.DBPath,
		Schema:       SchemaVersion,
		Buckets:      [][]byte{bucketShoes, bucketOrders, bucketSecrets, bucketFates, bucketCoups, bucketCutting},
		NATSURL:      c.NATSURL,
		MetricsAddr:  c.MetricsAddr,
		Registry:     c.Registry,
		Policy:       Policy(),
		Domain:       Domain,
		Logger:       c.Logger,
		Hook:         c.Hook,
	}, func(b *app.Base, g *grpc.Server) error {
		s.db, s.log, s.relay = b.DB, b.Log, b.Relay
		s.commit = store.CommitterFor(b.DB)
		shoev1.RegisterShoeServiceServer(g, s)
		b.Go(s.sweepLoop)
		b.Go(func(ctx context.Context) error {
			store.Sweep(ctx, b.DB, retention(c.RequestRetention), b.Log)
			return nil
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.base = base
	return s, nil
}

// Run starts the service and blocks until it has stopped (ctx done).
func Run(ctx context.Context, c Config) error {
	s, err := Start(ctx, c)
	if err != nil {
		return err
	}
	return s.Wait()
}

// Addr is the address the gRPC server listens on.
func (s *Service) Addr() string { return s.base.Addr() }

// Ready is nil while the service can do its job, else why not (its
// /readyz: app.Base.Ready).
func (s *Service) Ready() error { return s.base.Ready() }

// Stop asks the service to stop: it drains calls in flight and closes the
// store. Wait waits for it.
func (s *Service) Stop() { s.base.Stop() }

// Wait blocks until the service has stopped and its store is closed; it
// returns the first error of its background loops, if any.
func (s *Service) Wait() error { return s.base.Wait() }
