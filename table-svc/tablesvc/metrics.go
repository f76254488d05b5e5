package tablesvc

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// tableMetrics are table-svc's business metrics. They are counted from
// the events of each change once it is committed (save): an event is
// stored exactly once (a retried request finds its idempotency record, a
// retried step of the coup saves nothing new, a group commit rolled back
// runs again before anything is counted), so each coup, bet and
// settlement counts once. Counters start at zero with the process, as
// Prometheus counters do.
type tableMetrics struct {
	coups   *prometheus.CounterVec
	bets    *prometheus.CounterVec
	wagered *prometheus.CounterVec
	settle  *prometheus.HistogramVec

	mu sync.Mutex
	// resulted: the time of each coup's result, until its settlement is
	// committed (a restart forgets them: those settlements are not
	// timed).
	resulted map[string]time.Time
	// tables: what the gauges read of each table committed since the
	// start, or found by their first scan (tableGauges).
	tables map[string]tableSeen
}

// maxResulted bounds tableMetrics.resulted (coups whose settlement never
// comes are dropped with the rest when it is full).
const maxResulted = 100_000

func newTableMetrics() *tableMetrics {
	m := &tableMetrics{
		coups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_coups_total",
			Help: "Coups ended, by game (variant) and outcome: bank_wins, bank_loses, stand_off (the result; at banque the bank's over both tables), or voided (every bet returned)."},
			[]string{"variant", "outcome"}),
		bets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_bets_total",
			Help: "Bets placed, by game (variant) and kind: bet (PlaceBet), banco (CallBanco)."}, []string{"variant", "kind"}),
		wagered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_wagered_minor_units_total",
			Help: "Money staked by those bets, in minor units, by game (variant) and kind."}, []string{"variant", "kind"}),
		settle: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chemmy_settlement_seconds",
			Help:    "Time from a coup's result to its settlement by wallet-svc being stored (coup_resulted to coup_settled), by game (variant).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14)}, []string{"variant"}),
		resulted: map[string]time.Time{},
		tables:   map[string]tableSeen{},
	}
	// Every game's series start at zero, so that dashboards and rates
	// see them before the first coup.
	for v := range tablev1.Variant_name {
		if v == 0 {
			continue
		}
		variant := variantLabel(v)
		for _, o := range []string{"bank_wins", "bank_loses", "stand_off", "voided"} {
			m.coups.WithLabelValues(variant, o)
		}
		for _, k := range []string{"bet", "banco"} {
			m.bets.WithLabelValues(variant, k)
			m.wagered.WithLabelValues(variant, k)
		}
		m.settle.WithLabelValues(variant)
	}
	return m
}

// variantLabel is the variant label of a table's game: chemin_de_fer,
// punto_banco, baccarat_banque, old_baccarat.
func variantLabel(v int32) string {
	return strings.ToLower(strings.TrimPrefix(canonical(tablev1.Variant(v)).String(), "VARIANT_"))
}

// outcomeLabel is the outcome label of a result: bank_wins, bank_loses,
// stand_off.
func outcomeLabel(o eventsv1.Outcome) string {
	return strings.ToLower(strings.TrimPrefix(o.String(), "OUTCOME_"))
}

// committed counts the events of a change of t that was just committed.
func (m *tableMetrics) committed(t *table, events []*eventsv1.TableEvent) {
	if m == nil {
		return
	}
	variant := variantLabel(t.Variant)
	m.mu.Lock()
	m.tables[t.ID] = tableSeen{seq: t.EventSeq, variant: variant, open: t.Phase != tablev1.TableState_TABLE_STATE_CLOSED, seated: len(t.Sessions)}
	m.mu.Unlock()
	for _, ev := range events {
		switch p := ev.GetPayload().(type) {
		case *eventsv1.TableEvent_BetPlaced:
			m.bets.WithLabelValues(variant, "bet").Inc()
			m.wagered.WithLabelValues(variant, "bet").Add(float64(p.BetPlaced.GetAmount()))
		case *eventsv1.TableEvent_BancoCalled:
			m.bets.WithLabelValues(variant, "banco").Inc()
			m.wagered.WithLabelValues(variant, "banco").Add(float64(p.BancoCalled.GetAmount()))
		case *eventsv1.TableEvent_CoupResulted:
			m.coups.WithLabelValues(variant, outcomeLabel(p.CoupResulted.GetOutcome())).Inc()
			m.mu.Lock()
			if len(m.resulted) >= maxResulted {
				clear(m.resulted)
			}
			m.resulted[ev.GetCoupId()] = ev.GetOccurTime().AsTime()
			m.mu.Unlock()
		case *eventsv1.TableEvent_CoupVoided:
			m.coups.WithLabelValues(variant, "voided").Inc()
		case *eventsv1.TableEvent_CoupSettled:
			m.mu.Lock()
			at, ok := m.resulted[ev.GetCoupId()]
			delete(m.resulted, ev.GetCoupId())
			m.mu.Unlock()
			if took := ev.GetOccurTime().AsTime().Sub(at); ok && took >= 0 {
				m.settle.WithLabelValues(variant).Observe(took.Seconds())
			}
		}
	}
}

// The gauges of what is at the tables now: chemmy_tables_open{variant}
// (tables not closed), chemmy_players_seated{variant} (players in a
// seat at them: a session open, sessions.go) and chemmy_table_watchers
// (WatchTable streams open). Read when scraped: the tables from what
// each commit left (committed), and, the first time, from a scan of the
// stored tables for those not changed since the start; the watchers
// from the gRPC server's count of its open streams.

// tableSeen is a table as the gauges count it; seq (its event_seq)
// orders what a commit and the first scan say of it.
type tableSeen struct {
	seq     uint64
	variant string
	open    bool
	seated  int
}

var (
	tablesOpenDesc = prometheus.NewDesc("chemmy_tables_open",
		"Tables open (created and not closed), by game (variant).", []string{"variant"}, nil)
	playersSeatedDesc = prometheus.NewDesc("chemmy_players_seated",
		"Players seated at the open tables (a seat and a session each; the gallery not counted), by game (variant).", []string{"variant"}, nil)
	watchersDesc = prometheus.NewDesc("chemmy_table_watchers",
		"WatchTable streams open (the table console, clients following a table; through the gateway each is one here).", nil, nil)
)

// RegisterGauges registers on the service's registry (its -metrics-addr,
// or the stack's) chemmy_tables_open, chemmy_players_seated and
// chemmy_table_watchers; whoever starts the service calls it once
// (table-svc's main, the stack).
func (s *Service) RegisterGauges() error {
	if err := s.base.Server.Registry.Register(&tableGauges{s: s}); err != nil {
		return fmt.Errorf("tablesvc: metrics: %w", err)
	}
	return nil
}

// tableGauges collects the gauges of the tables and their watchers.
type tableGauges struct {
	s    *Service
	once sync.Once
}

func (g *tableGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- tablesOpenDesc
	ch <- playersSeatedDesc
	ch <- watchersDesc
}

func (g *tableGauges) Collect(ch chan<- prometheus.Metric) {
	m := g.s.metrics
	g.once.Do(func() { g.scan(m) })
	open, seated := map[string]float64{}, map[string]float64{}
	for v := range tablev1.Variant_name {
		if v != 0 {
			open[variantLabel(v)], seated[variantLabel(v)] = 0, 0
		}
	}
	m.mu.Lock()
	for _, t := range m.tables {
		if t.open {
			open[t.variant]++
			seated[t.variant] += float64(t.seated)
		}
	}
	m.mu.Unlock()
	for v, n := range open {
		ch <- prometheus.MustNewConstMetric(tablesOpenDesc, prometheus.GaugeValue, n, v)
		ch <- prometheus.MustNewConstMetric(playersSeatedDesc, prometheus.GaugeValue, seated[v], v)
	}
	ch <- prometheus.MustNewConstMetric(watchersDesc, prometheus.GaugeValue,
		float64(g.s.base.Server.StreamsOpen(tablev1.TableService_WatchTable_FullMethodName)))
}

// scan reads the stored tables into m.tables, each unless a commit has
// told a later state of it.
func (g *tableGauges) scan(m *tableMetrics) {
	var stored struct {
		ID       string                     `json:"id"`
		Phase    tablev1.TableState         `json:"state"`
		Variant  int32                      `json:"variant"`
		EventSeq uint64                     `json:"event_seq"`
		Sessions map[string]json.RawMessage `json:"sessions"`
	}
	err := g.s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
			stored.Sessions = nil
			if json.Unmarshal(v, &stored) != nil {
				return nil // unreadable here: the table's own load says why
			}
			seen := tableSeen{seq: stored.EventSeq, variant: variantLabel(stored.Variant),
				open: stored.Phase != tablev1.TableState_TABLE_STATE_CLOSED, seated: len(stored.Sessions)}
			m.mu.Lock()
			if had, ok := m.tables[string(k)]; !ok || had.seq < seen.seq {
				m.tables[string(k)] = seen
			}
			m.mu.Unlock()
			return nil
		})
	})
	if err != nil {
		g.s.log.Warn("table gauges: the stored tables could not be read", "err", err)
	}
}
