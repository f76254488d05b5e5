package conformance

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

var secret = []byte("s3cret")

func wallet(t *testing.T, player string, balance int64) *refwallet.Server {
	t.Helper()
	w, err := refwallet.Start(context.Background(), refwallet.Config{DataFile: filepath.Join(t.TempDir(), "w.db"), Secret: secret,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	if err := w.SetBalance(player, balance); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestRunReportsEveryCheck: against the reference wallet Run passes every
// check but the rotation (no new secret: skipped), in the order of Checks,
// with a fixed run id in every transaction id, and moves nothing in the
// end.
func TestRunReportsEveryCheck(t *testing.T) {
	w := wallet(t, "p", 1000)
	var lines []string
	rep, err := Run(context.Background(), Config{BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", RunID: "fixed1"},
		func(l string) { lines = append(lines, l) })
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Passed != len(Checks)-1 || rep.Skips != 1 || len(rep.Results) != len(Checks) {
		t.Fatalf("report %+v\n%s", rep, strings.Join(lines, "\n"))
	}
	for i, c := range Checks {
		if rep.Results[i].Name != c.Name || lines[i] != FormatResult(rep.Results[i]) {
			t.Fatalf("result %d is %+v (line %q), want check %s", i, rep.Results[i], lines[i], c.Name)
		}
	}
	if rep.StartBalance != 1000 || rep.EndBalance != 1000 {
		t.Fatalf("balance %d then %d, want 1000", rep.StartBalance, rep.EndBalance)
	}
	txs, err := w.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range txs {
		if !strings.HasPrefix(r.Request.TransactionID, "cc-fixed1-") || r.Request.TableID != DefaultTableID {
			t.Fatalf("transaction %+v: not the kit's", r.Request)
		}
	}
	if err := w.CheckBooks(); err != nil {
		t.Fatal(err)
	}
}

// TestRunPreconditions: a test player short of funds fails the balance
// check and skips every check that moves money; an unreachable wallet
// fails the balance calls; a bad configuration is an error.
func TestRunPreconditions(t *testing.T) {
	w := wallet(t, "poor", 150)
	rep, err := Run(context.Background(), Config{BaseURL: w.BaseURL(), Secret: secret, Player: "poor", Currency: "EUR"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Failed != 1 || rep.Results[0].Outcome != Fail || !strings.Contains(rep.Results[0].Detail, "at least 200") ||
		rep.Skips != len(Checks)-3 {
		t.Fatalf("report %+v", rep)
	}

	rep, err = Run(context.Background(), Config{BaseURL: "http://127.0.0.1:1/wallet", Secret: secret, Player: "p", Currency: "EUR"}, nil)
	if err != nil || rep.Failed != 3 || rep.Skips != len(Checks)-3 {
		t.Fatalf("unreachable: %v %+v", err, rep)
	}

	for name, c := range map[string]Config{
		"no player":      {BaseURL: w.BaseURL(), Secret: secret, Currency: "EUR"},
		"no secret":      {BaseURL: w.BaseURL(), Player: "p", Currency: "EUR"},
		"same currency":  {BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", OtherCurrency: "eur"},
		"negative":       {BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", Amount: -1},
		"bad run id":     {BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", RunID: "a b"},
		"same new":       {BaseURL: w.BaseURL(), Secret: secret, NewSecret: secret, Player: "p", Currency: "EUR"},
		"unknown is him": {BaseURL: w.BaseURL(), Secret: secret, Player: "p", UnknownPlayer: "p", Currency: "EUR"},
	} {
		if _, err := Run(context.Background(), c, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
