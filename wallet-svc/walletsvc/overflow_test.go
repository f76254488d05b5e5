package walletsvc

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

const maxAmount = math.MaxInt64

func mulMax(n int64) string {
	return new(big.Int).Mul(big.NewInt(maxAmount), big.NewInt(n)).String()
}

func totalsOf(t *testing.T, r *walletv1.AuditLedgerResponse, cur string) *walletv1.CurrencyTotals {
	t.Helper()
	for _, c := range r.GetCurrencies() {
		if c.GetCurrencyCode() == cur {
			return c
		}
	}
	t.Fatalf("no totals for %s in %v", cur, r)
	return nil
}

// TestAuditTotalsDoNotWrap: deposits and withdrawals of 2^63-1 each; the
// turnover exceeds int64. The audit's sums are exact: the decimal totals
// say so, the int64 ones saturate instead of wrapping negative, and the
// books balance.
func TestAuditTotalsDoNotWrap(t *testing.T) {
	e := newEnv(t)
	for i := range 2 {
		e.deposit("player:alice", maxAmount)
		if _, err := e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: e.id("w"), AccountId: "player:alice", Amount: maxAmount}); err != nil {
			t.Fatalf("withdrawal %d: %v", i, err)
		}
		e.net.Add(-maxAmount)
	}
	r := e.auditRPC()
	eur := totalsOf(t, r, "EUR")
	if eur.GetTotalDebitsDecimal() != mulMax(4) || eur.GetTotalCreditsDecimal() != mulMax(4) {
		t.Errorf("exact totals %s, %s, want %s", eur.GetTotalDebitsDecimal(), eur.GetTotalCreditsDecimal(), mulMax(4))
	}
	if eur.GetTotalDebits() != maxAmount || eur.GetTotalCredits() != maxAmount {
		t.Errorf("int64 totals %d, %d, want saturated at %d", eur.GetTotalDebits(), eur.GetTotalCredits(), int64(maxAmount))
	}
	if eur.GetSumOfBalances() != 0 || eur.GetInWallet() != 0 || eur.GetHeld() != 0 {
		t.Errorf("totals %v", eur)
	}
	e.audit()
}

// TestMoneyInWalletStaysInInt64: no balance and no currency's money in
// the wallet can pass 2^63-1: the deposit that would is refused
// INVALID_AMOUNT and changes nothing; another currency has its own room.
func TestMoneyInWalletStaysInInt64(t *testing.T) {
	e := newEnv(t)
	e.deposit("player:alice", maxAmount)
	for _, acct := range []string{"player:alice", "player:bob", AccountHouseBank} {
		_, err := e.c.Deposit(as(operator), &walletv1.DepositRequest{RequestId: e.id("d"), AccountId: acct, Amount: 1})
		wantErr(t, err, codes.InvalidArgument, "INVALID_AMOUNT")
	}
	e.deposit("player:bob@USD", maxAmount)
	// Everything held at once, then settled: no credit can overflow, as
	// no balance can exceed the money in the wallet.
	if _, err := e.c.Withdraw(as(operator), &walletv1.WithdrawRequest{RequestId: e.id("w"), AccountId: "player:alice", Amount: 100}); err != nil {
		t.Fatal(err)
	}
	e.net.Add(-100)
	e.deposit("player:bob", 100)
	bank, bet := e.hold("player:alice", maxAmount-100), e.hold("player:bob", 100)
	s := e.settle(&walletv1.SettleCoupRequest{CoupId: "c", BankHoldId: bank.GetHoldId(), Bets: bets(bet), Outcome: bankWins})
	if s.GetNewBank() != maxAmount {
		t.Fatal(s)
	}
	e.wantBal("player:alice", maxAmount, maxAmount)
	r := e.auditRPC()
	if eur := totalsOf(t, r, "EUR"); eur.GetInWallet() != maxAmount || eur.GetHeld() != maxAmount || eur.GetSumOfBalances() != 0 {
		t.Errorf("EUR totals %v", eur)
	}
	if usd := totalsOf(t, r, "USD"); usd.GetInWallet() != maxAmount {
		t.Errorf("USD totals %v", usd)
	}
	e.wantBal("player:bob", 0, 0)
}

// TestAuditFindsWalletBeyondInt64: a ledger written before the limit,
// with 2^63 in the wallet (external funding at -2^63), balances in the
// int64 sense only by wrapping; the audit says it does not fit.
func TestAuditFindsWalletBeyondInt64(t *testing.T) {
	e := newEnv(t)
	err := e.svc.db.Update(func(tx *bolt.Tx) error {
		tn := newTxn(tx, time.Now(), "EUR")
		ext, err := tn.system(AccountExternal, "EUR")
		if err != nil {
			return err
		}
		for i, acct := range []string{"player:a", "player:b"} {
			amount := []int64{maxAmount, 1}[i]
			a := tn.create(acct)
			ext.balance -= amount // as the transfer of an older version did
			a.balance += amount
			tn.transfers = append(tn.transfers, pendingTransfer{tr: &walletv1.Transfer{TransferId: ulid.Make().String(),
				DebitAccountId: ext.id, CreditAccountId: a.id, Amount: amount, Reason: reasonDeposit, CurrencyCode: "EUR"},
				debitAfter: ext.balance, creditAft: a.balance})
		}
		return tn.flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.c.AuditLedger(as(auditor), &walletv1.AuditLedgerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetBalanced() || len(r.GetDiscrepancies()) != 1 || !strings.Contains(r.GetDiscrepancies()[0], "money in the wallet 9223372036854775808 is outside the int64 range") {
		t.Fatalf("balanced %v: %q", r.GetBalanced(), r.GetDiscrepancies())
	}
	if eur := totalsOf(t, r, "EUR"); eur.GetInWallet() != maxAmount || eur.GetSumOfBalances() != 0 || eur.GetTotalDebitsDecimal() != "9223372036854775808" {
		t.Errorf("EUR totals %v", eur)
	}
}
