package shoesvc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/kit/shard"
	"github.com/chemmy/chemmy/services/kit/store"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

var (
	bucketShoes   = []byte("shoes")
	bucketOrders  = []byte("orders")
	bucketSecrets = []byte("secrets")
	bucketFates   = []byte("fates")
	bucketCoups   = []byte("coups")
	bucketCutting = []byte("cutting")
)

// House rules (RULES.md SHOE-DECKS, SHOE-CUT-CARD, SHOE-BURN) and limits.
const (
	defaultDecks      = 6
	defaultCutFromEnd = 8
	minCutFromEnd     = 6  // chemin de fer and punto banco
	maxCutFromEnd     = 16 // all but the old game; certification shoes
	// A banque or old-game coup deals up to 9 cards (3 hands of 3 cards):
	// at least 8 must lie behind the cut card.
	minCutFromEndBig = 8
	// 17 is the most that keeps the cut card of a 104-card shoe from
	// coming out before 5/6 of it is out (SHOE-RESHUFFLE: 6*(104-17) >=
	// 5*104), and lets a 6-player old-game coup (up to 18 cards) finish.
	maxCutFromEndOld = 17
	defaultBurn      = 3
	maxOrderCards    = 16 * rules.DeckSize // 832
	maxRequestIDLen  = 256
	maxOwnerLen      = 256
	maxIDLen         = 128 // player, coup ids
	maxHandLen       = 32
	maxReasonLen     = 256
	maxPlayerSeedLen = fair.MaxPlayerSeed // 256 bytes
	defaultCutLimit  = 30 * time.Second
	minCutLimit      = time.Second
	maxCutLimit      = 10 * time.Minute
)

var marshal = proto.MarshalOptions{Deterministic: true}

// fail returns a status error with ErrorInfo{domain: Domain, reason: r
// without its "ERROR_REASON_" prefix}.
func fail(c codes.Code, r shoev1.ErrorReason, format string, args ...any) error {
	return errs.New(c, Domain, strings.TrimPrefix(r.String(), "ERROR_REASON_"), format, args...)
}

func invalid(format string, args ...any) error {
	return fail(codes.InvalidArgument, shoev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, format, args...)
}

func houseRule(format string, args ...any) error {
	return fail(codes.InvalidArgument, shoev1.ErrorReason_ERROR_REASON_INVALID_HOUSE_RULE, format, args...)
}

func notFound(id string) error {
	return fail(codes.NotFound, shoev1.ErrorReason_ERROR_REASON_SHOE_NOT_FOUND, "no shoe %q", id)
}

// internal turns a storage failure into an INTERNAL status (no ErrorInfo:
// the contract has no reason for it) and logs it. Status errors pass.
func (s *Service) internal(ctx context.Context, op string, err error) error {
	if errs.IsStatus(err) {
		return err
	}
	s.log.ErrorContext(ctx, op, "err", err)
	return status.Errorf(codes.Internal, "%s: storage failure", op)
}

// isTableService reports whether the verified caller is the table
// service itself (role service, subject "table-svc").
func isTableService(c auth.Caller) bool {
	return c.Role == auth.RoleService && c.Subject == trust.Table
}

// tableOnly refuses a caller other than the table service on a table's
// shoe (PERMISSION_DENIED SHOE_OWNED_BY_TABLE); what names the action.
func tableOnly(c auth.Caller, shoe *shoev1.Shoe, what string) error {
	if !shoe.OwnedByTable || isTableService(c) {
		return nil
	}
	owner := ""
	if t := tableOf(shoe); t != "" {
		owner = fmt.Sprintf(" (table %q)", t)
	}
	return fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_SHOE_OWNED_BY_TABLE,
		"shoe %q belongs to a table%s: only the table service may %s it, not %s %q", shoe.ShoeId, owner, what, c.Role, c.Subject)
}

// createKey is the idempotency key of a CreateShoe or CreateShoeFromOrder
// request: request ids are per verified caller, so that nobody can create
// a shoe under a request id the table service will use (e.g.
// "table/<id>/shoe/<n+1>") and have his shoe, not the table's own,
// replayed to the table.
func createKey(kind string, c auth.Caller, requestID string) string {
	who := string(c.Role) + ":" + c.Subject
	if op := operatorOf(c, ""); op != DefaultOperator && c.Role != auth.RoleService {
		// Two operators' callers of one subject never share a request
		// (the default operator's keys keep their shape).
		who += "@" + op
	}
	return "shoe/" + kind + "/" + strconv.Quote(who) + "/" + requestID
}

func checkRequestID(id string) error {
	if id == "" {
		return invalid("request_id is required")
	}
	if len(id) > maxRequestIDLen {
		return invalid("request_id is longer than %d bytes", maxRequestIDLen)
	}
	return nil
}

func checkOwner(owner string) error {
	if len(owner) > maxOwnerLen {
		return invalid("owner is longer than %d bytes", maxOwnerLen)
	}
	return nil
}

func reused(id string) error {
	return fail(codes.AlreadyExists, shoev1.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED,
		"request_id %q was used with a different request", id)
}

func checkID(field, v string) error {
	if len(v) > maxIDLen || strings.ContainsRune(v, 0) {
		return invalid("%s must be at most %d bytes without NUL", field, maxIDLen)
	}
	return nil
}

// certificationDecks are the deck counts a certification shoe may have
// without test_shoe: every variant's (SHOE-DECKS; the NOT_FULL_DECKS
// message spells them out).
var certificationDecks = []int{2, 3, 6, 8}

// deckRule is the decks house rule of a variant (SHOE-DECKS).
func deckRule(v shoev1.Variant) (def int32, allowed []int32) {
	switch v {
	case shoev1.Variant_VARIANT_BANQUE:
		return 3, []int32{3}
	case shoev1.Variant_VARIANT_OLD:
		return 2, []int32{2}
	default: // chemin de fer (also unspecified), punto banco
		return defaultDecks, []int32{6, 8}
	}
}

// cutRule is the cut_card_from_end house rule of a variant
// (SHOE-CUT-CARD): the coup that brings the cut card out must be
// completed with the cards behind it (SHOE-RESHUFFLE), and the cut card
// must not come out before 5/6 of the shoe is out.
func cutRule(v shoev1.Variant) (lo, hi int32) {
	switch v {
	case shoev1.Variant_VARIANT_BANQUE:
		// Source: RULES.md BQ-HANDS, SHOE-CUT-CARD (three hands, up to 9 cards a coup)
		return minCutFromEndBig, maxCutFromEnd
	case shoev1.Variant_VARIANT_OLD:
		// Source: RULES.md OLD-DECKS, OLD-DRAW, SHOE-RESHUFFLE (at least 3
		// players of up to 3 cards; the 5/6 bound of 104 cards)
		return minCutFromEndBig, maxCutFromEndOld
	default:
		// Source: RULES.md SHOE-CUT-CARD (6..16, two hands of up to 3 cards)
		return minCutFromEnd, maxCutFromEnd
	}
}

// normalizeCreate validates the house rules of r and returns a copy with
// the defaults filled in.
func normalizeCreate(r *shoev1.CreateShoeRequest) (*shoev1.CreateShoeRequest, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if err := checkOwner(r.GetOwner()); err != nil {
		return nil, err
	}
	if err := checkID("cutter_player_id", r.GetCutterPlayerId()); err != nil {
		return nil, err
	}
	if len(r.GetClientSeed()) > fair.MaxClientSeed {
		return nil, invalid("client_seed is longer than %d bytes", fair.MaxClientSeed)
	}
	if _, ok := shoev1.Variant_name[int32(r.GetVariant())]; !ok {
		return nil, houseRule("unknown variant %d", r.GetVariant())
	}
	n := proto.CloneOf(r)
	if n.Variant == shoev1.Variant_VARIANT_UNSPECIFIED {
		n.Variant = shoev1.Variant_VARIANT_CHEMIN_DE_FER
	}
	def, allowed := deckRule(n.Variant)
	if n.Decks == 0 {
		n.Decks = def
	}
	if n.CutCardFromEnd == 0 {
		n.CutCardFromEnd = defaultCutFromEnd
	}
	if n.BurnMode == shoev1.BurnMode_BURN_MODE_UNSPECIFIED {
		n.BurnMode = shoev1.BurnMode_BURN_MODE_COUNT
	}
	// Source: RULES.md SHOE-DECKS, BQ-DECKS, OLD-DECKS (chemin de fer and punto banco 6 or 8, banque 3, old game 2)
	if !slices.Contains(allowed, n.Decks) {
		return nil, houseRule("decks must be %v for %s (0 means %d), got %d", allowed, n.Variant, def, r.Decks)
	}
	// Source: RULES.md SHOE-CUT-CARD (bounds by variant: cutRule)
	if lo, hi := cutRule(n.Variant); n.CutCardFromEnd < lo || n.CutCardFromEnd > hi {
		return nil, houseRule("cut_card_from_end must be %d..%d for %s (0 means %d), got %d",
			lo, hi, n.Variant, defaultCutFromEnd, r.CutCardFromEnd)
	}
	// Source: RULES.md SHOE-BURN
	switch n.BurnMode {
	case shoev1.BurnMode_BURN_MODE_COUNT:
		if n.Burn == 0 {
			n.Burn = defaultBurn
		}
		if n.Burn != 3 && n.Burn != 4 {
			return nil, houseRule("burn must be 3 or 4 (0 means 3), got %d", r.Burn)
		}
	case shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD:
		if n.Burn != 0 {
			return nil, houseRule("burn must be 0 with BURN_MODE_BY_FIRST_CARD, got %d", r.Burn)
		}
	default:
		return nil, houseRule("unknown burn_mode %d", r.BurnMode)
	}
	if n.AwaitPlayerSeeds && (n.CutterPlayerId != "" || n.Owner == "") {
		return nil, invalid("await_player_seeds is for a table's shoe (an owner) without cutter_player_id")
	}
	// Source: RULES.md SHOE-CUT (time limit of the named cutter)
	if n.CutterPlayerId == "" {
		if n.CutTimeLimit != nil {
			return nil, invalid("cut_time_limit needs a cutter_player_id")
		}
	} else {
		d := n.GetCutTimeLimit().AsDuration()
		if n.CutTimeLimit == nil || d == 0 {
			d = defaultCutLimit
		}
		if d < minCutLimit || d > maxCutLimit || (n.CutTimeLimit != nil && !n.CutTimeLimit.IsValid()) {
			return nil, houseRule("cut_time_limit must be %v..%v (0 means %v)", minCutLimit, maxCutLimit, defaultCutLimit)
		}
		n.CutTimeLimit = durationpb.New(d)
	}
	return n, nil
}

// CreateShoe draws and commits a new shoe's server seed; with a named
// cutter it waits for his Cut, with await_player_seeds (the table
// service's) for its table's SeedShoe; otherwise it is shuffled (no
// player seed), cut at random and burned at once.
func (s *Service) CreateShoe(ctx context.Context, r *shoev1.CreateShoeRequest) (*shoev1.CreateShoeResponse, error) {
	n, err := normalizeCreate(r)
	if err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	if n.AwaitPlayerSeeds && !isTableService(caller) {
		// The seeds come from a table's players through the table.
		return nil, invalid("await_player_seeds is for the table service's shoes")
	}
	key := createKey("create", caller, n.RequestId)
	hash := store.Hash(n)
	// Build outside the transaction: the shuffle needs no lock. A retry
	// discards this work and returns the stored response.
	// Source: RULES.md SHOE-DECKS, SHOE-SHUFFLE
	seed := s.opts.newSeed()
	now := s.opts.now()
	loaded := n.Decks * rules.DeckSize
	shoe := &shoev1.Shoe{
		ShoeId:           s.idPrefix + ulid.Make().String(),
		State:            shoev1.ShoeState_SHOE_STATE_AWAITING_CUT,
		Decks:            n.Decks,
		CardsTotal:       loaded,
		CardsRemaining:   loaded,
		CutCardFromEnd:   n.CutCardFromEnd,
		CreateTime:       timestamppb.New(now),
		Owner:            n.Owner,
		OperatorId:       operatorOf(caller, n.GetOperatorId()),
		Commitment:       fair.Commit(seed),
		ClientSeed:       n.ClientSeed,
		Variant:          n.Variant,
		BurnMode:         n.BurnMode,
		CutterPlayerId:   n.CutterPlayerId,
		OwnedByTable:     isTableService(caller) && n.Owner != "",
		CreatedBy:        caller.Subject,
		AwaitPlayerSeeds: n.AwaitPlayerSeeds,
		Burn:             n.Burn,
	}
	if shoe.OwnedByTable {
		shoe.TableId = n.Owner
	}
	if n.AwaitPlayerSeeds {
		shoe.State = shoev1.ShoeState_SHOE_STATE_AWAITING_SEEDS
	}
	if n.CutterPlayerId != "" {
		shoe.CutDeadline = timestamppb.New(now.Add(n.CutTimeLimit.AsDuration()))
	}
	sec := &secret{seed: seed, burn: n.Burn}
	var cut *cutResult
	if n.CutterPlayerId == "" && !n.AwaitPlayerSeeds {
		// Source: RULES.md SHOE-CUT (nobody named: a random cut at once,
		// no player seed)
		cut = cutRandom(shoe, sec)
	}
	resp := &shoev1.CreateShoeResponse{Shoe: shoe}
	var prev shoev1.CreateShoeResponse
	err = s.updateOnce(func(tx *bolt.Tx) error {
		stored, found, err := store.Lookup(tx, key, hash)
		if errors.Is(err, store.ErrRequestReused) {
			return reused(n.RequestId)
		}
		if err != nil {
			return err
		}
		if found {
			resp = &prev
			return proto.Unmarshal(stored, &prev)
		}
		id := []byte(shoe.ShoeId)
		if err := tx.Bucket(bucketSecrets).Put(id, sec.encode()); err != nil {
			return err
		}
		if err := emitOpened(tx, shoe, now); err != nil {
			return err
		}
		switch {
		case cut != nil:
			if err := storeCut(tx, shoe, sec, cut, now); err != nil {
				return err
			}
		case n.CutterPlayerId != "":
			// The sweep cuts it at random when the cutter's time runs out.
			if err := tx.Bucket(bucketCutting).Put(id, id); err != nil {
				return err
			}
		}
		if err := putShoe(tx, shoe); err != nil {
			return err
		}
		return saveAnswer(tx, key, hash, resp)
	})
	if err != nil {
		return nil, s.internal(ctx, "create shoe", err)
	}
	return resp, nil
}

// fullDecks returns the number of full decks the cards make: each of the
// 52 cards the same number of times, one of certificationDecks. Otherwise
// a NOT_FULL_DECKS error naming what is off.
func fullDecks(cards []rules.Card) (int, error) {
	notFull := func(format string, args ...any) (int, error) {
		return 0, fail(codes.InvalidArgument, shoev1.ErrorReason_ERROR_REASON_NOT_FULL_DECKS,
			"cards must be full decks, each of the 52 cards exactly 2, 3, 6 or 8 times (104, 156, 312 or 416 cards), or set test_shoe: %s",
			fmt.Sprintf(format, args...))
	}
	if len(cards)%rules.DeckSize != 0 || !slices.Contains(certificationDecks, len(cards)/rules.DeckSize) {
		return notFull("got %d cards", len(cards))
	}
	n := len(cards) / rules.DeckSize
	var count [rules.DeckSize]int
	for _, c := range cards {
		count[c.Index()]++
	}
	for i, k := range count {
		if k != n {
			c, _ := rules.CardFromIndex(i)
			return notFull("%s appears %d times in %d cards, want %d", c, k, len(cards), n)
		}
	}
	return n, nil
}

// CreateShoeFromOrder builds a certification shoe that deals exactly the
// given cards: full decks, or any composition with test_shoe.
func (s *Service) CreateShoeFromOrder(ctx context.Context, r *shoev1.CreateShoeFromOrderRequest) (*shoev1.CreateShoeFromOrderResponse, error) {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return nil, err
	}
	if err := checkOwner(r.GetOwner()); err != nil {
		return nil, err
	}
	if len(r.Cards) < 1 || len(r.Cards) > maxOrderCards {
		return nil, invalid("cards must hold 1 to %d cards, got %d", maxOrderCards, len(r.Cards))
	}
	order := make([]rules.Card, len(r.Cards))
	for i, code := range r.Cards {
		c, err := rules.ParseCard(code)
		if err != nil {
			return nil, fail(codes.InvalidArgument, shoev1.ErrorReason_ERROR_REASON_INVALID_CARD,
				"cards[%d]: %q is not a card code (rank A23456789TJQK then suit CDHS, e.g. \"9H\")", i, code)
		}
		order[i] = c
	}
	decks := 0
	if !r.TestShoe {
		n, err := fullDecks(order)
		if err != nil {
			return nil, err
		}
		decks = n
	}
	if r.CutCardFromEnd < 0 || r.CutCardFromEnd > maxCutFromEnd || int(r.CutCardFromEnd) >= len(order) {
		return nil, houseRule("cut_card_from_end must be 0..%d and less than the number of cards (%d), got %d",
			maxCutFromEnd, len(order), r.CutCardFromEnd)
	}
	caller, _ := auth.FromContext(ctx)
	shoe := &shoev1.Shoe{
		ShoeId:         s.idPrefix + ulid.Make().String(),
		State:          shoev1.ShoeState_SHOE_STATE_OPEN,
		Decks:          int32(decks),
		CardsTotal:     int32(len(order)),
		CardsRemaining: int32(len(order)),
		CutCardFromEnd: r.CutCardFromEnd,
		CreateTime:     timestamppb.New(s.opts.now()),
		Owner:          r.Owner,
		Certification:  true,
		TestShoe:       r.TestShoe,
		OwnedByTable:   isTableService(caller) && r.Owner != "",
		CreatedBy:      caller.Subject,
		OperatorId:     operatorOf(caller, ""),
	}
	if shoe.OwnedByTable {
		shoe.TableId = r.Owner
	}
	resp := &shoev1.CreateShoeFromOrderResponse{Shoe: shoe}
	out, err := s.create(createKey("create-from-order", caller, r.RequestId), r.RequestId, store.Hash(r), shoe, order, resp,
		&shoev1.CreateShoeFromOrderResponse{})
	if err != nil {
		return nil, s.internal(ctx, "create shoe from order", err)
	}
	return out.(*shoev1.CreateShoeFromOrderResponse), nil
}

// create stores a new shoe with its dealing order and the idempotency
// record in one transaction, or returns the response stored for key
// (unmarshalled into prev) when the request was seen before.
func (s *Service) create(key, requestID string, hash []byte, shoe *shoev1.Shoe, order []rules.Card,
	resp, prev proto.Message) (proto.Message, error) {
	shoeBytes, err := marshal.Marshal(shoe)
	if err != nil {
		return nil, err
	}
	respBytes, err := marshal.Marshal(resp)
	if err != nil {
		return nil, err
	}
	out := resp
	err = s.updateOnce(func(tx *bolt.Tx) error {
		stored, found, err := store.Lookup(tx, key, hash)
		if errors.Is(err, store.ErrRequestReused) {
			return reused(requestID)
		}
		if err != nil {
			return err
		}
		if found {
			out = prev
			return proto.Unmarshal(stored, prev)
		}
		id := []byte(shoe.ShoeId)
		if err := tx.Bucket(bucketShoes).Put(id, shoeBytes); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOrders).Put(id, encodeOrder(order)); err != nil {
			return err
		}
		if err := emitOpened(tx, shoe, shoe.CreateTime.AsTime()); err != nil {
			return err
		}
		return store.Save(tx, key, hash, respBytes)
	})
	return out, err
}

// GetShoe returns a shoe's public state.
func (s *Service) GetShoe(ctx context.Context, r *shoev1.GetShoeRequest) (*shoev1.GetShoeResponse, error) {
	if r.GetShoeId() == "" {
		return nil, invalid("shoe_id is required")
	}
	caller, _ := auth.FromContext(ctx)
	shoe := &shoev1.Shoe{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return loadShoeFor(tx, caller, r.ShoeId, shoe)
	})
	if err != nil {
		return nil, s.internal(ctx, "get shoe", err)
	}
	return &shoev1.GetShoeResponse{Shoe: shoe}, nil
}

func loadShoe(tx *bolt.Tx, id string, into *shoev1.Shoe) error {
	v := tx.Bucket(bucketShoes).Get([]byte(id))
	if v == nil {
		return notFound(id)
	}
	return proto.Unmarshal(v, into)
}

// coupOf is the coup of a deal: r.coup_id, or the "<coup_id>" of a
// request_id "<coup_id>/card/<n>" (the table service's convention).
func coupOf(r *shoev1.DealCardRequest) string {
	if r.CoupId != "" {
		return r.CoupId
	}
	if i := strings.LastIndex(r.RequestId, "/card/"); i > 0 && len(r.RequestId[:i]) <= maxIDLen &&
		!strings.ContainsRune(r.RequestId[:i], 0) {
		return r.RequestId[:i]
	}
	return ""
}

// DealCard deals the next card of a shoe. See the package documentation
// for the cut card.
func (s *Service) DealCard(ctx context.Context, r *shoev1.DealCardRequest) (*shoev1.DealCardResponse, error) {
	if err := checkDeal(r); err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	resp := &shoev1.DealCardResponse{}
	err := s.update(func(tx *bolt.Tx) error { return s.deal(tx, r, caller, resp) })
	if err != nil {
		return nil, s.internal(ctx, "deal card", err)
	}
	failpoint("deal-after-commit")
	return resp, nil
}

// maxDealCards bounds the cards of one DealCards.
const maxDealCards = 16

// DealCards deals the next cards of one shoe in one write transaction
// (one commit for a coup's opening cards): each entry exactly as its
// DealCard (deal), in order. A card after the first that is refused (a
// gRPC status: the shoe spent, closed...) ends the deal with the cards
// before it, which are committed; DealCard of its request id then gives
// the reason. With r.third_cards the entries after the opening four are
// dealt only while the tableau forces a card (forcedHand), to its hand.
func (s *Service) DealCards(ctx context.Context, r *shoev1.DealCardsRequest) (*shoev1.DealCardsResponse, error) {
	if r.GetShoeId() == "" {
		return nil, invalid("shoe_id is required")
	}
	if n := len(r.GetCards()); n == 0 || n > maxDealCards {
		return nil, invalid("cards must hold 1 to %d entries, not %d", maxDealCards, n)
	}
	reqs := make([]*shoev1.DealCardRequest, len(r.Cards))
	ids := make(map[string]bool, len(r.Cards))
	for i, e := range r.Cards {
		if e.GetShoeId() != "" && e.GetShoeId() != r.ShoeId {
			return nil, invalid("cards[%d] names shoe %q, not %q", i, e.GetShoeId(), r.ShoeId)
		}
		e = proto.CloneOf(e)
		e.ShoeId = r.ShoeId // hashed as its DealCard
		if err := checkDeal(e); err != nil {
			return nil, err
		}
		if ids[e.RequestId] {
			return nil, invalid("request_id %q is given twice", e.RequestId)
		}
		ids[e.RequestId] = true
		reqs[i] = e
	}
	third := r.GetThirdCards()
	if err := checkThirdCards(third, reqs); err != nil {
		return nil, err
	}
	caller, _ := auth.FromContext(ctx)
	out := &shoev1.DealCardsResponse{}
	err := s.update(func(tx *bolt.Tx) error {
		out.Cards = out.Cards[:0] // a group rolled back runs it again
		for i, e := range reqs {
			if third != nil && i >= len(openingHands) {
				hand, ok := forcedHand(third, out.Cards)
				if !ok {
					return nil // an option, a natural or the coup's end
				}
				e = proto.CloneOf(e)
				e.Hand = hand // hashed as the DealCard of the table's hand
			}
			resp := &shoev1.DealCardResponse{}
			if err := s.deal(tx, e, caller, resp); err != nil {
				if _, refused := status.FromError(err); refused && i > 0 {
					return nil // nothing of the refused card was written
				}
				return err
			}
			resp.Hand = e.Hand // also in an answer stored before the field
			out.Cards = append(out.Cards, resp)
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "deal cards", err)
	}
	failpoint("deal-after-commit")
	return out, nil
}

// openingHands are the hands of a coup's opening four cards (RULES.md
// CF-DEAL: player first, alternately), the first entries of a DealCards
// with third cards.
var openingHands = [...]string{"player", "banker", "player", "banker"}

// checkThirdCards checks a DealCards with third cards (tc non-nil): a
// known tableau, the opening four entries to their hands and one or two
// third cards' entries with no hand. INVALID_ARGUMENT.
func checkThirdCards(tc *shoev1.ThirdCards, reqs []*shoev1.DealCardRequest) error {
	if tc == nil {
		return nil
	}
	switch tc.GetTableau() {
	case shoev1.Tableau_TABLEAU_CHEMIN_DE_FER, shoev1.Tableau_TABLEAU_PUNTO_BANCO:
	default:
		return invalid("third_cards.tableau must be chemin de fer or punto banco, not %v", tc.GetTableau())
	}
	if n := len(reqs); n < len(openingHands) || n > len(openingHands)+2 {
		return invalid("with third_cards, cards must hold the opening 4 and up to 2 third cards, not %d entries", n)
	}
	for i, e := range reqs {
		if i < len(openingHands) && e.GetHand() != openingHands[i] {
			return invalid("with third_cards, cards[%d] is the opening's %s card, not %q", i, openingHands[i], e.GetHand())
		}
		if i >= len(openingHands) && e.GetHand() != "" {
			return invalid("with third_cards, cards[%d] is a third card: its hand is the tableau's, not %q", i, e.GetHand())
		}
	}
	return nil
}

// forcedHand is the hand ("player" or "banker") the tableau of tc gives
// the next card of a coup whose cards so far are dealt (the opening four
// in CF-DEAL order, then the third cards with their hands), and whether
// it forces one: false at a natural, an option or the coup's end
// (RULES.md CF-PLAYER-DRAW, CF-BANKER-DRAW; punto banco PB-TABLEAU). The
// rules engine is the one the table's game core plays by.
func forcedHand(tc *shoev1.ThirdCards, dealt []*shoev1.DealCardResponse) (string, bool) {
	var c rules.Coup
	for i, d := range dealt {
		card, err := rules.ParseCard(d.GetCard().GetCode())
		if err != nil {
			return "", false
		}
		hand := d.GetHand()
		if i < len(openingHands) {
			hand = openingHands[i]
		}
		if hand == "player" {
			c.Player = append(c.Player, card)
		} else {
			c.Banker = append(c.Banker, card)
		}
	}
	var step rules.Step
	var err error
	if tc.GetTableau() == shoev1.Tableau_TABLEAU_PUNTO_BANCO {
		step, err = rules.NextStepPuntoBanco(c)
	} else {
		step, err = rules.NextStep(c, rules.HouseRules{BankerOption3vs9: tc.GetBankerOption_3Vs_9(), BankerOption5vs4: tc.GetBankerOption_5Vs_4()})
	}
	switch {
	case err != nil:
		return "", false
	case step.Kind == rules.StepDealPlayer:
		return "player", true
	case step.Kind == rules.StepDealBanker:
		return "banker", true
	}
	return "", false
}

// checkDeal checks a DealCardRequest's fields.
func checkDeal(r *shoev1.DealCardRequest) error {
	if err := checkRequestID(r.GetRequestId()); err != nil {
		return err
	}
	if r.GetShoeId() == "" {
		return invalid("shoe_id is required")
	}
	if err := checkID("coup_id", r.GetCoupId()); err != nil {
		return err
	}
	if len(r.GetHand()) > maxHandLen {
		return invalid("hand is longer than %d bytes", maxHandLen)
	}
	return nil
}

// deal deals the card of r in tx (read-write), or puts its stored answer
// in resp. A refusal (a gRPC status) comes before any write.
func (s *Service) deal(tx *bolt.Tx, r *shoev1.DealCardRequest, caller auth.Caller, resp *shoev1.DealCardResponse) error {
	key := "shoe/deal/" + r.ShoeId + "/" + r.RequestId
	hash := store.Hash(r)
	coup := coupOf(r)
	// The shoe first: ids have a fixed length, so only an existing
	// shoe's id makes the idempotency key unambiguous. A table's shoe
	// is refused to others before any stored answer is replayed.
	shoe, replayed, err := shoeAndReplay(tx, caller, r.ShoeId, key, hash, r.RequestId, resp, func(shoe *shoev1.Shoe) error {
		if err := tableOnly(caller, shoe, "deal from"); err != nil {
			return err
		}
		return tableCoup(tx, caller, coup)
	})
	if err != nil || replayed {
		return err
	}
	if err := notSeeded(shoe); err != nil {
		return err
	}
	// The table service dealing from a shoe (a staff shoe a table
	// was opened on) makes it the table's.
	shoe.OwnedByTable = shoe.OwnedByTable || isTableService(caller)
	now := s.opts.now()
	if shoe.State == shoev1.ShoeState_SHOE_STATE_AWAITING_CUT {
		// Source: RULES.md SHOE-CUT (time ran out: cut at random)
		if expired, err := s.expireCut(tx, shoe, now); err != nil {
			return err
		} else if !expired {
			return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_NOT_CUT,
				"shoe %q waits for %q to cut until %s", r.ShoeId, shoe.CutterPlayerId, shoe.CutDeadline.AsTime().Format(time.RFC3339))
		}
	}
	if shoe.CardsRemaining <= 0 {
		return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_EXHAUSTED,
			"shoe %q has no card left (%d dealt)", r.ShoeId, shoe.CardsDealt)
	}
	if shoe.State == shoev1.ShoeState_SHOE_STATE_CLOSED {
		return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_SHOE_CLOSED,
			"shoe %q is closed (%s)", r.ShoeId, shoe.CloseReason)
	}
	// Source: RULES.md SHOE-RESHUFFLE: once the cut card is out only
	// its coup is completed.
	if shoe.CutCardOut && shoe.CutCardCoupId != "" && coup != "" && coup != shoe.CutCardCoupId {
		return fail(codes.FailedPrecondition, shoev1.ErrorReason_ERROR_REASON_CUT_CARD_OUT,
			"the cut card of shoe %q came out in coup %q: it is the shoe's last", r.ShoeId, shoe.CutCardCoupId)
	}
	order := tx.Bucket(bucketOrders).Get([]byte(r.ShoeId))
	pos := shoe.CardsDealt
	if int(pos) >= len(order) {
		return fmt.Errorf("shoe %s: order holds %d cards, position %d", r.ShoeId, len(order), pos)
	}
	card, err := rules.CardFromIndex(int(order[pos]))
	if err != nil {
		return fmt.Errorf("shoe %s position %d: %w", r.ShoeId, pos, err)
	}
	failpoint("deal-in-tx")
	shoe.CardsDealt++
	shoe.CardsRemaining--
	wasOut := shoe.CutCardOut
	// Source: RULES.md SHOE-CUT-CARD, SHOE-RESHUFFLE. The cut card is
	// out once no more than cut_card_from_end cards are left.
	shoe.CutCardOut = shoe.CardsRemaining <= shoe.CutCardFromEnd
	resp.Card = toProtoCard(card)
	resp.Position = pos
	resp.CutCardOut = shoe.CutCardOut
	resp.CardsRemaining = shoe.CardsRemaining
	resp.Hand = r.Hand
	if err := putFate(tx, &shoev1.CardFate{
		ShoeId: r.ShoeId, LoadPosition: int32(len(shoe.Burned)) + pos, Card: resp.Card,
		Fate: shoev1.Fate_FATE_DEALT, DealtPosition: pos, CoupId: coup, Hand: r.Hand,
		RequestId: r.RequestId, Time: timestamppb.New(now),
	}); err != nil {
		return err
	}
	if shoe.CutCardOut && !wasOut {
		shoe.CutCardCoupId = coup
		if err := emit(tx, shoe, now, &eventsv1.ShoeEvent_CutCardOut{CutCardOut: &eventsv1.CutCardOut{
			Position: pos, CoupId: coup, CardsRemaining: shoe.CardsRemaining,
		}}); err != nil {
			return err
		}
	}
	if shoe.CardsRemaining == 0 {
		if err := s.closeShoe(tx, shoe, now, "exhausted", false, auth.Caller{}); err != nil {
			return err
		}
	}
	if err := putShoe(tx, shoe); err != nil {
		return err
	}
	return saveAnswer(tx, key, hash, resp)
}

// tableCoup refuses a deal by a caller other than the table service (a
// staff shoe's) that names a table's coup, PERMISSION_DENIED
// COUP_OWNED_BY_TABLE: its card would be listed among that coup's cards
// (ListCardFates). A table's coup is one of the form of table-svc's coup
// ids (tableCoupID), or one already dealt from a table's shoe, whatever
// its form. The table service is never refused for its coup id.
func tableCoup(tx *bolt.Tx, caller auth.Caller, coup string) error {
	if coup == "" || isTableService(caller) {
		return nil
	}
	why := "has the form of a table's coup id (a ULID, with or without a shard prefix)"
	if !tableCoupID(coup) {
		dealt, err := dealtFromTableShoe(tx, coup)
		if err != nil || !dealt {
			return err
		}
		why = "was dealt from a table's shoe"
	}
	return fail(codes.PermissionDenied, shoev1.ErrorReason_ERROR_REASON_COUP_OWNED_BY_TABLE,
		"coup %q %s: only the table service deals its cards, not %s %q", coup, why, caller.Role, caller.Subject)
}

// tableCoupID reports whether coup has the form of the ids table-svc
// gives its coups: a ULID, after the shard prefix "s<k>-" of a sharded
// deployment (package shard). These are reserved to the table service,
// so that nobody names a coup before the table deals it (its id is in
// the table's view from its betting on).
func tableCoupID(coup string) bool {
	if k, ok := shard.Of(coup); ok {
		coup = strings.TrimPrefix(coup, shard.Prefix(k))
	}
	_, err := ulid.ParseStrict(coup)
	return err == nil
}

// dealtFromTableShoe reports whether a card of coup was dealt from a
// table's shoe (owned_by_table), every fate of the coup checked.
func dealtFromTableShoe(tx *bolt.Tx, coup string) (bool, error) {
	prefix := append([]byte(coup), 0)
	seen := map[string]bool{}
	c := tx.Bucket(bucketCoups).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		fate := k[len(prefix):] // shoe id + uint16 load position
		if len(fate) <= 2 {
			return false, fmt.Errorf("coup index key %q", k)
		}
		id := string(fate[:len(fate)-2])
		if seen[id] {
			continue
		}
		seen[id] = true
		shoe := &shoev1.Shoe{}
		if err := loadShoe(tx, id, shoe); err != nil {
			return false, err
		}
		if shoe.OwnedByTable {
			return true, nil
		}
	}
	return false, nil
}

// encodeOrder is the "orders" value: one byte per card, its Index.
func encodeOrder(cards []rules.Card) []byte {
	b := make([]byte, len(cards))
	for i, c := range cards {
		b[i] = byte(c.Index())
	}
	return b
}

// toProtoCard converts a rules card. rules.Suit counts from 0 (Clubs),
// shoev1.Suit from 1 (SUIT_CLUBS); ranks are the same numbers.
func toProtoCard(c rules.Card) *shoev1.Card {
	return &shoev1.Card{
		Rank: shoev1.Rank(c.Rank),
		Suit: shoev1.Suit(int32(c.Suit) + 1),
		Code: c.String(),
	}
}

func toProtoCards(cs []rules.Card) []*shoev1.Card {
	out := make([]*shoev1.Card, len(cs))
	for i, c := range cs {
		out[i] = toProtoCard(c)
	}
	return out
}

// shoeAndReplay loads the shoe of a request keyed key (as caller may
// see it: loadShoeFor), lets allowed
// refuse the caller, and, when the request was answered before, puts the
// stored answer in resp and reports replayed. A key used for another
// request is REQUEST_ID_REUSED.
func shoeAndReplay(tx *bolt.Tx, caller auth.Caller, shoeID, key string, hash []byte, requestID string, resp proto.Message,
	allowed func(*shoev1.Shoe) error) (*shoev1.Shoe, bool, error) {
	shoe := &shoev1.Shoe{}
	if err := loadShoeFor(tx, caller, shoeID, shoe); err != nil {
		return nil, false, err
	}
	if err := allowed(shoe); err != nil {
		return nil, false, err
	}
	stored, found, err := store.Lookup(tx, key, hash)
	if errors.Is(err, store.ErrRequestReused) {
		return nil, false, reused(requestID)
	}
	if err != nil || !found {
		return shoe, false, err
	}
	return shoe, true, proto.Unmarshal(stored, resp)
}

// saveAnswer stores resp as the answer to the request keyed key, in tx.
func saveAnswer(tx *bolt.Tx, key string, hash []byte, resp proto.Message) error {
	b, err := marshal.Marshal(resp)
	if err != nil {
		return err
	}
	return store.Save(tx, key, hash, b)
}
