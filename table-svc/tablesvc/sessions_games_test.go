package tablesvc

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestSessionInactivityBoundsEveryGame: every game's rules take
// inactivity_limit_ms within 10 s..24 h (or 0), and the view shows it.
func TestSessionInactivityBoundsEveryGame(t *testing.T) {
	h := quietHarness(t)
	for _, ms := range []int32{9999, 86400001, -1} {
		for _, req := range []*tablev1.CreateTableRequest{
			{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{InactivityLimitMs: ms}},
			{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT, OldBaccaratRules: &tablev1.OldBaccaratRules{InactivityLimitMs: ms}},
			{Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE, BanqueRules: &tablev1.BanqueRules{InactivityLimitMs: ms}},
		} {
			req.RequestId = h.rid()
			_, err := h.tables.CreateTable(h.as("croupier"), req)
			wantReason(t, err, codes.InvalidArgument, reasonInvalidHouseRule)
		}
	}
	for variant, get := range map[tablev1.Variant]func(*tablev1.Table) int32{
		tablev1.Variant_VARIANT_PUNTO_BANCO:     func(tb *tablev1.Table) int32 { return tb.GetPuntoBancoRules().GetInactivityLimitMs() },
		tablev1.Variant_VARIANT_OLD_BACCARAT:    func(tb *tablev1.Table) int32 { return tb.GetOldBaccaratRules().GetInactivityLimitMs() },
		tablev1.Variant_VARIANT_BACCARAT_BANQUE: func(tb *tablev1.Table) int32 { return tb.GetBanqueRules().GetInactivityLimitMs() },
	} {
		req := &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: variant}
		switch variant {
		case tablev1.Variant_VARIANT_PUNTO_BANCO:
			req.PuntoBancoRules = &tablev1.PuntoBancoRules{InactivityLimitMs: 86400000}
		case tablev1.Variant_VARIANT_OLD_BACCARAT:
			req.OldBaccaratRules = &tablev1.OldBaccaratRules{InactivityLimitMs: 86400000}
		default:
			req.BanqueRules = &tablev1.BanqueRules{InactivityLimitMs: 86400000}
		}
		resp, err := h.tables.CreateTable(h.as("croupier"), req)
		if err != nil {
			t.Fatalf("%s: %v", variant, err)
		}
		if got := get(resp.GetTable()); got != 86400000 {
			t.Errorf("%s: inactivity_limit_ms %d, want 86400000", variant, got)
		}
		if got := get(h.get(resp.GetTable().GetTableId())); got != 86400000 {
			t.Errorf("%s: GetTable shows inactivity_limit_ms %d", variant, got)
		}
	}
}

// quietHarness is a harness whose table-svc runs no retry loop: only
// h.expire applies what is due, so a test sees each pass's result before
// the next (a player stood up at the next pass at the same time).
func quietHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.table.Stop()
	if err := h.table.Wait(); err != nil {
		t.Fatal(err)
	}
	h.startTableRetry(-1)
	return h
}

// wantSessions checks that every seat of tb shows a session id (a ULID).
func wantSessions(t *testing.T, tb *tablev1.Table) {
	t.Helper()
	for _, st := range tb.GetSeats() {
		if _, err := ulid.ParseStrict(st.GetSessionId()); err != nil {
			t.Errorf("seat %d (%s): session id %q: %v", st.GetNumber(), st.GetPlayerId(), st.GetSessionId(), err)
		}
	}
}

// TestSessionIdlePuntoBanco: at punto banco (the house banks, PB-BANK) an
// idle seated player without a bet is stood up in the betting; one with
// a bet in the coup only once it is settled (his bet paid as the coup
// says), the result shown.
func TestSessionIdlePuntoBanco(t *testing.T) {
	h := quietHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice", "bob")
	// Player 2C 3D 4S = 9, banker KD 5H 9C = 4: the player wins.
	id := h.pbTable(&tablev1.PuntoBancoRules{InactivityLimitMs: 10000}, 0, "2C", "KD", "3D", "5H", "4S", "9C")
	h.join(id, "alice")
	h.join(id, "bob")
	wantSessions(t, h.get(id))
	h.clock.Advance(5 * time.Second)
	h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 1000) // the window runs to 20 s
	h.clock.Advance(5 * time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); !equalStrings(got, []string{"alice"}) {
		t.Fatalf("at 10 s seated %v, want bob stood up", got)
	}
	h.clock.Advance(5 * time.Second)
	h.expire()
	if got := seatedIDs(h.get(id)); !equalStrings(got, []string{"alice"}) {
		t.Fatalf("alice, her bet in the coup, stood up at 15 s: %v", got)
	}
	tb := h.closeWindow(id)
	if cp := tb.GetLastCoup(); !cp.GetSettled() || cp.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
		t.Fatalf("the coup: %v", cp)
	}
	if got := seatedIDs(tb); len(got) != 0 || !equalStrings(h.stoodUp(id), []string{"bob", "alice"}) {
		t.Fatalf("after the coup seated %v, stood up %v", got, h.stoodUp(id))
	}
	h.wantBalances(map[string]int64{"player:alice": 4000, "player:bob": 5000})
	h.conserved(110000, "player:alice", "player:bob", "house:bank")
}

// TestSessionIdleBanque: at baccarat banque an idle punter without a bet
// is stood up in the betting (his turn passes on); the banker with a bet
// against his bank only once the coup is settled, passing the bank first
// (BQ-BANK: the bank and its winnings return to him, auctioned again).
func TestSessionIdleBanque(t *testing.T) {
	h := quietHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Right 2C 3D = 5, left 7H KS = 7, banker 4C 5H = 9 (a natural).
	id := h.banqueTableWith(&tablev1.BanqueRules{InactivityLimitMs: 10000, BetTimeLimitMs: 600000, AuctionTimeLimitMs: 600000},
		2000, "2C", "7H", "4C", "3D", "KS", "5H")
	wantSessions(t, h.get(id))
	h.clock.Advance(5 * time.Second)
	if err := h.banqueBet(id, "carol", tablev1.BanqueSide_BANQUE_SIDE_CHEVAL, 400); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(5 * time.Second)
	h.expire()
	// bob (in turn, idle since he declined the bank) stood up; the betting
	// closes, the coup is dealt and settled with alice still the banker.
	tb := h.get(id)
	if got := seatedIDs(tb); !equalStrings(got, []string{"alice", "carol"}) {
		t.Fatalf("seated %v", got)
	}
	if lc := tb.GetLastCoup(); !lc.GetSettled() || tb.GetBankerPlayerId() != "alice" || tb.GetBank() != 2400 {
		t.Fatalf("the coup went on without bob: banker %q bank %d, %v", tb.GetBankerPlayerId(), tb.GetBank(), lc)
	}
	// Between coups alice (idle since her bid) passes the bank and leaves.
	h.expire()
	tb = h.get(id)
	if got := seatedIDs(tb); !equalStrings(got, []string{"carol"}) || tb.GetBankerPlayerId() != "" {
		t.Fatalf("seated %v, banker %q", got, tb.GetBankerPlayerId())
	}
	var passed bool
	for _, ev := range h.events(id) {
		if bc := ev.GetBankChanged(); bc != nil && bc.GetPreviousBankerPlayerId() == "alice" {
			passed = true
		}
		if pl := ev.GetPlayerLeft(); pl != nil && pl.GetPlayerId() == "alice" && !passed {
			t.Error("alice left before her bank was passed")
		}
	}
	if got := h.stoodUp(id); !equalStrings(got, []string{"bob", "alice"}) {
		t.Errorf("stood up %v", got)
	}
	// alice paid the 2.5% fee on her bid of 2000 and won carol's 400.
	h.wantBalances(map[string]int64{"player:alice": 10350, "player:bob": 10000, "player:carol": 9600})
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestSessionIdleOldBaccarat: at the old baccarat an idle punter without
// a stake is stood up in the staking; the banker with stakes against his
// bank and the punters who staked only once the coup is settled, the
// banker leaving his seat and with it the bank (OLD-BACCARAT), returned
// with its winnings.
func TestSessionIdleOldBaccarat(t *testing.T) {
	h := quietHarness(t)
	h.fund(20000, "alice", "bob", "carol", "dave")
	// bob 2C 3D = 5, dave 7H KS = 7, the banker 4C 5D = 9 (a natural).
	id := h.oldTableWith(&tablev1.OldBaccaratRules{InactivityLimitMs: 10000, StakingWindowMs: 600000}, 10000,
		"2C", "7H", "4C", "KS", "3D", "5D")
	h.join(id, "dave")
	wantSessions(t, h.get(id))
	h.clock.Advance(5 * time.Second)
	for _, p := range []string{"bob", "dave"} {
		if err := h.stake(id, p, 1000); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Advance(5 * time.Second)
	h.expire()
	// carol stood up; the staking closes, the banker's move after the cut
	// is due (a coup in play): alice, idle since her bid, stays.
	tb := h.get(id)
	if got := seatedIDs(tb); !equalStrings(got, []string{"alice", "bob", "dave"}) || tb.GetState() != tablev1.TableState_TABLE_STATE_DEALING {
		t.Fatalf("seated %v, state %s", got, tb.GetState())
	}
	// The move's time runs out (nothing moved): the coup is dealt and
	// settled, then all are stood up, the bank ending with alice's seat.
	h.clock.Advance(tb.GetTurnDeadline().AsTime().Sub(h.clock.Now()))
	h.expire()
	tb = h.get(id)
	if lc := tb.GetLastCoup(); !lc.GetSettled() || lc.GetBankerTotal() != 9 {
		t.Fatalf("the coup: %v", lc)
	}
	if got := seatedIDs(tb); len(got) != 0 || tb.GetBankerPlayerId() != "" {
		t.Fatalf("seated %v, banker %q", got, tb.GetBankerPlayerId())
	}
	if got := h.stoodUp(id); !equalStrings(got, []string{"carol", "alice", "bob", "dave"}) {
		t.Errorf("stood up %v", got)
	}
	h.wantBalances(map[string]int64{"player:alice": 22000, "player:bob": 19000, "player:carol": 20000, "player:dave": 19000})
	h.conserved(80000, "player:alice", "player:bob", "player:carol", "player:dave")
}

// TestSessionIdleBidders: the highest bidder of a banque auction, and any
// bidder at the old baccarat, stays until the auction is over, however
// idle; the others are stood up meanwhile. Then the bidder is stood up
// too, the banque bank he won passed (BQ-BANK), every hold released.
func TestSessionIdleBidders(t *testing.T) {
	h := quietHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	bid := func(id string) {
		t.Helper()
		if _, err := h.tables.BidBank(h.as("alice"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 2000}); err != nil {
			t.Fatal(err)
		}
	}
	bq := h.banqueSeatedWith(&tablev1.BanqueRules{InactivityLimitMs: 10000, AuctionTimeLimitMs: 600000})
	bid(bq)
	old := h.oldAuction(t)
	bid(old)
	h.clock.Advance(10 * time.Second)
	h.expire()
	for _, id := range []string{bq, old} {
		if got := seatedIDs(h.get(id)); !equalStrings(got, []string{"alice"}) {
			t.Fatalf("table %s: seated %v, want the bidder alone", id, got)
		}
	}
	if tb := h.get(bq); tb.GetBankerPlayerId() != "alice" {
		t.Fatalf("banque: the auction went to %q", tb.GetBankerPlayerId())
	}
	h.expire()
	for _, id := range []string{bq, old} {
		if got := h.stoodUp(id); len(seatedIDs(h.get(id))) != 0 || got[len(got)-1] != "alice" {
			t.Errorf("table %s: stood up %v", id, got)
		}
	}
	// alice paid the banque fee (2.5% of 2000) and nothing else.
	h.wantBalances(map[string]int64{"player:alice": 9950, "player:bob": 10000, "player:carol": 10000, "player:dave": 10000})
}

// oldAuction opens an old baccarat table with inactivity_limit_ms 10 s
// and seats alice, bob, carol and dave: the bank's auction is open.
func (h *harness) oldAuction(t *testing.T) string {
	t.Helper()
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_OLD_BACCARAT,
		OldBaccaratRules: &tablev1.OldBaccaratRules{CertificationRealMoney: true, InactivityLimitMs: 10000, AuctionWindowMs: 600000, MinimumBank: 2000}, ShoeId: h.preparedShoe()})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob", "carol", "dave"} {
		h.join(id, p)
	}
	return id
}
