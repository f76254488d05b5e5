package shoesvc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

// secret is the "secrets" value of a shoe: never returned while the shoe
// is open.
type secret struct {
	seed  []byte // server seed (committed: Shoe.commitment = SHA-256(seed))
	order []byte // shuffled order before the cut; empty until the cut
	burn  int32  // burn count for BURN_MODE_COUNT, 0 otherwise
}

// seeds are the shuffle's inputs: the secret seed, the shoe's client
// seed and the player seeds.
func (s *secret) seeds(shoe *shoev1.Shoe, players []string) fair.Seeds {
	return fair.Seeds{Server: s.seed, Client: shoe.ClientSeed, Players: players}
}

// encode: uint16be(len(seed)) || seed || byte(burn) || order.
func (s *secret) encode() []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(s.seed)))
	b = append(b, s.seed...)
	b = append(b, byte(s.burn))
	return append(b, s.order...)
}

func loadSecret(tx *bolt.Tx, id string) (*secret, error) {
	v := tx.Bucket(bucketSecrets).Get([]byte(id))
	if len(v) < 3 {
		return nil, fmt.Errorf("shoe %s: no secret", id)
	}
	n := int(binary.BigEndian.Uint16(v))
	if len(v) < 3+n {
		return nil, fmt.Errorf("shoe %s: corrupt secret", id)
	}
	return &secret{seed: bytes.Clone(v[2 : 2+n]), burn: int32(v[2+n]), order: bytes.Clone(v[3+n:])}, nil
}

// cutResult is a shoe's loaded order split at the burn.
type cutResult struct {
	burned  []rules.Card
	dealing []byte
}

// shuffleAndCut fixes the order from the seeds (SHOE-SHUFFLE), cuts it
// at p (or, when random, at the position the stream draws next) and burns
// (SHOE-CUT, SHOE-BURN), updating sec.order and shoe's public state; the
// caller stores them (storeCut, putShoe). players are the player seeds
// in the order mixed in, and who gave them (none for a random cut).
func shuffleAndCut(shoe *shoev1.Shoe, sec *secret, players []*shoev1.PlayerSeed, p int, random bool, by string) *cutResult {
	shoe.PlayerSeeds, shoe.PlayerSeedPlayerIds = nil, nil
	for _, ps := range players {
		shoe.PlayerSeeds = append(shoe.PlayerSeeds, ps.Seed)
		shoe.PlayerSeedPlayerIds = append(shoe.PlayerSeedPlayerIds, ps.PlayerId)
	}
	order, stream := fair.Shuffle(int(shoe.Decks), sec.seeds(shoe, shoe.PlayerSeeds))
	if random {
		p = fair.RandomCut(stream, len(order))
	}
	sec.order = order
	loaded := fair.Cut(order, p)
	b := int(sec.burn)
	if shoe.BurnMode == shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD {
		b = 1 + fair.BurnValue(loaded[0])
	}
	burned, _ := fair.Cards(loaded[:b])
	shoe.State = shoev1.ShoeState_SHOE_STATE_OPEN
	shoe.CutPosition, shoe.CutRandom, shoe.CutBy = int32(p), random, by
	shoe.Burned = toProtoCards(burned)
	shoe.CardsTotal = int32(len(loaded) - b)
	shoe.CardsRemaining = shoe.CardsTotal
	shoe.CardsDealt = 0
	return &cutResult{burned: burned, dealing: loaded[b:]}
}

// cutRandom shuffles without player seeds and cuts at random (no cutter
// named, or his time ran out).
func cutRandom(shoe *shoev1.Shoe, sec *secret) *cutResult {
	return shuffleAndCut(shoe, sec, nil, 0, true, "")
}

// storeCut writes what a cut adds: the secret with the shuffled order,
// the dealing order, the burned cards' fates, the cards_burned event; the
// shoe leaves the cutting index.
func storeCut(tx *bolt.Tx, shoe *shoev1.Shoe, sec *secret, c *cutResult, now time.Time) error {
	id := []byte(shoe.ShoeId)
	if err := tx.Bucket(bucketSecrets).Put(id, sec.encode()); err != nil {
		return err
	}
	if err := tx.Bucket(bucketOrders).Put(id, c.dealing); err != nil {
		return err
	}
	for i, card := range shoe.Burned {
		if err := putFate(tx, &shoev1.CardFate{ShoeId: shoe.ShoeId, LoadPosition: int32(i), Card: card,
			Fate: shoev1.Fate_FATE_BURNED, Time: timestamppb.New(now)}); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketCutting).Delete(id); err != nil {
		return err
	}
	return emit(tx, shoe, now, &eventsv1.ShoeEvent_CardsBurned{CardsBurned: &eventsv1.CardsBurned{
		CutPosition: shoe.CutPosition, CutRandom: shoe.CutRandom, CutBy: shoe.CutBy,
		Burned: shoe.Burned, CardsTotal: shoe.CardsTotal, PlayerSeeds: shoe.PlayerSeeds, PlayerSeedPlayerIds: shoe.PlayerSeedPlayerIds,
	}})
}

// cutAtRandom cuts a shoe waiting for its cutter, without player seed, at
// the random position the stream draws after the shuffle
// (fair.RandomCut), then burns.
func cutAtRandom(tx *bolt.Tx, shoe *shoev1.Shoe, now time.Time) error {
	sec, err := loadSecret(tx, shoe.ShoeId)
	if err != nil {
		return err
	}
	return storeCut(tx, shoe, sec, cutRandom(shoe, sec), now)
}

// waiting reports whether a shoe waits for its order: for its named
// cutter (AWAITING_CUT) or its table's player seeds (AWAITING_SEEDS).
func waiting(shoe *shoev1.Shoe) bool {
	return shoe.State == shoev1.ShoeState_SHOE_STATE_AWAITING_CUT || shoe.State == shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS
}

// notSeeded refuses to deal from or move the cards of a shoe that waits
// for its table's player seeds (FAILED_PRECONDITION SHOE_NOT_SEEDED).
func notSeeded(shoe *shoev1.Shoe) error {
	if shoe.State != shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS {
		return nil
	}
	return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_NOT_SEEDED,
		"shoe %q waits for its table's player seeds (SeedShoe): its order is not fixed yet", shoe.ShoeId)
}

// expireCut cuts at random a shoe whose cutter's time has run out
// (SHOE-CUT) and reports whether it did. The caller stores the shoe.
func (s *Service) expireCut(tx *bolt.Tx, shoe *shoev1.Shoe, now time.Time) (bool, error) {
	if shoe.State != shoev1.ShoeState_SHOE_STATE_AWAITING_CUT || now.Before(shoe.CutDeadline.AsTime()) {
		return false, nil
	}
	return true, cutAtRandom(tx, shoe, now)
}

// putShoeWith stores shoe with the event of its change (emit, putShoe).
func putShoeWith(tx *bolt.Tx, shoe *shoev1.Shoe, now time.Time, payload any) error {
	if err := emit(tx, shoe, now, payload); err != nil {
		return err
	}
	return putShoe(tx, shoe)
}

func putShoe(tx *bolt.Tx, shoe *shoev1.Shoe) error {
	b, err := marshal.Marshal(shoe)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketShoes).Put([]byte(shoe.ShoeId), b)
}

func fateKey(shoeID string, pos int32) []byte {
	return binary.BigEndian.AppendUint16([]byte(shoeID), uint16(pos))
}

// putFate stores a card's fate and, when it has a coup, the coup index.
func putFate(tx *bolt.Tx, f *shoev1.CardFate) error {
	b, err := marshal.Marshal(f)
	if err != nil {
		return err
	}
	k := fateKey(f.ShoeId, f.LoadPosition)
	if err := tx.Bucket(bucketFates).Put(k, b); err != nil {
		return err
	}
	if f.CoupId == "" {
		return nil
	}
	return tx.Bucket(bucketCoups).Put(append(append([]byte(f.CoupId), 0), k...), nil)
}

// emitOpened writes the shoe_opened event of a new shoe.
func emitOpened(tx *bolt.Tx, shoe *shoev1.Shoe, now time.Time) error {
	return emit(tx, shoe, now, &eventsv1.ShoeEvent_ShoeOpened{ShoeOpened: &eventsv1.ShoeOpened{
		Commitment: shoe.Commitment, Decks: shoe.Decks, Variant: shoe.Variant, CutCardFromEnd: shoe.CutCardFromEnd,
		BurnMode: shoe.BurnMode, ClientSeed: shoe.ClientSeed, CutterPlayerId: shoe.CutterPlayerId,
		CutDeadline: shoe.CutDeadline, Owner: shoe.Owner, Certification: shoe.Certification, TestShoe: shoe.TestShoe,
		OwnedByTable: shoe.OwnedByTable, CreatedBy: shoe.CreatedBy, AwaitPlayerSeeds: shoe.AwaitPlayerSeeds,
		Burn: shoe.Burn,
	}})
}

// emit writes a shoe event to the outbox in tx: subject
// "chemmy.shoe.<shoe_id>.<kind>", id "<shoe_id>/<kind>".
func emit(tx *bolt.Tx, shoe *shoev1.Shoe, now time.Time, payload any) error {
	ev := &eventsv1.ShoeEvent{ShoeId: shoe.ShoeId, OccurTime: timestamppb.New(now)}
	var kind string
	switch p := payload.(type) {
	case *eventsv1.ShoeEvent_ShoeOpened:
		kind, ev.Payload = "shoe_opened", p
	case *eventsv1.ShoeEvent_CardsBurned:
		kind, ev.Payload = "cards_burned", p
	case *eventsv1.ShoeEvent_CutCardOut:
		kind, ev.Payload = "cut_card_out", p
	case *eventsv1.ShoeEvent_TopCardsMoved:
		kind, ev.Payload = "top_cards_moved", p
	case *eventsv1.ShoeEvent_ShoeClosed:
		kind, ev.Payload = "shoe_closed", p
	case *eventsv1.ShoeEvent_ShoeClaimed:
		kind, ev.Payload = "shoe_claimed", p
	default:
		return fmt.Errorf("emit: unknown payload %T", payload)
	}
	ev.EventId = shoe.ShoeId + "/" + kind
	b, err := marshal.Marshal(ev)
	if err != nil {
		return err
	}
	return outbox.Put(tx, "chemmy.shoe."+shoe.ShoeId+"."+kind, ev.EventId, b)
}

// closeShoe closes shoe in tx: a shoe still waiting for its cutter or its
// table's seeds is cut at random first, without player seed; the cards left get the fate LEFT; the shoe_closed event
// carries the reveal and who closed it (by: the CloseShoe caller; the zero
// Caller for a shoe whose last card was dealt). The caller stores the
// shoe.
func (s *Service) closeShoe(tx *bolt.Tx, shoe *shoev1.Shoe, now time.Time, reason string, forced bool, by auth.Caller) error {
	if waiting(shoe) {
		if err := cutAtRandom(tx, shoe, now); err != nil {
			return err
		}
	}
	order := tx.Bucket(bucketOrders).Get([]byte(shoe.ShoeId))
	for pos := shoe.CardsDealt; pos < int32(len(order)); pos++ {
		card, err := rules.CardFromIndex(int(order[pos]))
		if err != nil {
			return err
		}
		if err := putFate(tx, &shoev1.CardFate{ShoeId: shoe.ShoeId, LoadPosition: int32(len(shoe.Burned)) + pos,
			Card: toProtoCard(card), Fate: shoev1.Fate_FATE_LEFT, Time: timestamppb.New(now)}); err != nil {
			return err
		}
	}
	shoe.State = shoev1.ShoeState_SHOE_STATE_CLOSED
	shoe.CloseTime, shoe.CloseReason = timestamppb.New(now), reason
	shoe.ClosedBy, shoe.ClosedByRole = by.Subject, string(by.Role)
	closed := &eventsv1.ShoeClosed{Reason: reason, Forced: forced, ClosedBy: by.Subject, ClosedByRole: string(by.Role)}
	if len(shoe.Commitment) > 0 {
		rv, err := buildReveal(tx, shoe)
		if err != nil {
			return err
		}
		closed.Reveal = rv
	}
	return emit(tx, shoe, now, &eventsv1.ShoeEvent_ShoeClosed{ShoeClosed: closed})
}

// buildReveal assembles a closed shoe's reveal from its secret and the
// stored fates (the dealt cards in dealing order).
func buildReveal(tx *bolt.Tx, shoe *shoev1.Shoe) (*shoev1.ShoeReveal, error) {
	sec, err := loadSecret(tx, shoe.ShoeId)
	if err != nil {
		return nil, err
	}
	rv := &shoev1.ShoeReveal{
		ShoeId: shoe.ShoeId, Decks: shoe.Decks, ServerSeed: sec.seed, ClientSeed: shoe.ClientSeed, PlayerSeeds: shoe.PlayerSeeds,
		PlayerSeedPlayerIds: shoe.PlayerSeedPlayerIds,
		Commitment:          shoe.Commitment, Order: sec.order, CutPosition: shoe.CutPosition, CutRandom: shoe.CutRandom,
		CutBy: shoe.CutBy, BurnMode: shoe.BurnMode, CardsLeft: shoe.CardsRemaining,
		CutCardFromEnd: shoe.CutCardFromEnd, CloseReason: shoe.CloseReason,
		MovedToBottom: shoe.MovedToBottom, MovedBy: shoe.MovedBy,
		// The burn announced at the opening: the secret holds it for
		// every shoe, those stored before Shoe.burn too.
		Burn: sec.burn,
	}
	for _, b := range shoe.Burned {
		rv.Burned = append(rv.Burned, b.Code)
	}
	fates, err := shoeFates(tx, shoe.ShoeId)
	if err != nil {
		return nil, err
	}
	for _, f := range fates {
		if f.Fate == shoev1.Fate_FATE_DEALT {
			if int(f.DealtPosition) != len(rv.Dealt) {
				return nil, fmt.Errorf("shoe %s: fate of dealt position %d missing", shoe.ShoeId, len(rv.Dealt))
			}
			rv.Dealt = append(rv.Dealt, f.Card.GetCode())
		}
	}
	return rv, nil
}

// shoeFates returns a shoe's stored fates in load order.
func shoeFates(tx *bolt.Tx, shoeID string) ([]*shoev1.CardFate, error) {
	var out []*shoev1.CardFate
	c := tx.Bucket(bucketFates).Cursor()
	prefix := []byte(shoeID)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+2; k, v = c.Next() {
		f := &shoev1.CardFate{}
		if err := proto.Unmarshal(v, f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// update runs fn in a bbolt write transaction and wakes the outbox relay.
//
// fn is group-committed with the writes of other calls (one fsync for
// all, see store.Committer): it may run more than once, always in a
// transaction that was rolled back, so it must load what it changes from
// tx and leave nothing outside tx but results the next run assigns again.
func (s *Service) update(fn func(tx *bolt.Tx) error) error {
	if err := s.commit.Update(fn); err != nil {
		return err
	}
	s.relay.Notify()
	return nil
}

// updateOnce is update for a function that changes values built outside
// the transaction (a new shoe): it runs exactly once, in a transaction of
// its own.
func (s *Service) updateOnce(fn func(tx *bolt.Tx) error) error {
	if err := s.db.Update(fn); err != nil {
		return err
	}
	s.relay.Notify()
	return nil
}

// Cut cuts a shoe waiting for its named cutter, then burns.
func (s *Service) Cut(ctx context.Context, r *shoev1.CutRequest) (*shoev1.CutResponse, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if r.GetShoeId() == "" || r.GetPlayerId() == "" {
		return nil, invalid("shoe_id and player_id are required")
	}
	if err := checkID("player_id", r.PlayerId); err != nil {
		return nil, err
	}
	if len(r.GetPlayerSeed()) > maxPlayerSeedLen {
		return nil, invalid("player_seed is longer than %d bytes", maxPlayerSeedLen)
	}
	if err := auth.RequireSelf(ctx, Domain, r.PlayerId); err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	key := "shoe/cut/" + r.ShoeId + "/" + r.RequestId
	hash := store.Hash(r)
	resp := &shoev1.CutResponse{}
	var after error // an error returned after committing the transaction
	err := s.update(func(tx *bolt.Tx) error {
		after = nil
		// A table's shoe: the named cutter (a player cuts only for
		// himself, checked above and below) or the table service.
		shoe, replayed, err := shoeAndReplay(tx, caller, r.ShoeId, key, hash, r.RequestId, resp, func(shoe *shoev1.Shoe) error {
			if caller.Role == auth.RolePlayer {
				return nil
			}
			if err := tableOnly(caller, shoe, "cut"); err != nil {
				return err
			}
			if !isTableService(caller) {
				// The cut carries the cutter's seed, his entropy: staff do
				// not cut for him (his time running out cuts at random).
				return fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_NOT_THE_CUTTER,
					"shoe %q is cut by its named cutter %q himself, not by %s %q", shoe.ShoeId, shoe.CutterPlayerId, caller.Role, caller.Subject)
			}
			return nil
		})
		if err != nil || replayed {
			return err
		}
		if shoe.State == shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS {
			return fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_NOT_THE_CUTTER,
				"shoe %q has no cutter: its table seeds it with its players' seeds", r.ShoeId)
		}
		if shoe.State != shoev1.ShoeState_SHOE_STATE_AWAITING_CUT {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_ALREADY_CUT,
				"shoe %q is already cut", r.ShoeId)
		}
		if r.PlayerId != shoe.CutterPlayerId {
			return fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_NOT_THE_CUTTER,
				"shoe %q is cut by %q, not %q", r.ShoeId, shoe.CutterPlayerId, r.PlayerId)
		}
		now := s.opts.now()
		// Source: RULES.md SHOE-CUT (too late: the shoe is cut at random)
		if expired, err := s.expireCut(tx, shoe, now); err != nil {
			return err
		} else if expired {
			after = fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_CUT_TIME_EXPIRED,
				"the time to cut shoe %q ran out at %s; it was cut at random", r.ShoeId, shoe.CutDeadline.AsTime().Format(time.RFC3339))
			return putShoe(tx, shoe)
		}
		n := int32(shoe.Decks) * rules.DeckSize
		if r.Position < 0 || r.Position >= n {
			return invalid("position must be 0..%d, got %d", n-1, r.Position)
		}
		sec, err := loadSecret(tx, shoe.ShoeId)
		if err != nil {
			return err
		}
		var players []*shoev1.PlayerSeed
		if r.PlayerSeed != "" {
			players = []*shoev1.PlayerSeed{{PlayerId: r.PlayerId, Seed: r.PlayerSeed}}
		}
		// Source: RULES.md SHOE-SHUFFLE (the player's part, after the
		// commitment), SHOE-CUT, SHOE-BURN
		if err := storeCut(tx, shoe, sec, shuffleAndCut(shoe, sec, players, int(r.Position), false, r.PlayerId), now); err != nil {
			return err
		}
		if err := putShoe(tx, shoe); err != nil {
			return err
		}
		resp.Shoe = shoe
		return saveAnswer(tx, key, hash, resp)
	})
	if err == nil {
		err = after
	}
	if err != nil {
		return nil, s.internal(ctx, "cut", err)
	}
	return resp, nil
}

// CloseShoe ends a shoe (SHOE-RESHUFFLE).
func (s *Service) CloseShoe(ctx context.Context, r *shoev1.CloseShoeRequest) (*shoev1.CloseShoeResponse, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if r.GetShoeId() == "" {
		return nil, invalid("shoe_id is required")
	}
	if len(r.GetReason()) > maxReasonLen {
		return nil, invalid("reason is longer than %d bytes", maxReasonLen)
	}
	if r.Force {
		// An operator forces a staff shoe closed; table-svc its own table's
		// shoe when the table closes (ownership is checked below).
		if c, _ := auth.FromContext(ctx); c.Role != auth.RoleOperator && !isTableService(c) {
			return nil, fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_ROLE_NOT_ALLOWED,
				"only an operator (or the table service, for a table that closed) may force a shoe closed")
		}
		if r.Reason == "" {
			return nil, invalid("a forced close needs a reason")
		}
	}
	key := "shoe/close/" + r.ShoeId + "/" + r.RequestId
	hash := store.Hash(r)
	caller, _ := auth.FromContext(ctx)
	resp := &shoev1.CloseShoeResponse{}
	err := s.update(func(tx *bolt.Tx) error {
		// Only the table closes its shoe, between coups.
		shoe, replayed, err := shoeAndReplay(tx, caller, r.ShoeId, key, hash, r.RequestId, resp, func(shoe *shoev1.Shoe) error {
			return tableOnly(caller, shoe, "close")
		})
		if err != nil || replayed {
			return err
		}
		if shoe.State != shoev1.ShoeState_SHOE_STATE_CLOSED {
			// Source: RULES.md SHOE-RESHUFFLE: not before 5/6 of the shoe is
			// out (burned or dealt), or the cut card.
			out := len(shoe.Burned) + int(shoe.CardsDealt)
			loaded := out + int(shoe.CardsRemaining)
			var reason string
			forced := false
			switch {
			case shoe.CutCardOut:
				reason = "cut card out"
			case 6*out >= 5*loaded:
				reason = "5/6 dealt"
			case r.Force:
				reason, forced = "forced: "+r.Reason, true
			default:
				return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_RESHUFFLE_TOO_EARLY,
					"shoe %q: %d of %d cards are out, fewer than 5/6, and the cut card is not out", r.ShoeId, out, loaded)
			}
			if err := s.closeShoe(tx, shoe, s.opts.now(), reason, forced, caller); err != nil {
				return err
			}
			if err := putShoe(tx, shoe); err != nil {
				return err
			}
		}
		resp.Shoe = shoe
		return saveAnswer(tx, key, hash, resp)
	})
	if err != nil {
		return nil, s.internal(ctx, "close shoe", err)
	}
	return resp, nil
}

// GetShoeReveal returns a closed shoe's seeds and order.
func (s *Service) GetShoeReveal(ctx context.Context, r *shoev1.GetShoeRevealRequest) (*shoev1.GetShoeRevealResponse, error) {
	if r.GetShoeId() == "" {
		return nil, invalid("shoe_id is required")
	}
	caller, _ := auth.FromContext(ctx)
	resp := &shoev1.GetShoeRevealResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		shoe := &shoev1.Shoe{}
		if err := loadShoeFor(tx, caller, r.ShoeId, shoe); err != nil {
			return err
		}
		if len(shoe.Commitment) == 0 {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_NOT_PROVABLY_FAIR,
				"shoe %q was built from a given order: it has no seeds", r.ShoeId)
		}
		if shoe.State != shoev1.ShoeState_SHOE_STATE_CLOSED {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_NOT_CLOSED,
				"shoe %q is not closed: its order is secret", r.ShoeId)
		}
		rv, err := buildReveal(tx, shoe)
		resp.Reveal = rv
		return err
	})
	if err != nil {
		return nil, s.internal(ctx, "get shoe reveal", err)
	}
	return resp, nil
}

// ListCardFates lists the fates of a shoe's or a coup's cards.
func (s *Service) ListCardFates(ctx context.Context, r *shoev1.ListCardFatesRequest) (*shoev1.ListCardFatesResponse, error) {
	if (r.GetShoeId() == "") == (r.GetCoupId() == "") {
		return nil, invalid("give exactly one of shoe_id and coup_id")
	}
	if err := checkID("coup_id", r.GetCoupId()); err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	// The dealt cards of a table's open shoe include the face-down cards
	// of the coup in play: only the table sees them before the close.
	// Every fate listed is checked against its own shoe: the fates of a
	// coup may come from several shoes (a staff shoe's deal that named
	// the coup), and the first of them says nothing of the others.
	checked := map[string]error{}
	hidden := func(tx *bolt.Tx, shoeID string) error {
		if err, ok := checked[shoeID]; ok {
			return err
		}
		shoe := &shoev1.Shoe{}
		err := loadShoeFor(tx, caller, shoeID, shoe)
		if err == nil && shoe.OwnedByTable && shoe.State != shoev1.ShoeState_SHOE_STATE_CLOSED && !isTableService(caller) {
			err = fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_NOT_CLOSED,
				"the card fates of table shoe %q are public once it is closed", shoeID)
		}
		checked[shoeID] = err
		return err
	}
	resp := &shoev1.ListCardFatesResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if r.ShoeId != "" {
			if err := hidden(tx, r.ShoeId); err != nil {
				return err
			}
			fates, err := shoeFates(tx, r.ShoeId)
			resp.Fates = fates
			return err
		}
		prefix := append([]byte(r.CoupId), 0)
		c := tx.Bucket(bucketCoups).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			v := tx.Bucket(bucketFates).Get(k[len(prefix):])
			if v == nil {
				return fmt.Errorf("coup index %q without fate", k)
			}
			f := &shoev1.CardFate{}
			if err := proto.Unmarshal(v, f); err != nil {
				return err
			}
			if err := hidden(tx, f.GetShoeId()); errs.Reason(err) == "SHOE_NOT_FOUND" {
				continue // a card of another operator's shoe
			} else if err != nil {
				return err
			}
			resp.Fates = append(resp.Fates, f)
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "list card fates", err)
	}
	return resp, nil
}

// sweepLoop cuts at random, about every opts.sweep, the shoes whose
// cutter's time has run out (calls touching such a shoe do it too).
func (s *Service) sweepLoop(ctx context.Context) error {
	t := time.NewTicker(s.opts.sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var ids []string
		_ = s.db.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketCutting).ForEach(func(k, _ []byte) error {
				ids = append(ids, string(k))
				return nil
			})
		})
		for _, id := range ids {
			err := s.update(func(tx *bolt.Tx) error {
				shoe := &shoev1.Shoe{}
				if err := loadShoe(tx, id, shoe); err != nil {
					return err
				}
				if expired, err := s.expireCut(tx, shoe, s.opts.now()); err != nil || !expired {
					return err
				}
				return putShoe(tx, shoe)
			})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("cut sweep", "shoe", id, "err", err)
			}
		}
	}
}
