package chemindefer

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// Who sees which card at chemin de fer: game.Core's Sees, Hidden, Shown,
// HolderOf and FaceDown (see game's view.go).
//
// Source: RULES.md CF-DEAL: the first two cards of each hand are dealt
// face down; CF-PLAYER-DRAW, CF-BANKER-DRAW: a third card is dealt face
// up; CF-NATURAL-PLAYER, CF-NATURAL-BANKER and the showdown turn them.
//
//   - A face-down card is shown only to the holder of its hand: the
//     punter holding the player's hand (CF-HAND-HOLDER) for the player's
//     cards, the banker for the banker's, and only when he calls as a
//     player (staff, croupiers included, see no hole card).
//   - Third cards are face up for everyone.
//   - Once the coup has a result (Coup.Turned) every card is turned, for
//     everyone.
//   - A voided coup's hole cards stay face down, except to auditors.

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

// holder is the player holding hand of cp: the punter of CF-HAND-HOLDER
// for the player's hand ("" until the betting is over), the banker for
// his own.
func holder(cp *Coup, hand eventsv1.Hand) string {
	switch hand {
	case eventsv1.Hand_HAND_PLAYER:
		return cp.HandHolder
	case eventsv1.Hand_HAND_BANKER:
		return cp.BankerID
	}
	return ""
}

// Sees reports whether v may see card i (from 0) of hand h (HAND_PLAYER
// or HAND_BANKER) of coup coupID: a third card always (CF-PLAYER-DRAW,
// CF-BANKER-DRAW); the first two (CF-DEAL) to everyone once the coup has
// a result, to an auditor once it is voided, otherwise to the hand's
// holder only.
func Sees(s State, coupID string, v game.Viewer, h game.Hand, i int) bool {
	cp := coupOf(s, coupID)
	if cp == nil || h.Name != eventsv1.Hand_HAND_PLAYER && h.Name != eventsv1.Hand_HAND_BANKER ||
		i < 0 || i >= len(cp.HandCards(int32(h.Name))) {
		return false
	}
	switch {
	case i >= 2, cp.Turned():
		return true
	case cp.Voided && v.Audits():
		return true
	}
	return v.Is(holder(cp, h.Name))
}

// hands are cp's hands and their cards.
func hands(cp *Coup) []game.HandCards {
	return []game.HandCards{
		{Hand: game.Hand{Name: eventsv1.Hand_HAND_PLAYER}, Codes: cp.Player},
		{Hand: game.Hand{Name: eventsv1.Hand_HAND_BANKER}, Codes: cp.Banker},
	}
}

// Hidden counts by rank, ace first, the cards of coup coupID that v does
// not see (Sees).
func Hidden(s State, coupID string, v game.Viewer) [13]int {
	cp := coupOf(s, coupID)
	if cp == nil {
		return [13]int{}
	}
	return game.Unseen(hands(cp), func(h game.Hand, i int) bool { return Sees(s, coupID, v, h, i) })
}

// Shown is the face-down card of cd (a card_dealt of coup coupID) as v
// sees it (Sees): its code and its hand's total up to it (HAND-TOTAL).
func Shown(s State, coupID string, v game.Viewer, cd *eventsv1.CardDealt) (string, int, bool) {
	cp := coupOf(s, coupID)
	i := int(cd.GetPosition()) - 1
	if cp == nil || !Sees(s, coupID, v, game.Hand{Name: cd.GetHand()}, i) {
		return "", 0, false
	}
	codes := cp.HandCards(int32(cd.GetHand()))
	total, _ := handTotal(codes[:i+1])
	return codes[i], total, true
}

// HolderOf is the player holding the hand of cd, a card_dealt of coup
// coupID: the banker the banker's hand, the punter of CF-HAND-HOLDER the
// player's (chemin de fer's card_dealt names neither).
func HolderOf(s State, coupID string, cd *eventsv1.CardDealt) string {
	cp := coupOf(s, coupID)
	if cp == nil || cd == nil {
		return ""
	}
	return holder(cp, cd.GetHand())
}

// FaceDown: the first two cards of each hand are dealt face down
// (CF-DEAL); a third card is face up (CF-PLAYER-DRAW, CF-BANKER-DRAW).
func FaceDown(cd *eventsv1.CardDealt) bool { return cd.GetPosition() <= 2 }
