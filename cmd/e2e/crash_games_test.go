package e2e

import (
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// The crash tests of the games on a core (run by TestCrashAtEveryStep,
// crash_test.go). The failpoints are table-svc's (failpoint_on.go):
// "core-hold" (a hold placed, the request not stored), a method name (the
// action stored, the coup not advanced), "core-<effect>" (an effect
// carried out, its result not stored: each card "core-deal_card-N", the
// settlement, the bank's fee, the move of top cards); "#N" for the Nth
// time a step is reached.

// crashGame is a game whose coup is played once per failpoint.
type crashGame struct {
	name       string
	failpoints []string
	// calm: the table is not moving by itself, as the client waits to
	// see it after a restart (nil: neither dealing nor settling).
	calm func(*tablev1.Table) bool
	run  func(r *crashRig)
}

var coreCrashGames = []crashGame{
	{
		name: "punto_banco",
		// The bet killed after it is stored is the second: the first one
		// opens the 1 s betting window, which runs on while table-svc is
		// down, so a bet sent again after the restart could find it closed
		// (a hold not stored is the first bet's, before the window).
		failpoints: []string{"core-hold", "PlaceBet#2", "core-deal_card-1", "core-deal_card-2", "core-deal_card-3",
			"core-deal_card-4", "core-deal_card-5", "core-deal_card-6", "core-settle"},
		run: crashPuntoBanco,
	},
	{
		name:       "old_baccarat",
		failpoints: []string{"core-hold", "core-move_to_bottom", "core-deal_card-4", "core-settle"},
		run:        crashOldBaccarat,
	},
	{
		name: "banque",
		// "core-void_holds": bob's bid, outbid, released; "core-hold#3":
		// carol's bet (the first two holds are the bids); "PlaceBet#2":
		// bob's, the last, stored before the deal.
		failpoints: []string{"core-void_holds", "core-charge_fee", "core-hold#3", "PlaceBet#2", "core-deal_card-5", "core-settle"},
		calm:       banqueCalm,
		run:        crashBanque,
	},
}

// settled polls until the table's coup is settled (by the service alone,
// started again if it dies on the way), checks that table-svc died at its
// failpoint and that one coup was played, and returns it.
func (r *crashRig) settled(id string) (*tablev1.Table, *tablev1.Coup) {
	r.t.Helper()
	tbl := r.poll(id, "the coup to be settled", func(tbl *tablev1.Table) bool { return tbl.GetLastCoup().GetSettled() })
	if !r.crashed {
		r.t.Fatalf("table-svc never reached failpoint %s", r.failpoint)
	}
	if tbl.GetCoupsPlayed() != 1 {
		r.t.Fatalf("%d coups played, want 1: %v", tbl.GetCoupsPlayed(), tbl)
	}
	return tbl, tbl.GetLastCoup()
}

// bid bids for the bank.
func (r *crashRig) bid(id, p string, amount int64) {
	r.do("BidBank "+p, func(again string) error {
		_, err := r.c.table.BidBank(as(r.t, p), &tablev1.BidBankRequest{RequestId: "bid-" + p + again, TableId: id, PlayerId: p, Amount: amount})
		return err
	})
}

// decline declines to bid for the bank.
func (r *crashRig) decline(id string, players ...string) {
	for _, p := range players {
		r.do("DeclineBank "+p, func(again string) error {
			_, err := r.c.table.DeclineBank(as(r.t, p), &tablev1.DeclineBankRequest{RequestId: "decline-" + p + again, TableId: id, PlayerId: p})
			return err
		})
	}
}

// coupHands are a coup's punters' hands by holder.
func coupHands(cp *tablev1.Coup) map[string]string {
	out := map[string]string{}
	for _, h := range cp.GetHands() {
		out[h.GetHolderPlayerId()] = cardCodes(h.GetCards())
	}
	return out
}

// crashPuntoBanco: the house banks from its float (PB-BANK); alice bets
// on the bank, bob on the player; the 1 s window closes on the clock and
// the table deals and settles by itself (the client polls).
func crashPuntoBanco(r *crashRig) {
	t, c := r.t, r.c
	c.fund(t, 5000, "alice", "bob")
	if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/float", AccountId: "house:bank", Amount: 100000}); err != nil {
		t.Fatal(err)
	}
	// Player 2C 3D = 5 draws 4S (9); the banker KD 5H = 5, having given a
	// 4, draws 9C (4) (PB-TABLEAU): the player wins.
	id := r.createTable(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		ShoeId:          r.preparedShoe("2C", "KD", "3D", "5H", "4S", "9C"),
		PuntoBancoRules: &tablev1.PuntoBancoRules{BettingWindowMs: 1000, CertificationRealMoney: true}})
	r.join(id, 0, "alice", "bob")
	r.bet(id, "alice", 1000, tablev1.BetSpot_BET_SPOT_BANK, 0)
	r.bet(id, "bob", 500, tablev1.BetSpot_BET_SPOT_PLAYER, 0)
	_, cp := r.settled(id)
	if got := cardCodes(cp.GetPlayerCards()) + "|" + cardCodes(cp.GetBankerCards()); got != "2C 3D 4S|KD 5H 9C" {
		t.Errorf("cards %s, want 2C 3D 4S|KD 5H 9C", got)
	}
	if cp.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES || cp.GetPlayerTotal() != 9 || cp.GetBankerTotal() != 4 || cp.GetHouseNet() != 500 {
		t.Errorf("coup %v; want the player to win 9 to 4, the house to net 500", cp)
	}
	// The bank bet loses 1000, the player bet wins 500 even money.
	r.checkAccounts(110000, map[string]int64{"player:alice": 4000, "player:bob": 5500, "house:bank": 100500, "house:commission": 0}, nil)
}

// crashOldBaccarat: alice wins the bank's auction with 10000 (OLD-BANKER),
// bob and carol stake, alice moves the two top cards to the bottom
// (OLD-CUT), the deal goes round and back (OLD-DEAL) and the banker's
// natural 9 takes both stakes (OLD-NATURAL).
func crashOldBaccarat(r *crashRig) {
	t, c := r.t, r.c
	c.fund(t, 20000, "alice", "bob", "carol")
	// QH QS go to the bottom; then bob 2C, carol 7H, the banker 4C, carol
	// KS, bob 3D, the banker 5D.
	id := r.createTable(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT,
		ShoeId:           r.preparedShoe("QH", "QS", "2C", "7H", "4C", "KS", "3D", "5D"),
		OldBaccaratRules: &tablev1.OldBaccaratRules{CertificationRealMoney: true}})
	r.join(id, 0, "alice", "bob", "carol")
	r.bid(id, "alice", 10000)
	r.decline(id, "bob", "carol")
	r.bet(id, "bob", 1000, 0, 0)
	r.bet(id, "carol", 2000, 0, 0)
	r.do("MoveTopCards", func(again string) error {
		_, err := c.table.MoveTopCards(as(t, "alice"), &tablev1.MoveTopCardsRequest{RequestId: "move" + again, TableId: id, PlayerId: "alice", Count: 2})
		return err
	})
	tbl, cp := r.settled(id)
	if got := cardCodes(cp.GetBankerCards()); got != "4C 5D" || cp.GetBankerTotal() != 9 {
		t.Errorf("the banker's hand %s (%d), want 4C 5D (9)", got, cp.GetBankerTotal())
	}
	if h := coupHands(cp); h["bob"] != "2C 3D" || h["carol"] != "7H KS" || len(h) != 2 {
		t.Errorf("hands %v, want bob 2C 3D, carol 7H KS", h)
	}
	for _, h := range cp.GetHands() {
		if h.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS {
			t.Errorf("%s: %s against the banker's 9", h.GetHolderPlayerId(), h.GetOutcome())
		}
	}
	if tbl.GetBank() != 13000 {
		t.Errorf("bank %d after the coup, want 13000", tbl.GetBank())
	}
	// The bank (held) took both stakes: 10000 + 3000.
	r.checkAccounts(60000, map[string]int64{"player:alice": 23000, "player:bob": 19000, "player:carol": 18000, "house:commission": 0},
		map[string]int64{"player:alice": 13000})
}

// crashBanque: alice outbids bob (whose bid is released at once) and
// wins the bank's auction with 2000, paying the house its 2.5% (BQ-BANK); carol bets à cheval, bob on the right (BQ-BETS);
// the banker's natural beats both tables (BQ-CHEVAL).
func crashBanque(r *crashRig) {
	t, c := r.t, r.c
	c.fund(t, 10000, "alice", "bob", "carol")
	// Right 2C 3D = 5, left 7H KS = 7, banker 4C 5H = 9.
	id := r.createTable(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE,
		ShoeId:      r.preparedShoe("2C", "7H", "4C", "3D", "KS", "5H"),
		BanqueRules: &tablev1.BanqueRules{CertificationRealMoney: true}})
	r.join(id, tablev1.BanqueSide_BANQUE_SIDE_RIGHT, "alice", "bob")
	r.join(id, tablev1.BanqueSide_BANQUE_SIDE_LEFT, "carol")
	r.bid(id, "bob", 1500)
	r.bid(id, "alice", 2000)
	r.decline(id, "bob", "carol")
	r.bet(id, "carol", 400, 0, tablev1.BanqueSide_BANQUE_SIDE_CHEVAL)
	r.bet(id, "bob", 500, 0, tablev1.BanqueSide_BANQUE_SIDE_RIGHT)
	tbl, cp := r.settled(id)
	if got := cardCodes(cp.GetBankerCards()); got != "4C 5H" || cp.GetBankerTotal() != 9 {
		t.Errorf("the banker's hand %s (%d), want 4C 5H (9)", got, cp.GetBankerTotal())
	}
	if h := coupHands(cp); h["bob"] != "2C 3D" || h["carol"] != "7H KS" || len(h) != 2 {
		t.Errorf("hands %v, want bob 2C 3D (right), carol 7H KS (left)", h)
	}
	if tbl.GetBank() != 2900 {
		t.Errorf("bank %d after the coup, want 2900", tbl.GetBank())
	}
	// The fee 50 once; the bank (held) took both bets: 2000 + 900.
	r.checkAccounts(30000, map[string]int64{"player:alice": 10850, "player:bob": 9500, "player:carol": 9600, "house:commission": 50},
		map[string]int64{"player:alice": 2900})
}

// banqueCalm: neither dealing nor settling, nor an auction closed (no time
// limit running on a highest bid) whose fee the service has still to
// charge.
func banqueCalm(tbl *tablev1.Table) bool {
	feeDue := tbl.GetState() == tablev1.TableState_TABLE_STATE_AUCTION && tbl.GetHighestBid() > 0 && tbl.GetTurnDeadline() == nil
	return notDealing(tbl) && !feeDue
}
