package tablesvc

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/oldbaccarat"
)

// Player seeds: the players' entropy in a table's shoe, after the shoe's
// commitment (chemmy.table.v1.TableService, "Player seeds"; the scheme is
// shoe-svc's, package fair).
//
//   - Every shoe the table opens without a named cutter is created with
//     await_player_seeds: shoe-svc commits to its server seed (the
//     commitment is in the table's view and in shoe_opened) and fixes no
//     order yet.
//   - While the shoe collects (entropy.Collecting, until it is seeded),
//     JoinTable, PlaceBet and CallBanco may carry a player_seed: the
//     table keeps each player's first, from at most fair.MaxPlayerSeeds
//     players (takeSeed).
//   - Before the shoe's first card, or the old game's move of top cards
//     (shoeFirst), the table hands them to shoe-svc (SeedShoe, request id
//     "table/<id>/shoe/<n>/seed"), which sorts them by their bytes and
//     shuffles: the order depends on which seeds were given, not on when.
//     SeedShoe is idempotent per shoe and always answers which seeds are
//     in the shoe, so the table records what shoe-svc says (seeded), not
//     what it sent, and emits shoe_seeded once per shoe.
//   - A shoe that does not collect (a named cutter's, one an operator
//     named at CreateTable) is recorded from GetShoe after its first card
//     (noteSeeded).
//
// A player who gives no seed plays the same; a shoe nobody gave a seed to
// is seeded with none (no player entropy, and the view and shoe_seeded
// say so). A chemin de fer coup that finds its shoe spent at its first
// card opens the next shoe in the middle of its deal: that shoe is seeded
// at once, with no seed (the coup's bets came before its commitment).

// entropy is the record of the current shoe's player seeds.
type entropy struct {
	// Commitment is the shoe's commitment (SHA-256 of its server seed);
	// empty for a certification shoe.
	Commitment []byte `json:"commitment,omitempty"`
	// Collecting: the shoe waits for the table's seeds (shoe-svc
	// AWAITING_SEEDS), Seeds holds them by player id.
	Collecting bool              `json:"collecting,omitempty"`
	Seeds      map[string]string `json:"seeds,omitempty"`
	// Seeded: the shoe's order is fixed; By are the players whose seeds
	// are in it, sorted (shoe-svc's answer).
	Seeded bool     `json:"seeded,omitempty"`
	By     []string `json:"by,omitempty"`
	// Cutter is the named cutter (shoe_cut_by_player), whose Cut gives
	// the shoe's seed instead.
	Cutter string `json:"cutter,omitempty"`
}

// openedEntropy is the record of a shoe the table has just put in play.
func openedEntropy(shoe *shoev1.Shoe) entropy {
	return entropy{Commitment: shoe.GetCommitment(), Cutter: shoe.GetCutterPlayerId(),
		Collecting: shoe.GetState() == shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS}
}

// checkSeed refuses a player_seed longer than fair.MaxPlayerSeed bytes
// (INVALID_ARGUMENT INVALID_ARGUMENT).
func checkSeed(req any) error {
	if r, ok := req.(interface{ GetPlayerSeed() string }); ok && len(r.GetPlayerSeed()) > fair.MaxPlayerSeed {
		return fail(codes.InvalidArgument, reasonInvalidArgument, "player_seed must be at most %d bytes", fair.MaxPlayerSeed)
	}
	return nil
}

// takeSeed keeps the player_seed of req, an applied request of player,
// when the shoe collects seeds: his first for this shoe, from at most
// fair.MaxPlayerSeeds players. Otherwise the seed is ignored.
func (t *table) takeSeed(player string, req any) {
	r, ok := req.(interface{ GetPlayerSeed() string })
	e := &t.Entropy
	if !ok || r.GetPlayerSeed() == "" || !e.Collecting || e.Seeded || len(e.Seeds) >= fair.MaxPlayerSeeds {
		return
	}
	if _, given := e.Seeds[player]; given {
		return
	}
	if e.Seeds == nil {
		e.Seeds = map[string]string{}
	}
	e.Seeds[player] = r.GetPlayerSeed()
}

// shoeFirst reports whether eff is the first thing that needs the shoe's
// order: a deal, or the old game's move of top cards.
func shoeFirst(eff game.Effect) bool {
	switch eff.(type) {
	case game.DealCard, oldbaccarat.MoveToBottom:
		return true
	}
	return false
}

// seedShoe hands the seeds the table collected to its shoe (SeedShoe)
// before the shoe's first card, and records and announces which are in
// it (seeded). Nothing for a shoe that does not collect or is seeded.
func (s *Service) seedShoe(ctx context.Context, c *change) error {
	t := c.t
	e := &t.Entropy
	if e.Seeded || !e.Collecting {
		return nil
	}
	req := &shoev1.SeedShoeRequest{RequestId: fmt.Sprintf("table/%s/shoe/%d/seed", t.ID, t.Shoes), ShoeId: t.ShoeID}
	for _, p := range slices.Sorted(maps.Keys(e.Seeds)) {
		req.Seeds = append(req.Seeds, &shoev1.PlayerSeed{PlayerId: p, Seed: e.Seeds[p]})
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := s.shoe.SeedShoe(cctx, req)
	if errs.Reason(err) == "NOT_AWAITING_SEEDS" {
		e.Collecting = false // its order was fixed otherwise: noteSeeded reads it
		return nil
	}
	if err != nil {
		return fmt.Errorf("seed shoe %s: %w", t.ShoeID, err)
	}
	c.seeded(resp.GetShoe())
	return nil
}

// noteSeeded records, after a card of a shoe that did not collect seeds,
// whose seeds its order holds (GetShoe), once. Best effort: a failed read
// is tried again at the next card.
func (s *Service) noteSeeded(ctx context.Context, c *change) {
	if c.t.Entropy.Seeded {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := s.shoe.GetShoe(cctx, &shoev1.GetShoeRequest{ShoeId: c.t.ShoeID})
	switch st := resp.GetShoe().GetState(); {
	case err != nil:
		s.log.Debug("shoe not read after its first card; will read it again", "table", c.t.ID, "err", err)
	case st == shoev1.ShoeState_SHOE_STATE_OPEN || st == shoev1.ShoeState_SHOE_STATE_CLOSED:
		c.seeded(resp.GetShoe())
	}
}

// seeded records that the table's shoe is seeded as shoe says and emits
// shoe_seeded.
func (c *change) seeded(shoe *shoev1.Shoe) {
	by := slices.Sorted(slices.Values(shoe.GetPlayerSeedPlayerIds()))
	if len(by) == 0 && len(shoe.GetPlayerSeeds()) > 0 && shoe.GetCutBy() != "" {
		by = []string{shoe.GetCutBy()} // a cut from before the givers were recorded
	}
	source := "none"
	switch {
	case len(by) > 0 && shoe.GetAwaitPlayerSeeds():
		source = "table"
	case len(by) > 0:
		source = "cutter"
	}
	e := &c.t.Entropy
	*e = entropy{Commitment: shoe.GetCommitment(), Seeded: true, By: by, Cutter: e.Cutter}
	c.emit("", &eventsv1.ShoeSeeded{ShoeId: shoe.GetShoeId(), ShoeNumber: int32(c.t.Shoes), Commitment: shoe.GetCommitment(),
		PlayerIds: by, Source: source})
}

// entropyProto is the view of the current shoe's player seeds (the same
// for every viewer: whose seeds, never the seeds).
func entropyProto(t *table) *tablev1.ShoeEntropy {
	e := t.Entropy
	out := &tablev1.ShoeEntropy{Commitment: e.Commitment, Collecting: e.Collecting && !e.Seeded, Seeded: e.Seeded,
		CutterPlayerId: e.Cutter, PlayerEntropy: e.Seeded && len(e.By) > 0}
	if e.Seeded {
		out.PlayerIds = e.By
	} else {
		out.PlayerIds = slices.Sorted(maps.Keys(e.Seeds))
	}
	return out
}
