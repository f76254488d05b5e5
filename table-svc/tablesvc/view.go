package tablesvc

import (
	"context"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/table-svc/game"
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

// look is v as the games' face-down rule knows him (game.Viewer): a
// player by his id, an auditor, the staff (any other known caller), or
// nobody known. Every adapter's view goes through it.
func (v viewer) look() game.Viewer {
	switch {
	case !v.known:
		return game.Viewer{}
	case v.caller.Role == auth.RolePlayer:
		return game.Viewer{Role: game.Player, PlayerID: v.caller.Subject}
	case v.caller.Role == auth.RoleAuditor:
		return game.Viewer{Role: game.Auditor}
	}
	return game.Viewer{Role: game.Staff}
}
