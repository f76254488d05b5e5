package tablesvc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/app"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// Start opens the store, connects to shoe-svc and wallet-svc, resumes
// tables left mid-coup and serves until ctx is done or Stop.
func Start(ctx context.Context, c Config) (*Service, error) {
	if c.DBPath == "" {
		return nil, fmt.Errorf("tablesvc: DBPath is required")
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:7001"
	}
	if c.ShoeAddr == "" {
		c.ShoeAddr = "localhost:7003"
	}
	if c.WalletAddr == "" {
		c.WalletAddr = "localhost:7002"
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = time.Second
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.InterruptAfter <= 0 {
		c.InterruptAfter = DefaultInterruptAfter
	}
	if c.RoundRetention == 0 {
		c.RoundRetention = DefaultRoundRetention
	}
	if c.SeedWindow <= 0 {
		c.SeedWindow = DefaultSeedWindow
	}
	s := &Service{started: c.Clock(), retry: c.RetryInterval, idPrefix: c.IDPrefix, interruptAfter: c.InterruptAfter, seedWindow: c.SeedWindow, now: c.Clock, stuck: map[string]time.Time{}, deadlines: map[string]time.Time{},
		metrics: newTableMetrics(), lobbyScan: maxLobbyScan, roundScan: maxRoundScan}
	s.hub = newWatchHub()
	mat, err := trust.Load(c.Trust)
	if err != nil {
		return nil, fmt.Errorf("tablesvc: %w", err)
	}
	// The calls to shoe-svc and wallet-svc, by method and code, on this
	// service's registry (each service has its own: several in one
	// process register nothing twice).
	cm := grpcx.NewClientMetrics()
	// Its calls carry the trace (OpenTelemetry, when configured: see
	// grpcx.SetupTracing), so traces cross from table-svc to the others.
	dial := append(append(append([]grpc.DialOption(nil), c.DialOptions...), grpcx.ClientTracing()...),
		grpc.WithChainUnaryInterceptor(cm.UnaryClientInterceptor()), grpc.WithChainStreamInterceptor(cm.StreamClientInterceptor()))
	for _, dep := range []struct{ addr, name string }{{c.ShoeAddr, trust.Shoe}, {c.WalletAddr, trust.Wallet}} {
		cc, err := mat.Dial(dep.addr, dep.name, trust.Table, dial...)
		if err != nil {
			s.closeConns()
			return nil, fmt.Errorf("tablesvc: dial %s: %w", dep.addr, err)
		}
		s.conns = append(s.conns, cc)
	}
	s.shoe = shoev1.NewShoeServiceClient(s.conns[0])
	s.wallet = walletv1.NewWalletServiceClient(s.conns[1])

	_, err = app.Start(ctx, app.Config{
		Name: trust.Table, ListenAddr: c.ListenAddr, DBPath: c.DBPath, Schema: schemaVersion,
		Buckets: append([][]byte{bucketTables, bucketIntents, bucketRecentCoups}, historyBuckets...), NATSURL: c.NATSURL, NATSNkeyFile: c.NATSNkeyFile,
		MetricsAddr: c.MetricsAddr, Registry: c.Registry, Trust: c.Trust, Policy: policy, Domain: domain, Logger: c.Logger, Stream: c.Stream, Hook: c.Hook,
	}, func(b *app.Base, g *grpc.Server) error {
		s.base, s.db, s.log = b, b.DB, b.Log
		s.commit = store.CommitterFor(b.DB)
		if err := s.registerMetrics(b.Server.Registry, cm); err != nil {
			return err
		}
		// Before the first call: unfinished coups queued, pending turns
		// given their time again (scanUnfinished).
		if err := s.scanUnfinished(); err != nil {
			return err
		}
		b.Relay.WithPublishedCheck(s.publishedCheck())
		tablev1.RegisterTableServiceServer(g, s)
		if c.RetryInterval > 0 {
			b.Go(s.retryLoop)
			b.Go(func(ctx context.Context) error {
				store.Sweep(ctx, b.DB, store.Retention{Keep: c.RequestRetention}, b.Log)
				return nil
			})
			b.Go(func(ctx context.Context) error {
				s.sweepRounds(ctx, c.RoundRetention)
				return nil
			})
		}
		return nil
	})
	if err != nil {
		s.closeConns()
		return nil, err
	}
	return s, nil
}

// Run starts the service and blocks until it has stopped.
func Run(ctx context.Context, c Config) error {
	s, err := Start(ctx, c)
	if err != nil {
		return err
	}
	return s.Wait()
}

// Addr is the gRPC listen address.
func (s *Service) Addr() string { return s.base.Addr() }

// Ready is nil while the service can do its job, else why not (its
// /readyz: app.Base.Ready).
func (s *Service) Ready() error { return s.base.Ready() }

// Stop asks the service to stop.
func (s *Service) Stop() { s.base.Stop() }

// Wait blocks until the service has stopped.
func (s *Service) Wait() error {
	err := s.base.Wait()
	s.closeConns()
	return err
}

func (s *Service) closeConns() {
	for _, cc := range s.conns {
		_ = cc.Close()
	}
}

// registerMetrics registers on reg (the service's own registry, served on
// MetricsAddr) the client metrics cm of the calls to shoe-svc and
// wallet-svc, the business metrics (tableMetrics),
// chemmy_table_timers_pending (tables with a pending turn deadline),
// chemmy_table_stuck (tables queued for retry) and
// chemmy_table_escrow_intents (escrow intents not rolled back yet), all
// read when scraped.
func (s *Service) registerMetrics(reg prometheus.Registerer, cm *grpcprom.ClientMetrics) error {
	size := func(m *map[string]time.Time) func() float64 {
		return func() float64 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return float64(len(*m))
		}
	}
	for _, c := range []prometheus.Collector{cm, s.metrics.coups, s.metrics.bets, s.metrics.wagered, s.metrics.settle,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_table_timers_pending",
			Help: "Tables waiting for a turn with a time limit (a bet, a decision, a bank offer)."}, size(&s.deadlines)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_table_stuck",
			Help: "Tables whose coup could not go on (shoe-svc or wallet-svc unreachable or refusing), queued for retry."}, size(&s.stuck)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "chemmy_table_escrow_intents",
			Help: "Escrow intents whose action was not stored (a wallet hold cut off), waiting for recovery to cancel them (NaN: the store is closed)."}, s.intentCount),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("tablesvc: metrics: %w", err)
		}
	}
	return nil
}

// intentCount is the number of escrow intents stored (intent.go): holds
// asked of wallet-svc whose action is in progress, or was cut off and is
// not rolled back yet; NaN when the store cannot be read (closed).
func (s *Service) intentCount() float64 {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketIntents).Stats().KeyN
		return nil
	})
	if err != nil {
		return math.NaN()
	}
	return float64(n)
}

// publishedCheck tells the outbox relay which of the events found in the
// outbox at start were published already (outbox.PublishedCheck): a
// table's events carry a gapless sequence, so an event whose sequence is
// not above that of the table's last event in the stream was. It
// remembers each table's last sequence, and asks the stream again for an
// event above it.
func (s *Service) publishedCheck() outbox.PublishedCheck {
	var mu sync.Mutex
	last := map[string]uint64{}
	return func(ctx context.Context, js jetstream.JetStream, m outbox.Message) (bool, error) {
		evs, err := tableevents.Decode("", m.Subject, m.Payload)
		if err != nil || len(evs) == 0 {
			return false, nil // not a table event: publish it
		}
		// A batch's events are consecutive: it was published when its
		// last one was.
		ev := evs[len(evs)-1]
		if ev.GetSequence() == 0 {
			// A one-player event (a reality check) is outside the table's
			// sequence: published again, deduplicated by its id.
			return false, nil
		}
		mu.Lock()
		seq, ok := last[ev.GetTableId()]
		mu.Unlock()
		// A table's last event only moves up: a cached answer that says
		// "published" stays true; one that does not is asked again.
		if !ok || ev.GetSequence() > seq {
			st, err := js.Stream(ctx, outbox.StreamName)
			if err != nil {
				return false, err
			}
			raw, err := st.GetLastMsgForSubject(ctx, tableevents.TableSubjects(ev.GetTableId()))
			switch {
			case errors.Is(err, jetstream.ErrMsgNotFound):
			case err != nil:
				return false, err
			default:
				prev, err := tableevents.Decode(raw.Header.Get(outbox.TypeHeader), raw.Subject, raw.Data)
				if err != nil {
					return false, err
				}
				if len(prev) > 0 {
					seq = prev[len(prev)-1].GetSequence()
				}
			}
			mu.Lock()
			last[ev.GetTableId()] = seq
			mu.Unlock()
		}
		return ev.GetSequence() <= seq, nil
	}
}
