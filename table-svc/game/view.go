package game

import (
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
)

// What each viewer may see: the part of the contract (Core's Sees,
// Hidden, Shown, HolderOf, FaceDown) that says which cards of a coup a
// viewer is shown. The rule is SHOE-FACE: a face-down card is shown only
// to the holder of its hand, calling as a player, until it is turned
// (each game says when: CF-DEAL, BQ-HANDS, OLD-DEAL); nobody else sees
// it, staff included, but an auditor once its coup is over (a voided
// coup's cards are never turned). Punto banco deals every card face up.

// Viewer is who looks at a table: a player (Role Player, PlayerID his
// id), the staff (croupiers, operators, services), an auditor, or
// somebody the table does not know (the zero Viewer, Anonymous). It is
// the caller reduced to what the face-down rule asks.
type Viewer struct {
	Role     Role
	PlayerID string
}

// Role is the kind of a Viewer.
type Role int8

// The viewers' roles.
const (
	// Anonymous: nobody known; sees what is public.
	Anonymous Role = iota
	// Player: a player, calling as himself (Viewer.PlayerID); sees the
	// face-down cards of the hands he holds.
	Player
	// Staff: a croupier, an operator or a service; sees what is public
	// (no face-down card, SHOE-FACE).
	Staff
	// Auditor: sees what is public, and the face-down cards of a voided
	// coup.
	Auditor
)

// Is reports whether v is the player holder ("" is nobody), calling as a
// player: the holder of a hand sees its face-down cards.
func (v Viewer) Is(holder string) bool {
	return v.Role == Player && holder != "" && v.PlayerID == holder
}

// Audits reports whether v is an auditor.
func (v Viewer) Audits() bool { return v.Role == Auditor }

// Hand names one hand of a coup as the events do: Name, its
// chemmy.events.v1.Hand (HAND_PLAYER, HAND_BANKER, HAND_RIGHT, ...), and,
// where a game deals a hand to each punter (the old game's HAND_PUNTER),
// Punter, the player who holds it ("" otherwise).
type Hand struct {
	Name   eventsv1.Hand
	Punter string
}

// HandCards is a hand of a coup and its cards, codes in deal order.
type HandCards struct {
	Hand  Hand
	Codes []string
}

// Unseen counts by rank, ace first, the cards of hands for which sees
// (the hand, the card's index from 0) is false: a viewer's Hidden. An
// invalid code is left out.
func Unseen(hands []HandCards, sees func(h Hand, i int) bool) [13]int {
	var n [13]int
	for _, h := range hands {
		for i, code := range h.Codes {
			if c, err := rules.ParseCard(code); err == nil && c.Rank >= 1 && c.Rank <= 13 && !sees(h.Hand, i) {
				n[c.Rank-1]++
			}
		}
	}
	return n
}

// Personal is ev, a table event as published (FaceDown cards without
// rank, suit or code), as v may see it at state s of core c: a
// card_dealt whose card is face down gets back the card and the hand's
// total that c's Shown gives v; any other event is ev. ev is not changed.
func Personal[S any, O Outcomes[S]](c Core[S, O], s S, v Viewer, ev *eventsv1.TableEvent) *eventsv1.TableEvent {
	cd := ev.GetCardDealt()
	if cd == nil || !cd.GetCard().GetFaceDown() {
		return ev
	}
	code, total, ok := c.Shown(s, ev.GetCoupId(), v, cd)
	if !ok {
		return ev
	}
	card := Cards([]string{code})
	if len(card) == 0 {
		return ev
	}
	out := proto.Clone(ev).(*eventsv1.TableEvent)
	out.GetCardDealt().Card = card[0]
	out.GetCardDealt().Total = int32(total)
	return out
}
