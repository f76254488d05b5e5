package shoesvc

import (
	"context"
	"fmt"
	"github.com/chemmy/chemmy/services/kit/trust"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

var tableSvc = auth.Caller{Subject: "table-svc", Role: auth.RoleService}

func as(c auth.Caller) context.Context { return auth.Outgoing(context.Background(), c) }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fixedSeed gives every shoe the same deterministic server seed (from a
// PCG), so a test can compute the expected shoe with loadedOrder.
func fixedSeed(seed uint64) func() []byte {
	return func() []byte {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		b := make([]byte, fair.ServerSeedSize)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
}

// loadedOrder is the shoe as loaded (burn cards first) for a server seed,
// with the random cut.
func loadedOrder(t testing.TB, decks int, seed []byte, client string) []rules.Card {
	t.Helper()
	order, st := fair.Shuffle(decks, fair.Seeds{Server: seed, Client: client})
	cards, err := fair.Cards(fair.Cut(order, fair.RandomCut(st, len(order))))
	if err != nil {
		t.Fatal(err)
	}
	return cards
}

func testOptions(seed func() []byte) options {
	o := productionOptions()
	if seed != nil {
		o.newSeed = seed
	}
	o.sweep = 20 * time.Millisecond
	return o
}

// startAt starts the real service on a random loopback port with the bbolt
// file at path; it is stopped when the test ends (or earlier by the test).
func startAt(tb testing.TB, path string, seed func() []byte) *Service {
	tb.Helper()
	return startWith(tb, path, testOptions(seed))
}

func startWith(tb testing.TB, path string, o options) *Service {
	tb.Helper()
	s, err := start(context.Background(), Config{ListenAddr: "127.0.0.1:0", DBPath: path, Logger: quietLogger(), Trust: trust.Config{Insecure: true}}, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.Stop()
		if err := s.Wait(); err != nil {
			tb.Errorf("wait: %v", err)
		}
	})
	return s
}

func dial(tb testing.TB, addr string) shoev1.ShoeServiceClient {
	tb.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return shoev1.NewShoeServiceClient(conn)
}

// newEnv starts a service on a fresh file and dials it.
func newEnv(tb testing.TB, src func() []byte) (shoev1.ShoeServiceClient, *Service, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "shoe.db")
	s := startAt(tb, path, src)
	return dial(tb, s.Addr()), s, path
}

func wantErr(t *testing.T, err error, code codes.Code, reason string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("err = %v, want code %v", err, code)
	}
	info := errs.Info(err)
	if info == nil || info.Reason != reason || info.Domain != Domain {
		t.Fatalf("err = %v, ErrorInfo %v, want reason %s in domain %s", err, info, reason, Domain)
	}
}

// create creates a shoe as the table service (a table's shoe when r has
// an owner).
func create(t testing.TB, c shoev1.ShoeServiceClient, r *shoev1.CreateShoeRequest) *shoev1.Shoe {
	t.Helper()
	return createAs(t, c, tableSvc, r)
}

// createAs creates a shoe as caller.
func createAs(t testing.TB, c shoev1.ShoeServiceClient, caller auth.Caller, r *shoev1.CreateShoeRequest) *shoev1.Shoe {
	t.Helper()
	if r.RequestId == "" {
		r.RequestId = ulid.Make().String()
	}
	resp, err := c.CreateShoe(as(caller), r)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Shoe
}

// fromOrder creates a test shoe (any composition) of exactly cards.
func fromOrder(t testing.TB, c shoev1.ShoeServiceClient, cards []string, cutFromEnd int32) *shoev1.Shoe {
	t.Helper()
	resp, err := c.CreateShoeFromOrder(as(tableSvc), &shoev1.CreateShoeFromOrderRequest{
		RequestId: ulid.Make().String(), Cards: cards, CutCardFromEnd: cutFromEnd, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Shoe
}

// fullDecksOrder is decks fresh decks, as card codes.
func fullDecksOrder(decks int) []string {
	cards, _ := fair.Cards(fair.FreshOrder(decks))
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = c.String()
	}
	return out
}

func deal(t testing.TB, c shoev1.ShoeServiceClient, shoeID, requestID string) *shoev1.DealCardResponse {
	t.Helper()
	resp, err := c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoeID, RequestId: requestID})
	if err != nil {
		t.Fatalf("deal %s: %v", requestID, err)
	}
	return resp
}

func getShoe(t testing.TB, c shoev1.ShoeServiceClient, id string) *shoev1.Shoe {
	t.Helper()
	resp, err := c.GetShoe(as(tableSvc), &shoev1.GetShoeRequest{ShoeId: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Shoe
}

// fromProto converts back and checks that rank, suit and code agree.
func fromProto(t testing.TB, pc *shoev1.Card) rules.Card {
	t.Helper()
	c, err := rules.ParseCard(pc.GetCode())
	if err != nil {
		t.Fatalf("card %v: %v", pc, err)
	}
	if pc.Rank != shoev1.Rank(c.Rank) || pc.Suit != shoev1.Suit(c.Suit+1) {
		t.Fatalf("card %v: rank/suit disagree with code", pc)
	}
	return c
}

// dealAll deals until SHOE_EXHAUSTED and returns the dealt cards and the
// responses.
func dealAll(t *testing.T, c shoev1.ShoeServiceClient, shoe *shoev1.Shoe) ([]rules.Card, []*shoev1.DealCardResponse) {
	t.Helper()
	var cards []rules.Card
	var resps []*shoev1.DealCardResponse
	for i := 0; ; i++ {
		resp, err := c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: fmt.Sprintf("coup/card/%d", i)})
		if err != nil {
			wantErr(t, err, codes.FailedPrecondition, "SHOE_EXHAUSTED")
			if i != int(shoe.CardsTotal) {
				t.Fatalf("exhausted after %d cards, cards_total %d", i, shoe.CardsTotal)
			}
			return cards, resps
		}
		if int(resp.Position) != i || int(resp.CardsRemaining) != int(shoe.CardsTotal)-i-1 {
			t.Fatalf("deal %d: position %d remaining %d (total %d)", i, resp.Position, resp.CardsRemaining, shoe.CardsTotal)
		}
		cards = append(cards, fromProto(t, resp.Card))
		resps = append(resps, resp)
	}
}

func TestCreateShoeDefaults(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{Owner: "table-1"})
	if _, err := ulid.ParseStrict(shoe.ShoeId); err != nil {
		t.Errorf("shoe_id %q is not a ULID: %v", shoe.ShoeId, err)
	}
	if shoe.Decks != 6 || len(shoe.Burned) != 3 || shoe.CardsTotal != 309 || shoe.CardsRemaining != 309 ||
		shoe.CardsDealt != 0 || shoe.CutCardFromEnd != 8 || shoe.CutCardOut || shoe.State != shoev1.ShoeState_SHOE_STATE_OPEN ||
		shoe.Owner != "table-1" || shoe.CreateTime == nil {
		t.Fatalf("shoe = %v", shoe)
	}
	if int(shoe.CardsTotal)+len(shoe.Burned) != 312 {
		t.Fatalf("312 cards before the burn, got %d", int(shoe.CardsTotal)+len(shoe.Burned))
	}
	if got := getShoe(t, c, shoe.ShoeId); !proto.Equal(got, shoe) {
		t.Fatalf("GetShoe = %v, want %v", got, shoe)
	}
}

// TestSHOEDecks deals 6- and 8-deck shoes to the end: burned + dealt is
// the full multiset of the decks, each card exactly decks times.
func TestSHOEDecks(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	for _, decks := range []int32{6, 8} {
		t.Run(fmt.Sprint(decks), func(t *testing.T) {
			shoe := create(t, c, &shoev1.CreateShoeRequest{Decks: decks})
			if shoe.Decks != decks || int(shoe.CardsTotal) != 52*int(decks)-3 {
				t.Fatalf("shoe = %v", shoe)
			}
			dealt, _ := dealAll(t, c, shoe)
			all := dealt
			for _, b := range shoe.Burned {
				all = append(all, fromProto(t, b))
			}
			if len(all) != 52*int(decks) {
				t.Fatalf("%d cards accounted, want %d", len(all), 52*decks)
			}
			var per [52]int
			for _, card := range all {
				per[card.Index()]++
			}
			for i, n := range per {
				if n != int(decks) {
					t.Fatalf("card %d appears %d times, want %d", i, n, decks)
				}
			}
			got := getShoe(t, c, shoe.ShoeId)
			if got.State != shoev1.ShoeState_SHOE_STATE_CLOSED || got.CardsRemaining != 0 || got.CardsDealt != shoe.CardsTotal {
				t.Fatalf("after the last card: %v", got)
			}
		})
	}
	for _, decks := range []int32{-1, 1, 2, 3, 7, 9, 16} {
		_, err := c.CreateShoe(as(tableSvc), &shoev1.CreateShoeRequest{RequestId: ulid.Make().String(), Decks: decks})
		wantErr(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
	}
}

// TestSHOEShuffleThroughService: with an injected deterministic source the
// service deals exactly buildShoe's order after the burn; with crypto/rand
// two shoes differ.
func TestSHOEShuffleThroughService(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(42))
	want := loadedOrder(t, 6, fixedSeed(42)(), "")
	shoe := create(t, c, &shoev1.CreateShoeRequest{})
	for i, b := range shoe.Burned {
		if fromProto(t, b) != want[i] {
			t.Fatalf("burned[%d] = %v, want %v", i, b.Code, want[i])
		}
	}
	dealt, _ := dealAll(t, c, shoe)
	if !slices.Equal(dealt, want[3:]) {
		t.Fatal("dealt order differs from the shuffled, cut and burned order")
	}

	c2, _, _ := newEnv(t, nil)
	a, _ := dealAll(t, c2, create(t, c2, &shoev1.CreateShoeRequest{}))
	b, _ := dealAll(t, c2, create(t, c2, &shoev1.CreateShoeRequest{}))
	if slices.Equal(a, b) {
		t.Fatal("two crypto/rand shoes deal the same order")
	}
}

// TestSHOECutThroughService: the loaded order is the committed shuffled
// order rotated at the position drawn after the shuffle (no cutter named).
func TestSHOECutThroughService(t *testing.T) {
	seed := fixedSeed(5)()
	shuffled, st := fair.Shuffle(6, fair.Seeds{Server: seed})
	p := fair.RandomCut(st, len(shuffled))
	want, _ := fair.Cards(append(slices.Clone(shuffled[p:]), shuffled[:p]...))

	c, _, _ := newEnv(t, fixedSeed(5))
	shoe := create(t, c, &shoev1.CreateShoeRequest{Burn: 4})
	if shoe.CutPosition != int32(p) || !shoe.CutRandom || shoe.CutBy != "" {
		t.Fatalf("cut %d random %v by %q, want %d random", shoe.CutPosition, shoe.CutRandom, shoe.CutBy, p)
	}
	dealt, _ := dealAll(t, c, shoe)
	got := append([]rules.Card{}, dealt...)
	var burned []rules.Card
	for _, b := range shoe.Burned {
		burned = append(burned, fromProto(t, b))
	}
	if !slices.Equal(append(burned, got...), want) {
		t.Fatalf("loaded order is not the shuffle rotated at %d", p)
	}
}

// TestSHOECutCard: cut_card_out turns true with the deal that leaves
// exactly cut_card_from_end cards (position T-C-1), stays true, and is
// reflected by GetShoe.
func TestSHOECutCard(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	for _, cut := range []int32{0, 6, 8, 10, 16} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			shoe := create(t, c, &shoev1.CreateShoeRequest{CutCardFromEnd: cut})
			if cut == 0 && shoe.CutCardFromEnd != 8 {
				t.Fatalf("default cut_card_from_end = %d, want 8", shoe.CutCardFromEnd)
			}
			C := int(shoe.CutCardFromEnd)
			T := int(shoe.CardsTotal)
			for i := 0; i < T; i++ {
				resp := deal(t, c, shoe.ShoeId, fmt.Sprint(i))
				if want := i >= T-C-1; resp.CutCardOut != want {
					t.Fatalf("deal %d of %d (cut %d): cut_card_out %v", i, T, C, resp.CutCardOut)
				}
				if i == T-C-2 || i == T-C-1 {
					if got := getShoe(t, c, shoe.ShoeId); got.CutCardOut != resp.CutCardOut || got.CardsRemaining != resp.CardsRemaining {
						t.Fatalf("GetShoe after deal %d: %v", i, got)
					}
				}
			}
		})
	}
	for _, cut := range []int32{-1, 1, 5, 17, 100} {
		_, err := c.CreateShoe(as(tableSvc), &shoev1.CreateShoeRequest{RequestId: ulid.Make().String(), CutCardFromEnd: cut})
		wantErr(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
	}
}

// TestSHOEBurn: 3 or 4 cards are burned, shown in Shoe.burned and never
// dealt; they are the first cards of the loaded order.
func TestSHOEBurn(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(9))
	want := loadedOrder(t, 6, fixedSeed(9)(), "")
	for _, tc := range []struct{ burn, want int32 }{{0, 3}, {3, 3}, {4, 4}} {
		shoe := create(t, c, &shoev1.CreateShoeRequest{Burn: tc.burn})
		if int32(len(shoe.Burned)) != tc.want || shoe.CardsTotal != 312-tc.want {
			t.Fatalf("burn %d: %d burned, cards_total %d", tc.burn, len(shoe.Burned), shoe.CardsTotal)
		}
		for i, b := range shoe.Burned {
			if fromProto(t, b) != want[i] {
				t.Fatalf("burned[%d] = %s, want %s", i, b.Code, want[i])
			}
		}
		if first := deal(t, c, shoe.ShoeId, "first"); fromProto(t, first.Card) != want[tc.want] || first.Position != 0 {
			t.Fatalf("first dealt card %v, want %s at position 0", first, want[tc.want])
		}
	}
	for _, burn := range []int32{-1, 1, 2, 5, 8} {
		_, err := c.CreateShoe(as(tableSvc), &shoev1.CreateShoeRequest{RequestId: ulid.Make().String(), Burn: burn})
		wantErr(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
	}
}

// TestSHOEFace: cards come out one at a time and the shoe's state never
// shows cards that were not dealt or burned.
func TestSHOEFace(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{})
	deal(t, c, shoe.ShoeId, "a")
	got := getShoe(t, c, shoe.ShoeId)
	if len(got.Burned) != 3 || got.CardsDealt != 1 {
		t.Fatalf("GetShoe = %v", got)
	}
	// The Shoe message has exactly these fields; a new field that could
	// carry the order must be reviewed here.
	var names []string
	fields := got.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		names = append(names, string(fields.Get(i).Name()))
	}
	// commitment is the SHA-256 of a 4096-bit secret seed: it hides the
	// order; the other new fields are the cut, the seeds' public parts
	// (client and player seeds), the close, and who made and owns it;
	// the old game's move to the bottom (OLD-CUT) is a count and who
	// announced it, no card; the table it belongs to, who closed it and
	// who gave the player seeds are ids, and whether it awaits its
	// table's seeds a flag; burn is the count announced, public from the
	// opening; operator_id the operator it belongs to, an id.
	want := []string{"shoe_id", "state", "decks", "cards_total", "cards_dealt", "cards_remaining",
		"cut_card_from_end", "cut_card_out", "burned", "create_time", "owner", "commitment", "client_seed",
		"variant", "burn_mode", "cutter_player_id", "cut_deadline", "cut_position", "cut_random", "cut_by",
		"cut_card_coup_id", "close_time", "close_reason", "certification", "test_shoe", "owned_by_table",
		"created_by", "player_seeds", "moved_to_bottom", "moved_by", "table_id", "closed_by", "closed_by_role",
		"player_seed_player_ids", "await_player_seeds", "burn", "operator_id"}
	if !slices.Equal(names, want) {
		t.Fatalf("Shoe fields %v, reviewed %v", names, want)
	}
}

// TestSHOEReshuffle: after the cut card the coup in progress can be
// completed (dealing goes on behind it); the shoe ends when empty.
func TestSHOEReshuffle(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := fromOrder(t, c, []string{"9H", "TD", "AS", "2C", "3D", "4S"}, 3)
	var out []bool
	for i := range 6 {
		out = append(out, deal(t, c, shoe.ShoeId, fmt.Sprint(i)).CutCardOut)
	}
	if !slices.Equal(out, []bool{false, false, true, true, true, true}) {
		t.Fatalf("cut_card_out per deal = %v", out)
	}
	_, err := c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: "6"})
	wantErr(t, err, codes.FailedPrecondition, "SHOE_EXHAUSTED")
	if got := getShoe(t, c, shoe.ShoeId); got.State != shoev1.ShoeState_SHOE_STATE_CLOSED {
		t.Fatalf("state %v after the last card", got.State)
	}
	// A retry of the last deal still answers.
	if r := deal(t, c, shoe.ShoeId, "5"); r.Position != 5 || r.Card.Code != "4S" {
		t.Fatalf("retry of the last deal: %v", r)
	}
}

func TestCreateShoeFromOrder(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	order := []string{"9H", "TD", "AS", "AS", "KC", "5D", "2S"}
	shoe := fromOrder(t, c, order, 0)
	if shoe.CardsTotal != 7 || len(shoe.Burned) != 0 || shoe.CutCardFromEnd != 0 || shoe.Decks != 0 ||
		!shoe.Certification || !shoe.TestShoe || len(shoe.Commitment) != 0 {
		t.Fatalf("shoe = %v", shoe)
	}
	dealt, resps := dealAll(t, c, shoe)
	for i, card := range dealt {
		if card.String() != order[i] {
			t.Fatalf("card %d = %s, want %s", i, card, order[i])
		}
		// Cut card 0: it comes out only with the last card.
		if resps[i].CutCardOut != (i == len(order)-1) {
			t.Fatalf("deal %d: cut_card_out %v", i, resps[i].CutCardOut)
		}
	}
	if got := fromOrder(t, c, []string{"QS"}, 0); got.CardsTotal != 1 {
		t.Fatalf("one-card shoe: %v", got)
	}
}

func TestDealIdempotentRetry(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := create(t, c, &shoev1.CreateShoeRequest{})
	first := deal(t, c, shoe.ShoeId, "coup-1/card/0")
	again := deal(t, c, shoe.ShoeId, "coup-1/card/0")
	if !proto.Equal(first, again) {
		t.Fatalf("retry %v, first %v", again, first)
	}
	if got := getShoe(t, c, shoe.ShoeId); got.CardsDealt != 1 {
		t.Fatalf("retry dealt again: %v", got)
	}
	if next := deal(t, c, shoe.ShoeId, "coup-1/card/1"); next.Position != 1 {
		t.Fatalf("next position %d", next.Position)
	}

	// Concurrent retries of one id deal one card; distinct ids get
	// distinct positions.
	var wg sync.WaitGroup
	resps := make([]*shoev1.DealCardResponse, 16)
	for i := range resps {
		wg.Go(func() {
			id := "same"
			if i%2 == 1 {
				id = fmt.Sprint("distinct-", i)
			}
			r, err := c.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: id})
			if err != nil {
				t.Error(err)
			}
			resps[i] = r
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	positions := map[int32]bool{}
	for i, r := range resps {
		if i%2 == 0 && !proto.Equal(r, resps[0]) {
			t.Fatalf("retries of one id differ: %v vs %v", r, resps[0])
		}
		positions[r.Position] = true
	}
	if len(positions) != 9 {
		t.Fatalf("%d distinct positions, want 9", len(positions))
	}
	if got := getShoe(t, c, shoe.ShoeId); got.CardsDealt != 11 {
		t.Fatalf("cards_dealt %d, want 11", got.CardsDealt)
	}

	// The same request_id on another shoe is another deal.
	other := create(t, c, &shoev1.CreateShoeRequest{})
	if r := deal(t, c, other.ShoeId, "coup-1/card/0"); r.Position != 0 {
		t.Fatalf("other shoe position %d", r.Position)
	}
}

func TestCreateIdempotent(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	a := create(t, c, &shoev1.CreateShoeRequest{RequestId: "r1", Owner: "t1"})
	b := create(t, c, &shoev1.CreateShoeRequest{RequestId: "r1", Decks: 6, CutCardFromEnd: 8, Burn: 3, Owner: "t1"})
	if !proto.Equal(a, b) {
		t.Fatalf("retry returned %v, first %v", b, a)
	}
	_, err := c.CreateShoe(as(tableSvc), &shoev1.CreateShoeRequest{RequestId: "r1", Decks: 8, Owner: "t1"})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")

	req := &shoev1.CreateShoeFromOrderRequest{RequestId: "r1", Cards: []string{"9H", "TD"}, TestShoe: true}
	x, err := c.CreateShoeFromOrder(as(tableSvc), req)
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.CreateShoeFromOrder(as(tableSvc), req)
	if err != nil || !proto.Equal(x, y) || x.Shoe.ShoeId == a.ShoeId {
		t.Fatalf("from-order retry: %v %v (%v)", x, y, err)
	}
	_, err = c.CreateShoeFromOrder(as(tableSvc), &shoev1.CreateShoeFromOrderRequest{RequestId: "r1", Cards: []string{"9H"}, TestShoe: true})
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
}

// TestRestartContinues stops the service and starts a new one on the same
// file: it continues the shoe at the same position with the same order.
func TestRestartContinues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shoe.db")
	want := loadedOrder(t, 6, fixedSeed(1)(), "")[3:]

	s1 := startAt(t, path, fixedSeed(1))
	c1 := dial(t, s1.Addr())
	shoe := create(t, c1, &shoev1.CreateShoeRequest{RequestId: "create"})
	var first []*shoev1.DealCardResponse
	for i := range 10 {
		first = append(first, deal(t, c1, shoe.ShoeId, fmt.Sprint(i)))
	}
	s1.Stop()
	if err := s1.Wait(); err != nil {
		t.Fatal(err)
	}

	s2 := startAt(t, path, nil)
	c2 := dial(t, s2.Addr())
	if got := getShoe(t, c2, shoe.ShoeId); got.CardsDealt != 10 || got.CardsRemaining != 299 {
		t.Fatalf("after restart: %v", got)
	}
	if again := create(t, c2, &shoev1.CreateShoeRequest{RequestId: "create"}); !proto.Equal(again, shoe) {
		t.Fatalf("create retry after restart: %v", again)
	}
	if r := deal(t, c2, shoe.ShoeId, "3"); !proto.Equal(r, first[3]) {
		t.Fatalf("deal retry after restart: %v, first %v", r, first[3])
	}
	for i := 10; i < 20; i++ {
		r := deal(t, c2, shoe.ShoeId, fmt.Sprint(i))
		if int(r.Position) != i || fromProto(t, r.Card) != want[i] {
			t.Fatalf("deal %d after restart: %v, want %s", i, r, want[i])
		}
	}
}

func TestInvalidInputs(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	long := string(make([]byte, 257))
	tooMany := make([]string, 833)
	for i := range tooMany {
		tooMany[i] = "AS"
	}
	ctx := as(tableSvc)
	cases := []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
	}{
		{"create no request_id", func() error { _, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{}); return err },
			codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"create long request_id", func() error {
			_, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{RequestId: long})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"create long owner", func() error {
			_, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{RequestId: "x", Owner: long})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"create decks 7", func() error {
			_, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{RequestId: "x", Decks: 7})
			return err
		}, codes.InvalidArgument, "INVALID_HOUSE_RULE"},
		{"order no request_id", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{Cards: []string{"AS"}})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"order no cards", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x"})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"order 833 cards", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: tooMany, TestShoe: true})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"order not full decks", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: []string{"AS", "KD"}})
			return err
		}, codes.InvalidArgument, "NOT_FULL_DECKS"},
		{"order bad card", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: []string{"AS", "1H"}})
			return err
		}, codes.InvalidArgument, "INVALID_CARD"},
		{"order lower case", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: []string{"as"}})
			return err
		}, codes.InvalidArgument, "INVALID_CARD"},
		{"order 10H", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: []string{"10H"}})
			return err
		}, codes.InvalidArgument, "INVALID_CARD"},
		{"order negative cut", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: []string{"AS", "KD"}, CutCardFromEnd: -1, TestShoe: true})
			return err
		}, codes.InvalidArgument, "INVALID_HOUSE_RULE"},
		{"order cut 17", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: fullDecksOrder(2), CutCardFromEnd: 17})
			return err
		}, codes.InvalidArgument, "INVALID_HOUSE_RULE"},
		{"order cut not less than cards", func() error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: "x", Cards: []string{"AS", "KD"}, CutCardFromEnd: 2, TestShoe: true})
			return err
		}, codes.InvalidArgument, "INVALID_HOUSE_RULE"},
		{"get no id", func() error { _, err := c.GetShoe(ctx, &shoev1.GetShoeRequest{}); return err },
			codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"get unknown", func() error {
			_, err := c.GetShoe(ctx, &shoev1.GetShoeRequest{ShoeId: ulid.Make().String()})
			return err
		}, codes.NotFound, "SHOE_NOT_FOUND"},
		{"get garbage id", func() error { _, err := c.GetShoe(ctx, &shoev1.GetShoeRequest{ShoeId: "../x"}); return err },
			codes.NotFound, "SHOE_NOT_FOUND"},
		{"deal no request_id", func() error {
			_, err := c.DealCard(ctx, &shoev1.DealCardRequest{ShoeId: ulid.Make().String()})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"deal no shoe_id", func() error {
			_, err := c.DealCard(ctx, &shoev1.DealCardRequest{RequestId: "x"})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"deal unknown", func() error {
			_, err := c.DealCard(ctx, &shoev1.DealCardRequest{RequestId: "x", ShoeId: ulid.Make().String()})
			return err
		}, codes.NotFound, "SHOE_NOT_FOUND"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.call(), tc.code, tc.reason) })
	}
}

func TestRoles(t *testing.T) {
	c, s, _ := newEnv(t, nil)
	// A staff shoe: it belongs to no table, so every dealing role may deal
	// it (a table's shoe is for the table service only: ownership tests).
	shoe := createAs(t, c, operator, &shoev1.CreateShoeRequest{})
	caller := func(r auth.Role) context.Context { return as(auth.Caller{Subject: "someone", Role: r}) }
	calls := map[string]func(ctx context.Context) error{
		"CreateShoe": func(ctx context.Context) error {
			_, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{RequestId: ulid.Make().String()})
			return err
		},
		"CreateShoeFromOrder": func(ctx context.Context) error {
			_, err := c.CreateShoeFromOrder(ctx, &shoev1.CreateShoeFromOrderRequest{RequestId: ulid.Make().String(), Cards: []string{"AS"}, TestShoe: true})
			return err
		},
		"GetShoe": func(ctx context.Context) error {
			_, err := c.GetShoe(ctx, &shoev1.GetShoeRequest{ShoeId: shoe.ShoeId})
			return err
		},
		"DealCard": func(ctx context.Context) error {
			// A fresh staff shoe each time: the table service's deal
			// would make a shared one the table's.
			fresh := createAs(t, c, operator, &shoev1.CreateShoeRequest{})
			_, err := c.DealCard(ctx, &shoev1.DealCardRequest{ShoeId: fresh.ShoeId, RequestId: ulid.Make().String()})
			return err
		},
	}
	allowed := map[string][]auth.Role{
		"CreateShoe":          {auth.RoleService, auth.RoleCroupier, auth.RoleOperator},
		"CreateShoeFromOrder": {auth.RoleOperator, auth.RoleService},
		"GetShoe":             {auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator, auth.RoleAuditor, auth.RoleService},
		"DealCard":            {auth.RoleService, auth.RoleCroupier, auth.RoleOperator},
	}
	roles := []auth.Role{auth.RolePlayer, auth.RoleCroupier, auth.RoleOperator, auth.RoleAuditor, auth.RoleService}
	for method, call := range calls {
		for _, r := range roles {
			err := call(caller(r))
			if slices.Contains(allowed[method], r) {
				if err != nil {
					t.Errorf("%s as %s: %v", method, r, err)
				}
				continue
			}
			t.Run(method+"/"+string(r), func(t *testing.T) { wantErr(t, err, codes.PermissionDenied, "ROLE_NOT_ALLOWED") })
		}
		t.Run(method+"/anonymous", func(t *testing.T) {
			wantErr(t, call(context.Background()), codes.Unauthenticated, "UNAUTHENTICATED")
		})
		t.Run(method+"/bad role", func(t *testing.T) {
			wantErr(t, call(caller("admin")), codes.Unauthenticated, "UNAUTHENTICATED")
		})
	}
	// The policy covers every method of the service.
	for _, m := range shoev1.ShoeService_ServiceDesc.Methods {
		if _, ok := Policy()["/"+shoev1.ShoeService_ServiceDesc.ServiceName+"/"+m.MethodName]; !ok {
			t.Errorf("method %s has no policy", m.MethodName)
		}
	}
	// Health stays open without identity.
	conn, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: shoev1.ShoeService_ServiceDesc.ServiceName})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", h, err)
	}
}

func TestStartErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shoe.db")
	s := startAt(t, path, nil)
	// The port is taken.
	if _, err := Start(context.Background(), Config{ListenAddr: s.Addr(), DBPath: filepath.Join(t.TempDir(), "other.db"), Logger: quietLogger(), Trust: trust.Config{Insecure: true}}); err == nil {
		t.Fatal("Start on a taken port succeeded")
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "shoe.db"), Logger: quietLogger(), Trust: trust.Config{Insecure: true}})
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func BenchmarkCreateShoe(b *testing.B) {
	c, _, _ := newEnv(b, nil)
	ctx := as(tableSvc)
	for i := 0; b.Loop(); i++ {
		if _, err := c.CreateShoe(ctx, &shoev1.CreateShoeRequest{RequestId: fmt.Sprint(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDealCardGRPC(b *testing.B) {
	c, _, _ := newEnv(b, nil)
	ctx := as(tableSvc)
	var shoe *shoev1.Shoe
	left := 0
	for i := 0; b.Loop(); i++ {
		if left == 0 {
			b.StopTimer()
			shoe = create(b, c, &shoev1.CreateShoeRequest{Decks: 8})
			left = int(shoe.CardsTotal)
			b.StartTimer()
		}
		if _, err := c.DealCard(ctx, &shoev1.DealCardRequest{ShoeId: shoe.ShoeId, RequestId: fmt.Sprint(i)}); err != nil {
			b.Fatal(err)
		}
		left--
	}
}
