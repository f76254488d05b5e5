package walletsvc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/store"
)

// Seamless wallet mode (doc.go "Seamless wallet mode"): the operator's
// wallet holds the players' money; a stake is debited from it before it
// is held here, and whatever becomes available on a player account is
// swept back to it (a credit, or the rollback of a voided stake's debit)
// through the operator outbox (opoutbox.go).

// AccountOperator is the counter-account of the money that comes from and
// goes back to the operator's wallet in seamless mode (like
// external:funding in transfer mode: minus the operator's money at stake
// in the wallet).
const AccountOperator = "external:operator"

// DefaultOperatorID names the operator in the report when
// Config.OperatorID is empty.
const DefaultOperatorID = "operator"

// Transfer reasons of seamless mode: the money entering a player's
// account from the operator's wallet, and leaving it back. They are not
// play (isGameTransfer).
const (
	reasonOperatorDebit    = "operator_debit"
	reasonOperatorCredit   = "operator_credit"
	reasonOperatorRollback = "operator_rollback"
)

// Kinds and statuses of operator transactions (the report's).
const (
	kindDebit    = opwallet.OpDebit
	kindCredit   = opwallet.OpCredit
	kindRollback = opwallet.OpRollback
	kindRoundEnd = opwallet.OpRoundEnd

	statusPending      = "pending"
	statusApplied      = "applied"
	statusRefused      = "refused"
	statusRolledBack   = "rolled_back"
	statusAcknowledged = "acknowledged"
)

// Debit and credit reasons sent to the operator.
const (
	whyBet        = "bet"
	whyBank       = "bank"
	whyFee        = "fee"
	whyPayout     = "payout"
	whyBankReturn = "bank_return"
	whyRefund     = "refund"
)

var (
	reasonOperatorRefused     = reason(walletv1.ErrorReason_ERROR_REASON_OPERATOR_REFUSED)
	reasonOperatorUnavailable = reason(walletv1.ErrorReason_ERROR_REASON_OPERATOR_UNAVAILABLE)
	reasonSeamless            = reason(walletv1.ErrorReason_ERROR_REASON_SEAMLESS_WALLET)
)

// The buckets of seamless mode (doc.go).
var (
	bucketOpTx       = []byte("op-tx")       // transaction id → opTx (JSON)
	bucketOpDay      = []byte("op-day")      // "YYYY-MM-DD" + 8-byte seq → transaction id
	bucketOpOutbox   = []byte("op-outbox")   // 8-byte seq → transaction id, to send
	bucketOpInflight = []byte("op-inflight") // debit transaction id → empty: a call in flight
	bucketOpAttempts = []byte("op-attempts") // idempotency key → 8-byte attempt count
	bucketOpHolds    = []byte("op-holds")    // hold id → holdRec (JSON), open holds
	bucketOpRounds   = []byte("op-rounds")   // account id, 0x00, round id → roundRec (JSON)
	bucketOpIdle     = []byte("op-idle")     // 8-byte IdleSince (Unix ns), round key → empty
	bucketOpEnded    = []byte("op-ended")    // 8-byte EndedAt (Unix ns), round key → empty (opretention.go)
	// The exception list (opexceptions.go): every exception ever opened,
	// and the open ones.
	bucketOpExceptions = []byte("op-exceptions")      // 8-byte seq → opException (JSON)
	bucketOpExcOpen    = []byte("op-exceptions-open") // 8-byte seq → transaction id
	// bucketOpRoundTx indexes the transactions by round (opround.go):
	// round id, 0x00, 8-byte "op-day" seq → transaction id.
	bucketOpRoundTx = []byte("op-round-tx")
)

var opBuckets = [][]byte{bucketOpTx, bucketOpDay, bucketOpOutbox, bucketOpInflight, bucketOpAttempts, bucketOpHolds, bucketOpRounds,
	bucketOpIdle, bucketOpEnded, bucketOpExceptions, bucketOpExcOpen, bucketOpRoundTx}

// defaultRoundIdle is how long a round with only failed debits waits for
// a stake before it ends cancelled (Config.roundIdle in tests).
const defaultRoundIdle = time.Minute

func idleKey(at time.Time, round string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), round...)
}

// opTx is one operator transaction as logged.
type opTx struct {
	ID           string    `json:"id"`
	Kind         string    `json:"kind"`
	Status       string    `json:"status"`
	Account      string    `json:"account"`
	Player       string    `json:"player"`
	Round        string    `json:"round"`
	Table        string    `json:"table,omitempty"`
	Amount       int64     `json:"amount"`
	Currency     string    `json:"currency"`
	Reason       string    `json:"reason,omitempty"`
	RolledBack   string    `json:"rolled_back,omitempty"`
	RoundStatus  string    `json:"round_status,omitempty"`
	OperatorTxID string    `json:"operator_tx_id,omitempty"`
	OperatorCode string    `json:"operator_code,omitempty"`
	RequestID    string    `json:"request_id,omitempty"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	// A credit, rollback or round_end: how many times the operator
	// refused it; refused for good, its exception's state (excOpen,
	// excRetried, excSettled) and sequence (opexceptions.go).
	Refusals     int    `json:"refusals,omitempty"`
	Exception    string `json:"exception,omitempty"`
	ExceptionSeq uint64 `json:"exception_seq,omitempty"`
	// RetryOf: a retry, the refused transaction it replaces; RetryID: a
	// retried one, its retry.
	RetryOf string `json:"retry_of,omitempty"`
	RetryID string `json:"retry_id,omitempty"`
	// OperatorBalance is the player's balance right after the
	// transaction, as the operator answered it; nil until answered.
	OperatorBalance *int64 `json:"operator_balance,omitempty"`
	// Session is the player's game-launch session the money moved in
	// (sent as session_id); empty: none.
	Session string `json:"session,omitempty"`
}

// wire is the transaction as sent to the operator.
func (x *opTx) wire() opwallet.Transaction {
	return opwallet.Transaction{TransactionID: x.ID, PlayerID: x.Player, RoundID: x.Round, TableID: x.Table,
		Amount: x.Amount, Currency: x.Currency, Reason: x.Reason, RolledBackID: x.RolledBack, Status: x.RoundStatus,
		SessionID: x.Session, Time: x.Created}
}

// debitRef is a debit that funded a hold.
type debitRef struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
}

// holdRec is what seamless mode knows of an open hold on a player
// account: its round, and the debits that funded it.
type holdRec struct {
	Round  string     `json:"round"`
	Table  string     `json:"table,omitempty"`
	Debits []debitRef `json:"debits,omitempty"`
	// Settled: the hold took part in a settlement (its amount is no
	// longer the stake debited: a void returns it by a credit).
	Settled bool `json:"settled,omitempty"`
	// Bank: the hold is a bank (it stayed open through a settlement).
	Bank bool `json:"bank,omitempty"`
	// Session: the launch session it was placed in (a raise of it is
	// debited in the same one).
	Session string `json:"session,omitempty"`
}

func (h *holdRec) debited() int64 {
	var n int64
	for _, d := range h.Debits {
		n += d.Amount
	}
	return n
}

// roundRec is one player's part in one round.
type roundRec struct {
	Table string `json:"table,omitempty"`
	// Open counts his open holds in the round.
	Open int `json:"open"`
	// Txs counts the operator transactions of the round (no round_end
	// for a round without any).
	Txs int `json:"txs"`
	// Completed: a hold of the round was settled or posted, or a fee
	// was charged in it; otherwise the round ends cancelled.
	Completed bool `json:"completed,omitempty"`
	// Credited: a credit was sent in the round (no rollback after it).
	Credited bool `json:"credited,omitempty"`
	// Staked: a debit of the round was taken (a stake or a fee stood) or
	// a credit sent. A round without, only debits refused or rolled back
	// (their outcome unknown, or their stake refused), ends only after
	// roundIdle without a stake (IdleSince, the "op-idle" index): the
	// table retries a stake the operator did not answer under the same
	// request id, in the same round.
	Staked    bool      `json:"staked,omitempty"`
	IdleSince time.Time `json:"idle_since,omitzero"`
	Ended     bool      `json:"ended,omitempty"`
	// EndedAt: when it ended (the "op-ended" index; zero for a round
	// ended by a version without it, until indexEndedRounds).
	EndedAt time.Time `json:"ended_at,omitzero"`
	// Session: the launch session of the player's last stake in the
	// round; its credits, rollbacks and round_end carry it.
	Session string `json:"session,omitempty"`
}

func roundKey(acct, round string) string { return acct + "\x00" + round }

// fundMode says what txn.fund does.
type fundMode int

const (
	fundNone    fundMode = iota // no debit: a stake that needs one cannot be taken now (errDebitNeeded)
	fundDry                     // the dry run: note the debit needed, pretend it came in
	fundApplied                 // the operator accepted debit: bring it in
)

// errDebitNeeded: a stake on a seamless account reached fund without a
// debit (the ledger changed since the dry run); the request is retried.
var errDebitNeeded = errors.New("wallet: seamless stake without its debit")

// release is money a hold gave back to its account in a transaction: a
// close (the whole hold) or a resize down (the difference).
type release struct {
	hold   string
	acct   string
	amount int64
	state  walletv1.HoldState // OPEN for a resize down
}

// opTxn is a transaction's seamless-mode working set, written by write.
type opTxn struct {
	tx   *bolt.Tx
	now  time.Time
	def  string
	mode fundMode
	// reqID is the request's (fees without a coup use it as round).
	reqID string
	// session is the request's launch session (PlaceHold), sent with
	// its debit.
	session string
	// need is the debit the dry run found needed.
	need *opTx
	// debit is the applied debit this request brings in, used once fund
	// took it; debitHold the hold it funds (nil: a fee).
	debit     *opTx
	used      bool
	debitHold *walletv1.Hold
	// coup is the coup id of a settlement.
	coup     string
	releases []release
	holds    map[string]*holdRec // loaded; nil value: none
	rounds   map[string]*roundRec
	txs      map[string]*opTx
	outbox   []string
	inflight map[string]bool // debit id → true: add, false: delete
	queued   bool
	// endIdle: round keys whose idle wait is over (endIdleRounds);
	// idleAdd, idleDel: "op-idle" keys to write and delete.
	endIdle          map[string]bool
	idleAdd, idleDel [][]byte
	// endedAdd: "op-ended" keys to write.
	endedAdd [][]byte
}

func newOpTxn(tx *bolt.Tx, now time.Time, def string) *opTxn {
	return &opTxn{tx: tx, now: now.UTC(), def: def, holds: map[string]*holdRec{}, rounds: map[string]*roundRec{},
		txs: map[string]*opTx{}, inflight: map[string]bool{}, endIdle: map[string]bool{}}
}

func isPlayerAccount(id string) bool { return strings.HasPrefix(bare(id), playerPrefix) }

// playerOf is the operator's player id and currency of a player account.
func playerOf(acct, def string) (player, cur string) {
	base, cur := splitCurrency(bare(acct), def)
	return strings.TrimPrefix(base, playerPrefix), cur
}

// parseRef reads "tables/<T>/coups/<C>" (or any "tables/<T>/...") from a
// hold's or fee's reference.
func parseRef(ref string) (table, coup string) {
	rest, ok := strings.CutPrefix(ref, "tables/")
	if !ok {
		return "", ""
	}
	table, rest, _ = strings.Cut(rest, "/")
	if c, ok := strings.CutPrefix(rest, "coups/"); ok {
		coup, _, _ = strings.Cut(c, "/")
	}
	return table, coup
}

// safeID is id when it fits an operator transaction id ([A-Za-z0-9._:/-],
// at most 96 bytes), else a digest of it.
func safeID(id string) string { return opwallet.SafeID(id) }

func (o *opTxn) hold(id string) (*holdRec, error) {
	if h, ok := o.holds[id]; ok {
		return h, nil
	}
	var h *holdRec
	if v := o.tx.Bucket(bucketOpHolds).Get([]byte(id)); v != nil {
		h = &holdRec{}
		if err := json.Unmarshal(v, h); err != nil {
			return nil, err
		}
	}
	o.holds[id] = h
	return h, nil
}

func (o *opTxn) round(acct, round, table string) (*roundRec, error) {
	k := roundKey(acct, round)
	if r, ok := o.rounds[k]; ok {
		return r, nil
	}
	r := &roundRec{Table: table}
	if _, err := getJSON(o.tx, bucketOpRounds, k, r); err != nil {
		return nil, err
	}
	if r.Table == "" {
		r.Table = table
	}
	o.rounds[k] = r
	return r, nil
}

// freeRound is round, or round.<n> for the first n = 2, 3... whose round
// has not ended for acct: a stake in a coup after the player's round of
// it ended opens a new round.
func (o *opTxn) freeRound(acct, round string) (string, error) {
	id := round
	for n := 2; ; n++ {
		r := &roundRec{}
		found, err := getJSON(o.tx, bucketOpRounds, roundKey(acct, id), r)
		if err != nil || !found || !r.Ended {
			return id, err
		}
		id = round + "." + strconv.Itoa(n)
	}
}

// newTx logs a new operator transaction of acct.
// txPrefix starts the transaction ids chemmy makes, by kind (a debit's is
// "db-<request id>-<attempt>").
var txPrefix = map[string]string{kindCredit: "cr-", kindRollback: "rb-", kindRoundEnd: "re-"}

func (o *opTxn) newTx(kind, acct, round, table string, amount int64) *opTx {
	p, cur := playerOf(acct, o.def)
	x := &opTx{ID: txPrefix[kind] + ulid.Make().String(), Kind: kind, Status: statusPending, Account: acct, Player: p,
		Round: round, Table: table, Amount: amount, Currency: cur, Created: o.now, Updated: o.now}
	if r := o.rounds[roundKey(acct, round)]; r != nil {
		x.Session = r.Session
	}
	o.txs[x.ID] = x
	return x
}

// enqueue logs x and queues it for the relay.
func (o *opTxn) enqueue(x *opTx) {
	o.txs[x.ID] = x
	o.outbox = append(o.outbox, x.ID)
}

// rollback queues the rollback of debit d in its round.
func (o *opTxn) rollback(d *opTx) error {
	r := o.newTx(kindRollback, d.Account, d.Round, d.Table, d.Amount)
	r.RolledBack = d.ID
	r.Session = d.Session
	o.enqueue(r)
	delete(o.txs, d.ID)
	o.inflight[d.ID] = false
	rr, err := o.round(d.Account, d.Round, d.Table)
	if err != nil {
		return err
	}
	rr.Txs++
	return nil
}

// endRounds queues the round_end of every round touched whose player has
// no hold left in it.
func (o *opTxn) endRounds() {
	for _, k := range slices.Sorted(maps.Keys(o.rounds)) {
		r := o.rounds[k]
		if !r.IdleSince.IsZero() && (r.Staked || r.Open > 0 || o.endIdle[k]) {
			o.idleDel = append(o.idleDel, idleKey(r.IdleSince, k))
			r.IdleSince = time.Time{}
		}
		if r.Open > 0 || r.Ended || r.Txs == 0 {
			continue
		}
		if !r.Staked && !o.endIdle[k] {
			if r.IdleSince.IsZero() {
				r.IdleSince = o.now
				o.idleAdd = append(o.idleAdd, idleKey(r.IdleSince, k))
			}
			continue
		}
		acct, round, _ := strings.Cut(k, "\x00")
		e := o.newTx(kindRoundEnd, acct, round, r.Table, 0)
		e.RoundStatus = opwallet.RoundCancelled
		if r.Completed {
			e.RoundStatus = opwallet.RoundCompleted
		}
		o.enqueue(e)
		r.Ended, r.EndedAt = true, o.now
		o.endedAdd = append(o.endedAdd, idleKey(o.now, k))
	}
}

// write stores what changed: transactions (and their day index),
// holds, rounds, the in-flight index and the outbox.
func (o *opTxn) write() error {
	o.endRounds()
	for _, id := range slices.Sorted(maps.Keys(o.txs)) {
		if err := putTx(o.tx, o.txs[id]); err != nil {
			return err
		}
	}
	for id, h := range o.holds {
		var err error
		if h == nil {
			err = o.tx.Bucket(bucketOpHolds).Delete([]byte(id))
		} else {
			err = putJSON(o.tx, bucketOpHolds, id, h)
		}
		if err != nil {
			return err
		}
	}
	for k, r := range o.rounds {
		if err := putJSON(o.tx, bucketOpRounds, k, r); err != nil {
			return err
		}
	}
	in := o.tx.Bucket(bucketOpInflight)
	for id, add := range o.inflight {
		var err error
		if add {
			err = in.Put([]byte(id), nil)
		} else {
			err = in.Delete([]byte(id))
		}
		if err != nil {
			return err
		}
	}
	idle := o.tx.Bucket(bucketOpIdle)
	for _, k := range o.idleDel {
		if err := idle.Delete(k); err != nil {
			return err
		}
	}
	for _, k := range o.idleAdd {
		if err := idle.Put(k, nil); err != nil {
			return err
		}
	}
	for _, k := range o.endedAdd {
		if err := o.tx.Bucket(bucketOpEnded).Put(k, nil); err != nil {
			return err
		}
	}
	ob := o.tx.Bucket(bucketOpOutbox)
	for _, id := range o.outbox {
		seq, err := ob.NextSequence()
		if err != nil {
			return err
		}
		if err := ob.Put(binary.BigEndian.AppendUint64(nil, seq), []byte(id)); err != nil {
			return err
		}
		o.queued = true
	}
	return nil
}

// putTx stores x, indexing a new one by its creation day.
func putTx(tx *bolt.Tx, x *opTx) error {
	b := tx.Bucket(bucketOpTx)
	if b.Get([]byte(x.ID)) == nil {
		d := tx.Bucket(bucketOpDay)
		seq, err := d.NextSequence()
		if err != nil {
			return err
		}
		k := binary.BigEndian.AppendUint64([]byte(x.Created.UTC().Format(time.DateOnly)), seq)
		if err := d.Put(k, []byte(x.ID)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOpRoundTx).Put(roundTxKey(x.Round, seq), []byte(x.ID)); err != nil {
			return err
		}
	}
	return putJSON(tx, bucketOpTx, x.ID, x)
}

func getTx(tx *bolt.Tx, id string) (*opTx, error) {
	x := &opTx{}
	found, err := getJSON(tx, bucketOpTx, id, x)
	if err == nil && !found {
		err = fmt.Errorf("wallet: operator transaction %q not logged", id)
	}
	return x, err
}

// fund brings amount into player account a from the operator's wallet
// before a stake or fee of that amount is taken (PlaceHold, ResizeHold up,
// ChargeFee): why is the debit's reason, ref the hold's or fee's
// reference, h the hold being raised (nil otherwise). In transfer mode,
// and for an account that is not a player's, it does nothing.
func (t *txn) fund(a *account, amount int64, why, ref string, h *walletv1.Hold) error {
	o := t.op
	if o == nil || !isPlayerAccount(a.id) {
		return nil
	}
	ext, err := t.system(AccountOperator, a.currency)
	if err != nil {
		return err
	}
	switch o.mode {
	case fundDry:
		table, coup := parseRef(ref)
		if h != nil {
			if hr, err := o.hold(h.GetHoldId()); err != nil {
				return err
			} else if hr != nil {
				table, coup = hr.Table, hr.Round
			}
		}
		if coup == "" {
			coup = opwallet.FeeRound(o.reqID)
			if why != whyFee {
				coup = "stake-" + safeID(o.reqID)
			}
		}
		if h == nil {
			if coup, err = o.freeRound(a.id, coup); err != nil {
				return err
			}
		}
		// The session the stake is made in (PlaceHold's, a raise's
		// ResizeHold's), else the one its hold was placed in.
		session := o.session
		if h != nil && session == "" {
			if hr, err := o.hold(h.GetHoldId()); err != nil {
				return err
			} else if hr != nil {
				session = hr.Session
			}
		}
		p, cur := playerOf(a.id, t.def)
		o.need = &opTx{Kind: kindDebit, Account: a.id, Player: p, Round: coup, Table: table, Amount: amount,
			Currency: cur, Reason: why, RequestID: o.reqID, Session: session}
		_, err = t.transfer(ext, a, amount, reasonOperatorDebit, o.reqID)
		return err
	case fundApplied:
		d := o.debit
		if o.used || d.Account != a.id || d.Amount < amount {
			// The ledger changed since the dry run: the debit does not
			// cover the stake (it is rolled back: the wrapper).
			return failf(codes.FailedPrecondition, reasonInsufficient,
				"%s: the stake changed to %d while %d was debited; try again with a new request_id", a.id, amount, d.Amount)
		}
		o.used = true
		_, err = t.transfer(ext, a, d.Amount, reasonOperatorDebit, o.reqID)
		return err
	}
	return errDebitNeeded
}

// stakeAccount is mustAccount, except that in seamless mode a player's
// account that does not exist yet is an empty one (created when written:
// his first stake).
func (t *txn) stakeAccount(id string) (*account, error) {
	a, err := t.account(id)
	if err == nil && a == nil && t.op != nil && isPlayerAccount(id) {
		return t.create(id), nil
	}
	if err == nil && a == nil {
		err = failf(codes.NotFound, reasonAccountNotFound, "no account %q", id)
	}
	return a, err
}

// readAccount is stakeAccount for a read (GetAccount, ListStatement):
// besides, a system account of an operator that has not used it yet
// reads as empty (each operator has them all; the default operator's
// exist from the first start, another's come with their first transfer).
func (t *txn) readAccount(id string) (*account, error) {
	if isPlayerAccount(id) {
		return t.stakeAccount(id)
	}
	a, err := t.account(id)
	if err == nil && a == nil {
		a = &account{id: id, currency: currencyOf(id, t.def)}
	}
	return a, err
}

// attach names the hold the request's debit funds.
func (t *txn) attach(h *walletv1.Hold) {
	if t.op != nil && t.op.used {
		t.op.debitHold = h
	}
}

// released notes money a hold gave back (close, resize down).
func (t *txn) released(h *walletv1.Hold, amount int64, state walletv1.HoldState) {
	if t.op != nil && amount > 0 && isPlayerAccount(h.GetAccountId()) {
		t.op.releases = append(t.op.releases, release{hold: h.GetHoldId(), acct: h.GetAccountId(), amount: amount, state: state})
	}
}

// sweepOut is seamless mode's part of every ledger transaction, run just
// before flush: it records the debit the request brought in, follows the
// holds and rounds the transaction changed, moves whatever is available
// on a player account back to external:operator with the credit or
// rollback that returns it to the operator's wallet, and queues the
// round_end of every round it finished. A no-op in transfer mode.
func (t *txn) sweepOut() error {
	o := t.op
	if o == nil {
		return nil
	}
	if err := t.recordDebit(); err != nil {
		return err
	}
	tables, err := t.followHolds()
	if err != nil {
		return err
	}
	for _, id := range t.order {
		a := t.accts[id]
		if !isPlayerAccount(id) || a.balance-a.held <= 0 {
			continue
		}
		if err := t.sweepAccount(a, tables[id]); err != nil {
			return err
		}
	}
	o.dropClosed(t)
	return o.write()
}

// recordDebit marks the request's debit applied and files it with its
// hold and round.
func (t *txn) recordDebit() error {
	o := t.op
	if o.debit == nil {
		return nil
	}
	d := *o.debit
	if !o.used {
		return fmt.Errorf("wallet: debit %s was not taken by the request", d.ID)
	}
	d.Status, d.Updated = statusApplied, o.now
	o.txs[d.ID] = &d
	o.inflight[d.ID] = false
	rr, err := o.round(d.Account, d.Round, d.Table)
	if err != nil {
		return err
	}
	rr.Txs++
	rr.Staked = true
	if d.Session != "" {
		rr.Session = d.Session
	}
	if o.debitHold == nil {
		rr.Completed = true // a fee
		return nil
	}
	hr, err := o.hold(o.debitHold.GetHoldId())
	if err != nil {
		return err
	}
	if hr == nil {
		hr = &holdRec{Round: d.Round, Table: d.Table, Session: d.Session}
		o.holds[o.debitHold.GetHoldId()] = hr
		rr.Open++
	}
	hr.Debits = append(hr.Debits, debitRef{ID: d.ID, Amount: d.Amount})
	return nil
}

// followHolds updates the records of the player holds the transaction
// changed: a settlement marks them (and their rounds) settled, a hold
// that closes leaves its round. It returns the record of a hold per
// account, whose round and table the credits of a settlement take.
func (t *txn) followHolds() (map[string]*holdRec, error) {
	o := t.op
	tables := map[string]*holdRec{}
	stored := t.tx.Bucket(bucketHolds)
	for _, id := range slices.Sorted(maps.Keys(t.dirty)) {
		h := t.holds[id]
		if !isPlayerAccount(h.GetAccountId()) {
			continue
		}
		hr, err := o.hold(id)
		if err != nil || hr == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if tables[h.GetAccountId()] == nil || h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN {
			tables[h.GetAccountId()] = hr // a stake's round before a bank's
		}
		v := stored.Get([]byte(id))
		if v == nil {
			continue // placed by this request (recordDebit)
		}
		was := &walletv1.Hold{}
		if err := proto.Unmarshal(v, was); err != nil {
			return nil, err
		}
		rr, err := o.round(h.GetAccountId(), hr.Round, hr.Table)
		if err != nil {
			return nil, err
		}
		open := h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN
		if o.coup != "" {
			hr.Settled, rr.Completed = true, true
			hr.Bank = hr.Bank || open
		}
		if was.GetState() == walletv1.HoldState_HOLD_STATE_OPEN && !open {
			rr.Open--
			if h.GetState() == walletv1.HoldState_HOLD_STATE_POSTED || h.GetState() == walletv1.HoldState_HOLD_STATE_SETTLED {
				rr.Completed = true
			}
		}
	}
	return tables, nil
}

// sweepAccount moves a's available balance back to the operator: a
// settlement's as one payout credit in the round of his hold in it (held,
// the round of his stake; else his bank's; else the coup); otherwise hold by hold
// in the hold's round, a voided or expired stake that is exactly its
// debits, in a round without a credit to the player, by rolling the
// debits back, anything else by a credit (bank_return for a bank,
// refund for a stake).
func (t *txn) sweepAccount(a *account, held *holdRec) error {
	o := t.op
	ext, err := t.system(AccountOperator, a.currency)
	if err != nil {
		return err
	}
	avail := a.balance - a.held
	credit := func(amount int64, round, table, why string) error {
		if _, err := t.transfer(a, ext, amount, reasonOperatorCredit, round); err != nil {
			return err
		}
		rr, err := o.round(a.id, round, table)
		if err != nil {
			return err
		}
		rr.Txs++
		rr.Credited, rr.Staked = true, true
		x := o.newTx(kindCredit, a.id, round, rr.Table, amount)
		x.Reason = why
		o.enqueue(x)
		return nil
	}
	if o.coup != "" {
		if held != nil {
			return credit(avail, held.Round, held.Table, whyPayout)
		}
		return credit(avail, o.coup, "", whyPayout)
	}
	for _, r := range o.releases {
		part := min(r.amount, avail)
		if r.acct != a.id || part <= 0 {
			continue
		}
		avail -= part
		hr, err := o.hold(r.hold)
		if err != nil {
			return err
		}
		if hr == nil {
			if err := credit(part, t.fallbackRound(), "", whyRefund); err != nil {
				return err
			}
			continue
		}
		rr, err := o.round(a.id, hr.Round, hr.Table)
		if err != nil {
			return err
		}
		voided := r.state == walletv1.HoldState_HOLD_STATE_VOIDED || r.state == walletv1.HoldState_HOLD_STATE_EXPIRED
		if voided && !hr.Settled && !rr.Credited && part == r.amount && part == hr.debited() {
			for _, d := range hr.Debits {
				if _, err := t.transfer(a, ext, d.Amount, reasonOperatorRollback, hr.Round); err != nil {
					return err
				}
				x := o.newTx(kindRollback, a.id, hr.Round, hr.Table, d.Amount)
				x.RolledBack = d.ID
				o.enqueue(x)
				rr.Txs++
			}
			hr.Debits = nil
			continue
		}
		why := whyRefund
		if hr.Bank {
			why = whyBankReturn
		}
		if err := credit(part, hr.Round, hr.Table, why); err != nil {
			return err
		}
	}
	if avail > 0 {
		return credit(avail, t.fallbackRound(), "", whyPayout)
	}
	return nil
}

// fallbackRound is the round of money not traceable to a hold: the
// request's debit's (its excess), else a round of its own.
func (t *txn) fallbackRound() string {
	if t.op.debit != nil {
		return t.op.debit.Round
	}
	return "adjustment-" + ulid.Make().String()
}

// dropClosedHolds forgets the records of holds this transaction closed.
func (o *opTxn) dropClosed(t *txn) {
	for id := range t.dirty {
		if h := t.holds[id]; h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN {
			if hr, ok := o.holds[id]; ok && hr != nil {
				o.holds[id] = nil
			}
		}
	}
}

// keyLocks serialises the requests of one idempotency key.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func (l *keyLocks) lock(key string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	k := l.m[key]
	if k == nil {
		k = &keyLock{}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}

// requestHash is the idempotency record's hash of req under method.
func requestHash(method string, req proto.Message) []byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write(store.Hash(req))
	return h.Sum(nil)
}

// operatorCallTimeout bounds one call to the operator's wallet made while
// a request waits (the adapter has its own timeout too).
const operatorCallTimeout = 30 * time.Second

// staked runs a request that may put money at stake on a player account
// (PlaceHold, ResizeHold, ChargeFee), keyed by reqID, serialised per
// request id; one under a request id that CancelPlaceHold cancelled fails
// REQUEST_CANCELLED (cancel.go). In transfer mode it is idempotent. In seamless mode, serialised per request id: a dry
// run of apply finds the debit needed (none: idempotent as usual); the
// debit is logged pending, sent to the operator outside any bbolt
// transaction, and then: accepted, apply runs with the money brought in
// and the debit applied, in one transaction (a failure of apply then
// rolls the debit back, queued); refused, the request fails
// OPERATOR_REFUSED (INSUFFICIENT_FUNDS for the operator's
// INSUFFICIENT_FUNDS), stored; unknown, its rollback is queued and the
// request fails UNAVAILABLE OPERATOR_UNAVAILABLE, not stored (a retry is
// a new debit, with the next attempt number).
func staked[R proto.Message](ctx context.Context, s *Service, method, reqID string, req proto.Message, newResp func() R, apply func(t *txn) (R, error)) (R, error) {
	key := reqKey(reqID)
	var zero R
	// Under the request id's lock, which CancelPlaceHold takes too: a
	// request id cancelled is refused before anything is held or debited.
	sc := s.scopeOf(ctx)
	defer s.keys.lock(sc.key(key))()
	if err := s.checkNotCancelled(sc, reqID); err != nil {
		return zero, err
	}
	if s.op == nil {
		return idempotent(ctx, s, method, key, req, newResp, apply)
	}
	for try := 0; ; try++ {
		need, err := dryRun(s, method, key, reqID, req, apply)
		if err != nil {
			return zero, s.internal(method, err)
		}
		if need != nil {
			return debitThen(ctx, s, method, key, req, newResp, apply, need)
		}
		needed := false
		r, err := idempotent(ctx, s, method, key, req, newResp, func(t *txn) (R, error) {
			t.op.reqID = reqID
			r, err := apply(t)
			if errors.Is(err, errDebitNeeded) {
				needed = true
			}
			return r, err
		})
		if needed && try < 3 {
			continue // the ledger changed since the dry run
		}
		return r, err
	}
}

// dryRun reports the debit apply needs now, or nil: none, or the request
// is answered already, or apply fails (idempotent stores that).
func dryRun[R proto.Message](s *Service, method, key, reqID string, req proto.Message, apply func(t *txn) (R, error)) (*opTx, error) {
	hash := requestHash(method, req)
	var need *opTx
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, k := range []string{key, failKey(key)} {
			if _, found, _ := store.Lookup(tx, k, hash); found {
				return nil
			}
		}
		t := s.newTxn(tx)
		t.op.mode, t.op.reqID = fundDry, reqID
		if _, err := apply(t); err != nil {
			if errs.IsStatus(err) {
				return nil
			}
			return err
		}
		need = t.op.need
		return nil
	})
	return need, err
}

// debitThen debits need from the operator's wallet and runs apply with
// it (staked).
func debitThen[R proto.Message](ctx context.Context, s *Service, method, key string, req proto.Message, newResp func() R, apply func(t *txn) (R, error), need *opTx) (R, error) {
	var zero R
	d, err := s.logDebit(key, need)
	if err != nil {
		return zero, s.internal(method, err)
	}
	// No credit or round_end of the round is sent while the call is out,
	// nor until the relay has seen what its outcome queued (opoutbox.go
	// "Order").
	done := s.gate.debit(roundKey(d.Account, d.Round))
	defer func() { done(); s.notifyOperator() }()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), operatorCallTimeout)
	res, callErr := s.callOperator(cctx, d)
	cancel()
	if s.crashAfterDebit != nil && s.crashAfterDebit(d.ID) {
		return zero, status.Error(codes.Internal, "wallet: test crash after the debit's call")
	}
	if ref, ok := opwallet.IsRefusal(callErr); ok {
		// The relay learns of the round's idle wait (endIdleRounds).
		defer s.notifyOperator()
		return idempotent(ctx, s, method, key, req, newResp, func(t *txn) (R, error) {
			x := *d
			x.Status, x.OperatorCode, x.Updated = statusRefused, ref.Code, t.nowT.UTC()
			t.op.txs[x.ID] = &x
			t.op.inflight[x.ID] = false
			// The refused debit is a transaction of its round: with
			// nothing staked, the round ends cancelled after roundIdle
			// (write: endRounds).
			rr, err := t.op.round(x.Account, x.Round, x.Table)
			if err != nil {
				return zero, err
			}
			rr.Txs++
			if x.Session != "" {
				rr.Session = x.Session
			}
			if err := t.op.write(); err != nil {
				return zero, err
			}
			why := reasonOperatorRefused
			switch ref.Code {
			case opwallet.CodeInsufficientFunds:
				why = reasonInsufficient
			case opwallet.CodeSessionExpired:
				why = reasonSessionExpired
			}
			return zero, errs.WithMetadata(codes.FailedPrecondition, Domain, why, map[string]string{"operator_code": ref.Code},
				"the operator's wallet refused the debit of %d for %s: %s %s", d.Amount, d.Account, ref.Code, ref.Message)
		})
	}
	if callErr != nil {
		s.log.Warn("operator debit outcome unknown: rolling it back", "transaction_id", d.ID, "err", callErr)
		if err := s.rollbackDebit(d); err != nil {
			return zero, s.internal(method, err)
		}
		return zero, failf(codes.Unavailable, reasonOperatorUnavailable,
			"the operator's wallet did not answer the debit of %d for %s (rolled back); retry", d.Amount, d.Account)
	}
	d.OperatorTxID, d.OperatorBalance = res.OperatorTransactionID, &res.Balance
	r, err := idempotent(ctx, s, method, key, req, newResp, func(t *txn) (R, error) {
		t.op.mode, t.op.debit, t.op.reqID = fundApplied, d, d.RequestID
		r, err := apply(t)
		if err != nil && errs.IsStatus(err) {
			// Taken from the player but not staked: give it back.
			o := newOpTxn(t.tx, t.nowT, t.def)
			x := *d
			x.Status, x.Updated = statusApplied, o.now
			if err := o.rollback(&x); err != nil {
				return zero, err
			}
			o.txs[x.ID] = &x
			if werr := o.write(); werr != nil {
				return zero, werr
			}
		}
		return r, err
	})
	if status.Code(err) == codes.Internal {
		// Nothing was written: the debit stays in flight; roll it back now
		// (or at the next start).
		if rerr := s.rollbackDebit(d); rerr != nil {
			s.log.Error("could not queue the rollback of a debit: it is rolled back at the next start", "transaction_id", d.ID, "err", rerr)
		}
	}
	s.notifyOperator()
	return r, err
}

// logDebit logs the debit need of idempotency key key as pending, in
// flight, with the next attempt number.
func (s *Service) logDebit(key string, need *opTx) (*opTx, error) {
	d := *need
	err := s.commit.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOpAttempts)
		var n uint64
		if v := b.Get([]byte(key)); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		n++
		if err := b.Put([]byte(key), binary.BigEndian.AppendUint64(nil, n)); err != nil {
			return err
		}
		// The round may have ended since the dry run (endIdleRounds).
		round, err := newOpTxn(tx, s.now(), s.currency).freeRound(d.Account, d.Round)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		d.Round = round
		d.ID = "db-" + safeID(need.RequestID) + "-" + strconv.FormatUint(n, 10)
		d.Status, d.Created, d.Updated = statusPending, now, now
		if err := putTx(tx, &d); err != nil {
			return err
		}
		return tx.Bucket(bucketOpInflight).Put([]byte(d.ID), nil)
	})
	return &d, err
}

// rollbackDebit queues the rollback of debit d, whose outcome is unknown.
func (s *Service) rollbackDebit(d *opTx) error {
	err := s.commit.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketOpInflight).Get([]byte(d.ID)) == nil {
			return nil // decided meanwhile
		}
		o := newOpTxn(tx, s.now(), s.currency)
		if err := o.rollback(d); err != nil {
			return err
		}
		return o.write()
	})
	s.notifyOperator()
	return err
}

// endIdleRounds ends (cancelled) the rounds with only failed debits that
// waited roundIdle without a stake, and reports when the next is due
// (zero: none waiting).
func (s *Service) endIdleRounds() (time.Duration, error) {
	var next time.Duration
	var ended bool
	err := s.commit.Update(func(tx *bolt.Tx) error {
		next, ended = 0, false
		now := s.now()
		o := newOpTxn(tx, now, s.currency)
		// A round with a debit in flight waits for its outcome.
		busy, err := inflightRounds(tx)
		if err != nil {
			return err
		}
		c := tx.Bucket(bucketOpIdle).Cursor()
		for k, _ := c.First(); k != nil && len(k) > 8; k, _ = c.Next() {
			at := time.Unix(0, int64(binary.BigEndian.Uint64(k)))
			if due := at.Add(s.roundIdle); due.After(now) {
				next = due.Sub(now)
				break
			}
			key := string(k[8:])
			if busy[key] {
				next = s.roundIdle
				continue
			}
			acct, round, _ := strings.Cut(key, "\x00")
			if _, err := o.round(acct, round, ""); err != nil {
				return err
			}
			o.endIdle[key], ended = true, true
		}
		return o.write()
	})
	if ended {
		s.notifyOperator()
	}
	return next, err
}

// inflightRounds are the round keys with a debit in flight.
func inflightRounds(tx *bolt.Tx) (map[string]bool, error) {
	busy := map[string]bool{}
	err := tx.Bucket(bucketOpInflight).ForEach(func(k, _ []byte) error {
		d, err := getTx(tx, string(k))
		busy[roundKey(d.Account, d.Round)] = true
		return err
	})
	return busy, err
}

// endCancelled ends now (when o is written) the rounds waiting for a
// stake (IdleSince) in which the request key's debits were made: it was
// cancelled (CancelPlaceHold), so the table retries it no more. A round
// with a debit in flight still waits.
func (o *opTxn) endCancelled(key string) error {
	v := o.tx.Bucket(bucketOpAttempts).Get([]byte(key))
	if len(v) != 8 {
		return nil
	}
	busy, err := inflightRounds(o.tx)
	if err != nil {
		return err
	}
	reqID := strings.TrimPrefix(key, "req/")
	for n := range binary.BigEndian.Uint64(v) {
		d := &opTx{}
		found, err := getJSON(o.tx, bucketOpTx, "db-"+safeID(reqID)+"-"+strconv.FormatUint(n+1, 10), d)
		if err != nil {
			return err
		}
		k := roundKey(d.Account, d.Round)
		if !found || busy[k] {
			continue
		}
		r, err := o.round(d.Account, d.Round, d.Table)
		if err != nil {
			return err
		}
		if !r.IdleSince.IsZero() {
			o.endIdle[k] = true
		}
	}
	return nil
}

// recoverDebits queues, at start, the rollback of every debit still in
// flight: the service stopped between logging it and recording its
// outcome.
func (s *Service) recoverDebits() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		o := newOpTxn(tx, s.now(), s.currency)
		err := tx.Bucket(bucketOpInflight).ForEach(func(k, _ []byte) error {
			d, err := getTx(tx, string(k))
			if err != nil {
				return err
			}
			s.log.Warn("debit in flight at start: rolling it back", "transaction_id", d.ID)
			return o.rollback(d)
		})
		if err != nil {
			return err
		}
		return o.write()
	})
}
