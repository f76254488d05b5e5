package shoesvc

import (
	"cmp"
	"context"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// SeedShoe delivers the player seeds a table collected for its shoe after
// the shoe's commitment (a shoe created with await_player_seeds, in
// AWAITING_SEEDS) and fixes the shoe's order: the shuffle of the server
// seed, the client seed and these seeds (SHOE-SHUFFLE), sorted by
// sortSeeds so that the order does not depend on the order the players
// gave them in; then a random cut drawn from the stream after the
// shuffle (SHOE-CUT) and the burn (SHOE-BURN). No seed: the shoe opens
// without player entropy (nobody gave one).
//
// Who: the table service only. Idempotent per shoe, not per request: the
// first SeedShoe fixes the order, and any later call (a retry, with the
// same seeds or others) is answered with the shoe as it stands, so the
// answer always says which seeds are in it (a shoe closed while it waited
// was cut at random without them). The cards_burned event is written in
// the same transaction.
//
// Errors: INVALID_ARGUMENT INVALID_ARGUMENT (more than fair.MaxPlayerSeeds
// seeds, a seed empty or over fair.MaxPlayerSeed bytes, a player id empty,
// over 128 bytes or twice); NOT_FOUND SHOE_NOT_FOUND; FAILED_PRECONDITION
// NOT_AWAITING_SEEDS; PERMISSION_DENIED ROLE_NOT_ALLOWED.
func (s *Service) SeedShoe(ctx context.Context, r *shoev1.SeedShoeRequest) (*shoev1.SeedShoeResponse, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if r.GetShoeId() == "" {
		return nil, invalid("shoe_id is required")
	}
	seeds, err := sortSeeds(r.GetSeeds())
	if err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	if !isTableService(caller) {
		return nil, fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_ROLE_NOT_ALLOWED,
			"only the table service hands a shoe its players' seeds, not %s %q", caller.Role, caller.Subject)
	}
	resp := &shoev1.SeedShoeResponse{}
	err = s.update(func(tx *bolt.Tx) error {
		shoe := &shoev1.Shoe{}
		if err := loadShoeFor(tx, caller, r.ShoeId, shoe); err != nil {
			return err
		}
		if !shoe.AwaitPlayerSeeds {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_NOT_AWAITING_SEEDS,
				"shoe %q was not created to wait for its table's player seeds", r.ShoeId)
		}
		resp.Shoe = shoe
		if shoe.State != shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS {
			return nil // seeded already (or closed): as it stands
		}
		sec, err := loadSecret(tx, shoe.ShoeId)
		if err != nil {
			return err
		}
		// Source: RULES.md SHOE-SHUFFLE (the players' part, after the
		// commitment), SHOE-CUT (at random), SHOE-BURN
		if err := storeCut(tx, shoe, sec, shuffleAndCut(shoe, sec, seeds, 0, true, ""), s.opts.now()); err != nil {
			return err
		}
		return putShoe(tx, shoe)
	})
	if err != nil {
		return nil, s.internal(ctx, "seed shoe", err)
	}
	return resp, nil
}

// sortSeeds checks a table's player seeds and returns them in the order
// they are mixed in: by the seed's bytes, then by player id. Sorted, the
// order of the shoe depends only on which seeds were given, not on the
// order the players gave them in (nor the order the table lists them).
func sortSeeds(in []*shoev1.PlayerSeed) ([]*shoev1.PlayerSeed, error) {
	if len(in) > fair.MaxPlayerSeeds {
		return nil, invalid("at most %d player seeds, got %d", fair.MaxPlayerSeeds, len(in))
	}
	out := make([]*shoev1.PlayerSeed, len(in))
	seen := map[string]bool{}
	for i, ps := range in {
		switch id := ps.GetPlayerId(); {
		case id == "":
			return nil, invalid("seeds[%d]: player_id is required", i)
		case seen[id]:
			return nil, invalid("seeds[%d]: player %q gives a second seed", i, id)
		case ps.GetSeed() == "" || len(ps.GetSeed()) > fair.MaxPlayerSeed:
			return nil, invalid("seeds[%d]: the seed must be 1..%d bytes", i, fair.MaxPlayerSeed)
		}
		if err := checkID("player_id", ps.GetPlayerId()); err != nil {
			return nil, err
		}
		seen[ps.GetPlayerId()] = true
		out[i] = proto.CloneOf(ps)
	}
	slices.SortFunc(out, func(a, b *shoev1.PlayerSeed) int {
		return cmp.Or(strings.Compare(a.Seed, b.Seed), strings.Compare(a.PlayerId, b.PlayerId))
	})
	return out, nil
}
