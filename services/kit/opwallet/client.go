package opwallet

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults of HTTPConfig.
const (
	DefaultTimeout        = 3 * time.Second
	DefaultMaxAnswerBytes = 1 << 20
)

// ErrUnknownOutcome is wrapped by every error of the HTTP adapter that is
// not a *Refusal: the call may or may not have moved money (a timeout, a
// transport error, a 5xx, a 3xx, any 2xx but 200, an unsigned or badly
// signed answer, an unparseable or oversized body, a 200 answer to a
// debit, credit, rollback or round_end that does not echo its
// transaction_id, 408 and 429).
var ErrUnknownOutcome = errors.New("opwallet: outcome unknown")

// HTTPConfig configures NewHTTP.
type HTTPConfig struct {
	// BaseURL is the operator's wallet endpoint, e.g.
	// "https://wallet.example.com/chemmy"; each operation is a POST to
	// BaseURL + "/" + operation. It must be https unless its host is a
	// loopback address ("localhost", 127.0.0.0/8, ::1) or
	// AllowInsecureHTTP is set. No query nor fragment.
	BaseURL string
	// AllowInsecureHTTP allows a plain http BaseURL on a non-loopback host
	// (a private network only: the signature authenticates, it does not
	// hide amounts nor player ids).
	AllowInsecureHTTP bool
	// Secret is the HMAC-SHA256 key shared with the operator, signing
	// requests and checking answers. Required (not empty).
	Secret []byte
	// PreviousSecret, during a rotation, is the secret Secret replaces:
	// an answer signed with it is trusted too (the operator signs his
	// answer with the secret that verified the request, and a request
	// sent before the rotation reached us may be answered after it).
	// Requests are signed with Secret only. Nil: none.
	PreviousSecret []byte
	// Timeout bounds each call, from sending the request to reading the
	// whole answer. 0 means DefaultTimeout (3 s).
	Timeout time.Duration
	// Client is the HTTP client to use (its transport, proxies, TLS). It
	// is copied; the copy never follows redirects. Nil builds one from
	// http.DefaultTransport with TLSConfig. Set Client or TLSConfig, not
	// both.
	Client *http.Client
	// TLSConfig is the TLS configuration of the built client (e.g. the
	// operator's CA, a client certificate). Nil means the system roots.
	TLSConfig *tls.Config
	// MaxAnswerBytes caps the size of an answer's body; a longer answer is
	// an unknown outcome. 0 means DefaultMaxAnswerBytes (1 MiB).
	MaxAnswerBytes int64
	// Now is the clock used to sign and to check answers' timestamps
	// (tests). Nil means time.Now.
	Now func() time.Time
}

// HTTP is the generic HTTP/JSON Operator adapter (see docs/operator-wallet.md
// for the wire format). It is safe for concurrent use.
type HTTP struct {
	base    *url.URL
	secrets atomic.Pointer[secrets]
	timeout time.Duration
	client  *http.Client
	max     int64
	now     func() time.Time
}

var _ Operator = (*HTTP)(nil)

// secrets are the current secret and, during a rotation, the previous.
type secrets struct{ current, previous []byte }

// SetSecrets replaces the secrets (a rotation picked up while running):
// the next requests are signed with current, and answers signed with
// current or previous (nil: none) are trusted. It fails, changing
// nothing, when current is empty or previous is empty but not nil.
func (h *HTTP) SetSecrets(current, previous []byte) error {
	if len(current) == 0 {
		return errors.New("opwallet: empty HMAC secret")
	}
	if previous != nil && len(previous) == 0 {
		return errors.New("opwallet: empty previous HMAC secret")
	}
	h.secrets.Store(&secrets{current: bytes.Clone(current), previous: bytes.Clone(previous)})
	return nil
}

// NewHTTP returns an adapter calling the operator's wallet at cfg.BaseURL.
// It fails when the URL is not absolute, not https on a non-loopback host
// (without AllowInsecureHTTP), carries a query, when the secret is empty,
// when both Client and TLSConfig are set or a limit is negative.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("opwallet: base URL: %w", err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("opwallet: base URL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("opwallet: base URL %q must have no query, fragment nor user", cfg.BaseURL)
	}
	if u.Scheme == "http" && !cfg.AllowInsecureHTTP && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("opwallet: base URL %q is plain http on a non-loopback host (use https or AllowInsecureHTTP)", cfg.BaseURL)
	}
	if cfg.Client != nil && cfg.TLSConfig != nil {
		return nil, errors.New("opwallet: set Client or TLSConfig, not both")
	}
	if cfg.Timeout < 0 || cfg.MaxAnswerBytes < 0 {
		return nil, errors.New("opwallet: negative timeout or answer size")
	}
	h := &HTTP{
		base:    u,
		timeout: cfg.Timeout,
		max:     cfg.MaxAnswerBytes,
		now:     cfg.Now,
	}
	if err := h.SetSecrets(cfg.Secret, cfg.PreviousSecret); err != nil {
		return nil, err
	}
	if h.timeout == 0 {
		h.timeout = DefaultTimeout
	}
	if h.max == 0 {
		h.max = DefaultMaxAnswerBytes
	}
	if h.now == nil {
		h.now = time.Now
	}
	if cfg.Client != nil {
		c := *cfg.Client
		h.client = &c
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cfg.TLSConfig
		h.client = &http.Client{Transport: tr}
	}
	h.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return h, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Balance asks for req.PlayerID's balance (POST <base>/balance).
func (h *HTTP) Balance(ctx context.Context, req BalanceRequest) (Result, error) {
	return h.call(ctx, OpBalance, req, "")
}

// Debit takes tx.Amount from the player (POST <base>/debit).
func (h *HTTP) Debit(ctx context.Context, tx Transaction) (Result, error) {
	return h.call(ctx, OpDebit, tx, tx.TransactionID)
}

// Credit gives tx.Amount to the player (POST <base>/credit).
func (h *HTTP) Credit(ctx context.Context, tx Transaction) (Result, error) {
	return h.call(ctx, OpCredit, tx, tx.TransactionID)
}

// Rollback undoes the debit tx.RolledBackID (POST <base>/rollback).
func (h *HTTP) Rollback(ctx context.Context, tx Transaction) (Result, error) {
	return h.call(ctx, OpRollback, tx, tx.TransactionID)
}

// RoundEnd tells the operator the round tx.RoundID is over with tx.Status
// (POST <base>/round_end).
func (h *HTTP) RoundEnd(ctx context.Context, tx Transaction) (Result, error) {
	return h.call(ctx, OpRoundEnd, tx, tx.TransactionID)
}

// call POSTs in to <base>/<op>, signed, and reads the signed answer.
func (h *HTTP) call(ctx context.Context, op string, in any, txID string) (Result, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return Result{}, fmt.Errorf("opwallet: %s: encode: %w", op, err)
	}
	u := *h.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + op
	u.RawPath = ""
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("opwallet: %s: %w", op, err)
	}
	sec := h.secrets.Load()
	ts := h.now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(sec.current, ts, u.Path, body))
	resp, err := h.client.Do(req)
	if err != nil {
		return Result{}, unknown(op, "%v", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, h.max+1))
	if err != nil {
		return Result{}, unknown(op, "reading the answer (status %d): %v", resp.StatusCode, err)
	}
	if int64(len(answer)) > h.max {
		return Result{}, unknown(op, "answer (status %d) longer than %d bytes", resp.StatusCode, h.max)
	}
	definite := resp.StatusCode == http.StatusOK ||
		(resp.StatusCode >= 400 && resp.StatusCode < 500 &&
			resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests)
	if !definite {
		return Result{}, unknown(op, "status %d: %.200s", resp.StatusCode, answer)
	}
	err = Verify(sec.current, h.now(), resp.Header.Get(HeaderTimestamp), resp.Header.Get(HeaderSignature), u.Path, answer)
	if err != nil && sec.previous != nil &&
		Verify(sec.previous, h.now(), resp.Header.Get(HeaderTimestamp), resp.Header.Get(HeaderSignature), u.Path, answer) == nil {
		err = nil
	}
	if err != nil {
		return Result{}, unknown(op, "status %d answer not trusted: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		ref := &Refusal{Status: resp.StatusCode}
		if err := json.Unmarshal(answer, ref); err != nil || ref.Code == "" {
			return Result{}, unknown(op, "status %d without a refusal code: %.200s", resp.StatusCode, answer)
		}
		if ref.TransactionID != txID {
			// Signed, but maybe another call's refusal replayed.
			return Result{}, unknown(op, "status %d refusal of transaction %q, sent %q", resp.StatusCode, ref.TransactionID, txID)
		}
		return Result{}, ref
	}
	var res Result
	if err := json.Unmarshal(answer, &res); err != nil {
		return Result{}, unknown(op, "status 200 with an unparseable body: %v", err)
	}
	// The answer echoes the transaction id (balance has none): one that
	// does not, even by leaving it out, may be another call's.
	if res.TransactionID != txID {
		return Result{}, unknown(op, "answer for transaction %q, sent %q", res.TransactionID, txID)
	}
	return res, nil
}

func unknown(op, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrUnknownOutcome, op, fmt.Sprintf(format, args...))
}
