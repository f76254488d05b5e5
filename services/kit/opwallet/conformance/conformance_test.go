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
// end. The session calls carry the default live session and the ended
// one given, as sent (session_id).
func TestRunReportsEveryCheck(t *testing.T) {
	w := wallet(t, "p", 1000)
	w.ExpireSession("ls-ended")
	var lines []string
	rep, err := Run(context.Background(), Config{BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", RunID: "fixed1",
		ExpiredSession: "ls-ended"},
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
	sessions := map[string]int{}
	for _, r := range txs {
		if !strings.HasPrefix(r.Request.TransactionID, "cc-fixed1-") || r.Request.TableID != DefaultTableID {
			t.Fatalf("transaction %+v: not the kit's", r.Request)
		}
		sessions[r.Request.SessionID]++
	}
	// r11: debit, credit, debit, rollback, round_end (the replay is the
	// debit's record); r13's debit: in the live session. r12's debit and
	// round_end, r13's credit and round_end: in the ended one.
	if sessions["cc-fixed1-session"] != 6 || sessions["ls-ended"] != 4 {
		t.Fatalf("transactions by session: %v, want 6 in cc-fixed1-session and 4 in ls-ended", sessions)
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
		"ended is live":  {BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", Session: "s", ExpiredSession: "s"},
		"bad session":    {BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", Session: "a b"},
	} {
		if _, err := Run(context.Background(), c, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSessionChecksWithoutAnEndedSession: without Config.ExpiredSession
// the check session-expired is skipped (saying how to run it) and the
// check session passes against the reference wallet with the kit's own
// session, one it never saw; with a live session of the operator's
// choosing, its calls carry that one.
func TestSessionChecksWithoutAnEndedSession(t *testing.T) {
	w := wallet(t, "p", 1000)
	rep, err := Run(context.Background(), Config{BaseURL: w.BaseURL(), Secret: secret, Player: "p", Currency: "EUR", RunID: "noend", Session: "ls-live"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, r := range rep.Results {
		got[r.Name] = r
	}
	if r := got["session-expired"]; r.Outcome != Skip || !strings.Contains(r.Detail, "-expired-session") {
		t.Errorf("session-expired: %+v, want skipped naming -expired-session", r)
	}
	if r := got["session"]; r.Outcome != Pass || !rep.OK() || rep.Skips != 2 {
		t.Errorf("session: %+v; report %+v", r, rep)
	}
	txs, err := w.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range txs {
		if r.Request.SessionID != "" {
			n++
			if r.Request.SessionID != "ls-live" {
				t.Errorf("transaction %s in session %q, want ls-live", r.Request.TransactionID, r.Request.SessionID)
			}
		}
	}
	if n != 5 {
		t.Errorf("%d transactions in a session, want 5 (the check session's)", n)
	}
}
