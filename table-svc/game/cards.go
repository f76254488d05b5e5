package game

import (
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/rules"
)

// Cards are card codes ("9H", "TD") as face-up cards of chemmy.shoe.v1
// with rank, suit and code; an invalid code is left out.
func Cards(codes []string) []*shoev1.Card {
	out := make([]*shoev1.Card, 0, len(codes))
	for _, code := range codes {
		c, err := rules.ParseCard(code)
		if err != nil {
			continue
		}
		out = append(out, &shoev1.Card{Rank: shoev1.Rank(c.Rank), Suit: shoev1.Suit(c.Suit + 1), Code: code})
	}
	return out
}
