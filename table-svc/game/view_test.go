package game_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/table-svc/game"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
)

// TestViewer: only a player is a hand's holder, and only of his own
// (nobody holds a hand of no holder); only an auditor audits.
func TestViewer(t *testing.T) {
	for _, c := range []struct {
		v      game.Viewer
		holder string
		is     bool
	}{
		{game.Viewer{Role: game.Player, PlayerID: "p"}, "p", true},
		{game.Viewer{Role: game.Player, PlayerID: "p"}, "q", false},
		{game.Viewer{Role: game.Player}, "", false},
		{game.Viewer{Role: game.Staff, PlayerID: "p"}, "p", false},
		{game.Viewer{Role: game.Auditor, PlayerID: "p"}, "p", false},
		{game.Viewer{PlayerID: "p"}, "p", false},
	} {
		if got := c.v.Is(c.holder); got != c.is {
			t.Errorf("%+v is %q: %v, want %v", c.v, c.holder, got, c.is)
		}
	}
	for r, want := range map[game.Role]bool{game.Anonymous: false, game.Player: false, game.Staff: false, game.Auditor: true} {
		if got := (game.Viewer{Role: r}).Audits(); got != want {
			t.Errorf("role %d audits: %v, want %v", r, got, want)
		}
	}
}

// TestUnseen counts by rank, ace first, the cards sees says are not
// seen; an invalid code is left out.
func TestUnseen(t *testing.T) {
	right := game.Hand{Name: eventsv1.Hand_HAND_RIGHT}
	hands := []game.HandCards{
		{Hand: right, Codes: []string{"AH", "AD", "KS"}},
		{Hand: game.Hand{Name: eventsv1.Hand_HAND_PUNTER, Punter: "p"}, Codes: []string{"7C", "??", "TD"}},
	}
	got := game.Unseen(hands, func(h game.Hand, i int) bool { return h == right && i == 2 })
	if want := ([13]int{0: 2, 6: 1, 9: 1}); got != want { // A A (K seen), 7 T (?? invalid)
		t.Errorf("unseen %v, want %v", got, want)
	}
	// Nothing seen: the king counts too, in the last place.
	got = game.Unseen(hands, func(game.Hand, int) bool { return false })
	if want := ([13]int{0: 2, 6: 1, 9: 1, 12: 1}); got != want {
		t.Errorf("unseen with nothing seen %v, want %v", got, want)
	}
}

// TestPersonal: a published face-down card_dealt goes back with its card
// and total to a viewer the core's Shown gives it to (chemin de fer: the
// hand's holder), unchanged to anyone else; a face-up card and other
// events are as published.
func TestPersonal(t *testing.T) {
	s := chemindefer.State{Coup: &chemindefer.Coup{ID: "c1", BankerID: "bank", HandHolder: "punt",
		Player: []string{"9H", "5D"}, Banker: []string{"3C", "4H"}}}
	published := &eventsv1.TableEvent{CoupId: "c1", Payload: &eventsv1.TableEvent_CardDealt{CardDealt: &eventsv1.CardDealt{
		Hand: eventsv1.Hand_HAND_PLAYER, Position: 2, Card: &shoev1.Card{FaceDown: true}}}}
	before := proto.Clone(published)

	got := game.Personal(chemindefer.Game, s, game.Viewer{Role: game.Player, PlayerID: "punt"}, published)
	if cd := got.GetCardDealt(); cd.GetCard().GetCode() != "5D" || cd.GetCard().GetFaceDown() || cd.GetTotal() != 4 {
		t.Errorf("the holder gets %v, want 5D, total 4", cd)
	}
	if !proto.Equal(published, before) {
		t.Errorf("the published event changed: %v", published)
	}
	for _, v := range []game.Viewer{{}, {Role: game.Staff}, {Role: game.Player, PlayerID: "bank"}} {
		if got := game.Personal(chemindefer.Game, s, v, published); got != published {
			t.Errorf("%+v gets %v, want the published event", v, got)
		}
	}
	faceUp := &eventsv1.TableEvent{CoupId: "c1", Payload: &eventsv1.TableEvent_CardDealt{CardDealt: &eventsv1.CardDealt{
		Hand: eventsv1.Hand_HAND_PLAYER, Position: 2, Card: &shoev1.Card{Code: "5D"}}}}
	other := &eventsv1.TableEvent{CoupId: "c1", Payload: &eventsv1.TableEvent_BetDeclined{BetDeclined: &eventsv1.BetDeclined{PlayerId: "x"}}}
	for _, ev := range []*eventsv1.TableEvent{faceUp, other} {
		if got := game.Personal(chemindefer.Game, s, game.Viewer{Role: game.Player, PlayerID: "punt"}, ev); got != ev {
			t.Errorf("%v came back changed: %v", ev, got)
		}
	}
}
