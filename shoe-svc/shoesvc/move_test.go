package shoesvc

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/shoe-svc/fair"
)

func move(c shoev1.ShoeServiceClient, who auth.Caller, shoeID, requestID string, count int32) (*shoev1.MoveTopCardsToBottomResponse, error) {
	return c.MoveTopCardsToBottom(as(who), &shoev1.MoveTopCardsToBottomRequest{
		RequestId: requestID, ShoeId: shoeID, Count: count, AnnouncedBy: "bertha"})
}

// TestOLDCutMoveTopCards: an old-game shoe (2 decks) cut by its player;
// the banker announces a move of 7 top cards (OLD-CUT). The next cards
// dealt are the ones after the moved 7, the moved 7 come last in their
// order, the move is in the shoe, the event and the reveal, and the
// closed shoe verifies; the same reveal without the move does not. A
// retry returns the same answer; another move, or another request under
// the same request_id, is refused and changes nothing.
func TestOLDCutMoveTopCards(t *testing.T) {
	c, s, _ := newEnv(t, fixedSeed(71))
	seed := fixedSeed(71)()
	shoe := create(t, c, &shoev1.CreateShoeRequest{RequestId: "table/O/shoe/1", Owner: "O", Variant: shoev1.Variant_VARIANT_OLD,
		ClientSeed: "table/O/shoe/1", CutterPlayerId: "alice"})
	// Before the cut there is nothing to move.
	_, err := move(c, tableSvc, shoe.ShoeId, "early", 7)
	wantErr(t, err, codes.FailedPrecondition, "SHOE_NOT_CUT")
	cut, err := c.Cut(as(alice), &shoev1.CutRequest{RequestId: "cut", ShoeId: shoe.ShoeId, PlayerId: "alice", Position: 40,
		PlayerSeed: "alice 77aa"})
	if err != nil {
		t.Fatal(err)
	}
	if cut.Shoe.Decks != 2 || cut.Shoe.CardsTotal != 101 {
		t.Fatalf("cut: %v", cut.Shoe)
	}
	order, _ := fair.Shuffle(2, fair.Seeds{Server: seed, Client: "table/O/shoe/1", Players: []string{"alice 77aa"}})
	loaded, _ := fair.Cards(fair.Cut(order, 40))
	dealing := loaded[3:] // after the 3 burned cards

	first, err := move(c, tableSvc, shoe.ShoeId, "O/coup-1/move", 7)
	if err != nil {
		t.Fatal(err)
	}
	if first.Shoe.MovedToBottom != 7 || first.Shoe.MovedBy != "bertha" || first.Shoe.CardsRemaining != 101 ||
		first.Shoe.CardsDealt != 0 || first.Shoe.CutCardFromEnd != 8 {
		t.Fatalf("moved: %v", first.Shoe)
	}
	retry, err := move(c, tableSvc, shoe.ShoeId, "O/coup-1/move", 7)
	if err != nil || !proto.Equal(retry, first) {
		t.Fatalf("retry: %v, %v", retry, err)
	}
	_, err = move(c, tableSvc, shoe.ShoeId, "O/coup-1/move", 8)
	wantErr(t, err, codes.AlreadyExists, "REQUEST_ID_REUSED")
	_, err = move(c, tableSvc, shoe.ShoeId, "again", 3)
	wantErr(t, err, codes.FailedPrecondition, "TOP_CARDS_ALREADY_MOVED")
	if got := getShoe(t, c, shoe.ShoeId); !proto.Equal(got, first.Shoe) {
		t.Fatalf("refused moves changed the shoe: %v", got)
	}

	dealt, _ := dealAll(t, c, first.Shoe)
	want := append(slices.Clone(dealing[7:]), dealing[:7]...)
	if !slices.Equal(dealt, want) {
		t.Fatalf("dealt %v\nwant  %v", dealt, want)
	}
	if !slices.Equal(dealt[:5], dealing[7:12]) || !slices.Equal(dealt[len(dealt)-7:], dealing[:7]) {
		t.Fatal("the moved cards are not last")
	}
	// After the first deal no move (a fresh request id).
	_, err = move(c, tableSvc, shoe.ShoeId, "late", 2)
	wantErr(t, err, codes.FailedPrecondition, "SHOE_CLOSED")

	rv := reveal(t, c, shoe.ShoeId) // verifies with the move
	if rv.MovedToBottom != 7 || rv.MovedBy != "bertha" || len(rv.Dealt) != 101 {
		t.Fatalf("reveal: moved %d by %q, %d dealt", rv.MovedToBottom, rv.MovedBy, len(rv.Dealt))
	}
	for _, k := range []int32{0, 6, 8, 101} {
		tampered := proto.CloneOf(rv)
		tampered.MovedToBottom = k
		if err := fair.Verify(FairReveal(tampered)); !errors.Is(err, fair.ErrMismatch) {
			t.Fatalf("reveal with moved_to_bottom %d: %v, want a mismatch", k, err)
		}
	}
	// The fates list the dealt cards in the dealing order after the move.
	fates, err := c.ListCardFates(as(alice), &shoev1.ListCardFatesRequest{ShoeId: shoe.ShoeId})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fates.Fates[3:] {
		if f.Fate != shoev1.Fate_FATE_DEALT || int(f.DealtPosition) != i || f.Card.Code != want[i].String() {
			t.Fatalf("fate %d: %v", i, f)
		}
	}
	// The event, between the burn and the cut card.
	msgs, err := outbox.Pending(s.db, 100)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range msgs {
		ev := &eventsv1.ShoeEvent{}
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			t.Fatal(err)
		}
		if ev.ShoeId != shoe.ShoeId {
			continue
		}
		kinds = append(kinds, m.Subject[len("chemmy.shoe."+shoe.ShoeId+"."):])
		if p, ok := ev.Payload.(*eventsv1.ShoeEvent_TopCardsMoved); ok {
			if m.ID != shoe.ShoeId+"/top_cards_moved" || p.TopCardsMoved.Count != 7 ||
				p.TopCardsMoved.AnnouncedBy != "bertha" || p.TopCardsMoved.CardsRemaining != 101 {
				t.Fatalf("event %s: %v", m.ID, p)
			}
		}
	}
	if fmt.Sprint(kinds) != "[shoe_opened cards_burned top_cards_moved cut_card_out shoe_closed]" {
		t.Fatalf("events %v", kinds)
	}
}

// TestMoveTopCardsRefused: who, when and how much (OLD-CUT); every
// refusal leaves the shoe as it was, and the shoe then deals as shuffled.
func TestMoveTopCardsRefused(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(72))
	old := create(t, c, &shoev1.CreateShoeRequest{Owner: "O", Variant: shoev1.Variant_VARIANT_OLD, ClientSeed: "o"})
	chemin := create(t, c, &shoev1.CreateShoeRequest{Owner: "C"})
	banque := create(t, c, &shoev1.CreateShoeRequest{Owner: "B", Variant: shoev1.Variant_VARIANT_BANQUE})
	for _, sh := range []*shoev1.Shoe{chemin, banque} {
		_, err := move(c, tableSvc, sh.ShoeId, "m", 3)
		wantErr(t, err, codes.FailedPrecondition, "MOVE_NOT_ALLOWED")
	}
	for _, tc := range []struct {
		name   string
		who    auth.Caller
		r      *shoev1.MoveTopCardsToBottomRequest
		code   codes.Code
		reason string
	}{
		{"no request id", tableSvc, &shoev1.MoveTopCardsToBottomRequest{ShoeId: old.ShoeId, Count: 3, AnnouncedBy: "b"}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"no shoe", tableSvc, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", Count: 3, AnnouncedBy: "b"}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"not announced", tableSvc, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: 3}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"zero", tableSvc, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, AnnouncedBy: "b"}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"negative", tableSvc, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: -1, AnnouncedBy: "b"}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"all", tableSvc, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: old.CardsRemaining, AnnouncedBy: "b"}, codes.InvalidArgument, "INVALID_ARGUMENT"},
		{"unknown shoe", tableSvc, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: "nope", Count: 3, AnnouncedBy: "b"}, codes.NotFound, "SHOE_NOT_FOUND"},
		{"operator", operator, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: 3, AnnouncedBy: "b"}, codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
		{"croupier", croupier, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: 3, AnnouncedBy: "b"}, codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
		{"the banker himself", alice, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: 3, AnnouncedBy: "alice"}, codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
		{"another service", auth.Caller{Subject: "wallet-svc", Role: auth.RoleService}, &shoev1.MoveTopCardsToBottomRequest{RequestId: "r", ShoeId: old.ShoeId, Count: 3, AnnouncedBy: "b"}, codes.PermissionDenied, "ROLE_NOT_ALLOWED"},
	} {
		_, err := c.MoveTopCardsToBottom(as(tc.who), tc.r)
		if statusCode(err) != tc.code || statusReason(err) != tc.reason {
			t.Fatalf("%s: %v, want %v %s", tc.name, err, tc.code, tc.reason)
		}
	}
	if got := getShoe(t, c, old.ShoeId); !proto.Equal(got, old) {
		t.Fatalf("refused moves changed the shoe: %v", got)
	}
	// The largest move: every card but the last goes to the bottom.
	resp, err := move(c, tableSvc, old.ShoeId, "max", old.CardsRemaining-1)
	if err != nil {
		t.Fatal(err)
	}
	want := loadedOrder(t, 2, fixedSeed(72)(), "o")[3:]
	if d := deal(t, c, old.ShoeId, "x/card/1"); fromProto(t, d.Card) != want[len(want)-1] || resp.Shoe.MovedToBottom != old.CardsRemaining-1 {
		t.Fatalf("first card after moving %d: %s, want %s", resp.Shoe.MovedToBottom, d.Card.Code, want[len(want)-1])
	}

	// After the first deal: too late (the text: after the cut, before the deal).
	dealtFirst := create(t, c, &shoev1.CreateShoeRequest{Owner: "O2", Variant: shoev1.Variant_VARIANT_OLD})
	deal(t, c, dealtFirst.ShoeId, "c1/card/1")
	_, err = move(c, tableSvc, dealtFirst.ShoeId, "m", 3)
	wantErr(t, err, codes.FailedPrecondition, "DEAL_STARTED")
	// A closed shoe.
	closed := create(t, c, &shoev1.CreateShoeRequest{Owner: "O3", Variant: shoev1.Variant_VARIANT_OLD})
	if _, err := c.CloseShoe(as(tableSvc), &shoev1.CloseShoeRequest{RequestId: "c", ShoeId: closed.ShoeId, Force: true, Reason: "table closed"}); err != nil {
		t.Fatal(err)
	}
	_, err = move(c, tableSvc, closed.ShoeId, "m", 3)
	wantErr(t, err, codes.FailedPrecondition, "SHOE_CLOSED")
}

// TestMoveTopCardsAfterCutTimeout: the cutter's time ran out: the move
// cuts the shoe at random first, then moves.
func TestMoveTopCardsAfterCutTimeout(t *testing.T) {
	c, _, clk := newClockEnv(t, fixedSeed(73), time.Hour)
	shoe := create(t, c, &shoev1.CreateShoeRequest{Owner: "O", Variant: shoev1.Variant_VARIANT_OLD, ClientSeed: "o",
		CutterPlayerId: "alice"})
	clk.add(time.Minute)
	resp, err := move(c, tableSvc, shoe.ShoeId, "m", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Shoe.CutRandom || resp.Shoe.State != shoev1.ShoeState_SHOE_STATE_OPEN || resp.Shoe.MovedToBottom != 10 {
		t.Fatalf("moved: %v", resp.Shoe)
	}
	want := loadedOrder(t, 2, fixedSeed(73)(), "o")[3:]
	if d := deal(t, c, shoe.ShoeId, "c/card/1"); fromProto(t, d.Card) != want[10] {
		t.Fatalf("first card %s, want %s", d.Card.Code, want[10])
	}
}

// TestMoveTopCardsCertificationShoe: a prepared shoe (an old-game table's
// test) may be moved too: its cards come out rotated.
func TestMoveTopCardsCertificationShoe(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	shoe := fromOrder(t, c, []string{"AS", "2S", "3S", "4S", "5S", "6S"}, 0)
	if _, err := move(c, tableSvc, shoe.ShoeId, "m", 2); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range 6 {
		got = append(got, deal(t, c, shoe.ShoeId, fmt.Sprintf("c/card/%d", i)).Card.Code)
	}
	if fmt.Sprint(got) != "[3S 4S 5S 6S AS 2S]" {
		t.Fatalf("dealt %v", got)
	}
}

// TestCutCardBoundsByVariant: SHOE-CUT-CARD by variant. Banque and the old
// game need 8 cards behind the cut card (a coup of up to 9 cards); the
// old game allows 17 (the 5/6 bound of 104 cards); chemin de fer and
// punto banco keep 6..16.
func TestCutCardBoundsByVariant(t *testing.T) {
	c, _, _ := newEnv(t, nil)
	for _, tc := range []struct {
		v      shoev1.Variant
		lo, hi int32
	}{
		{shoev1.Variant_VARIANT_UNSPECIFIED, 6, 16}, {shoev1.Variant_VARIANT_CHEMIN_DE_FER, 6, 16},
		{shoev1.Variant_VARIANT_PUNTO_BANCO, 6, 16}, {shoev1.Variant_VARIANT_BANQUE, 8, 16}, {shoev1.Variant_VARIANT_OLD, 8, 17},
	} {
		for cut := tc.lo - 2; cut <= tc.hi+1; cut++ {
			_, err := c.CreateShoe(as(tableSvc), &shoev1.CreateShoeRequest{RequestId: fmt.Sprint(tc.v, cut), Variant: tc.v, CutCardFromEnd: cut})
			if ok := cut >= tc.lo && cut <= tc.hi; ok != (err == nil) {
				t.Fatalf("%s cut_card_from_end %d: %v", tc.v, cut, err)
			} else if !ok {
				wantErr(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
			}
		}
	}
	// The old game's widest cut card still comes out only once 5/6 of the
	// shoe is out (SHOE-RESHUFFLE), whatever the burn.
	for _, burn := range []shoev1.BurnMode{shoev1.BurnMode_BURN_MODE_COUNT, shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD} {
		shoe := create(t, c, &shoev1.CreateShoeRequest{Variant: shoev1.Variant_VARIANT_OLD, CutCardFromEnd: 17, BurnMode: burn})
		_, resps := dealAll(t, c, shoe)
		for i, r := range resps {
			if r.CutCardOut {
				if out := len(shoe.Burned) + i + 1; 6*out < 5*2*rules.DeckSize {
					t.Fatalf("cut card out with %d of 104 cards out", out)
				}
				break
			}
		}
	}
}
