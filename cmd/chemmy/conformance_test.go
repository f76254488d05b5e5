package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/conformance"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
)

var (
	kitSecret    = []byte("kit-old-secret")
	kitNewSecret = []byte("kit-new-secret")
)

const (
	kitPlayer  = "conformance-player"
	kitFunding = 10_000
	// kitExpired is a game-launch session of the test player that the
	// wallet ended (the kit's -expired-session).
	kitExpired = "ls-ended"
)

// kitWallet starts a reference wallet funding the kit's test player, with
// the new secret of a rotation when rotating.
func kitWallet(t *testing.T, rotating bool) *refwallet.Server {
	t.Helper()
	cfg := refwallet.Config{DataFile: filepath.Join(t.TempDir(), "opwallet.db"), Secret: kitSecret, Logger: slog.New(slog.DiscardHandler)}
	if rotating {
		cfg.NewSecret = kitNewSecret
	}
	w, err := refwallet.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	if err := w.SetBalance(kitPlayer, kitFunding); err != nil {
		t.Fatal(err)
	}
	w.ExpireSession(kitExpired)
	return w
}

// runKit runs `chemmy wallet-conformance` against base and returns its
// exit code, its output and the checks that failed.
func runKit(t *testing.T, base string, rotating bool) (int, string, []string) {
	t.Helper()
	var newSecret []byte
	if rotating {
		newSecret = kitNewSecret
	}
	return runKitWith(t, base, kitSecret, newSecret)
}

// runKitWith is runKit signing with secret, and with newSecret (when not
// nil) as the secret being rotated in.
func runKitWith(t *testing.T, base string, secret, newSecret []byte) (int, string, []string) {
	t.Helper()
	dir := t.TempDir()
	secretFile, newFile := filepath.Join(dir, "secret"), filepath.Join(dir, "new-secret")
	os.WriteFile(secretFile, append(bytes.Clone(secret), '\n'), 0o600)
	os.WriteFile(newFile, newSecret, 0o600)
	args := []string{"-url", base, "-secret-file", secretFile, "-player", kitPlayer, "-expired-session", kitExpired}
	if newSecret != nil {
		args = append(args, "-new-secret-file", newFile)
	}
	var stdout, stderr bytes.Buffer
	code := walletConformanceMain(context.Background(), args, &stdout, &stderr, func(string) string { return "" })
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	var failed []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if name, ok := strings.CutPrefix(l, conformance.Fail+"  "); ok {
			name, _, _ = strings.Cut(name, ":")
			failed = append(failed, name)
		}
	}
	return code, stdout.String(), failed
}

// balanceOf is the test player's balance in w's books.
func balanceOf(t *testing.T, w *refwallet.Server) int64 {
	t.Helper()
	bals, err := w.Balances()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bals {
		if b.PlayerID == kitPlayer {
			return b.Balance
		}
	}
	t.Fatalf("no player %s", kitPlayer)
	return 0
}

// TestWalletConformanceKit runs `chemmy wallet-conformance` against the
// reference operator wallet, which passes every check (exit 0, the test
// player's balance as it was), and against wrong wallets, each the
// reference wallet behind a proxy that breaks one rule: the kit fails
// exactly the checks of that rule (exit 1).
func TestWalletConformanceKit(t *testing.T) {
	t.Run("reference wallet", func(t *testing.T) {
		w := kitWallet(t, true)
		code, out, failed := runKit(t, w.BaseURL(), true)
		if code != 0 || len(failed) > 0 {
			t.Fatalf("exit %d, failed %v:\n%s", code, failed, out)
		}
		if n := strings.Count(out, "\n"+conformance.Pass+"  "); n != len(conformance.Checks) {
			t.Fatalf("%d checks passed, want %d:\n%s", n, len(conformance.Checks), out)
		}
		summary := "wallet-conformance summary: " + strconv.Itoa(len(conformance.Checks)) + " checks, " + strconv.Itoa(len(conformance.Checks)) + " passed, 0 failed, 0 skipped: conformant\n"
		if !strings.HasSuffix(out, summary) || strings.Contains(out, "note:") {
			t.Fatalf("want the summary %q and no note:\n%s", summary, out)
		}
		if got := balanceOf(t, w); got != kitFunding {
			t.Fatalf("the test player's balance is %d after the kit, want %d", got, kitFunding)
		}
		if err := w.CheckBooks(); err != nil {
			t.Fatal(err)
		}
		// Run again on the same books: new ids, the same verdict; and so
		// from a chemmy already moved to the new secret.
		if code, out, _ := runKit(t, w.BaseURL(), true); code != 0 {
			t.Fatalf("second run: exit %d:\n%s", code, out)
		}
		if code, out, _ := runKitWith(t, w.BaseURL(), kitNewSecret, kitSecret); code != 0 {
			t.Fatalf("the kit on the new secret: exit %d:\n%s", code, out)
		}
		if got := balanceOf(t, w); got != kitFunding {
			t.Fatalf("the test player's balance is %d after three runs, want %d", got, kitFunding)
		}
	})

	t.Run("no rotation under way", func(t *testing.T) {
		w := kitWallet(t, false)
		code, out, failed := runKit(t, w.BaseURL(), false)
		if code != 0 || len(failed) > 0 || !strings.Contains(out, conformance.Skip+"  secret-rotation: ") ||
			!strings.Contains(out, "1 skipped: conformant") {
			t.Fatalf("exit %d, failed %v, want secret-rotation skipped:\n%s", code, failed, out)
		}
	})

	for _, c := range []struct {
		bug      string
		rotating bool
		want     []string
	}{
		// A replayed debit is applied as a new one: the replay moves money
		// twice, and so does the rolled back debit sent again.
		{"replayed debit applied again", false, []string{"debit-replay", "debit-after-rollback", "session"}},
		// A rollback of a debit it has not seen leaves no tombstone: the
		// late debit is applied.
		{"debit applied after its rollback", false, []string{"late-debit-after-rollback"}},
		// Signatures are not checked.
		{"signatures ignored", false, []string{"signature-wrong-secret", "signature-stale-timestamp"}},
		// During a rotation the new secret is refused.
		{"new secret refused", true, []string{"secret-rotation"}},
		// Answers to calls signed with the new secret are signed with the old one.
		{"answers signed with the old secret", true, []string{"secret-rotation"}},
		// Refusals go out unsigned: chemmy cannot trust any of them.
		{"refusals unsigned", false, []string{"balance-unknown-player", "balance-currency-mismatch", "debit-id-reused",
			"debit-after-rollback", "late-debit-after-rollback", "insufficient-funds", "unknown-player", "currency-mismatch",
			"session-expired", "signature-wrong-secret", "signature-stale-timestamp"}},
		// A round_end of a round in which the wallet applied nothing is refused.
		{"round end of an unknown round refused", false, []string{"round-end-no-stake", "session-expired"}},
		// Any call carrying a session_id is refused as malformed.
		{"session refused", false, []string{"session", "session-expired"}},
		// The session is dropped on the way: a debit in an ended session
		// is applied.
		{"session ignored", false, []string{"session-expired"}},
		// Every call in an ended session is refused, its credit and round
		// ends too.
		{"ended session refuses everything", false, []string{"session-expired"}},
		// A debit carrying a session is not checked against its id: its
		// replay is applied again.
		{"replay in a session applied again", false, []string{"session"}},
		// An ended session's debit is answered 500, not refused: an
		// unknown outcome to chemmy.
		{"ended session answered 500", false, []string{"session-expired"}},
	} {
		t.Run(c.bug, func(t *testing.T) {
			w := kitWallet(t, c.rotating && c.bug != "new secret refused")
			p := &wrongWallet{t: t, bug: c.bug, next: w.BaseURL(), debits: map[string]string{}, applied: map[string]bool{}}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			code, out, failed := runKit(t, srv.URL+refwallet.PathPrefix, c.rotating)
			if code != 1 || !slices.Equal(failed, c.want) {
				t.Fatalf("exit %d, failed %v, want exit 1 and exactly %v:\n%s", code, failed, c.want, out)
			}
			if !strings.Contains(out, "failed: NOT conformant\n") && !strings.Contains(out, "skipped: NOT conformant\n") {
				t.Fatalf("no failing summary:\n%s", out)
			}
			t.Logf("the kit's output:\n%s", out)
			// The kit gave back what the wrong wallet moved.
			if got := balanceOf(t, w); got != kitFunding {
				t.Fatalf("the test player's balance is %d after the kit, want %d:\n%s", got, kitFunding, out)
			}
		})
	}
}

// TestWalletConformanceFlags: bad flags exit 2 and name what is wrong; -h
// lists every check.
func TestWalletConformanceFlags(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secretFile, []byte("s"), 0o600)
	env := func(string) string { return "" }
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no url":      {[]string{"-secret-file", secretFile, "-player", "p"}, "-url and -player are required"},
		"no player":   {[]string{"-secret-file", secretFile, "-url", "http://127.0.0.1:1/w"}, "-url and -player are required"},
		"no secret":   {[]string{"-url", "http://127.0.0.1:1/w", "-player", "p"}, "no operator secret"},
		"http":        {[]string{"-secret-file", secretFile, "-url", "http://wallet.example.com/w", "-player", "p"}, "plain http"},
		"amount":      {[]string{"-secret-file", secretFile, "-url", "http://127.0.0.1:1/w", "-player", "p", "-amount", "0"}, "-amount"},
		"same secret": {[]string{"-secret-file", secretFile, "-new-secret-file", secretFile, "-url", "http://127.0.0.1:1/w", "-player", "p"}, "same as the secret"},
		"ca on http":  {[]string{"-secret-file", secretFile, "-ca-file", secretFile, "-url", "http://127.0.0.1:1/w", "-player", "p"}, "needs an https"},
	} {
		var stdout, stderr bytes.Buffer
		if code := walletConformanceMain(context.Background(), c.args, &stdout, &stderr, env); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", name, code, stderr.String(), c.want)
		}
	}
	var stderr bytes.Buffer
	if code := walletConformanceMain(context.Background(), []string{"-h"}, io.Discard, &stderr, env); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	for _, c := range conformance.Checks {
		if !strings.Contains(stderr.String(), "  "+c.Name+" ") {
			t.Errorf("-h does not list %s:\n%s", c.Name, stderr.String())
		}
	}
}

// wrongWallet is a wrong operator wallet: it forwards the calls to the
// reference wallet at next, breaking the rule its bug names. It holds
// both secrets, to sign what it changes.
type wrongWallet struct {
	t    *testing.T
	bug  string
	next string

	mu      sync.Mutex
	debits  map[string]string // debit id -> its first request (time aside)
	applied map[string]bool   // round ids with an applied movement
	n       int
}

func (p *wrongWallet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	sent := body // as the kit sent it
	op := path.Base(r.URL.Path)
	ts, sig := r.Header.Get(opwallet.HeaderTimestamp), r.Header.Get(opwallet.HeaderSignature)
	var tx opwallet.Transaction
	_ = json.Unmarshal(body, &tx)
	origID := tx.TransactionID
	resign := func() {
		body, _ = json.Marshal(tx)
		now := time.Now().Unix()
		ts, sig = strconv.FormatInt(now, 10), opwallet.Sign(kitSecret, now, r.URL.Path, body)
	}
	p.mu.Lock()
	switch {
	case p.bug == "signatures ignored":
		now := time.Now().Unix()
		ts, sig = strconv.FormatInt(now, 10), opwallet.Sign(kitSecret, now, r.URL.Path, body)
	case p.bug == "replayed debit applied again" && op == opwallet.OpDebit:
		key := tx
		key.Time = time.Time{}
		k, _ := json.Marshal(key)
		if first, seen := p.debits[tx.TransactionID]; seen && first == string(k) {
			p.n++
			tx.TransactionID += ".again" + strconv.Itoa(p.n)
			resign()
		} else if !seen {
			p.debits[tx.TransactionID] = string(k)
		}
	case p.bug == "debit applied after its rollback" && op == opwallet.OpDebit:
		p.debits[tx.TransactionID] = ""
	case p.bug == "debit applied after its rollback" && op == opwallet.OpRollback:
		if _, seen := p.debits[tx.RolledBackID]; !seen {
			tx.RolledBackID += ".elsewhere" // the tombstone lands on another id
			resign()
		}
	case p.bug == "session refused" && tx.SessionID != "":
		p.mu.Unlock()
		p.answer(w, r, kitSecret, http.StatusBadRequest, opwallet.Refusal{Code: opwallet.CodeInvalidRequest, Message: "unknown field session_id", TransactionID: origID})
		return
	case p.bug == "session ignored" && tx.SessionID != "":
		tx.SessionID = ""
		resign()
	case p.bug == "ended session refuses everything" && tx.SessionID == kitExpired && op != opwallet.OpDebit:
		p.mu.Unlock()
		p.answer(w, r, kitSecret, http.StatusForbidden, opwallet.Refusal{Code: opwallet.CodeSessionExpired, Message: "session ended", TransactionID: origID})
		return
	case p.bug == "replay in a session applied again" && op == opwallet.OpDebit && tx.SessionID != "":
		if p.debits[tx.TransactionID] == "seen" {
			p.n++
			tx.TransactionID += ".s" + strconv.Itoa(p.n)
			resign()
		} else {
			p.debits[tx.TransactionID] = "seen"
		}
	case p.bug == "ended session answered 500" && op == opwallet.OpDebit && tx.SessionID == kitExpired:
		p.mu.Unlock()
		p.answer(w, r, kitSecret, http.StatusInternalServerError, opwallet.Refusal{Code: "INTERNAL", Message: "session store down", TransactionID: origID})
		return
	case p.bug == "round end of an unknown round refused" && op == opwallet.OpRoundEnd && !p.applied[tx.RoundID]:
		p.mu.Unlock()
		p.answer(w, r, kitSecret, http.StatusConflict, opwallet.Refusal{Code: "UNKNOWN_ROUND", Message: "no bet in this round", TransactionID: origID})
		return
	}
	p.mu.Unlock()

	req, _ := http.NewRequest(http.MethodPost, p.next+"/"+op, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(opwallet.HeaderTimestamp, ts)
	req.Header.Set(opwallet.HeaderSignature, sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Errorf("wrong wallet: %v", err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && (op == opwallet.OpDebit || op == opwallet.OpCredit) {
		p.mu.Lock()
		p.applied[tx.RoundID] = true
		p.mu.Unlock()
	}
	// Which secret signed the request, as the reference wallet answers.
	key := kitSecret
	if opwallet.Verify(kitNewSecret, time.Now(), r.Header.Get(opwallet.HeaderTimestamp), r.Header.Get(opwallet.HeaderSignature), r.URL.Path, sent) == nil {
		key = kitNewSecret
	}
	switch {
	case tx.TransactionID != origID:
		// Name the transaction the kit sent, signed anew.
		var m map[string]any
		_ = json.Unmarshal(answer, &m)
		m["transaction_id"] = origID
		p.answer(w, r, key, resp.StatusCode, m)
	case p.bug == "answers signed with the old secret":
		p.answer(w, r, kitSecret, resp.StatusCode, json.RawMessage(answer))
	case p.bug == "refusals unsigned" && resp.StatusCode != http.StatusOK:
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
	default:
		for _, h := range []string{opwallet.HeaderTimestamp, opwallet.HeaderSignature, "Content-Type"} {
			w.Header().Set(h, resp.Header.Get(h))
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
	}
}

// answer writes v as JSON signed with key.
func (p *wrongWallet) answer(w http.ResponseWriter, r *http.Request, key []byte, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Error(err)
	}
	now := time.Now().Unix()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(opwallet.HeaderTimestamp, strconv.FormatInt(now, 10))
	w.Header().Set(opwallet.HeaderSignature, opwallet.Sign(key, now, r.URL.Path, b))
	w.WriteHeader(status)
	w.Write(b)
}
