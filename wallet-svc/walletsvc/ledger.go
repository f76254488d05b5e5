package walletsvc

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// schemaVersion is the storage layout documented in doc.go.
const schemaVersion = 1

// The service's buckets and keys (doc.go).
var (
	bucketWallet    = []byte("wallet")
	bucketAccounts  = []byte("accounts")
	bucketHolds     = []byte("holds")
	bucketTransfers = []byte("transfers")
	keyCurrency     = []byte("currency")
)

// The system accounts.
const (
	AccountCommission = "house:commission"
	AccountExternal   = "external:funding"
	playerPrefix      = "player:"
)

var marshal = proto.MarshalOptions{Deterministic: true}

// initLedger creates the system accounts on a new file and checks the
// currency of an existing one.
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
		for _, id := range []string{AccountCommission, AccountExternal} {
			if accts.Get([]byte(id)) == nil {
				if err := accts.Put([]byte(id), encodeAccount(0, 0)); err != nil {
					return err
				}
			}
		}
		return nil
	})
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
	balance, held int64
}

func (a *account) proto(currency string) *walletv1.Account {
	return &walletv1.Account{AccountId: a.id, CurrencyCode: currency,
		Balance: a.balance, Held: a.held, Available: a.balance - a.held}
}

// txn is the working set of one request inside a read-write transaction:
// accounts and holds are loaded once, changed in memory, and written with
// the new transfers by flush.
type txn struct {
	tx        *bolt.Tx
	now       *timestamppb.Timestamp
	accts     map[string]*account
	holds     map[string]*walletv1.Hold
	dirty     map[string]bool // hold ids to write
	order     []string        // account ids in load order, for a stable write order
	transfers []*walletv1.Transfer
}

func newTxn(tx *bolt.Tx, now time.Time) *txn {
	return &txn{tx: tx, now: timestamppb.New(now), accts: map[string]*account{},
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
	a := &account{id: id, balance: bal, held: held}
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

// create adds a new empty account (the caller checked it is absent).
func (t *txn) create(id string) *account {
	a := &account{id: id}
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
	t.holds[id] = h
	return h, nil
}

// openHold returns an open hold or HOLD_NOT_FOUND / HOLD_NOT_OPEN.
func (t *txn) openHold(id string) (*walletv1.Hold, error) {
	h, err := t.hold(id)
	if err != nil {
		return nil, err
	}
	if h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN {
		return nil, failf(codes.FailedPrecondition, reasonHoldNotOpen, "hold %q is %s", id, h.GetState())
	}
	return h, nil
}

// newHold reserves amount on a (the caller checked available).
func (t *txn) newHold(a *account, amount int64, reference string) (*walletv1.Hold, error) {
	held, ok := add(a.held, amount)
	if !ok {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "amount %d too large", amount)
	}
	a.held = held
	h := &walletv1.Hold{HoldId: ulid.Make().String(), AccountId: a.id, Amount: amount,
		State: walletv1.HoldState_HOLD_STATE_OPEN, Reference: reference, CreateTime: t.now}
	t.holds[h.HoldId] = h
	t.dirty[h.HoldId] = true
	return h, nil
}

// close resolves an open hold of a: its amount leaves a's held.
func (t *txn) close(h *walletv1.Hold, a *account, state walletv1.HoldState) {
	a.held -= h.Amount
	h.State = state
	t.dirty[h.HoldId] = true
}

// resize sets an open hold's amount (the caller checked the account).
func (t *txn) resize(h *walletv1.Hold, a *account, amount int64) {
	a.held += amount - h.Amount
	h.Amount = amount
	t.dirty[h.HoldId] = true
}

// transfer moves amount from debit to credit, refusing over- and
// underflow (INVALID_AMOUNT); flush checks the other invariants.
func (t *txn) transfer(debit, credit *account, amount int64, reason, reference string) (*walletv1.Transfer, error) {
	if amount <= 0 {
		return nil, fmt.Errorf("wallet: transfer of %d", amount)
	}
	db, ok1 := add(debit.balance, -amount)
	cr, ok2 := add(credit.balance, amount)
	if !ok1 || !ok2 {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount,
			"amount %d would overflow an account balance", amount)
	}
	debit.balance, credit.balance = db, cr
	tr := &walletv1.Transfer{TransferId: ulid.Make().String(), DebitAccountId: debit.id,
		CreditAccountId: credit.id, Amount: amount, Reason: reason, Reference: reference, CreateTime: t.now}
	t.transfers = append(t.transfers, tr)
	return tr, nil
}

// flush checks the account invariants and writes what changed.
func (t *txn) flush() error {
	accts := t.tx.Bucket(bucketAccounts)
	for _, id := range t.order {
		a := t.accts[id]
		if a.held < 0 || (id != AccountExternal && a.held > a.balance) || (id == AccountExternal && a.held != 0) {
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
	trs := t.tx.Bucket(bucketTransfers)
	for _, tr := range t.transfers {
		seq, err := trs.NextSequence()
		if err != nil {
			return err
		}
		v, err := marshal.Marshal(tr)
		if err != nil {
			return err
		}
		if err := trs.Put(binary.BigEndian.AppendUint64(nil, seq), v); err != nil {
			return err
		}
	}
	return nil
}

// add returns a+b and whether it did not overflow.
func add(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}
