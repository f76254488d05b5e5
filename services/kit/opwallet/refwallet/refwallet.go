// Package refwallet is the reference operator wallet: a small HTTP server
// speaking the operator side of chemmy's seamless wallet wire format
// (docs/operator-wallet.md), with bbolt books, admin endpoints and fault
// injection. The local stack and the tests run it in place of a casino
// operator's wallet; cmd/opwallet is its binary.
//
// Wallet calls: POST <Addr>/wallet/{balance,debit,credit,rollback,round_end},
// signed with the shared secret (package opwallet). Admin calls, guarded
// by Config.AdminToken as a bearer token: POST /admin/players,
// GET /admin/balances, GET /admin/ledger?day=YYYY-MM-DD, GET and POST
// /admin/faults.
package refwallet

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// PathPrefix is the path of the wallet calls: the base URL chemmy is
// given is "http://" + Addr() + PathPrefix.
const PathPrefix = "/wallet"

// maxRequestBytes caps a request body.
const maxRequestBytes = 64 << 10

// Config configures Start.
type Config struct {
	// Addr is the listen address; "" means "127.0.0.1:0" (a free port).
	Addr string
	// DataFile is the bbolt file of the books (created if missing).
	// Required.
	DataFile string
	// Secret is the HMAC secret shared with chemmy. Required.
	Secret []byte
	// NewSecret is the secret being rotated in, if any: while it is set a
	// request signed with Secret or with NewSecret is accepted, and its
	// answer is signed with the secret that verified it (a refused
	// signature is answered signed with Secret). A rotation: set
	// NewSecret, move chemmy (every wallet-svc) to it, then make it Secret
	// and clear NewSecret (docs/operator-wallet.md "Rotating the secret").
	NewSecret []byte
	// AdminToken guards /admin/ (Authorization: Bearer <token>); empty
	// disables the admin endpoints (404). The Go methods always work.
	AdminToken string
	// Currency is the ISO 4217 code of every account; "" means "EUR".
	Currency string
	// Faults are the initial fault rates (none by default).
	Faults Faults
	// Seed seeds the fault draws, for reproducible runs; 0 means random.
	Seed uint64
	// Now is the clock checking timestamps and signing answers; nil means
	// time.Now.
	Now func() time.Time
	// Logger logs each call; nil means slog.Default().
	Logger *slog.Logger
}

// Server is a running reference wallet.
type Server struct {
	cfg   Config
	books *books
	ln    net.Listener
	http  *http.Server
	log   *slog.Logger

	mu     sync.Mutex
	faults Faults
	rng    *rand.Rand
	late   map[string]chan struct{} // late debits waiting, by transaction id
	// expired are the game-launch sessions ended on this side
	// (ExpireSession): a new debit in one is refused SESSION_EXPIRED.
	expired map[string]bool

	busy     sync.Mutex
	inflight int
	idle     *sync.Cond

	stopping chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// Start opens the books, listens and serves until Stop or until ctx is
// done.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DataFile == "" {
		return nil, errors.New("refwallet: no data file")
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("refwallet: empty secret")
	}
	if cfg.NewSecret != nil && (len(cfg.NewSecret) == 0 || bytes.Equal(cfg.NewSecret, cfg.Secret)) {
		return nil, errors.New("refwallet: the new secret is empty or the same as the secret")
	}
	if err := cfg.Faults.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Currency == "" {
		cfg.Currency = "EUR"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	bk, err := openBooks(cfg.DataFile, cfg.Currency)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		bk.db.Close()
		return nil, fmt.Errorf("refwallet: %w", err)
	}
	s := &Server{
		cfg: cfg, books: bk, ln: ln, log: cfg.Logger,
		faults:   cfg.Faults,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		late:     map[string]chan struct{}{},
		expired:  map[string]bool{},
		stopping: make(chan struct{}),
	}
	s.idle = sync.NewCond(&s.busy)
	bk.sessionEnded = s.sessionExpired
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathPrefix+"/{op}", s.handleWallet)
	mux.HandleFunc("POST /admin/players", s.admin(s.handleFund))
	mux.HandleFunc("GET /admin/balances", s.admin(s.handleBalances))
	mux.HandleFunc("GET /admin/ledger", s.admin(s.handleLedger))
	mux.HandleFunc("GET /admin/faults", s.admin(s.handleGetFaults))
	mux.HandleFunc("POST /admin/faults", s.admin(s.handleSetFaults))
	mux.HandleFunc("POST /admin/sessions/{id}/expire", s.admin(s.handleExpireSession))
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln)
	context.AfterFunc(ctx, func() { s.Stop() })
	s.log.Info("reference operator wallet listening", "base_url", s.BaseURL(), "currency", cfg.Currency, "seed", seed)
	return s, nil
}

// Addr is the address the wallet listens on (host:port).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// BaseURL is the base URL to give chemmy's HTTP adapter.
func (s *Server) BaseURL() string { return "http://" + s.Addr() + PathPrefix }

// Stop stops serving: hanging and late calls give up (a late call not yet
// applied is dropped, as if the wallet crashed), then the books are
// closed. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := s.http.Shutdown(ctx)
		s.busy.Lock()
		for s.inflight > 0 {
			s.idle.Wait()
		}
		s.busy.Unlock()
		s.stopErr = errors.Join(err, s.books.db.Close())
	})
	return s.stopErr
}

// Settle waits until no wallet call is being served (hanging or late
// ones included), or ctx is done. A request its client gave up on before
// the wallet started reading it is not counted: wait on the books (e.g.
// Transactions) for a movement that must have happened.
func (s *Server) Settle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.busy.Lock()
		s.idle.Broadcast()
		s.busy.Unlock()
	})
	defer stop()
	s.busy.Lock()
	defer s.busy.Unlock()
	for s.inflight > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.idle.Wait()
	}
	return nil
}

// Fund adds deposit (minor units, may be negative as long as the balance
// stays >= 0) to a player's balance, creating the player, and returns the
// new balance.
func (s *Server) Fund(playerID string, deposit int64) (int64, error) {
	acc, err := s.books.fund(playerID, deposit, false)
	return acc.Balance, err
}

// SetBalance sets a player's balance (minor units, >= 0), creating the
// player; the difference counts as funding.
func (s *Server) SetBalance(playerID string, balance int64) error {
	_, err := s.books.fund(playerID, balance, true)
	return err
}

// Balances returns every player's balance and funding, by player id.
func (s *Server) Balances() ([]PlayerBalance, error) { return s.books.balances() }

// Transactions returns every transaction the wallet recorded, in order.
func (s *Server) Transactions() ([]Record, error) {
	return s.books.records(func(Record) bool { return true })
}

// Ledger returns the transactions of one UTC day (see Record.Day) and
// their totals per kind.
func (s *Server) Ledger(day time.Time) (Ledger, error) {
	return s.books.ledger(day.UTC().Format(time.DateOnly))
}

// CheckBooks verifies the wallet's own books: every balance equals its
// funding plus the applied movements, no debit is refunded twice, no
// debit was applied after its tombstone. It returns every discrepancy.
func (s *Server) CheckBooks() error { return s.books.checkBooks() }

// Faults returns the current fault rates.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// SetFaults replaces the fault rates, for the next calls.
func (s *Server) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
	return nil
}

func (s *Server) draw(op string) (fault, Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults.pick(s.rng.Float64(), s.rng.IntN(2) == 0)
	if op == opwallet.OpBalance && f != faultTimeoutDropped && f != faultErrorBefore {
		f = faultNone // a balance moves nothing: only its failures matter
	}
	return f, s.faults
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,128}$`)

// validate checks a transaction of kind; it returns what is wrong or "".
func validate(kind string, t opwallet.Transaction) string {
	switch {
	case !idPattern.MatchString(t.TransactionID):
		return "transaction_id must be 1 to 128 of [A-Za-z0-9._:/-]"
	case t.PlayerID == "" || len(t.PlayerID) > 128:
		return "player_id must be 1 to 128 bytes"
	case t.Currency == "":
		return "currency missing"
	case len(t.RoundID) > 128 || len(t.TableID) > 128 || len(t.Reason) > 64:
		return "round_id, table_id or reason too long"
	}
	switch kind {
	case opwallet.OpDebit, opwallet.OpCredit:
		if t.Amount <= 0 {
			return "amount must be > 0"
		}
		if t.RoundID == "" {
			return "round_id missing"
		}
	case opwallet.OpRollback:
		if t.Amount < 0 {
			return "amount must be >= 0"
		}
		if !idPattern.MatchString(t.RolledBackID) || t.RolledBackID == t.TransactionID {
			return "rolled_back_transaction_id must name another transaction"
		}
	case opwallet.OpRoundEnd:
		if t.Amount != 0 {
			return "a round_end has no amount"
		}
		if t.RoundID == "" {
			return "round_id missing"
		}
		if t.Status != opwallet.RoundCompleted && t.Status != opwallet.RoundCancelled {
			return "status must be completed or cancelled"
		}
	}
	return ""
}

func (s *Server) enter() {
	s.busy.Lock()
	s.inflight++
	s.busy.Unlock()
}

func (s *Server) leave() {
	s.busy.Lock()
	s.inflight--
	if s.inflight == 0 {
		s.idle.Broadcast()
	}
	s.busy.Unlock()
}

// reply writes an answer over the request's path, signed with secret.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, secret []byte, a answer) {
	ts := s.cfg.Now().Unix()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(opwallet.HeaderTimestamp, strconv.FormatInt(ts, 10))
	w.Header().Set(opwallet.HeaderSignature, opwallet.Sign(secret, ts, r.URL.Path, a.body))
	w.WriteHeader(a.status)
	w.Write(a.body)
}

// withTransaction adds transaction id txID to a refusal's body (4xx).
func withTransaction(a answer, txID string) answer {
	if txID == "" || a.status < 400 || a.status >= 500 {
		return a
	}
	var ref opwallet.Refusal
	if json.Unmarshal(a.body, &ref) != nil {
		return a
	}
	ref.TransactionID = txID
	b, err := json.Marshal(ref)
	if err != nil {
		return a
	}
	return answer{status: a.status, body: b, fresh: a.fresh}
}

func internal(msg string) answer {
	b, _ := json.Marshal(opwallet.Refusal{Code: "INTERNAL", Message: msg})
	return answer{status: http.StatusInternalServerError, body: b}
}

// verify checks a wallet call's signature and timestamp with Secret, then
// NewSecret; it returns the secret that verified it, to sign the answer.
// On an error it returns the secret to sign the refusal with: the one
// whose signature matches when only the timestamp is refused (so that
// chemmy, on either secret, can tell a clock skew from a wrong secret),
// else Secret.
func (s *Server) verify(r *http.Request, body []byte) ([]byte, error) {
	now, ts, sig := s.cfg.Now(), r.Header.Get(opwallet.HeaderTimestamp), r.Header.Get(opwallet.HeaderSignature)
	err := opwallet.Verify(s.cfg.Secret, now, ts, sig, r.URL.Path, body)
	if err == nil {
		return s.cfg.Secret, nil
	}
	if s.cfg.NewSecret == nil {
		return s.cfg.Secret, err
	}
	if opwallet.Verify(s.cfg.NewSecret, now, ts, sig, r.URL.Path, body) == nil {
		return s.cfg.NewSecret, nil
	}
	if t, perr := strconv.ParseInt(strings.TrimSpace(ts), 10, 64); perr == nil &&
		subtle.ConstantTimeCompare([]byte(opwallet.Sign(s.cfg.NewSecret, t, r.URL.Path, body)), []byte(strings.TrimSpace(sig))) == 1 {
		return s.cfg.NewSecret, err
	}
	return s.cfg.Secret, err
}

func (s *Server) handleWallet(w http.ResponseWriter, r *http.Request) {
	s.enter()
	defer s.leave()
	op := r.PathValue("op")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		s.reply(w, r, s.cfg.Secret, refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest, "body: %v", err))
		return
	}
	secret, err := s.verify(r, body)
	if err != nil {
		s.log.Warn("wallet call refused", "op", op, "err", err)
		s.reply(w, r, secret, refusal(http.StatusUnauthorized, opwallet.CodeInvalidSignature, "%v", err))
		return
	}
	// A refusal of a signed transaction names it (transaction_id), so that
	// it cannot be replayed as the answer to another.
	var txID string
	send := func(a answer) { s.reply(w, r, secret, withTransaction(a, txID)) }
	var do func() (answer, error)
	var debitID string
	switch op {
	case opwallet.OpBalance:
		var req opwallet.BalanceRequest
		if err := json.Unmarshal(body, &req); err != nil || req.PlayerID == "" {
			send(refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest, "a balance needs a player_id"))
			return
		}
		do = func() (answer, error) { return s.books.balance(req) }
	case opwallet.OpDebit, opwallet.OpCredit, opwallet.OpRollback, opwallet.OpRoundEnd:
		var t opwallet.Transaction
		if err := json.Unmarshal(body, &t); err != nil {
			send(refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest, "body: %v", err))
			return
		}
		txID = t.TransactionID
		if msg := validate(op, t); msg != "" {
			send(refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest, "%s", msg))
			return
		}
		do = func() (answer, error) {
			a, err := s.books.apply(op, t, s.cfg.Now())
			if err == nil && op == opwallet.OpRollback {
				s.wakeLate(t.RolledBackID)
			}
			return a, err
		}
		if op == opwallet.OpDebit {
			debitID = t.TransactionID
		}
	default:
		send(refusal(http.StatusNotFound, opwallet.CodeInvalidRequest, "no operation %q", op))
		return
	}
	f, rates := s.draw(op)
	if f != faultNone {
		s.log.Info("fault injected", "op", op, "fault", f.String())
	}
	var a answer
	switch f {
	case faultErrorBefore:
		send(internal("injected fault: error before applying"))
		return
	case faultTimeoutDropped:
		s.hang(r.Context(), rates.hang())
		send(internal("injected fault: timed out, not applied"))
		return
	case faultLate:
		wake := s.registerLate(debitID)
		defer s.unregisterLate(debitID, wake)
		s.hang(r.Context(), rates.hang())
		if s.books.tombstoned(debitID) {
			wake = nil // rolled back before this call even started
		}
		if wake != nil && !s.waitLate(wake, rates.lateDelay()) {
			send(internal("stopped: not applied"))
			return
		}
	}
	if a, err = do(); err != nil {
		s.log.Error("wallet call failed", "op", op, "err", err)
		send(internal(err.Error()))
		return
	}
	switch f {
	case faultTimeoutApplied:
		s.hang(r.Context(), rates.hang())
	case faultErrorAfter:
		a = internal("injected fault: error after applying")
	case faultDuplicate:
		if a.fresh && a.status == http.StatusOK {
			a = markDuplicate(a)
		}
	}
	send(a)
}

func markDuplicate(a answer) answer {
	var res opwallet.Result
	if json.Unmarshal(a.body, &res) != nil {
		return a
	}
	res.Duplicate = true
	return ok(res)
}

// hang waits until the client gives up, max elapses or the server stops.
func (s *Server) hang(ctx context.Context, max time.Duration) {
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-s.stopping:
	}
}

// registerLate registers a late debit (nil for another operation) so a
// rollback of it recorded while it waits wakes it.
func (s *Server) registerLate(debitID string) chan struct{} {
	if debitID == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.late[debitID]; ok {
		return nil // the same debit is already waiting late
	}
	ch := make(chan struct{})
	s.late[debitID] = ch
	return ch
}

func (s *Server) unregisterLate(debitID string, ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch != nil && s.late[debitID] == ch {
		delete(s.late, debitID)
	}
}

// wakeLate wakes a late debit a rollback was just recorded for.
func (s *Server) wakeLate(debitID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.late[debitID]; ok {
		close(ch)
		delete(s.late, debitID)
	}
}

// waitLate waits delay, or until wake is closed (a rollback of the late
// debit was recorded); it returns false when the server stops first.
func (s *Server) waitLate(wake chan struct{}, delay time.Duration) bool {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-wake:
	case <-s.stopping:
		return false
	}
	return true
}

// Admin endpoints.

func (s *Server) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken == "" {
			http.NotFound(w, r)
			return
		}
		got, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !found || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="opwallet admin"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "admin token required"})
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, "{\"error\":%q}\n", err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// FundRequest is the body of POST /admin/players: set Balance or add
// Deposit (minor units), exactly one of them.
type FundRequest struct {
	PlayerID string `json:"player_id"`
	Balance  *int64 `json:"balance,omitempty"`
	Deposit  *int64 `json:"deposit,omitempty"`
}

func (s *Server) handleFund(w http.ResponseWriter, r *http.Request) {
	var req FundRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes)).Decode(&req); err != nil {
		badRequest(w, "body: %v", err)
		return
	}
	if req.PlayerID == "" || len(req.PlayerID) > 128 || (req.Balance == nil) == (req.Deposit == nil) {
		badRequest(w, "want a player_id and one of balance or deposit")
		return
	}
	var acc account
	var err error
	if req.Balance != nil {
		acc, err = s.books.fund(req.PlayerID, *req.Balance, true)
	} else {
		acc, err = s.books.fund(req.PlayerID, *req.Deposit, false)
	}
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, PlayerBalance{PlayerID: req.PlayerID, Balance: acc.Balance, Funded: acc.Funded})
}

func (s *Server) handleBalances(w http.ResponseWriter, r *http.Request) {
	bals, err := s.Balances()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	if bals == nil {
		bals = []PlayerBalance{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"currency": s.cfg.Currency, "players": bals})
}

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	day, err := time.Parse(time.DateOnly, r.URL.Query().Get("day"))
	if err != nil {
		badRequest(w, "day must be YYYY-MM-DD")
		return
	}
	l, err := s.Ledger(day)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, l)
}

func (s *Server) handleGetFaults(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Faults())
}

func (s *Server) handleSetFaults(w http.ResponseWriter, r *http.Request) {
	var f Faults
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		badRequest(w, "body: %v", err)
		return
	}
	if err := s.SetFaults(f); err != nil {
		badRequest(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, f)
}

// ExpireSession ends a game-launch session on the operator's side: every
// later debit that names it (session_id) is refused SESSION_EXPIRED (and
// recorded refused, as other refusals are); credits, rollbacks and
// round_ends are not. Not persisted (a test's and a demo's switch).
func (s *Server) ExpireSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expired[id] = true
}

func (s *Server) sessionExpired(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expired[id]
}

// handleExpireSession is POST /admin/sessions/{id}/expire.
func (s *Server) handleExpireSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" {
		badRequest(w, "no session id")
		return
	}
	s.ExpireSession(id)
	writeJSON(w, http.StatusOK, map[string]string{"session_id": id, "state": "expired"})
}
