package tablesvc

import (
	"strings"
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
	"github.com/chemmy/chemmy/table-svc/tableevents"
)

// TestEventsInOutbox: every step of a coup is an event in the outbox,
// numbered without gaps, in one batch per save on the subject
// chemmy.table.<id>.v2.
func TestEventsInOutbox(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	h.mustBet(id, "carol", 700)
	if _, err := h.decide(id, "carol", true); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range h.events(id) {
		kinds = append(kinds, ev.kind)
		if !ev.GetCertification() {
			t.Errorf("%s on a certification table without certification", ev.kind)
		}
		if cd := ev.GetCardDealt(); cd != nil && (cd.GetTotal() != 0 || cd.GetPosition() <= 2 && !cd.GetCard().GetFaceDown()) {
			t.Errorf("published card_dealt shows a face-down card or a total: %v", cd)
		}
	}
	want := "table_created staff_action player_seated player_seated bank_offered player_seated bank_changed " +
		"bet_placed bet_placed shoe_seeded card_dealt card_dealt card_dealt card_dealt draw_decided card_dealt " +
		"coup_resulted coup_settled bank_changed bank_offered"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

// event is a published table event with its kind (the subject's last
// token).
type event struct {
	*eventsv1.TableEvent
	kind string
}

// events are table id's events in the outbox, checked to be numbered
// without gaps and published as batches on chemmy.table.<id>.v2, each
// with its first event's id, its events' count and kinds.
func (h *harness) events(id string) []event {
	h.t.Helper()
	msgs, err := outbox.Pending(h.table.db, 10000)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []event
	var seq uint64
	for _, m := range msgs {
		if strings.HasPrefix(m.Subject, "chemmy.player.") {
			continue // one player's (a reality check)
		}
		evs, err := tableevents.Decode("", m.Subject, m.Payload)
		if err != nil {
			h.t.Fatal(err)
		}
		if evs[0].GetTableId() != id {
			continue // another table's
		}
		if m.Subject != "chemmy.table."+id+".v2" || m.ID != evs[0].GetEventId() || m.Events != len(evs) || m.Kinds != tableevents.Kinds(evs) {
			h.t.Fatalf("batch %s id %s of %d events (%s), event id %s, %d events", m.Subject, m.ID, m.Events, m.Kinds, evs[0].GetEventId(), len(evs))
		}
		for _, ev := range evs {
			if ev.GetSequence() != seq+1 {
				h.t.Fatalf("event %d after %d", ev.GetSequence(), seq)
			}
			seq = ev.GetSequence()
			out = append(out, event{ev, tableevents.Kind(ev)})
		}
	}
	return out
}

// TestEventRedactionEveryGame: every game that deals face down publishes
// card_dealt and draw_decided one way (redactEvent): its face-down cards
// hidden, no total, and no by_choice, rule or chooser, which would tell a
// hidden hand's total before the showdown (chemmy.events.v1.DrawDecided);
// punto banco, all face up, publishes them as they are.
func TestEventRedactionEveryGame(t *testing.T) {
	card := func(pos int32) *eventsv1.TableEvent {
		return &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_CardDealt{CardDealt: &eventsv1.CardDealt{
			Hand: eventsv1.Hand_HAND_BANKER, Card: &shoev1.Card{Rank: shoev1.Rank_RANK_FIVE, Suit: shoev1.Suit_SUIT_HEARTS, Code: "5H"},
			Position: pos, Total: 5}}}
	}
	draw := &eventsv1.TableEvent{Payload: &eventsv1.TableEvent_DrawDecided{DrawDecided: &eventsv1.DrawDecided{
		Hand: eventsv1.Hand_HAND_PLAYER, Draw: true, ByChoice: true, PlayerId: "bob", Rule: "CF-PLAYER-DRAW"}}}
	for _, tc := range []struct {
		core adapter
		// faceDown: which of positions 1, 2, 3 go out face down.
		faceDown   [3]bool
		redactDraw bool
	}{
		{cfGame, [3]bool{true, true, false}, true},
		{banqueGame, [3]bool{true, true, false}, true},
		{oldGame, [3]bool{true, true, true}, true},
		{pbGame, [3]bool{false, false, false}, false},
	} {
		for i, down := range tc.faceDown {
			in := card(int32(i + 1))
			cd := tc.core.publicEvent(in).GetCardDealt()
			if cd.GetCard().GetFaceDown() != down || down && cd.GetCard().GetCode() != "" {
				t.Errorf("%s: card %d published as %v, face down %t", tc.core.name(), i+1, cd.GetCard(), down)
			}
			if hides := tc.redactDraw; hides && cd.GetTotal() != 0 || !hides && cd.GetTotal() != 5 {
				t.Errorf("%s: card %d published with total %d", tc.core.name(), i+1, cd.GetTotal())
			}
			if in.GetCardDealt().GetCard().GetCode() != "5H" || in.GetCardDealt().GetTotal() != 5 {
				t.Errorf("%s: publicEvent changed its input", tc.core.name())
			}
		}
		dd := tc.core.publicEvent(draw).GetDrawDecided()
		hidden := !dd.GetByChoice() && dd.GetRule() == "" && dd.GetPlayerId() == ""
		if hidden != tc.redactDraw || !dd.GetDraw() || dd.GetHand() != eventsv1.Hand_HAND_PLAYER {
			t.Errorf("%s: draw_decided published as %v", tc.core.name(), dd)
		}
		if !draw.GetDrawDecided().GetByChoice() || draw.GetDrawDecided().GetPlayerId() != "bob" {
			t.Fatalf("%s: publicEvent changed its input", tc.core.name())
		}
	}
}

// TestTableCreatedRecordsRules: table_created, the record of who opened a
// table, carries its house rules in force (defaults filled in) and as
// requested, and certification_real_money; a croupier's table with every
// default has no requested rules.
func TestTableCreatedRecordsRules(t *testing.T) {
	h := newHarness(t)
	pb := h.pbTable(&tablev1.PuntoBancoRules{MinBet: 200, PairBets: true}, 0)
	cf, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil {
		t.Fatal(err)
	}
	created := func(id string) *eventsv1.TableCreated {
		t.Helper()
		evs := h.events(id)
		if len(evs) == 0 || evs[0].GetTableCreated() == nil {
			t.Fatalf("table %s: no table_created first", id)
		}
		return evs[0].GetTableCreated()
	}
	ev := created(pb)
	inForce, asked := &tablev1.PuntoBancoRules{}, &tablev1.PuntoBancoRules{}
	if err := ev.GetHouseRules().UnmarshalTo(inForce); err != nil {
		t.Fatal(err)
	}
	if err := ev.GetRequestedRules().UnmarshalTo(asked); err != nil {
		t.Fatal(err)
	}
	if ev.GetVariant() != "VARIANT_PUNTO_BANCO" || !ev.GetCertificationRealMoney() || !ev.GetCertification() ||
		ev.GetCreatedBy() != "operator-1" || ev.GetCreatedByRole() != "operator" {
		t.Errorf("punto banco table_created: %v", ev)
	}
	if inForce.GetMinBet() != 200 || !inForce.GetPairBets() || inForce.GetDecks() != 8 || inForce.GetTiePays() != 8 || !inForce.GetCertificationRealMoney() {
		t.Errorf("rules in force: %v", inForce)
	}
	if asked.GetMinBet() != 200 || !asked.GetPairBets() || asked.GetDecks() != 0 || asked.GetTiePays() != 0 {
		t.Errorf("rules as requested: %v", asked)
	}
	ev = created(cf.GetTable().GetTableId())
	hr := &tablev1.HouseRules{}
	if err := ev.GetHouseRules().UnmarshalTo(hr); err != nil {
		t.Fatal(err)
	}
	if ev.GetVariant() != "VARIANT_CHEMIN_DE_FER" || ev.GetRequestedRules() != nil || ev.GetCertificationRealMoney() ||
		hr.GetDecks() != 6 || hr.GetCommissionBp() != 500 || ev.GetCreatedByRole() != "croupier" {
		t.Errorf("chemin de fer table_created: %v, rules %v", ev, hr)
	}
}
