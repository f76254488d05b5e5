package tablesvc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Player seeds: the players' entropy in a table's shoe, by commit and
// reveal, so that nobody (the operator, who knows the server seed and
// reads this service's file, included) can choose the order once one
// honest player has taken part (chemmy.table.v1.TableService, "Player
// seeds"; the shuffle is shoe-svc's, package fair).
//
//   - Every shoe the table opens without a named cutter is created with
//     await_player_seeds: shoe-svc commits to its server seed (in the
//     table's view and in shoe_opened) and fixes no order yet.
//   - Commit: while the shoe collects (entropy.Collecting), a player
//     gives SHA-256 of his seed (CommitSeed, or seed_commitment with
//     JoinTable, PlaceBet, CallBanco): one per player per shoe, from at
//     most fair.MaxPlayerSeeds players (SEEDS_FULL beyond), never from
//     one who withheld a seed at this table (SEED_WITHHELD). A plain
//     seed is never taken before the commitments are fixed: whoever
//     reads this file could choose a seed of his own against it.
//   - Fix: before the shoe's first card, or the old game's move of top
//     cards (shoeFirst), the set of commitments is fixed and published
//     (seed_commitments_fixed); the coup waits (errAwaitingSeeds) until
//     every committed player has revealed his seed (RevealSeed, checked
//     against his commitment) or the reveal deadline has passed.
//   - Seed: with every seed in, the table hands them to shoe-svc
//     (SeedShoe, request id "table/<id>/shoe/<n>/seed"), which sorts them
//     by their bytes and shuffles. SeedShoe is idempotent per shoe and
//     answers which seeds are in the shoe, so the table records what
//     shoe-svc says (seeded) and emits shoe_seeded once per shoe.
//   - Withheld: at the deadline with a seed missing, the shoe is
//     abandoned (abandonShoe): closed unused, shoe_abandoned names the
//     withholders, who are refused seeds at this table from then on; a
//     new shoe opens with a commitment round of its own (CommitBy, one
//     seed window), then the reveal. Withholding is a public veto, never
//     a choice of the order.
//   - A shoe that does not collect (a named cutter's, one an operator
//     named at CreateTable) is recorded from GetShoe after its first card
//     (noteSeeded).
//
// A player who commits nothing plays the same; a shoe nobody committed
// to is seeded with none (no player entropy: the view and shoe_seeded
// say so). A chemin de fer coup that finds its shoe spent at its first
// card opens the next shoe in the middle of its deal: that shoe gets a
// commitment round of its own too (CommitBy), as after an abandonment.

// DefaultSeedWindow is Config.SeedWindow's default: how long the players
// have to reveal their seeds once the commitments are fixed, and to
// commit to a shoe opened while a coup waits for its first card.
const DefaultSeedWindow = 15 * time.Second

// MinRevealedSeed is the shortest seed RevealSeed takes (bytes): a
// shorter one could be found from its commitment by trying them all.
const MinRevealedSeed = 16

// errAwaitingSeeds: the shoe's first card waits for the players' seeds
// (their commitment round or their reveals). Not a failure: the table
// goes on when they are in, or at the deadline.
var errAwaitingSeeds = errors.New("the shoe waits for its players' seeds")

// due is when the seed protocol wants the clock: the reveal deadline, or
// the end of a commitment round that has one.
func (e *entropy) due() (time.Time, bool) {
	switch {
	case e.Seeded:
		return time.Time{}, false
	case e.Revealing:
		return e.RevealBy, true
	case e.Collecting && !e.CommitBy.IsZero():
		return e.CommitBy, true
	}
	return time.Time{}, false
}

// restart gives a running reveal or commitment round its full window
// again from now, after a restart of the service: nobody's seed is
// called withheld for the time the service was down. It reports whether
// a deadline moved.
func (e *entropy) restart(now time.Time, window time.Duration) bool {
	switch _, ok := e.due(); {
	case !ok:
		return false
	case e.Revealing:
		e.RevealBy = now.Add(window)
	default:
		e.CommitBy = now.Add(window)
	}
	return true
}

// missing are the committed players whose seed is not revealed, sorted.
func (e *entropy) missing() []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(e.Commitments)) {
		if _, ok := e.Seeds[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// commitments are e's commitments as SeedCommitment messages, by player.
func (e *entropy) commitments() []*eventsv1.SeedCommitment {
	var out []*eventsv1.SeedCommitment
	for _, p := range slices.Sorted(maps.Keys(e.Commitments)) {
		out = append(out, &eventsv1.SeedCommitment{PlayerId: p, Commitment: e.Commitments[p]})
	}
	return out
}

// checkSeedFields refuses a request that gives a plain player_seed
// (INVALID_ARGUMENT SEED_COMMITMENT_REQUIRED: a seed is revealed only
// once the commitments are fixed) or a seed_commitment that is not 32
// bytes (INVALID_ARGUMENT INVALID_ARGUMENT).
func checkSeedFields(req any) error {
	if r, ok := req.(interface{ GetPlayerSeed() string }); ok && r.GetPlayerSeed() != "" {
		return fail(codes.InvalidArgument, reasonSeedCommitmentRequired,
			"player_seed is no longer taken: give seed_commitment (SHA-256 of your seed), then reveal the seed with RevealSeed")
	}
	if c := seedCommitmentOf(req); len(c) > 0 && len(c) != fair.CommitmentSize {
		return fail(codes.InvalidArgument, reasonInvalidArgument, "a seed commitment is SHA-256 of the seed: %d bytes, got %d", fair.CommitmentSize, len(c))
	}
	return nil
}

// seedCommitmentOf is the seed commitment a request carries, nil when
// none.
func seedCommitmentOf(req any) []byte {
	switch r := req.(type) {
	case interface{ GetSeedCommitment() []byte }:
		return r.GetSeedCommitment()
	case *tablev1.CommitSeedRequest:
		return r.GetCommitment()
	}
	return nil
}

// canCommit refuses a commitment of player that the shoe cannot take:
// FAILED_PRECONDITION SEED_WITHHELD, SEEDS_NOT_COLLECTING, ALREADY_EXISTS
// SEED_ALREADY_COMMITTED, RESOURCE_EXHAUSTED SEEDS_FULL. The same
// commitment again is taken (and changes nothing).
func (t *table) canCommit(player string, commitment []byte) error {
	e := &t.Entropy
	switch prev, given := e.Commitments[player]; {
	case slices.Contains(t.SeedWithheld, player):
		return fail(codes.FailedPrecondition, reasonSeedWithheld, "%s withheld a committed seed at this table: no seed of his is taken here", player)
	case !e.Collecting || e.Seeded:
		return fail(codes.FailedPrecondition, reasonSeedsNotCollecting, "shoe %s takes no seed commitment now (its commitments are fixed, or it does not collect)", t.ShoeID)
	case given && !bytes.Equal(prev, commitment):
		return fail(codes.AlreadyExists, reasonSeedAlreadyCommitted, "%s has committed another seed to shoe %s", player, t.ShoeID)
	case !given && len(e.Commitments) >= fair.MaxPlayerSeeds:
		return fail(codes.ResourceExhausted, reasonSeedsFull, "shoe %s has the commitments of %d players, the most it takes", t.ShoeID, fair.MaxPlayerSeeds)
	}
	return nil
}

// commit records player's commitment, which canCommit has taken, and
// announces a new one (seed_committed: the table's view changes, so its
// event sequence moves).
func (c *change) commit(player string, commitment []byte) {
	e := &c.t.Entropy
	if _, given := e.Commitments[player]; given {
		return
	}
	if e.Commitments == nil {
		e.Commitments = map[string][]byte{}
	}
	e.Commitments[player] = bytes.Clone(commitment)
	c.emit("", &eventsv1.SeedCommitted{ShoeId: c.t.ShoeID, PlayerId: player, Commitment: bytes.Clone(commitment)})
}

// reveal records player's seed, revealed: NOT_REVEALING before the
// commitments are fixed or once the shoe is seeded, SEED_NOT_COMMITTED
// without his commitment, SEED_MISMATCH when the seed does not hash to
// it. The same seed again changes nothing; a new one is announced
// (seed_revealed, without the seed).
func (c *change) reveal(player, seed string) error {
	t := c.t
	e := &t.Entropy
	if !e.Revealing || e.Seeded {
		return fail(codes.FailedPrecondition, reasonNotRevealing, "shoe %s does not wait for seeds to be revealed", t.ShoeID)
	}
	committed, ok := e.Commitments[player]
	if !ok {
		return fail(codes.FailedPrecondition, reasonSeedNotCommitted, "%s committed no seed to shoe %s", player, t.ShoeID)
	}
	if sum := sha256.Sum256([]byte(seed)); !bytes.Equal(sum[:], committed) {
		return fail(codes.InvalidArgument, reasonSeedMismatch, "SHA-256 of the seed is not %s's commitment", player)
	}
	if _, given := e.Seeds[player]; given {
		return nil
	}
	if e.Seeds == nil {
		e.Seeds = map[string]string{}
	}
	e.Seeds[player] = seed
	c.emit("", &eventsv1.SeedRevealed{ShoeId: t.ShoeID, PlayerId: player})
	return nil
}

// mutateSeed applies CommitSeed and RevealSeed (the shell's own, no game
// core's).
func (s *Service) mutateSeed(c *change, req proto.Message) error {
	switch r := req.(type) {
	case *tablev1.CommitSeedRequest:
		if err := c.t.canCommit(r.GetPlayerId(), r.GetCommitment()); err != nil {
			return err
		}
		c.commit(r.GetPlayerId(), r.GetCommitment())
	case *tablev1.RevealSeedRequest:
		return c.reveal(r.GetPlayerId(), r.GetSeed())
	}
	return nil
}

// checkRevealedSeed refuses a seed RevealSeed cannot take for its size.
func checkRevealedSeed(seed string) error {
	if len(seed) < MinRevealedSeed || len(seed) > fair.MaxPlayerSeed {
		return fail(codes.InvalidArgument, reasonInvalidArgument, "seed must be %d..%d bytes, got %d", MinRevealedSeed, fair.MaxPlayerSeed, len(seed))
	}
	return nil
}

// shoeFirst reports whether eff is the first thing that needs the shoe's
// order: a deal, or the old game's move of top cards.
func shoeFirst(eff game.Effect) bool {
	_, reads := eff.(game.OrderEffect)
	return reads
}

// seedShoe, before the shoe's first card, moves the seed protocol on:
// it fixes the commitments (and returns errAwaitingSeeds), waits for the
// reveals or a commitment round's end (errAwaitingSeeds), or hands the
// seeds to the shoe (SeedShoe) and records and announces which are in it
// (seeded). Nothing for a shoe that does not collect or is seeded.
func (s *Service) seedShoe(ctx context.Context, c *change) error {
	t := c.t
	e := &t.Entropy
	if e.Seeded || (!e.Collecting && !e.Revealing) {
		return nil
	}
	switch {
	case e.Revealing && len(e.missing()) > 0:
		return errAwaitingSeeds
	case e.Collecting && !e.CommitBy.IsZero() && c.now.Before(e.CommitBy):
		return errAwaitingSeeds
	case e.Collecting && len(e.Commitments) > 0:
		// Source: the commit-reveal of "Player seeds": the set of
		// commitments is fixed and published before any seed is revealed.
		e.Collecting, e.Revealing, e.CommitBy = false, true, time.Time{}
		e.RevealBy = c.now.Add(s.seedWindow)
		c.emit("", &eventsv1.SeedCommitmentsFixed{ShoeId: t.ShoeID, ShoeNumber: int32(t.Shoes),
			SeedCommitments: e.commitments(), RevealDeadline: timestamppb.New(e.RevealBy)})
		c.seedsFixed = true
		return errAwaitingSeeds
	}
	req := &shoev1.SeedShoeRequest{RequestId: fmt.Sprintf("table/%s/shoe/%d/seed", t.ID, t.Shoes), ShoeId: t.ShoeID}
	for _, p := range slices.Sorted(maps.Keys(e.Seeds)) {
		req.Seeds = append(req.Seeds, &shoev1.PlayerSeed{PlayerId: p, Seed: e.Seeds[p]})
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := s.shoe.SeedShoe(cctx, req)
	if errs.Reason(err) == "NOT_AWAITING_SEEDS" {
		e.Collecting, e.Revealing = false, false // its order was fixed otherwise: noteSeeded reads it
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
// shoe_seeded, with the commitments of the seeds in it.
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
	in := map[string][]byte{}
	for _, p := range by {
		if cm, ok := e.Commitments[p]; ok && source == "table" {
			in[p] = cm
		}
	}
	*e = entropy{Commitment: shoe.GetCommitment(), Seeded: true, By: by, Cutter: e.Cutter}
	if len(in) > 0 {
		e.Commitments = in
	}
	c.emit("", &eventsv1.ShoeSeeded{ShoeId: shoe.GetShoeId(), ShoeNumber: int32(c.t.Shoes), Commitment: shoe.GetCommitment(),
		PlayerIds: by, Source: source, SeedCommitments: e.commitments()})
}

// entropyProto is the view of the current shoe's player seeds (the same
// for every viewer: whose commitments and seeds, never a seed).
func entropyProto(t *table) *tablev1.ShoeEntropy {
	e := t.Entropy
	out := &tablev1.ShoeEntropy{Commitment: e.Commitment, Collecting: e.Collecting && !e.Seeded, Seeded: e.Seeded,
		CutterPlayerId: e.Cutter, PlayerEntropy: e.Seeded && len(e.By) > 0, Revealing: e.Revealing && !e.Seeded,
		Commitments: e.commitments(), WithheldPlayerIds: t.SeedWithheld}
	switch {
	case e.Seeded:
		out.PlayerIds = e.By
	case len(e.Commitments) > 0:
		out.PlayerIds = slices.Sorted(maps.Keys(e.Commitments))
	default:
		out.PlayerIds = slices.Sorted(maps.Keys(e.Seeds)) // plain seeds of a record from before commitments
	}
	if out.Revealing {
		out.RevealDeadline = timestamppb.New(e.RevealBy)
		out.RevealedPlayerIds = slices.Sorted(maps.Keys(e.Seeds))
	}
	if out.Collecting && !e.CommitBy.IsZero() {
		out.CommitDeadline = timestamppb.New(e.CommitBy)
	}
	return out
}
