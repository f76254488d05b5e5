package banque

import (
	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

// eventOutcome is an outcome from the bank's side in events.
func eventOutcome(o rules.Outcome) eventsv1.Outcome { return game.EventOutcome(o) }

// eventHand is the events' name of a hand (BQ-HANDS).
func eventHand(h Hand) eventsv1.Hand {
	switch h {
	case HandRight:
		return eventsv1.Hand_HAND_RIGHT
	case HandLeft:
		return eventsv1.Hand_HAND_LEFT
	case HandBanker:
		return eventsv1.Hand_HAND_BANKER
	}
	return eventsv1.Hand_HAND_UNSPECIFIED
}
