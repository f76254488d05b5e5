package tablesvc

import (
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/table-svc/game"
)

// toProto is the view of a table for v: its game's core makes it; the
// shoe's player seeds are the shell's (seeds.go).
func toProto(t *table, v viewer) *tablev1.Table {
	out := t.core().view(t, v)
	out.ShoeEntropy = entropyProto(t)
	out.CurrencyCode = t.Currency
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
