package tablesvc

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// toProto is the view of a table for v: its game's core makes it; the
// shoe's player seeds are the shell's (seeds.go).
func toProto(t *table, v viewer) *tablev1.Table {
	out := t.adapter().view(t, v)
	out.ShoeEntropy = entropyProto(t)
	out.CurrencyCode, out.CurrencyExponent = t.Currency, t.tableExponent()
	out.OperatorId = t.operator()
	showInactivity(t, out) // sessions.go
	for _, st := range out.Seats {
		if ss := t.Sessions[st.GetPlayerId()]; ss != nil {
			st.SessionId = ss.ID
		}
	}
	return out
}

// cardsProto turns card codes into cards.
func cardsProto(codes []string) []*shoev1.Card { return game.Cards(codes) }

// publicEvent is ev as published at table t: its game's core says what
// is hidden; chemin de fer's rules are below.
func (t *table) publicEvent(ev *eventsv1.TableEvent) *eventsv1.TableEvent {
	return t.adapter().publicEvent(ev)
}

// personalEvent is the public ev as v may see it at table t: its game's
// core says (a card_dealt of v's own face-down card gets its card and
// total back from the table's state: game.Personal and the core's Shown).
func (v viewer) personalEvent(ev *eventsv1.TableEvent, t *table) *eventsv1.TableEvent {
	return t.adapter().personalEvent(t, v, ev)
}
