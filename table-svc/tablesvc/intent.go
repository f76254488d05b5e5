package tablesvc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/store"
)

// Escrow intents. Before asking the wallet for a hold (a bank, a bet, a
// banco, a bid) the table stores an intent in bucket "intents" (key: the
// wallet request id; value: JSON intent). The save of the action that
// uses the hold deletes it in the same transaction. An intent that
// outlives its action (table-svc killed between the hold and the save,
// or the wallet's answer lost) is rolled back by recoverIntents: the
// action's request id is marked abandoned (REQUEST_ABANDONED on a retry:
// before the wallet call, whose lost answer may still be applied later,
// so no retry goes on with that hold), then the wallet's CancelPlaceHold
// takes the hold back under the same request id: it voids the hold that
// PlaceHold made, if any, and otherwise cancels the request id, so that a
// late PlaceHold under it (still on its way) holds nothing. The hold is
// never asked for again: in seamless wallet mode that would be a new
// debit from the operator's wallet (one per pass while the operator is
// down) only to be rolled back. So no escrow is ever left behind by a
// request the table did not store. A raise intent is cancelled the same
// way (a late ResizeHold under its request id then grows nothing) before
// the bank hold is brought back to the table's bank; and before another
// request's raise goes on (cancelRaises), so that a late ResizeHold of a
// raise cut off never resizes the bank hold after it.

var bucketIntents = []byte("intents")

// abandoned is the idempotency record of a request rolled back.
const abandoned = "abandoned"

type intent struct {
	// Kind is "" for a hold, "raise" for a bank hold grown by RaiseBank
	// (HoldID, Amount: the new size).
	Kind      string    `json:"kind,omitempty"`
	HoldID    string    `json:"hold_id,omitempty"`
	Created   time.Time `json:"created"`
	TableID   string    `json:"table_id"`
	Account   string    `json:"account"`
	Amount    int64     `json:"amount"`
	Reference string    `json:"reference"`
	// Bank: the hold is a bank (or a bid for it), not a bet.
	Bank bool   `json:"bank,omitempty"`
	Key  string `json:"key"`
	Hash []byte `json:"hash"`
	// Session is the player's game-launch session when he made the
	// request himself through one (auth.Caller.Session): the wallet
	// checks it and records it with the hold (a raise: checks it, and
	// the growth's debit carries it).
	Session string `json:"session,omitempty"`
	// Operator is the table's walletOperator (empty: the wallet's default
	// operator, as for an intent of before operators).
	Operator string `json:"operator,omitempty"`
}

func (in intent) request(id string) *walletv1.PlaceHoldRequest {
	r := &walletv1.PlaceHoldRequest{RequestId: id, AccountId: in.Account, Amount: in.Amount, Reference: in.Reference,
		LaunchSessionId: in.Session, OperatorId: in.Operator}
	if in.Bank {
		r.Purpose = walletv1.HoldPurpose_HOLD_PURPOSE_BANK
	}
	return r
}

// hold escrows amount of the player's account with wallet-svc, under an
// intent of the change's request; bank says the hold is a bank (or a bid
// for it). The round the hold's reference names (the coup id of
// "tables/<T>/coups/<C>": ref's, or an earlier try's of the same request)
// is recorded with the intent, before the wallet is called
// (stakeRound). It returns the hold id and that round ("" when no intent
// was stored).
func (s *Service) hold(ctx context.Context, c *change, requestID, player string, amount int64, ref string, bank bool) (string, string, error) {
	in := intent{Created: s.now().UTC(), TableID: c.t.ID, Account: c.t.account(player), Amount: amount, Reference: ref, Bank: bank, Key: c.key, Hash: c.hash,
		Operator: c.t.walletOperator()}
	if who, ok := auth.FromContext(ctx); ok && who.Role == auth.RolePlayer && who.Subject == player {
		in.Session = who.Session
	}
	v, err := json.Marshal(in)
	if err != nil {
		return "", "", err
	}
	err = s.commit.Update(func(tx *bolt.Tx) error { // group-committed: reads and writes only tx
		b := tx.Bucket(bucketIntents)
		if old := b.Get([]byte(requestID)); old != nil {
			// An earlier try of this request id got no answer: its hold
			// may exist. A retry of the same request goes on with the same
			// intent; another request under the same id is refused, and the
			// earlier intent stays for recoverIntents to roll back.
			var prev intent
			if err := json.Unmarshal(old, &prev); err != nil {
				return err
			}
			if prev.Key != in.Key || !bytes.Equal(prev.Hash, in.Hash) || prev.Amount != in.Amount || prev.Account != in.Account {
				return fail(codes.AlreadyExists, reasonRequestIDReused,
					"request_id %q was used for another request whose escrow is being rolled back", c.key)
			}
			// The same request: the wallet is asked exactly as the first
			// time (its reference may name an earlier coup), so the hold
			// is that one, and recoverIntents finds it.
			in = prev
			return nil
		}
		if err := b.Put([]byte(requestID), v); err != nil {
			return err
		}
		if _, coup := refCoup(in.Reference); coup != "" {
			// In the events' time (their occur_time), the round's start.
			return stakeRound(tx, c.t, coup, player, bank, time.Now())
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	_, round := refCoup(in.Reference)
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := s.wallet.PlaceHold(cctx, in.request(requestID))
	if err != nil {
		if definite(err) && errs.Reason(err) != "REQUEST_ID_REUSED" {
			// The wallet refused: nothing is held (the refusal is stored).
			// (REQUEST_ID_REUSED means a hold of another request exists
			// under this id: the intent stays, for recoverIntents.)
			_ = s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketIntents).Delete([]byte(requestID)) })
		}
		return "", round, fromDependency("hold", err)
	}
	c.intents = append(c.intents, requestID)
	return resp.GetHold().GetHoldId(), round, nil
}

// refCoup reads a hold's reference "tables/<T>/coups/<C>": the table and
// the coup ("" when it names none).
func refCoup(ref string) (table, coup string) {
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

// raiseIntent stores the intent of growing the bank hold to amount by
// wallet request id (RaiseBank), before the call, in the player's
// game-launch session (auth.Caller.Session when he asked himself through
// one; "" none). It returns the session the wallet is to be asked in: an
// earlier try of the same request's (its ResizeHold, maybe still on its
// way, is asked again exactly as it was).
func (s *Service) raiseIntent(c *change, id, hold string, amount int64, session string) (string, error) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIntents)
		if old := b.Get([]byte(id)); old != nil {
			var prev intent
			if json.Unmarshal(old, &prev) == nil && prev.Key == c.key && prev.Amount == amount && prev.HoldID == hold {
				session = prev.Session
			}
		}
		in := intent{Kind: "raise", HoldID: hold, Amount: amount, Created: s.now().UTC(), TableID: c.t.ID, Key: c.key, Hash: c.hash, Session: session,
			Operator: c.t.walletOperator()}
		v, err := json.Marshal(in)
		if err != nil {
			return err
		}
		return b.Put([]byte(id), v)
	})
	return session, err
}

// dropIntent deletes an intent whose call the wallet refused.
func (s *Service) dropIntent(id string) {
	_ = s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketIntents).Delete([]byte(id)) })
}

// raiseIntents are the ids of the table's raise intents not stored with
// their action (their answer lost). The caller holds the table's lock.
func (s *Service) raiseIntents(tableID string) []string {
	var ids []string
	_ = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketIntents).ForEach(func(k, v []byte) error {
			var in intent
			if json.Unmarshal(v, &in) == nil && in.Kind == "raise" && in.TableID == tableID {
				ids = append(ids, string(k))
			}
			return nil
		})
	})
	return ids
}

// cancelRaises takes back, before a raise of c's request (wallet request
// id rid), the table's raise intents of other requests: raises whose
// answer was lost. Such a ResizeHold may still be on its way, and its
// amount is absolute: landing after this raise, even after the coup's
// settlement, it would set the bank hold back to that amount while the
// table plays on with its own bank (the banker's escrow short). Each
// other request is marked abandoned (sent again: REQUEST_ABANDONED, as
// recoverIntents does) and its wallet request id cancelled
// (CancelPlaceHold: a ResizeHold under it fails REQUEST_CANCELLED from
// then on; a raise already applied is overwritten by this one, of the
// same absolute kind). The intents go with c's save (c.intents); if c
// is not saved they stay, for the reset before the deal or for
// recoverIntents. The caller holds the table's lock. Errors: the
// wallet's, as fromDependency has them (no answer: UNAVAILABLE
// DEPENDENCY_UNAVAILABLE, nothing is raised, the raise may be sent again).
func (s *Service) cancelRaises(ctx context.Context, c *change, rid string) error {
	for _, id := range s.raiseIntents(c.t.ID) {
		if id == rid {
			continue // an earlier try of this very request: the same call
		}
		var in intent
		if err := s.db.View(func(tx *bolt.Tx) error {
			if v := tx.Bucket(bucketIntents).Get([]byte(id)); v != nil {
				return json.Unmarshal(v, &in)
			}
			return nil
		}); err != nil {
			return err
		}
		if in.Key != "" && in.Key != c.key {
			if err := s.markAbandoned(in, id, false); err != nil {
				return err
			}
		}
		if _, err := s.wallet.CancelPlaceHold(ctx, &walletv1.CancelPlaceHoldRequest{RequestId: id, OperatorId: c.t.walletOperator()}); err != nil {
			return fromDependency("cancel a raise whose answer was lost", err)
		}
		c.intents = append(c.intents, id)
	}
	return nil
}

// recoverIntents rolls back the escrow intents, at least minAge old, whose
// action was not stored. Each is handled under its table's lock, so an
// action still in progress (which holds the lock from its intent to its
// save) is never touched; minAge leaves a client whose call failed for
// want of an answer the time to retry it with the same request id.
func (s *Service) recoverIntents(ctx context.Context, minAge time.Duration) error {
	var ids []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketIntents).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.recoverIntent(ctx, id, minAge); err != nil && ctx.Err() == nil {
			s.log.Warn("escrow intent not rolled back yet; will retry", "request", id, "err", err)
		}
	}
	return nil
}

func (s *Service) recoverIntent(ctx context.Context, id string, minAge time.Duration) error {
	var in intent
	found := false
	if err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketIntents).Get([]byte(id))
		if v != nil {
			found = true
			return json.Unmarshal(v, &in)
		}
		return nil
	}); err != nil || !found {
		return err
	}
	if s.now().Sub(in.Created) < minAge {
		return nil
	}
	unlock := s.lock(in.TableID)
	defer unlock()
	// Still there under the lock: its action is over and was not stored.
	var done bool
	if err := s.db.View(func(tx *bolt.Tx) error {
		done = tx.Bucket(bucketIntents).Get([]byte(id)) == nil
		return nil
	}); err != nil || done {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// The request is abandoned before the wallet call: a cancel whose
	// answer is lost may still be applied later, so a retry of the
	// request must not go on with that hold (it gets REQUEST_ABANDONED
	// from now on, under the table's lock).
	if err := s.markAbandoned(in, id, false); err != nil {
		return err
	}
	// The PlaceHold (or the raise's ResizeHold) is taken back; a late one
	// under id is refused from now on. No answer: the intent is kept and
	// tried again (the cancel never debits the operator).
	resp, err := s.wallet.CancelPlaceHold(cctx, &walletv1.CancelPlaceHoldRequest{RequestId: id, OperatorId: in.Operator})
	if err != nil {
		return fmt.Errorf("cancel the hold of %s: %w", id, err)
	}
	if in.Kind == "raise" {
		// The bank hold goes back to the table's bank, if the table still
		// has that bank hold (else it was settled or released already).
		t, err := s.load(in.TableID)
		if err != nil {
			return err
		}
		if hold, bank := t.adapter().bankHold(t); hold != "" && hold == in.HoldID {
			if _, err := s.wallet.ResizeHold(cctx, &walletv1.ResizeHoldRequest{RequestId: "reset/" + id, HoldId: in.HoldID, Amount: bank, OperatorId: in.Operator}); err != nil &&
				errs.Reason(err) != "HOLD_NOT_OPEN" {
				return err
			}
		}
		return s.abandon(in, id)
	}
	if resp.GetHold() != nil {
		s.log.Info("escrow of a request that was cut off released", "table", in.TableID, "request", in.Key, "hold", resp.GetHold().GetHoldId())
	}
	if err := s.abandon(in, id); err != nil {
		return err
	}
	// Its round, when the table never opened a coup under it, is over.
	if _, coup := refCoup(in.Reference); coup != "" {
		t, err := s.load(in.TableID)
		if err != nil {
			return err
		}
		if t.adapter().coupID(t) != coup {
			s.cancelStaked(coup)
		}
	}
	return nil
}

// abandon marks the request of intent id abandoned and deletes the intent.
func (s *Service) abandon(in intent, id string) error { return s.markAbandoned(in, id, true) }

// markAbandoned marks the request of intent id abandoned (unless it was
// stored), and deletes the intent when drop.
func (s *Service) markAbandoned(in intent, id string, drop bool) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if _, found, err := store.Lookup(tx, in.Key, in.Hash); err == nil && !found && in.Key != "" {
			if err := store.Save(tx, in.Key, in.Hash, []byte(abandoned)); err != nil {
				return err
			}
		}
		if !drop {
			return nil
		}
		return tx.Bucket(bucketIntents).Delete([]byte(id))
	})
}
