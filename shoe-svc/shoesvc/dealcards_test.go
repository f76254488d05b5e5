package shoesvc

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/errs"
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

// thirdCardsReq is a DealCards with third cards of coup: its opening four
// (player, banker, player, banker) and two third cards' entries.
func thirdCardsReq(shoeID, coup string, tc *shoev1.ThirdCards) *shoev1.DealCardsRequest {
	r := &shoev1.DealCardsRequest{ShoeId: shoeID, ThirdCards: tc}
	for i, h := range []string{"player", "banker", "player", "banker", "", ""} {
		r.Cards = append(r.Cards, &shoev1.DealCardRequest{RequestId: fmt.Sprintf("%s/card/%d", coup, i+1), Hand: h})
	}
	return r
}

// DealCards with third cards deals a coup's opening and every third card
// the tableau forces in one commit, stopping at the first option, a
// natural or the coup's end; each card keeps its request id and is
// recorded to its hand (ListCardFates), answered again the same by a
// retry and by DealCard of its request id. The expected hands follow
// RULES.md CF-NATURAL-PLAYER, CF-PLAYER-DRAW, CF-BANKER-DRAW and
// PB-TABLEAU, read off the cards by hand. Order of the opening: player,
// banker, player, banker.
func TestDealCardsThirdCards(t *testing.T) {
	cf := &shoev1.ThirdCards{Tableau: shoev1.Tableau_TABLEAU_CHEMIN_DE_FER, BankerOption_3Vs_9: true, BankerOption_5Vs_4: true}
	cfNoOptions := &shoev1.ThirdCards{Tableau: shoev1.Tableau_TABLEAU_CHEMIN_DE_FER}
	pb := &shoev1.ThirdCards{Tableau: shoev1.Tableau_TABLEAU_PUNTO_BANCO}
	for _, c := range []struct {
		name  string
		tc    *shoev1.ThirdCards
		cards []string // the shoe's first six cards
		hands []string // the hands dealt to, in order
	}{
		// Player A+2=3 draws (0-4), gets 7; banker K+6=6 draws against a 7 (0-6).
		{"both draw", cf, []string{"AS", "KS", "2S", "6S", "7S", "3H"}, []string{"player", "banker", "player", "banker", "player", "banker"}},
		// Player 2+3=5: his option; nothing more.
		{"player's option at 5", cf, []string{"2S", "KS", "3S", "4S", "7S", "3H"}, []string{"player", "banker", "player", "banker"}},
		// Player 4+5=9: a natural.
		{"natural", cf, []string{"4S", "AS", "5S", "2S", "7S", "3H"}, []string{"player", "banker", "player", "banker"}},
		// Player 3+3=6 stands; banker A+2=3 draws (0-5 when the player stood).
		{"player stands, banker draws", cf, []string{"3S", "AS", "3H", "2S", "7S", "3D"}, []string{"player", "banker", "player", "banker", "banker"}},
		// Player A+A=2 draws a 9; banker 2+A=3 against a 9: his option (banker_option_3_vs_9).
		{"banker's option 3 vs 9", cf, []string{"AS", "2S", "AH", "AD", "9S", "3D"}, []string{"player", "banker", "player", "banker", "player"}},
		// The same with the option off: he draws.
		{"3 vs 9 without the option", cfNoOptions, []string{"AS", "2S", "AH", "AD", "9S", "3D"}, []string{"player", "banker", "player", "banker", "player", "banker"}},
		// Punto banco: the player draws on 5 (no option), then the banker
		// K+4=4 against a 4 draws (0-5).
		{"punto banco draws on 5", pb, []string{"2S", "KS", "3S", "4S", "4H", "3H"}, []string{"player", "banker", "player", "banker", "player", "banker"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, svc, _ := newEnv(t, fixedSeed(3))
			order := append(append([]string(nil), c.cards...), "9H", "9D", "9C")
			sh, err := client.CreateShoeFromOrder(as(tableSvc), &shoev1.CreateShoeFromOrderRequest{RequestId: "s", Cards: order, TestShoe: true})
			if err != nil {
				t.Fatal(err)
			}
			id := sh.GetShoe().GetShoeId()
			commits := storeCommits(svc)
			got, err := client.DealCards(as(tableSvc), thirdCardsReq(id, "coup-1", c.tc))
			if err != nil {
				t.Fatal(err)
			}
			if n := storeCommits(svc) - commits; n != 1 {
				t.Errorf("%d commits, want 1", n)
			}
			if len(got.Cards) != len(c.hands) {
				t.Fatalf("%d cards dealt, want %d: %v", len(got.Cards), len(c.hands), got.Cards)
			}
			for i, r := range got.Cards {
				if r.GetCard().GetCode() != c.cards[i] || r.GetHand() != c.hands[i] || r.GetPosition() != int32(i) {
					t.Errorf("card %d: %s to %q at %d, want %s to %q at %d", i+1, r.GetCard().GetCode(), r.GetHand(), r.GetPosition(), c.cards[i], c.hands[i], i)
				}
			}
			fates, err := client.ListCardFates(as(tableSvc), &shoev1.ListCardFatesRequest{CoupId: "coup-1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(fates.Fates) != len(c.hands) {
				t.Fatalf("%d fates, want %d", len(fates.Fates), len(c.hands))
			}
			for i, f := range fates.Fates {
				if f.GetHand() != c.hands[i] || f.GetRequestId() != fmt.Sprintf("coup-1/card/%d", i+1) || f.GetCard().GetCode() != c.cards[i] {
					t.Errorf("fate %d: %s %q %s, want %s %q coup-1/card/%d", i, f.GetCard().GetCode(), f.GetHand(), f.GetRequestId(), c.cards[i], c.hands[i], i+1)
				}
			}
			// A retry deals nothing more and answers the same.
			again, err := client.DealCards(as(tableSvc), thirdCardsReq(id, "coup-1", c.tc))
			if err != nil || len(again.Cards) != len(got.Cards) {
				t.Fatalf("again: %v, %v", again, err)
			}
			for i := range got.Cards {
				if !proto.Equal(again.Cards[i], got.Cards[i]) {
					t.Errorf("card %d again: %v, want %v", i+1, again.Cards[i], got.Cards[i])
				}
			}
			if n := len(c.hands); n > 4 {
				// DealCard of a third card's request id, to its hand, is that card.
				one, err := client.DealCard(as(tableSvc), &shoev1.DealCardRequest{ShoeId: id, RequestId: fmt.Sprintf("coup-1/card/%d", n), Hand: c.hands[n-1]})
				if err != nil || !proto.Equal(one, got.Cards[n-1]) {
					t.Errorf("DealCard of card %d: %v, %v; want %v", n, one, err, got.Cards[n-1])
				}
			}
			if sh := getShoe(t, client, id); sh.CardsDealt != int32(len(c.hands)) {
				t.Errorf("shoe: %d dealt, want %d", sh.CardsDealt, len(c.hands))
			}
		})
	}
}

// A DealCards with third cards must name a tableau, give the opening's
// hands and leave the third cards' to the tableau: INVALID_ARGUMENT.
func TestDealCardsThirdCardsInvalid(t *testing.T) {
	client, _, _ := newEnv(t, fixedSeed(3))
	sh := create(t, client, &shoev1.CreateShoeRequest{RequestId: "s", ClientSeed: "c"})
	cf := &shoev1.ThirdCards{Tableau: shoev1.Tableau_TABLEAU_CHEMIN_DE_FER}
	noTableau := thirdCardsReq(sh.ShoeId, "coup-1", &shoev1.ThirdCards{})
	short := thirdCardsReq(sh.ShoeId, "coup-1", cf)
	short.Cards = short.Cards[:3]
	handed := thirdCardsReq(sh.ShoeId, "coup-1", cf)
	handed.Cards[4].Hand = "player"
	swapped := thirdCardsReq(sh.ShoeId, "coup-1", cf)
	swapped.Cards[0].Hand, swapped.Cards[1].Hand = "banker", "player"
	for name, r := range map[string]*shoev1.DealCardsRequest{"no tableau": noTableau, "3 entries": short, "a third card's hand": handed, "opening out of order": swapped} {
		_, err := client.DealCards(as(tableSvc), r)
		if status.Code(err) != codes.InvalidArgument || errs.Reason(err) != "INVALID_ARGUMENT" {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if got := getShoe(t, client, sh.ShoeId); got.CardsDealt != 0 {
		t.Errorf("%d cards dealt by refused requests", got.CardsDealt)
	}
}
