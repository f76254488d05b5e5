package shoesvc

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// MoveTopCardsToBottom moves the next r.count cards of a shoe of the old
// game to its bottom, in their order (RULES.md OLD-CUT: after the cut, the
// banker may move some top cards to the bottom if he announces it).
//
// When: once per shoe, on an OPEN shoe (cut and burned) before its first
// card is dealt; a shoe whose cutter's time ran out is cut at random
// first. Which shoes: VARIANT_OLD, or a certification shoe (its order is
// given; the move is still recorded). Who: the table service only (the
// policy admits role service alone; on a table's shoe tableOnly names
// the refusal SHOE_OWNED_BY_TABLE); like DealCard, the table service's
// move makes a staff shoe the table's.
//
// r.count is 1..cards_remaining-1, r.announced_by (the banker) is
// required. The stored dealing order is rotated by count (fair.MoveToBottom);
// the cut card stays cut_card_from_end cards from the end. The shoe
// records moved_to_bottom and moved_by, the reveal carries them and
// fair.Verify applies the move; the event top_cards_moved is written in
// the same transaction. Idempotent by (shoe_id, request_id).
//
// Errors: INVALID_ARGUMENT INVALID_ARGUMENT; NOT_FOUND SHOE_NOT_FOUND;
// FAILED_PRECONDITION SHOE_NOT_CUT, SHOE_CLOSED, MOVE_NOT_ALLOWED,
// DEAL_STARTED, TOP_CARDS_ALREADY_MOVED; PERMISSION_DENIED
// SHOE_OWNED_BY_TABLE, ROLE_NOT_ALLOWED; ALREADY_EXISTS REQUEST_ID_REUSED.
// A refused request changes nothing.
func (s *Service) MoveTopCardsToBottom(ctx context.Context, r *shoev1.MoveTopCardsToBottomRequest) (*shoev1.MoveTopCardsToBottomResponse, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if r.GetShoeId() == "" {
		return nil, invalid("shoe_id is required")
	}
	if r.GetAnnouncedBy() == "" {
		// Source: RULES.md OLD-CUT ("if he announces it": who announced is recorded)
		return nil, invalid("announced_by is required")
	}
	if err := checkID("announced_by", r.GetAnnouncedBy()); err != nil {
		return nil, err
	}
	if r.GetCount() < 1 {
		return nil, invalid("count must be at least 1, got %d", r.GetCount())
	}
	caller, _ := auth.FromContext(ctx)
	if !isTableService(caller) {
		// The policy admits the service role only, and the only service
		// this one serves is the table service; kept explicit.
		return nil, fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_ROLE_NOT_ALLOWED,
			"only the table service moves top cards to the bottom, not %s %q", caller.Role, caller.Subject)
	}
	key := "shoe/move/" + r.ShoeId + "/" + r.RequestId
	hash := store.Hash(r)
	resp := &shoev1.MoveTopCardsToBottomResponse{}
	err := s.update(func(tx *bolt.Tx) error {
		shoe, replayed, err := shoeAndReplay(tx, caller, r.ShoeId, key, hash, r.RequestId, resp, func(shoe *shoev1.Shoe) error {
			return tableOnly(caller, shoe, "move top cards of")
		})
		if err != nil || replayed {
			return err
		}
		if err := notSeeded(shoe); err != nil {
			return err
		}
		now := s.opts.now()
		// Source: RULES.md OLD-CUT (the move is the old game's)
		if shoe.Variant != shoev1.Variant_VARIANT_OLD && !shoe.Certification {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_MOVE_NOT_ALLOWED,
				"shoe %q is a %s shoe: only the old game's banker moves top cards to the bottom", r.ShoeId, shoe.Variant)
		}
		if shoe.State == shoev1.ShoeState_SHOE_STATE_AWAITING_CUT {
			// Source: RULES.md SHOE-CUT (time ran out: cut at random), OLD-CUT (the move follows the cut)
			if expired, err := s.expireCut(tx, shoe, now); err != nil {
				return err
			} else if !expired {
				return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_NOT_CUT,
					"shoe %q waits for %q to cut until %s: the move follows the cut", r.ShoeId, shoe.CutterPlayerId,
					shoe.CutDeadline.AsTime().Format(time.RFC3339))
			}
		}
		if shoe.State == shoev1.ShoeState_SHOE_STATE_CLOSED {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_CLOSED,
				"shoe %q is closed (%s)", r.ShoeId, shoe.CloseReason)
		}
		if shoe.MovedToBottom != 0 {
			// Source: RULES.md OLD-CUT (one announcement, after the cut)
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_TOP_CARDS_ALREADY_MOVED,
				"%d top cards of shoe %q were already moved to the bottom (announced by %q)", shoe.MovedToBottom, r.ShoeId, shoe.MovedBy)
		}
		if shoe.CardsDealt > 0 {
			// Source: RULES.md OLD-CUT (after the cut, before the deal)
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_DEAL_STARTED,
				"shoe %q has dealt %d cards: top cards move only before the first deal", r.ShoeId, shoe.CardsDealt)
		}
		if r.Count >= shoe.CardsRemaining {
			return invalid("count must be 1..%d (cards remaining - 1), got %d", shoe.CardsRemaining-1, r.Count)
		}
		id := []byte(r.ShoeId)
		order := tx.Bucket(bucketOrders).Get(id)
		if len(order) != int(shoe.CardsRemaining) {
			return fmt.Errorf("shoe %s: order holds %d cards, %d remain", r.ShoeId, len(order), shoe.CardsRemaining)
		}
		// Source: RULES.md OLD-CUT (the next count cards go to the bottom, in their order)
		if err := tx.Bucket(bucketOrders).Put(id, fair.MoveToBottom(order, int(r.Count))); err != nil {
			return err
		}
		shoe.OwnedByTable = true // the table service's move, as its first deal
		shoe.MovedToBottom, shoe.MovedBy = r.Count, r.AnnouncedBy
		if err := putShoeWith(tx, shoe, now, &eventsv1.ShoeEvent_TopCardsMoved{TopCardsMoved: &eventsv1.TopCardsMovedToBottom{
			Count: r.Count, AnnouncedBy: r.AnnouncedBy, CardsRemaining: shoe.CardsRemaining,
		}}); err != nil {
			return err
		}
		resp.Shoe = shoe
		return saveAnswer(tx, key, hash, resp)
	})
	if err != nil {
		return nil, s.internal(ctx, "move top cards to bottom", err)
	}
	return resp, nil
}
