package tablesvc

import (
	"fmt"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// setPayload puts one of the events package's payload messages into ev.
func setPayload(ev *eventsv1.TableEvent, p any) {
	switch p := p.(type) {
	case *eventsv1.TableCreated:
		ev.Payload = &eventsv1.TableEvent_TableCreated{TableCreated: p}
	case *eventsv1.PlayerSeated:
		ev.Payload = &eventsv1.TableEvent_PlayerSeated{PlayerSeated: p}
	case *eventsv1.BankOffered:
		ev.Payload = &eventsv1.TableEvent_BankOffered{BankOffered: p}
	case *eventsv1.BankChanged:
		ev.Payload = &eventsv1.TableEvent_BankChanged{BankChanged: p}
	case *eventsv1.BetPlaced:
		ev.Payload = &eventsv1.TableEvent_BetPlaced{BetPlaced: p}
	case *eventsv1.BetDeclined:
		ev.Payload = &eventsv1.TableEvent_BetDeclined{BetDeclined: p}
	case *eventsv1.BancoCalled:
		ev.Payload = &eventsv1.TableEvent_BancoCalled{BancoCalled: p}
	case *eventsv1.CardDealt:
		ev.Payload = &eventsv1.TableEvent_CardDealt{CardDealt: p}
	case *eventsv1.NaturalShown:
		ev.Payload = &eventsv1.TableEvent_NaturalShown{NaturalShown: p}
	case *eventsv1.DrawDecided:
		ev.Payload = &eventsv1.TableEvent_DrawDecided{DrawDecided: p}
	case *eventsv1.CoupResulted:
		ev.Payload = &eventsv1.TableEvent_CoupResulted{CoupResulted: p}
	case *eventsv1.CoupSettled:
		ev.Payload = &eventsv1.TableEvent_CoupSettled{CoupSettled: p}
	case *eventsv1.BettingReopened:
		ev.Payload = &eventsv1.TableEvent_BettingReopened{BettingReopened: p}
	default:
		panic(fmt.Sprintf("tablesvc: unknown event payload %T", p))
	}
}

// subject is the NATS subject of an event:
// "chemmy.table.<table_id>.<payload field name>".
func subject(ev *eventsv1.TableEvent) string {
	m := ev.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("payload"))
	kind := "unknown"
	if fd != nil {
		kind = string(fd.Name())
	}
	return "chemmy.table." + ev.GetTableId() + "." + kind
}
