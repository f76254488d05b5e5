package oldbaccarat

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Who sees which card at the old game: game.Core's Sees, Hidden, Shown,
// HolderOf and FaceDown (see game's view.go). Every card is dealt face
// down to its holder, third cards too (OLD-DEAL, OLD-DRAW): a hand's
// cards are shown to its holder (calling as a player) until the
// showdown, then to everyone; a voided coup's to auditors.

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
	for _, cp := range []*Coup{s.Coup, s.LastCoup} {
		if cp != nil && cp.ID == coupID {
			return cp
		}
	}
	return nil
}

// hand is the cards of hand h of cp and the player who holds it: the
// banker his own (HAND_BANKER), a punter his (HAND_PUNTER, h.Punter).
func hand(cp *Coup, h game.Hand) (codes []string, holder string, ok bool) {
	switch h.Name {
	case eventsv1.Hand_HAND_BANKER:
		return cp.Banker, cp.BankerID, true
	case eventsv1.Hand_HAND_PUNTER:
		for _, ph := range cp.Hands {
			if ph.PlayerID == h.Punter {
				return ph.Cards, ph.PlayerID, true
			}
		}
	}
	return nil, "", false
}

// Sees reports whether v may see card i (from 0) of hand h of coup
// coupID: every card of a hand alike, to everyone after the showdown of a
// coup not voided, to an auditor a voided coup's, otherwise to the hand's
// holder only.
func Sees(s State, coupID string, v game.Viewer, h game.Hand, i int) bool {
	cp := coupOf(s, coupID)
	if cp == nil {
		return false
	}
	codes, holder, ok := hand(cp, h)
	if !ok || i < 0 || i >= len(codes) {
		return false
	}
	switch {
	case cp.Decided && !cp.Voided:
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
	hands := []game.HandCards{{Hand: game.Hand{Name: eventsv1.Hand_HAND_BANKER}, Codes: cp.Banker}}
	for _, ph := range cp.Hands {
		hands = append(hands, game.HandCards{Hand: game.Hand{Name: eventsv1.Hand_HAND_PUNTER, Punter: ph.PlayerID}, Codes: ph.Cards})
	}
	return game.Unseen(hands, func(h game.Hand, i int) bool { return Sees(s, coupID, v, h, i) })
}

// Shown is the card of cd (a card_dealt of coup coupID) for the holder
// the event names (calling as a player), only him: its code and the
// OLD-VALUES points of his hand up to it.
func Shown(s State, coupID string, v game.Viewer, cd *eventsv1.CardDealt) (string, int, bool) {
	cp := coupOf(s, coupID)
	if cp == nil || !v.Is(cd.GetHolderPlayerId()) {
		return "", 0, false
	}
	codes := cp.Banker
	if cd.GetHand() == eventsv1.Hand_HAND_PUNTER {
		codes, _, _ = hand(cp, game.Hand{Name: eventsv1.Hand_HAND_PUNTER, Punter: cd.GetHolderPlayerId()})
	}
	i := int(cd.GetPosition()) - 1
	if i < 0 || i >= len(codes) {
		return "", 0, false
	}
	return codes[i], points(codes[:i+1]), true
}

// HolderOf: the old game's card_dealt names its hand's holder.
func HolderOf(_ State, _ string, cd *eventsv1.CardDealt) string { return cd.GetHolderPlayerId() }

// FaceDown: every card is dealt face down to its holder, third cards too
// (OLD-DEAL, OLD-DRAW), until the showdown.
func FaceDown(*eventsv1.CardDealt) bool { return true }
