package tablesvc

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestCFBetBeforeAndAgainst: punters bet only against the bank, the banker
// never against himself (CF-BET-AGAINST), and every bet is made before any
// card is dealt (CF-BET-BEFORE).
func TestCFBetBeforeAndAgainst(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	_, err := h.bet(id, "alice", 100)
	wantReason(t, err, codes.FailedPrecondition, reasonBankerCannotBet)
	h.mustBet(id, "bob", 500)
	h.mustBet(id, "carol", 500) // the bank is covered: the cards are dealt
	if st := h.get(id).GetState(); st != tablev1.TableState_TABLE_STATE_DECISION {
		t.Fatalf("state %v", st)
	}
	_, err = h.bet(id, "carol", 1)
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	_, err = h.tables.CallBanco(h.as("carol"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
}

// TestCFBankNoWithdraw: while the banker holds the bank he can take none
// of it out: the wallet refuses to pay it out, and he cannot leave or pass
// with a coup in play (CF-BANK-NO-WITHDRAW).
func TestCFBankNoWithdraw(t *testing.T) {
	h := newHarness(t)
	h.fund(1000, "alice", "bob")
	id := h.tableWith(nil, 0, []string{"2C", "TH", "3D", "6S", "4H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	_, err := h.wallets.Withdraw(h.as("op"), &walletv1.WithdrawRequest{RequestId: h.rid(), AccountId: "player:alice", Amount: 1})
	wantReason(t, err, codes.FailedPrecondition, reasonInsufficientFunds)
	h.mustBet(id, "bob", 500) // the coup waits for bob's decision on 5
	_, err = h.tables.PassBank(h.as("alice"), &tablev1.PassBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	_, err = h.tables.LeaveTable(h.as("alice"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
}

// TestCFBancoFreedomAtTable: in a banco coup under banco_free_play the
// banco player chooses at any total, then the banker (CF-BANCO-FREEDOM).
func TestCFBancoFreedomAtTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	// Player 2C 2D = 4 (the tableau would draw); banker TH 7S = 7.
	id := h.tableWith(&tablev1.HouseRules{BancoFreePlay: true}, 0, []string{"2C", "TH", "2D", "7S", "9H"}, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	resp, err := h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	tbl := resp.GetTable()
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tbl.GetCoup().GetDecisionPlayerId() != "bob" {
		t.Fatalf("free play: want bob's choice on 4, got %v", tbl)
	}
	tbl, err = h.decide(id, "bob", false) // stands on 4
	if err != nil {
		t.Fatal(err)
	}
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DECISION || tbl.GetCoup().GetDecisionPlayerId() != "alice" {
		t.Fatalf("free play: want the banker's choice on 7, got %v", tbl)
	}
	tbl, err = h.decide(id, "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	if last := tbl.GetLastCoup(); last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || len(last.GetPlayerCards()) != 2 {
		t.Fatalf("coup %v", last)
	}
}

// TestCFBankRaise: when bets exceed the bank, the banker may agree to
// raise the bank; otherwise (or when his time runs out) the excess bets
// are removed in reverse order of play (CF-BANK-RAISE).
func TestCFBankRaise(t *testing.T) {
	// Player 4C 5D = 9 natural: the bank loses what is at stake.
	cards := []string{"4C", "3H", "5D", "5S"}
	setup := func(t *testing.T) (*harness, string) {
		h := newHarness(t)
		h.fund(10000, "alice", "bob", "carol")
		id := h.tableWith(nil, 0, cards, "alice", "bob", "carol")
		h.acceptBank(id, "alice", 1000)
		h.mustBet(id, "bob", 600)
		_, err := h.bet(id, "carol", 700)
		wantReason(t, err, codes.FailedPrecondition, reasonBetExceedsBank)
		resp, err := h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 700, OverBank: true})
		if err != nil {
			t.Fatal(err)
		}
		if tbl := resp.GetTable(); tbl.GetState() != tablev1.TableState_TABLE_STATE_BANK_RAISE || tbl.GetCoup().GetUncovered() != -300 {
			t.Fatalf("over-bank bet: %v", tbl)
		}
		if _, held := h.account("player:carol"); held != 700 {
			t.Fatalf("carol's whole bet is not escrowed: %d", held)
		}
		return h, id
	}
	raise := func(h *harness, id, p string, yes bool) (*tablev1.Table, error) {
		resp, err := h.tables.RaiseBank(h.as(p), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Raise: yes})
		return resp.GetTable(), err
	}
	t.Run("raised", func(t *testing.T) {
		h, id := setup(t)
		_, err := raise(h, id, "bob", true)
		wantReason(t, err, codes.FailedPrecondition, reasonNotBanker)
		tbl, err := raise(h, id, "alice", true)
		if err != nil {
			t.Fatal(err)
		}
		last := tbl.GetLastCoup()
		if last.GetStake() != 1300 || last.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES {
			t.Fatalf("raised coup %v", last)
		}
		if b, _ := h.account("player:alice"); b != 10000-1300 {
			t.Errorf("alice %d, want %d", b, 10000-1300)
		}
		h.conserved(30000, "player:alice", "player:bob", "player:carol")
	})
	t.Run("declined", func(t *testing.T) {
		h, id := setup(t)
		tbl, err := raise(h, id, "alice", false)
		if err != nil {
			t.Fatal(err)
		}
		last := tbl.GetLastCoup()
		if last.GetStake() != 1000 || last.GetBets()[1].GetAmount() != 400 {
			t.Fatalf("carol's bet was not cut back to 400: %v", last)
		}
		if b, held := h.account("player:carol"); b != 10400 || held != 0 {
			t.Errorf("carol %d held %d, want 10400 held 0", b, held)
		}
		h.conserved(30000, "player:alice", "player:bob", "player:carol")
	})
	t.Run("time runs out", func(t *testing.T) {
		h, id := setup(t)
		h.clock.Advance(defaultTurnMS * time.Millisecond)
		h.expire()
		if last := h.get(id).GetLastCoup(); last.GetStake() != 1000 || !last.GetSettled() {
			t.Fatalf("after the banker's time: %v", last)
		}
		h.conserved(30000, "player:alice", "player:bob", "player:carol")
	})
}

// TestCFHourlyFee: under the hourly_fee house rule no commission is taken;
// seat time is billed to every seated player after each coup and when he
// leaves (CF-BANK-WINS).
func TestCFHourlyFee(t *testing.T) {
	h := newHarness(t)
	h.fund(100000, "alice", "bob")
	// A banker natural: the bank wins 1000, commission-free.
	id := h.tableWith(&tablev1.HouseRules{HourlyFee: 3600}, 0, []string{"2C", "9H", "3D", "TC"}, "alice", "bob")
	h.clock.Advance(30 * time.Minute)
	// alice's offer of the bank ran out in that half hour: it passes to
	// bob (the retry loop may have done it already; expire makes sure).
	h.expire()
	h.acceptBank(id, "bob", 1000)
	tbl := h.mustBet(id, "alice", 1000)
	if tbl.GetLastCoup().GetCommission() != 0 || tbl.GetBank() != 2000 {
		t.Fatalf("coup %v bank %d: no commission under hourly_fee", tbl.GetLastCoup(), tbl.GetBank())
	}
	// 30 minutes at 3600 an hour: 1800 each, to the house.
	if b, _ := h.account("player:bob"); b != 100000+1000-1800 {
		t.Errorf("bob %d, want %d", b, 100000+1000-1800)
	}
	if b, _ := h.account("player:alice"); b != 100000-1000-1800 {
		t.Errorf("alice %d, want %d", b, 100000-1000-1800)
	}
	h.clock.Advance(10 * time.Minute)
	if _, err := h.tables.LeaveTable(h.as("alice"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := h.account("player:alice"); b != 100000-1000-1800-600 {
		t.Errorf("alice after leaving %d, want %d", b, 100000-1000-1800-600)
	}
	if house, _ := h.account("house:commission"); house != 1800+1800+600 {
		t.Errorf("house %d, want %d", house, 1800+1800+600)
	}
	h.conserved(200000, "player:alice", "player:bob")
}

// TestSHOECutByPlayerAtTable: with shoe_cut_by_player the table's next
// shoe is cut by the player after the banker; the deal waits for the cut
// (SHOE-CUT).
func TestSHOECutByPlayerAtTable(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob")
	// A 6-card first shoe whose cut card comes out at once.
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), shoeFromOrder{cards: []string{"2C", "9H", "3D", "TC", "KD", "KD"}, cut: 4}.req(h))
	if err != nil {
		t.Fatal(err)
	}
	created, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: certMoney(&tablev1.HouseRules{ShoeCutByPlayer: true})})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetTable().GetTableId()
	h.join(id, "alice")
	h.join(id, "bob")
	h.acceptBank(id, "alice", 1000)
	tbl := h.mustBet(id, "bob", 500) // coup 1 settles; the next shoe waits for bob's cut
	next := tbl.GetShoeId()
	got, err := h.shoes.GetShoe(h.as("bob"), &shoev1.GetShoeRequest{ShoeId: next})
	if err != nil || got.GetShoe().GetCutterPlayerId() != "bob" || got.GetShoe().GetState() != shoev1.ShoeState_SHOE_STATE_AWAITING_CUT {
		t.Fatalf("next shoe %v, %v", got.GetShoe(), err)
	}
	tbl = h.mustBet(id, "bob", 500) // closes the betting; the deal waits
	if tbl.GetState() != tablev1.TableState_TABLE_STATE_DEALING || len(tbl.GetCoup().GetPlayerCards()) != 0 {
		t.Fatalf("dealt before the cut: %v", tbl)
	}
	if _, err := h.shoes.Cut(h.as("bob"), &shoev1.CutRequest{RequestId: h.rid(), ShoeId: next, PlayerId: "bob", Position: 100}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tbl := h.get(id); tbl.GetCoupsPlayed() < 2; tbl = h.get(id) {
		if time.Now().After(deadline) {
			t.Fatalf("the coup was not dealt after the cut: %v", tbl)
		}
		// The new shoe is shuffled at random: a player's 5 (or a banker's
		// option) waits for a decision; answer it.
		if tbl.GetState() == tablev1.TableState_TABLE_STATE_DECISION {
			if _, err := h.decide(id, tbl.GetCoup().GetDecisionPlayerId(), true); err != nil {
				t.Fatalf("decision of %s: %v", tbl.GetCoup().GetDecisionPlayerId(), err)
			}
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.conserved(20000, "player:alice", "player:bob")
}

// TestLeaveNeverStrandsBets: a banker cannot leave with bets against his
// bank, and when a leave ends the game every bet is returned.
func TestLeaveNeverStrandsBets(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	for _, p := range []string{"carol"} {
		if _, err := h.tables.JoinGallery(h.as(p), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 400)
	_, err := h.tables.LeaveTable(h.as("alice"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice"})
	wantReason(t, err, codes.FailedPrecondition, reasonWrongState)
	// A fresh table: bob passes, carol (gallery) bets, then bob leaves: the game ends, carol's bet returns.
	id = h.tableWith(nil, 0, nil, "alice", "bob")
	if _, err := h.tables.JoinGallery(h.as("dave"), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: "dave"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.JoinGallery(h.as("carol"), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	h.acceptBank(id, "alice", 1000)
	if _, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	h.mustBet(id, "dave", 300)
	resp, err := h.tables.LeaveTable(h.as("bob"), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetTable().GetState() != tablev1.TableState_TABLE_STATE_WAITING_FOR_PLAYERS {
		t.Fatalf("after the last punter left: %v", resp.GetTable())
	}
	// Alice still banks the first table (1000 held there), nothing more.
	if _, held := h.account("player:alice"); held != 1000 {
		t.Errorf("alice has %d held, want only the first table's bank", held)
	}
	if _, held := h.account("player:dave"); held != 0 {
		t.Errorf("dave's bet is still held: %d", held)
	}
}

// TestNewSeatBetsAfterReopen: a player who sits down during a betting
// round that ends with no bet gets his turn in the new round.
func TestNewSeatBetsAfterReopen(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	id := h.tableWith(nil, 0, nil, "alice", "bob")
	h.acceptBank(id, "alice", 1000)
	h.join(id, "carol")
	if _, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tables.DeclineBet(h.as("bob"), &tablev1.DeclineBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	if turn := h.get(id).GetCoup().GetTurnPlayerId(); turn != "carol" {
		t.Fatalf("turn %q, want carol in the reopened round", turn)
	}
}

// TestBreakerRegressions: banco suivi needs a place at the table; a
// seated player moving to the gallery can end the game like a leave; the
// highest bidder cannot slip into the gallery; a raise refused for want of
// funds can be tried again.
func TestBreakerRegressions(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol", "dave")
	gallery := func(id, p string) error {
		_, err := h.tables.JoinGallery(h.as(p), &tablev1.JoinGalleryRequest{RequestId: h.rid(), TableId: id, PlayerId: p})
		return err
	}
	leave := func(id, p string) error {
		_, err := h.tables.LeaveTable(h.as(p), &tablev1.LeaveTableRequest{RequestId: h.rid(), TableId: id, PlayerId: p})
		return err
	}

	// Banco suivi lapses when its holder leaves.
	id := h.tableWith(nil, 0, []string{"2C", "9H", "3D", "TC", "2C", "9H", "3D", "TC"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 500)
	if _, err := h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"}); err != nil {
		t.Fatal(err)
	}
	if err := leave(id, "bob"); err != nil {
		t.Fatal(err)
	}
	_, err := h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, reasonNotSeated)
	if s := h.get(id).GetBancoSuiviPlayerId(); s != "" {
		t.Errorf("banco suivi still %q", s)
	}

	// Moving the last punter's seat to the gallery ends the game.
	id = h.tableWith(nil, 0, nil, "carol", "dave")
	h.acceptBank(id, "carol", 300)
	if err := gallery(id, "dave"); err != nil {
		t.Fatal(err)
	}
	if tbl := h.get(id); tbl.GetState() != tablev1.TableState_TABLE_STATE_WAITING_FOR_PLAYERS || tbl.GetTurnDeadline() != nil {
		t.Fatalf("one seat left: %v", tbl)
	}

	// The highest bidder stays seated.
	id = h.tableWith(&tablev1.HouseRules{FirstBanker: tablev1.FirstBanker_FIRST_BANKER_AUCTION}, 0, nil, "alice", "bob", "carol")
	if _, err := h.tables.BidBank(h.as("bob"), &tablev1.BidBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	wantReason(t, gallery(id, "bob"), codes.FailedPrecondition, reasonWrongState)

	// The hourly fee is instead of commission, not on top of it.
	bp := int64(500)
	_, err = h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), HouseRules: &tablev1.HouseRules{HourlyFee: 3600, CommissionBp: &bp}})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidHouseRule)
}

// TestRaiseAfterRefusal: a raise refused for want of funds succeeds once
// the banker has the money.
func TestRaiseAfterRefusal(t *testing.T) {
	h := newHarness(t)
	h.fund(1100, "alice")
	h.fund(10000, "bob", "carol")
	id := h.tableWith(nil, 0, []string{"4C", "3H", "5D", "5S"}, "alice", "bob", "carol")
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 600)
	if _, err := h.tables.PlaceBet(h.as("carol"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "carol", Amount: 700, OverBank: true}); err != nil {
		t.Fatal(err)
	}
	_, err := h.tables.RaiseBank(h.as("alice"), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: true})
	wantReason(t, err, codes.FailedPrecondition, reasonInsufficientFunds)
	h.fund(1000, "alice")
	resp, err := h.tables.RaiseBank(h.as("alice"), &tablev1.RaiseBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "alice", Raise: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetTable().GetLastCoup().GetStake() != 1300 {
		t.Fatalf("raised coup %v", resp.GetTable().GetLastCoup())
	}
}
