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
	if base, _ := splitCurrency(bare(id), ""); c.Role == auth.RolePlayer && base != playerPrefix+c.Subject {
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
		a, err := s.txnFor(ctx, tx).readAccount(id)
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

// AuditLedger recomputes the books from the transfer log in one snapshot:
// every operator's apart (each has his own external and house accounts,
// so each one's balances sum to 0) and their sum. A deployment-wide
// auditor sees every operator's books (or one's, naming it in
// operator_id); any other caller his own operator's only.
func (s *Service) AuditLedger(ctx context.Context, _ *walletv1.AuditLedgerRequest) (*walletv1.AuditLedgerResponse, error) {
	sc := s.scopeOf(ctx)
	var r *walletv1.AuditLedgerResponse
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = audit(tx, s.currency, sc)
		return err
	})
	if err != nil {
		return nil, s.internal("AuditLedger", err)
	}
	r.AuditTime = timestamppb.New(s.now())
	return r, nil
}

// audit checks every invariant of doc.go in tx, for the operators sc
// sees: per operator (OperatorBooks) and in sum. A discrepancy of the
// transfer log itself (a gap in its sequence, a record that does not
// decode) is every operator's and names no account.
func audit(tx *bolt.Tx, def string, sc scope) (*walletv1.AuditLedgerResponse, error) {
	r := &walletv1.AuditLedgerResponse{}
	type books struct {
		pb    *walletv1.OperatorBooks
		bad   []string
		last  uint64
		holds int64
	}
	ops := map[string]*books{}
	book := func(op string) *books {
		if ops[op] == nil {
			ops[op] = &books{pb: &walletv1.OperatorBooks{OperatorId: op}}
		}
		return ops[op]
	}
	opOf := func(id string) string { return operatorOfKey(id, sc.def) }
	var global []string
	// bad notes a discrepancy of operator op ("": of the log itself).
	bad := func(op string, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if op == "" {
			if len(global) < 100 {
				global = append(global, msg)
			}
			return
		}
		if b := book(op); len(b.bad) < 100 {
			b.bad = append(b.bad, msg)
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
		book(opOf(string(k))).pb.AccountsChecked++
		return err
	})
	if err != nil {
		return nil, err
	}
	// The sums are exact (big integers): a ledger's turnover may exceed
	// int64, and a wrapped sum could hide a discrepancy.
	type sums = auditSums
	type opCur struct{ op, cur string }
	cur := map[opCur]*sums{}
	totals := func(op, c string) *sums {
		k := opCur{op, c}
		if cur[k] == nil {
			cur[k] = &sums{}
		}
		return cur[k]
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
				bad(opOf(id), "%s: the replayed balance leaves the int64 range at transfer %d", bare(id), seq)
			} else {
				bad(opOf(id), "%s: its open holds sum to more than the int64 range", bare(id))
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
			bad("", "transfer log: key %x where sequence %d was expected", k, expect)
		}
		expect = seq + 1
		tr := &walletv1.Transfer{}
		if err := proto.Unmarshal(v, tr); err != nil {
			bad("", "transfer %d: %v", seq, err)
			return nil
		}
		r.TransfersReplayed++
		r.LastSequence = seq
		dID, cID := tr.GetDebitAccountId(), tr.GetCreditAccountId()
		op := opOf(dID)
		b := book(op)
		b.pb.TransfersReplayed++
		b.last = seq
		if cop := opOf(cID); cop != op {
			// Money never crosses operators: each side's books name it
			// without the other's account.
			bad(op, "transfer %d (%s): its credit is another operator's", seq, tr.GetTransferId())
			bad(cop, "transfer %d (%s): its debit is another operator's", seq, tr.GetTransferId())
			return nil
		}
		d, c := accts[dID], accts[cID]
		if d == nil || c == nil || dID == cID {
			bad(op, "transfer %d (%s): unknown or identical accounts %s -> %s", seq, tr.GetTransferId(), bare(dID), bare(cID))
			return nil
		}
		if tr.GetAmount() <= 0 {
			bad(op, "transfer %d (%s): amount %d", seq, tr.GetTransferId(), tr.GetAmount())
		}
		dc, cc := currencyOf(dID, def), currencyOf(cID, def)
		if dc != cc || (tr.GetCurrencyCode() != "" && tr.GetCurrencyCode() != dc) {
			bad(op, "transfer %d (%s): currencies %s, %s, %s", seq, tr.GetTransferId(), dc, cc, tr.GetCurrencyCode())
		}
		move(d, &d.replay, -tr.GetAmount(), dID, seq)
		move(c, &c.replay, tr.GetAmount(), cID, seq)
		t := totals(op, dc)
		scratch.SetInt64(tr.GetAmount())
		t.debits.Add(&t.debits, &scratch)
		t.credits.Add(&t.credits, &scratch)
		for _, side := range []struct {
			id   string
			want int64
		}{{dID, d.replay}, {cID, c.replay}} {
			v := st.Get(statementKey(side.id, seq))
			if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) != side.want {
				bad(op, "statement of %s at transfer %d: missing or wrong running balance", bare(side.id), seq)
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
			bad("", "hold %s: %v", k, err)
			return nil
		}
		r.HoldsChecked++
		op := opOf(h.GetAccountId())
		book(op).holds++
		if h.GetAmount() < 0 || h.GetPostedAmount() < 0 || h.GetPostedAmount() > h.GetAmount() {
			bad(op, "hold %s: amount %d posted %d", k, h.GetAmount(), h.GetPostedAmount())
		}
		a := accts[h.GetAccountId()]
		if a == nil {
			bad(op, "hold %s on unknown account %s", k, bare(h.GetAccountId()))
			return nil
		}
		if h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
			r.OpenHolds++
			book(op).pb.OpenHolds++
			move(a, &a.openHeld, h.GetAmount(), h.GetAccountId(), 0)
			t := totals(op, currencyOf(h.GetAccountId(), def))
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
		op, c, name := opOf(id), currencyOf(id, def), bare(id)
		t := totals(op, c)
		b := big.NewInt(a.balance)
		t.balances.Add(&t.balances, b)
		if isExternal(id) {
			t.inWallet.Sub(&t.inWallet, b)
		}
		if a.overflow {
			continue // reported
		}
		if a.balance != a.replay {
			bad(op, "%s: stored balance %d, the transfer log gives %d", name, a.balance, a.replay)
		}
		if a.held != a.openHeld {
			bad(op, "%s: held %d, its open holds sum to %d", name, a.held, a.openHeld)
		}
		if a.held < 0 || (!isExternal(id) && a.held > a.balance) {
			bad(op, "%s: held %d exceeds balance %d", name, a.held, a.balance)
		}
		if !isExternal(id) && a.balance < 0 {
			bad(op, "%s: negative balance %d", name, a.balance)
		}
	}
	keys := make([]opCur, 0, len(cur))
	for k := range cur {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].op < keys[j].op || keys[i].op == keys[j].op && keys[i].cur < keys[j].cur
	})
	sum := map[string]*sums{}
	var codes []string
	for _, k := range keys {
		t := cur[k]
		if t.balances.Sign() != 0 {
			bad(k.op, "%s: balances sum to %s, not 0", k.cur, &t.balances)
		}
		if t.debits.Cmp(&t.credits) != 0 {
			bad(k.op, "%s: debits %s, credits %s", k.cur, &t.debits, &t.credits)
		}
		// Each of these is at most the money in the wallet, which Deposit
		// keeps within int64 (ledger.go): beyond it, the books are wrong.
		for _, v := range []struct {
			name string
			x    *big.Int
		}{{"money in the wallet", &t.inWallet}, {"open holds", &t.held}, {"sum of the balances", &t.balances}} {
			if !v.x.IsInt64() {
				bad(k.op, "%s: %s %s is outside the int64 range", k.cur, v.name, v.x)
			}
		}
		book(k.op).pb.Currencies = append(book(k.op).pb.Currencies, currencyTotals(k.cur, t))
		if !sc.sees(k.op) {
			continue
		}
		g := sum[k.cur]
		if g == nil {
			g = &sums{}
			sum[k.cur] = g
			codes = append(codes, k.cur)
		}
		g.debits.Add(&g.debits, &t.debits)
		g.credits.Add(&g.credits, &t.credits)
		g.balances.Add(&g.balances, &t.balances)
		g.inWallet.Add(&g.inWallet, &t.inWallet)
		g.held.Add(&g.held, &t.held)
	}
	sort.Strings(codes)
	for _, c := range codes {
		g := sum[c]
		r.Currencies = append(r.Currencies, currencyTotals(c, g))
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		if sc.sees(op) {
			names = append(names, op)
		}
	}
	if !sc.all && len(names) == 0 {
		names = append(names, sc.op) // an operator without accounts yet: empty, balanced books
		book(sc.op)
	}
	sort.Strings(names)
	r.Discrepancies = append(r.Discrepancies, global...)
	for _, op := range names {
		b := ops[op]
		b.pb.Balanced = len(b.bad) == 0 && len(global) == 0
		r.Operators = append(r.Operators, b.pb)
		r.Discrepancies = append(r.Discrepancies, b.bad...)
	}
	if len(r.Discrepancies) > 100 {
		r.Discrepancies = r.Discrepancies[:100]
	}
	if !sc.all {
		// An operator's auditor: his books only, and no count of the
		// others' activity.
		b := ops[sc.op].pb
		r.AccountsChecked, r.TransfersReplayed, r.OpenHolds = b.AccountsChecked, b.TransfersReplayed, b.OpenHolds
		r.HoldsChecked, r.LastSequence = ops[sc.op].holds, ops[sc.op].last
	} else {
		r.AccountsChecked = int64(len(accts))
	}
	r.Balanced = len(r.Discrepancies) == 0
	return r, nil
}

// currencyTotals is the audit's CurrencyTotals of currency c.
func currencyTotals(c string, t *auditSums) *walletv1.CurrencyTotals {
	return &walletv1.CurrencyTotals{
		CurrencyCode: c, TotalDebits: saturate(&t.debits), TotalCredits: saturate(&t.credits),
		TotalDebitsDecimal: t.debits.String(), TotalCreditsDecimal: t.credits.String(),
		SumOfBalances: saturate(&t.balances), InWallet: saturate(&t.inWallet), Held: saturate(&t.held),
	}
}

// auditSums are the exact sums of one currency's transfers, balances
// and open holds.
type auditSums struct{ debits, credits, balances, inWallet, held big.Int }

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
