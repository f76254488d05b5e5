package walletsvc

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/store"
)

// Cancelling a PlaceHold (doc.go "Cancelled requests"): "placed/<request
// id>" (in the kit's requests bucket, with the PlaceHold's request hash)
// names the hold a PlaceHold placed, written with it; "cancel/<request
// id>" is CancelPlaceHold's answer, and its presence cancels the request
// id for PlaceHold, ResizeHold and ChargeFee (checkNotCancelled). Both
// go after the request retention, as "req/<request id>" does.

var reasonRequestCancelled = reason(walletv1.ErrorReason_ERROR_REASON_REQUEST_CANCELLED)

func placedKey(reqID string) string { return "placed/" + reqID }
func cancelKey(reqID string) string { return "cancel/" + reqID }

// placement is the hold a PlaceHold placed, recorded under placedKey by
// commitTxn.
type placement struct {
	reqID  string
	hash   []byte
	holdID string
}

// notePlaced records, when t commits, that the PlaceHold req placed h.
func (t *txn) notePlaced(req *walletv1.PlaceHoldRequest, h *walletv1.Hold) {
	t.placed = &placement{reqID: req.GetRequestId(), hash: requestHash("PlaceHold", req), holdID: h.GetHoldId()}
}

// savePlaced writes t's placement, if any.
func (t *txn) savePlaced() error {
	if t.placed == nil {
		return nil
	}
	return store.Save(t.tx, t.sc.key(placedKey(t.placed.reqID)), t.placed.hash, []byte(t.placed.holdID))
}

// checkNotCancelled refuses (FAILED_PRECONDITION REQUEST_CANCELLED) a
// stake under a request id CancelPlaceHold cancelled. The caller holds
// the request id's lock (s.keys), which CancelPlaceHold takes too.
func (s *Service) checkNotCancelled(sc scope, reqID string) error {
	var cancelled bool
	if err := s.db.View(func(tx *bolt.Tx) error {
		_, _, cancelled = store.Get(tx, sc.key(cancelKey(reqID)))
		return nil
	}); err != nil {
		return s.internal("checkNotCancelled", err)
	}
	if cancelled {
		return failf(codes.FailedPrecondition, reasonRequestCancelled,
			"request_id %q was cancelled (CancelPlaceHold): nothing is held or debited under it", reqID)
	}
	return nil
}

// CancelPlaceHold takes back the PlaceHold of request_id: it voids the
// hold that PlaceHold placed, if any, and cancels the request id for good
// (PlaceHold, ResizeHold and ChargeFee under it fail REQUEST_CANCELLED).
// It waits for a request of that id in progress (its lock) and never
// calls the operator's wallet.
func (s *Service) CancelPlaceHold(ctx context.Context, req *walletv1.CancelPlaceHoldRequest) (*walletv1.CancelPlaceHoldResponse, error) {
	id := req.GetRequestId()
	if err := checkID("request_id", id); err != nil {
		return nil, err
	}
	defer s.keys.lock(s.scopeOf(ctx).key(reqKey(id)))()
	return idempotent(ctx, s, "CancelPlaceHold", cancelKey(id), req, newMsg[walletv1.CancelPlaceHoldResponse],
		func(t *txn) (*walletv1.CancelPlaceHoldResponse, error) {
			if t.op != nil {
				// Its rounds waiting for its retry end now.
				if err := t.op.endCancelled(reqKey(id)); err != nil {
					return nil, err
				}
			}
			_, v, found := store.Get(t.tx, t.sc.key(placedKey(id)))
			holdID := string(v)
			if !found {
				if holdID, found = legacyPlaced(t.tx, t.sc, id); !found {
					return &walletv1.CancelPlaceHoldResponse{}, nil
				}
			}
			h, err := t.hold(holdID)
			if err != nil {
				return nil, err
			}
			if h.GetState() == walletv1.HoldState_HOLD_STATE_OPEN {
				a, err := t.mustAccount(h.GetAccountId())
				if err != nil {
					return nil, err
				}
				t.close(h, a, walletv1.HoldState_HOLD_STATE_VOIDED)
			}
			return &walletv1.CancelPlaceHoldResponse{Hold: h}, nil
		})
}

// legacyPlaced finds the hold of a PlaceHold of request id id answered
// before "placed/" records were written (an older version): the answer
// stored under "req/<id>" is that PlaceHold's when its request hash is
// the one of the PlaceHold rebuilt from the hold it returned (another
// method's answer, e.g. a ResizeHold's naming a bank hold, never is).
func legacyPlaced(tx *bolt.Tx, sc scope, id string) (string, bool) {
	hash, resp, found := store.Get(tx, sc.key(reqKey(id)))
	r := &walletv1.PlaceHoldResponse{}
	if !found || proto.Unmarshal(resp, r) != nil || r.GetHold().GetHoldId() == "" {
		return "", false
	}
	h := r.GetHold()
	for _, p := range []walletv1.HoldPurpose{walletv1.HoldPurpose_HOLD_PURPOSE_UNSPECIFIED, walletv1.HoldPurpose_HOLD_PURPOSE_BANK} {
		req := &walletv1.PlaceHoldRequest{RequestId: id, AccountId: h.GetAccountId(), Amount: h.GetAmount(), Reference: h.GetReference(), Purpose: p}
		if h.GetExpireTime() != nil {
			req.Ttl = durationpb.New(h.GetExpireTime().AsTime().Sub(h.GetCreateTime().AsTime()))
		}
		if bytes.Equal(requestHash("PlaceHold", req), hash) {
			return h.GetHoldId(), true
		}
	}
	return "", false
}

// GetCoupSettlement reports whether a settlement of the coup was applied:
// its answer is stored under the coup's key ("coup/<coup_id>", kept for
// ever); a refused settlement is stored apart ("fail/coup/...") and is
// none. See the proto.
func (s *Service) GetCoupSettlement(ctx context.Context, req *walletv1.GetCoupSettlementRequest) (*walletv1.GetCoupSettlementResponse, error) {
	if err := checkID("coup_id", req.GetCoupId()); err != nil {
		return nil, err
	}
	var settled bool
	if err := s.db.View(func(tx *bolt.Tx) error {
		_, _, settled = store.Get(tx, s.scopeOf(ctx).key(coupKey(req.GetCoupId())))
		return nil
	}); err != nil {
		return nil, err
	}
	return &walletv1.GetCoupSettlementResponse{Settled: settled}, nil
}
