package tablesvc

import (
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// seatedIDs are the players seated at tb.
func seatedIDs(tb *tablev1.Table) []string {
	var out []string
	for _, st := range tb.GetSeats() {
		out = append(out, st.GetPlayerId())
	}
	return out
}

// stoodUp are the players table id stood up for inactivity, in order,
// each checked to follow his player_left.
func (h *harness) stoodUp(id string) []string {
	h.t.Helper()
	var out []string
	evs := h.events(id)
	for i, ev := range evs {
		if sa := ev.GetStaffAction(); sa != nil && sa.GetAction() == "stood_up_inactive" {
			if sa.GetActorRole() != "service" || !strings.Contains(sa.GetDetail(), "session ") {
				h.t.Errorf("stood_up_inactive: %v", sa)
			}
			p := strings.TrimPrefix(strings.SplitN(sa.GetDetail(), ",", 2)[0], "player ")
			// The last player_left before it is his (what his leaving
			// led to may come between: the betting closed, a bank ended).
			var left string
			for j := i - 1; j >= 0 && left == ""; j-- {
				left = evs[j].GetPlayerLeft().GetPlayerId()
			}
			if left != p {
				h.t.Errorf("stood_up_inactive of %s does not follow his player_left (the last is %q's)", p, left)
			}
			out = append(out, p)
		}
	}
	return out
}

// TestSessionStoodUpWhenIdle: each seating opens a session (a ULID on
// the seat and on player_seated, new at each seating); a player alone at
// a table with inactivity_limit_ms is stood up once it runs out, counted
// from his last action and, across a restart, from the service's start.
func TestSessionStoodUpWhenIdle(t *testing.T) {
	h := newHarness(t)
	resp, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(),
		HouseRules: &tablev1.HouseRules{InactivityLimitMs: 60000}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	if got := resp.GetTable().GetHouseRules().GetInactivityLimitMs(); got != 60000 {
		t.Fatalf("inactivity_limit_ms %d", got)
	}
	h.join(id, "alice")
	first := h.get(id).GetSeats()[0].GetSessionId()
	if _, err := ulid.ParseStrict(first); err != nil {
		t.Fatalf("session id %q: %v", first, err)
	}
	var seated string
	for _, ev := range h.events(id) {
		if ps := ev.GetPlayerSeated(); ps != nil {
			seated = ps.GetSessionId()
		}
	}
	if seated != first {
		t.Errorf("player_seated session %q, seat's %q", seated, first)
	}

	h.clock.Advance(59 * time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); len(got) != 1 {
		t.Fatalf("stood up before the limit: %v", got)
	}
	h.clock.Advance(time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); len(got) != 0 || !equalStrings(h.stoodUp(id), []string{"alice"}) {
		t.Fatalf("after 60 s idle: seated %v, stood up %v", got, h.stoodUp(id))
	}

	// A new seating is a new session; the limit survives a restart but
	// counts from the service's start at the earliest.
	h.join(id, "alice")
	second := h.get(id).GetSeats()[0].GetSessionId()
	if second == "" || second == first {
		t.Errorf("second session %q, first %q", second, first)
	}
	h.clock.Advance(50 * time.Second)
	h.restartTable()
	h.clock.Advance(50 * time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); len(got) != 1 {
		t.Fatalf("stood up for the time the service was down: %v", got)
	}
	h.clock.Advance(10 * time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); len(got) != 0 {
		t.Fatalf("not stood up 60 s after the restart: %v", got)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// TestSessionIdleNeverCutsACoup: an idle punter without a bet is stood
// up during the betting; a punter with a bet and a banker with a bet
// against his bank only after the settlement, the banker passing his bank
// (CF-PASS); a player who acted later is stood up later. Money is
// conserved.
func TestSessionIdleNeverCutsACoup(t *testing.T) {
	h := quietHarness(t) // alice is due at the pass after carol's
	h.fund(10000, "alice", "bob", "carol")
	// Player KD 2S = 2, banker 4C 4D = 8: the banker wins.
	id := h.tableWith(&tablev1.HouseRules{InactivityLimitMs: 10000, BetTimeLimitMs: 600000, BankOfferTimeLimitMs: 600000},
		0, []string{"KD", "4C", "2S", "4D"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.clock.Advance(5 * time.Second)
	h.mustBet(id, "bob", 500)
	h.clock.Advance(5 * time.Second)
	h.expire()
	// carol (idle 10 s, no bet) stood up; the betting closes, the coup is
	// dealt and settled; alice and bob stay through it.
	tb := h.get(id)
	if got := seatedIDs(tb); !equalStrings(got, []string{"alice", "bob"}) {
		t.Fatalf("seated %v", got)
	}
	if lc := tb.GetLastCoup(); lc == nil || !lc.GetSettled() || lc.GetBankerNet() <= 0 {
		t.Fatalf("the coup went on without carol and the banker won: %v", lc)
	}
	// Between coups alice (idle since she took the bank) is stood up: her
	// bank passed and returned; bob acted 5 s later.
	h.expire()
	if got := seatedIDs(h.get(id)); !equalStrings(got, []string{"bob"}) {
		t.Fatalf("seated %v", got)
	}
	h.clock.Advance(5 * time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); len(got) != 0 {
		t.Fatalf("seated %v", got)
	}
	if got := h.stoodUp(id); !equalStrings(got, []string{"carol", "alice", "bob"}) {
		t.Errorf("stood up %v", got)
	}
	// Banker 8 beats 2: alice wins bob's 500 less 5% commission.
	h.wantBalances(map[string]int64{"player:alice": 10475, "player:bob": 9500, "player:carol": 10000, "house:commission": 25})
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}
