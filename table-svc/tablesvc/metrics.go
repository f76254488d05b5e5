package tablesvc

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
//
// Every business series (these and the gauges of gauges.go) is labelled
// by the table's operator (tenant; design-tenancy): one set of series per
// operator. The operators are few and are the deployment's (a table's
// operator is its creator's, which the gateway takes from its token file
// or operators file, never from what a caller sends), so the label's
// values are bounded by configuration. Transport series (gRPC, NATS, the
// outbox) have no operator label.
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
	// tables: what the gauges (gauges.go) read of each table committed
	// since the start, or found by their first scan.
	tables map[string]tableSeen
	// operators whose series have been started at zero.
	operators map[string]bool
}

// maxResulted bounds tableMetrics.resulted (coups whose settlement never
// comes are dropped with the rest when it is full).
const maxResulted = 100_000

func newTableMetrics() *tableMetrics {
	m := &tableMetrics{
		coups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_coups_total",
			Help: "Coups ended, by operator, game (variant) and outcome: bank_wins, bank_loses, stand_off (the result; at banque the bank's over both tables), or voided (every bet returned)."},
			[]string{"operator", "variant", "outcome"}),
		bets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_bets_total",
			Help: "Bets placed, by operator, game (variant) and kind: bet (PlaceBet), banco (CallBanco)."}, []string{"operator", "variant", "kind"}),
		wagered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chemmy_wagered_minor_units_total",
			Help: "Money staked by those bets, in minor units, by operator, game (variant) and kind."}, []string{"operator", "variant", "kind"}),
		settle: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chemmy_settlement_seconds",
			Help:    "Time from a coup's result to its settlement by wallet-svc being stored (coup_resulted to coup_settled), by operator and game (variant).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14)}, []string{"operator", "variant"}),
		resulted:  map[string]time.Time{},
		tables:    map[string]tableSeen{},
		operators: map[string]bool{},
	}
	m.startOperator(DefaultOperator)
	return m
}

// startOperator starts every game's series of operator op at zero (once),
// so that dashboards and rates see them before the operator's first coup:
// the default operator's at the start, another's when its first table is
// seen. Called with m.mu held, or before m is shared.
func (m *tableMetrics) startOperator(op string) {
	if m.operators[op] {
		return
	}
	m.operators[op] = true
	for v := range tablev1.Variant_name {
		if v == 0 {
			continue
		}
		variant := variantLabel(v)
		for _, o := range []string{"bank_wins", "bank_loses", "stand_off", "voided"} {
			m.coups.WithLabelValues(op, variant, o)
		}
		for _, k := range []string{"bet", "banco"} {
			m.bets.WithLabelValues(op, variant, k)
			m.wagered.WithLabelValues(op, variant, k)
		}
		m.settle.WithLabelValues(op, variant)
	}
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
	variant, op := variantLabel(t.Variant), t.operator()
	m.mu.Lock()
	m.startOperator(op)
	m.tables[t.ID] = tableSeen{seq: t.EventSeq, operator: op, variant: variant, open: t.Phase != tablev1.TableState_TABLE_STATE_CLOSED, seated: len(t.Sessions)}
	m.mu.Unlock()
	for _, ev := range events {
		switch p := ev.GetPayload().(type) {
		case *eventsv1.TableEvent_BetPlaced:
			m.bets.WithLabelValues(op, variant, "bet").Inc()
			m.wagered.WithLabelValues(op, variant, "bet").Add(float64(p.BetPlaced.GetAmount()))
		case *eventsv1.TableEvent_BancoCalled:
			m.bets.WithLabelValues(op, variant, "banco").Inc()
			m.wagered.WithLabelValues(op, variant, "banco").Add(float64(p.BancoCalled.GetAmount()))
		case *eventsv1.TableEvent_CoupResulted:
			m.coups.WithLabelValues(op, variant, outcomeLabel(p.CoupResulted.GetOutcome())).Inc()
			m.mu.Lock()
			if len(m.resulted) >= maxResulted {
				clear(m.resulted)
			}
			m.resulted[ev.GetCoupId()] = ev.GetOccurTime().AsTime()
			m.mu.Unlock()
		case *eventsv1.TableEvent_CoupVoided:
			m.coups.WithLabelValues(op, variant, "voided").Inc()
		case *eventsv1.TableEvent_CoupSettled:
			m.mu.Lock()
			at, ok := m.resulted[ev.GetCoupId()]
			delete(m.resulted, ev.GetCoupId())
			m.mu.Unlock()
			if took := ev.GetOccurTime().AsTime().Sub(at); ok && took >= 0 {
				m.settle.WithLabelValues(op, variant).Observe(took.Seconds())
			}
		}
	}
}

// tableSeen is a table as the gauges of gauges.go count it: its
// operator, its game, whether it is open and how many players sit there;
// seq (its event_seq) orders what a commit and the gauges' first scan
// say of it.
type tableSeen struct {
	seq      uint64
	operator string
	variant  string
	open     bool
	seated   int
}
