package opwallet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

var testSecret = []byte("test-secret")

// answerFunc decides a fake operator's answer to a verified request.
type answerFunc func(w http.ResponseWriter, r *http.Request, body []byte)

// fakeOperator checks each request's signature (answering 401 otherwise)
// and hands it to answer. It records the paths it was called on.
func fakeOperator(t *testing.T, answer answerFunc) (*httptest.Server, *[]string) {
	t.Helper()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		paths = append(paths, r.Method+" "+r.URL.Path)
		if err := Verify(testSecret, time.Now(), r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature), r.URL.Path, body); err != nil {
			signed(w, r, http.StatusUnauthorized, Refusal{Code: CodeInvalidSignature, Message: err.Error()})
			return
		}
		answer(w, r, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

// signed writes v as a JSON answer signed with testSecret.
func signed(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, _ := json.Marshal(v)
	signedBytes(w, r, status, b, testSecret)
}

func signedBytes(w http.ResponseWriter, r *http.Request, status int, b, secret []byte) {
	ts := time.Now().Unix()
	w.Header().Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	w.Header().Set(HeaderSignature, Sign(secret, ts, r.URL.Path, b))
	w.WriteHeader(status)
	w.Write(b)
}

func newClient(t *testing.T, base string, mod func(*HTTPConfig)) *HTTP {
	t.Helper()
	cfg := HTTPConfig{BaseURL: base + "/wallet", Secret: testSecret}
	if mod != nil {
		mod(&cfg)
	}
	h, err := NewHTTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var testTx = Transaction{
	TransactionID: "coup-1:bet:alice", PlayerID: "alice", RoundID: "coup-1",
	TableID: "t1", Amount: 500, Currency: "EUR", Reason: "bet",
	Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
}

func TestHTTPSuccess(t *testing.T) {
	srv, paths := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var tx Transaction
		if err := json.Unmarshal(body, &tx); err != nil || tx != testTx {
			signed(w, r, 400, Refusal{Code: CodeInvalidRequest, Message: "body"})
			return
		}
		signed(w, r, 200, Result{TransactionID: tx.TransactionID, OperatorTransactionID: "op-1", Balance: 9500, Currency: "EUR"})
	})
	h := newClient(t, srv.URL, nil)
	ctx := context.Background()
	for _, call := range []func(context.Context, Transaction) (Result, error){h.Debit, h.Credit, h.Rollback, h.RoundEnd} {
		res, err := call(ctx, testTx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Balance != 9500 || res.OperatorTransactionID != "op-1" || res.Duplicate {
			t.Fatalf("result %+v", res)
		}
	}
	want := "POST /wallet/debit,POST /wallet/credit,POST /wallet/rollback,POST /wallet/round_end"
	if got := strings.Join(*paths, ","); got != want {
		t.Fatalf("paths %s, want %s", got, want)
	}
}

func TestHTTPBalance(t *testing.T) {
	srv, _ := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req BalanceRequest
		json.Unmarshal(body, &req)
		if r.URL.Path != "/wallet/balance" || req.PlayerID != "alice" {
			signed(w, r, 404, Refusal{Code: CodeUnknownPlayer, Message: req.PlayerID})
			return
		}
		signed(w, r, 200, Result{Balance: 1234, Currency: "EUR"})
	})
	res, err := newClient(t, srv.URL, nil).Balance(context.Background(), BalanceRequest{PlayerID: "alice", Currency: "EUR"})
	if err != nil || res.Balance != 1234 {
		t.Fatalf("balance %+v, %v", res, err)
	}
}

func TestHTTPRefusal(t *testing.T) {
	srv, _ := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		signed(w, r, http.StatusPaymentRequired, Refusal{Code: CodeInsufficientFunds, Message: "balance 100", TransactionID: testTx.TransactionID})
	})
	_, err := newClient(t, srv.URL, nil).Debit(context.Background(), testTx)
	ref, ok := IsRefusal(err)
	if !ok || ref.Status != 402 || ref.Code != CodeInsufficientFunds || ref.Message != "balance 100" {
		t.Fatalf("want a 402 refusal, got %v", err)
	}
	if errors.Is(err, ErrUnknownOutcome) {
		t.Fatal("a refusal is definite")
	}
}

func TestHTTPWrongSecretIsRefused(t *testing.T) {
	srv, _ := fakeOperator(t, nil)
	_, err := newClient(t, srv.URL, func(c *HTTPConfig) { c.Secret = []byte("other") }).Debit(context.Background(), testTx)
	// The operator refuses our signature, signing its refusal with its
	// own secret: we cannot trust that answer either.
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("want unknown outcome, got %v", err)
	}
}

func TestHTTPUnknownOutcomes(t *testing.T) {
	cases := map[string]answerFunc{
		"5xx": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signed(w, r, 503, Refusal{Code: "UNAVAILABLE", Message: "later"})
		},
		"429": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signed(w, r, 429, Refusal{Code: "SLOW_DOWN", Message: "later"})
		},
		"unsigned 200": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.WriteHeader(200)
			w.Write([]byte(`{"balance":1}`))
		},
		"badly signed 200": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signedBytes(w, r, 200, []byte(`{"balance":1}`), []byte("forged"))
		},
		"signed over another body": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ts := time.Now().Unix()
			w.Header().Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
			w.Header().Set(HeaderSignature, Sign(testSecret, ts, r.URL.Path, []byte(`{"balance":1}`)))
			w.Write([]byte(`{"balance":1000000}`))
		},
		"stale answer": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			b := []byte(`{"balance":1}`)
			ts := time.Now().Add(-MaxSkew - time.Minute).Unix()
			w.Header().Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
			w.Header().Set(HeaderSignature, Sign(testSecret, ts, r.URL.Path, b))
			w.Write(b)
		},
		"unsigned 4xx": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.WriteHeader(402)
			w.Write([]byte(`{"code":"INSUFFICIENT_FUNDS","message":"x"}`))
		},
		"4xx without code": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signedBytes(w, r, 404, []byte(`not found`), testSecret)
		},
		"unparseable 200": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signedBytes(w, r, 200, []byte(`{"balance":`), testSecret)
		},
		"other transaction": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signed(w, r, 200, Result{TransactionID: "someone-else", Balance: 1})
		},
		"201 with a result": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signed(w, r, 201, Result{TransactionID: testTx.TransactionID, Balance: 1})
		},
		"204": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signedBytes(w, r, 204, nil, testSecret)
		},
		"oversized": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			signedBytes(w, r, 200, []byte(`{"balance":1,"pad":"`+strings.Repeat("x", 2000)+`"}`), testSecret)
		},
		"redirect": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		},
	}
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			srv, paths := fakeOperator(t, answer)
			h := newClient(t, srv.URL, func(c *HTTPConfig) { c.MaxAnswerBytes = 1000 })
			_, err := h.Debit(context.Background(), testTx)
			if !errors.Is(err, ErrUnknownOutcome) {
				t.Fatalf("want unknown outcome, got %v", err)
			}
			if _, ok := IsRefusal(err); ok {
				t.Fatal("not a refusal")
			}
			if len(*paths) != 1 {
				t.Fatalf("called %v, want one call (no redirect followed)", *paths)
			}
		})
	}
}

// TestHTTPAnswerWithoutEcho: a 200 that does not echo the transaction id
// of a debit, credit, rollback or round_end may answer another call: its
// outcome is unknown.
func TestHTTPAnswerWithoutEcho(t *testing.T) {
	srv, _ := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		signed(w, r, 200, Result{OperatorTransactionID: "op-1", Balance: 1, Currency: "EUR"})
	})
	h := newClient(t, srv.URL, nil)
	calls := map[string]func(context.Context, Transaction) (Result, error){
		OpDebit: h.Debit, OpCredit: h.Credit, OpRollback: h.Rollback, OpRoundEnd: h.RoundEnd,
	}
	for op, call := range calls {
		if _, err := call(context.Background(), testTx); !errors.Is(err, ErrUnknownOutcome) {
			t.Errorf("%s answered without its transaction_id: want an unknown outcome, got %v", op, err)
		}
	}
}

func TestHTTPTimeout(t *testing.T) {
	srv, _ := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		<-r.Context().Done() // hang until the client gives up
	})
	h := newClient(t, srv.URL, func(c *HTTPConfig) { c.Timeout = 50 * time.Millisecond })
	_, err := h.Credit(context.Background(), testTx)
	if !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("want an unknown outcome after the deadline, got %v", err)
	}
}

func TestHTTPTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	_, err := newClient(t, base, nil).Debit(context.Background(), testTx)
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("want unknown outcome, got %v", err)
	}
}

func TestNewHTTPConfig(t *testing.T) {
	bad := map[string]HTTPConfig{
		"empty secret":       {BaseURL: "https://wallet.example.com"},
		"plain http":         {BaseURL: "http://wallet.example.com", Secret: testSecret},
		"relative":           {BaseURL: "/wallet", Secret: testSecret},
		"query":              {BaseURL: "https://wallet.example.com/w?x=1", Secret: testSecret},
		"ftp":                {BaseURL: "ftp://wallet.example.com", Secret: testSecret},
		"client and tls":     {BaseURL: "https://wallet.example.com", Secret: testSecret, Client: &http.Client{}, TLSConfig: &tls.Config{}},
		"negative timeout":   {BaseURL: "https://wallet.example.com", Secret: testSecret, Timeout: -1},
		"negative body size": {BaseURL: "https://wallet.example.com", Secret: testSecret, MaxAnswerBytes: -1},
	}
	for name, cfg := range bad {
		if _, err := NewHTTP(cfg); err == nil {
			t.Errorf("%s: NewHTTP accepted %+v", name, cfg)
		}
	}
	good := []HTTPConfig{
		{BaseURL: "https://wallet.example.com/chemmy", Secret: testSecret},
		{BaseURL: "http://127.0.0.1:7090/wallet", Secret: testSecret},
		{BaseURL: "http://localhost:7090", Secret: testSecret},
		{BaseURL: "http://[::1]:7090", Secret: testSecret},
		{BaseURL: "http://wallet.internal:7090", Secret: testSecret, AllowInsecureHTTP: true},
	}
	for _, cfg := range good {
		h, err := NewHTTP(cfg)
		if err != nil {
			t.Errorf("NewHTTP(%+v): %v", cfg, err)
			continue
		}
		if h.timeout != DefaultTimeout || h.max != DefaultMaxAnswerBytes {
			t.Errorf("defaults %v %d", h.timeout, h.max)
		}
	}
}

// TestHTTPReplayedRefusalIsNotDefinite: a signed refusal captured on the
// wire (one the operator gave to another debit) replayed within the
// signature's 5 minutes as the answer to a debit the operator applied is
// not taken as definite (chemmy would never roll the debit back): a
// refusal must name the transaction it refuses.
func TestHTTPReplayedRefusalIsNotDefinite(t *testing.T) {
	// The operator's signed refusal of another debit, captured earlier.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/wallet/debit", nil)
	signed(rec, req, http.StatusBadRequest, Refusal{Code: CodeCurrencyMismatch, Message: "the wallet holds EUR"})
	captured := rec.Result()
	body := rec.Body.Bytes()
	srv, _ := fakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		// The operator applied this debit; the man in the middle
		// answers with the replayed refusal instead.
		w.Header().Set(HeaderTimestamp, captured.Header.Get(HeaderTimestamp))
		w.Header().Set(HeaderSignature, captured.Header.Get(HeaderSignature))
		w.WriteHeader(captured.StatusCode)
		w.Write(body)
	})
	_, err := newClient(t, srv.URL, nil).Debit(context.Background(), testTx)
	if _, ok := IsRefusal(err); ok || !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("a replayed refusal not tied to transaction %q was taken as definite: %v (ts %s, now %s)",
			testTx.TransactionID, err, captured.Header.Get(HeaderTimestamp), strconv.FormatInt(time.Now().Unix(), 10))
	}
}

// TestHTTPPreviousSecret: during a rotation requests are signed with the
// current secret only, and answers signed with the current or the
// previous one are trusted; SetSecrets changes both while running.
func TestHTTPPreviousSecret(t *testing.T) {
	old, cur := []byte("old-secret"), []byte("new-secret")
	var reqSig, answerWith []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if Verify(reqSig, time.Now(), r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature), r.URL.Path, body) != nil {
			signedBytes(w, r, http.StatusUnauthorized, []byte(`{"code":"INVALID_SIGNATURE"}`), answerWith)
			return
		}
		b, _ := json.Marshal(Result{TransactionID: testTx.TransactionID, Balance: 1})
		signedBytes(w, r, http.StatusOK, b, answerWith)
	}))
	t.Cleanup(srv.Close)
	h := newClient(t, srv.URL, func(c *HTTPConfig) { c.Secret, c.PreviousSecret = cur, old })
	reqSig, answerWith = cur, old // the request verifies with the new secret only
	if _, err := h.Debit(context.Background(), testTx); err != nil {
		t.Fatalf("answer signed with the previous secret: %v", err)
	}
	answerWith = cur
	if _, err := h.Debit(context.Background(), testTx); err != nil {
		t.Fatalf("answer signed with the current secret: %v", err)
	}
	answerWith = []byte("stranger")
	if _, err := h.Debit(context.Background(), testTx); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("answer signed with neither: want unknown outcome, got %v", err)
	}
	// Rotation done: the previous secret is dropped.
	if err := h.SetSecrets(cur, nil); err != nil {
		t.Fatal(err)
	}
	answerWith = old
	if _, err := h.Debit(context.Background(), testTx); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("previous secret dropped: want unknown outcome, got %v", err)
	}
	// A new secret: requests are signed with it at once.
	if err := h.SetSecrets([]byte("third"), cur); err != nil {
		t.Fatal(err)
	}
	reqSig, answerWith = []byte("third"), cur
	if _, err := h.Debit(context.Background(), testTx); err != nil {
		t.Fatalf("after SetSecrets: %v", err)
	}
	if h.SetSecrets(nil, nil) == nil || h.SetSecrets([]byte("x"), []byte{}) == nil {
		t.Error("an empty secret is accepted")
	}
}
