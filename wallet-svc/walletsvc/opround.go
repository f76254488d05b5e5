package walletsvc

import (
	"context"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// keyOpRoundIndexed, in the "wallet" bucket, says that the transactions
// logged before the "op-round-tx" index existed were indexed
// (indexRoundTransactions).
var keyOpRoundIndexed = []byte("op-round-tx-indexed")

// roundTxKey is the "op-round-tx" key of the transaction of round with
// "op-day" sequence seq: its round's transactions are together, in the
// order they were logged.
func roundTxKey(round string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(round+"\x00"), seq)
}

// indexRoundTransactions indexes by round, once per ledger file, the
// transactions logged by a version without the "op-round-tx" index
// (putTx indexes every new one).
func (s *Service) indexRoundTransactions() error {
	return s.commit.Update(func(tx *bolt.Tx) error {
		w := tx.Bucket(bucketWallet)
		if w.Get(keyOpRoundIndexed) != nil {
			return nil
		}
		idx := tx.Bucket(bucketOpRoundTx)
		err := tx.Bucket(bucketOpDay).ForEach(func(k, v []byte) error {
			if len(k) < 8 {
				return nil
			}
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			return idx.Put(roundTxKey(x.Round, binary.BigEndian.Uint64(k[len(k)-8:])), v)
		})
		if err != nil {
			return err
		}
		return w.Put(keyOpRoundIndexed, []byte{1})
	})
}

// GetOperatorRound implements chemmy.wallet.v1.WalletService: a round's
// operator transactions from the "op-round-tx" index, and each player's
// balances around it as the operator answered them (roundBalances). See
// the proto.
func (s *Service) GetOperatorRound(ctx context.Context, req *walletv1.GetOperatorRoundRequest) (*walletv1.GetOperatorRoundResponse, error) {
	if err := checkID("round_id", req.GetRoundId()); err != nil {
		return nil, err
	}
	sc := s.scopeOf(ctx)
	out := &walletv1.GetOperatorRoundResponse{RoundId: req.GetRoundId()}
	var txs []*opTx
	err := s.db.View(func(tx *bolt.Tx) error {
		idx := tx.Bucket(bucketOpRoundTx)
		if idx == nil {
			return nil
		}
		prefix := []byte(req.GetRoundId() + "\x00")
		c := idx.Cursor()
		for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
			x, err := getTx(tx, string(v))
			if err != nil {
				return err
			}
			if !sc.sees(operatorOfKey(x.Account, s.opID)) { // another operator's round of that id
				continue
			}
			txs = append(txs, x)
			out.Transactions = append(out.Transactions, x.proto())
		}
		return nil
	})
	if err != nil {
		return nil, s.internal("GetOperatorRound", err)
	}
	out.Players = roundBalances(txs)
	return out, nil
}

// roundBalances is each player's balance before and after a round whose
// transactions txs are in the order they were logged, as the operator
// answered them: before, his first answered debit's balance plus its
// amount; after, the balance answered last (the latest update) among his
// money transactions (debits still applied, credits and rollbacks), once
// none of them waits: none pending, none refused for good and neither
// retried nor settled (a refused debit moved nothing; a retried one is
// replaced by its retry; one settled outside chemmy moved money chemmy
// did not see answered, so his balance after stays unknown).
func roundBalances(txs []*opTx) []*walletv1.OperatorRoundPlayer {
	type acc struct {
		p       *walletv1.OperatorRoundPlayer
		last    *opTx
		unknown bool
	}
	var order []*acc
	by := map[string]*acc{}
	for _, x := range txs {
		if x.Kind == kindRoundEnd {
			continue
		}
		a := by[x.Player]
		if a == nil {
			a = &acc{p: &walletv1.OperatorRoundPlayer{PlayerId: x.Player}}
			by[x.Player] = a
			order = append(order, a)
		}
		switch {
		case x.Status == statusPending:
			a.unknown = true
			continue
		case x.Status == statusRefused && x.Kind == kindDebit:
			continue // refused at once: nothing moved
		case x.Status == statusRefused && x.Exception == excRetried:
			continue // its retry, logged after it, stands for it
		case x.Status == statusRefused:
			a.unknown = true // open, or settled outside chemmy
			continue
		}
		if x.OperatorBalance == nil {
			continue // answered by a version that kept no balance
		}
		if x.Kind == kindDebit && a.p.BalanceBefore == nil {
			before := *x.OperatorBalance + x.Amount
			a.p.BalanceBefore = &before
		}
		if x.Status == statusRolledBack {
			continue // its balance is the debit's; the rollback's follows
		}
		if a.last == nil || !x.Updated.Before(a.last.Updated) {
			a.last = x
		}
	}
	out := make([]*walletv1.OperatorRoundPlayer, 0, len(order))
	for _, a := range order {
		if !a.unknown && a.last != nil {
			after := *a.last.OperatorBalance
			a.p.BalanceAfter = &after
		}
		out = append(out, a.p)
	}
	return out
}
