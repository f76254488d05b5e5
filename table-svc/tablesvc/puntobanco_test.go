package tablesvc

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// pbTable opens a punto banco table whose shoe deals exactly cards (then
// kings, unless a cut card is given), cut cutFromEnd cards from the end,
// playing for money on the prepared shoe.
func (h *harness) pbTable(r *tablev1.PuntoBancoRules, cutFromEnd int32, cards ...string) string {
	h.t.Helper()
	order := append([]string(nil), cards...)
	for cutFromEnd == 0 && len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, CutCardFromEnd: cutFromEnd, TestShoe: true})
	if err != nil {
		h.t.Fatal(err)
	}
	if r == nil {
		r = &tablev1.PuntoBancoRules{}
	}
	r = proto.Clone(r).(*tablev1.PuntoBancoRules)
	r.CertificationRealMoney = true
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		PuntoBancoRules: r, ShoeId: sh.GetShoe().GetShoeId()})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetTable().GetTableId()
}

// fundHouse deposits the house's float in house:bank, which pays the
// winning bets of house-banked games.
func (h *harness) fundHouse(amount int64) {
	h.t.Helper()
	if _, err := h.wallets.Deposit(h.as("op"), &walletv1.DepositRequest{RequestId: h.rid(), AccountId: "house:bank", Amount: amount}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) pbBet(id, p string, spot tablev1.BetSpot, amount int64) (*tablev1.Table, error) {
	resp, err := h.tables.PlaceBet(h.as(p), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: p, Spot: spot, Amount: amount})
	return resp.GetTable(), err
}

func (h *harness) mustPBBet(id, p string, spot tablev1.BetSpot, amount int64) *tablev1.Table {
	h.t.Helper()
	t, err := h.pbBet(id, p, spot, amount)
	if err != nil {
		h.t.Fatalf("%s bets %d on %s: %v", p, amount, spot, err)
	}
	return t
}

// closeWindow lets the betting window run out: the coup is dealt and
// settled by the tableau, without anyone acting.
func (h *harness) closeWindow(id string) *tablev1.Table {
	h.t.Helper()
	t := h.get(id)
	if t.GetTurnDeadline() == nil {
		h.t.Fatalf("no betting window running (state %s)", t.GetState())
	}
	h.clock.Advance(t.GetTurnDeadline().AsTime().Sub(h.clock.Now()))
	h.expire()
	return h.get(id)
}

// TestPuntoBancoCoup plays a coup of punto banco through the table: the
// house banks (PB-BANK), bets on bank, player and tie (PB-BETS), the
// window closes on its timer, the fixed tableau draws (PB-TABLEAU), and
// the house settles.
func TestPuntoBancoCoup(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice", "bob", "carol")
	// Player 2C 3D = 5 (draws on 5, PB-TABLEAU), banker KD 5H = 5; the
	// player draws 4S (9); the banker with 5 after giving a 4 draws 9C: 4.
	id := h.pbTable(nil, 0, "2C", "KD", "3D", "5H", "4S", "9C")
	tb := h.get(id)
	if tb.GetVariant() != tablev1.Variant_VARIANT_PUNTO_BANCO || tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tb.GetTurnDeadline() != nil {
		t.Fatalf("new table: variant %s state %s deadline %v", tb.GetVariant(), tb.GetState(), tb.GetTurnDeadline())
	}
	if r := tb.GetPuntoBancoRules(); r.GetDecks() != 8 || r.GetMinBet() != 100 || r.GetCommissionBp() != 500 || r.GetTiePays() != 8 || r.GetBettingWindowMs() != 15000 {
		t.Errorf("defaults: %v", r)
	}
	// One player is enough (PB-BANK); bob bets without a seat (back betting).
	h.join(id, "alice")
	tb = h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 1000)
	if tb.GetTurnDeadline() == nil || tb.GetCoup() == nil {
		t.Fatalf("the first bet starts the window: %v", tb)
	}
	h.mustPBBet(id, "bob", tablev1.BetSpot_BET_SPOT_PLAYER, 500)
	h.mustPBBet(id, "carol", tablev1.BetSpot_BET_SPOT_TIE, 100)
	if b, held := h.account("player:alice"); b != 5000 || held != 1000 {
		t.Errorf("alice's bet is held: balance %d held %d", b, held)
	}
	tb = h.closeWindow(id)
	cp := tb.GetLastCoup()
	// Every card is dealt face up: the published events show them all.
	for _, ev := range h.events(id) {
		if cd := ev.GetCardDealt(); cd != nil && (cd.GetCard().GetFaceDown() || cd.GetCard().GetCode() == "" || cd.GetTotal() == 0 && cd.GetPosition() == 2) {
			t.Errorf("published card_dealt hides a punto banco card: %v", cd)
		}
	}
	if tb.GetState() != tablev1.TableState_TABLE_STATE_RESULT || cp == nil || !cp.GetSettled() {
		t.Fatalf("after the window: state %s, last coup %v", tb.GetState(), cp)
	}
	if got := cardCodes(cp.GetPlayerCards()) + " / " + cardCodes(cp.GetBankerCards()); got != "2C 3D 4S / KD 5H 9C" {
		t.Errorf("cards %s", got)
	}
	if cp.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || cp.GetPlayerTotal() != 9 || cp.GetBankerTotal() != 4 {
		t.Errorf("outcome %s %d-%d", cp.GetOutcome(), cp.GetPlayerTotal(), cp.GetBankerTotal())
	}
	// The bank bet and the tie lose, the player bet wins even money.
	if cp.GetHouseNet() != 1000+100-500 {
		t.Errorf("house net %d", cp.GetHouseNet())
	}
	want := map[string]int64{"player:alice": 4000, "player:bob": 5500, "player:carol": 4900}
	for acct, w := range want {
		if b, held := h.account(acct); b != w || held != 0 {
			t.Errorf("%s: balance %d held %d, want %d", acct, b, held, w)
		}
	}
	h.conserved(115000, "player:alice", "player:bob", "player:carol", "house:bank")
	// The result is shown for the pause, then the next betting opens.
	h.clock.Advance(3 * time.Second)
	h.expire()
	if tb = h.get(id); tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tb.GetCoup() != nil || tb.GetCoupsPlayed() != 1 {
		t.Errorf("after the pause: %s, coup %v, played %d", tb.GetState(), tb.GetCoup(), tb.GetCoupsPlayed())
	}
	roads, err := h.tables.GetRoads(h.as("bob"), &tablev1.GetRoadsRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	if r := roads.GetRoads(); len(r.GetBeadPlate()) != 1 || r.GetBeadPlate()[0].GetWinner() != tablev1.RoadWinner_ROAD_WINNER_PLAYER ||
		r.GetBeadPlate()[0].GetTotal() != 9 || r.GetPlayerWins() != 1 {
		t.Errorf("roads: %v", r)
	}
}

// TestPuntoBancoSideBets: the no-commission game pays half on a bank win
// of 6, pairs pay 11 to 1, the bank natural bet loses without a natural
// (PB-BETS).
func TestPuntoBancoSideBets(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice")
	// Player 2C 2D = 4 (a pair), banker 3H 3S = 6 (a pair); the player
	// draws KD (4); the banker stands on 6 after a ten: bank wins 6-4.
	id := h.pbTable(&tablev1.PuntoBancoRules{NoCommission: true, PairBets: true}, 0, "2C", "3H", "2D", "3S", "KD")
	for _, b := range []struct {
		spot   tablev1.BetSpot
		amount int64
	}{{tablev1.BetSpot_BET_SPOT_BANK, 1001}, {tablev1.BetSpot_BET_SPOT_PLAYER_PAIR, 100}, {tablev1.BetSpot_BET_SPOT_BANK_PAIR, 100}, {tablev1.BetSpot_BET_SPOT_BANK_NATURAL, 100}} {
		h.mustPBBet(id, "alice", b.spot, b.amount)
	}
	cp := h.closeWindow(id).GetLastCoup()
	if cp.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS || cp.GetBankerTotal() != 6 || !cp.GetPlayerPair() || !cp.GetBankerPair() {
		t.Fatalf("coup: %v", cp)
	}
	// 1001 on the bank wins half, rounded down: 500; each pair 1100; the
	// bank natural bet loses 100.
	if b, held := h.account("player:alice"); b != 5000+500+1100+1100-100 || held != 0 {
		t.Errorf("alice: balance %d held %d", b, held)
	}
	for i, w := range []int64{500, 1100, 1100, 0} {
		if got := cp.GetBets()[i].GetWon(); got != w {
			t.Errorf("bet %d won %d, want %d", i, got, w)
		}
	}
	if cp.GetCommission() != 0 {
		t.Errorf("no-commission game took %d", cp.GetCommission())
	}
}

// TestPuntoBancoRefusals: limits, spots not offered, and another game's
// calls are refused with their reasons, and move no money.
func TestPuntoBancoRefusals(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(100000, "alice", "bob")
	id := h.pbTable(&tablev1.PuntoBancoRules{MinBet: 200, MaxBet: 5000, HouseLimit: 8000}, 0)
	_, err := h.pbBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 100)
	wantReason(t, err, codes.InvalidArgument, "BET_OUT_OF_LIMITS")
	h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 5000)
	_, err = h.pbBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 200)
	wantReason(t, err, codes.InvalidArgument, "BET_OUT_OF_LIMITS")
	// Source: RULES.md PB-BANK (the limit per hand is the house limit)
	_, err = h.pbBet(id, "bob", tablev1.BetSpot_BET_SPOT_BANK, 3500)
	wantReason(t, err, codes.FailedPrecondition, "HOUSE_LIMIT_REACHED")
	// A banque side at another game's table is refused, not ignored.
	_, err = h.tables.PlaceBet(h.as("bob"), &tablev1.PlaceBetRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob",
		Spot: tablev1.BetSpot_BET_SPOT_PLAYER, Side: tablev1.BanqueSide_BANQUE_SIDE_RIGHT, Amount: 200})
	wantReason(t, err, codes.InvalidArgument, "WRONG_VARIANT")
	_, err = h.pbBet(id, "bob", tablev1.BetSpot_BET_SPOT_PLAYER_PAIR, 200)
	wantReason(t, err, codes.FailedPrecondition, "SPOT_NOT_OFFERED")
	_, err = h.pbBet(id, "bob", tablev1.BetSpot_BET_SPOT_UNSPECIFIED, 200)
	wantReason(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = h.pbBet(id, "bob", tablev1.BetSpot(42), 200)
	wantReason(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	h.fund(300, "poor")
	h.mustPBBet(id, "poor", tablev1.BetSpot_BET_SPOT_TIE, 200)
	_, err = h.pbBet(id, "poor", tablev1.BetSpot_BET_SPOT_PLAYER, 200)
	wantReason(t, err, codes.FailedPrecondition, "INSUFFICIENT_FUNDS")
	// Chemin de fer's calls at a punto banco table.
	_, err = h.tables.AcceptBank(h.as("bob"), &tablev1.AcceptBankRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob", Amount: 1000})
	wantReason(t, err, codes.FailedPrecondition, "WRONG_VARIANT")
	_, err = h.tables.CallBanco(h.as("bob"), &tablev1.CallBancoRequest{RequestId: h.rid(), TableId: id, PlayerId: "bob"})
	wantReason(t, err, codes.FailedPrecondition, "WRONG_VARIANT")
	if b, held := h.account("player:bob"); b != 100000 || held != 0 {
		t.Errorf("bob's refused bets moved money: balance %d held %d", b, held)
	}
	// A spot at a chemin de fer table.
	cf := h.tableWith(nil, 0, nil, "alice", "bob")
	_, err = h.pbBet(cf, "bob", tablev1.BetSpot_BET_SPOT_BANK, 200)
	wantReason(t, err, codes.InvalidArgument, "WRONG_VARIANT")
	_, err = h.tables.GetRoads(h.as("bob"), &tablev1.GetRoadsRequest{TableId: cf})
	wantReason(t, err, codes.FailedPrecondition, "WRONG_VARIANT")
	// Roads of a banque or an old game table (table-svc panicked).
	for _, id := range []string{h.banqueSeated(), h.oldTable(10000)} {
		_, err = h.tables.GetRoads(h.as("bob"), &tablev1.GetRoadsRequest{TableId: id})
		wantReason(t, err, codes.FailedPrecondition, "WRONG_VARIANT")
	}
	// Bad house rules.
	_, err = h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		PuntoBancoRules: &tablev1.PuntoBancoRules{Decks: 7}})
	wantReason(t, err, codes.InvalidArgument, "INVALID_HOUSE_RULE")
	_, err = h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant(99)})
	wantReason(t, err, codes.InvalidArgument, "INVALID_ARGUMENT")
	_, err = h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		HouseRules: &tablev1.HouseRules{}})
	wantReason(t, err, codes.InvalidArgument, "WRONG_VARIANT")
}

// TestPuntoBancoVoidAndRestart: bets survive a restart of table-svc in
// the window; the croupier voids the coup and every bet comes back; the
// table then closes and its shoe is closed.
func TestPuntoBancoVoidAndRestart(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice", "bob")
	id := h.pbTable(nil, 0)
	tb := h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 700)
	h.mustPBBet(id, "bob", tablev1.BetSpot_BET_SPOT_PLAYER, 300)
	h.restartTable()
	if got := h.get(id).GetCoup().GetBets(); len(got) != 2 {
		t.Fatalf("after restart: %d bets", len(got))
	}
	_, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, CoupId: "nope", Reason: "test"})
	wantReason(t, err, codes.FailedPrecondition, "COUP_NOT_IN_PLAY")
	// Source: RULES.md CF-ERROR (every bet returned)
	if _, err := h.tables.VoidCoup(h.as("croupier"), &tablev1.VoidCoupRequest{RequestId: h.rid(), TableId: id, CoupId: tb.GetCoup().GetCoupId(), Reason: "misdeal"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"player:alice", "player:bob"} {
		if b, held := h.account(p); b != 5000 || held != 0 {
			t.Errorf("%s after the void: balance %d held %d", p, b, held)
		}
	}
	tb = h.get(id)
	if !tb.GetLastCoup().GetVoided() || tb.GetState() != tablev1.TableState_TABLE_STATE_BETTING || tb.GetTurnDeadline() != nil {
		t.Errorf("after the void: %v", tb)
	}
	if _, err := h.tables.CloseTable(h.as("croupier"), &tablev1.CloseTableRequest{RequestId: h.rid(), TableId: id, Reason: "end of session"}); err != nil {
		t.Fatal(err)
	}
	_, err = h.pbBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 700)
	wantReason(t, err, codes.FailedPrecondition, "TABLE_CLOSED")
	sh, err := h.shoes.GetShoe(h.as("op"), &shoev1.GetShoeRequest{ShoeId: tb.GetShoeId()})
	if err != nil {
		t.Fatal(err)
	}
	if sh.GetShoe().GetState() != shoev1.ShoeState_SHOE_STATE_CLOSED {
		t.Errorf("the closed table's shoe is %s", sh.GetShoe().GetState())
	}
}

// TestPuntoBancoNewShoe: the coup in which the cut card comes out is the
// shoe's last (SHOE-CUT-CARD); the table opens the next shoe in the pause
// and the roads start again.
func TestPuntoBancoNewShoe(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice")
	// 8 cards, the cut card 6 from the end: it comes out with the first
	// coup's second card (a natural 9 against 8).
	id := h.pbTable(nil, 6, "9C", "8D", "KD", "KD", "KD", "KD", "KD", "KD")
	first := h.get(id).GetShoeId()
	h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_PLAYER, 100)
	tb := h.closeWindow(id)
	// The result's pause still shows the shoe's last coup on its roads.
	if tb.GetShoeId() != first || len(tb.GetRoads().GetBeadPlate()) != 1 {
		t.Errorf("in the pause: shoe %s (first %s), roads %v", tb.GetShoeId(), first, tb.GetRoads())
	}
	h.clock.Advance(3 * time.Second)
	h.expire()
	tb = h.get(id)
	if tb.GetShoeId() == first || tb.GetShoeNumber() != 2 || len(tb.GetRoads().GetBeadPlate()) != 0 {
		t.Errorf("after the cut card's coup: shoe %s (#%d, first %s), roads %v", tb.GetShoeId(), tb.GetShoeNumber(), first, tb.GetRoads())
	}
	if tb.GetLastCoup().GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || !tb.GetLastCoup().GetNatural() {
		t.Errorf("last coup %v", tb.GetLastCoup())
	}
	n := 0
	for _, ev := range h.events(id) {
		if ev.GetShoeChanged() != nil {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d shoe_changed events", n)
	}
}

// TestPuntoBancoOdds: GetOdds at a punto banco table prices the table's
// own payouts on what is left of its shuffled shoe (PB-BETS).
func TestPuntoBancoOdds(t *testing.T) {
	h := newHarness(t)
	h.fundHouse(100000)
	h.fund(5000, "alice")
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		PuntoBancoRules: &tablev1.PuntoBancoRules{TiePays: 9, Decks: 6}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTable().GetTableId()
	odds := func() *tablev1.GetOddsResponse {
		t.Helper()
		o, err := h.tables.GetOdds(h.as("alice"), &tablev1.GetOddsRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cards := func(o *tablev1.GetOddsResponse) (n int32) {
		for _, c := range o.GetComposition().GetRankCounts() {
			n += c
		}
		return n
	}
	before := odds()
	if before.GetVariant() != tablev1.Variant_VARIANT_PUNTO_BANCO {
		t.Fatalf("variant %s", before.GetVariant())
	}
	tie := false
	for _, b := range before.GetBets() {
		if b.GetBet() == "tie" && b.GetPays() == "9 to 1" {
			tie = true
		}
	}
	if !tie {
		t.Errorf("the table's tie price is not the one priced: %v", before.GetBets())
	}
	if cards(before) != 312 {
		t.Errorf("before its first coup (its players' seeds, then the burn) the shoe holds %d cards, want 312", cards(before))
	}
	h.mustPBBet(id, "alice", tablev1.BetSpot_BET_SPOT_BANK, 100)
	cp := h.closeWindow(id).GetLastCoup()
	dealt := int32(len(cp.GetPlayerCards()) + len(cp.GetBankerCards()))
	if got := cards(odds()); got != cards(before)-3-dealt {
		t.Errorf("after a burn of 3 and a coup of %d cards the shoe holds %d, before %d", dealt, got, cards(before))
	}
}
