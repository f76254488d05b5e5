package walletsvc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// fault is what the fake operator does with one call.
type fault int

const (
	faultNone       fault = iota
	faultRefuse           // a definite refusal (code: fakeOp.refuseCode)
	faultLostAnswer       // applied, but the answer is lost (unknown outcome)
	faultNotApplied       // not applied, no answer (unknown outcome)
	faultDuplicate        // applied, answered as a duplicate (success)
)

// fakeEntry is one movement in the fake operator's ledger.
type fakeEntry struct {
	op, id, player, round, reason, target string
	amount                                int64 // the player's balance change
}

// fakeOp is an in-memory operator wallet for the tests, with injectable
// faults and checks of the rules chemmy must follow.
type fakeOp struct {
	mu         sync.Mutex
	balance    map[string]int64
	funding    map[string]int64
	answers    map[string]opwallet.Result // by transaction id
	debits     map[string]fakeEntry       // applied debits
	rolledBack map[string]bool            // debit ids rolled back (a late debit is refused)
	ledger     []fakeEntry
	credited   map[string]bool   // player/round with a credit
	ended      map[string]string // player/round → round_end status
	endCount   map[string]int
	violations []string
	// fault decides each call; nil: none.
	fault      func(op string, tx opwallet.Transaction) fault
	refuseCode string
	// balanceErr, when set, is the error of every balance call.
	balanceErr error
	calls      map[string]int
	// sum of the amounts of the transactions seen with each kind
	seq int
	// before, when set, runs before each call, outside the lock (a test
	// may block a call there).
	before func(op string, tx opwallet.Transaction)
	// debiting counts the debit calls in progress per player/round and
	// by id: a credit or round_end of the round, or a rollback of the
	// debit, arriving meanwhile is a violation.
	debiting   map[string]int
	debitingID map[string]bool
	// answered lists the calls answered 200, in order.
	answered []fakeCall
}

// fakeCall is one call the fake operator answered.
type fakeCall struct{ op, id, player, round, target string }

func newFakeOp() *fakeOp {
	return &fakeOp{balance: map[string]int64{}, funding: map[string]int64{}, answers: map[string]opwallet.Result{},
		debits: map[string]fakeEntry{}, rolledBack: map[string]bool{}, credited: map[string]bool{},
		ended: map[string]string{}, endCount: map[string]int{}, calls: map[string]int{}, refuseCode: opwallet.CodePlayerBlocked,
		debiting: map[string]int{}, debitingID: map[string]bool{}}
}

func (f *fakeOp) fund(player string, amount int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.balance[player] += amount
	f.funding[player] += amount
}

func (f *fakeOp) bal(player string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.balance[player]
}

func (f *fakeOp) setFault(fn func(op string, tx opwallet.Transaction) fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fn
}

func (f *fakeOp) setBalanceErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.balanceErr = err
}

func (f *fakeOp) setRefuseCode(code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuseCode = code
}

var errLost = errors.New("fake operator: no answer")

func (f *fakeOp) Balance(_ context.Context, req opwallet.BalanceRequest) (opwallet.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.balanceErr != nil {
		return opwallet.Result{}, f.balanceErr
	}
	return opwallet.Result{Balance: f.balance[req.PlayerID], Currency: req.Currency}, nil
}

// do runs one call: duplicates answer the first answer, faults apply,
// move changes the balance (or refuses).
func (f *fakeOp) do(op string, tx opwallet.Transaction, move func() (*opwallet.Refusal, *fakeEntry)) (opwallet.Result, error) {
	f.mu.Lock()
	before := f.before
	f.mu.Unlock()
	if before != nil {
		before(op, tx)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	switch {
	case op == opwallet.OpRollback && f.debitingID[tx.RolledBackID]:
		f.violations = append(f.violations, fmt.Sprintf("rollback %s while its debit %s is still being called", tx.TransactionID, tx.RolledBackID))
	case (op == opwallet.OpCredit || op == opwallet.OpRoundEnd) && f.debiting[roundOf(tx)] > 0:
		f.violations = append(f.violations, fmt.Sprintf("%s %s while a debit of %s is still being called", op, tx.TransactionID, roundOf(tx)))
	}
	if tx.TransactionID == "" || tx.PlayerID == "" || tx.RoundID == "" || tx.Currency == "" {
		f.violations = append(f.violations, fmt.Sprintf("%s: missing fields %+v", op, tx))
	}
	if r, ok := f.answers[tx.TransactionID]; ok {
		r.Duplicate = true
		return r, nil
	}
	flt := faultNone
	if f.fault != nil {
		flt = f.fault(op, tx)
	}
	switch flt {
	case faultRefuse:
		return opwallet.Result{}, &opwallet.Refusal{Status: 403, Code: f.refuseCode, Message: "fake refusal"}
	case faultNotApplied:
		return opwallet.Result{}, errLost
	}
	ref, e := move()
	if ref != nil {
		return opwallet.Result{}, ref
	}
	f.seq++
	res := opwallet.Result{TransactionID: tx.TransactionID, OperatorTransactionID: fmt.Sprintf("op-%d", f.seq),
		Balance: f.balance[tx.PlayerID], Currency: tx.Currency}
	f.answers[tx.TransactionID] = res
	f.answered = append(f.answered, fakeCall{op: op, id: tx.TransactionID, player: tx.PlayerID, round: tx.RoundID, target: tx.RolledBackID})
	if e != nil {
		f.ledger = append(f.ledger, *e)
	}
	switch flt {
	case faultLostAnswer:
		return opwallet.Result{}, errLost
	case faultDuplicate:
		res.Duplicate = true
	}
	return res, nil
}

func roundOf(tx opwallet.Transaction) string { return tx.PlayerID + "/" + tx.RoundID }

// afterEnd records a movement in a round already ended.
func (f *fakeOp) afterEnd(op string, tx opwallet.Transaction) {
	if _, ok := f.ended[roundOf(tx)]; ok {
		f.violations = append(f.violations, fmt.Sprintf("%s %s after the round_end of %s", op, tx.TransactionID, roundOf(tx)))
	}
}

func (f *fakeOp) Debit(_ context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	f.mu.Lock()
	f.debiting[roundOf(tx)]++
	f.debitingID[tx.TransactionID] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		if f.debiting[roundOf(tx)]--; f.debiting[roundOf(tx)] == 0 {
			delete(f.debiting, roundOf(tx))
		}
		delete(f.debitingID, tx.TransactionID)
		f.mu.Unlock()
	}()
	return f.do(opwallet.OpDebit, tx, func() (*opwallet.Refusal, *fakeEntry) {
		if f.rolledBack[tx.TransactionID] {
			return &opwallet.Refusal{Status: 409, Code: opwallet.CodeTransactionRolledBack}, nil
		}
		if tx.Amount <= 0 || f.balance[tx.PlayerID] < tx.Amount {
			return &opwallet.Refusal{Status: 402, Code: opwallet.CodeInsufficientFunds}, nil
		}
		f.afterEnd("debit", tx)
		f.balance[tx.PlayerID] -= tx.Amount
		e := fakeEntry{op: "debit", id: tx.TransactionID, player: tx.PlayerID, round: tx.RoundID, reason: tx.Reason, amount: -tx.Amount}
		f.debits[tx.TransactionID] = e
		return nil, &e
	})
}

func (f *fakeOp) Credit(_ context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	return f.do(opwallet.OpCredit, tx, func() (*opwallet.Refusal, *fakeEntry) {
		if tx.Amount <= 0 {
			f.violations = append(f.violations, fmt.Sprintf("credit %s of %d", tx.TransactionID, tx.Amount))
		}
		f.afterEnd("credit", tx)
		f.balance[tx.PlayerID] += tx.Amount
		f.credited[roundOf(tx)] = true
		return nil, &fakeEntry{op: "credit", id: tx.TransactionID, player: tx.PlayerID, round: tx.RoundID, reason: tx.Reason, amount: tx.Amount}
	})
}

func (f *fakeOp) Rollback(_ context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	return f.do(opwallet.OpRollback, tx, func() (*opwallet.Refusal, *fakeEntry) {
		f.afterEnd("rollback", tx)
		if f.credited[roundOf(tx)] {
			f.violations = append(f.violations, fmt.Sprintf("rollback %s after a credit in %s", tx.TransactionID, roundOf(tx)))
		}
		if f.rolledBack[tx.RolledBackID] {
			f.violations = append(f.violations, fmt.Sprintf("debit %s rolled back twice", tx.RolledBackID))
		}
		f.rolledBack[tx.RolledBackID] = true
		d, ok := f.debits[tx.RolledBackID]
		if !ok {
			return nil, nil // never applied: nothing moves, the debit id is dead
		}
		if d.amount != -tx.Amount || d.player != tx.PlayerID {
			f.violations = append(f.violations, fmt.Sprintf("rollback %s of %d does not match debit %s", tx.TransactionID, tx.Amount, d.id))
		}
		f.balance[tx.PlayerID] -= d.amount
		return nil, &fakeEntry{op: "rollback", id: tx.TransactionID, player: tx.PlayerID, round: tx.RoundID, target: d.id, amount: -d.amount}
	})
}

func (f *fakeOp) RoundEnd(_ context.Context, tx opwallet.Transaction) (opwallet.Result, error) {
	return f.do(opwallet.OpRoundEnd, tx, func() (*opwallet.Refusal, *fakeEntry) {
		f.endCount[roundOf(tx)]++
		f.ended[roundOf(tx)] = tx.Status
		return nil, nil
	})
}

// snapshot returns the balances, ledger and violations.
func (f *fakeOp) snapshot() (map[string]int64, []fakeEntry, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := map[string]int64{}
	for k, v := range f.balance {
		b[k] = v
	}
	return b, append([]fakeEntry(nil), f.ledger...), append([]string(nil), f.violations...)
}

func (f *fakeOp) roundEnd(player, round string) (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended[player+"/"+round], f.endCount[player+"/"+round]
}

// count is how many calls of op the fake answered or faulted.
func (f *fakeOp) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakeOp) setBefore(fn func(op string, tx opwallet.Transaction)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = fn
}

// debitsInProgress is the number of debit calls of player/round in
// progress.
func (f *fakeOp) debitsInProgress(player, round string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.debiting[player+"/"+round]
}

// answeredCalls are the calls answered 200 so far, in order.
func (f *fakeOp) answeredCalls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.answered...)
}

// payOutside moves amount to a player's balance as the operator paying
// him outside chemmy (not funding: the money chemmy owed him).
func (f *fakeOp) payOutside(player string, amount int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.balance[player] += amount
}
