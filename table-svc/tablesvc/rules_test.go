package tablesvc

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// TestCFBankLimit: above the house limit the excess of the bank is set
// aside, not at stake (CF-BANK-LIMIT), and still the banker's.
func TestCFBankLimit(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	// Coup 1: banker natural 9 wins 1000. Coup 2 is a player natural.
	cards := []string{"2C", "9H", "3D", "TC", "4C", "3H", "5D", "5S"}
	id := h.tableWith(&tablev1.HouseRules{HouseLimit: 1500}, 0, cards, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	tbl := h.mustBet(id, "bob", 1000)
	if tbl.GetBank() != 1950 || tbl.GetCoup().GetStake() != 1500 || tbl.GetCoup().GetBank() != 1500 || tbl.GetBankSetAside() != 450 {
		t.Fatalf("bank %d stake %d set aside %d; want 1950, 1500, 450", tbl.GetBank(), tbl.GetCoup().GetStake(), tbl.GetBankSetAside())
	}
	_, err := h.bet(id, "bob", 1501)
	wantReason(t, err, codes.FailedPrecondition, reasonBetExceedsBank)
	resp, err := h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	// Bob's banco is 1500 and wins: alice keeps the 450 set aside.
	last := resp.GetTable().GetLastCoup()
	if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || last.GetBets()[0].GetAmount() != 1500 {
		t.Fatalf("coup %v", last)
	}
	if b, held := h.account("player:alice"); b != 10950-1500 || held != 0 {
		t.Errorf("alice %d held %d, want %d held 0", b, held, 10950-1500)
	}
	h.conserved(20000, "player:alice", "player:bob")
}

// TestCFErrorVoidCoup: the croupier voids a coup before its settlement
// with a reason; every bet is returned, the bank stays (CF-ERROR).
func TestCFErrorVoidCoup(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	tbl := h.mustBet(id, "carol", 700)
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("want a decision, got %v", tbl.GetState())
	}
	coupID := tbl.GetCoup().GetCoupId()
	_, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, CoupId: coupID})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	_, err = h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "x"})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	_, err = h.tables.VoidCoup(h.as("bob"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "x", CoupId: coupID})
	wantReason(t, err, codes.PermissionDenied, reasonRoleNotAllowed)
	// A void that names another coup (e.g. one raced against the closing
	// bet of the coup before) voids nothing.
	_, err = h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "x", CoupId: "01ANOTHERCOUP"})
	wantReason(t, err, codes.FailedPrecondition, reasonCoupNotInPlay)
	resp, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "card exposed", CoupId: coupID})
	if err != nil {
		t.Fatal(err)
	}
	tbl = resp.GetTable()
	if !tbl.GetLastCoup().GetVoided() || tbl.GetLastCoup().GetVoidReason() != "card exposed" || tbl.GetLastCoup().GetSettled() {
		t.Fatalf("last coup %v", tbl.GetLastCoup())
	}
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tbl.GetBankerPlayerId() != "alice" || tbl.GetBank() != 1000 || tbl.GetCoupsPlayed() != 0 {
		t.Fatalf("after the void: %v", tbl)
	}
	for _, p := range []string{"bob", "carol"} {
		if b, held := h.account("player:" + p); b != 10000 || held != 0 {
			t.Errorf("%s %d held %d after the void", p, b, held)
		}
	}
	_, err = h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: "nope", Reason: "x", CoupId: coupID})
	wantReason(t, err, codes.NotFound, reasonTableNotFound)
	// The same void again, after the next coup's betting opened: refused.
	_, err = h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, Reason: "card exposed", CoupId: coupID})
	wantReason(t, err, codes.FailedPrecondition, reasonCoupNotInPlay)
	// The audit trail names the actor.
	var staff []string
	for _, ev := range h.events(id) {
		if a := ev.GetStaffAction(); a != nil {
			staff = append(staff, a.GetAction()+" by "+a.GetActorId()+" ("+a.GetActorRole()+"): "+a.GetReason())
		}
		if v := ev.GetCoupVoided(); v != nil && (v.GetBy() != "croupier-1" || v.GetByRole() != "croupier" || ev.GetCoupId() != coupID) {
			t.Errorf("coup_voided %v of coup %s", v, ev.GetCoupId())
		}
	}
	if got := strings.Join(staff, "; "); got != "certification_shoe by operator-1 (operator): ; void_coup by croupier-1 (croupier): card exposed" {
		t.Errorf("staff actions: %s", got)
	}
}

// TestLeaveTable: a player leaves between coups; a punter with a bet at
// stake may not; a banker leaving passes the bank (CF-PASS).
func TestLeaveTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol", "dave")
	h.acceptBank(id, "alice", 1000)
	leave := func(p string) (*tablev1.Table, error) {
		resp, err := h.tables.LeaveTable(h.as(p), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p})
		return resp.GetTable(), err
	}
	h.mustBet(id, "bob", 300)
	// Carol leaves before her turn: the turn goes to dave.
	tbl, err := leave("carol")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.GetCoup().GetTurnPlayerId() != "dave" || len(tbl.GetSeats()) != 3 {
		t.Fatalf("after carol left: %v", tbl)
	}
	_, err = leave("bob")
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	_, err = leave("carol")
	wantReason(t, err, codes.FailedPrecondition, reasonNotSeated)
	// Dave passes: bob's bet is played (a decision on 5), then bob may leave.
	if _, err := h.tables.DeclineBet(h.as("dave"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "dave"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.decide(id, "bob", false); err != nil {
		t.Fatal(err)
	}
	if tbl, err = leave("bob"); err != nil {
		t.Fatal(err)
	}
	// Alice, the banker, leaves: her bank is released and offered to dave;
	// with one player left the table waits for players.
	if tbl, err = leave("alice"); err != nil {
		t.Fatal(err)
	}
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_WAITING_FOR_PLAYERS || tbl.GetBankerPlayerId() != "" {
		t.Fatalf("after the banker left: %v", tbl)
	}
	if _, held := h.account("player:alice"); held != 0 {
		t.Errorf("alice's bank still held: %d", held)
	}
	h.conserved(40000, "player:alice", "player:bob", "player:carol", "player:dave")
}

// TestTurnTimeLimits: when a turn's time runs out the table acts as the
// house rules say (RULES.md defaults): the punter passes, the player on 5
// draws, the bank goes on to the next in turn. No sleeping: a fake clock.
func TestTurnTimeLimits(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	hr := &tablev1.HouseRules{BetTimeLimitMs: 5000, DecisionTimeLimitMs: 10000, BankOfferTimeLimitMs: 20000}
	id := h.tableWith(hr, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")

	tbl := h.get(id)
	if tbl.GetOfferedPlayerId() != "alice" || !tbl.GetTurnDeadline().AsTime().Equal(h.clock.Now().Add(20*time.Second)) {
		t.Fatalf("offer %q deadline %v", tbl.GetOfferedPlayerId(), tbl.GetTurnDeadline().AsTime())
	}
	h.clock.Advance(19 * time.Second)
	h.expire()
	if h.get(id).GetOfferedPlayerId() != "alice" {
		t.Fatal("the offer moved on before its time ran out")
	}
	h.clock.Advance(time.Second)
	h.expire()
	if got := h.get(id).GetOfferedPlayerId(); got != "bob" {
		t.Fatalf("after alice's time ran out the bank is offered to %q, want bob", got)
	}
	h.acceptBank(id, "bob", 1000)
	// Carol's betting turn runs out: she passes; alice bets.
	h.clock.Advance(5 * time.Second)
	h.expire()
	tbl = h.get(id)
	if tbl.GetCoup().GetTurnPlayerId() != "alice" {
		t.Fatalf("after carol's time: turn %q", tbl.GetCoup().GetTurnPlayerId())
	}
	tbl = h.mustBet(id, "alice", 1000)
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tbl.GetCoup().GetDecisionPlayerId() != "alice" {
		t.Fatalf("want alice's decision on 5: %v", tbl)
	}
	// Alice says nothing: the player's hand on 5 draws (4H makes 9).
	h.clock.Advance(10 * time.Second)
	h.expire()
	tbl = h.get(id)
	if got := cardCodes(tbl.GetLastCoup().GetPlayerCards()); got != "2C 3D 4H" || tbl.GetLastCoup().GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
		t.Fatalf("after the decision's time: %s %v", got, tbl.GetLastCoup().GetOutcome())
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestCFGallery: the gallery bets after the seated players on what they
// left uncovered, and may hold the hand with the largest bet (CF-GALLERY,
// CF-HAND-HOLDER).
func TestCFGallery(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	resp, err := h.tables.JoinGallery(h.as("dave"), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: "dave"})
	if err != nil {
		t.Fatal(err)
	}
	if g := resp.GetTable().GetGalleryPlayerIds(); len(g) != 1 || g[0] != "dave" {
		t.Fatalf("gallery %v", g)
	}
	h.acceptBank(id, "alice", 1000)
	_, err = h.bet(id, "dave", 100)
	wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn)
	h.mustBet(id, "bob", 300)
	if _, err := h.tables.DeclineBet(h.as("carol"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	_, err = h.bet(id, "dave", 701)
	wantReason(t, err, codes.FailedPrecondition, reasonBetExceedsBank)
	tbl := h.mustBet(id, "dave", 700)
	if tbl.GetCoup().GetHandHolderPlayerId() != "dave" || tbl.GetCoup().GetDecisionPlayerId() != "dave" {
		t.Fatalf("the gallery's largest bet holds the hand: %v", tbl.GetCoup())
	}
	_, err = h.tables.JoinGallery(h.as("dave"), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: "dave"})
	wantReason(t, err, codes.AlreadyExists, reasonAlreadySeated)
}

// TestCFBancoPriority: banco is called in betting order, and the punter
// who called banco and lost has banco suivi: in the next coup another
// punter may call banco in his turn, but the suivi holder is asked before
// the deal and takes it over (CF-BANCO-PRIORITY).
func TestCFBancoPriority(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Coup 1: banker natural 9 beats carol's banco. Coup 2: player natural.
	cards := []string{"2C", "9H", "3D", "TC", "4C", "3H", "5D", "5S"}
	id := h.tableWith(nil, 0, cards, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	banco := func(p string) (*tablev1.Table, error) {
		resp, err := h.tables.CallBanco(h.as(p), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: p})
		return resp.GetTable(), err
	}
	_, err := banco("carol")
	wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn) // bob bets first
	if _, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := banco("carol")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.GetLastCoup().GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || tbl.GetBancoSuiviPlayerId() != "carol" {
		t.Fatalf("after carol's lost banco: %v", tbl)
	}
	// Bob calls banco in his own turn; carol, who has banco suivi, is
	// asked before the deal.
	tbl, err = banco("bob")
	if err != nil {
		t.Fatalf("bob's banco in his turn: %v", err)
	}
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tbl.GetCoup().GetTurnPlayerId() != "carol" {
		t.Fatalf("after bob's banco: %v", tbl)
	}
	if _, held := h.account("player:bob"); held != 1950 {
		t.Fatalf("bob holds %d, want 1950", held)
	}
	_, err = h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 100})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState) // banco or nothing
	tbl, err = banco("carol")                                      // she takes it over
	if err != nil {
		t.Fatal(err)
	}
	if _, held := h.account("player:bob"); held != 0 {
		t.Errorf("bob still holds %d after carol took his banco over", held)
	}
	last := tbl.GetLastCoup()
	if !last.GetBanco() || last.GetBets()[0].GetPlayerId() != "carol" || last.GetBets()[0].GetAmount() != 1950 ||
		last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
		t.Fatalf("banco suivi coup %v", last)
	}
	// 10000 - 1000 + 1950 for carol; alice lost her bank.
	if b, _ := h.account("player:carol"); b != 10950 {
		t.Errorf("carol %d, want 10950", b)
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestCFBancoSuiviLetsItStand: the suivi holder, asked about another
// punter's banco, lets it stand by declining or by letting his time run
// out; the banco is played (CF-BANCO-PRIORITY).
func TestCFBancoSuiviLetsItStand(t *testing.T) {
	for _, timeout := range []bool{false, true} {
		h := newHarness(t)
		h.fund(10000, "alice", "bob", "carol")
		cards := []string{"2C", "9H", "3D", "TC", "4C", "3H", "5D", "5S"}
		id := h.tableWith(nil, 0, cards, "alice", "bob", "carol")
		h.acceptBank(id, "alice", 1000)
		if _, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.tables.CallBanco(h.as("carol"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
			t.Fatal(err)
		}
		if timeout {
			h.clock.Advance(defaultTurnMS * time.Millisecond)
			h.expire()
		} else if _, err := h.tables.DeclineBet(h.as("carol"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
			t.Fatal(err)
		}
		last := h.get(id).GetLastCoup()
		if !last.GetBanco() || last.GetBets()[0].GetPlayerId() != "bob" || last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
			t.Fatalf("timeout %v: coup %v", timeout, last)
		}
		if b, held := h.account("player:bob"); b != 11950 || held != 0 {
			t.Errorf("timeout %v: bob %d held %d, want 11950 and 0", timeout, b, held)
		}
		h.conserved(30000, "player:alice", "player:bob", "player:carol")
	}
}
