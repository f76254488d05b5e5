package walletsvc

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// Statement page sizes.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// callerMayRead refuses a player reading an account other than his own,
// player:<id> or player:<id>@<CUR> in any currency (PERMISSION_DENIED
// NOT_YOUR_ACCOUNT); no caller is UNAUTHENTICATED.
func callerMayRead(ctx context.Context, id string) error {
	c, ok := auth.FromContext(ctx)
	if !ok {
		return failf(codes.Unauthenticated, reason(walletv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED), "no caller identity")
	}
	if base, _ := splitCurrency(id, ""); c.Role == auth.RolePlayer && base != playerPrefix+c.Subject {
		return failf(codes.PermissionDenied, reasonNotYourAccount, "player %q may not read %q", c.Subject, id)
	}
	return nil
}

// paging reads a page size (0: defaultPageSize, at most maxPageSize;
// negative: INVALID_ARGUMENT) and a page token, a sequence in decimal
// (INVALID_PAGE_TOKEN when it is not).
func paging(pageSize int32, tok string) (size int, after uint64, err error) {
	size = int(pageSize)
	switch {
	case size < 0:
		return 0, 0, failf(codes.InvalidArgument, reasonInvalidArgument, "page_size %d is negative", size)
	case size == 0:
		size = defaultPageSize
	case size > maxPageSize:
		size = maxPageSize
	}
	if tok != "" {
		v, err := strconv.ParseUint(tok, 10, 64)
		if err != nil || v == 0 {
			return 0, 0, failf(codes.InvalidArgument, reasonInvalidPageToken, "page_token %q is not one of ours", tok)
		}
		after = v
	}
	return size, after, nil
}

// ListStatement pages through one account's transfers, oldest first. The
// page token is the sequence of the last transfer returned (decimal).
func (s *Service) ListStatement(ctx context.Context, req *walletv1.ListStatementRequest) (*walletv1.ListStatementResponse, error) {
	id := req.GetAccountId()
	if err := checkAccount(id, s.cur); err != nil {
		return nil, err
	}
	if err := callerMayRead(ctx, id); err != nil {
		return nil, err
	}
	size, after, err := paging(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &walletv1.ListStatementResponse{}
	err = s.db.View(func(tx *bolt.Tx) error {
		a, err := s.newTxn(tx).stakeAccount(id)
		if err != nil {
			return err
		}
		out.Account = a.proto(s.cur)
		prefix := statementPrefix(id)
		trs := tx.Bucket(bucketTransfers)
		c := tx.Bucket(bucketStatements).Cursor()
		for k, v := c.Seek(statementKey(id, after+1)); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
			if len(out.Entries) == size {
				out.NextPageToken = strconv.FormatUint(after, 10)
				break
			}
			seqKey := k[len(prefix):]
			after = binary.BigEndian.Uint64(seqKey)
			tr := &walletv1.Transfer{}
			if err := proto.Unmarshal(trs.Get(seqKey), tr); err != nil {
				return fmt.Errorf("wallet: transfer %d: %w", after, err)
			}
			tr.Sequence = after
			if tr.CurrencyCode == "" {
				tr.CurrencyCode = currencyOf(id, s.currency)
			}
			amount := tr.GetAmount()
			if tr.GetDebitAccountId() == id {
				amount = -amount
			}
			out.Entries = append(out.Entries, &walletv1.StatementEntry{Transfer: tr, Amount: amount,
				BalanceAfter: int64(binary.BigEndian.Uint64(v))})
		}
		return nil
	})
	if err != nil {
		return nil, s.internal("ListStatement", err)
	}
	return out, nil
}

// AuditLedger recomputes the books from the transfer log in one snapshot.
func (s *Service) AuditLedger(_ context.Context, _ *walletv1.AuditLedgerRequest) (*walletv1.AuditLedgerResponse, error) {
	var r *walletv1.AuditLedgerResponse
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = audit(tx, s.currency)
		return err
	})
	if err != nil {
		return nil, s.internal("AuditLedger", err)
	}
	r.AuditTime = timestamppb.New(s.now())
	return r, nil
}

// audit checks every invariant of doc.go in tx.
func audit(tx *bolt.Tx, def string) (*walletv1.AuditLedgerResponse, error) {
	r := &walletv1.AuditLedgerResponse{}
	bad := func(format string, args ...any) {
		if len(r.Discrepancies) < 100 {
			r.Discrepancies = append(r.Discrepancies, fmt.Sprintf(format, args...))
		}
	}
	type acct struct {
		balance, held, replay, openHeld int64
		overflow                        bool // the replay or the open holds left the int64 range
	}
	accts := map[string]*acct{}
	err := tx.Bucket(bucketAccounts).ForEach(func(k, v []byte) error {
		b, h, err := decodeAccount(v)
		accts[string(k)] = &acct{balance: b, held: h}
		return err
	})
	if err != nil {
		return nil, err
	}
	r.AccountsChecked = int64(len(accts))
	// The sums are exact (big integers): a ledger's turnover may exceed
	// int64, and a wrapped sum could hide a discrepancy.
	type sums struct{ debits, credits, balances, inWallet, held big.Int }
	cur := map[string]*sums{}
	totals := func(c string) *sums {
		if cur[c] == nil {
			cur[c] = &sums{}
		}
		return cur[c]
	}
	// move adds v to *x, or marks the account overflowed (a valid log
	// never leaves the int64 range: every running balance was stored).
	move := func(a *acct, x *int64, v int64, id string, seq uint64) {
		if a.overflow {
			return
		}
		n, ok := add(*x, v)
		if !ok {
			a.overflow = true
			if seq > 0 {
				bad("%s: the replayed balance leaves the int64 range at transfer %d", id, seq)
			} else {
				bad("%s: its open holds sum to more than the int64 range", id)
			}
			return
		}
		*x = n
	}
	var expect uint64 = 1
	var scratch big.Int
	st := tx.Bucket(bucketStatements)
	err = tx.Bucket(bucketTransfers).ForEach(func(k, v []byte) error {
		seq := binary.BigEndian.Uint64(k)
		if len(k) != 8 || seq != expect {
			bad("transfer log: key %x where sequence %d was expected", k, expect)
		}
		expect = seq + 1
		tr := &walletv1.Transfer{}
		if err := proto.Unmarshal(v, tr); err != nil {
			bad("transfer %d: %v", seq, err)
			return nil
		}
		r.TransfersReplayed++
		r.LastSequence = seq
		d, c := accts[tr.GetDebitAccountId()], accts[tr.GetCreditAccountId()]
		if d == nil || c == nil || tr.GetDebitAccountId() == tr.GetCreditAccountId() {
			bad("transfer %d (%s): unknown or identical accounts %s -> %s", seq, tr.GetTransferId(), tr.GetDebitAccountId(), tr.GetCreditAccountId())
			return nil
		}
		if tr.GetAmount() <= 0 {
			bad("transfer %d (%s): amount %d", seq, tr.GetTransferId(), tr.GetAmount())
		}
		dc, cc := currencyOf(tr.GetDebitAccountId(), def), currencyOf(tr.GetCreditAccountId(), def)
		if dc != cc || (tr.GetCurrencyCode() != "" && tr.GetCurrencyCode() != dc) {
			bad("transfer %d (%s): currencies %s, %s, %s", seq, tr.GetTransferId(), dc, cc, tr.GetCurrencyCode())
		}
		move(d, &d.replay, -tr.GetAmount(), tr.GetDebitAccountId(), seq)
		move(c, &c.replay, tr.GetAmount(), tr.GetCreditAccountId(), seq)
		t := totals(dc)
		scratch.SetInt64(tr.GetAmount())
		t.debits.Add(&t.debits, &scratch)
		t.credits.Add(&t.credits, &scratch)
		for _, side := range []struct {
			id   string
			want int64
		}{{tr.GetDebitAccountId(), d.replay}, {tr.GetCreditAccountId(), c.replay}} {
			v := st.Get(statementKey(side.id, seq))
			if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) != side.want {
				bad("statement of %s at transfer %d: missing or wrong running balance", side.id, seq)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = tx.Bucket(bucketHolds).ForEach(func(k, v []byte) error {
		h := &walletv1.Hold{}
		if err := proto.Unmarshal(v, h); err != nil {
			bad("hold %s: %v", k, err)
			return nil
		}
		r.HoldsChecked++
		if h.GetAmount() < 0 || h.GetPostedAmount() < 0 || h.GetPostedAmount() > h.GetAmount() {
			bad("hold %s: amount %d posted %d", k, h.GetAmount(), h.GetPostedAmount())
		}
		a := accts[h.GetAccountId()]
		if a == nil {
			bad("hold %s on unknown account %s", k, h.GetAccountId())
			return nil
		}
		if h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
			r.OpenHolds++
			move(a, &a.openHeld, h.GetAmount(), h.GetAccountId(), 0)
			t := totals(currencyOf(h.GetAccountId(), def))
			t.held.Add(&t.held, big.NewInt(h.GetAmount()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(accts))
	for id := range accts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := accts[id]
		c := currencyOf(id, def)
		t := totals(c)
		b := big.NewInt(a.balance)
		t.balances.Add(&t.balances, b)
		if isExternal(id) {
			t.inWallet.Sub(&t.inWallet, b)
		}
		if a.overflow {
			continue // reported
		}
		if a.balance != a.replay {
			bad("%s: stored balance %d, the transfer log gives %d", id, a.balance, a.replay)
		}
		if a.held != a.openHeld {
			bad("%s: held %d, its open holds sum to %d", id, a.held, a.openHeld)
		}
		if a.held < 0 || (!isExternal(id) && a.held > a.balance) {
			bad("%s: held %d exceeds balance %d", id, a.held, a.balance)
		}
		if !isExternal(id) && a.balance < 0 {
			bad("%s: negative balance %d", id, a.balance)
		}
	}
	codes := make([]string, 0, len(cur))
	for c := range cur {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		t := cur[c]
		if t.balances.Sign() != 0 {
			bad("%s: balances sum to %s, not 0", c, &t.balances)
		}
		if t.debits.Cmp(&t.credits) != 0 {
			bad("%s: debits %s, credits %s", c, &t.debits, &t.credits)
		}
		// Each of these is at most the money in the wallet, which Deposit
		// keeps within int64 (ledger.go): beyond it, the books are wrong.
		for _, v := range []struct {
			name string
			x    *big.Int
		}{{"money in the wallet", &t.inWallet}, {"open holds", &t.held}, {"sum of the balances", &t.balances}} {
			if !v.x.IsInt64() {
				bad("%s: %s %s is outside the int64 range", c, v.name, v.x)
			}
		}
		r.Currencies = append(r.Currencies, &walletv1.CurrencyTotals{
			CurrencyCode: c, TotalDebits: saturate(&t.debits), TotalCredits: saturate(&t.credits),
			TotalDebitsDecimal: t.debits.String(), TotalCreditsDecimal: t.credits.String(),
			SumOfBalances: saturate(&t.balances), InWallet: saturate(&t.inWallet), Held: saturate(&t.held),
		})
	}
	r.Balanced = len(r.Discrepancies) == 0
	return r, nil
}

// saturate is x clamped to the int64 range.
func saturate(x *big.Int) int64 {
	switch {
	case x.IsInt64():
		return x.Int64()
	case x.Sign() > 0:
		return math.MaxInt64
	default:
		return math.MinInt64
	}
}
