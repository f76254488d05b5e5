package puntobanco

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Who sees which card at punto banco: game.Core's Sees, Hidden, Shown,
// HolderOf and FaceDown (see game's view.go). Punto banco deals every
// card face up and its hands are nobody's (the house banks, PB-BANK):
// every viewer sees every card.

func (core) Sees(s State, coupID string, v game.Viewer, h game.Hand, i int) bool {
	return Sees(s, coupID, v, h, i)
}
func (core) Hidden(s State, coupID string, v game.Viewer) [13]int { return Hidden(s, coupID, v) }
func (core) Shown(s State, coupID string, v game.Viewer, cd *eventsv1.CardDealt) (string, int, bool) {
	return Shown(s, coupID, v, cd)
}
func (core) HolderOf(s State, coupID string, cd *eventsv1.CardDealt) string {
	return HolderOf(s, coupID, cd)
}
func (core) FaceDown(cd *eventsv1.CardDealt) bool { return FaceDown(cd) }

// Sees reports whether v may see card i (from 0) of hand h (HAND_PLAYER
// or HAND_BANKER) of coup coupID: every card the coup has, face up.
func Sees(s State, coupID string, _ game.Viewer, h game.Hand, i int) bool {
	for _, cp := range []*Coup{s.Coup, s.LastCoup} {
		if cp == nil || cp.ID != coupID {
			continue
		}
		codes := map[eventsv1.Hand][]string{eventsv1.Hand_HAND_PLAYER: cp.Player, eventsv1.Hand_HAND_BANKER: cp.Banker}[h.Name]
		return i >= 0 && i < len(codes)
	}
	return false
}

// Hidden: punto banco hides no card.
func Hidden(State, string, game.Viewer) [13]int { return [13]int{} }

// Shown: no card is published face down, none is to give back.
func Shown(State, string, game.Viewer, *eventsv1.CardDealt) (string, int, bool) { return "", 0, false }

// HolderOf: punto banco's hands are the house's: nobody holds them.
func HolderOf(State, string, *eventsv1.CardDealt) string { return "" }

// FaceDown: every card is dealt face up.
func FaceDown(*eventsv1.CardDealt) bool { return false }
