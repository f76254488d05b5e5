package banque

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Who sees which card at baccarat banque: game.Core's Sees, Hidden,
// Shown, HolderOf and FaceDown (see game's view.go). Three hands are
// dealt (BQ-HANDS); a hand's first two cards are dealt face down, shown
// to the player of that hand (BQ-PLAY; the banker for his own) until the
// showdown, then to everyone; a third card is face up (as CF-DEAL,
// CF-PLAYER-DRAW, CF-BANKER-DRAW); a voided coup's face-down cards are
// shown to auditors.

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

// coupOf is the coup coupID of s (in play, or the last), nil when s has
// none of that id.
func coupOf(s State, coupID string) *Coup {
	var out *Coup
	for _, cp := range []*Coup{s.Coup, s.LastCoup} {
		if cp != nil && cp.ID == coupID {
			out = cp
		}
	}
	return out
}

// hand is the cards of hand h of cp and the player who holds it: the
// right and left hands' holders (BQ-PLAY), the table's banker for the
// banker's hand of the coup in play (the last coup's banker may have
// passed the bank since: "", his cards shown at the showdown anyway).
func hand(s State, cp *Coup, h eventsv1.Hand) (codes []string, holder string, ok bool) {
	switch h {
	case eventsv1.Hand_HAND_RIGHT:
		return cp.Right, cp.RightHolder, true
	case eventsv1.Hand_HAND_LEFT:
		return cp.Left, cp.LeftHolder, true
	case eventsv1.Hand_HAND_BANKER:
		if cp != s.Coup {
			return cp.Banker, "", true
		}
		return cp.Banker, s.Banker, true
	}
	return nil, "", false
}

// Sees reports whether v may see card i (from 0) of hand h (HAND_RIGHT,
// HAND_LEFT or HAND_BANKER) of coup coupID: a third card always; the
// first two to everyone after the showdown of a coup not voided, to an
// auditor a voided coup's, otherwise to the hand's holder only.
func Sees(s State, coupID string, v game.Viewer, h game.Hand, i int) bool {
	cp := coupOf(s, coupID)
	if cp == nil {
		return false
	}
	codes, holder, ok := hand(s, cp, h.Name)
	if !ok || i < 0 || i >= len(codes) {
		return false
	}
	switch {
	case i >= 2, cp.Decided && !cp.Voided:
		return true
	case cp.Voided && v.Audits():
		return true
	}
	return v.Is(holder)
}

// Hidden counts by rank, ace first, the cards of coup coupID that v does
// not see (Sees).
func Hidden(s State, coupID string, v game.Viewer) [13]int {
	cp := coupOf(s, coupID)
	if cp == nil {
		return [13]int{}
	}
	hands := []game.HandCards{
		{Hand: game.Hand{Name: eventsv1.Hand_HAND_RIGHT}, Codes: cp.Right},
		{Hand: game.Hand{Name: eventsv1.Hand_HAND_LEFT}, Codes: cp.Left},
		{Hand: game.Hand{Name: eventsv1.Hand_HAND_BANKER}, Codes: cp.Banker},
	}
	return game.Unseen(hands, func(h game.Hand, i int) bool { return Sees(s, coupID, v, h, i) })
}

// Shown is the face-down card of cd (a card_dealt of coup coupID) for
// the holder the event names (calling as a player), only him: its code
// and its hand's total up to it (HAND-TOTAL).
func Shown(s State, coupID string, v game.Viewer, cd *eventsv1.CardDealt) (string, int, bool) {
	cp := coupOf(s, coupID)
	if cp == nil || !v.Is(cd.GetHolderPlayerId()) {
		return "", 0, false
	}
	codes, _, _ := hand(s, cp, cd.GetHand())
	i := int(cd.GetPosition()) - 1
	if i < 0 || i >= len(codes) {
		return "", 0, false
	}
	return codes[i], total(codes[:i+1]), true
}

// HolderOf: banque's card_dealt names its hand's holder.
func HolderOf(_ State, _ string, cd *eventsv1.CardDealt) string { return cd.GetHolderPlayerId() }

// FaceDown: a hand's first two cards are dealt face down; a third card is
// face up (as CF-DEAL, CF-PLAYER-DRAW, CF-BANKER-DRAW).
func FaceDown(cd *eventsv1.CardDealt) bool { return cd.GetPosition() <= 2 }
