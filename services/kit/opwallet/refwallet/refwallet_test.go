package refwallet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

var secret = []byte("s3cret")

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// start runs a wallet on a file in dir (a new temp dir when "").
func start(t *testing.T, dir string, mod func(*Config)) *Server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := Config{DataFile: filepath.Join(dir, "opwallet.db"), Secret: secret, AdminToken: "admin", Seed: 7, Logger: quiet()}
	if mod != nil {
		mod(&cfg)
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func client(t *testing.T, s *Server, timeout time.Duration) *opwallet.HTTP {
	t.Helper()
	h, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: s.BaseURL(), Secret: secret, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func fund(t *testing.T, s *Server, player string, amount int64) {
	t.Helper()
	if _, err := s.Fund(player, amount); err != nil {
		t.Fatal(err)
	}
}

func balanceOf(t *testing.T, s *Server, player string) int64 {
	t.Helper()
	bals, err := s.Balances()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bals {
		if b.PlayerID == player {
			return b.Balance
		}
	}
	t.Fatalf("no player %q", player)
	return 0
}

func checkBooks(t *testing.T, s *Server) {
	t.Helper()
	if err := s.CheckBooks(); err != nil {
		t.Fatalf("books: %v", err)
	}
}

var day = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func tx(id, player string, amount int64) opwallet.Transaction {
	return opwallet.Transaction{TransactionID: id, PlayerID: player, RoundID: "coup-1", TableID: "t1", Amount: amount, Currency: "EUR", Time: day}
}

func rollbackOf(id, debitID, player string, amount int64) opwallet.Transaction {
	t := tx(id, player, amount)
	t.RolledBackID = debitID
	return t
}

func wantRefusal(t *testing.T, err error, status int, code string) {
	t.Helper()
	r, ok := opwallet.IsRefusal(err)
	if !ok || r.Status != status || r.Code != code {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
}

func wantResult(t *testing.T, res opwallet.Result, err error, balance int64, dup bool) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if res.Balance != balance || res.Duplicate != dup {
		t.Fatalf("got %+v, want balance %d duplicate %v", res, balance, dup)
	}
}

func TestIdempotency(t *testing.T) {
	s := start(t, "", nil)
	h := client(t, s, 0)
	ctx := context.Background()
	fund(t, s, "alice", 1000)

	res, err := h.Debit(ctx, tx("d1", "alice", 300))
	wantResult(t, res, err, 700, false)
	first := res
	res, err = h.Debit(ctx, tx("d1", "alice", 300))
	wantResult(t, res, err, 700, true)
	if res.OperatorTransactionID != first.OperatorTransactionID {
		t.Fatalf("duplicate answered %q, first %q", res.OperatorTransactionID, first.OperatorTransactionID)
	}
	_, err = h.Debit(ctx, tx("d1", "alice", 400))
	wantRefusal(t, err, 409, opwallet.CodeTransactionIDReused)
	_, err = h.Credit(ctx, tx("d1", "alice", 300))
	wantRefusal(t, err, 409, opwallet.CodeTransactionIDReused)

	res, err = h.Credit(ctx, tx("c1", "alice", 50))
	wantResult(t, res, err, 750, false)
	res, err = h.Credit(ctx, tx("c1", "alice", 50))
	wantResult(t, res, err, 750, true)

	// A refusal is recorded too: the same id gets the same refusal.
	_, err = h.Debit(ctx, tx("d2", "alice", 10_000))
	wantRefusal(t, err, 402, opwallet.CodeInsufficientFunds)
	fund(t, s, "alice", 100_000)
	_, err = h.Debit(ctx, tx("d2", "alice", 10_000))
	wantRefusal(t, err, 402, opwallet.CodeInsufficientFunds)
	checkBooks(t, s)
}

func TestRefusals(t *testing.T) {
	s := start(t, "", nil)
	h := client(t, s, 0)
	ctx := context.Background()
	fund(t, s, "alice", 1000)

	_, err := h.Debit(ctx, tx("d1", "nobody", 10))
	wantRefusal(t, err, 404, opwallet.CodeUnknownPlayer)
	_, err = h.Balance(ctx, opwallet.BalanceRequest{PlayerID: "nobody", Currency: "EUR"})
	wantRefusal(t, err, 404, opwallet.CodeUnknownPlayer)
	usd := tx("d2", "alice", 10)
	usd.Currency = "USD"
	_, err = h.Debit(ctx, usd)
	wantRefusal(t, err, 400, opwallet.CodeCurrencyMismatch)
	for name, bad := range map[string]opwallet.Transaction{
		"zero amount": tx("d3", "alice", 0),
		"bad id":      tx("d 3", "alice", 10),
		"no round":    {TransactionID: "d4", PlayerID: "alice", Amount: 10, Currency: "EUR"},
	} {
		_, err = h.Debit(ctx, bad)
		if r, ok := opwallet.IsRefusal(err); !ok || r.Code != opwallet.CodeInvalidRequest {
			t.Errorf("%s: want INVALID_REQUEST, got %v", name, err)
		}
	}
	// A credit beyond the int64 range is refused, the balance untouched.
	_, err = h.Credit(ctx, tx("c-huge", "alice", math.MaxInt64))
	wantRefusal(t, err, 400, opwallet.CodeInvalidRequest)
	end := tx("e1", "alice", 0)
	end.Status = "won"
	_, err = h.RoundEnd(ctx, end)
	wantRefusal(t, err, 400, opwallet.CodeInvalidRequest)
	res, err := h.Balance(ctx, opwallet.BalanceRequest{PlayerID: "alice", Currency: "EUR"})
	wantResult(t, res, err, 1000, false)
	checkBooks(t, s)
}

// post sends a raw wallet call signed with key at ts.
func post(t *testing.T, s *Server, op string, body []byte, key []byte, ts time.Time) (int, opwallet.Refusal) {
	t.Helper()
	path := PathPrefix + "/" + op
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+path, bytes.NewReader(body))
	req.Header.Set(opwallet.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(opwallet.HeaderSignature, opwallet.Sign(key, ts.Unix(), path, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := opwallet.Verify(secret, time.Now(), resp.Header.Get(opwallet.HeaderTimestamp), resp.Header.Get(opwallet.HeaderSignature), path, b); err != nil {
		t.Fatalf("answer not signed: %v", err)
	}
	var r opwallet.Refusal
	json.Unmarshal(b, &r)
	return resp.StatusCode, r
}

func TestSignatureRefused(t *testing.T) {
	s := start(t, "", nil)
	fund(t, s, "alice", 1000)
	body, _ := json.Marshal(tx("d1", "alice", 10))
	for name, c := range map[string]struct {
		key []byte
		ts  time.Time
	}{
		"wrong secret": {[]byte("guess"), time.Now()},
		"stale":        {secret, time.Now().Add(-opwallet.MaxSkew - time.Minute)},
		"future":       {secret, time.Now().Add(opwallet.MaxSkew + time.Minute)},
	} {
		status, r := post(t, s, opwallet.OpDebit, body, c.key, c.ts)
		if status != 401 || r.Code != opwallet.CodeInvalidSignature {
			t.Errorf("%s: got %d %s", name, status, r.Code)
		}
	}
	if status, _ := post(t, s, opwallet.OpDebit, body, secret, time.Now()); status != 200 {
		t.Fatalf("a well signed debit: %d", status)
	}
	if got := balanceOf(t, s, "alice"); got != 990 {
		t.Fatalf("balance %d, want 990 (one debit)", got)
	}
}

// TestSecretRotation: with a NewSecret, a call signed with either secret
// is accepted and answered signed with the secret that signed it (chemmy's
// replicas on the old and on the new secret both trust their answers); a
// third secret is still refused, with an answer signed with Secret.
func TestSecretRotation(t *testing.T) {
	newSecret := []byte("n3w")
	s := start(t, "", func(c *Config) { c.NewSecret = newSecret })
	fund(t, s, "alice", 1000)
	ctx := context.Background()
	for i, key := range [][]byte{secret, newSecret} {
		h, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: s.BaseURL(), Secret: key})
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.Debit(ctx, tx(fmt.Sprintf("d%d", i), "alice", 10))
		wantResult(t, res, err, 990-10*int64(i), false)
		if _, err := h.Balance(ctx, opwallet.BalanceRequest{PlayerID: "alice", Currency: "EUR"}); err != nil {
			t.Fatalf("balance signed with secret %d: %v", i, err)
		}
	}
	body, _ := json.Marshal(tx("d9", "alice", 10))
	if status, r := post(t, s, opwallet.OpDebit, body, []byte("guess"), time.Now()); status != 401 || r.Code != opwallet.CodeInvalidSignature {
		t.Fatalf("a third secret: %d %s", status, r.Code)
	}
	// A stale call signed with the new secret is refused, signed with it.
	path := PathPrefix + "/" + opwallet.OpDebit
	stale := time.Now().Add(-opwallet.MaxSkew - time.Minute).Unix()
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+path, bytes.NewReader(body))
	req.Header.Set(opwallet.HeaderTimestamp, strconv.FormatInt(stale, 10))
	req.Header.Set(opwallet.HeaderSignature, opwallet.Sign(newSecret, stale, path, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := opwallet.Verify(newSecret, time.Now(), resp.Header.Get(opwallet.HeaderTimestamp), resp.Header.Get(opwallet.HeaderSignature), path, answer); resp.StatusCode != 401 || err != nil {
		t.Fatalf("a stale call with the new secret: %d, answer signed with it: %v", resp.StatusCode, err)
	}
	if got := balanceOf(t, s, "alice"); got != 980 {
		t.Fatalf("balance %d, want 980", got)
	}
	for _, bad := range [][]byte{{}, secret} {
		if _, err := Start(ctx, Config{DataFile: filepath.Join(t.TempDir(), "w.db"), Secret: secret, NewSecret: bad, Logger: quiet()}); err == nil {
			t.Fatalf("NewSecret %q accepted", bad)
		}
	}
}

func TestRollback(t *testing.T) {
	s := start(t, "", nil)
	h := client(t, s, 0)
	ctx := context.Background()
	fund(t, s, "alice", 1000)
	fund(t, s, "bob", 1000)

	res, err := h.Debit(ctx, tx("d1", "alice", 300))
	wantResult(t, res, err, 700, false)
	res, err = h.Rollback(ctx, rollbackOf("r1", "d1", "alice", 300))
	wantResult(t, res, err, 1000, false)
	res, err = h.Rollback(ctx, rollbackOf("r1", "d1", "alice", 300))
	wantResult(t, res, err, 1000, true)
	// Another rollback of the same debit refunds nothing more.
	res, err = h.Rollback(ctx, rollbackOf("r2", "d1", "alice", 300))
	wantResult(t, res, err, 1000, false)
	// The rolled back debit cannot come back.
	_, err = h.Debit(ctx, tx("d1", "alice", 300))
	wantRefusal(t, err, 409, opwallet.CodeTransactionRolledBack)

	// Only a debit of the same player, for its amount, is rolled back.
	res, err = h.Credit(ctx, tx("c1", "alice", 100))
	wantResult(t, res, err, 1100, false)
	_, err = h.Rollback(ctx, rollbackOf("r3", "c1", "alice", 100))
	wantRefusal(t, err, 400, opwallet.CodeInvalidRequest)
	res, err = h.Debit(ctx, tx("d2", "bob", 200))
	wantResult(t, res, err, 800, false)
	_, err = h.Rollback(ctx, rollbackOf("r4", "d2", "alice", 200))
	wantRefusal(t, err, 400, opwallet.CodeInvalidRequest)
	_, err = h.Rollback(ctx, rollbackOf("r5", "d2", "bob", 150))
	wantRefusal(t, err, 400, opwallet.CodeInvalidRequest)

	// The tombstone: a rollback of a debit never seen is answered 200 and
	// the debit arriving afterwards is refused.
	res, err = h.Rollback(ctx, rollbackOf("r6", "d9", "alice", 50))
	wantResult(t, res, err, 1100, false)
	_, err = h.Debit(ctx, tx("d9", "alice", 50))
	wantRefusal(t, err, 409, opwallet.CodeTransactionRolledBack)
	// A tombstoned id is a debit's: nothing else may use it.
	res, err = h.Rollback(ctx, rollbackOf("r7", "d8", "alice", 50))
	wantResult(t, res, err, 1100, false)
	_, err = h.Credit(ctx, tx("d8", "alice", 50))
	wantRefusal(t, err, 409, opwallet.CodeTransactionIDReused)
	if got := balanceOf(t, s, "alice"); got != 1100 {
		t.Fatalf("alice %d, want 1100", got)
	}

	end := tx("e1", "alice", 0)
	end.Status = opwallet.RoundCompleted
	res, err = h.RoundEnd(ctx, end)
	wantResult(t, res, err, 1100, false)

	l, err := s.Ledger(day)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Total{
		"debit":     {Count: 2, Amount: 500, Refused: 1}, // d9; d1 again is not recorded twice
		"credit":    {Count: 1, Amount: 100, Refused: 1},
		"rollback":  {Count: 4, Amount: 300, Refused: 3},
		"round_end": {Count: 1},
	}
	if fmt.Sprint(l.Totals) != fmt.Sprint(want) || l.Net != -100 {
		t.Fatalf("totals %v net %d, want %v net -100", l.Totals, l.Net, want)
	}
	checkBooks(t, s)
}

// lateDebit starts a wallet where every call is late by lateMS and sends
// it alice's debit d1 of 300, which must end in an unknown outcome.
func lateDebit(t *testing.T, lateMS int64) *Server {
	t.Helper()
	s := start(t, "", func(c *Config) { c.Faults = Faults{Late: 1, LateMS: lateMS} })
	fund(t, s, "alice", 1000)
	_, err := client(t, s, 50*time.Millisecond).Debit(context.Background(), tx("d1", "alice", 300))
	if !errors.Is(err, opwallet.ErrUnknownOutcome) {
		t.Fatalf("want an unknown outcome, got %v", err)
	}
	return s
}

func TestLateDebitLosesToRollback(t *testing.T) {
	// The late debit waits an hour unless a rollback of it wakes it.
	s := lateDebit(t, 3_600_000)
	ctx := context.Background()
	if err := s.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	h := client(t, s, 0)
	res, err := h.Rollback(ctx, rollbackOf("r1", "d1", "alice", 300))
	wantResult(t, res, err, 1000, false)
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = h.Debit(ctx, tx("d1", "alice", 300))
	wantRefusal(t, err, 409, opwallet.CodeTransactionRolledBack)
	if got := balanceOf(t, s, "alice"); got != 1000 {
		t.Fatalf("balance %d, the late debit moved money", got)
	}
	recs, _ := s.Transactions()
	if len(recs) != 2 || recs[1].Request.TransactionID != "d1" || recs[1].Status != StatusRefused {
		t.Fatalf("records %+v", recs)
	}
	checkBooks(t, s)
}

func TestLateDebitApplied(t *testing.T) {
	s := lateDebit(t, 1)
	ctx := context.Background()
	// The late debit is applied after the client gave up.
	waitFor(t, func() bool { recs, _ := s.Transactions(); return len(recs) == 1 })
	s.SetFaults(Faults{})
	res, err := client(t, s, 0).Debit(ctx, tx("d1", "alice", 300))
	wantResult(t, res, err, 700, true)
	// Rolled back now, it is refunded once.
	res, err = client(t, s, 0).Rollback(ctx, rollbackOf("r1", "d1", "alice", 300))
	wantResult(t, res, err, 1000, false)
	checkBooks(t, s)
}

// waitFor waits until cond holds (10 s at most).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
	}
}

func TestDuplicateFault(t *testing.T) {
	s := start(t, "", func(c *Config) { c.Faults = Faults{Duplicate: 1} })
	fund(t, s, "alice", 1000)
	h := client(t, s, 0)
	res, err := h.Debit(context.Background(), tx("d1", "alice", 300))
	wantResult(t, res, err, 700, true)
	res, err = h.Debit(context.Background(), tx("d1", "alice", 300))
	wantResult(t, res, err, 700, true)
	checkBooks(t, s)
}

// retryOutcomes makes n debits of 1 under faults f (each must fail with an
// unknown outcome), then retries each without faults and counts those the
// wallet had applied (answered as duplicates) and those it had not.
func retryOutcomes(t *testing.T, f Faults, timeout time.Duration) (applied, dropped int) {
	t.Helper()
	s := start(t, "", func(c *Config) { c.Faults = f })
	fund(t, s, "alice", 1000)
	ctx := context.Background()
	h := client(t, s, timeout)
	const n = 16
	for i := range n {
		if _, err := h.Debit(ctx, tx(fmt.Sprint("d", i), "alice", 1)); !errors.Is(err, opwallet.ErrUnknownOutcome) {
			t.Fatalf("debit %d: want an unknown outcome, got %v", i, err)
		}
	}
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	s.SetFaults(Faults{})
	h = client(t, s, 0)
	for i := range n {
		res, err := h.Debit(ctx, tx(fmt.Sprint("d", i), "alice", 1))
		if err != nil {
			t.Fatal(err)
		}
		if res.Duplicate {
			applied++
		} else {
			dropped++
		}
	}
	if got := balanceOf(t, s, "alice"); got != 1000-n {
		t.Fatalf("balance %d, want %d: each debit once", got, 1000-n)
	}
	checkBooks(t, s)
	return applied, dropped
}

func TestTimeoutFault(t *testing.T) {
	applied, dropped := retryOutcomes(t, Faults{Timeout: 1}, 50*time.Millisecond)
	if applied == 0 || dropped == 0 {
		t.Fatalf("applied %d, dropped %d: want both variants", applied, dropped)
	}
}

func TestErrorFault(t *testing.T) {
	applied, dropped := retryOutcomes(t, Faults{Error: 1}, 0)
	if applied == 0 || dropped == 0 {
		t.Fatalf("applied %d, dropped %d: want both variants", applied, dropped)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	s := start(t, dir, nil)
	h := client(t, s, 0)
	ctx := context.Background()
	fund(t, s, "alice", 1000)
	res, err := h.Debit(ctx, tx("d1", "alice", 300))
	wantResult(t, res, err, 700, false)
	if _, err := h.Rollback(ctx, rollbackOf("r1", "d9", "alice", 10)); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Transactions()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	s = start(t, dir, nil)
	h = client(t, s, 0)
	after, err := s.Transactions()
	if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("transactions after restart %v (%v), before %v", after, err, before)
	}
	res, err = h.Debit(ctx, tx("d1", "alice", 300))
	wantResult(t, res, err, 700, true)
	_, err = h.Debit(ctx, tx("d9", "alice", 10))
	wantRefusal(t, err, 409, opwallet.CodeTransactionRolledBack)
	res, err = h.Debit(ctx, tx("d2", "alice", 100))
	wantResult(t, res, err, 600, false)
	if recs, _ := s.Transactions(); recs[len(recs)-1].Seq <= before[len(before)-1].Seq {
		t.Fatal("sequence restarted")
	}
	checkBooks(t, s)
}

// TestBooksUnderRandomFaults plays many random calls from several
// goroutines under every fault, the way chemmy would (an unknown debit is
// rolled back, a credit is retried until answered), and checks the books
// and that every movement happened at most once.
func TestBooksUnderRandomFaults(t *testing.T) {
	s := start(t, "", func(c *Config) {
		c.Faults = Faults{Timeout: 0.1, Error: 0.1, Duplicate: 0.1, Late: 0.1, LateMS: 5}
		c.Seed = 42
	})
	players := []string{"p0", "p1", "p2", "p3"}
	for _, p := range players {
		fund(t, s, p, 5_000)
	}
	h := client(t, s, 100*time.Millisecond)
	ctx := context.Background()

	var mu sync.Mutex
	standing := map[string]int64{} // debits answered 200 and not rolled back
	credited := map[string]int64{}

	// until retries call until it is answered (not an unknown outcome).
	until := func(call func() (opwallet.Result, error)) (opwallet.Result, error) {
		for {
			res, err := call()
			if !errors.Is(err, opwallet.ErrUnknownOutcome) {
				return res, err
			}
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for i := range 60 {
				p := players[rng.IntN(len(players))]
				id := fmt.Sprintf("w%d-%d", w, i)
				d := tx(id+":debit", p, 1+rng.Int64N(300))
				_, err := h.Debit(ctx, d)
				switch {
				case err == nil:
					mu.Lock()
					standing[d.TransactionID] = d.Amount
					mu.Unlock()
				case errors.Is(err, opwallet.ErrUnknownOutcome):
					// chemmy rolls an unknown debit back, until answered.
					if _, err := until(func() (opwallet.Result, error) {
						return h.Rollback(ctx, rollbackOf(id+":rollback", d.TransactionID, p, d.Amount))
					}); err != nil {
						t.Errorf("rollback: %v", err)
					}
					continue
				default:
					continue // a refusal: the bet is refused
				}
				if rng.IntN(2) == 0 {
					c := tx(id+":credit", p, rng.Int64N(600)+1)
					if _, err := until(func() (opwallet.Result, error) { return h.Credit(ctx, c) }); err != nil {
						t.Errorf("credit: %v", err)
					}
					mu.Lock()
					credited[c.TransactionID] = c.Amount
					mu.Unlock()
				}
				end := tx(id+":end", p, 0)
				end.Status = opwallet.RoundCompleted
				if _, err := until(func() (opwallet.Result, error) { return h.RoundEnd(ctx, end) }); err != nil {
					t.Errorf("round_end: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	checkBooks(t, s)

	recs, err := s.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	var moved int64
	for _, r := range recs {
		moved += r.Moved
		switch {
		case r.Kind == opwallet.OpDebit && standing[r.Request.TransactionID] != 0 && r.Status != StatusApplied:
			t.Errorf("debit %s answered 200 but %s", r.Request.TransactionID, r.Status)
		case r.Kind == opwallet.OpDebit && standing[r.Request.TransactionID] == 0 && r.Status == StatusApplied:
			t.Errorf("debit %s rolled back by chemmy but still applied", r.Request.TransactionID)
		case r.Kind == opwallet.OpCredit && r.Moved != credited[r.Request.TransactionID]:
			t.Errorf("credit %s moved %d, want %d", r.Request.TransactionID, r.Moved, credited[r.Request.TransactionID])
		}
	}
	var want int64
	for _, a := range standing {
		want -= a
	}
	for _, a := range credited {
		want += a
	}
	if moved != want {
		t.Fatalf("the wallet moved %d, chemmy's view %d", moved, want)
	}
	// The ledger of the day accounts for the same.
	l, err := s.Ledger(day)
	if err != nil || l.Net != want || len(l.Transactions) != len(recs) {
		t.Fatalf("ledger net %d of %d transactions (%v), want %d of %d", l.Net, len(l.Transactions), err, want, len(recs))
	}
}

func adminCall(t *testing.T, s *Server, token, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+s.Addr()+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

func TestAdmin(t *testing.T) {
	s := start(t, "", nil)
	ptr := func(v int64) *int64 { return &v }
	if got := adminCall(t, s, "", "GET", "/admin/balances", nil, nil); got != 401 {
		t.Fatalf("no token: %d", got)
	}
	if got := adminCall(t, s, "wrong", "POST", "/admin/players", FundRequest{PlayerID: "alice", Deposit: ptr(5)}, nil); got != 401 {
		t.Fatalf("wrong token: %d", got)
	}
	var pb PlayerBalance
	adminCall(t, s, "admin", "POST", "/admin/players", FundRequest{PlayerID: "alice", Balance: ptr(1000)}, &pb)
	adminCall(t, s, "admin", "POST", "/admin/players", FundRequest{PlayerID: "alice", Deposit: ptr(500)}, &pb)
	if pb.Balance != 1500 || pb.Funded != 1500 {
		t.Fatalf("funded %+v", pb)
	}
	if got := adminCall(t, s, "admin", "POST", "/admin/players", FundRequest{PlayerID: "alice"}, nil); got != 400 {
		t.Fatalf("neither balance nor deposit: %d", got)
	}
	if _, err := client(t, s, 0).Debit(context.Background(), tx("d1", "alice", 100)); err != nil {
		t.Fatal(err)
	}
	var bals struct {
		Currency string
		Players  []PlayerBalance
	}
	adminCall(t, s, "admin", "GET", "/admin/balances", nil, &bals)
	if bals.Currency != "EUR" || len(bals.Players) != 1 || bals.Players[0].Balance != 1400 {
		t.Fatalf("balances %+v", bals)
	}
	var l Ledger
	adminCall(t, s, "admin", "GET", "/admin/ledger?day=2026-12-01", nil, &l)
	if len(l.Transactions) != 1 || l.Transactions[0].Status != StatusApplied || l.Totals["debit"].Amount != 100 {
		t.Fatalf("ledger %+v", l)
	}
	adminCall(t, s, "admin", "GET", "/admin/ledger?day=2026-12-02", nil, &l)
	if len(l.Transactions) != 0 {
		t.Fatalf("another day's ledger %+v", l)
	}
	if got := adminCall(t, s, "admin", "GET", "/admin/ledger?day=yesterday", nil, nil); got != 400 {
		t.Fatalf("bad day: %d", got)
	}
	want := Faults{Timeout: 0.25, Late: 0.5, HangMS: 100}
	adminCall(t, s, "admin", "POST", "/admin/faults", want, nil)
	var f Faults
	adminCall(t, s, "admin", "GET", "/admin/faults", nil, &f)
	if f != want || s.Faults() != want {
		t.Fatalf("faults %+v, want %+v", f, want)
	}
	if got := adminCall(t, s, "admin", "POST", "/admin/faults", Faults{Error: 0.7, Late: 0.7}, nil); got != 400 {
		t.Fatalf("rates over 1: %d", got)
	}

	off := start(t, "", func(c *Config) { c.AdminToken = "" })
	if got := adminCall(t, off, "", "GET", "/admin/balances", nil, nil); got != 404 {
		t.Fatalf("admin disabled: %d", got)
	}
}

func TestFaultPick(t *testing.T) {
	f := Faults{Timeout: 0.1, Error: 0.2, Duplicate: 0.3, Late: 0.1}
	for _, c := range []struct {
		u    float64
		coin bool
		want fault
	}{
		{0.05, true, faultTimeoutApplied}, {0.05, false, faultTimeoutDropped},
		{0.2, true, faultErrorAfter}, {0.2, false, faultErrorBefore},
		{0.5, true, faultDuplicate}, {0.65, false, faultLate}, {0.75, true, faultNone},
	} {
		if got := f.pick(c.u, c.coin); got != c.want {
			t.Errorf("pick(%v, %v) = %v, want %v", c.u, c.coin, got, c.want)
		}
	}
	for _, bad := range []Faults{{Timeout: -0.1}, {Error: 1.5}, {Duplicate: 0.6, Late: 0.6}, {HangMS: -1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestExpireSession: a session ended on the wallet's side (the admin
// endpoint) refuses a later debit in it, 403 SESSION_EXPIRED, nothing
// moved; a debit in another session or in none, and a credit in the
// ended one, still apply.
func TestExpireSession(t *testing.T) {
	s := start(t, "", nil)
	fund(t, s, "alice", 1000)
	in := func(id, session string) []byte {
		x := tx(id, "alice", 10)
		x.SessionID = session
		b, _ := json.Marshal(x)
		return b
	}
	if code := adminCall(t, s, "admin", http.MethodPost, "/admin/sessions/ls-1/expire", nil, nil); code != http.StatusOK {
		t.Fatalf("expire: %d", code)
	}
	if status, r := post(t, s, opwallet.OpDebit, in("d1", "ls-1"), secret, time.Now()); status != http.StatusForbidden || r.Code != opwallet.CodeSessionExpired || r.TransactionID != "d1" {
		t.Fatalf("a debit in the ended session: %d %+v", status, r)
	}
	for _, id := range []string{"d2", "d3"} {
		session := map[string]string{"d2": "ls-2", "d3": ""}[id]
		if status, r := post(t, s, opwallet.OpDebit, in(id, session), secret, time.Now()); status != http.StatusOK {
			t.Fatalf("debit %s in session %q: %d %+v", id, session, status, r)
		}
	}
	if status, r := post(t, s, opwallet.OpCredit, in("c1", "ls-1"), secret, time.Now()); status != http.StatusOK {
		t.Fatalf("a credit in the ended session: %d %+v", status, r)
	}
	if got := balanceOf(t, s, "alice"); got != 1000-20+10 {
		t.Fatalf("balance %d, want %d", got, 1000-20+10)
	}
	// The refusal is recorded, as any other, and answered again.
	recs, err := s.Transactions()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[0].Request.TransactionID != "d1" || recs[0].Status != StatusRefused || recs[0].Moved != 0 {
		t.Fatalf("the refused debit's record: %+v", recs)
	}
	if status, r := post(t, s, opwallet.OpDebit, in("d1", "ls-1"), secret, time.Now()); status != http.StatusForbidden || r.Code != opwallet.CodeSessionExpired {
		t.Fatalf("the refused debit again: %d %+v", status, r)
	}
	if err := s.CheckBooks(); err != nil {
		t.Fatal(err)
	}
}
