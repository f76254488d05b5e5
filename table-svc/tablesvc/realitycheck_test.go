package tablesvc

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/outbox"
)

// realityChecks are the reality checks in the harness's outbox, with the
// subject each is published on.
func (h *harness) realityChecks() (out []*eventsv1.TableEvent, subjects []string) {
	h.t.Helper()
	msgs, err := outbox.Pending(h.table.db, 10000)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, m := range msgs {
		if !strings.HasPrefix(m.Subject, "chemmy.player.") {
			continue // the tables' batches
		}
		ev := new(eventsv1.TableEvent)
		if err := proto.Unmarshal(m.Payload, ev); err != nil {
			h.t.Fatal(err)
		}
		if ev.GetRealityCheck() != nil {
			out, subjects = append(out, ev), append(subjects, m.Subject)
		} else if strings.HasPrefix(m.Subject, "chemmy.player.") && ev.GetRealityCheckAnswered() == nil {
			h.t.Fatalf("%s carries %v", m.Subject, ev)
		}
	}
	return out, subjects
}

// bankerNaturals are cards for three coups of chemin de fer the banker
// wins with a natural 9 (the player's hand 5).
var bankerNaturals = []string{"2C", "9H", "3D", "TC", "2D", "9S", "3H", "TD", "2H", "9C", "3C", "TH"}

// TestRealityCheckAfterTheInterval: alice (reality checks every 10
// minutes) banks against bob (none). Her first coup gives no check; the
// first coup she plays once 10 minutes have passed does, on her own
// subject, outside the table's sequence, with her session's time, coups
// and net (the sum of her round nets); the next coup, no new interval
// gone, none; bob gets none.
func TestRealityCheckAfterTheInterval(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	h.setLimits("alice", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(10 * time.Minute)})
	id := h.tableWith(nil, 0, bankerNaturals, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 500)
	if rcs, _ := h.realityChecks(); len(rcs) != 0 {
		t.Fatalf("a check before the interval: %v", rcs)
	}
	h.clock.Advance(11 * time.Minute)
	h.mustBet(id, "bob", 500)
	rcs, subjects := h.realityChecks()
	if len(rcs) != 1 {
		t.Fatalf("%d checks after 11 minutes, want 1: %v", len(rcs), rcs)
	}
	var net int64
	for _, r := range h.mustListRounds("alice", &tablev1.ListRoundsRequest{PlayerId: "alice"}) {
		for _, p := range r.GetPlayers() {
			if p.GetPlayerId() == "alice" {
				net += p.GetNet()
			}
		}
	}
	rc, ev := rcs[0].GetRealityCheck(), rcs[0]
	seat := h.getAs(id, "alice").GetSeats()[0]
	if seat.GetPlayerId() != "alice" {
		seat = h.getAs(id, "alice").GetSeats()[1]
	}
	if subjects[0] != "chemmy.player.alice.reality_check" || ev.GetSequence() != 0 || ev.GetTableId() != id ||
		rc.GetPlayerId() != "alice" || rc.GetSessionId() != seat.GetSessionId() || rc.GetSessionElapsedMs() != (11*time.Minute).Milliseconds() ||
		rc.GetCoupsPlayed() != 2 || rc.GetSessionNet() != net || net <= 0 || rc.GetIntervalMs() != (10*time.Minute).Milliseconds() || rc.GetCheckNumber() != 1 {
		t.Fatalf("reality check on %s: %v (%v); want alice's first, 11 min, 2 coups, net %d", subjects[0], ev, rc, net)
	}
	h.events(id) // the table's own sequence stays gapless
	h.clock.Advance(time.Minute)
	h.mustBet(id, "bob", 500)
	if rcs, _ := h.realityChecks(); len(rcs) != 1 {
		t.Fatalf("%d checks 12 minutes in, want still 1", len(rcs))
	}
}

// TestRealityCheckShorterIntervalAtOnce: an interval shortened during the
// session applies from the first coup once table-svc read it again (at
// most realityIntervalTTL later).
func TestRealityCheckShorterIntervalAtOnce(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	h.setLimits("alice", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(time.Hour)})
	id := h.tableWith(nil, 0, bankerNaturals, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.clock.Advance(6 * time.Minute)
	h.mustBet(id, "bob", 500)
	if rcs, _ := h.realityChecks(); len(rcs) != 0 {
		t.Fatalf("a check 6 minutes into an hour: %v", rcs)
	}
	h.setLimits("alice", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(5 * time.Minute)})
	h.clock.Advance(realityIntervalTTL)
	h.mustBet(id, "bob", 500)
	if rcs, _ := h.realityChecks(); len(rcs) != 1 || rcs[0].GetRealityCheck().GetIntervalMs() != (5*time.Minute).Milliseconds() {
		t.Fatalf("after shortening to 5 minutes: %v; want one check", rcs)
	}
}

// TestWatchTableRealityCheckOnlyToItsPlayer: alice watching gets her
// reality check; bob watching the same table does not (he gets the
// table's events).
func TestWatchTableRealityCheckOnlyToItsPlayer(t *testing.T) {
	r := newWatchRig(t)
	h := r.h
	h.fund(10000, "alice", "bob")
	h.setLimits("alice", &walletv1.PlayerLimits{RealityCheckInterval: durationpb.New(10 * time.Minute)})
	id := h.tableWith(nil, 0, bankerNaturals, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	r.relay(t)
	alice, cancelA := r.watchFrom(t, id, h.as("alice"))
	defer cancelA()
	bob, cancelB := r.watchFrom(t, id, h.as("bob"))
	defer cancelB()
	h.clock.Advance(11 * time.Minute)
	h.mustBet(id, "bob", 500)
	// A marker after the check: bob stops reading at it.
	h.join(id, "carol")
	r.relay(t)
	read := func(ws interface {
		Recv() (*tablev1.WatchTableResponse, error)
	}) (checks int) {
		t.Helper()
		for {
			m, err := ws.Recv()
			if err != nil {
				t.Fatal(err)
			}
			ev := m.GetEvent()
			if ev.GetRealityCheck() != nil {
				checks++
			}
			if ev.GetPlayerSeated().GetPlayerId() == "carol" {
				return checks
			}
		}
	}
	if n := read(alice); n != 1 {
		t.Fatalf("alice got %d reality checks, want 1", n)
	}
	if n := read(bob); n != 0 {
		t.Fatalf("bob got %d of alice's reality checks", n)
	}
}
