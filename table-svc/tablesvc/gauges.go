package tablesvc

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// The gauges of what is at the tables now:
// chemmy_tables_open{operator,variant} (tables not closed),
// chemmy_players_seated{operator,variant} (players in a seat at them: a
// session open, sessions.go), the operator being the table's (metrics.go
// says why the label is bounded), and chemmy_table_watchers
// (WatchTable streams open). Read when scraped: the tables from what
// each commit left (committed), and, the first time, from a scan of the
// stored tables for those not changed since the start; the watchers
// from the gRPC server's count of its open streams. Nothing in the shell
// refers to this file: whoever starts the service registers them
// (RegisterGauges).

var (
	tablesOpenDesc = prometheus.NewDesc("chemmy_tables_open",
		"Tables open (created and not closed), by operator and game (variant).", []string{"operator", "variant"}, nil)
	playersSeatedDesc = prometheus.NewDesc("chemmy_players_seated",
		"Players seated at the open tables (a seat and a session each; the gallery not counted), by operator and game (variant).", []string{"operator", "variant"}, nil)
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
	// Every game of every operator seen (the default one at least), at
	// zero when none of its tables is open.
	type key struct{ operator, variant string }
	open, seated := map[key]float64{}, map[key]float64{}
	m.mu.Lock()
	for op := range m.operators {
		for v := range tablev1.Variant_name {
			if v != 0 {
				k := key{op, variantLabel(v)}
				open[k], seated[k] = 0, 0
			}
		}
	}
	for _, t := range m.tables {
		if t.open {
			k := key{t.operator, t.variant}
			open[k]++
			seated[k] += float64(t.seated)
		}
	}
	m.mu.Unlock()
	for k, n := range open {
		ch <- prometheus.MustNewConstMetric(tablesOpenDesc, prometheus.GaugeValue, n, k.operator, k.variant)
		ch <- prometheus.MustNewConstMetric(playersSeatedDesc, prometheus.GaugeValue, seated[k], k.operator, k.variant)
	}
	ch <- prometheus.MustNewConstMetric(watchersDesc, prometheus.GaugeValue,
		float64(g.s.base.Server.StreamsOpen(tablev1.TableService_WatchTable_FullMethodName)))
}

// scan reads the stored tables into m.tables, each unless a commit has
// told a later state of it.
func (g *tableGauges) scan(m *tableMetrics) {
	var stored struct {
		ID       string              `json:"id"`
		Operator string              `json:"operator_id"`
		Phase    tablev1.TableState  `json:"state"`
		Variant  int32               `json:"variant"`
		EventSeq uint64              `json:"event_seq"`
		Sessions map[string]struct{} `json:"sessions"`
	}
	err := g.s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
			stored.Sessions, stored.Operator = nil, ""
			if decodeShell(v, &stored) != nil {
				return nil // unreadable here: the table's own load says why
			}
			op := stored.Operator
			if op == "" {
				op = DefaultOperator // stored before tables had operators
			}
			seen := tableSeen{seq: stored.EventSeq, operator: op, variant: variantLabel(stored.Variant),
				open: stored.Phase != tablev1.TableState_TABLE_STATE_CLOSED, seated: len(stored.Sessions)}
			m.mu.Lock()
			m.startOperator(op)
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
