package opwallet

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// TestHTTPReplayedRefusalIsNotDefinite: an answer's signature covers only
// its timestamp, the request's path and its own body, and a refusal's
// body names no transaction. So a signed refusal captured on the wire
// (here: one the operator gave to an earlier debit) can be replayed, for
// 5 minutes, as the answer to any other debit. chemmy then takes it as a
// definite refusal and never rolls the debit back, while the operator
// applied it: the player loses the stake. A refusal that cannot be tied
// to the request must be an unknown outcome (or the answer's signature
// must cover the request, e.g. its signature or transaction id).
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
