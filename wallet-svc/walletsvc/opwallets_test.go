package walletsvc

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

// refWallet starts a reference operator wallet on loopback with secret,
// on addr ("" for a free port) and with the books of file, funding
// players (1000 each) when it is new.
func refWallet(t *testing.T, addr, file string, secret string, players ...string) *refwallet.Server {
	t.Helper()
	ref, err := refwallet.Start(context.Background(), refwallet.Config{Addr: addr, DataFile: file, Secret: []byte(secret),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ref.Stop() })
	for _, p := range players {
		if _, err := ref.Fund(p, 1000); err != nil {
			t.Fatal(err)
		}
	}
	return ref
}

// writeFile writes data to path, failing the test on error.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// balancesOf is ref's balances by player.
func balancesOf(t *testing.T, ref *refwallet.Server) map[string]int64 {
	t.Helper()
	bs, err := ref.Balances()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, b := range bs {
		out[b.PlayerID] = b.Balance
	}
	return out
}

// tablesCalled is the set of table ids of ref's recorded transactions,
// and how many of them there are.
func tablesCalled(t *testing.T, ref *refwallet.Server) (map[string]bool, int) {
	t.Helper()
	recs, err := ref.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range recs {
		if r.Request.TableID != "" {
			out[r.Request.TableID] = true
		}
	}
	return out, len(recs)
}

// opCoup plays coup of operator op (table "T-<op>"): bob banks 100, ann
// bets 100, the bank loses (no commission), the bank is voided; then the
// operator outbox is drained.
func opCoup(e *env, op, coup string) {
	e.t.Helper()
	opPlay(e, op, coup)
	e.drainAll()
}

// opPlay is opCoup without the wait for the outbox.
func opPlay(e *env, op, coup string) {
	e.t.Helper()
	ref := coupRef("T-"+orDefault(op, "default"), coup)
	stake := func(acct string) *walletv1.Hold {
		r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: acct, Amount: 100, Reference: ref, OperatorId: op})
		if err != nil {
			e.t.Fatalf("operator %q: PlaceHold(%s): %v", op, acct, err)
		}
		return r.GetHold()
	}
	bank, bet := stake("player:bob"), stake("player:ann")
	if _, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: coup, BankHoldId: bank.GetHoldId(), Bets: bets(bet),
		Outcome: bankLoses, OperatorId: op}); err != nil {
		e.t.Fatalf("operator %q: SettleCoup(%s): %v", op, coup, err)
	}
	if _, err := e.c.VoidHold(as(tableSvc), &walletv1.VoidHoldRequest{RequestId: e.id("void"), HoldId: bank.GetHoldId(), OperatorId: op}); err != nil {
		e.t.Fatalf("operator %q: VoidHold: %v", op, err)
	}
}

// TestOperatorWallets: in seamless mode each operator of the operators
// file has his own wallet (design-tenancy step 4): a coup of casino-a,
// of casino-b and of the default operator (not in the file: his wallet is
// Config.Operator, the -operator-url flags) each reach their own wallet
// only; casino-b's secret rotated on disk is taken without restart; a bad
// file keeps the last good one (counted); an operator listed without a
// wallet is SEAMLESS_WALLET, and one listed with currencies may not name
// an account in another (CURRENCY_UNKNOWN).
func TestOperatorWallets(t *testing.T) {
	dir := t.TempDir()
	refA := refWallet(t, "", filepath.Join(dir, "a.db"), "secret-a", "bob", "ann")
	refBFile := filepath.Join(dir, "b.db")
	refB := refWallet(t, "", refBFile, "secret-b1", "bob", "ann")
	refDef := refWallet(t, "", filepath.Join(dir, "def.db"), "secret-def", "bob", "ann")
	writeFile(t, filepath.Join(dir, "a.secret"), "secret-a\n")
	writeFile(t, filepath.Join(dir, "b.secret"), "secret-b1\n")
	file := filepath.Join(dir, "operators.yaml")
	good := fmt.Sprintf(`operators:
  - id: casino-a
    wallet: {url: %q, secret_files: [%q]}
    currencies: [EUR]
  - id: casino-b
    wallet: {url: %q, secret_files: [%q, %q]}
  - id: casino-c
    currencies: [EUR]
`, refA.BaseURL(), filepath.Join(dir, "a.secret"), refB.BaseURL(), filepath.Join(dir, "b.secret"), filepath.Join(dir, "b.previous"))
	writeFile(t, file, good)
	writeFile(t, filepath.Join(dir, "b.previous"), "secret-b0\n")
	def, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: refDef.BaseURL(), Secret: []byte("secret-def")})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, path: filepath.Join(dir, "wallet.db")}
	e.config = func(c *Config) {
		c.Operator, c.operatorBackoff, c.roundIdle = def, time.Millisecond, 20*time.Millisecond
		c.OperatorsFile, c.OperatorsReloadInterval = file, 10*time.Millisecond
	}
	e.start()
	t.Cleanup(e.stop)

	for _, op := range []string{"casino-a", "casino-b", ""} {
		opCoup(e, op, "C1")
	}
	// The bank lost 100 to ann: 900 and 1100 in each wallet, once.
	want := map[string]int64{"bob": 900, "ann": 1100}
	for name, ref := range map[string]*refwallet.Server{"casino-a": refA, "casino-b": refB, "default": refDef} {
		if got := balancesOf(t, ref); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s's wallet: balances %v, want %v", name, got, want)
		}
		tables, n := tablesCalled(t, ref)
		if len(tables) != 1 || !tables["T-"+name] || n == 0 {
			t.Errorf("%s's wallet was called for tables %v (%d calls), want T-%s only", name, tables, n, name)
		}
		// The call series name the operator whose wallet was called: as
		// many calls under his label as his wallet recorded.
		label := map[string]string{"default": DefaultOperatorID}[name]
		if label == "" {
			label = name
		}
		var counted float64
		for _, op := range []string{kindDebit, kindCredit, kindRollback, kindRoundEnd} {
			for _, r := range []string{"ok", "duplicate", "refused", "error"} {
				counted += testutil.ToFloat64(e.svc.opMetrics.calls.WithLabelValues(label, op, r))
			}
		}
		if counted != float64(n) {
			t.Errorf("chemmy_operator_calls_total{operator=%q}: %v calls, %s's wallet recorded %d", label, counted, name, n)
		}
	}

	// casino-b rotates: its wallet now knows only the new secret; the
	// file's current secret becomes it, the previous one the old.
	if err := refB.Stop(); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(refB.BaseURL())
	refB = refWallet(t, u.Host, refBFile, "secret-b2")
	writeFile(t, filepath.Join(dir, "b.previous"), "secret-b1\n")
	writeFile(t, filepath.Join(dir, "b.secret"), "secret-b2\n")
	e.svc.reloadOperators() // what the poll does (it may have done it already)
	opCoup(e, "casino-b", "C2")
	if got := balancesOf(t, refB); got["bob"] != 800 || got["ann"] != 1200 {
		t.Errorf("casino-b's wallet after the rotation: %v, want bob 800, ann 1200", got)
	}

	// A bad file: the poll counts it and keeps the last good one.
	writeFile(t, file, "operators: [{id: casino-a, wallet: {url: nope}}]\n")
	errs := e.svc.opFile.errors
	for deadline := time.Now().Add(20 * time.Second); testutil.ToFloat64(errs) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the bad operators file was not counted")
		}
	}
	opCoup(e, "casino-a", "C2")
	if got := balancesOf(t, refA); got["bob"] != 800 || got["ann"] != 1200 {
		t.Errorf("casino-a's wallet after a bad reload: %v, want bob 800, ann 1200", got)
	}
	if tables, _ := tablesCalled(t, refDef); len(tables) != 1 {
		t.Errorf("the default operator's wallet was called for %v", tables)
	}

	// casino-c has no wallet; casino-a has EUR only.
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "c-1", AccountId: "player:bob", Amount: 1, Reference: coupRef("T-c", "C1"), OperatorId: "casino-c"})
	wantErr(t, err, codes.FailedPrecondition, reasonSeamless)
	_, err = e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: "a-usd", AccountId: "player:bob@USD", Amount: 1, Reference: coupRef("T-casino-a", "C3"), OperatorId: "casino-a"})
	wantErr(t, err, codes.InvalidArgument, reasonCurrencyUnknown)
	if !strings.Contains(err.Error(), "casino-a") {
		t.Errorf("the refusal does not name the operator: %v", err)
	}

	// Each operator's report lists his own wallet's transactions only.
	day := time.Now().UTC().Format(time.DateOnly)
	for _, op := range []string{"casino-a", "casino-b"} {
		r, err := e.c.GetOperatorReport(as(auth.Caller{Subject: "op-1", Role: auth.RoleOperator, Operator: op}), &walletv1.GetOperatorReportRequest{Day: day})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.GetTransactions() {
			if x.GetTableId() != "T-"+op {
				t.Errorf("%s's report lists %s of table %s", op, x.GetTransactionId(), x.GetTableId())
			}
		}
		if len(r.GetTransactions()) == 0 {
			t.Errorf("%s's report is empty", op)
		}
	}
}

// TestOperatorsFileAtStart: a file that does not load is an error at
// start (not a service without it): one that does not parse, names a
// currency the deployment does not have, or a secret file that is
// missing; and a seamless wallet whose default operator has no wallet
// (neither Config.Operator nor his entry's) does not start.
func TestOperatorsFileAtStart(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s"), "secret\n")
	cases := map[string]struct {
		file     string
		seamless bool
		want     string
	}{
		"parse":    {"operators: [{id: Bad}]\n", false, "not an operator id"},
		"currency": {"operators: [{id: acme, currencies: [XYZQ]}]\n", false, "XYZQ"},
		"secret": {fmt.Sprintf("operators: [{id: acme, wallet: {url: http://127.0.0.1:1/w, secret_files: [%q]}}]\n", filepath.Join(dir, "none")),
			true, "secret"},
		"no default wallet": {fmt.Sprintf("operators: [{id: acme, wallet: {url: http://127.0.0.1:1/w, secret_files: [%q]}}]\n", filepath.Join(dir, "s")),
			true, `default operator "operator"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "operators.yaml")
			writeFile(t, file, c.file)
			_, err := Start(context.Background(), Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "wallet.db"),
				Logger: slog.New(slog.DiscardHandler), OperatorsFile: file, Seamless: c.seamless})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Start: %v, want an error naming %q", err, c.want)
			}
		})
	}
}

// TestOperatorGauges: through three reference wallets (casino-a's,
// casino-b's, the default operator's) probed every 5 ms, each operator
// has his chemmy_operator_up; casino-b's wallet stopped makes his 0 and
// his outbox hold the credit of his coup's settlement
// (chemmy_operator_outbox_depth{operator="casino-b"}), while casino-a's
// and the default operator's stay 1 with an empty outbox and the
// operator health service (the default operator's) stays SERVING;
// casino-b's wallet back on its address brings his up to 1 and his
// outbox to 0. An operator taken out of the file loses his series.
func TestOperatorGauges(t *testing.T) {
	dir := t.TempDir()
	refA := refWallet(t, "", filepath.Join(dir, "a.db"), "secret-a", "bob", "ann")
	refBFile := filepath.Join(dir, "b.db")
	refB := refWallet(t, "", refBFile, "secret-b", "bob", "ann")
	refDef := refWallet(t, "", filepath.Join(dir, "def.db"), "secret-def", "bob", "ann")
	writeFile(t, filepath.Join(dir, "a.secret"), "secret-a\n")
	writeFile(t, filepath.Join(dir, "b.secret"), "secret-b\n")
	file := filepath.Join(dir, "operators.yaml")
	entryB := fmt.Sprintf("  - id: casino-b\n    wallet: {url: %q, secret_files: [%q]}\n", refB.BaseURL(), filepath.Join(dir, "b.secret"))
	writeFile(t, file, fmt.Sprintf("operators:\n  - id: casino-a\n    wallet: {url: %q, secret_files: [%q]}\n", refA.BaseURL(), filepath.Join(dir, "a.secret"))+entryB)
	def, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: refDef.BaseURL(), Secret: []byte("secret-def")})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, path: filepath.Join(dir, "wallet.db")}
	e.config = func(c *Config) {
		c.Operator, c.operatorBackoff, c.roundIdle = def, time.Millisecond, 20*time.Millisecond
		c.OperatorsFile, c.OperatorsReloadInterval = file, 10*time.Millisecond
		c.OperatorProbeInterval = 5 * time.Millisecond
	}
	e.start()
	t.Cleanup(e.stop)
	depth := func(op string) float64 {
		return e.gauge(e.svc.opMetrics.queues, "chemmy_operator_outbox_depth", map[string]string{"operator": op})
	}
	everyUp := func(ops ...string) func() bool {
		return func() bool {
			for _, op := range ops {
				if e.operatorUpOf(op) != 1 {
					return false
				}
			}
			return true
		}
	}
	waitUntil(t, "every operator's wallet up", everyUp("casino-a", "casino-b", DefaultOperatorID))
	for _, op := range []string{"casino-a", "casino-b", DefaultOperatorID} {
		if d := depth(op); d != 0 {
			t.Errorf("chemmy_operator_outbox_depth{operator=%q} %v at start, want 0", op, d)
		}
	}

	// casino-b's coup: both stakes debited, then his wallet stops and the
	// settlement's credit to ann (200) waits in the outbox.
	ref := coupRef("T-casino-b", "C1")
	var holds []*walletv1.Hold
	for _, acct := range []string{"player:bob", "player:ann"} {
		r, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: acct, Amount: 100, Reference: ref, OperatorId: "casino-b"})
		if err != nil {
			t.Fatalf("casino-b: PlaceHold(%s): %v", acct, err)
		}
		holds = append(holds, r.GetHold())
	}
	u, _ := url.Parse(refB.BaseURL())
	if err := refB.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.SettleCoup(as(tableSvc), &walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: holds[0].GetHoldId(), Bets: bets(holds[1]),
		Outcome: bankLoses, OperatorId: "casino-b"}); err != nil {
		t.Fatalf("casino-b: SettleCoup: %v", err)
	}
	waitUntil(t, "casino-b's wallet down", func() bool { return e.operatorUpOf("casino-b") == 0 })
	waitUntil(t, "casino-b's credit queued", func() bool { return depth("casino-b") >= 1 })
	opPlay(e, "casino-a", "C1") // casino-a plays on
	waitUntil(t, "casino-a's outbox drained", func() bool { return depth("casino-a") == 0 })
	if !everyUp("casino-a", DefaultOperatorID)() {
		t.Errorf("up: casino-a %v, default %v; want 1 while casino-b's wallet is down", e.operatorUpOf("casino-a"), e.operatorUpOf(DefaultOperatorID))
	}
	if d := depth("casino-a") + depth(DefaultOperatorID); d != 0 {
		t.Errorf("the outboxes of casino-a and the default operator hold %v entries while casino-b's wallet is down, want 0", d)
	}
	if got := balancesOf(t, refA); got["bob"] != 900 || got["ann"] != 1100 {
		t.Errorf("casino-a's wallet: %v, want bob 900, ann 1100", got)
	}
	e.wantHealth(OperatorHealthService, healthpb.HealthCheckResponse_SERVING)
	e.wantHealth("", healthpb.HealthCheckResponse_SERVING)

	// casino-b's wallet back: up, and his credit delivered.
	refB = refWallet(t, u.Host, refBFile, "secret-b")
	waitUntil(t, "casino-b's wallet up again", everyUp("casino-b"))
	waitUntil(t, "casino-b's outbox drained", func() bool { return depth("casino-b") == 0 })
	if got := balancesOf(t, refB); got["ann"] != 1100 {
		t.Errorf("casino-b's wallet: %v, want ann 1100 (900 after her stake, 200 credited)", got)
	}

	// casino-a out of the file: his up series goes.
	writeFile(t, file, "operators:\n"+entryB)
	waitUntil(t, "casino-a's series deleted", func() bool { return e.operatorUpOf("casino-a") == -1 })
	if e.operatorUpOf("casino-b") != 1 {
		t.Errorf("casino-b's up %v after casino-a left, want 1", e.operatorUpOf("casino-b"))
	}
}
