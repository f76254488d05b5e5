package refwallet

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/chemmy/chemmy/services/kit/opwallet"
	bolt "go.etcd.io/bbolt"
)

// bbolt layout: "meta" holds "schema" (uint32 big-endian); "players"
// maps a player id to an account (JSON); "tx" maps a transaction id to
// its Record (JSON); "tombstones" maps the id of a debit rolled back
// before it was seen to the id of that rollback.
var (
	bucketMeta       = []byte("meta")
	bucketPlayers    = []byte("players")
	bucketTx         = []byte("tx")
	bucketTombstones = []byte("tombstones")
	keySchema        = []byte("schema")
)

const schema = 1

// Transaction statuses.
const (
	StatusApplied    = "applied"
	StatusRefused    = "refused"
	StatusRolledBack = "rolled_back" // a debit refunded by a rollback
)

// account is a player's record in "players".
type account struct {
	Balance int64 `json:"balance"`
	// Funded is the sum of every admin funding (deposits and balance
	// settings), so Balance = Funded + the sum of the Moved of the
	// player's transactions.
	Funded int64 `json:"funded"`
}

// Record is one transaction as the wallet keeps it, by transaction id.
type Record struct {
	// Seq orders the records in the order the wallet first decided them.
	Seq uint64 `json:"seq"`
	// Kind is the operation: debit, credit, rollback or round_end.
	Kind string `json:"kind"`
	// Request is the transaction as chemmy sent it the first time.
	Request opwallet.Transaction `json:"request"`
	// Status is StatusApplied, StatusRefused or StatusRolledBack.
	Status string `json:"status"`
	// Moved is what the transaction changed the player's balance by
	// (minor units, negative for a debit; 0 when refused, for a
	// round_end, a tombstone or a rollback of a debit already refunded).
	// A rolled back debit keeps its Moved; its rollback carries the
	// refund.
	Moved int64 `json:"moved"`
	// Tombstone marks a rollback of a debit the wallet had not seen: that
	// debit is refused if it arrives later.
	Tombstone bool `json:"tombstone,omitempty"`
	// Received is when the wallet decided the transaction.
	Received time.Time `json:"received"`
	// HTTPStatus and Answer are the first answer, sent again to a
	// duplicate.
	HTTPStatus            int             `json:"http_status"`
	Answer                json.RawMessage `json:"answer"`
	OperatorTransactionID string          `json:"operator_transaction_id,omitempty"`
}

// Day is the UTC day a record counts in: chemmy's time of the movement,
// or when the wallet received it if chemmy sent none.
func (r Record) Day() string {
	t := r.Request.Time
	if t.IsZero() {
		t = r.Received
	}
	return t.UTC().Format(time.DateOnly)
}

// sameRequest reports whether t under kind is the request r was made of
// (chemmy's time aside: a retry may carry another).
func (r Record) sameRequest(kind string, t opwallet.Transaction) bool {
	a := r.Request
	a.Time, t.Time = time.Time{}, time.Time{}
	return r.Kind == kind && a == t
}

// answer is an HTTP status and its JSON body.
type answer struct {
	status int
	body   []byte
	// fresh is set when the transaction was decided by this call (not a
	// duplicate of an earlier one).
	fresh bool
}

func refusal(status int, code, format string, args ...any) answer {
	b, _ := json.Marshal(opwallet.Refusal{Code: code, Message: fmt.Sprintf(format, args...)})
	return answer{status: status, body: b}
}

func ok(res opwallet.Result) answer {
	b, _ := json.Marshal(res)
	return answer{status: http.StatusOK, body: b}
}

// books is the wallet's bbolt file.
type books struct {
	db       *bolt.DB
	currency string
	// sessionEnded reports whether a game-launch session was ended on
	// this side (Server.ExpireSession); nil: none is.
	sessionEnded func(id string) bool
}

func openBooks(path, currency string) (*books, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("refwallet: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("refwallet: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketPlayers, bucketTx, bucketTombstones} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		got := meta.Get(keySchema)
		if got == nil {
			return meta.Put(keySchema, binary.BigEndian.AppendUint32(nil, schema))
		}
		if len(got) != 4 || binary.BigEndian.Uint32(got) != schema {
			return fmt.Errorf("refwallet: %s holds schema %x, want %d", path, got, schema)
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &books{db: db, currency: currency}, nil
}

func getJSON(b *bolt.Bucket, key string, v any) (bool, error) {
	raw := b.Get([]byte(key))
	if raw == nil {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

func putJSON(b *bolt.Bucket, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), raw)
}

// balance answers a balance call.
func (bk *books) balance(req opwallet.BalanceRequest) (answer, error) {
	var a answer
	err := bk.db.View(func(tx *bolt.Tx) error {
		var acc account
		found, err := getJSON(tx.Bucket(bucketPlayers), req.PlayerID, &acc)
		switch {
		case err != nil:
			return err
		case !found:
			a = refusal(http.StatusNotFound, opwallet.CodeUnknownPlayer, "no player %q", req.PlayerID)
		case req.Currency != bk.currency:
			a = refusal(http.StatusBadRequest, opwallet.CodeCurrencyMismatch, "the wallet holds %s, not %q", bk.currency, req.Currency)
		default:
			a = ok(opwallet.Result{Balance: acc.Balance, Currency: bk.currency})
		}
		return nil
	})
	return a, err
}

// apply decides a validated transaction of kind in one write transaction:
// the first answer again for a known id, or a new record (applied or
// refused) and its answer.
func (bk *books) apply(kind string, t opwallet.Transaction, now time.Time) (answer, error) {
	var a answer
	err := bk.db.Update(func(tx *bolt.Tx) error {
		txs := tx.Bucket(bucketTx)
		var prev Record
		found, err := getJSON(txs, t.TransactionID, &prev)
		if err != nil {
			return err
		}
		if found {
			a = duplicateAnswer(prev, kind, t)
			return nil
		}
		t.Time = t.Time.UTC()
		rec := Record{Kind: kind, Request: t, Received: now.UTC()}
		if rec.Seq, err = txs.NextSequence(); err != nil {
			return err
		}
		rec.OperatorTransactionID = "op-" + strconv.FormatUint(rec.Seq, 10)
		a, err = bk.decide(tx, &rec)
		if err != nil {
			return err
		}
		a.fresh = true
		if a.status == http.StatusOK {
			rec.Status = StatusApplied
		} else {
			rec.Status = StatusRefused
			rec.Moved = 0
		}
		rec.HTTPStatus, rec.Answer = a.status, a.body
		return putJSON(txs, t.TransactionID, rec)
	})
	return a, err
}

// duplicateAnswer answers a transaction id already decided as prev.
func duplicateAnswer(prev Record, kind string, t opwallet.Transaction) answer {
	if !prev.sameRequest(kind, t) {
		return refusal(http.StatusConflict, opwallet.CodeTransactionIDReused,
			"transaction %q was a %s with other fields", t.TransactionID, prev.Kind)
	}
	if prev.Status == StatusRolledBack {
		return refusal(http.StatusConflict, opwallet.CodeTransactionRolledBack,
			"debit %q was rolled back", t.TransactionID)
	}
	if prev.HTTPStatus != http.StatusOK {
		return answer{status: prev.HTTPStatus, body: prev.Answer}
	}
	var res opwallet.Result
	if err := json.Unmarshal(prev.Answer, &res); err != nil {
		return refusal(http.StatusConflict, opwallet.CodeTransactionIDReused, "stored answer unreadable: %v", err)
	}
	res.Duplicate = true
	return ok(res)
}

// decide applies rec to its player (setting rec.Moved) and returns the
// answer. Nothing is written when the answer is a refusal, except the
// record itself by the caller.
func (bk *books) decide(tx *bolt.Tx, rec *Record) (answer, error) {
	players := tx.Bucket(bucketPlayers)
	var acc account
	found, err := getJSON(players, rec.Request.PlayerID, &acc)
	if err != nil {
		return answer{}, err
	}
	if !found {
		return refusal(http.StatusNotFound, opwallet.CodeUnknownPlayer, "no player %q", rec.Request.PlayerID), nil
	}
	if rec.Request.Currency != bk.currency {
		return refusal(http.StatusBadRequest, opwallet.CodeCurrencyMismatch, "the wallet holds %s, not %q", bk.currency, rec.Request.Currency), nil
	}
	if rb := tx.Bucket(bucketTombstones).Get([]byte(rec.Request.TransactionID)); rb != nil {
		if rec.Kind != opwallet.OpDebit {
			return refusal(http.StatusConflict, opwallet.CodeTransactionIDReused,
				"%q names a debit rolled back by %q", rec.Request.TransactionID, rb), nil
		}
		return refusal(http.StatusConflict, opwallet.CodeTransactionRolledBack,
			"debit %q was rolled back by %q before it arrived", rec.Request.TransactionID, rb), nil
	}
	switch rec.Kind {
	case opwallet.OpDebit:
		if id := rec.Request.SessionID; id != "" && bk.sessionEnded != nil && bk.sessionEnded(id) {
			// Credits, rollbacks and round_ends of the session still
			// apply: they settle money already staked.
			return refusal(http.StatusForbidden, opwallet.CodeSessionExpired, "game-launch session %q has ended", id), nil
		}
		if acc.Balance < rec.Request.Amount {
			return refusal(http.StatusPaymentRequired, opwallet.CodeInsufficientFunds,
				"balance %d, debit %d", acc.Balance, rec.Request.Amount), nil
		}
		rec.Moved = -rec.Request.Amount
	case opwallet.OpCredit:
		if acc.Balance > math.MaxInt64-rec.Request.Amount {
			return refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest,
				"balance %d, a credit of %d would overflow it", acc.Balance, rec.Request.Amount), nil
		}
		rec.Moved = rec.Request.Amount
	case opwallet.OpRollback:
		a, err := bk.rollback(tx, rec)
		if err != nil || a.status != 0 {
			return a, err
		}
	case opwallet.OpRoundEnd:
	}
	acc.Balance += rec.Moved
	if err := putJSON(players, rec.Request.PlayerID, acc); err != nil {
		return answer{}, err
	}
	return ok(opwallet.Result{
		TransactionID: rec.Request.TransactionID, OperatorTransactionID: rec.OperatorTransactionID,
		Balance: acc.Balance, Currency: bk.currency,
	}), nil
}

// rollback decides a rollback: it refunds a debit once, records a
// tombstone for a debit never seen, and refuses to undo anything but a
// debit of the same player. A zero answer means applied (rec.Moved set).
func (bk *books) rollback(tx *bolt.Tx, rec *Record) (answer, error) {
	txs := tx.Bucket(bucketTx)
	var target Record
	found, err := getJSON(txs, rec.Request.RolledBackID, &target)
	if err != nil {
		return answer{}, err
	}
	if !found {
		rec.Tombstone = true
		return answer{}, tx.Bucket(bucketTombstones).Put([]byte(rec.Request.RolledBackID), []byte(rec.Request.TransactionID))
	}
	switch {
	case target.Kind != opwallet.OpDebit:
		return refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest,
			"transaction %q is a %s: only a debit can be rolled back", target.Request.TransactionID, target.Kind), nil
	case target.Request.PlayerID != rec.Request.PlayerID:
		return refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest,
			"debit %q is another player's", target.Request.TransactionID), nil
	case rec.Request.Amount != 0 && rec.Request.Amount != target.Request.Amount:
		return refusal(http.StatusBadRequest, opwallet.CodeInvalidRequest,
			"debit %q was of %d, not %d", target.Request.TransactionID, target.Request.Amount, rec.Request.Amount), nil
	case target.Status != StatusApplied:
		return answer{}, nil // refused or already refunded: nothing to give back
	}
	rec.Moved = target.Request.Amount
	target.Status = StatusRolledBack
	return answer{}, putJSON(txs, target.Request.TransactionID, target)
}

// tombstoned reports whether a rollback of the debit id was recorded
// before the debit was seen.
func (bk *books) tombstoned(id string) bool {
	found := false
	bk.db.View(func(tx *bolt.Tx) error {
		found = id != "" && tx.Bucket(bucketTombstones).Get([]byte(id)) != nil
		return nil
	})
	return found
}

// fund adds deposit to a player's balance and funding, or sets the
// balance when set is true (the difference counting as funding), creating
// the player if needed.
func (bk *books) fund(player string, amount int64, set bool) (account, error) {
	var acc account
	err := bk.db.Update(func(tx *bolt.Tx) error {
		players := tx.Bucket(bucketPlayers)
		if _, err := getJSON(players, player, &acc); err != nil {
			return err
		}
		delta := amount
		if set {
			delta = amount - acc.Balance
		}
		if acc.Balance+delta < 0 {
			return fmt.Errorf("refwallet: balance of %q would be %d", player, acc.Balance+delta)
		}
		acc.Balance += delta
		acc.Funded += delta
		return putJSON(players, player, acc)
	})
	return acc, err
}

// PlayerBalance is a player's balance and funding, minor units.
type PlayerBalance struct {
	PlayerID string `json:"player_id"`
	Balance  int64  `json:"balance"`
	Funded   int64  `json:"funded"`
}

func (bk *books) balances() ([]PlayerBalance, error) {
	var out []PlayerBalance
	err := bk.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPlayers).ForEach(func(k, v []byte) error {
			var acc account
			if err := json.Unmarshal(v, &acc); err != nil {
				return err
			}
			out = append(out, PlayerBalance{PlayerID: string(k), Balance: acc.Balance, Funded: acc.Funded})
			return nil
		})
	})
	return out, err // bbolt iterates keys in order
}

// records returns every record for which keep is true, by Seq.
func (bk *books) records(keep func(Record) bool) ([]Record, error) {
	var out []Record
	err := bk.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTx).ForEach(func(_, v []byte) error {
			var r Record
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if keep(r) {
				out = append(out, r)
			}
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, err
}

// Total sums one kind of transaction in a Ledger.
type Total struct {
	// Count and Amount (minor units, positive) cover the transactions
	// that moved money or were recorded: applied ones, and debits applied
	// then rolled back (their rollback counts under "rollback"). A
	// rollback's Amount is what it refunded.
	Count  int   `json:"count"`
	Amount int64 `json:"amount"`
	// Refused counts the refused ones (nothing moved).
	Refused int `json:"refused"`
}

// Ledger is the operator's side of the reconciliation for one UTC day.
type Ledger struct {
	Day          string           `json:"day"`
	Currency     string           `json:"currency"`
	Transactions []Record         `json:"transactions"`
	Totals       map[string]Total `json:"totals"`
	// Net is what the day's transactions changed the players' balances
	// by: credit + rollback - debit amounts.
	Net int64 `json:"net"`
}

func (bk *books) ledger(day string) (Ledger, error) {
	recs, err := bk.records(func(r Record) bool { return r.Day() == day })
	if err != nil {
		return Ledger{}, err
	}
	l := Ledger{Day: day, Currency: bk.currency, Transactions: recs, Totals: map[string]Total{}}
	if l.Transactions == nil {
		l.Transactions = []Record{}
	}
	for _, r := range recs {
		t := l.Totals[r.Kind]
		if r.Status == StatusRefused {
			t.Refused++
		} else {
			t.Count++
			if r.Moved < 0 {
				t.Amount -= r.Moved
			} else {
				t.Amount += r.Moved
			}
		}
		l.Totals[r.Kind] = t
		l.Net += r.Moved
	}
	return l, nil
}

// checkBooks verifies that every balance equals its funding plus the
// Moved of the player's transactions, that no debit is refunded twice and
// that no debit arrived after its tombstone was applied.
func (bk *books) checkBooks() error {
	bals, err := bk.balances()
	if err != nil {
		return err
	}
	recs, err := bk.records(func(Record) bool { return true })
	if err != nil {
		return err
	}
	moved := map[string]int64{}
	refunds := map[string]int{}
	byID := map[string]Record{}
	for _, r := range recs {
		moved[r.Request.PlayerID] += r.Moved
		byID[r.Request.TransactionID] = r
		if r.Kind == opwallet.OpRollback && r.Moved > 0 {
			refunds[r.Request.RolledBackID]++
		}
	}
	var errs []error
	for _, b := range bals {
		if b.Balance != b.Funded+moved[b.PlayerID] {
			errs = append(errs, fmt.Errorf("player %q: balance %d, funded %d + moved %d", b.PlayerID, b.Balance, b.Funded, moved[b.PlayerID]))
		}
		if b.Balance < 0 {
			errs = append(errs, fmt.Errorf("player %q: negative balance %d", b.PlayerID, b.Balance))
		}
	}
	for id, n := range refunds {
		d := byID[id]
		if n != 1 || d.Status != StatusRolledBack {
			errs = append(errs, fmt.Errorf("debit %q refunded %d times, status %s", id, n, d.Status))
		}
	}
	for _, r := range recs {
		if r.Tombstone {
			if d, ok := byID[r.Request.RolledBackID]; ok && d.Status != StatusRefused {
				errs = append(errs, fmt.Errorf("debit %q %s after its tombstone %q", d.Request.TransactionID, d.Status, r.Request.TransactionID))
			}
		}
	}
	return errors.Join(errs...)
}
