package tablesvc

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestServiceMetrics: the service's own registry (what MetricsAddr
// serves) has chemmy_table_timers_pending (tables waiting for a turn with
// a time limit), chemmy_table_stuck, the calls to shoe-svc and wallet-svc
// (grpc_client_*) and its outbox relay's metrics.
func TestServiceMetrics(t *testing.T) {
	h := newHarness(t)
	reg := h.table.base.Server.Registry
	h.fund(10000, "alice", "bob")
	id := h.tableWith(&tablev1.HouseRules{DecisionTimeLimitMs: 10000}, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 1000) // a decision with a time limit
	want := `
# HELP chemmy_table_stuck Tables whose coup could not go on (shoe-svc or wallet-svc unreachable or refusing), queued for retry.
# TYPE chemmy_table_stuck gauge
chemmy_table_stuck 0
# HELP chemmy_table_timers_pending Tables waiting for a turn with a time limit (a bet, a decision, a bank offer).
# TYPE chemmy_table_timers_pending gauge
chemmy_table_timers_pending 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "chemmy_table_timers_pending", "chemmy_table_stuck"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(15 * time.Second)
	h.expire() // the decision is taken for the player: the coup ends
	if n, err := testutil.GatherAndCount(reg, "grpc_client_handled_total", "chemmy_outbox_backlog", "chemmy_outbox_published_total", "chemmy_outbox_publish_errors_total"); err != nil || n < 4 {
		t.Fatalf("%d series, %v", n, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "grpc_client_handled_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "grpc_service" {
					calls[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	if calls["chemmy.shoe.v1.ShoeService"] == 0 || calls["chemmy.wallet.v1.WalletService"] == 0 {
		t.Fatalf("client calls counted: %v", calls)
	}
}

// TestBusinessMetricsCountEachCoupOnce: a coup whose settlement reply is
// lost twice (the wallet applied it; table-svc retries) and whose last bet
// is sent again with its request id counts one coup, one bet and one
// settlement, by game and outcome.
func TestBusinessMetricsCountEachCoupOnce(t *testing.T) {
	h := newHarness(t)
	l := &lossy{drop: map[string]int{}}
	h.restartTableWith(grpc.WithChainUnaryInterceptor(l.intercept))
	reg := h.table.base.Server.Registry
	h.fund(10000, "alice", "bob")
	// Banker's natural 9 against the player's 8: the bank wins.
	id := h.tableWith(nil, 0, []string{"4C", "9H", "4D", "KS"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	l.drop["/chemmy.wallet.v1.WalletService/SettleCoup"] = 2
	bet := &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 500}
	_, first := h.tables.PlaceBet(h.as("bob"), bet)
	h.settleLoop(id)
	if !h.get(id).GetLastCoup().GetSettled() || l.drop["/chemmy.wallet.v1.WalletService/SettleCoup"] != 0 {
		t.Fatalf("coup %v, replies still to lose %v", h.get(id).GetLastCoup(), l.drop)
	}
	if _, err := h.tables.PlaceBet(h.as("bob"), bet); first == nil && err != nil {
		t.Fatalf("the bet sent again: %v", err)
	}
	m := h.table.metrics
	for name, c := range map[string]struct{ got, want float64 }{
		"coups (chemin de fer, bank wins)": {testutil.ToFloat64(m.coups.WithLabelValues("chemin_de_fer", "bank_wins")), 1},
		"coups":                            {sum(t, reg, "chemmy_coups_total"), 1},
		"bets (chemin de fer)":             {testutil.ToFloat64(m.bets.WithLabelValues("chemin_de_fer", "bet")), 1},
		"bets":                             {sum(t, reg, "chemmy_bets_total"), 1},
		"wagered":                          {sum(t, reg, "chemmy_wagered_minor_units_total"), 500},
		"settlements timed":                {sum(t, reg, "chemmy_settlement_seconds"), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
	// A restart counts nothing again: the coup is stored, not replayed.
	h.restartTable()
	if n := sum(t, h.table.base.Server.Registry, "chemmy_coups_total"); n != 0 {
		t.Errorf("after a restart: %v coups counted, want 0", n)
	}
}

// sum is the sum of the values (of a histogram: the counts) of every
// series of the metric name in reg.
func sum(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return n
}

// TestMetricLabels: the variant and outcome labels.
func TestMetricLabels(t *testing.T) {
	for v, want := range map[int32]string{0: "chemin_de_fer", 1: "chemin_de_fer", 2: "punto_banco", 3: "baccarat_banque", 4: "old_baccarat"} {
		if got := variantLabel(v); got != want {
			t.Errorf("variant %d: %q, want %q", v, got, want)
		}
	}
	if got := outcomeLabel(eventsv1.Outcome_OUTCOME_STAND_OFF); got != "stand_off" {
		t.Errorf("outcome label %q", got)
	}
}
