package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// fullShoe is a certification order of six whole decks that starts with
// first: the rest of the decks follow in a fixed order.
func fullShoe(first ...string) []string {
	left := map[string]int{}
	for _, r := range "A23456789TJQK" {
		for _, s := range "CDHS" {
			left[string(r)+string(s)] = 6
		}
	}
	out := append([]string(nil), first...)
	for _, c := range first {
		left[c]--
	}
	for _, r := range "A23456789TJQK" {
		for _, s := range "CDHS" {
			c := string(r) + string(s)
			for ; left[c] > 0; left[c]-- {
				out = append(out, c)
			}
		}
	}
	return out
}

// seen renders cards as a viewer gets them: codes, "??" for face down.
func seen(cards []*shoev1.Card) string {
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = c.GetCode()
		if c.GetFaceDown() {
			out[i] = "??"
		}
	}
	return strings.Join(out, " ")
}

// TestWhoSeesWhat plays a coup with a player's decision and a banker's
// decision and checks, through the gateway, at each step, which cards
// every role sees: the banker, the punter holding the hand, another
// punter, the gallery, a croupier, an operator and an auditor
// (CF-DEAL, CF-PLAYER-DRAW, CF-BANKER-DRAW; table.proto "Who sees what"),
// in GetTable, ListTables, the responses of the closing PlaceBet and of
// each DecideDraw, and every role's WatchTable stream; then a coup voided
// at a decision, whose hole cards only the auditor sees.
func TestWhoSeesWhat(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob", "carol")
	// Player 2C 3D = 5 (bob's option), banker KD 5H = 5; bob draws 4S, so
	// the banker with 5 after giving a 4 has his option (CF-BANKER-DRAW);
	// he draws 9C: player 9, banker 4.
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: "views-shoe", Cards: fullShoe("2C", "KD", "3D", "5H", "4S", "9C")})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "views", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: certificationRules()})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "views/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.JoinGallery(as(t, "dave"), &tablev1.JoinGalleryRequest{RequestId: "views/dave", TableId: id, PlayerId: "dave"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "views/bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}

	// Everybody watches from here on.
	watch := func(who string) *watcher {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		s, err := c.table.WatchTable(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+who+"-token"), &tablev1.WatchTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		return &watcher{t: t, recv: s.Recv}
	}
	roles := []string{"alice", "bob", "carol", "dave", "croupier", "operator", "auditor"}
	watchers := map[string]*watcher{}
	for _, who := range roles {
		watchers[who] = watch(who)
	}

	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "views/bob", TableId: id, PlayerId: "bob", Amount: 600}); err != nil {
		t.Fatal(err)
	}
	// carol's bet closes the betting: its response holds the deal, as she
	// may see it (bob, with the larger bet, holds the player's hand).
	closing, err := c.table.PlaceBet(as(t, "carol"), &tablev1.PlaceBetRequest{RequestId: "views/carol", TableId: id, PlayerId: "carol", Amount: 400})
	if err != nil {
		t.Fatal(err)
	}
	if got := viewOf(closing.GetTable().GetCoup()); got != [2]string{"?? ??", "?? ??"} || closing.GetTable().GetCoup().GetHandHolderPlayerId() != "bob" {
		t.Errorf("carol's closing PlaceBet response shows player %q banker %q, want every card face down", got[0], got[1])
	}

	// After the deal, at bob's decision on his 5.
	checkViews(t, c, id, "at the player's decision", roles, map[string][2]string{
		"bob": {"2C 3D", "?? ??"}, "alice": {"?? ??", "KD 5H"}, "others": {"?? ??", "?? ??"}})
	if _, err := c.table.GetAdvice(as(t, "croupier"), &tablev1.GetAdviceRequest{TableId: id, PlayerId: "bob"}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("a croupier's GetAdvice at bob's decision: %v", err)
	}
	drew, err := c.table.DecideDraw(as(t, "bob"), &tablev1.DecideDrawRequest{RequestId: "views/draw", TableId: id, PlayerId: "bob", Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
	if err != nil {
		t.Fatal(err)
	}
	if got := viewOf(drew.GetTable().GetCoup()); got != [2]string{"2C 3D 4S", "?? ??"} {
		t.Errorf("bob's DecideDraw response shows player %q banker %q", got[0], got[1])
	}
	// At alice's option: the player's third card is face up.
	checkViews(t, c, id, "at the banker's decision", roles, map[string][2]string{
		"bob": {"2C 3D 4S", "?? ??"}, "alice": {"?? ?? 4S", "KD 5H"}, "others": {"?? ?? 4S", "?? ??"}})
	drew, err = c.table.DecideDraw(as(t, "alice"), &tablev1.DecideDrawRequest{RequestId: "views/bdraw", TableId: id, PlayerId: "alice", Choice: tablev1.DrawChoice_DRAW_CHOICE_DRAW})
	if err != nil {
		t.Fatal(err)
	}
	if got := viewOf(drew.GetTable().GetLastCoup()); got != [2]string{"2C 3D 4S", "KD 5H 9C"} {
		t.Errorf("alice's DecideDraw response shows the result as player %q banker %q", got[0], got[1])
	}
	checkViews(t, c, id, "after the result", roles, map[string][2]string{"others": {"2C 3D 4S", "KD 5H 9C"}})

	// The streams: the public card_dealt carries face-down cards, to staff
	// and auditors too; each holder gets his own; coup_resulted turns
	// everything.
	const public = "P:?? B:?? P:?? B:?? P:4S B:9C | 2C 3D 4S / KD 5H 9C"
	for who, want := range map[string]string{
		"bob": "P:2C B:?? P:3D B:?? P:4S B:9C | 2C 3D 4S / KD 5H 9C", "alice": "P:?? B:KD P:?? B:5H P:4S B:9C | 2C 3D 4S / KD 5H 9C",
		"carol": public, "dave": public, "croupier": public, "operator": public, "auditor": public,
	} {
		if got := watchers[who].cards(); got != want {
			t.Errorf("%s's stream: %s, want %s", who, got, want)
		}
	}

	// A coup voided at bob's decision: its hole cards stay face down, to
	// all but their holders and, once it is over, the auditor.
	sh, err = c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: "views-void-shoe", Cards: fullShoe("2C", "KD", "3D", "5H")})
	if err != nil {
		t.Fatal(err)
	}
	tb, err = c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "views-void", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: certificationRules()})
	if err != nil {
		t.Fatal(err)
	}
	void := tb.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "views-void/" + p, TableId: void, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "views-void/bank", TableId: void, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	bet, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "views-void/bob", TableId: void, PlayerId: "bob", Amount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.table.VoidCoup(as(t, "croupier"), &tablev1.VoidCoupRequest{RequestId: "views-void/void", TableId: void,
		Reason: "a card shown by mistake", CoupId: bet.GetTable().GetCoup().GetCoupId()}); err != nil {
		t.Fatal(err)
	}
	checkViews(t, c, void, "after the void", roles, map[string][2]string{
		"bob": {"2C 3D", "?? ??"}, "alice": {"?? ??", "KD 5H"}, "auditor": {"2C 3D", "KD 5H"}, "others": {"?? ??", "?? ??"}})
}

// viewOf renders a coup's hands as a viewer got them.
func viewOf(cp *tablev1.Coup) [2]string {
	return [2]string{seen(cp.GetPlayerCards()), seen(cp.GetBankerCards())}
}

// checkViews checks which cards each role sees of table id's coup in play
// (its last coup "after the result" and "after the void") in GetTable and
// in ListTables: want by role, "others" for the rest.
func checkViews(t *testing.T, c *client, id, step string, roles []string, want map[string][2]string) {
	t.Helper()
	for _, who := range roles {
		resp, err := c.table.GetTable(as(t, who), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		var listed *tablev1.Table
		for page := ""; listed == nil; {
			l, err := c.table.ListTables(as(t, who), &tablev1.ListTablesRequest{PageToken: page})
			if err != nil {
				t.Fatal(err)
			}
			for _, tb := range l.GetTables() {
				if tb.GetTableId() == id {
					listed = tb
				}
			}
			if page = l.GetNextPageToken(); page == "" && listed == nil {
				t.Fatalf("%s: table %s not in %s's ListTables", step, id, who)
			}
		}
		w, ok := want[who]
		if !ok {
			w = want["others"]
		}
		for call, tb := range map[string]*tablev1.Table{"GetTable": resp.GetTable(), "ListTables": listed} {
			cp := tb.GetCoup()
			if step == "after the result" || step == "after the void" {
				cp = tb.GetLastCoup()
			}
			if step == "after the void" && !cp.GetVoided() {
				t.Errorf("%s, %s's %s: the last coup is not voided: %v", step, who, call, cp)
			}
			if got := viewOf(cp); got != w {
				t.Errorf("%s, %s's %s shows player %q banker %q, want %q %q", step, who, call, got[0], got[1], w[0], w[1])
			}
		}
	}
}

type watcher struct {
	t    *testing.T
	recv func() (*tablev1.WatchTableResponse, error)
}

// cards reads events until coup_resulted and renders the card_dealt
// cards in order, then the resulted hands.
func (w *watcher) cards() string {
	w.t.Helper()
	var out []string
	for {
		msg, err := w.recv()
		if err != nil {
			w.t.Fatalf("stream after %v: %v", out, err)
		}
		ev := msg.GetEvent()
		if cd := ev.GetCardDealt(); cd != nil {
			h := "P"
			if cd.GetHand() == eventsv1.Hand_HAND_BANKER {
				h = "B"
			}
			out = append(out, h+":"+seen([]*shoev1.Card{cd.GetCard()}))
		}
		if r := ev.GetCoupResulted(); r != nil {
			return strings.Join(out, " ") + " | " + seen(r.GetPlayerCards()) + " / " + seen(r.GetBankerCards())
		}
	}
}

// certificationRules are the house rules of a table on a certification
// shoe that takes real-money bets in a test.
func certificationRules() *tablev1.HouseRules {
	return &tablev1.HouseRules{CertificationRealMoney: true}
}

// TestStaffCannotSteerTheCards: through the gateway, an operator cannot
// deal from or close a table's shoe, a shoe of 832 nines of hearts is
// refused unless marked a test shoe, and a void must name the coup in
// play.
func TestStaffCannotSteerTheCards(t *testing.T) {
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	id := playableTable(t, c)
	tb, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	shoeID := tb.GetTable().GetShoeId()
	_, err = c.shoe.DealCard(as(t, "operator"), &shoev1.DealCardRequest{RequestId: "peek", ShoeId: shoeID})
	if status.Code(err) != codes.PermissionDenied || errs.Reason(err) != "SHOE_OWNED_BY_TABLE" {
		t.Errorf("operator DealCard on a table's shoe: %v", err)
	}
	_, err = c.shoe.CloseShoe(as(t, "operator"), &shoev1.CloseShoeRequest{RequestId: "close", ShoeId: shoeID, Force: true, Reason: "x"})
	if status.Code(err) != codes.PermissionDenied || errs.Reason(err) != "SHOE_OWNED_BY_TABLE" {
		t.Errorf("operator CloseShoe on a table's shoe: %v", err)
	}
	_, err = c.shoe.ListCardFates(as(t, "auditor"), &shoev1.ListCardFatesRequest{ShoeId: shoeID})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("card fates of an open table shoe: %v", err)
	}
	nines := make([]string, 832)
	for i := range nines {
		nines[i] = "9H"
	}
	_, err = c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "nines", Cards: nines})
	if status.Code(err) != codes.InvalidArgument || errs.Reason(err) != "NOT_FULL_DECKS" {
		t.Errorf("832 nines of hearts: %v", err)
	}
	_, err = c.table.VoidCoup(as(t, "croupier"), &tablev1.VoidCoupRequest{RequestId: "void", TableId: id, Reason: "x", CoupId: "01NOTTHECOUP"})
	if status.Code(err) != codes.FailedPrecondition || errs.Reason(err) != "COUP_NOT_IN_PLAY" {
		t.Errorf("a void of another coup: %v", err)
	}
	// The table plays on from the shoe untouched.
	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "bet", TableId: id, PlayerId: "bob", Amount: 100}); err != nil {
		t.Fatal(err)
	}
}
