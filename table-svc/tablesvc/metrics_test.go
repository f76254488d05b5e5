package tablesvc

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

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
