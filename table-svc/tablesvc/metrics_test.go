package tablesvc

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
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
		"coups (chemin de fer, bank wins)": {testutil.ToFloat64(m.coups.WithLabelValues(DefaultOperator, "chemin_de_fer", "bank_wins")), 1},
		"coups":                            {sum(t, reg, "chemmy_coups_total"), 1},
		"bets (chemin de fer)":             {testutil.ToFloat64(m.bets.WithLabelValues(DefaultOperator, "chemin_de_fer", "bet")), 1},
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

// TestMetricsByOperator: the business series are split by the table's
// operator: casino-a's coup (abe's 9 beats the bank's 8: bank_loses, one
// bet of 500) counts in casino-a's series only; casino-b's open table
// with one player seated and no coup in casino-b's; both operators'
// series exist (at zero where nothing happened) beside the default
// operator's; the gauges say the same after a restart (read from the
// store). Expected values are those of the coup played, not of the code.
func TestMetricsByOperator(t *testing.T) {
	h := newHarness(t)
	if err := h.table.RegisterGauges(); err != nil {
		t.Fatal(err)
	}
	for op, players := range map[string][]string{"casino-a": {"ann", "abe"}, "casino-b": {"bea"}} {
		for _, p := range players {
			if _, err := h.wallets.Deposit(h.asOf("op", auth.RoleOperator, op), &walletv1.DepositRequest{RequestId: "fund/" + p, AccountId: "player:" + p, Amount: 10000}); err != nil {
				t.Fatalf("%s funds %s: %v", op, p, err)
			}
		}
	}
	aCroupier := h.asOf("operator-a", auth.RoleOperator, "casino-a")
	order := []string{"4C", "3H", "5D", "5S"}
	for len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := h.shoes.CreateShoeFromOrder(aCroupier, &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	created, err := h.tables.CreateTable(aCroupier, &tablev1.CreateTableRequest{RequestId: h.rid(), HouseRules: certMoney(nil), ShoeId: sh.GetShoe().GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	a := created.GetTable().GetTableId()
	for _, p := range []string{"ann", "abe"} {
		if _, err := h.tables.JoinTable(h.asOf(p, auth.RolePlayer, "casino-a"), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: a, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.AcceptBank(h.asOf("ann", auth.RolePlayer, "casino-a"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: a, PlayerId: "ann", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	bet, err := h.tables.PlaceBet(h.asOf("abe", auth.RolePlayer, "casino-a"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: a, PlayerId: "abe", Amount: 500})
	if err != nil || !bet.GetTable().GetLastCoup().GetSettled() {
		t.Fatalf("casino-a's coup: %v, %v", bet.GetTable().GetLastCoup(), err)
	}
	bResp, err := h.tables.CreateTable(h.asOf("croupier-b", auth.RoleCroupier, "casino-b"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.JoinTable(h.asOf("bea", auth.RolePlayer, "casino-b"), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: bResp.GetTable().GetTableId(), PlayerId: "bea"}); err != nil {
		t.Fatal(err)
	}

	cf := "chemin_de_fer"
	check := func(when string, want map[string]float64) {
		t.Helper()
		mfs, err := h.table.base.Server.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				var ls []string
				for _, l := range m.GetLabel() {
					ls = append(ls, l.GetName()+"="+l.GetValue())
				}
				got[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			}
		}
		for series, w := range want {
			if g, ok := got[series]; !ok || g != w {
				t.Errorf("%s: %s = %v (present %v), want %v", when, series, g, ok, w)
			}
		}
	}
	gauges := map[string]float64{
		"chemmy_tables_open{operator=casino-a,variant=" + cf + "}":    1,
		"chemmy_players_seated{operator=casino-a,variant=" + cf + "}": 2,
		"chemmy_tables_open{operator=casino-b,variant=" + cf + "}":    1,
		"chemmy_players_seated{operator=casino-b,variant=" + cf + "}": 1,
		"chemmy_tables_open{operator=operator,variant=" + cf + "}":    0,
		"chemmy_tables_open{operator=casino-b,variant=punto_banco}":   0,
	}
	want := map[string]float64{
		"chemmy_coups_total{operator=casino-a,outcome=bank_loses,variant=" + cf + "}":     1,
		"chemmy_coups_total{operator=casino-b,outcome=bank_loses,variant=" + cf + "}":     0,
		"chemmy_coups_total{operator=operator,outcome=bank_loses,variant=" + cf + "}":     0,
		"chemmy_bets_total{kind=bet,operator=casino-a,variant=" + cf + "}":                1,
		"chemmy_bets_total{kind=bet,operator=casino-b,variant=" + cf + "}":                0,
		"chemmy_wagered_minor_units_total{kind=bet,operator=casino-a,variant=" + cf + "}": 500,
		"chemmy_wagered_minor_units_total{kind=bet,operator=casino-b,variant=" + cf + "}": 0,
		"chemmy_settlement_seconds{operator=casino-a,variant=" + cf + "}":                 1,
		"chemmy_settlement_seconds{operator=casino-b,variant=" + cf + "}":                 0,
	}
	maps.Copy(want, gauges)
	check("after the coup", want)

	h.restartTable()
	if err := h.table.RegisterGauges(); err != nil {
		t.Fatal(err)
	}
	check("after a restart", gauges)
}
