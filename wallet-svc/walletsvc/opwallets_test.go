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
	e.drainAll()
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
