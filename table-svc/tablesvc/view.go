package tablesvc

import (
	"context"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/table-svc/game/chemindefer"
)

// Who sees what (documented for callers on chemmy.table.v1.Coup).
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
//   - Once the coup has a result (a natural shown, or the draws done)
//     every card is turned, for everyone.
//   - A voided coup's hole cards stay face down, except to auditors once
//     the coup is over.
//
// Events: the events published on NATS carry face-down cards as
// face_down, without rank, suit or code, no hand total and no draw
// reason (by_choice, rule, the chooser) until the result, at every game
// that deals face down (redactEvent); coup_resulted carries every hand in
// full. WatchTable fills in a holder's own cards from the table's state.

// viewer is who a view is made for.
type viewer struct {
	caller auth.Caller
	known  bool
}

// viewerOf is the caller of ctx (none: sees only what is public).
func viewerOf(ctx context.Context) viewer {
	c, ok := auth.FromContext(ctx)
	return viewer{caller: c, known: ok}
}

// holds reports whether v is the player holding hand of cp.
func (v viewer) holds(cp *chemindefer.Coup, hand eventsv1.Hand) bool {
	if !v.known || v.caller.Role != auth.RolePlayer {
		return false
	}
	switch hand {
	case eventsv1.Hand_HAND_PLAYER:
		return cp.HandHolder != "" && v.caller.Subject == cp.HandHolder
	case eventsv1.Hand_HAND_BANKER:
		return v.caller.Subject == cp.BankerID
	}
	return false
}

// sees reports whether v may see card i (0-based) of hand in cp.
func (v viewer) sees(cp *chemindefer.Coup, hand eventsv1.Hand, i int) bool {
	switch {
	case i >= 2, cp.Turned():
		return true
	case cp.Voided && v.known && v.caller.Role == auth.RoleAuditor:
		return true
	}
	return v.holds(cp, hand)
}

// handCards is hand's card codes in cp.
func handCards(cp *chemindefer.Coup, hand eventsv1.Hand) []string { return cp.HandCards(int32(hand)) }

// viewCards is hand's cards as v sees them, and the hand's total when v
// sees every card of it (else 0).
func (v viewer) viewCards(cp *chemindefer.Coup, hand eventsv1.Hand) ([]*shoev1.Card, int32) {
	codes := handCards(cp, hand)
	cards := cardsProto(codes)
	all := true
	for i := range cards {
		if !v.sees(cp, hand, i) {
			cards[i] = &shoev1.Card{FaceDown: true}
			all = false
		}
	}
	if !all {
		return cards, 0
	}
	total, _ := handTotal(codes)
	return cards, int32(total)
}

// hidden is, by rank (ace first), the cards of the coup in play that v
// may not see: what the odds a viewer is given must treat as still in
// the shoe.
func (v viewer) hidden(cp *chemindefer.Coup) [13]int {
	var n [13]int
	if cp == nil {
		return n
	}
	for _, hand := range []eventsv1.Hand{eventsv1.Hand_HAND_PLAYER, eventsv1.Hand_HAND_BANKER} {
		for i, c := range cardsProto(handCards(cp, hand)) {
			if r := int(c.GetRank()); r >= 1 && r <= 13 && !v.sees(cp, hand, i) {
				n[r-1]++
			}
		}
	}
	return n
}

// publicEvent is ev as published at table t: its game's core says what
// is hidden; chemin de fer's rules are below.
func (t *table) publicEvent(ev *eventsv1.TableEvent) *eventsv1.TableEvent {
	return t.core().publicEvent(ev)
}

// redactEvent is ev as published at a table whose game deals cards face
// down, one rule for every such game (chemin de fer, banque, the old
// game; punto banco deals everything face up and publishes ev as it is):
//
//   - card_dealt: a card faceDown says is face down goes out as
//     {face_down: true}, without rank, suit or code, and no card_dealt
//     carries the hand's total (the hand holds a face-down card until the
//     result, which coup_resulted carries);
//   - draw_decided: whether a choice or the tableau drew (by_choice), by
//     which cell (rule) and who chose (player_id, set only for a choice)
//     tell the total of a hand whose cards are face down: the table hears
//     only which hand drew or stood ("carte" or "non").
//
// Nothing else reveals a hidden card before the showdown. ev is not
// changed.
func redactEvent(ev *eventsv1.TableEvent, faceDown func(*eventsv1.CardDealt) bool) *eventsv1.TableEvent {
	switch ev.GetPayload().(type) {
	case *eventsv1.TableEvent_CardDealt:
		out := proto.Clone(ev).(*eventsv1.TableEvent)
		cd := out.GetCardDealt()
		if faceDown(cd) {
			cd.Card = &shoev1.Card{FaceDown: true}
		}
		cd.Total = 0
		return out
	case *eventsv1.TableEvent_DrawDecided:
		out := proto.Clone(ev).(*eventsv1.TableEvent)
		dd := out.GetDrawDecided()
		dd.ByChoice, dd.Rule, dd.PlayerId = false, "", ""
		return out
	}
	return ev
}

// cfFaceDown: the first two cards of each hand are dealt face down
// (CF-DEAL); a third card is face up (CF-PLAYER-DRAW, CF-BANKER-DRAW).
func cfFaceDown(cd *eventsv1.CardDealt) bool { return cd.GetPosition() <= 2 }

// personalEvent is the public ev as v may see it at table t: its game's
// core says (chemin de fer: a card_dealt of v's own face-down card gets
// its card and total back from the table's state, cfPersonalEvent).
func (v viewer) personalEvent(ev *eventsv1.TableEvent, t *table) *eventsv1.TableEvent {
	return t.core().personalEvent(t, v, ev)
}

// cfPersonalEvent is chemin de fer's personalEvent.
func (v viewer) cfPersonalEvent(ev *eventsv1.TableEvent, t *table) *eventsv1.TableEvent {
	cd := ev.GetCardDealt()
	if cd == nil || !cd.GetCard().GetFaceDown() {
		return ev
	}
	var cp *chemindefer.Coup
	switch {
	case cfOf(t).Coup != nil && cfOf(t).Coup.ID == ev.GetCoupId():
		cp = cfOf(t).Coup
	case cfOf(t).LastCoup != nil && cfOf(t).LastCoup.ID == ev.GetCoupId():
		cp = cfOf(t).LastCoup
	default:
		return ev
	}
	i := int(cd.GetPosition()) - 1
	codes := handCards(cp, eventsv1.Hand(cd.GetHand()))
	if i < 0 || i >= len(codes) || !v.sees(cp, eventsv1.Hand(cd.GetHand()), i) {
		return ev
	}
	out := proto.Clone(ev).(*eventsv1.TableEvent)
	out.GetCardDealt().Card = cardsProto(codes[i : i+1])[0]
	total, _ := handTotal(codes[:i+1])
	out.GetCardDealt().Total = int32(total)
	return out
}
