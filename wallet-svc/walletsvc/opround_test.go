package walletsvc

import (
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// TestGetOperatorRound: a seamless round's operator transactions and each
// player's balances around it as the operator answered them. bob banks
// 200, alice bets 100 and carol 50, dave's debit of 10 is refused, alice
// stakes 70 in another round meanwhile, and the bank loses: alice is
// credited 200 and carol 100; the rest of bob's bank (50) stays held for
// his next coup. The operator's answers are of his whole wallet: alice
// 1000 before, 1030 after (1000 - 100 - 70 + 200); carol 500, 550; bob
// 1000, 800; dave none. A credit still unanswered leaves its player's
// balance after unset.
func TestGetOperatorRound(t *testing.T) {
	op := newFakeOp()
	op.fund("alice", 1000)
	op.fund("bob", 1000)
	op.fund("carol", 500)
	op.fund("dave", 500)
	e := newSeamless(t, op)
	release := make(chan struct{})
	op.before = func(kind string, tx opwallet.Transaction) {
		if kind == kindCredit && tx.PlayerID == "alice" {
			<-release
		}
	}
	op.setFault(func(kind string, tx opwallet.Transaction) fault {
		if kind == kindDebit && tx.PlayerID == "dave" {
			return faultRefuse
		}
		return faultNone
	})
	bank := e.stake("player:bob", 200, coupRef("T1", "C1"))
	a := e.stake("player:alice", 100, coupRef("T1", "C1"))
	c := e.stake("player:carol", 50, coupRef("T1", "C1"))
	if _, err := e.c.PlaceHold(as(tableSvc), &walletv1.PlaceHoldRequest{RequestId: e.id("hold"), AccountId: "player:dave",
		Amount: 10, Reference: coupRef("T1", "C1")}); err == nil {
		t.Fatal("dave's stake: the operator refused it, the hold was placed")
	}
	e.stake("player:alice", 70, coupRef("T1", "C2")) // another round's
	e.settle(&walletv1.SettleCoupRequest{CoupId: "C1", BankHoldId: bank.GetHoldId(), Bets: bets(a, c), Outcome: bankLoses})

	type bal struct{ before, after *int64 }
	n := func(v int64) *int64 { return &v }
	read := func() (map[string]bal, []string, int) {
		t.Helper()
		r, err := e.c.GetOperatorRound(as(tableSvc), &walletv1.GetOperatorRoundRequest{RoundId: "C1"})
		if err != nil {
			t.Fatalf("GetOperatorRound: %v", err)
		}
		got := map[string]bal{}
		var order []string
		for _, p := range r.GetPlayers() {
			got[p.GetPlayerId()] = bal{p.BalanceBefore, p.BalanceAfter}
			order = append(order, p.GetPlayerId())
		}
		for _, x := range r.GetTransactions() {
			if x.GetRoundId() != "C1" {
				t.Errorf("round C1 lists %s of round %s", x.GetTransactionId(), x.GetRoundId())
			}
		}
		return got, order, len(r.GetTransactions())
	}
	same := func(who string, got, want bal) {
		t.Helper()
		eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
		if !eq(got.before, want.before) || !eq(got.after, want.after) {
			t.Errorf("%s: before %v after %v, want %v %v", who, show(got.before), show(got.after), show(want.before), show(want.after))
		}
	}
	got, _, _ := read()
	same("alice, her credit unanswered", got["alice"], bal{n(1000), nil})
	close(release)
	e.drainAll()
	got, order, count := read()
	same("alice", got["alice"], bal{n(1000), n(1030)})
	same("carol", got["carol"], bal{n(500), n(550)})
	same("bob", got["bob"], bal{n(1000), n(800)})
	same("dave", got["dave"], bal{nil, nil})
	if want := []string{"bob", "alice", "carol", "dave"}; !slices.Equal(order, want) {
		t.Errorf("players %v, want %v (the order of their first transaction)", order, want)
	}

	// A ledger file of a version without the index: indexed once at start.
	if err := e.svc.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketOpRoundTx); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketOpRoundTx); err != nil {
			return err
		}
		return tx.Bucket(bucketWallet).Delete(keyOpRoundIndexed)
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, n := read(); n != 0 {
		t.Fatalf("the index emptied: %d transactions", n)
	}
	e.restart()
	again, _, n2 := read()
	if n2 != count {
		t.Errorf("after indexing at start: %d transactions, want %d", n2, count)
	}
	same("alice, indexed at start", again["alice"], bal{n(1000), n(1030)})

	// A transfer wallet, or an unknown round: an empty round.
	if r, err := e.c.GetOperatorRound(as(auditor), &walletv1.GetOperatorRoundRequest{RoundId: "nope"}); err != nil || len(r.GetTransactions()) != 0 {
		t.Errorf("unknown round: %v, %v", r, err)
	}
	_, err := e.c.GetOperatorRound(as(auditor), &walletv1.GetOperatorRoundRequest{})
	wantErr(t, err, codes.InvalidArgument, reasonInvalidArgument)
	wantNoViolations(t, op)
}

func show(v *int64) any {
	if v == nil {
		return "unset"
	}
	return *v
}
