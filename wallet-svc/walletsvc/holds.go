package walletsvc

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"

	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

const reasonHoldPosted = "hold_posted"

// PostHold resolves an open hold by one transfer of amount (the whole
// hold when 0) to to_account_id; the rest of the hold is released.
func (s *Service) PostHold(ctx context.Context, req *walletv1.PostHoldRequest) (*walletv1.PostHoldResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkID("hold_id", req.GetHoldId()),
		checkAccount(req.GetToAccountId(), s.cur), checkReference(req.GetReason())); err != nil {
		return nil, err
	}
	if req.GetAmount() < 0 {
		return nil, failf(codes.InvalidArgument, reasonInvalidAmount, "amount %d is negative", req.GetAmount())
	}
	why := req.GetReason()
	if why == "" {
		why = reasonHoldPosted
	}
	return idempotent(ctx, s, "PostHold", reqKey(req.GetRequestId()), req, newMsg[walletv1.PostHoldResponse],
		func(t *txn) (*walletv1.PostHoldResponse, error) {
			h, err := t.openHold(req.GetHoldId())
			if err != nil {
				return nil, err
			}
			if h.GetAccountId() == req.GetToAccountId() {
				return nil, failf(codes.InvalidArgument, reasonInvalidAccount, "to_account_id is the hold's own account")
			}
			amount := req.GetAmount()
			if amount == 0 {
				amount = h.GetAmount()
			}
			if amount > h.GetAmount() {
				return nil, failf(codes.InvalidArgument, reasonExceedsHold, "amount %d exceeds hold %q's %d", amount, h.GetHoldId(), h.GetAmount())
			}
			from, err := t.mustAccount(h.GetAccountId())
			if err != nil {
				return nil, err
			}
			var to *account
			if base, cur := splitCurrency(bare(req.GetToAccountId()), s.currency); base == AccountCommission || base == AccountExternal || base == AccountHouseBank {
				to, err = t.system(base, cur)
			} else {
				to, err = t.mustAccount(req.GetToAccountId())
			}
			if err != nil {
				return nil, err
			}
			if from.currency != to.currency {
				return nil, failf(codes.FailedPrecondition, reasonCurrencyMismatch, "hold in %s, %s in %s", from.currency, to.id, to.currency)
			}
			t.close(h, from, walletv1.HoldState_HOLD_STATE_POSTED)
			h.PostedAmount = amount
			var tr *walletv1.Transfer
			if amount > 0 {
				if tr, err = t.transfer(from, to, amount, why, req.GetRequestId()); err != nil {
					return nil, err
				}
			}
			return &walletv1.PostHoldResponse{Hold: h, Transfer: tr}, nil
		})
}

// ResizeHold sets an open hold to a new amount, reserving more of the
// available balance or releasing the difference (RULES.md CF-BANK-RAISE).
func (s *Service) ResizeHold(ctx context.Context, req *walletv1.ResizeHoldRequest) (*walletv1.ResizeHoldResponse, error) {
	if err := firstErr(checkID("request_id", req.GetRequestId()), checkID("hold_id", req.GetHoldId()),
		checkAmount("amount", req.GetAmount())); err != nil {
		return nil, err
	}
	if id := req.GetLaunchSessionId(); id != "" {
		if err := checkID("launch_session_id", id); err != nil {
			return nil, err
		}
	}
	return staked(ctx, s, "ResizeHold", req.GetRequestId(), req, newMsg[walletv1.ResizeHoldResponse],
		func(t *txn) (*walletv1.ResizeHoldResponse, error) {
			h, err := t.openHold(req.GetHoldId())
			if err != nil {
				return nil, err
			}
			// A raise asked in the player's launch session checks it
			// first, as PlaceHold does: an expired or revoked one resizes
			// nothing (no debit either); the growth's debit carries it.
			if err := t.checkLaunch(req.GetLaunchSessionId(), h.GetAccountId()); err != nil {
				return nil, err
			}
			if t.op != nil {
				t.op.session = req.GetLaunchSessionId()
			}
			a, err := t.mustAccount(h.GetAccountId())
			if err != nil {
				return nil, err
			}
			more := req.GetAmount() - h.GetAmount()
			if more > 0 {
				if err := t.checkStakeFirst(a, req.GetAmount(), more); err != nil {
					return nil, err
				}
				// Source: RULES.md CF-BANK-RAISE (seamless: the raise is debited first)
				if err := t.fund(a, more, whyBank, h.GetReference(), h); err != nil {
					return nil, err
				}
			}
			if more > a.balance-a.held {
				return nil, failf(codes.FailedPrecondition, reasonInsufficient,
					"%s has %d available, hold %q needs %d more", a.id, a.balance-a.held, h.GetHoldId(), more)
			}
			if more > 0 {
				if err := t.checkStake(a, req.GetAmount(), more); err != nil {
					return nil, err
				}
			}
			t.resize(h, a, req.GetAmount())
			t.attach(h)
			return &walletv1.ResizeHoldResponse{Hold: h}, nil
		})
}

// maxExpirePerTxn bounds the holds one sweep expires.
const maxExpirePerTxn = 1000

// expireDue expires the open holds whose expire_time is at or before now.
func (t *txn) expireDue() ([]*walletv1.Hold, error) {
	var out []*walletv1.Hold
	limit := binary.BigEndian.AppendUint64(nil, uint64(t.nowT.UnixNano()))
	c := t.tx.Bucket(bucketExpiry).Cursor()
	for k, _ := c.First(); k != nil && len(out) < maxExpirePerTxn && len(k) > 8 && bytes.Compare(k[:8], limit) <= 0; k, _ = c.Next() {
		h, err := t.hold(string(k[8:]))
		if err != nil {
			return nil, err
		}
		if h.GetState() != walletv1.HoldState_HOLD_STATE_OPEN {
			t.expiryDel = append(t.expiryDel, bytes.Clone(k))
			continue
		}
		a, err := t.mustAccount(h.GetAccountId())
		if err != nil {
			return nil, err
		}
		t.close(h, a, walletv1.HoldState_HOLD_STATE_EXPIRED)
		out = append(out, h)
	}
	return out, nil
}

// ExpireHolds expires the holds whose time has come.
func (s *Service) ExpireHolds(ctx context.Context, req *walletv1.ExpireHoldsRequest) (*walletv1.ExpireHoldsResponse, error) {
	if err := checkID("request_id", req.GetRequestId()); err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "ExpireHolds", reqKey(req.GetRequestId()), req, newMsg[walletv1.ExpireHoldsResponse],
		func(t *txn) (*walletv1.ExpireHoldsResponse, error) {
			// Every operator's due holds expire (as the sweep does); the
			// answer names the caller's operator's only.
			sc := t.sc
			t.sc.all = true
			hs, err := t.expireDue()
			out := &walletv1.ExpireHoldsResponse{}
			for _, h := range hs {
				if sc.owns(h.GetAccountId()) {
					out.Holds = append(out.Holds, h)
				}
			}
			return out, err
		})
}

// sweepLoop expires due holds every interval (no idempotency record: the
// sweep is not a request, and expiring is itself idempotent).
func (s *Service) sweepLoop(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := s.now()
		due := false
		_ = s.db.View(func(tx *bolt.Tx) error {
			k, _ := tx.Bucket(bucketExpiry).Cursor().First()
			due = len(k) > 8 && int64(binary.BigEndian.Uint64(k)) <= now.UnixNano()
			return nil
		})
		if !due {
			continue
		}
		var n int
		err := s.commit.Update(func(tx *bolt.Tx) error {
			t := s.newTxn(tx)
			t.nowT, t.now = now, timestamppb.New(now)
			if t.op != nil {
				t.op.now = now.UTC()
			}
			hs, err := t.expireDue()
			if err != nil {
				return err
			}
			n = len(hs)
			return s.commitTxn(t, "", "")
		})
		if err != nil {
			s.log.Error("hold sweep failed", "err", err)
		} else if n > 0 {
			s.log.Info("holds expired", "count", n)
			s.notifyOperator()
		}
	}
}
