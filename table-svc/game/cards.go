package game

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
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

// EventOutcome is a coup's outcome from the bank's side, as events and
// views carry it (CF-RESULT, CF-STANDOFF; PB-BETS for punto banco).
func EventOutcome(o rules.Outcome) eventsv1.Outcome {
	switch o {
	case rules.OutcomeBankWins:
		return eventsv1.Outcome_OUTCOME_BANK_WINS
	case rules.OutcomeBankLoses:
		return eventsv1.Outcome_OUTCOME_BANK_LOSES
	case rules.OutcomeStandOff:
		return eventsv1.Outcome_OUTCOME_STAND_OFF
	}
	return eventsv1.Outcome_OUTCOME_UNSPECIFIED
}

// ParseCards parses card codes ("9H", "TD") in order; the first invalid
// code is the error.
func ParseCards(codes []string) ([]rules.Card, error) {
	var out []rules.Card
	for _, code := range codes {
		c, err := rules.ParseCard(code)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}
