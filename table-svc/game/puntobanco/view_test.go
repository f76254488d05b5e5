package puntobanco

import (
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// TestView: punto banco deals every card face up and nobody holds a hand
// (PB-BANK): every viewer sees every card the coup has, nothing is hidden
// or given back, no card_dealt is face down.
func TestView(t *testing.T) {
	s := State{Coup: &Coup{ID: "c2", Player: []string{"9H", "5D", "KS"}, Banker: []string{"3C", "4H"}},
		LastCoup: &Coup{ID: "c1", Player: []string{"2C", "2D"}, Banker: []string{"8S", "TH"}}}
	player := game.Hand{Name: eventsv1.Hand_HAND_PLAYER}
	banker := game.Hand{Name: eventsv1.Hand_HAND_BANKER}
	for _, v := range []game.Viewer{{}, {Role: game.Staff}, {Role: game.Auditor}, {Role: game.Player, PlayerID: "p"}} {
		for _, c := range []struct {
			coup string
			h    game.Hand
			i    int
			want bool
		}{
			{"c2", player, 0, true}, {"c2", player, 2, true}, {"c2", banker, 1, true}, {"c1", banker, 1, true},
			{"c2", banker, 2, false}, {"c2", player, 3, false}, {"c2", game.Hand{Name: eventsv1.Hand_HAND_RIGHT}, 0, false},
			{"c0", player, 0, false},
		} {
			if got := Sees(s, c.coup, v, c.h, c.i); got != c.want {
				t.Errorf("%+v, card %d of %v of %s: sees %v, want %v", v, c.i, c.h, c.coup, got, c.want)
			}
		}
		if got := Hidden(s, "c2", v); got != [13]int{} {
			t.Errorf("%+v: hidden %v, want none", v, got)
		}
		if _, _, ok := Shown(s, "c2", v, &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER, Position: 1}); ok {
			t.Errorf("%+v: a card shown back", v)
		}
	}
	if got := HolderOf(s, "c2", &eventsv1.CardDealt{Hand: eventsv1.Hand_HAND_PLAYER, Position: 1}); got != "" {
		t.Errorf("holder %q, want none", got)
	}
	if FaceDown(&eventsv1.CardDealt{Position: 1}) {
		t.Error("a card dealt face down")
	}
}
