package chemindefer

import (
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// The viewers of the view tests.
var (
	anon    = game.Viewer{}
	staff   = game.Viewer{Role: game.Staff}
	auditor = game.Viewer{Role: game.Auditor}
)

func player(id string) game.Viewer { return game.Viewer{Role: game.Player, PlayerID: id} }

var (
	playerHand = game.Hand{Name: eventsv1.Hand_HAND_PLAYER}
	bankerHand = game.Hand{Name: eventsv1.Hand_HAND_BANKER}
)

// viewCoup is a coup dealt by hand: "punt" holds the player's hand (9H
// 5D, then KS drawn face up), "bank" banks (3C 4H); no result yet.
func viewCoup() *Coup {
	return &Coup{ID: "c2", BankerID: "bank", HandHolder: "punt",
		Player: []string{"9H", "5D", "KS"}, Banker: []string{"3C", "4H"}}
}

// seen is, for each card of the player's hand then the banker's, whether
// v sees it in coup id of s.
func seen(s State, id string, v game.Viewer) [5]bool {
	var out [5]bool
	for i := range 3 {
		out[i] = Sees(s, id, v, playerHand, i)
	}
	for i := range 2 {
		out[3+i] = Sees(s, id, v, bankerHand, i)
	}
	return out
}

// TestSees: CF-DEAL, the first two cards of a hand go to its holder only
// (the punter of CF-HAND-HOLDER, the banker), calling as a player; a
// third card is face up (CF-PLAYER-DRAW); once the coup has a result
// everyone sees everything; a voided coup's hole cards go to auditors
// too, never to staff.
func TestSees(t *testing.T) {
	s := State{Coup: viewCoup()}
	all := [5]bool{true, true, true, true, true}
	third := [5]bool{false, false, true, false, false}
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [5]bool
	}{
		{"the punter holding the player's hand", player("punt"), [5]bool{true, true, true, false, false}},
		{"the banker", player("bank"), [5]bool{false, false, true, true, true}},
		{"another player", player("other"), third},
		{"a player without an id", player(""), third},
		{"staff", staff, third},
		{"an auditor", auditor, third},
		{"nobody known", anon, third},
	} {
		if got := seen(s, "c2", c.v); got != c.want {
			t.Errorf("in play, %s sees %v, want %v", c.name, got, c.want)
		}
	}

	// Before the betting is over nobody holds the player's hand.
	s.Coup.HandHolder = ""
	if got := seen(s, "c2", player("punt")); got != third {
		t.Errorf("no holder yet: punt sees %v, want %v", got, third)
	}

	// The result turns every card (CF-RESULT).
	s = State{LastCoup: viewCoup()}
	s.LastCoup.Outcome = rules.OutcomeBankWins
	for _, v := range []game.Viewer{anon, staff, auditor, player("other")} {
		if got := seen(s, "c2", v); got != all {
			t.Errorf("with a result, %+v sees %v, want all", v, got)
		}
	}

	// A voided coup: to auditors, and each holder his own.
	s = State{Coup: &Coup{ID: "c3"}, LastCoup: viewCoup()}
	s.LastCoup.Voided = true
	for _, c := range []struct {
		v    game.Viewer
		want [5]bool
	}{
		{auditor, all}, {staff, third}, {anon, third},
		{player("punt"), [5]bool{true, true, true, false, false}},
	} {
		if got := seen(s, "c2", c.v); got != c.want {
			t.Errorf("voided, %+v sees %v, want %v", c.v, got, c.want)
		}
	}

	// Cards, hands and coups the state does not hold are not seen.
	s = State{Coup: viewCoup()}
	s.Coup.Outcome = rules.OutcomeBankWins
	for _, c := range []struct {
		coup string
		h    game.Hand
		i    int
	}{{"c2", playerHand, 3}, {"c2", bankerHand, 2}, {"c2", playerHand, -1},
		{"c2", game.Hand{Name: eventsv1.Hand_HAND_RIGHT}, 0}, {"c1", playerHand, 0}} {
		if Sees(s, c.coup, anon, c.h, c.i) {
			t.Errorf("card %d of %v of coup %s is seen; the state has none", c.i, c.h, c.coup)
		}
	}
}

// TestHidden counts by rank what each viewer does not see: 9H 5D and
// 3C 4H are face down, KS face up.
func TestHidden(t *testing.T) {
	s := State{Coup: viewCoup()}
	for _, c := range []struct {
		name string
		v    game.Viewer
		want [13]int
	}{
		{"nobody known", anon, [13]int{2: 1, 3: 1, 4: 1, 8: 1}},  // 3, 4, 5, 9
		{"the punter", player("punt"), [13]int{2: 1, 3: 1}},      // the banker's 3, 4
		{"the banker", player("bank"), [13]int{4: 1, 8: 1}},      // the player's 5, 9
		{"an auditor", auditor, [13]int{2: 1, 3: 1, 4: 1, 8: 1}}, // not voided
	} {
		if got := Hidden(s, "c2", c.v); got != c.want {
			t.Errorf("%s: hidden %v, want %v", c.name, got, c.want)
		}
	}
	if got := Hidden(s, "c9", anon); got != [13]int{} {
		t.Errorf("a coup the state has not: hidden %v, want none", got)
	}
	s.Coup.Outcome = rules.OutcomeStandOff
	if got := Hidden(s, "c2", anon); got != [13]int{} {
		t.Errorf("with a result: hidden %v, want none", got)
	}
}

// TestShown: the published face-down card goes back to whoever Sees it,
// with his hand's total up to it (HAND-TOTAL: 9+5 = 4).
func TestShown(t *testing.T) {
	down := &shoev1.Card{FaceDown: true}
	second := &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER, Position: 2, Card: down}
	first := &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER, Position: 1, Card: down}
	s := State{Coup: viewCoup()}
	for _, c := range []struct {
		name  string
		v     game.Viewer
		cd    *eventsv1.CardDealt
		code  string
		total int
		ok    bool
	}{
		{"the punter his second card", player("punt"), second, "5D", 4, true},
		{"the banker the punter's card", player("bank"), second, "", 0, false},
		{"the banker his first card", player("bank"), first, "3C", 3, true},
		{"staff", staff, first, "", 0, false},
		{"a position the hand has not", player("punt"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER, Position: 4}, "", 0, false},
		{"position 0", player("punt"), &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER}, "", 0, false},
	} {
		code, total, ok := Shown(s, "c2", c.v, c.cd)
		if code != c.code || total != c.total || ok != c.ok {
			t.Errorf("%s: %q %d %v, want %q %d %v", c.name, code, total, ok, c.code, c.total, c.ok)
		}
	}
	if _, _, ok := Shown(s, "c1", player("punt"), second); ok {
		t.Error("a coup the state has not: shown")
	}
	s.Coup.Outcome = rules.OutcomeBankLoses
	if code, total, ok := Shown(s, "c2", anon, second); code != "5D" || total != 4 || !ok {
		t.Errorf("with a result, to anybody: %q %d %v, want 5D 4 true", code, total, ok)
	}
}

// TestHolderOf: the banker holds the banker's hand, the punter of
// CF-HAND-HOLDER the player's, in the coup in play or the last.
func TestHolderOf(t *testing.T) {
	s := State{Coup: &Coup{ID: "c3", BankerID: "next"}, LastCoup: viewCoup()}
	for _, c := range []struct {
		coup string
		cd   *eventsv1.CardDealt
		want string
	}{
		{"c2", &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER}, "punt"},
		{"c2", &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER}, "bank"},
		{"c3", &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER}, "next"},
		{"c3", &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER}, ""},
		{"c1", &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_BANKER}, ""},
		{"c2", nil, ""},
	} {
		if got := HolderOf(s, c.coup, c.cd); got != c.want {
			t.Errorf("coup %s, %v: holder %q, want %q", c.coup, c.cd, got, c.want)
		}
	}
}

// TestFaceDown: the first two cards of a hand are dealt face down
// (CF-DEAL), a third face up (CF-PLAYER-DRAW, CF-BANKER-DRAW).
func TestFaceDown(t *testing.T) {
	for pos, want := range map[int32]bool{1: true, 2: true, 3: false} {
		if got := FaceDown(&eventsv1.CardDealt{Position: pos}); got != want {
			t.Errorf("position %d: face down %v, want %v", pos, got, want)
		}
	}
}
