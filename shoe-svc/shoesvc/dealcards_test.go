package shoesvc

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// dealCardsReq is a DealCards of the cards n..m-1 of coup, hands
// alternating player/banker.
func dealCardsReq(shoeID, coup string, n, m int) *shoev1.DealCardsRequest {
	r := &shoev1.DealCardsRequest{ShoeId: shoeID}
	for i := n; i < m; i++ {
		r.Cards = append(r.Cards, &shoev1.DealCardRequest{RequestId: fmt.Sprintf("%s/card/%d", coup, i), Hand: []string{"player", "banker"}[i%2]})
	}
	return r
}

// DealCards deals exactly what a DealCard per card deals, in one commit:
// the same cards at the same positions, the same fates (ListCardFates),
// each card's request id answered again the same by DealCard and by
// DealCards; a deal that runs past the shoe's end returns the cards
// before it.
func TestDealCardsIsDealCardPerCard(t *testing.T) {
	one, _, _ := newEnv(t, fixedSeed(11))
	batch, svc, _ := newEnv(t, fixedSeed(11))
	a := create(t, one, &shoev1.CreateShoeRequest{RequestId: "s", ClientSeed: "c"})
	b := create(t, batch, &shoev1.CreateShoeRequest{RequestId: "s", ClientSeed: "c"})
	var singles []*shoev1.DealCardResponse
	for i := 1; i <= 6; i++ {
		r, err := one.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: a.ShoeId,
			RequestId: fmt.Sprintf("coup-1/card/%d", i), Hand: []string{"player", "banker"}[i%2]})
		if err != nil {
			t.Fatal(err)
		}
		singles = append(singles, r)
	}
	commits := storeCommits(svc)
	got, err := batch.DealCards(as(tableSvc), dealCardsReq(b.ShoeId, "coup-1", 1, 5))
	if err != nil {
		t.Fatal(err)
	}
	if n := storeCommits(svc) - commits; n != 1 {
		t.Errorf("DealCards of 4 cards: %d commits, want 1", n)
	}
	for i := 5; i <= 6; i++ {
		r, err := batch.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: b.ShoeId,
			RequestId: fmt.Sprintf("coup-1/card/%d", i), Hand: []string{"player", "banker"}[i%2]})
		if err != nil {
			t.Fatal(err)
		}
		got.Cards = append(got.Cards, r)
	}
	for i := range singles {
		if !proto.Equal(singles[i], got.Cards[i]) {
			t.Fatalf("card %d: DealCards %v, DealCard %v", i+1, got.Cards[i], singles[i])
		}
	}
	// Retries: card 2 alone, and cards 3..6 together, answer the same.
	again, err := batch.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: b.ShoeId, RequestId: "coup-1/card/2", Hand: "player"})
	if err != nil || !proto.Equal(again, singles[1]) {
		t.Fatalf("card 2 again: %v, %v; want %v", again, err, singles[1])
	}
	rest, err := batch.DealCards(as(tableSvc), dealCardsReq(b.ShoeId, "coup-1", 3, 7))
	if err != nil || len(rest.Cards) != 4 {
		t.Fatalf("cards 3..6 again: %v, %v", rest, err)
	}
	for i, r := range rest.Cards {
		if !proto.Equal(r, singles[i+2]) {
			t.Fatalf("card %d again: %v, want %v", i+3, r, singles[i+2])
		}
	}
	if sh := getShoe(t, batch, b.ShoeId); sh.CardsDealt != 6 {
		t.Fatalf("retries dealt again: %d dealt", sh.CardsDealt)
	}
	fatesA, err := one.ListCardFates(as(tableSvc), &shoev1.ListCardFatesRequest{ShoeId: a.ShoeId})
	if err != nil {
		t.Fatal(err)
	}
	fatesB, err := batch.ListCardFates(as(tableSvc), &shoev1.ListCardFatesRequest{ShoeId: b.ShoeId})
	if err != nil {
		t.Fatal(err)
	}
	if len(fatesA.Fates) != len(fatesB.Fates) {
		t.Fatalf("fates: %d by DealCard, %d by DealCards", len(fatesA.Fates), len(fatesB.Fates))
	}
	for i := range fatesA.Fates {
		fa, fb := proto.CloneOf(fatesA.Fates[i]), proto.CloneOf(fatesB.Fates[i])
		fa.ShoeId, fb.ShoeId, fa.Time, fb.Time = "", "", nil, nil
		if !proto.Equal(fa, fb) {
			t.Fatalf("fate %d: DealCards %v, DealCard %v", i, fb, fa)
		}
	}

	// The end of the shoe: the cards before it.
	short, err := batch.CreateShoeFromOrder(as(tableSvc), &shoev1.CreateShoeFromOrderRequest{RequestId: "short", Cards: []string{"9H", "TD", "KS"}, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	id := short.GetShoe().GetShoeId()
	part, err := batch.DealCards(as(tableSvc), dealCardsReq(id, "coup-2", 1, 5))
	if err != nil {
		t.Fatal(err)
	}
	left := int(short.GetShoe().GetCardsRemaining())
	if len(part.Cards) != left || left == 0 || left >= 4 {
		t.Fatalf("past the end: %d cards, want the %d left", len(part.Cards), left)
	}
	_, err = batch.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: id, RequestId: fmt.Sprintf("coup-2/card/%d", left+1), Hand: "banker"})
	if status := codeOf(err); status != codes.FailedPrecondition {
		t.Fatalf("the card past the end: %v", err)
	}
}

// DealCards refuses bad requests (nothing dealt) and callers other than a
// service.
func TestDealCardsRefused(t *testing.T) {
	c, _, _ := newEnv(t, fixedSeed(3))
	shoe := create(t, c, &shoev1.CreateShoeRequest{})
	twice := dealCardsReq(shoe.ShoeId, "coup-1", 1, 3)
	twice.Cards[1].RequestId = twice.Cards[0].RequestId
	other := dealCardsReq(shoe.ShoeId, "coup-1", 1, 3)
	other.Cards[1].ShoeId = "another"
	for name, r := range map[string]*shoev1.DealCardsRequest{
		"no card":      {ShoeId: shoe.ShoeId},
		"too many":     dealCardsReq(shoe.ShoeId, "coup-1", 0, maxDealCards+1),
		"no shoe":      dealCardsReq("", "coup-1", 1, 3),
		"twice":        twice,
		"another shoe": other,
		"no request":   {ShoeId: shoe.ShoeId, Cards: []*shoev1.DealCardRequest{{}}},
	} {
		_, err := c.DealCards(as(tableSvc), r)
		if codeOf(err) != codes.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := c.DealCards(as(auth.Caller{Subject: "olga", Role: auth.RoleOperator}), dealCardsReq(shoe.ShoeId, "coup-1", 1, 3))
	if codeOf(err) != codes.PermissionDenied {
		t.Errorf("an operator: %v", err)
	}
	if sh := getShoe(t, c, shoe.ShoeId); sh.CardsDealt != 0 {
		t.Fatalf("refused requests dealt %d cards", sh.CardsDealt)
	}
}

// storeCommits is the id of the last transaction committed to the
// service's file (one more per commit).
func storeCommits(s *Service) int {
	var id int
	_ = s.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	return id
}
