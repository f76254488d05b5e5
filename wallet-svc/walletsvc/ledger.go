package walletsvc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/currency"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/wallet-svc/walletevents"
)

// schemaVersion is the storage layout documented in doc.go. Version 1
// files gain the "statements" and "expiry" buckets (and the statement
// index is rebuilt from the transfer log) at start: the layout only grew.
const schemaVersion = 1

// The service's buckets and keys (doc.go).
var (
	bucketWallet     = []byte("wallet")
	bucketAccounts   = []byte("accounts")
	bucketHolds      = []byte("holds")
	bucketTransfers  = []byte("transfers")
	bucketStatements = []byte("statements")
	bucketExpiry     = []byte("expiry")
	keyCurrency      = []byte("currency")
)

// The system accounts (in the wallet's default currency; "@<CUR>" appended
// for another currency).
const (
	AccountCommission = "house:commission"
	AccountHouseBank  = "house:bank"
	AccountExternal   = "external:funding"
	playerPrefix      = "player:"
)

var marshal = proto.MarshalOptions{Deterministic: true}

// splitCurrency splits "<base>@<CUR>" into base and currency; without a
// suffix the currency is def.
func splitCurrency(id, def string) (base, cur string) {
	if i := strings.LastIndexByte(id, '@'); i >= 0 {
		return id[:i], id[i+1:]
	}
	return id, def
}

// currencyOf is the currency of account id.
func currencyOf(id, def string) string {
	_, c := splitCurrency(id, def)
	return c
}

// systemID is the id of system account base in currency cur.
func systemID(base, cur, def string) string {
	if cur == def {
		return base
	}
	return base + "@" + cur
}

// isExternal reports whether id is an external account (external:funding
// or, in seamless mode, external:operator, in any currency): the other
// side of the money entering and leaving the wallet, the only accounts
// that go negative.
func isExternal(id string) bool {
	base, _ := splitCurrency(bare(id), "")
	return base == AccountExternal || base == AccountOperator
}

// initLedger creates the system accounts on a new file, checks the
// currency of an existing one and builds the statement index of a file
// written before it existed.
func initLedger(db *bolt.DB, currency string) error {
	return db.Update(func(tx *bolt.Tx) error {
		w := tx.Bucket(bucketWallet)
		switch got := w.Get(keyCurrency); {
		case got == nil:
			if err := w.Put(keyCurrency, []byte(currency)); err != nil {
				return err
			}
		case string(got) != currency:
			return fmt.Errorf("wallet: the ledger file is in %s, the service was started with currency %s", got, currency)
		}
		accts := tx.Bucket(bucketAccounts)
		for _, id := range []string{AccountCommission, AccountExternal, AccountHouseBank} {
			if accts.Get([]byte(id)) == nil {
				if err := accts.Put([]byte(id), encodeAccount(0, 0)); err != nil {
					return err
				}
			}
		}
		st := tx.Bucket(bucketStatements)
		if k, _ := st.Cursor().First(); k != nil {
			return nil
		}
		// Backfill: replay the log into the statement index.
		bal := map[string]int64{}
		return tx.Bucket(bucketTransfers).ForEach(func(k, v []byte) error {
			tr := &walletv1.Transfer{}
			if err := proto.Unmarshal(v, tr); err != nil {
				return err
			}
			seq := binary.BigEndian.Uint64(k)
			bal[tr.GetDebitAccountId()] -= tr.GetAmount()
			bal[tr.GetCreditAccountId()] += tr.GetAmount()
			if err := st.Put(statementKey(tr.GetDebitAccountId(), seq), be64(bal[tr.GetDebitAccountId()])); err != nil {
				return err
			}
			return st.Put(statementKey(tr.GetCreditAccountId(), seq), be64(bal[tr.GetCreditAccountId()]))
		})
	})
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// statementKey is account id, 0x00, 8-byte big-endian transfer sequence.
func statementKey(acct string, seq uint64) []byte {
	k := append([]byte(acct), 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

func statementPrefix(acct string) []byte { return append([]byte(acct), 0) }

// expiryKey is the 8-byte big-endian expire time (Unix ns) then the hold id.
func expiryKey(at time.Time, holdID string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), holdID...)
}

func encodeAccount(balance, held int64) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(balance))
	return binary.BigEndian.AppendUint64(b, uint64(held))
}

func decodeAccount(v []byte) (balance, held int64, err error) {
	if len(v) != 16 {
		return 0, 0, fmt.Errorf("wallet: corrupt account record of %d bytes", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), nil
}

// account is an account loaded in a transaction.
type account struct {
	id            string
	currency      string
	balance, held int64
}

func (a *account) proto(cs currencies) *walletv1.Account {
	return &walletv1.Account{AccountId: a.id, CurrencyCode: a.currency,
		Balance: a.balance, Held: a.held, Available: a.balance - a.held, CurrencyExponent: cs.exponent(a.currency)}
}

// pendingTransfer is a transfer with the balances it left, for the
// statement index and the event.
type pendingTransfer struct {
	tr                    *walletv1.Transfer
	debitAfter, creditAft int64
}

// txn is the working set of one request inside a read-write transaction:
// accounts and holds are loaded once, changed in memory, and written with
// the new transfers, index entries and events by flush. Nothing is written
// before flush, so a request that fails leaves the transaction untouched.
type txn struct {
	tx   *bolt.Tx
	nowT time.Time
	now  *timestamppb.Timestamp
	def  string // the wallet's default currency
	// known: the currencies the wallet accepts (their exponents).
	known     currency.Set
	accts     map[string]*account
	holds     map[string]*walletv1.Hold
	dirty     map[string]bool // hold ids to write
	order     []string        // account ids in load order, for a stable write order
	transfers []pendingTransfer
	expiryAdd [][]byte
	expiryDel [][]byte
	// gap is the session gap of the players' limits (sessionGap).
	gap time.Duration
	// op is the seamless mode's working set (seamless.go); nil in
	// transfer mode.
	op *opTxn
	// placed is the hold a PlaceHold placed (cancel.go).
	placed *placement
	// sc is the operator whose accounts and holds the transaction may
	// touch (operator.go): its system accounts are his, another
	// operator's hold is one that does not exist.
	sc scope
}

func newTxn(tx *bolt.Tx, now time.Time, def string) *txn {
	return &txn{tx: tx, nowT: now, now: timestamppb.New(now), def: def, accts: map[string]*account{},
		holds: map[string]*walletv1.Hold{}, dirty: map[string]bool{}}
}

// account returns the account id, or nil when it does not exist.
func (t *txn) account(id string) (*account, error) {
	if a, ok := t.accts[id]; ok {
		return a, nil
	}
	v := t.tx.Bucket(bucketAccounts).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	bal, held, err := decodeAccount(v)
	if err != nil {
		return nil, err
	}
	a := &account{id: id, currency: currencyOf(id, t.def), balance: bal, held: held}
	t.accts[id] = a
	t.order = append(t.order, id)
	return a, nil
}

// mustAccount is account with ACCOUNT_NOT_FOUND for a missing one.
func (t *txn) mustAccount(id string) (*account, error) {
	a, err := t.account(id)
	if err == nil && a == nil {
		err = failf(codes.NotFound, reasonAccountNotFound, "no account %q", id)
	}
	return a, err
}

// system returns system account base in currency cur, creating it (the
// default currency's exist from the first start; another currency's come
// with its first use).
func (t *txn) system(base, cur string) (*account, error) {
	id := t.sc.inner(systemID(base, cur, t.def))
	a, err := t.account(id)
	if err != nil || a != nil {
		return a, err
	}
	return t.create(id), nil
}

// create adds a new empty account (the caller checked it is absent).
func (t *txn) create(id string) *account {
	a := &account{id: id, currency: currencyOf(id, t.def)}
	t.accts[id] = a
	t.order = append(t.order, id)
	return a
}

// hold returns the hold id or HOLD_NOT_FOUND.
func (t *txn) hold(id string) (*walletv1.Hold, error) {
	if h, ok := t.holds[id]; ok {
		return h, nil
	}
	v := t.tx.Bucket(bucketHolds).Get([]byte(id))
	if v == nil {
		return nil, failf(codes.NotFound, reasonHoldNotFound, "no hold %q", id)
	}
	h := &walletv1.Hold{}
	if err := proto.Unmarshal(v, h); err != nil {
		return nil, fmt.Errorf("wallet: corrupt hold %q: %w", id, err)
	}
	if !t.sc.owns(h.GetAccountId()) { // another operator's: as if it did not exist
		return nil, failf(codes.NotFound, reasonHoldNotFound, "no hold %q", id)
	}
	t.holds[id] = h
	return h, nil
}

// openHold returns an open, unexpired hold or HOLD_NOT_FOUND /
// HOLD_NOT_OPEN (naming how it was resolved) / HOLD_EXPIRED.
func (t *txn) openHold(id string) (*walletv1.Hold, error) {
	h, err := t.hold(id)
	if err != nil {
		return nil, err
	}
	if h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN {
		return nil, failf(codes.FailedPrecondition, reasonHoldNotOpen, "hold %q was already resolved: %s", id, h.GetState())
	}
	if h.ExpireTime != nil && !t.nowT.Before(h.GetExpireTime().AsTime()) {
		return nil, failf(codes.FailedPrecondition, reasonHoldExpired, "hold %q expired at %s", id, h.GetExpireTime().AsTime().Format(time.RFC3339Nano))
	}
	return h, nil
}

// newHold reserves amount on a (the caller checked available); ttl > 0
// sets its expire time.
func (t *txn) newHold(a *account, amount int64, reference string, ttl time.Duration) (*walletv1.Hold, error) {
	held, ok := add(a.held, amount)
	if !ok {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "amount %d too large", amount)
	}
	a.held = held
	h := &walletv1.Hold{HoldId: ulid.Make().String(), AccountId: a.id, Amount: amount,
		State: walletv1.HoldState_HOLD_STATE_OPEN, Reference: reference, CreateTime: t.now}
	if ttl > 0 {
		at := t.nowT.Add(ttl)
		h.ExpireTime = timestamppb.New(at)
		t.expiryAdd = append(t.expiryAdd, expiryKey(at, h.HoldId))
	}
	t.holds[h.HoldId] = h
	t.dirty[h.HoldId] = true
	return h, nil
}

// close resolves an open hold of a: its amount leaves a's held.
func (t *txn) close(h *walletv1.Hold, a *account, state walletv1.HoldState) {
	t.released(h, h.Amount, state)
	a.held -= h.Amount
	h.State = state
	h.ResolveTime = t.now
	if h.ExpireTime != nil {
		t.expiryDel = append(t.expiryDel, expiryKey(h.GetExpireTime().AsTime(), h.HoldId))
	}
	t.dirty[h.HoldId] = true
}

// resize sets an open hold's amount (the caller checked the account).
func (t *txn) resize(h *walletv1.Hold, a *account, amount int64) {
	t.released(h, h.Amount-amount, walletv1.HoldState_HOLD_STATE_OPEN)
	a.held += amount - h.Amount
	h.Amount = amount
	t.dirty[h.HoldId] = true
}

// transfer moves amount from debit to credit, refusing accounts of two
// currencies (CURRENCY_MISMATCH) and over- and underflow (INVALID_AMOUNT):
// no balance leaves the int64 range, and external funding never goes
// below -MaxInt64, so that the money in the wallet (minus external
// funding, the sum of the other balances) and every per-currency total of
// the audit but the turnover fit an int64 too. flush checks the other
// invariants.
func (t *txn) transfer(debit, credit *account, amount int64, reason, reference string) (*walletv1.Transfer, error) {
	if amount <= 0 {
		return nil, fmt.Errorf("wallet: transfer of %d", amount)
	}
	if debit.currency != credit.currency {
		return nil, failf(codes.FailedPrecondition, reasonCurrencyMismatch,
			"%s is in %s, %s in %s", debit.id, debit.currency, credit.id, credit.currency)
	}
	if debit.id == credit.id {
		return nil, fmt.Errorf("wallet: transfer from %s to itself", debit.id)
	}
	db, ok1 := add(debit.balance, -amount)
	cr, ok2 := add(credit.balance, amount)
	if !ok1 || !ok2 {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount,
			"amount %d would overflow an account balance", amount)
	}
	if isExternal(debit.id) && db == math.MinInt64 {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount,
			"amount %d would put more than %d in the wallet's %s", amount, int64(math.MaxInt64), debit.currency)
	}
	debit.balance, credit.balance = db, cr
	tr := &walletv1.Transfer{TransferId: ulid.Make().String(), DebitAccountId: debit.id,
		CreditAccountId: credit.id, Amount: amount, Reason: reason, Reference: reference, CreateTime: t.now,
		CurrencyCode: debit.currency, DebitBalanceAfter: db, CreditBalanceAfter: cr,
		CurrencyExponent: currencies{known: t.known}.exponent(debit.currency),
		Seamless:         t.op != nil && (isPlayerAccount(debit.id) || isPlayerAccount(credit.id))}
	t.transfers = append(t.transfers, pendingTransfer{tr: tr, debitAfter: db, creditAft: cr})
	return tr, nil
}

// needFunds refuses (INSUFFICIENT_FUNDS) when a non-external account has
// gone below its held amount: what flush would treat as a broken
// invariant, reported as the caller's problem where an account pays out
// of its balance (house:bank).
func needFunds(a *account) error {
	if !isExternal(a.id) && a.balance < a.held {
		return failf(codes.FailedPrecondition, reasonInsufficient, "%s cannot pay: balance would be %d with %d held", a.id, a.balance, a.held)
	}
	return nil
}

// flush checks the account invariants and writes what changed: accounts,
// holds, the expiry index, transfers (with their gapless sequence), the
// statement index and one outbox event per transfer.
func (t *txn) flush() error {
	accts := t.tx.Bucket(bucketAccounts)
	for _, id := range t.order {
		a := t.accts[id]
		ext := isExternal(id)
		if a.held < 0 || (!ext && a.held > a.balance) || (ext && a.held != 0) {
			return fmt.Errorf("wallet: invariant broken on %s: balance %d held %d", id, a.balance, a.held)
		}
		if err := accts.Put([]byte(id), encodeAccount(a.balance, a.held)); err != nil {
			return err
		}
	}
	holds := t.tx.Bucket(bucketHolds)
	for id := range t.dirty {
		v, err := marshal.Marshal(t.holds[id])
		if err != nil {
			return err
		}
		if err := holds.Put([]byte(id), v); err != nil {
			return err
		}
	}
	exp := t.tx.Bucket(bucketExpiry)
	for _, k := range t.expiryAdd {
		if err := exp.Put(k, nil); err != nil {
			return err
		}
	}
	for _, k := range t.expiryDel {
		if err := exp.Delete(k); err != nil {
			return err
		}
	}
	trs := t.tx.Bucket(bucketTransfers)
	st := t.tx.Bucket(bucketStatements)
	var evs []*eventsv1.WalletEvent
	for _, p := range t.transfers {
		seq, err := trs.NextSequence()
		if err != nil {
			return err
		}
		tr := p.tr
		tr.Sequence = seq
		v, err := marshal.Marshal(tr)
		if err != nil {
			return err
		}
		if err := trs.Put(binary.BigEndian.AppendUint64(nil, seq), v); err != nil {
			return err
		}
		if err := st.Put(statementKey(tr.DebitAccountId, seq), be64(p.debitAfter)); err != nil {
			return err
		}
		if err := st.Put(statementKey(tr.CreditAccountId, seq), be64(p.creditAft)); err != nil {
			return err
		}
		if isGameTransfer(tr.Reason) {
			if err := t.notePlay(tr.DebitAccountId, -tr.Amount); err != nil {
				return err
			}
			if err := t.notePlay(tr.CreditAccountId, tr.Amount); err != nil {
				return err
			}
		}
		evs = append(evs, &eventsv1.WalletEvent{EventId: tr.TransferId, Sequence: seq, OccurTime: tr.CreateTime,
			OperatorId: operatorOfKey(tr.DebitAccountId, t.sc.def),
			Payload: &eventsv1.WalletEvent_TransferRecorded{TransferRecorded: &eventsv1.TransferRecorded{
				TransferId: tr.TransferId, DebitAccountId: bare(tr.DebitAccountId), CreditAccountId: bare(tr.CreditAccountId),
				Amount: tr.Amount, CurrencyCode: tr.CurrencyCode, Reason: tr.Reason, Reference: tr.Reference,
				DebitBalanceAfter: p.debitAfter, CreditBalanceAfter: p.creditAft, CurrencyExponent: tr.CurrencyExponent}}})
	}
	if len(evs) == 0 {
		return nil
	}
	// The transaction's transfers as one message (version 2,
	// docs/events.md): a chemmy.events.v1.WalletEventBatch.
	b, err := walletevents.Batch(evs)
	if err != nil {
		return err
	}
	v, err := marshal.Marshal(b)
	if err != nil {
		return err
	}
	first := evs[0].GetEventId()
	return outbox.PutEvents(t.tx, walletevents.Subject(first), first, len(evs), "", v)
}

// hasPrefix is bytes.HasPrefix, named for the cursor loops.
func hasPrefix(k, p []byte) bool { return bytes.HasPrefix(k, p) }

// add returns a+b and whether it did not overflow.
func add(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}
