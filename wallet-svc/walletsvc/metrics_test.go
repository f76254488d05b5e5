package walletsvc

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// wantMetrics compares the named metrics of the service's registry.
func (e *env) wantMetrics(want string, names ...string) {
	e.t.Helper()
	if err := testutil.GatherAndCompare(e.svc.base.Server.Registry, strings.NewReader(want), names...); err != nil {
		e.t.Error(err)
	}
}

// wantHoldGauges checks chemmy_holds_open and chemmy_escrow_minor_units
// (EUR) against the ledger's own audit.
func (e *env) wantHoldGauges(open, held int64) {
	e.t.Helper()
	a, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	if a.GetOpenHolds() != open || a.GetCurrencies()[0].GetHeld() != held {
		e.t.Fatalf("audit: %d open holds, %d held; the test expects %d, %d", a.GetOpenHolds(), a.GetCurrencies()[0].GetHeld(), open, held)
	}
	m := e.svc.metrics
	if got := testutil.ToFloat64(m.holdsOpen.WithLabelValues("operator", "EUR")); got != float64(open) {
		e.t.Errorf("chemmy_holds_open{operator=\"operator\",currency=\"EUR\"} %v, want %d (the audit's)", got, open)
	}
	if got := testutil.ToFloat64(m.escrow.WithLabelValues("operator", "EUR")); got != float64(held) {
		e.t.Errorf("chemmy_escrow_minor_units{operator=\"operator\",currency=\"EUR\"} %v, want %d (the audit's)", got, held)
	}
}

// TestMetricsCountCommitsOnce: transfers, commission and settlements
// count once per commit (a settlement sent again counts nothing), and
// the hold gauges follow holds placed, settled, voided and expired, equal
// to the audit's figures, also after a restart (loaded from the ledger).
func TestMetricsCountCommitsOnce(t *testing.T) {
	e := newEnv(t)
	e.wantHoldGauges(0, 0)
	e.deposit("player:banker", 2000)
	e.deposit("player:p1", 1000)
	e.deposit("player:p2", 1000)
	bank := e.hold("player:banker", 1000)
	h1, h2 := e.hold("player:p1", 600), e.hold("player:p2", 400)
	spare := e.hold("player:p2", 100)
	e.wantHoldGauges(4, 2100)

	req := &walletv1.SettleCoupRequest{CoupId: "coup-m1", BankHoldId: bank.GetHoldId(), Bets: bets(h1, h2), Outcome: bankWins, CommissionBp: 500}
	e.settle(req)
	e.settle(req) // answered from its record: nothing moves, nothing counts
	// The bank won 1000, less 5%: its hold grows to the new bank of 1950.
	e.wantHoldGauges(2, 1950+100)
	e.wantMetrics(`
# HELP chemmy_commission_minor_units_total Commission the house took from coup settlements (paid into house:commission), in minor units, by game (variant) and currency.
# TYPE chemmy_commission_minor_units_total counter
chemmy_commission_minor_units_total{currency="EUR",operator="operator",variant="baccarat_banque"} 0
chemmy_commission_minor_units_total{currency="EUR",operator="operator",variant="chemin_de_fer"} 50
chemmy_commission_minor_units_total{currency="EUR",operator="operator",variant="old_baccarat"} 0
chemmy_commission_minor_units_total{currency="EUR",operator="operator",variant="punto_banco"} 0
# HELP chemmy_settlements_total Coups settled (their money moved, once per coup), by game (variant).
# TYPE chemmy_settlements_total counter
chemmy_settlements_total{operator="operator",variant="baccarat_banque"} 0
chemmy_settlements_total{operator="operator",variant="chemin_de_fer"} 1
chemmy_settlements_total{operator="operator",variant="old_baccarat"} 0
chemmy_settlements_total{operator="operator",variant="punto_banco"} 0
# HELP chemmy_wallet_transfers_total Ledger transfers committed, by reason (deposit, withdrawal, bet_lost, bet_won, commission, hold_posted, fees...).
# TYPE chemmy_wallet_transfers_total counter
chemmy_wallet_transfers_total{operator="operator",reason="bet_lost"} 2
chemmy_wallet_transfers_total{operator="operator",reason="commission"} 1
chemmy_wallet_transfers_total{operator="operator",reason="deposit"} 3
`, "chemmy_commission_minor_units_total", "chemmy_settlements_total", "chemmy_wallet_transfers_total")

	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: e.id("void"), HoldId: spare.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	e.wantHoldGauges(1, 1950)
	e.restart()
	e.wantHoldGauges(1, 1950)
	if got := testutil.ToFloat64(e.svc.metrics.settlements.WithLabelValues("operator", "chemin_de_fer")); got != 0 {
		t.Errorf("settlements counted again after a restart: %v", got)
	}
}

// TestHoldGaugesUnderGroupCommits: many requests at once, group-committed
// (holds placed, each request sent twice; settlements refused as not
// final, which roll their group back; holds refused for want of funds,
// stored as final failures; holds voided): the gauges end where the
// audit says.
func TestHoldGaugesUnderGroupCommits(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:bank", 1000)
	e.deposit("player:d", 1000)
	bank, bet := e.hold("player:bank", 1000), e.hold("player:d", 100)
	const n = 240
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			switch i % 4 {
			case 0, 1: // a hold, its request sent twice at once
				_, _ = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("g-hold-%d", i/4), AccountId: "player:d", Amount: 7, Reference: "t"})
			case 2: // INVALID_AMOUNT: not final, rolls its group back
				_, _ = e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("g-c%d", i), BankHoldId: bank.GetHoldId(),
					Bets: []*walletv1.CoupBet{{HoldId: bet.GetHoldId(), Amount: 50}}, Outcome: bankWins})
			case 3: // INSUFFICIENT_FUNDS: final, stored
				_, _ = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("g-big-%d", i), AccountId: "player:d", Amount: 1 << 40, Reference: "t"})
			}
		})
	}
	wg.Wait()
	e.wantHoldGauges(2+n/4, 1100+7*n/4)
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: "g-void", HoldId: bet.GetHoldId()}); err != nil {
		t.Fatal(err)
	}
	e.wantHoldGauges(1+n/4, 1000+7*n/4)
}

// TestMetricsByOperator: the business series carry the operator whose
// accounts the money is on (design-tenancy: business series get the
// label): acme's deposit, holds and coup count under operator="acme", the
// default operator's under "operator".
func TestMetricsByOperator(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:x", 1000)
	acme := auth.Caller{Subject: "op-1", Role: auth.RoleOperator, Operator: "acme"}
	for _, p := range []string{"player:banker", "player:p1"} {
		if _, err := e.c.Deposit(as(acme), &walletv1.DepositRequest{RequestId: "d-" + p, AccountId: p, Amount: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	hold := func(req, acct string, amount int64) *walletv1.Hold {
		t.Helper()
		r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: req, AccountId: acct, Amount: amount, OperatorId: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetHold()
	}
	bank, bet := hold("h-bank", "player:banker", 1000), hold("h-bet", "player:p1", 600)
	e.hold("player:x", 10) // the default operator's
	if _, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "c-1", BankHoldId: bank.GetHoldId(), OperatorId: "acme",
		Bets: bets(bet), Outcome: bankWins, CommissionBp: 500}); err != nil {
		t.Fatal(err)
	}
	// The bank won 600 less 5% (30): acme's bank hold is 1570, the
	// default operator's hold of 10 is his.
	e.wantMetrics(`
# HELP chemmy_escrow_minor_units Money reserved by the open holds, in minor units, by currency.
# TYPE chemmy_escrow_minor_units gauge
chemmy_escrow_minor_units{currency="EUR",operator="acme"} 1570
chemmy_escrow_minor_units{currency="EUR",operator="operator"} 10
# HELP chemmy_holds_open Holds open (money reserved for a bet or a bank, not yet posted, released or expired), by currency.
# TYPE chemmy_holds_open gauge
chemmy_holds_open{currency="EUR",operator="acme"} 1
chemmy_holds_open{currency="EUR",operator="operator"} 1
# HELP chemmy_settlements_total Coups settled (their money moved, once per coup), by game (variant).
# TYPE chemmy_settlements_total counter
chemmy_settlements_total{operator="acme",variant="chemin_de_fer"} 1
chemmy_settlements_total{operator="operator",variant="baccarat_banque"} 0
chemmy_settlements_total{operator="operator",variant="chemin_de_fer"} 0
chemmy_settlements_total{operator="operator",variant="old_baccarat"} 0
chemmy_settlements_total{operator="operator",variant="punto_banco"} 0
# HELP chemmy_wallet_transfers_total Ledger transfers committed, by reason (deposit, withdrawal, bet_lost, bet_won, commission, hold_posted, fees...).
# TYPE chemmy_wallet_transfers_total counter
chemmy_wallet_transfers_total{operator="acme",reason="bet_lost"} 1
chemmy_wallet_transfers_total{operator="acme",reason="commission"} 1
chemmy_wallet_transfers_total{operator="acme",reason="deposit"} 2
chemmy_wallet_transfers_total{operator="operator",reason="deposit"} 1
`, "chemmy_escrow_minor_units", "chemmy_holds_open", "chemmy_settlements_total", "chemmy_wallet_transfers_total")
	if got := testutil.ToFloat64(e.svc.metrics.commission.WithLabelValues("acme", "chemin_de_fer", "EUR")); got != 30 {
		t.Errorf("acme's commission %v, want 30", got)
	}
	// Loaded from the ledger at a restart, per operator.
	e.restart()
	if got := testutil.ToFloat64(e.svc.metrics.escrow.WithLabelValues("acme", "EUR")); got != 1570 {
		t.Errorf("acme's escrow after a restart %v, want 1570", got)
	}
}
