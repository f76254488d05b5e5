// Package conformance is the conformance kit of an operator's wallet
// (seamless wallet mode, docs/operator-wallet.md): it makes, against a
// running wallet, every call chemmy makes and provokes every failure chemmy
// handles, and judges each answer as chemmy would, through the same HTTP
// adapter (package opwallet). `chemmy wallet-conformance` runs it.
//
// It needs one test player on the operator's side (Config.Player): an
// account in Config.Currency with a balance of at least 2 × Config.Amount,
// that nothing else uses during the run. The kit reads its balance with
// balance calls, moves small amounts (Config.Amount) in rounds of its own
// and gives every amount back (credits, rollbacks), so the player's
// balance ends as it started; when a wrong wallet moved money it should
// not have, the kit gives the difference back with a credit (or takes it
// with a debit) in a round of its own, and says so.
//
// Every id the kit sends starts with "cc-<run id>-", a run id new to each
// run, so runs never collide on a wallet that keeps its transactions.
package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// Defaults of Config.
const (
	DefaultAmount  = 100
	DefaultTableID = "chemmy-conformance"
)

// Config configures Run.
type Config struct {
	// BaseURL is the wallet's base URL, as given to chemmy
	// (wallet-svc -operator-url): https, or http on loopback or with
	// AllowInsecureHTTP.
	BaseURL           string
	AllowInsecureHTTP bool
	// TLSConfig is the TLS configuration of the calls (e.g. a private
	// CA); nil means the system roots.
	TLSConfig *tls.Config
	// Secret is the HMAC secret chemmy signs with. Required.
	Secret []byte
	// NewSecret is, during a secret rotation, the secret being rotated
	// in: the check secret-rotation then calls with it too. Nil skips
	// that check.
	NewSecret []byte
	// Player is the test player: an account in Currency with a balance of
	// at least 2 × Amount, used by nothing else during the run. Required.
	Player string
	// Currency is the test player's currency (ISO 4217). Required.
	Currency string
	// OtherCurrency is a currency the test player's wallet is not in;
	// "" means USD, or EUR when Currency is USD.
	OtherCurrency string
	// UnknownPlayer is a player id the wallet does not know; "" means
	// "cc-<run id>-nobody".
	UnknownPlayer string
	// Amount is the amount moved by each debit and credit, minor units;
	// 0 means DefaultAmount.
	Amount int64
	// TableID is the table id of the transactions; "" means
	// DefaultTableID.
	TableID string
	// Timeout bounds each call, as chemmy's does; 0 means
	// opwallet.DefaultTimeout.
	Timeout time.Duration
	// RunID prefixes every id the kit sends ("cc-<RunID>-"); "" means a
	// random one. At most 32 of [A-Za-z0-9].
	RunID string
	// Now is the clock of the signatures and of the transactions' time;
	// nil means time.Now.
	Now func() time.Time
	// Session is a game-launch session (session_id) of the test player
	// that the wallet takes as live: the check session sends it on every
	// kind of call, as chemmy does for a player who plays through one. ""
	// means "cc-<run id>-session", a session the wallet never saw, which
	// a wallet that ignores sessions (the protocol allows it) accepts; a
	// wallet that checks them needs a live one here.
	Session string
	// ExpiredSession is a game-launch session of the test player that the
	// wallet holds as ended (expired, revoked, logged out): the check
	// session-expired sends a debit in it, which must be refused
	// SESSION_EXPIRED, and a credit and round ends in it, which must not
	// be. "" skips that check.
	ExpiredSession string
}

// Check is one check of the kit.
type Check struct {
	Name string
	// Doc says what is checked, in one line.
	Doc string
}

// Checks are the kit's checks, in the order Run reports them.
var Checks = []Check{
	{"balance", "a balance call for the test player is answered 200 in its currency, with at least 2 x the amount"},
	{"balance-unknown-player", "a balance call for an unknown player is refused UNKNOWN_PLAYER (signed)"},
	{"balance-currency-mismatch", "a balance call in another currency is refused CURRENCY_MISMATCH"},
	{"debit", "a debit (bet) is applied once: 200 echoing the transaction id, the balance lower by its amount"},
	{"debit-replay", "the same debit sent again is answered 200 duplicate: true, with the first operator id, and moves nothing"},
	{"debit-id-reused", "the debit's id with another amount is refused TRANSACTION_ID_REUSED and moves nothing"},
	{"credit", "a credit (payout) of the round is applied once"},
	{"credit-replay", "the same credit sent again is answered 200 duplicate: true and moves nothing"},
	{"round-end-completed", "a round_end completed is answered 200 and moves nothing; sent again, 200 duplicate: true"},
	{"reasons", "debits and credits of every reason chemmy sends (bet, bank, fee; payout, bank_return, refund) are applied"},
	{"rollback", "a rollback of an applied debit refunds it"},
	{"rollback-replay", "the same rollback again is a 200 duplicate, and another rollback (amount 0) of the same debit moves nothing"},
	{"debit-after-rollback", "the rolled back debit sent again is refused TRANSACTION_ROLLED_BACK and not applied"},
	{"round-end-cancelled", "a round_end cancelled of the round whose stake was rolled back is answered 200"},
	{"rollback-unseen-debit", "a rollback of a debit the wallet never saw is answered 200 and moves nothing (a tombstone)"},
	{"late-debit-after-rollback", "that debit arriving after its rollback is refused TRANSACTION_ROLLED_BACK and not applied"},
	{"insufficient-funds", "a debit above the balance is refused INSUFFICIENT_FUNDS and moves nothing"},
	{"round-end-no-stake", "round_end cancelled of rounds in which nothing stood (the debit refused, or rolled back unseen) is answered 200, not refused"},
	{"unknown-player", "a debit for an unknown player is refused UNKNOWN_PLAYER, naming the transaction"},
	{"currency-mismatch", "a debit in another currency is refused CURRENCY_MISMATCH and moves nothing"},
	{"session", "a debit, its replay, a credit, a rollback and a round_end carrying the player's game-launch session (session_id) are answered as without it"},
	{"session-expired", "with -expired-session: a debit in the ended session is refused SESSION_EXPIRED (chemmy refuses the bet), moving nothing; a credit and round_ends in it are applied"},
	{"signature-wrong-secret", "a debit signed with another secret is refused 401 INVALID_SIGNATURE (signed with a secret the kit has) and moves nothing"},
	{"signature-stale-timestamp", "a debit signed with a timestamp 10 minutes old is refused 401 INVALID_SIGNATURE (signed with the secret) and moves nothing"},
	{"secret-rotation", "during a rotation (-new-secret-file), calls signed with the new secret are accepted and answered signed with it, and the old secret still works"},
}

// Outcome of a check.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP"
)

// Result is the outcome of one check.
type Result struct {
	Name    string
	Outcome string // Pass, Fail or Skip
	Detail  string
}

// Report is what Run found.
type Report struct {
	Results               []Result
	Passed, Failed, Skips int
	// Notes are what the kit did besides its checks (money it gave back).
	Notes []string
	// StartBalance and EndBalance are the test player's balance before
	// and after the run (-1 when unknown).
	StartBalance, EndBalance int64
}

// OK reports whether no check failed.
func (r Report) OK() bool { return r.Failed == 0 }

// Run runs every check against cfg.BaseURL, calling line (when not nil)
// with each result and note as it comes. It fails only on a bad Config;
// failed checks are in the report.
func Run(ctx context.Context, cfg Config, line func(string)) (Report, error) {
	k, err := newKit(cfg, line)
	if err != nil {
		return Report{}, err
	}
	k.run(ctx)
	return k.rep, nil
}

// FormatResult is a result's line: "PASS  name: detail".
func FormatResult(r Result) string { return fmt.Sprintf("%s  %s: %s", r.Outcome, r.Name, r.Detail) }

type kit struct {
	cfg    Config
	op     *opwallet.HTTP // chemmy's adapter, signing with cfg.Secret
	client *http.Client
	base   *url.URL
	line   func(string)
	rep    Report
	done   map[string]bool
	// expect is the test player's balance as it should be.
	expect   int64
	restores int
}

func newKit(cfg Config, line func(string)) (*kit, error) {
	if cfg.Player == "" || cfg.Currency == "" {
		return nil, errors.New("conformance: a test player and its currency are required")
	}
	if cfg.Amount == 0 {
		cfg.Amount = DefaultAmount
	}
	if cfg.Amount < 0 {
		return nil, errors.New("conformance: the amount must be > 0")
	}
	if cfg.OtherCurrency == "" {
		cfg.OtherCurrency = "USD"
		if strings.EqualFold(cfg.Currency, "USD") {
			cfg.OtherCurrency = "EUR"
		}
	}
	if strings.EqualFold(cfg.OtherCurrency, cfg.Currency) {
		return nil, errors.New("conformance: the other currency is the player's")
	}
	if cfg.TableID == "" {
		cfg.TableID = DefaultTableID
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = opwallet.DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RunID == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		cfg.RunID = hex.EncodeToString(b[:])
	}
	if len(cfg.RunID) > 32 || strings.Trim(cfg.RunID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		return nil, fmt.Errorf("conformance: run id %q is not 1 to 32 of [A-Za-z0-9]", cfg.RunID)
	}
	if cfg.UnknownPlayer == "" {
		cfg.UnknownPlayer = "cc-" + cfg.RunID + "-nobody"
	}
	if cfg.UnknownPlayer == cfg.Player {
		return nil, errors.New("conformance: the unknown player is the test player")
	}
	if cfg.Session == "" {
		cfg.Session = "cc-" + cfg.RunID + "-session"
	}
	if cfg.ExpiredSession == cfg.Session {
		return nil, errors.New("conformance: the expired session is the live session")
	}
	for _, id := range []string{cfg.Session, cfg.ExpiredSession} {
		if len(id) > 128 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
			return nil, fmt.Errorf("conformance: session %q is not 1 to 128 printable ASCII characters", id)
		}
	}
	if cfg.NewSecret != nil && (len(cfg.NewSecret) == 0 || bytes.Equal(cfg.NewSecret, cfg.Secret)) {
		return nil, errors.New("conformance: the new secret is empty or the same as the secret")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLSConfig
	client := &http.Client{Transport: tr, Timeout: cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	op, err := opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: cfg.BaseURL, AllowInsecureHTTP: cfg.AllowInsecureHTTP,
		Secret: cfg.Secret, Timeout: cfg.Timeout, Client: client, Now: cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	base, _ := url.Parse(cfg.BaseURL) // parsed by NewHTTP already
	return &kit{cfg: cfg, op: op, client: client, base: base, line: line,
		done: map[string]bool{}, rep: Report{StartBalance: -1, EndBalance: -1}}, nil
}

func (k *kit) emit(s string) {
	if k.line != nil {
		k.line(s)
	}
}

func (k *kit) report(name, outcome, format string, args ...any) {
	if k.done[name] {
		return
	}
	k.done[name] = true
	r := Result{Name: name, Outcome: outcome, Detail: fmt.Sprintf(format, args...)}
	k.rep.Results = append(k.rep.Results, r)
	switch outcome {
	case Pass:
		k.rep.Passed++
	case Fail:
		k.rep.Failed++
	default:
		k.rep.Skips++
	}
	k.emit(FormatResult(r))
}

// judge reports name as passed with ok when no problem was found, else as
// failed with the problems.
func (k *kit) judge(name string, problems []string, ok string) {
	if len(problems) == 0 {
		k.report(name, Pass, "%s", ok)
		return
	}
	k.report(name, Fail, "%s", strings.Join(problems, "; "))
}

func (k *kit) skip(reason string, names ...string) {
	for _, n := range names {
		k.report(n, Skip, "%s", reason)
	}
}

func (k *kit) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	k.rep.Notes = append(k.rep.Notes, s)
	k.emit("note: " + s)
}

func (k *kit) id(suffix string) string { return "cc-" + k.cfg.RunID + "-" + suffix }

// tx is a transaction of the test player in round (a suffix).
func (k *kit) tx(id, round string, amount int64, reason string) opwallet.Transaction {
	return opwallet.Transaction{TransactionID: k.id(id), PlayerID: k.cfg.Player, RoundID: k.id(round), TableID: k.cfg.TableID,
		Amount: amount, Currency: k.cfg.Currency, Reason: reason, Time: k.cfg.Now().UTC()}
}

func (k *kit) rollbackOf(id string, debit opwallet.Transaction, amount int64) opwallet.Transaction {
	t := k.tx(id, "", amount, "")
	t.RoundID, t.RolledBackID = debit.RoundID, debit.TransactionID
	return t
}

func (k *kit) roundEnd(id, round, status string) opwallet.Transaction {
	t := k.tx(id, round, 0, "")
	t.Status = status
	return t
}

// again is tx as a retry sends it: the same, at a later time.
func again(tx opwallet.Transaction) opwallet.Transaction {
	tx.Time = tx.Time.Add(time.Second)
	return tx
}

// describe says what an error of the adapter was, as chemmy takes it.
func describe(err error) string {
	if ref, ok := opwallet.IsRefusal(err); ok {
		return fmt.Sprintf("refused %d %s (%s)", ref.Status, ref.Code, ref.Message)
	}
	if errors.Is(err, opwallet.ErrUnknownOutcome) {
		return "outcome unknown to chemmy (" + strings.TrimPrefix(err.Error(), opwallet.ErrUnknownOutcome.Error()+": ") + ")"
	}
	return err.Error()
}

// wantOK adds a problem unless err is nil.
func wantOK(problems *[]string, what string, err error) bool {
	if err != nil {
		*problems = append(*problems, what+": "+describe(err))
		return false
	}
	return true
}

// wantRefusal adds a problem unless err is a definite refusal with code.
func wantRefusal(problems *[]string, what, code string, res opwallet.Result, err error) {
	ref, ok := opwallet.IsRefusal(err)
	switch {
	case err == nil:
		*problems = append(*problems, fmt.Sprintf("%s: answered 200 (balance %d), want a refusal %s", what, res.Balance, code))
	case !ok:
		*problems = append(*problems, fmt.Sprintf("%s: %s, want a definite (signed) refusal %s", what, describe(err), code))
	case ref.Code != code:
		*problems = append(*problems, fmt.Sprintf("%s: refused %d %s, want %s", what, ref.Status, ref.Code, code))
	}
}

// wantDuplicate adds a problem unless res is a duplicate of first.
func wantDuplicate(problems *[]string, what string, first, res opwallet.Result) {
	if !res.Duplicate {
		*problems = append(*problems, what+": answered without duplicate: true")
	}
	if first.OperatorTransactionID != "" && res.OperatorTransactionID != first.OperatorTransactionID {
		*problems = append(*problems, fmt.Sprintf("%s: operator_transaction_id %q, the first answer's was %q", what, res.OperatorTransactionID, first.OperatorTransactionID))
	}
}

// wantAnswer adds a problem unless an answer's balance is want and its
// currency (when given) the test player's.
func (k *kit) wantAnswer(problems *[]string, what string, res opwallet.Result, want int64) {
	if res.Balance != want {
		*problems = append(*problems, fmt.Sprintf("%s: the answer's balance is %d, want %d", what, res.Balance, want))
	}
	if res.Currency != "" && res.Currency != k.cfg.Currency {
		*problems = append(*problems, fmt.Sprintf("%s: the answer's currency is %q, want %q", what, res.Currency, k.cfg.Currency))
	}
}

// balance reads the test player's balance.
func (k *kit) balance(ctx context.Context) (int64, error) {
	res, err := k.op.Balance(ctx, opwallet.BalanceRequest{PlayerID: k.cfg.Player, Currency: k.cfg.Currency})
	return res.Balance, err
}

// settled adds a problem unless the balance is k.expect, which it then
// takes as found (so that the next check is judged on its own moves).
func (k *kit) settled(ctx context.Context, problems *[]string, after string) {
	got, err := k.balance(ctx)
	if err != nil {
		*problems = append(*problems, "the balance after "+after+": "+describe(err))
		return
	}
	if got != k.expect {
		*problems = append(*problems, fmt.Sprintf("the balance after %s is %d, want %d (moved %+d)", after, got, k.expect, got-k.expect))
		k.expect = got
	}
}

// restore brings the test player's balance back to want, in a round of
// its own, when a wrong answer left it elsewhere.
func (k *kit) restore(ctx context.Context, want int64, after string) {
	got, err := k.balance(ctx)
	if err != nil {
		k.note("could not read the balance after %s to give back what moved: %s", after, describe(err))
		return
	}
	k.expect = got
	if got == want {
		return
	}
	k.restores++
	n := strconv.Itoa(k.restores)
	round := "restore-" + n
	var t opwallet.Transaction
	if got < want {
		t = k.tx("restore-"+n+"-cr", round, want-got, "refund")
		_, err = k.op.Credit(ctx, t)
	} else {
		t = k.tx("restore-"+n+"-db", round, got-want, "fee")
		_, err = k.op.Debit(ctx, t)
	}
	if err != nil {
		k.note("the balance is %d after %s, not %d; giving it back failed: %s", got, after, want, describe(err))
		return
	}
	_, _ = k.op.RoundEnd(ctx, k.roundEnd("restore-"+n+"-re", round, opwallet.RoundCompleted))
	k.expect = want
	k.note("the balance was %d after %s, not %d: the kit moved it back (%s %s)", got, after, want,
		map[bool]string{true: "credit", false: "debit"}[got < want], t.TransactionID)
}

func (k *kit) run(ctx context.Context) {
	k.checkBalances(ctx)
	var money []string // the checks after the three balance calls move money
	for _, c := range Checks[3:] {
		money = append(money, c.Name)
	}
	if k.rep.StartBalance < 0 {
		k.skip("needs a passing balance check", money...)
	} else {
		k.expect = k.rep.StartBalance
		for _, step := range []struct {
			run   func(context.Context)
			after string
		}{
			{k.roundCompleted, "the debit and credit checks"},
			{k.reasons, "the reasons check"},
			{k.rollback, "the rollback checks"},
			{k.unseen, "the unseen debit checks"},
			{k.refusals, "the refusal checks"},
			{k.sessions, "the session checks"},
			{k.signatures, "the signature checks"},
			{k.rotation, "the rotation check"},
		} {
			if ctx.Err() != nil {
				break
			}
			step.run(ctx)
			k.restore(ctx, k.rep.StartBalance, step.after)
		}
		if end, err := k.balance(ctx); err == nil {
			k.rep.EndBalance = end
		}
	}
	for _, c := range Checks {
		if !k.done[c.Name] {
			why := "not run (a bug of the kit)"
			if ctx.Err() != nil {
				why = "not run: interrupted"
			}
			k.report(c.Name, Fail, "%s", why)
		}
	}
}

func (k *kit) checkBalances(ctx context.Context) {
	var problems []string
	res, err := k.op.Balance(ctx, opwallet.BalanceRequest{PlayerID: k.cfg.Player, Currency: k.cfg.Currency})
	if wantOK(&problems, "balance of "+k.cfg.Player, err) {
		if res.Currency != "" && res.Currency != k.cfg.Currency {
			problems = append(problems, fmt.Sprintf("answered in %q, asked %q", res.Currency, k.cfg.Currency))
		}
		if res.Balance < 2*k.cfg.Amount {
			problems = append(problems, fmt.Sprintf("the test player's balance is %d: fund it with at least %d (2 x the amount)", res.Balance, 2*k.cfg.Amount))
		}
		if len(problems) == 0 {
			k.rep.StartBalance = res.Balance
		}
	}
	k.judge("balance", problems, fmt.Sprintf("%s has %d %s", k.cfg.Player, res.Balance, k.cfg.Currency))

	problems = nil
	res, err = k.op.Balance(ctx, opwallet.BalanceRequest{PlayerID: k.cfg.UnknownPlayer, Currency: k.cfg.Currency})
	wantRefusal(&problems, "balance of "+k.cfg.UnknownPlayer, opwallet.CodeUnknownPlayer, res, err)
	k.judge("balance-unknown-player", problems, "refused UNKNOWN_PLAYER")

	problems = nil
	res, err = k.op.Balance(ctx, opwallet.BalanceRequest{PlayerID: k.cfg.Player, Currency: k.cfg.OtherCurrency})
	wantRefusal(&problems, "balance in "+k.cfg.OtherCurrency, opwallet.CodeCurrencyMismatch, res, err)
	k.judge("balance-currency-mismatch", problems, "refused CURRENCY_MISMATCH")
}

// roundCompleted: a round's debit, its replays, its credit and its end.
func (k *kit) roundCompleted(ctx context.Context) {
	a := k.cfg.Amount
	d := k.tx("r1-db", "r1", a, "bet")
	var problems []string
	first, err := k.op.Debit(ctx, d)
	if !wantOK(&problems, "debit "+d.TransactionID, err) {
		k.settled(ctx, &problems, "the refused debit")
		k.judge("debit", problems, "")
		k.skip("needs a passing debit", "debit-replay", "debit-id-reused", "credit", "credit-replay", "round-end-completed")
		return
	}
	k.expect -= a
	k.wantAnswer(&problems, "debit", first, k.expect)
	k.settled(ctx, &problems, "the debit")
	k.judge("debit", problems, fmt.Sprintf("%s applied, balance %d", d.TransactionID, k.expect))

	problems = nil
	res, err := k.op.Debit(ctx, again(d))
	if wantOK(&problems, "the same debit again", err) {
		wantDuplicate(&problems, "the same debit again", first, res)
	}
	k.settled(ctx, &problems, "the replayed debit")
	k.judge("debit-replay", problems, "answered duplicate, moved once")

	problems = nil
	other := again(d)
	other.Amount = a + 1
	res, err = k.op.Debit(ctx, other)
	wantRefusal(&problems, "the debit's id with amount "+strconv.FormatInt(a+1, 10), opwallet.CodeTransactionIDReused, res, err)
	k.settled(ctx, &problems, "the reused id")
	k.judge("debit-id-reused", problems, "refused TRANSACTION_ID_REUSED, nothing moved")

	problems = nil
	c := k.tx("r1-cr", "r1", a, "payout")
	firstCredit, err := k.op.Credit(ctx, c)
	if wantOK(&problems, "credit "+c.TransactionID, err) {
		k.expect += a
		k.wantAnswer(&problems, "credit", firstCredit, k.expect)
	}
	k.settled(ctx, &problems, "the credit")
	k.judge("credit", problems, fmt.Sprintf("%s applied, balance %d", c.TransactionID, k.expect))

	problems = nil
	if err != nil {
		k.skip("needs a passing credit", "credit-replay")
	} else {
		res, err = k.op.Credit(ctx, again(c))
		if wantOK(&problems, "the same credit again", err) {
			wantDuplicate(&problems, "the same credit again", firstCredit, res)
		}
		k.settled(ctx, &problems, "the replayed credit")
		k.judge("credit-replay", problems, "answered duplicate, paid once")
	}

	problems = nil
	e := k.roundEnd("r1-re", "r1", opwallet.RoundCompleted)
	firstEnd, err := k.op.RoundEnd(ctx, e)
	if wantOK(&problems, "round_end "+e.TransactionID, err) {
		k.wantAnswer(&problems, "round_end", firstEnd, k.expect)
		res, err = k.op.RoundEnd(ctx, again(e))
		if wantOK(&problems, "the same round_end again", err) {
			wantDuplicate(&problems, "the same round_end again", firstEnd, res)
		}
	}
	k.settled(ctx, &problems, "the round end")
	k.judge("round-end-completed", problems, "answered 200, then duplicate")
}

// reasons: a bank put up and coming back, a fee and its refund.
func (k *kit) reasons(ctx context.Context) {
	a := k.cfg.Amount
	var problems []string
	steps := []struct {
		credit bool
		id     string
		amount int64
		reason string
	}{
		{false, "r2-db-bank", a, "bank"},
		{true, "r2-cr-bank", a, "bank_return"},
		{false, "r2-db-fee", 1, "fee"},
		{true, "r2-cr-refund", 1, "refund"},
	}
	for _, s := range steps {
		t := k.tx(s.id, "r2", s.amount, s.reason)
		var err error
		if s.credit {
			_, err = k.op.Credit(ctx, t)
		} else {
			_, err = k.op.Debit(ctx, t)
		}
		what := map[bool]string{true: "credit", false: "debit"}[s.credit] + " " + s.reason
		if !wantOK(&problems, what, err) {
			break
		}
		if s.credit {
			k.expect += s.amount
		} else {
			k.expect -= s.amount
		}
	}
	if len(problems) == 0 {
		_, err := k.op.RoundEnd(ctx, k.roundEnd("r2-re", "r2", opwallet.RoundCompleted))
		wantOK(&problems, "round_end", err)
	}
	k.settled(ctx, &problems, "the debits and credits")
	k.judge("reasons", problems, "bank, bank_return, fee and refund applied")
}

// rollback: a debit rolled back, the rollback replayed, the debit
// replayed, the round cancelled.
func (k *kit) rollback(ctx context.Context) {
	a := k.cfg.Amount
	d := k.tx("r3-db", "r3", a, "bet")
	var problems []string
	_, err := k.op.Debit(ctx, d)
	if !wantOK(&problems, "the debit to roll back", err) {
		k.settled(ctx, &problems, "the debit")
		k.judge("rollback", problems, "")
		k.skip("needs a debit to roll back", "rollback-replay", "debit-after-rollback", "round-end-cancelled")
		return
	}
	k.expect -= a
	rb := k.rollbackOf("r3-rb", d, a)
	first, err := k.op.Rollback(ctx, rb)
	if wantOK(&problems, "rollback "+rb.TransactionID, err) {
		k.expect += a
		k.wantAnswer(&problems, "rollback", first, k.expect)
	}
	k.settled(ctx, &problems, "the rollback")
	k.judge("rollback", problems, "the debit refunded")
	if err != nil {
		k.skip("needs a passing rollback", "rollback-replay", "debit-after-rollback")
		k.cancelRound(ctx)
		return
	}

	problems = nil
	res, err := k.op.Rollback(ctx, again(rb))
	if wantOK(&problems, "the same rollback again", err) {
		wantDuplicate(&problems, "the same rollback again", first, res)
	}
	_, err = k.op.Rollback(ctx, k.rollbackOf("r3-rb2", d, 0))
	wantOK(&problems, "another rollback (amount 0) of the same debit", err)
	k.settled(ctx, &problems, "the rollbacks")
	k.judge("rollback-replay", problems, "refunded once")

	problems = nil
	res, err = k.op.Debit(ctx, again(d))
	wantRefusal(&problems, "the rolled back debit again", opwallet.CodeTransactionRolledBack, res, err)
	k.settled(ctx, &problems, "the rolled back debit sent again")
	k.judge("debit-after-rollback", problems, "refused TRANSACTION_ROLLED_BACK, not applied")

	k.cancelRound(ctx)
}

// cancelRound ends the rollback checks' round, cancelled.
func (k *kit) cancelRound(ctx context.Context) {
	var problems []string
	_, err := k.op.RoundEnd(ctx, k.roundEnd("r3-re", "r3", opwallet.RoundCancelled))
	wantOK(&problems, "round_end cancelled", err)
	k.settled(ctx, &problems, "the round end")
	k.judge("round-end-cancelled", problems, "answered 200")
}

// unseen: the rollback of a debit still on its way, then the debit.
func (k *kit) unseen(ctx context.Context) {
	a := k.cfg.Amount
	d := k.tx("r4-db", "r4", a, "bet")
	var problems []string
	_, err := k.op.Rollback(ctx, k.rollbackOf("r4-rb", d, a))
	wantOK(&problems, "rollback of "+d.TransactionID+" (never sent)", err)
	k.settled(ctx, &problems, "the rollback")
	k.judge("rollback-unseen-debit", problems, "answered 200, nothing moved")

	problems = nil
	res, err := k.op.Debit(ctx, d)
	wantRefusal(&problems, "the late debit "+d.TransactionID, opwallet.CodeTransactionRolledBack, res, err)
	k.settled(ctx, &problems, "the late debit")
	k.judge("late-debit-after-rollback", problems, "refused TRANSACTION_ROLLED_BACK, not applied")
}

// refusals: insufficient funds, rounds in which nothing stood, an
// unknown player, another currency.
func (k *kit) refusals(ctx context.Context) {
	var problems []string
	d := k.tx("r5-db", "r5", k.expect+1, "bet")
	res, err := k.op.Debit(ctx, d)
	wantRefusal(&problems, fmt.Sprintf("a debit of %d (the balance + 1)", d.Amount), opwallet.CodeInsufficientFunds, res, err)
	k.settled(ctx, &problems, "the debit above the balance")
	k.judge("insufficient-funds", problems, "refused INSUFFICIENT_FUNDS, nothing moved")

	problems = nil
	for _, r := range []struct{ round, why string }{{"r5", "its debit refused"}, {"r4", "its debit rolled back unseen"}} {
		_, err := k.op.RoundEnd(ctx, k.roundEnd(r.round+"-re", r.round, opwallet.RoundCancelled))
		wantOK(&problems, "round_end cancelled of a round with "+r.why, err)
	}
	k.settled(ctx, &problems, "the round ends")
	k.judge("round-end-no-stake", problems, "both answered 200")

	problems = nil
	u := k.tx("r6-db", "r6", k.cfg.Amount, "bet")
	u.PlayerID = k.cfg.UnknownPlayer
	res, err = k.op.Debit(ctx, u)
	wantRefusal(&problems, "a debit of "+u.PlayerID, opwallet.CodeUnknownPlayer, res, err)
	k.judge("unknown-player", problems, "refused UNKNOWN_PLAYER")

	problems = nil
	m := k.tx("r7-db", "r7", k.cfg.Amount, "bet")
	m.Currency = k.cfg.OtherCurrency
	res, err = k.op.Debit(ctx, m)
	wantRefusal(&problems, "a debit in "+m.Currency, opwallet.CodeCurrencyMismatch, res, err)
	k.settled(ctx, &problems, "the debit in another currency")
	k.judge("currency-mismatch", problems, "refused CURRENCY_MISMATCH, nothing moved")
}

// inSession is t carried in game-launch session id (session_id).
func inSession(t opwallet.Transaction, id string) opwallet.Transaction {
	t.SessionID = id
	return t
}

// sessions: the calls of a player who plays through a game-launch
// session carry it (session_id); a wallet may ignore it, but must answer
// them as it answers the same calls without one. A session the wallet
// ended refuses new debits in it (SESSION_EXPIRED: chemmy refuses the
// bet with that reason, nothing staked) and never the credits, rollbacks
// and round ends of money staked in it.
func (k *kit) sessions(ctx context.Context) {
	a, live := k.cfg.Amount, k.cfg.Session
	var problems []string
	d := inSession(k.tx("r11-db", "r11", a, "bet"), live)
	first, err := k.op.Debit(ctx, d)
	if wantOK(&problems, "a debit in session "+live, err) {
		k.expect -= a
		k.wantAnswer(&problems, "the debit", first, k.expect)
		res, err := k.op.Debit(ctx, again(d))
		if wantOK(&problems, "the same debit again", err) {
			wantDuplicate(&problems, "the same debit again", first, res)
		}
		k.settled(ctx, &problems, "the debit in the session and its replay")
		res, err = k.op.Credit(ctx, inSession(k.tx("r11-cr", "r11", a, "payout"), live))
		if wantOK(&problems, "a credit in the session", err) {
			k.expect += a
			k.wantAnswer(&problems, "the credit", res, k.expect)
		}
		k.settled(ctx, &problems, "the credit in the session")
	}
	if len(problems) == 0 {
		d2 := inSession(k.tx("r11-db2", "r11", a, "bet"), live)
		if _, err := k.op.Debit(ctx, d2); wantOK(&problems, "a second debit in the session", err) {
			k.expect -= a
			res, err := k.op.Rollback(ctx, inSession(k.rollbackOf("r11-rb", d2, a), live))
			if wantOK(&problems, "its rollback in the session", err) {
				k.expect += a
				k.wantAnswer(&problems, "the rollback", res, k.expect)
			}
		}
		k.settled(ctx, &problems, "the rollback in the session")
	}
	_, err = k.op.RoundEnd(ctx, inSession(k.roundEnd("r11-re", "r11", opwallet.RoundCompleted), live))
	wantOK(&problems, "the round_end in the session", err)
	k.settled(ctx, &problems, "the round end in the session")
	if len(problems) > 0 && !strings.HasPrefix(live, "cc-"+k.cfg.RunID+"-") {
		problems = append(problems, "(is "+live+" a live session of "+k.cfg.Player+"?)")
	} else if len(problems) > 0 {
		problems = append(problems, "(a wallet may ignore session_id; one that checks it: give a live session of the test player, -session)")
	}
	k.judge("session", problems, "answered as without a session, the replay a duplicate")

	const name = "session-expired"
	ended := k.cfg.ExpiredSession
	if ended == "" {
		k.skip("no ended session given (-expired-session: a session of the test player your wallet holds as ended)", name)
		return
	}
	problems = nil
	// A bet in the ended session: refused, definitely, with the code
	// chemmy passes on to the player.
	e := inSession(k.tx("r12-db", "r12", a, "bet"), ended)
	res, err := k.op.Debit(ctx, e)
	wantRefusal(&problems, "a debit in the ended session "+ended, opwallet.CodeSessionExpired, res, err)
	if err == nil {
		// Applied: as chemmy's bet would stand, the kit takes it back.
		k.expect -= a
		if _, err := k.op.Rollback(ctx, k.rollbackOf("r12-rb", e, a)); err == nil {
			k.expect += a
		}
	}
	k.settled(ctx, &problems, "the debit in the ended session")
	_, err = k.op.RoundEnd(ctx, inSession(k.roundEnd("r12-re", "r12", opwallet.RoundCancelled), ended))
	wantOK(&problems, "the round_end cancelled of that round, in the ended session", err)
	// Money staked while the session was live comes back in it after it
	// ended: a credit and a round end in it are applied.
	s := inSession(k.tx("r13-db", "r13", a, "bet"), live)
	if _, err := k.op.Debit(ctx, s); wantOK(&problems, "a debit in the live session", err) {
		k.expect -= a
		res, err := k.op.Credit(ctx, inSession(k.tx("r13-cr", "r13", a, "payout"), ended))
		if wantOK(&problems, "its credit in the session since ended", err) {
			k.expect += a
			k.wantAnswer(&problems, "the credit", res, k.expect)
		}
		_, err = k.op.RoundEnd(ctx, inSession(k.roundEnd("r13-re", "r13", opwallet.RoundCompleted), ended))
		wantOK(&problems, "its round_end in the session since ended", err)
	}
	k.settled(ctx, &problems, "the calls in the ended session")
	k.judge(name, problems, "the debit refused SESSION_EXPIRED, nothing moved; the credit and round ends applied")
}

// rawAnswer is a wallet's answer to a call the kit signed by hand.
type rawAnswer struct {
	status int
	body   []byte
	// signedWith names the secret the answer is signed with: "the
	// secret", "the new secret", or "" (unsigned or badly signed).
	signedWith string
	refusal    opwallet.Refusal
	result     opwallet.Result
}

func (a rawAnswer) String() string {
	s := fmt.Sprintf("%d", a.status)
	if a.refusal.Code != "" {
		s += " " + a.refusal.Code
	}
	if a.signedWith == "" {
		s += " (not signed with the secret)"
	}
	return s
}

// raw POSTs v to op signed with key at ts, and reads the answer.
func (k *kit) raw(ctx context.Context, op string, v any, key []byte, ts time.Time) (rawAnswer, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return rawAnswer{}, err
	}
	u := *k.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + op
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return rawAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(opwallet.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(opwallet.HeaderSignature, opwallet.Sign(key, ts.Unix(), u.Path, body))
	resp, err := k.client.Do(req)
	if err != nil {
		return rawAnswer{}, err
	}
	defer resp.Body.Close()
	a := rawAnswer{status: resp.StatusCode}
	if a.body, err = io.ReadAll(io.LimitReader(resp.Body, opwallet.DefaultMaxAnswerBytes)); err != nil {
		return rawAnswer{}, err
	}
	now, hts, hsig := k.cfg.Now(), resp.Header.Get(opwallet.HeaderTimestamp), resp.Header.Get(opwallet.HeaderSignature)
	switch {
	case opwallet.Verify(k.cfg.Secret, now, hts, hsig, u.Path, a.body) == nil:
		a.signedWith = "the secret"
	case k.cfg.NewSecret != nil && opwallet.Verify(k.cfg.NewSecret, now, hts, hsig, u.Path, a.body) == nil:
		a.signedWith = "the new secret"
	}
	if a.status == http.StatusOK {
		_ = json.Unmarshal(a.body, &a.result)
	} else {
		_ = json.Unmarshal(a.body, &a.refusal)
	}
	return a, nil
}

// badlySigned checks a debit signed wrongly (with key at ts) is refused,
// the refusal signed with a secret the kit knows (with the secret when
// key is it: only the timestamp is wrong, and the refusal says so to a
// chemmy that can check it).
func (k *kit) badlySigned(ctx context.Context, name, id, round string, key []byte, ts time.Time) {
	var problems []string
	d := k.tx(id, round, k.cfg.Amount, "bet")
	a, err := k.raw(ctx, opwallet.OpDebit, d, key, ts)
	switch {
	case err != nil:
		problems = append(problems, "the debit: "+err.Error())
	case a.status == http.StatusOK:
		problems = append(problems, fmt.Sprintf("the debit was accepted (200, balance %d), want 401 %s", a.result.Balance, opwallet.CodeInvalidSignature))
	case a.status != http.StatusUnauthorized || a.refusal.Code != opwallet.CodeInvalidSignature:
		problems = append(problems, fmt.Sprintf("answered %s, want 401 %s", a, opwallet.CodeInvalidSignature))
	case bytes.Equal(key, k.cfg.Secret) && a.signedWith != "the secret":
		problems = append(problems, "the 401 answer is not signed with the secret that signed the request (sign every answer, refusals included: chemmy could not tell a clock skew from a wrong secret)")
	case a.signedWith == "":
		problems = append(problems, "the 401 answer is not signed with the secret (sign every answer, refusals included; during a secret rotation give the kit both secrets, -secret-file and -new-secret-file)")
	}
	k.settled(ctx, &problems, "the badly signed debit")
	k.judge(name, problems, "refused 401 INVALID_SIGNATURE, nothing moved")
}

func (k *kit) signatures(ctx context.Context) {
	wrong := []byte("cc-" + k.cfg.RunID + "-not-the-secret")
	k.badlySigned(ctx, "signature-wrong-secret", "r8-db", "r8", wrong, k.cfg.Now())
	k.badlySigned(ctx, "signature-stale-timestamp", "r9-db", "r9", k.cfg.Secret, k.cfg.Now().Add(-opwallet.MaxSkew-5*time.Minute))
}

// rotation: calls signed with the new secret are answered signed with
// it, and the old secret still works.
func (k *kit) rotation(ctx context.Context) {
	const name = "secret-rotation"
	if k.cfg.NewSecret == nil {
		k.skip("no new secret given (-new-secret-file): run it during a secret rotation", name)
		return
	}
	var problems []string
	call := func(what, op string, v any, key []byte, wantSigned, txID string) bool {
		a, err := k.raw(ctx, op, v, key, k.cfg.Now())
		switch {
		case err != nil:
			problems = append(problems, what+": "+err.Error())
		case a.status != http.StatusOK:
			problems = append(problems, fmt.Sprintf("%s: answered %s, want 200", what, a))
		case a.signedWith != wantSigned:
			got := a.signedWith
			if got == "" {
				got = "neither secret"
			}
			problems = append(problems, fmt.Sprintf("%s: the answer is signed with %s, want %s (the secret that signed the request)", what, got, wantSigned))
		case a.result.TransactionID != txID:
			problems = append(problems, fmt.Sprintf("%s: the answer names transaction %q, want %q", what, a.result.TransactionID, txID))
		default:
			return true
		}
		return false
	}
	bal := opwallet.BalanceRequest{PlayerID: k.cfg.Player, Currency: k.cfg.Currency}
	call("a balance call signed with the new secret", opwallet.OpBalance, bal, k.cfg.NewSecret, "the new secret", "")
	d := k.tx("r10-db", "r10", k.cfg.Amount, "bet")
	rb := k.rollbackOf("r10-rb", d, d.Amount)
	if call("a debit signed with the new secret", opwallet.OpDebit, d, k.cfg.NewSecret, "the new secret", d.TransactionID) {
		k.expect -= d.Amount
		if call("its rollback signed with the new secret", opwallet.OpRollback, rb, k.cfg.NewSecret, "the new secret", rb.TransactionID) {
			k.expect += d.Amount
		}
	} else {
		// As chemmy does with a debit whose outcome it could not learn:
		// roll it back (with the secret that works).
		if _, err := k.op.Rollback(ctx, rb); err != nil {
			problems = append(problems, "the rollback of that debit, signed with the old secret: "+describe(err))
		}
	}
	e := k.roundEnd("r10-re", "r10", opwallet.RoundCancelled)
	call("its round_end signed with the old secret", opwallet.OpRoundEnd, e, k.cfg.Secret, "the secret", e.TransactionID)
	call("a balance call signed with the old secret", opwallet.OpBalance, bal, k.cfg.Secret, "the secret", "")
	k.settled(ctx, &problems, "the calls with the new secret")
	k.judge(name, problems, "both secrets accepted, each answered signed with its own")
}
