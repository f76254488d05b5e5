package banque

import (
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

func player(id string) game.Viewer { return game.Viewer{Role: game.Player, PlayerID: id} }

var (
	anon    = game.Viewer{}
	staff   = game.Viewer{Role: game.Staff}
	auditor = game.Viewer{Role: game.Auditor}
	right   = game.Hand{Name: eventsv1.Hand_HAND_RIGHT}
	left    = game.Hand{Name: eventsv1.Hand_HAND_LEFT}
	banker  = game.Hand{Name: eventsv1.Hand_HAND_BANKER}
)

// viewCoup is a coup dealt by hand (BQ-HANDS): "r" plays the right hand
// (9H 5D, then 2C drawn face up), "l" the left (KS QH), the banker has 3C
// 4H; no result yet.
func viewCoup(id string) *Coup {
	return &Coup{ID: id, RightHolder: "r", LeftHolder: "l",
		Right: []string{"9H", "5D", "2C"}, Left: []string{"KS", "QH"}, Banker: []string{"3C", "4H"}}
}

// seen is whether v sees each card of coup id of s: right (3), left (2),
// banker (2).
func seen(s State, id string, v game.Viewer) [7]bool {
	var out [7]bool
	for i := range 3 {
		out[i] = Sees(s, id, v, right, i)
	}
	for i := range 2 {
		out[3+i] = Sees(s, id, v, left, i)
		out[5+i] = Sees(s, id, v, banker, i)
	}
	return out
}

// TestSees: a hand's first two cards go to its holder only (BQ-PLAY; the
// banker his own), a third card to everyone; after the showdown every
// card to everyone; a voided coup's to auditors.
func TestSees(t *testing.T) {
	s := State{Banker: "bk", Coup: viewCoup("c1")}
	third := [7]bool{2: true}
	all := [7]bool{true, true, true, true, true, true, true}
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [7]bool
	}{
		{"the right hand's holder", player("r"), [7]bool{true, true, true}},
		{"the left hand's holder", player("l"), [7]bool{2: true, 3: true, 4: true}},
		{"the banker", player("bk"), [7]bool{2: true, 5: true, 6: true}},
		{"another player", player("x"), third},
		{"staff", staff, third},
		{"an auditor", auditor, third},
		{"nobody known", anon, third},
	} {
		if got := seen(s, "c1", c.v); got != c.want {
			t.Errorf("in play, %s sees %v, want %v", c.name, got, c.want)
		}
	}

	// Nobody on the left side: the tableau plays the hand, nobody sees it.
	s.Coup.LeftHolder = ""
	if got := seen(s, "c1", player("")); got != third {
		t.Errorf("no left holder: a player without an id sees %v, want %v", got, third)
	}

	// The showdown (Decided) shows everything to everyone.
	s = State{Banker: "bk", LastCoup: viewCoup("c1")}
	s.LastCoup.Decided = true
	if got := seen(s, "c1", anon); got != all {
		t.Errorf("after the showdown: %v, want all", got)
	}

	// A voided last coup: auditors see it all; the table's banker no
	// longer holds its banker's hand (he may have passed the bank).
	s = State{Banker: "bk", Coup: &Coup{ID: "c2"}, LastCoup: viewCoup("c1")}
	s.LastCoup.Voided = true
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [7]bool
	}{
		{"an auditor", auditor, all},
		{"staff", staff, third},
		{"the right hand's holder", player("r"), [7]bool{true, true, true}},
		{"the banker", player("bk"), third},
	} {
		if got := seen(s, "c1", c.v); got != c.want {
			t.Errorf("voided, %s sees %v, want %v", c.name, got, c.want)
		}
	}

	s = State{Banker: "bk", Coup: viewCoup("c1")}
	s.Coup.Decided = true
	for _, c := range []struct {
		coup string
		h    game.Hand
		i    int
	}{{"c1", right, 3}, {"c1", left, 2}, {"c1", banker, -1}, {"c1", game.Hand{Name: eventsv1.Hand_HAND_PLAYER}, 0}, {"c0", right, 0}} {
		if Sees(s, c.coup, anon, c.h, c.i) {
			t.Errorf("card %d of %v of coup %s is seen; the state has none", c.i, c.h, c.coup)
		}
	}
}

// TestHidden counts by rank what each viewer does not see: 9H 5D, KS QH
// and 3C 4H face down, 2C face up.
func TestHidden(t *testing.T) {
	s := State{Banker: "bk", Coup: viewCoup("c1")}
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [13]int
	}{
		{"nobody known", anon, [13]int{2: 1, 3: 1, 4: 1, 8: 1, 11: 1, 12: 1}}, // 3 4 5 9 Q K
		{"the right hand's holder", player("r"), [13]int{2: 1, 3: 1, 11: 1, 12: 1}},
		{"the banker", player("bk"), [13]int{4: 1, 8: 1, 11: 1, 12: 1}},
	} {
		if got := Hidden(s, "c1", c.v); got != c.want {
			t.Errorf("%s: hidden %v, want %v", c.name, got, c.want)
		}
	}
	if got := Hidden(s, "c0", anon); got != [13]int{} {
		t.Errorf("a coup the state has not: hidden %v", got)
	}
}

// TestShown: in the events a face-down card goes back only to the holder
// the card_dealt names, with his hand's total up to it (HAND-TOTAL:
// 9+5 = 4), whatever became of the coup.
func TestShown(t *testing.T) {
	down := &shoev1.Card{FaceDown: true}
	rightSecond := &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_RIGHT, Position: 2, HolderPlayerId: "r", Card: down}
	bankerFirst := &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER, Position: 1, HolderPlayerId: "bk", Card: down}
	s := State{Banker: "new", Coup: &Coup{ID: "c2"}, LastCoup: viewCoup("c1")}
	s.LastCoup.Decided = true
	for _, c := range []struct {
		name  string
		v     game.Viewer
		cd    *eventsv1.CardDealt
		code  string
		total int
		ok    bool
	}{
		{"the right hand's holder", player("r"), rightSecond, "5D", 4, true},
		{"the left hand's holder", player("l"), rightSecond, "", 0, false},
		{"an auditor", auditor, rightSecond, "", 0, false},
		{"the banker named by the event", player("bk"), bankerFirst, "3C", 3, true},
		{"the table's banker now", player("new"), bankerFirst, "", 0, false},
		{"a position the hand has not", player("r"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_RIGHT, Position: 4, HolderPlayerId: "r"}, "", 0, false},
	} {
		code, total, ok := Shown(s, "c1", c.v, c.cd)
		if code != c.code || total != c.total || ok != c.ok {
			t.Errorf("%s: %q %d %v, want %q %d %v", c.name, code, total, ok, c.code, c.total, c.ok)
		}
	}
	if _, _, ok := Shown(s, "c0", player("r"), rightSecond); ok {
		t.Error("a coup the state has not: shown")
	}
}

// TestHolderOf: banque's card_dealt names its hand's holder.
func TestHolderOf(t *testing.T) {
	if got := HolderOf(State{}, "c1", &eventsv1.CardDealt{HolderPlayerId: "r"}); got != "r" {
		t.Errorf("holder %q, want r", got)
	}
	if got := HolderOf(State{}, "c1", nil); got != "" {
		t.Errorf("no card_dealt: holder %q", got)
	}
}

// TestFaceDown: a hand's first two cards face down, a third face up.
func TestFaceDown(t *testing.T) {
	for pos, want := range map[int32]bool{1: true, 2: true, 3: false} {
		if got := FaceDown(&eventsv1.CardDealt{Position: pos}); got != want {
			t.Errorf("position %d: face down %v, want %v", pos, got, want)
		}
	}
}
