package tablesvc

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

func wantReason(t *testing.T, err error, code codes.Code, reason string) {
	t.Helper()
	if status.Code(err) != code || errs.Reason(err) != reason {
		t.Fatalf("got %v (reason %q), want %v %s", err, errs.Reason(err), code, reason)
	}
}

func boolp(b bool) *bool { return &b }

// TestCFNaturals: a natural ends the coup at once (CF-NATURAL-PLAYER,
// CF-NATURAL-BANKER), 9 beats 8, equal naturals stand off (CF-STANDOFF).
func TestCFNaturals(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	cases := []struct {
		name    string
		cards   []string // P1 B1 P2 B2
		outcome tablev1.Outcome
		alice   int64 // banker's balance change
	}{
		{"player 9 beats banker 8", []string{"4C", "3H", "5D", "5S"}, tablev1.Outcome_OUTCOME_BANK_LOSES, -500},
		{"banker natural against player 5", []string{"2C", "9H", "3D", "TC"}, tablev1.Outcome_OUTCOME_BANK_WINS, 475},
		{"equal naturals", []string{"4C", "3H", "4D", "5S"}, tablev1.Outcome_OUTCOME_STAND_OFF, 0},
		{"banker 9 beats player 8", []string{"4C", "9H", "4D", "KS"}, tablev1.Outcome_OUTCOME_BANK_WINS, 475},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := h.account("player:alice")
			id := h.tableWith(nil, 0, tc.cards, "alice", "bob")
			h.acceptBank(id, "alice", 1000)
			tbl := h.mustBet(id, "bob", 500)
			last := tbl.GetLastCoup()
			if !last.GetSettled() || !last.GetNatural() || last.GetOutcome() != tc.outcome {
				t.Fatalf("coup %v", last)
			}
			if len(last.GetPlayerCards()) != 2 || len(last.GetBankerCards()) != 2 {
				t.Errorf("a natural coup drew a third card: %v", last)
			}
			after, _ := h.account("player:alice")
			if after-before != tc.alice {
				t.Errorf("banker moved %d, want %d", after-before, tc.alice)
			}
		})
	}
	h.conserved(20000, "player:alice", "player:bob")
}

// TestCFPlayerOptionOn5: the player's hand on 5 waits for its holder, the
// punter with the largest bet (CF-PLAYER-DRAW, CF-HAND-HOLDER).
func TestCFPlayerOptionOn5(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Player 2C 3D = 5; banker TH 6S = 6.
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	tbl := h.mustBet(id, "carol", 500)
	cp := tbl.GetCoup()
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || cp.GetDecisionPlayerId() != "carol" ||
		cp.GetDecisionHand() != tablev1.Hand_HAND_PLAYER || cp.GetHandHolderPlayerId() != "carol" {
		t.Fatalf("want carol's decision on the player's 5, got %v", tbl)
	}
	_, err := h.decide(id, "bob", true)
	wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn)
	_, err = h.decide(id, "alice", true)
	wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn)
	// Carol draws 4H: player 9; banker 6 draws on 0-6 against a 4? No:
	// against a 4 the banker draws on 0-5 and stands on 6 (CF-BANKER-DRAW).
	tbl, err = h.decide(id, "carol", true)
	if err != nil {
		t.Fatal(err)
	}
	last := tbl.GetLastCoup()
	if got := cardCodes(last.GetPlayerCards()) + "|" + cardCodes(last.GetBankerCards()); got != "2C 3D 4H|TH 6S" {
		t.Fatalf("cards %s", got)
	}
	if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || last.GetPlayerTotal() != 9 || last.GetBankerTotal() != 6 {
		t.Fatalf("coup %v", last)
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
	if b, _ := h.account("player:bob"); b != 10300 {
		t.Errorf("bob %d, want 10300", b)
	}
}

// TestCFPlayerStandsOn5: standing on 5 lets the banker play the tableau
// against a standing player (CF-BANKER-DRAW, "player stood" row).
func TestCFPlayerStandsOn5(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "4S", "5H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 1000)
	tbl, err := h.decide(id, "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	// Banker 4 draws on 0-5 when the player stood: 5H makes 9.
	last := tbl.GetLastCoup()
	if got := cardCodes(last.GetPlayerCards()) + "|" + cardCodes(last.GetBankerCards()); got != "2C 3D|TH 4S 5H" {
		t.Fatalf("cards %s", got)
	}
	if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || last.GetCommission() != 50 || tbl.GetBank() != 1950 {
		t.Fatalf("coup %v bank %d", last, tbl.GetBank())
	}
}

// TestCFBankerOption3vs9: with banker_option_3_vs_9 on, the banker decides;
// off, he draws (CF-BANKER-DRAW).
func TestCFBankerOption3vs9(t *testing.T) {
	// Player TC 2D = 2 draws 9C; banker AH 2S = 3; next card 5H.
	cards := []string{"TC", "AH", "2D", "2S", "9C", "5H"}
	t.Run("option on: the banker decides", func(t *testing.T) {
		h := newHarness(t)
		h.fund(10000, "alice", "bob")
		id := h.tableWith(nil, 0, cards, "alice", "bob")
		h.acceptBank(id, "alice", 1000)
		tbl := h.mustBet(id, "bob", 400)
		if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tbl.GetCoup().GetDecisionPlayerId() != "alice" ||
			tbl.GetCoup().GetDecisionHand() != tablev1.Hand_HAND_BANKER {
			t.Fatalf("want the banker's option, got %v", tbl)
		}
		tbl, err := h.decide(id, "alice", false)
		if err != nil {
			t.Fatal(err)
		}
		// Banker stands on 3 against player 1: bank wins.
		if last := tbl.GetLastCoup(); last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || len(last.GetBankerCards()) != 2 {
			t.Fatalf("coup %v", last)
		}
	})
	t.Run("option off: the banker draws", func(t *testing.T) {
		h := newHarness(t)
		h.fund(10000, "alice", "bob")
		id := h.tableWith(&tablev1.HouseRules{BankerOption_3Vs_9: boolp(false)}, 0, cards, "alice", "bob")
		h.acceptBank(id, "alice", 1000)
		tbl := h.mustBet(id, "bob", 400)
		last := tbl.GetLastCoup()
		if got := cardCodes(last.GetBankerCards()); got != "AH 2S 5H" || last.GetBankerTotal() != 8 {
			t.Fatalf("banker %s total %d", got, last.GetBankerTotal())
		}
	})
}

// TestCFBetOrder: punters bet in turn from the banker's right (or left),
// covering part of what is left; the uncovered part is not at risk
// (CF-BET-ORDER, CF-BET-LIMIT, CF-UNCOVERED).
func TestCFBetOrder(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	// Player 4C 5D = 9 natural: the bank loses what is covered.
	nat := []string{"4C", "3H", "5D", "5S"}
	id := h.tableWith(nil, 0, nat, "alice", "bob", "carol", "dave")
	h.acceptBank(id, "alice", 1000)
	tbl := h.get(id)
	if got := tbl.GetCoup().GetTurnPlayerId(); got != "bob" {
		t.Fatalf("first to bet is %q, want bob (banker's right)", got)
	}
	_, err := h.bet(id, "carol", 100)
	wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn)
	_, err = h.bet(id, "bob", 1001)
	wantReason(t, err, codes.FailedPrecondition, reasonBetExceedsBank)
	_, err = h.bet(id, "alice", 100)
	wantReason(t, err, codes.FailedPrecondition, reasonBankerCannotBet)
	h.mustBet(id, "bob", 200)
	if _, err := h.tables.DeclineBet(h.as("carol"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	_, err = h.bet(id, "dave", 801)
	wantReason(t, err, codes.FailedPrecondition, reasonBetExceedsBank)
	tbl = h.mustBet(id, "dave", 300)
	last := tbl.GetLastCoup()
	if last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || last.GetUncovered() != 500 {
		t.Fatalf("coup %v", last)
	}
	// Alice paid 500 and keeps the 500 nobody covered.
	if b, held := h.account("player:alice"); b != 9500 || held != 0 {
		t.Errorf("alice %d held %d, want 9500 held 0", b, held)
	}
	// The bank is lost and offered to the next seat (CF-LOSE).
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_OFFERING_BANK || tbl.GetOfferedPlayerId() != "bob" || tbl.GetBankerPlayerId() != "" {
		t.Errorf("after the loss: %v", tbl)
	}
	h.conserved(40000, "player:alice", "player:bob", "player:carol", "player:dave")

	t.Run("left", func(t *testing.T) {
		id := h.tableWith(&tablev1.HouseRules{BettingDirection: tablev1.BettingDirection_BETTING_DIRECTION_LEFT}, 0, nat, "alice", "bob", "carol", "dave")
		tbl := h.get(id)
		if tbl.GetOfferedPlayerId() != "alice" {
			t.Fatalf("the first bank is offered to %q, want seat 1", tbl.GetOfferedPlayerId())
		}
		// Leftward, the offer goes on to the lower seat, wrapping: dave, carol.
		for _, p := range []string{"alice", "dave"} {
			if _, err := h.tables.DeclineBank(h.as(p), &tablev1.DeclineBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
				t.Fatal(err)
			}
		}
		tbl = h.acceptBank(id, "carol", 1000)
		if got := tbl.GetCoup().GetTurnPlayerId(); got != "bob" {
			t.Fatalf("leftward from carol, first to bet is %q, want bob", got)
		}
	})
}

// TestCFBanco: a banco bets the whole bank and cancels every other bet,
// whose holds are released (CF-BANCO); the caller holds the hand.
func TestCFBanco(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"4C", "9H", "4D", "KS"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 300)
	if _, held := h.account("player:bob"); held != 300 {
		t.Fatalf("bob's bet not held: %d", held)
	}
	resp, err := h.tables.CallBanco(h.as("carol"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	last := resp.GetTable().GetLastCoup()
	if !last.GetBanco() || len(last.GetBets()) != 1 || last.GetBets()[0].GetPlayerId() != "carol" || last.GetBets()[0].GetAmount() != 1000 ||
		last.GetHandHolderPlayerId() != "carol" {
		t.Fatalf("banco coup %v", last)
	}
	// Banker 9 beats player 8: carol loses 1000, bob's cancelled bet is free.
	if b, held := h.account("player:bob"); b != 10000 || held != 0 {
		t.Errorf("bob %d held %d, want 10000 free", b, held)
	}
	if b, _ := h.account("player:carol"); b != 9000 {
		t.Errorf("carol %d, want 9000", b)
	}
	h.conserved(30000, "player:alice", "player:bob", "player:carol")
}

// TestCFHoldAndPass: a winning banker holds a bank of the previous bank
// plus winnings after commission (CF-HOLD, CF-BANK-SIZE), and may pass it
// between coups, before any bet (CF-PASS); it is then offered in turn.
func TestCFHoldAndPass(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	// Coup 1: banker natural 9. Coup 2 is never dealt.
	id := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 600)
	tbl := h.mustBet(id, "carol", 400)
	if tbl.GetBankerPlayerId() != "alice" || tbl.GetBank() != 1950 || tbl.GetState() != tablev1.TableState_TABLE_STATE_BETTING ||
		tbl.GetCoup().GetBank() != 1950 || tbl.GetCoup().GetNumber() != 2 {
		t.Fatalf("after a win: %v", tbl)
	}
	if b, held := h.account("player:alice"); b != 10950 || held != 1950 {
		t.Fatalf("alice %d held %d, want 10950 with the bank of 1950 held", b, held)
	}
	h.mustBet(id, "bob", 100)
	_, err := h.tables.PassBank(h.as("alice"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	_, err = h.tables.PassBank(h.as("bob"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, reasonNotBanker)
}

func TestCFPassBeforeBets(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, nil, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	resp, err := h.tables.PassBank(h.as("alice"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	tbl := resp.GetTable()
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_OFFERING_BANK || tbl.GetOfferedPlayerId() != "bob" {
		t.Fatalf("after a pass: %v", tbl)
	}
	if _, held := h.account("player:alice"); held != 0 {
		t.Errorf("the passed bank is still held: %d", held)
	}
	_, err = h.tables.AcceptBank(h.as("carol"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 500})
	wantReason(t, err, codes.FailedPrecondition, reasonNotYourTurn)
	_, err = h.tables.AcceptBank(h.as("bob"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 50})
	wantReason(t, err, codes.FailedPrecondition, reasonBankBelowMinimum)
	_, err = h.tables.AcceptBank(h.as("bob"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 20000})
	wantReason(t, err, codes.FailedPrecondition, reasonInsufficientFunds)
	tbl = h.acceptBank(id, "bob", 500)
	if tbl.GetCoup().GetTurnPlayerId() != "carol" {
		t.Errorf("bob's first punter is %q, want carol", tbl.GetCoup().GetTurnPlayerId())
	}
}

// TestBettingReopened: a round where nobody bets opens again.
func TestBettingReopened(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	resp, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl := resp.GetTable(); tbl.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tbl.GetCoup().GetTurnPlayerId() != "bob" {
		t.Fatalf("after an empty round: %v", tbl)
	}
}

// TestIdempotentRetry: the same request_id returns the table and changes
// nothing; the same id for another request is refused.
func TestIdempotentRetry(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, nil, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	req := &tablev1.PlaceBetRequest{RequestId: "bet-once", TableId: id, PlayerId: "bob", Amount: 300}
	for i := 0; i < 3; i++ {
		if _, err := h.tables.PlaceBet(h.as("bob"), req); err != nil {
			t.Fatal(err)
		}
	}
	tbl := h.get(id)
	if n := len(tbl.GetCoup().GetBets()); n != 1 || tbl.GetCoup().GetTurnPlayerId() != "carol" {
		t.Fatalf("retries placed %d bets: %v", n, tbl.GetCoup())
	}
	if _, held := h.account("player:bob"); held != 300 {
		t.Errorf("bob held %d, want 300", held)
	}
	_, err := h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: "bet-once", TableId: id, PlayerId: "bob", Amount: 200})
	wantReason(t, err, codes.AlreadyExists, reasonRequestIDReused)
}

// TestRestartMidCoup: a table waiting for a decision survives a restart
// and finishes the coup with the same cards.
func TestRestartMidCoup(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 1000)
	h.restartTable()
	tbl := h.getAs(id, "bob") // he holds the player's hand
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || cardCodes(tbl.GetCoup().GetPlayerCards()) != "2C 3D" {
		t.Fatalf("after restart: %v", tbl)
	}
	tbl, err := h.decide(id, "bob", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := cardCodes(tbl.GetLastCoup().GetPlayerCards()); got != "2C 3D 4H" {
		t.Fatalf("player cards %s", got)
	}
	h.conserved(20000, "player:alice", "player:bob")
}

// TestSHOECutCardEndsShoe: the coup in which the cut card comes out is
// played to the end, and the next coup uses a new shoe (SHOE-RESHUFFLE).
func TestSHOECutCardEndsShoe(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	cards := []string{"2C", "9H", "3D", "TC", "KD", "KD"}
	// A 6-card shoe with the cut card 4 from the end: it comes out with
	// the second card.
	resp, err := h.shoes.CreateShoeFromOrder(h.as("op"), shoeFromOrder{cards: cards, cut: 4}.req(h))
	if err != nil {
		t.Fatal(err)
	}
	created, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: resp.GetShoe().GetShoeId(), HouseRules: certMoney(nil)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	h.join(id, "alice")
	h.join(id, "bob")
	h.acceptBank(id, "alice", 1000)
	tbl := h.mustBet(id, "bob", 500)
	if !tbl.GetLastCoup().GetSettled() {
		t.Fatalf("coup not finished: %v", tbl)
	}
	if tbl.GetShoeId() == resp.GetShoe().GetShoeId() || tbl.GetShoeId() == "" {
		t.Fatalf("the table kept the shoe whose cut card came out")
	}
}

// TestCertificationTable: a table on a prepared shoe says so in its view
// and events, and takes no bank or bet unless an operator set
// certification_real_money; the next (shuffled) shoe clears it.
func TestCertificationTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), shoeFromOrder{cards: []string{"2C", "9H", "3D", "TC", "KD", "KD"}, cut: 4}.req(h))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), HouseRules: certMoney(nil)})
	wantReason(t, err, codes.PermissionDenied, reasonRoleNotAllowed)
	created, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: sh.GetShoe().GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	if !created.GetTable().GetCertification() {
		t.Fatalf("a table on a prepared shoe without certification: %v", created.GetTable())
	}
	h.join(id, "alice")
	h.join(id, "bob")
	_, err = h.tables.AcceptBank(h.as("alice"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Amount: 500})
	wantReason(t, err, codes.FailedPrecondition, reasonCertificationTable)
	if b, held := h.account("player:alice"); b != 10000 || held != 0 {
		t.Errorf("alice %d held %d after a refused bank", b, held)
	}
	for _, ev := range h.events(id) {
		if !ev.GetCertification() {
			t.Errorf("%s without certification", ev.kind)
		}
	}
	// A shuffled table is no certification table.
	plain, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid()})
	if err != nil || plain.GetTable().GetCertification() {
		t.Fatalf("shuffled table: %v, %v", plain.GetTable(), err)
	}
}

// TestEachGamesShoe: every game's table opens its shoe with the game's
// decks (SHOE-DECKS; PB-DECKS 6 or 8; BQ-DECKS 3; OLD-DECKS 2), and a
// deck count of another game is refused.
func TestEachGamesShoe(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		req   *tablev1.CreateTableRequest
		decks int32
	}{
		{&tablev1.CreateTableRequest{}, 6},
		// Source: RULES.md PB-DECKS (6 or 8 decks; a table's default 8)
		{&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO}, 8},
		// Source: RULES.md BQ-DECKS (3 decks)
		{&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE}, 3},
		// Source: RULES.md OLD-DECKS (two full decks)
		{&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT}, 2},
	} {
		tc.req.RequestId = h.rid()
		resp, err := h.tables.CreateTable(h.as("op"), tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.req.GetVariant(), err)
		}
		sh, err := h.shoes.GetShoe(h.as("op"), &shoev1.GetShoeRequest{ShoeId: resp.GetTable().GetShoeId()})
		if err != nil {
			t.Fatal(err)
		}
		if got := sh.GetShoe().GetDecks(); got != tc.decks || sh.GetShoe().GetCardsTotal()+int32(len(sh.GetShoe().GetBurned())) != 52*tc.decks {
			t.Errorf("%s: a shoe of %d decks, %d cards; want %d decks", tc.req.GetVariant(), got, sh.GetShoe().GetCardsTotal(), tc.decks)
		}
	}
	_, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		PuntoBancoRules: &tablev1.PuntoBancoRules{Decks: 3}})
	wantReason(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
}

// TestLobbyFilters: ListTables filters a lobby by game, free seats and
// closed tables; the page size counts the tables that pass.
func TestLobbyFilters(t *testing.T) {
	h := newHarness(t)
	create := func(req *tablev1.CreateTableRequest) string {
		t.Helper()
		req.RequestId = h.rid()
		resp, err := h.tables.CreateTable(h.as("op"), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTable().GetTableId()
	}
	cf := create(&tablev1.CreateTableRequest{HouseRules: &tablev1.HouseRules{MaxSeats: 2}})
	h.join(cf, "alice")
	h.join(cf, "bob") // full
	cf2 := create(&tablev1.CreateTableRequest{})
	pb := create(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO})
	old := create(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT})
	if _, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: old, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	names := func(resp *tablev1.ListTablesResponse) string {
		var ids []string
		for _, tb := range resp.GetTables() {
			ids = append(ids, map[string]string{cf: "cf", cf2: "cf2", pb: "pb", old: "old"}[tb.GetTableId()])
		}
		return strings.Join(ids, " ")
	}
	list := func(req *tablev1.ListTablesRequest) string {
		t.Helper()
		resp, err := h.tables.ListTables(h.as("bob"), req)
		if err != nil {
			t.Fatal(err)
		}
		return names(resp)
	}
	for _, tc := range []struct {
		req  *tablev1.ListTablesRequest
		want string
	}{
		{&tablev1.ListTablesRequest{}, "cf cf2 pb old"},
		{&tablev1.ListTablesRequest{Variant: tablev1.Variant_VARIANT_CHEMIN_DE_FER}, "cf cf2"},
		{&tablev1.ListTablesRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO}, "pb"},
		{&tablev1.ListTablesRequest{OpenSeats: true}, "cf2 pb"},
		{&tablev1.ListTablesRequest{ExcludeClosed: true}, "cf cf2 pb"},
		{&tablev1.ListTablesRequest{ExcludeClosed: true, PageSize: 2}, "cf cf2"},
	} {
		if got := list(tc.req); got != tc.want {
			t.Errorf("ListTables %v: %q, want %q", tc.req, got, tc.want)
		}
	}
	// A game the contract does not have is refused, not an empty lobby.
	for _, v := range []tablev1.Variant{-1, 999} {
		_, err := h.tables.ListTables(h.as("bob"), &tablev1.ListTablesRequest{Variant: v})
		wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	}

	// A call reads at most lobbyScan tables: filters that skip many give
	// short pages (even empty ones) with a token, and paging on finds
	// every match once, in order.
	h.table.lobbyScan = 2
	var pages []string
	req := &tablev1.ListTablesRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO}
	for range 10 {
		resp, err := h.tables.ListTables(h.as("bob"), req)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, "["+names(resp)+"]")
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	if got, want := strings.Join(pages, " "), "[] [pb]"; got != want {
		t.Errorf("punto banco tables, 2 read per call: pages %s, want %s", got, want)
	}
	h.table.lobbyScan = maxLobbyScan
	if got := list(&tablev1.ListTablesRequest{PageSize: 3}); got != "cf cf2 pb" {
		t.Errorf("page of 3: %q", got)
	}
}
