package tablesvc

import (
	"time"

	bolt "go.etcd.io/bbolt"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// Fee rounds. A fee (a seat fee under hourly_fee, CF-BANK-WINS; a bank
// auction's fee, BQ-BANK) belongs to no coup; in seamless mode the wallet
// debits the operator's wallet for it in a round of its own,
// opwallet.FeeRound of the fee's wallet request id ("fee-<request id>").
// So that GetRound answers that round id like every other one the
// operator's wallet is sent, table-svc records the round before it asks
// the wallet for the fee (beginFeeRound): a round of the table, of its
// operator, naming the player, in play, with number 0 (it is no coup of
// the table's count) and no event. The wallet's answer ends it
// (endFeeRound): charged, ROUND_STATE_SETTLED with the player's net minus
// the fee and the fee as the house's commission; refused,
// ROUND_STATE_CANCELLED. A fee round still in play when its table
// closes is cancelled like any (finishRounds). It is indexed like a
// coup's round (by time, table and player), so ListRounds lists it and
// retention expires it like the others.

// beginFeeRound records the round of the fee table t is about to charge
// player under wallet request id requestID, unless recorded already (a
// retry), and returns its id.
func (s *Service) beginFeeRound(t *table, requestID, player string) (string, error) {
	id := opwallet.FeeRound(requestID)
	err := s.commit.Update(func(tx *bolt.Tx) error { // group-committed: reads and writes only tx
		rounds := tx.Bucket(bucketRounds)
		if rounds.Get([]byte(id)) != nil {
			return nil
		}
		now := time.Now().UnixNano()
		r := &roundRecord{CoupID: id, TableID: t.ID, Variant: t.Variant, Start: now, End: now,
			State: int32(tablev1.RoundState_ROUND_STATE_IN_PLAY), Players: []roundPlayer{{ID: player}},
			Currency: t.Currency, Exponent: t.tableExponent(), Operator: t.operator()}
		index := tx.Bucket(bucketRoundIndex)
		for _, k := range [][]byte{indexKey("a", "", now, id), indexKey("t", t.ID, now, id), indexKey("p", player, now, id)} {
			if err := index.Put(k, []byte(id)); err != nil {
				return err
			}
		}
		return putRound(rounds, r)
	})
	return id, err
}

// endFeeRound ends fee round id with the wallet's answer: paid (fee, in
// minor units, charged) or refused. A fee paid settles the round whatever
// became of it meanwhile (the money moved); a refusal cancels it if it is
// still in play. A failure is logged: the round stays as it was (in play
// until its table closes).
func (s *Service) endFeeRound(id string, fee int64, paid bool) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		rounds := tx.Bucket(bucketRounds)
		v := rounds.Get([]byte(id))
		if v == nil {
			return nil
		}
		r := new(roundRecord)
		if err := decodeRound(v, r); err != nil {
			return err
		}
		end := max(time.Now().UnixNano(), r.Start)
		switch {
		case paid:
			r.State, r.Commission, r.End = int32(tablev1.RoundState_ROUND_STATE_SETTLED), fee, end
			for i := range r.Players {
				r.Players[i].Net = -fee
			}
		case !r.over():
			r.State, r.End = int32(tablev1.RoundState_ROUND_STATE_CANCELLED), end
		default:
			return nil
		}
		return putRound(rounds, r)
	})
	if err != nil {
		s.log.Warn("fee round not ended", "round", id, "err", err)
	}
}
