package oldbaccarat

import (
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

func player(id string) game.Viewer { return game.Viewer{Role: game.Player, PlayerID: id} }

func punter(id string) game.Hand { return game.Hand{Name: eventsv1.Hand_HAND_PUNTER, Punter: id} }

var (
	anon    = game.Viewer{}
	staff   = game.Viewer{Role: game.Staff}
	auditor = game.Viewer{Role: game.Auditor}
	banker  = game.Hand{Name: eventsv1.Hand_HAND_BANKER}
)

// viewCoup is a coup dealt by hand: the banker "bk" has 9H KD, punter "a"
// 5C 6D and a third card 3S, punter "b" AH 2H; no result yet.
func viewCoup(id string) *Coup {
	return &Coup{ID: id, BankerID: "bk", Banker: []string{"9H", "KD"}, Hands: []Hand{
		{PlayerID: "a", Cards: []string{"5C", "6D", "3S"}},
		{PlayerID: "b", Cards: []string{"AH", "2H"}},
	}}
}

// seen is whether v sees each card of coup id of s: the banker's (2),
// a's (3), b's (2).
func seen(s State, id string, v game.Viewer) [7]bool {
	var out [7]bool
	for i := range 2 {
		out[i] = Sees(s, id, v, banker, i)
		out[5+i] = Sees(s, id, v, punter("b"), i)
	}
	for i := range 3 {
		out[2+i] = Sees(s, id, v, punter("a"), i)
	}
	return out
}

// TestSees: every card is dealt face down to its holder, third cards too
// (OLD-DEAL, OLD-DRAW): only he sees his hand until the showdown, then
// everyone; a voided coup's go to auditors.
func TestSees(t *testing.T) {
	s := State{Coup: viewCoup("c1")}
	none := [7]bool{}
	all := [7]bool{true, true, true, true, true, true, true}
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [7]bool
	}{
		{"the banker", player("bk"), [7]bool{true, true}},
		{"punter a", player("a"), [7]bool{2: true, 3: true, 4: true}},
		{"punter b", player("b"), [7]bool{5: true, 6: true}},
		{"another player", player("x"), none},
		{"staff", staff, none},
		{"an auditor", auditor, none},
		{"nobody known", anon, none},
	} {
		if got := seen(s, "c1", c.v); got != c.want {
			t.Errorf("in play, %s sees %v, want %v", c.name, got, c.want)
		}
	}

	s.Coup.Decided = true
	if got := seen(s, "c1", anon); got != all {
		t.Errorf("after the showdown: %v, want all", got)
	}

	s = State{Coup: &Coup{ID: "c2"}, LastCoup: viewCoup("c1")}
	s.LastCoup.Voided = true
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [7]bool
	}{
		{"an auditor", auditor, all},
		{"staff", staff, none},
		{"punter b", player("b"), [7]bool{5: true, 6: true}},
	} {
		if got := seen(s, "c1", c.v); got != c.want {
			t.Errorf("voided, %s sees %v, want %v", c.name, got, c.want)
		}
	}

	s = State{Coup: viewCoup("c1")}
	s.Coup.Decided = true
	for _, c := range []struct {
		coup string
		h    game.Hand
		i    int
	}{{"c1", punter("a"), 3}, {"c1", punter("x"), 0}, {"c1", banker, 2}, {"c1", game.Hand{Name: eventsv1.Hand_HAND_PLAYER}, 0}, {"c0", banker, 0}} {
		if Sees(s, c.coup, anon, c.h, c.i) {
			t.Errorf("card %d of %v of coup %s is seen; the state has none", c.i, c.h, c.coup)
		}
	}
}

// TestHidden counts by rank what each viewer does not see: every card
// but his own hand's.
func TestHidden(t *testing.T) {
	s := State{Coup: viewCoup("c1")}
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [13]int
	}{
		{"nobody known", anon, [13]int{0: 1, 1: 1, 2: 1, 4: 1, 5: 1, 8: 1, 12: 1}}, // A 2 3 5 6 9 K
		{"punter a", player("a"), [13]int{0: 1, 1: 1, 8: 1, 12: 1}},                // the banker's 9 K, b's A 2
		{"the banker", player("bk"), [13]int{0: 1, 1: 1, 2: 1, 4: 1, 5: 1}},
	} {
		if got := Hidden(s, "c1", c.v); got != c.want {
			t.Errorf("%s: hidden %v, want %v", c.name, got, c.want)
		}
	}
	s.Coup.Decided = true
	if got := Hidden(s, "c1", anon); got != [13]int{} {
		t.Errorf("after the showdown: hidden %v, want none", got)
	}
}

// TestShown: in the events a card goes back only to the holder the
// card_dealt names, with his OLD-VALUES points up to it (ace 11, king 10,
// no modulo: 5+6 = 11, 5+6+3 = 14, 9+10 = 19).
func TestShown(t *testing.T) {
	down := &shoev1.Card{FaceDown: true}
	s := State{Coup: viewCoup("c1")}
	for _, c := range []struct {
		name  string
		v     game.Viewer
		cd    *eventsv1.CardDealt
		code  string
		total int
		ok    bool
	}{
		{"a his second card", player("a"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PUNTER, Position: 2, HolderPlayerId: "a", Card: down}, "6D", 11, true},
		{"a his third card", player("a"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PUNTER, Position: 3, HolderPlayerId: "a", Card: down}, "3S", 14, true},
		{"b his ace", player("b"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PUNTER, Position: 1, HolderPlayerId: "b", Card: down}, "AH", 11, true},
		{"the banker his second card", player("bk"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER, Position: 2, HolderPlayerId: "bk", Card: down}, "KD", 19, true},
		{"b a's card", player("b"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PUNTER, Position: 2, HolderPlayerId: "a", Card: down}, "", 0, false},
		{"an auditor", auditor, &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PUNTER, Position: 2, HolderPlayerId: "a", Card: down}, "", 0, false},
		{"a position the hand has not", player("b"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PUNTER, Position: 3, HolderPlayerId: "b", Card: down}, "", 0, false},
	} {
		code, total, ok := Shown(s, "c1", c.v, c.cd)
		if code != c.code || total != c.total || ok != c.ok {
			t.Errorf("%s: %q %d %v, want %q %d %v", c.name, code, total, ok, c.code, c.total, c.ok)
		}
	}
}

// TestHolderOf: the old game's card_dealt names its hand's holder.
func TestHolderOf(t *testing.T) {
	if got := HolderOf(State{}, "c1", &eventsv1.CardDealt{HolderPlayerId: "a"}); got != "a" {
		t.Errorf("holder %q, want a", got)
	}
}

// TestFaceDown: every card face down, third cards too (OLD-DEAL,
// OLD-DRAW).
func TestFaceDown(t *testing.T) {
	for _, pos := range []int32{1, 2, 3} {
		if !FaceDown(&eventsv1.CardDealt{Position: pos}) {
			t.Errorf("position %d: face up", pos)
		}
	}
}
