package tablesvc

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

// TestBanqueBancoBothTables: with the house rule banco_both_tables, the
// punter in turn calls banco before any bet: the whole bank on both
// tables (BQ-BETS, BQ-CHEVAL), whatever max_bet, and the betting closes.
// The bank loses to both hands, so the banco wins the whole bank.
func TestBanqueBancoBothTables(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Right 9C KD = 9 and left 8H KS = 8 are naturals; banker 2C 3D = 5.
	order := []string{"9C", "8H", "2C", "KD", "KS", "3D"}
	for len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE,
		BanqueRules: &tablev1.BanqueRules{CertificationRealMoney: true, BancoBothTables: true, MaxBet: 500}, ShoeId: sh.GetShoe().GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	for _, s := range []struct {
		p    string
		side tablev1.BanqueSide
	}{{"alice", tablev1.BanqueSide_BANQUE_SIDE_RIGHT}, {"bob", tablev1.BanqueSide_BANQUE_SIDE_RIGHT}, {"carol", tablev1.BanqueSide_BANQUE_SIDE_LEFT}} {
		if _, err := h.tables.JoinTable(h.as(s.p), &tablev1.JoinTableRequest{RequestId: h.rid(), TableId: id, PlayerId: s.p, Side: s.side}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.tables.BidBank(h.as("alice"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 2000}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bob", "carol"} {
		if _, err := h.tables.DeclineBank(h.as(p), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	// carol's turn (the left side opens: the banker holds the right's first place).
	_, err = h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, "NOT_YOUR_TURN")
	if _, err := h.tables.CallBanco(h.as("carol"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	tb := h.get(id)
	cp := tb.GetLastCoup()
	if cp == nil || !cp.GetSettled() || !cp.GetBanco() || len(cp.GetBets()) != 1 || cp.GetBets()[0].GetAmount() != 2000 {
		t.Fatalf("the banco coup: state %s, coup %v", tb.GetState(), cp)
	}
	for acct, w := range map[string]int64{"player:alice": 10000 - 50 - 2000, "player:carol": 12000, "player:bob": 10000} {
		if b, _ := h.account(acct); b != w {
			t.Errorf("%s: %d, want %d", acct, b, w)
		}
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestCoreTurnsAfterRestart: at the games on a core, a restart of
// table-svc gives the time limit in progress its full length again, as
// at chemin de fer: nobody is timed out for the time the service was down.
func TestCoreTurnsAfterRestart(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	bq := h.banqueTable(2000) // carol's betting turn, 30 s
	h.fundHouse(100000)
	pb := h.pbTable(nil, 0)
	h.mustPBBet(pb, "alice", tablev1.BetSpot_BET_SPOT_BANK, 100) // the 15 s window
	h.clock.Advance(12 * time.Second)
	h.restartTable()
	h.expire()
	now := h.clock.Now()
	if tb := h.get(bq); tb.GetCoup().GetTurnPlayerId() != "carol" || !tb.GetTurnDeadline().AsTime().Equal(now.Add(30*time.Second)) {
		t.Errorf("banque after the restart: turn %q until %v, want carol until %v", tb.GetCoup().GetTurnPlayerId(), tb.GetTurnDeadline().AsTime(), now.Add(30*time.Second))
	}
	if tb := h.get(pb); tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING || !tb.GetTurnDeadline().AsTime().Equal(now.Add(15*time.Second)) {
		t.Errorf("punto banco after the restart: %s until %v, want the window until %v", tb.GetState(), tb.GetTurnDeadline().AsTime(), now.Add(15*time.Second))
	}
}

// everyViewer is each kind of viewer of a table: the banker, the hands'
// holders and another punter (players), a player at no seat (dave), and
// the staff: croupier, operator, auditor.
var everyViewer = []string{"alice", "bob", "carol", "dave", "croupier", "op", "auditor"}

// publishedAs checks the table's published card_dealt events as each
// viewer's WatchTable gives them (personalEvent): a face-down card comes
// back only to the holder of its hand.
func (h *harness) publishedAs(id string, holderOf func(ev *eventsv1.CardDealt) string) {
	h.t.Helper()
	tb, err := h.table.load(id)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, who := range everyViewer {
		v := viewer{caller: auth.Caller{Subject: who, Role: auth.RolePlayer}, known: true}
		switch who {
		case "croupier":
			v.caller.Role = auth.RoleCroupier
		case "op":
			v.caller.Role = auth.RoleOperator
		case "auditor":
			v.caller.Role = auth.RoleAuditor
		}
		for _, ev := range h.events(id) {
			cd := v.personalEvent(ev.TableEvent, tb).GetCardDealt()
			if cd == nil {
				continue
			}
			if mine := v.caller.Role == auth.RolePlayer && holderOf(cd) == who; cd.GetCard().GetFaceDown() == mine {
				h.t.Errorf("%s's stream: card %d of %s's %s hand %v", who, cd.GetPosition(), holderOf(cd), cd.GetHand(), cd.GetCard())
			}
		}
	}
}
