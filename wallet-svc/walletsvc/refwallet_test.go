package walletsvc

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// TestSeamlessAgainstRefWallet plays coups through the HTTP adapter
// against the reference operator wallet under its faults (timeouts, 5xx,
// duplicate and late answers), restarting chemmy midway; afterwards the
// books of both sides balance, every player's money is where it belongs,
// and the report's settled totals equal the operator's ledger.
func TestSeamlessAgainstRefWallet(t *testing.T) {
	secret := []byte("test-secret")
	ref, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(t.TempDir(), "ref.db"), Secret: secret,
		Faults: refwallet.Faults{Timeout: 0.04, Error: 0.06, Duplicate: 0.04, Late: 0.03, HangMS: 1000, LateMS: 20}, Seed: 11,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	players := []string{"ana", "ben", "cy", "dee"}
	funding := map[string]int64{}
	for _, p := range players {
		if _, err := ref.Fund(p, 50000); err != nil {
			t.Fatal(err)
		}
		funding[p] = 50000
	}
	client, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: ref.BaseURL(), Secret: secret, Timeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, path: filepath.Join(t.TempDir(), "wallet.db")}
	e.config = func(c *Config) {
		c.Operator, c.OperatorID, c.operatorBackoff, c.roundIdle = client, "casino-1", time.Millisecond, 20*time.Millisecond
	}
	e.start()
	t.Cleanup(e.stop)
	rng := rand.New(rand.NewPCG(3, 5))
	var mu sync.Mutex
	pick := func(n int) int { mu.Lock(); defer mu.Unlock(); return rng.IntN(n) }
	coups := 30
	if testing.Short() {
		coups = 8
	}
	playCoups(e, players, 0, coups/2, pick)
	e.restart()
	playCoups(e, players, coups/2, coups-coups/2, pick)

	if err := ref.SetFaults(refwallet.Faults{}); err != nil {
		t.Fatal(err)
	}
	e.drainAll()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ref.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ref.CheckBooks(); err != nil {
		t.Fatalf("the operator's books: %v", err)
	}
	bals, err := ref.Balances()
	if err != nil {
		t.Fatal(err)
	}
	bal := map[string]int64{}
	for _, b := range bals {
		bal[b.PlayerID] = b.Balance
	}
	e.wantBooks(bal, funding)
	ledger, err := ref.Ledger(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, totals := e.report()
	net := totals["credit"].GetSettledAmount() + totals["rollback"].GetSettledAmount() - totals["debit"].GetSettledAmount()
	if net != ledger.Net || totals["credit"].GetSettledAmount() != ledger.Totals["credit"].Amount {
		t.Fatalf("report net %d credits %d; operator net %d credits %d", net, totals["credit"].GetSettledAmount(),
			ledger.Net, ledger.Totals["credit"].Amount)
	}
	if ledger.Totals["credit"].Count == 0 {
		t.Fatal("nothing was credited")
	}
}
