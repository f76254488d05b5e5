package puntobanco

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/table-svc/game"
)

func timestamp(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }

// eventOutcome is the outcome from the bank's side in events.
func eventOutcome(o rules.Outcome) eventsv1.Outcome { return game.EventOutcome(o) }

// cardsProto are card codes as cards, face up: punto banco deals every
// card face up.
func cardsProto(codes []string) []*shoev1.Card { return game.Cards(codes) }
