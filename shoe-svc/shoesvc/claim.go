package shoesvc

import (
	"context"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
)

// tableOf is the table a shoe belongs to: Shoe.table_id, or for a shoe the
// table service created before table_id existed, its owner. Empty for a
// shoe of no table (a staff shoe no table claimed, or one only the
// table service's first deal made a table's: it names no table).
func tableOf(shoe *shoev1.Shoe) string {
	if shoe.TableId != "" {
		return shoe.TableId
	}
	if shoe.OwnedByTable && shoe.CreatedBy == trust.Table {
		return shoe.Owner
	}
	return ""
}

// ClaimShoe makes a shoe its table's (owned_by_table, table_id): from then
// on only the table service deals, cuts (with the named cutter) and closes
// it (tableOnly). CreateTable claims the shoe an operator names before the
// table takes it, so that nobody deals from it during the table's first
// betting and no second table takes it.
//
// Who: the table service only. When: a shoe of no table, not closed, no
// card dealt; the table that holds the shoe may claim it again (it is
// answered as it stands). Idempotent by (shoe_id, request_id): a retry
// gets the first answer, whatever table_id it proposes, and that answer's
// table_id is the table the shoe was claimed for (a CreateTable retried
// after a crash adopts it). The shoe_claimed event is written in the same
// transaction.
//
// Errors: INVALID_ARGUMENT INVALID_ARGUMENT; NOT_FOUND SHOE_NOT_FOUND
// (none, or a shoe of another operator than r.operator_id, the table's);
// FAILED_PRECONDITION SHOE_CLAIMED, SHOE_CLOSED, DEAL_STARTED;
// PERMISSION_DENIED ROLE_NOT_ALLOWED. A refused claim changes nothing.
func (s *Service) ClaimShoe(ctx context.Context, r *shoev1.ClaimShoeRequest) (*shoev1.ClaimShoeResponse, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if r.GetShoeId() == "" || r.GetTableId() == "" {
		return nil, invalid("shoe_id and table_id are required")
	}
	if err := checkID("table_id", r.GetTableId()); err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	if !isTableService(caller) {
		return nil, fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_ROLE_NOT_ALLOWED,
			"only the table service claims a shoe for a table, not %s %q", caller.Role, caller.Subject)
	}
	key := "shoe/claim/" + r.ShoeId + "/" + r.RequestId
	// The request id names the claim: its retry gets the first answer
	// whatever table id it proposes (a CreateTable retried after a crash
	// proposes a new one and adopts the answer's).
	hash := store.Hash(&shoev1.ClaimShoeRequest{RequestId: r.RequestId, ShoeId: r.ShoeId})
	resp := &shoev1.ClaimShoeResponse{}
	err := s.update(func(tx *bolt.Tx) error {
		shoe, replayed, err := shoeAndReplay(tx, caller, r.ShoeId, key, hash, r.RequestId, resp, func(shoe *shoev1.Shoe) error {
			if shoeOperator(shoe) != operatorOf(caller, r.GetOperatorId()) {
				return notFound(r.ShoeId) // another operator's shoe, for the table's
			}
			return nil
		})
		if err != nil || replayed {
			return err
		}
		switch owner := tableOf(shoe); {
		case owner == r.TableId:
			// Already this table's: answered as it stands.
		case owner != "" || shoe.OwnedByTable:
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_CLAIMED,
				"shoe %q belongs to another table (%q)", r.ShoeId, owner)
		case shoe.State == shoev1.ShoeState_SHOE_STATE_CLOSED:
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_CLOSED,
				"shoe %q is closed (%s)", r.ShoeId, shoe.CloseReason)
		case shoe.CardsDealt > 0:
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_DEAL_STARTED,
				"shoe %q has dealt %d cards already", r.ShoeId, shoe.CardsDealt)
		default:
			shoe.TableId, shoe.OwnedByTable = r.TableId, true
			if err := putShoeWith(tx, shoe, s.opts.now(), &eventsv1.ShoeEvent_ShoeClaimed{ShoeClaimed: &eventsv1.ShoeClaimed{
				TableId: r.TableId, ClaimedBy: caller.Subject,
			}}); err != nil {
				return err
			}
		}
		resp.Shoe = shoe
		return saveAnswer(tx, key, hash, resp)
	})
	if err != nil {
		return nil, s.internal(ctx, "claim shoe", err)
	}
	return resp, nil
}
