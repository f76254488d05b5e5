package stack

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/kit/grpcx"
	"github.com/chemmy/chemmy/services/kit/natsauth"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// MetricsAddrs are the services' /metrics, /healthz, /readyz addresses
// (each service's gRPC server metrics, its outbox relay's; table-svc's
// also its calls to shoe-svc and wallet-svc and its timers), and Stack's:
// the process's default registry (store counters, Go runtime) and the
// business metrics read from the event stream. Empty serves none.
type MetricsAddrs struct{ Gateway, Table, Wallet, Shoe, Stack string }

// businessMetrics are counted from the events on the CHEMMY stream: the
// audit trail the services publish, so the figures are the published
// truth and no service code changes for them.
type businessMetrics struct {
	events      *prometheus.CounterVec
	coups       *prometheus.CounterVec
	voided      prometheus.Counter
	bets        *prometheus.CounterVec
	wagered     *prometheus.CounterVec
	commission  prometheus.Counter
	settle      prometheus.Histogram
	publishLag  prometheus.Histogram
	transfers   prometheus.Counter
	readErrors  prometheus.Counter
	mu          sync.Mutex
	resultTimes map[string]time.Time // coup id → its coup_resulted time
}

func newBusinessMetrics(reg prometheus.Registerer) *businessMetrics {
	m := &businessMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_events_total",
			Help: "Events read from the CHEMMY stream, by type and kind."}, []string{"type", "kind"}),
		coups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_coups_total",
			Help: "Coups with a result, by outcome (coup_resulted)."}, []string{"outcome"}),
		voided: prometheus.NewCounter(prometheus.CounterOpts{Name: "chemmy_coups_voided_total",
			Help: "Coups voided (coup_voided)."}),
		bets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_bets_total",
			Help: "Bets placed (bet) and banco calls (banco)."}, []string{"kind"}),
		wagered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_wagered_minor_units_total",
			Help: "Money wagered in minor units, by bet kind."}, []string{"kind"}),
		commission: prometheus.NewCounter(prometheus.CounterOpts{Name: "chemmy_commission_minor_units_total",
			Help: "House commission taken at settlement (coup_settled), in minor units."}),
		settle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "chemmy_settlement_seconds",
			Help:    "Time from a coup's result to its settlement by the wallet (coup_resulted to coup_settled).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14)}),
		publishLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "chemmy_event_publish_lag_seconds",
			Help:    "Time from an event's occurrence to its being in the stream (outbox relay delay, backlog).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14)}),
		transfers: prometheus.NewCounter(prometheus.CounterOpts{Name: "chemmy_wallet_transfers_total",
			Help: "Ledger transfers recorded (transfer_recorded)."}),
		readErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "chemmy_event_read_errors_total",
			Help: "Events of the stream that could not be read."}),
		resultTimes: map[string]time.Time{},
	}
	reg.MustRegister(m.events, m.coups, m.voided, m.bets, m.wagered, m.commission, m.settle, m.publishLag, m.transfers, m.readErrors)
	return m
}

// observe counts one message of the stream.
func (m *businessMetrics) observe(subject string, hdr nats.Header, data []byte, stored time.Time) {
	typ, kind := hdr.Get(outbox.TypeHeader), hdr.Get(outbox.KindHeader)
	if typ == "" {
		typ, kind = outbox.EventType(subject)
	}
	m.events.WithLabelValues(typ, kind).Inc()
	switch typ {
	case "chemmy.events.v1.WalletEvent":
		m.transfers.Inc()
		return
	case "chemmy.events.v1.TableEvent":
	default:
		return
	}
	ev := new(eventsv1.TableEvent)
	if err := proto.Unmarshal(data, ev); err != nil {
		m.readErrors.Inc()
		return
	}
	occur := ev.GetOccurTime().AsTime()
	if ev.GetOccurTime() != nil && !stored.IsZero() && stored.After(occur) {
		m.publishLag.Observe(stored.Sub(occur).Seconds())
	}
	switch p := ev.GetPayload().(type) {
	case *eventsv1.TableEvent_BetPlaced:
		m.bets.WithLabelValues("bet").Inc()
		m.wagered.WithLabelValues("bet").Add(float64(p.BetPlaced.GetAmount()))
	case *eventsv1.TableEvent_BancoCalled:
		m.bets.WithLabelValues("banco").Inc()
		m.wagered.WithLabelValues("banco").Add(float64(p.BancoCalled.GetAmount()))
	case *eventsv1.TableEvent_CoupResulted:
		m.coups.WithLabelValues(p.CoupResulted.GetOutcome().String()).Inc()
		m.mu.Lock()
		if len(m.resultTimes) > 100000 {
			clear(m.resultTimes)
		}
		m.resultTimes[ev.GetCoupId()] = occur
		m.mu.Unlock()
	case *eventsv1.TableEvent_CoupSettled:
		m.commission.Add(float64(p.CoupSettled.GetCommission()))
		m.mu.Lock()
		at, ok := m.resultTimes[ev.GetCoupId()]
		delete(m.resultTimes, ev.GetCoupId())
		m.mu.Unlock()
		if ok && occur.After(at) {
			m.settle.Observe(occur.Sub(at).Seconds())
		}
	case *eventsv1.TableEvent_CoupVoided:
		m.voided.Inc()
	}
}

// follow reads the new events of the stream until ctx ends, reconnecting
// as NATS does.
func (m *businessMetrics) follow(ctx context.Context, url, nkeyFile string, log *slog.Logger) {
	opts := []nats.Option{nats.Name("chemmy-stack-metrics"), nats.MaxReconnects(-1),
		nats.CustomInboxPrefix(natsauth.InboxPrefix(natsauth.Reader))}
	if nkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(nkeyFile)
		if err != nil {
			log.Warn("stack metrics: nkey", "err", err)
			return
		}
		opts = append(opts, o)
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		log.Warn("stack metrics: nats", "err", err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		cons, err := js.OrderedConsumer(ctx, outbox.StreamName, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{"chemmy.>"}, DeliverPolicy: jetstream.DeliverNewPolicy})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		cc, err := cons.Consume(func(msg jetstream.Msg) {
			var stored time.Time
			if md, err := msg.Metadata(); err == nil {
				stored = md.Timestamp
			}
			m.observe(msg.Subject(), msg.Headers(), msg.Data(), stored)
		})
		if err != nil {
			continue
		}
		<-ctx.Done()
		cc.Stop()
	}
}

// serveStackMetrics serves reg and the process's default registry on addr
// and counts the business metrics from the event stream, until Stop.
func (s *Stack) serveStackMetrics(ctx context.Context, addr string, reg *prometheus.Registry, readerNkey string, log *slog.Logger) {
	ctx, cancel := context.WithCancel(ctx)
	bm := newBusinessMetrics(reg)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		bm.follow(ctx, s.NATSURL, readerNkey, log)
	}()
	var serveErr error
	go func() {
		defer wg.Done()
		serveErr = grpcx.ServeGatherer(ctx, addr, prometheus.Gatherers{reg, prometheus.DefaultGatherer}, nil)
		if serveErr != nil {
			log.Error("stack metrics", "addr", addr, "err", serveErr)
		}
	}()
	s.add(cancel, func() error { wg.Wait(); return serveErr })
}
