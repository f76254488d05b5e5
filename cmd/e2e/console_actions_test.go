package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// visibleActions is the JS of the ids of the table's controls a page
// shows (buttons of #actions, the punto banco spots included), sorted.
const visibleActions = `[...document.querySelectorAll('#actions button')].filter(b => b.checkVisibility()).map(b => b.id).sort().join(' ')`

// showsActions checks that the page comes to show exactly the controls
// want (ids, any order; "" none) and keeps showing them.
func (p *page) showsActions(step string, want ...string) {
	t := p.b.t
	t.Helper()
	w := strings.Join(slices.Sorted(slices.Values(want)), " ")
	err := chromedp.Do(p.ctx, chromedp.Poll[chromedp.Void](visibleActions+` === '`+w+`'`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		t.Errorf("%s, %s is shown the actions %q, want %q", step, p.who, p.eval(visibleActions), w)
		return
	}
	if w == "" && p.eval(`document.getElementById('no-action').textContent`) == "" {
		t.Errorf("%s, %s, who may do nothing, is not told so", step, p.who)
	}
}

// TestConsoleShowsOnlyWhatTheViewerCanDo: at each table the console shows
// each viewer only the actions he may take now, by game, role and state
// (the issue: at bob's draw decision he was shown Sit down, Take the bank,
// Bid, Raise, Bet and Banco!). The sets below are the rules' (RULES.md),
// written out by hand for each step:
//
//   - chemin de fer (CF-FIRST-BANKER, CF-BET-ORDER, CF-GALLERY, CF-PASS,
//     CF-PLAYER-DRAW, CF-BANKER-DRAW): before anyone sits; the bank offered
//     to alice; the betting, in bob's turn then in carol's (the gallery),
//     alice holding the bank; bob's decision, then alice's; between coups,
//     the bank offered to bob. The croupier closes between coups and voids
//     a coup in play;
//   - punto banco: a player bets on the layout's spots from behind, and
//     leaves once seated;
//   - baccarat banque (BQ-BANK, BQ-BETS): the auction of the bank, the
//     highest bidder neither leaving nor declining; the betting turn;
//   - the old baccarat (OLD-BANKER, OLD-STAKE, OLD-CUT): the punters
//     stake, each once; the banker moves the top cards.
func TestConsoleShowsOnlyWhatTheViewerCanDo(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	startBrowser(t) // or the skip, before the stack
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 20000, "alice", "bob", "carol")
	addr := st.GatewayHTTPAddr
	shoe := func(t *testing.T, name string, cards ...string) string {
		t.Helper()
		order := append([]string(nil), cards...)
		for len(order) < 40 {
			order = append(order, "KD")
		}
		sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{RequestId: "actions/shoe/" + name, Cards: order, TestShoe: true})
		if err != nil {
			t.Fatal(err)
		}
		return sh.GetShoe().GetShoeId()
	}
	table := func(t *testing.T, name string, req *tablev1.CreateTableRequest) string {
		t.Helper()
		req.RequestId = "actions/table/" + name
		tb, err := c.table.CreateTable(as(t, "operator"), req)
		if err != nil {
			t.Fatal(err)
		}
		return "?table=" + tb.GetTable().GetTableId()
	}

	// Each game in a browser of its own (a browser lives 5 minutes).
	t.Run("chemin de fer", func(t *testing.T) {
		actionsOfChemin(t, addr, table(t, "cf", &tablev1.CreateTableRequest{ShoeId: shoe(t, "cf", "2C", "KD", "3D", "5H", "4S", "9C"), HouseRules: certificationRules()}))
	})
	t.Run("punto banco", func(t *testing.T) {
		actionsOfPuntoBanco(t, addr, table(t, "pb", &tablev1.CreateTableRequest{ShoeId: shoe(t, "pb"), Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
			PuntoBancoRules: &tablev1.PuntoBancoRules{PairBets: true, CertificationRealMoney: true}}))
	})
	t.Run("baccarat banque", func(t *testing.T) {
		actionsOfBanque(t, addr, table(t, "banque", &tablev1.CreateTableRequest{ShoeId: shoe(t, "banque"), Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE,
			BanqueRules: &tablev1.BanqueRules{CertificationRealMoney: true}}))
	})
	t.Run("old baccarat", func(t *testing.T) {
		actionsOfOldBaccarat(t, addr, table(t, "old", &tablev1.CreateTableRequest{ShoeId: shoe(t, "old"), Variant: tablev1.Variant_VARIANT_OLD_BACCARAT,
			OldBaccaratRules: &tablev1.OldBaccaratRules{CertificationRealMoney: true}}))
	})
}

// actionsOfChemin: TestConsoleShowsOnlyWhatTheViewerCanDo at the chemin
// de fer table q, on TestConsolePlaysACoup's shoe: bob's decision on 5,
// then alice's option; the bank loses.
func actionsOfChemin(t *testing.T, addr, q string) {
	b := startBrowser(t)
	alice, bob, carol, croupier := b.open(addr, "alice", q), b.open(addr, "bob", q), b.open(addr, "carol", q), b.open(addr, "croupier", q)
	alice.showsActions("before anyone sits", "sit", "gallery-join")
	croupier.showsActions("before anyone sits", "close")
	alice.do("sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	bob.do("sits", waitFor(`document.querySelectorAll('#seats li').length === 1`), press("sit"), stateIs("TABLE_STATE_OFFERING_BANK"))
	carol.do("joins the gallery", press("gallery-join"), waitFor(`document.getElementById('gallery').textContent.includes('carol')`))
	alice.showsActions("the bank offered to alice", "accept-bank", "decline-bank", "leave")
	bob.showsActions("the bank offered to alice", "leave")
	carol.showsActions("the bank offered to alice", "leave")
	croupier.showsActions("the bank offered to alice", "close")

	alice.do("takes the bank", turnIs("alice"), chromedp.SetValue(chromedp.ID("bank-amount"), "10"), press("accept-bank"), stateIs("TABLE_STATE_BETTING"))
	bob.do("sees his turn to bet", turnIs("bob"))
	bob.showsActions("bob's turn to bet", "bet", "banco", "decline-bet", "leave")
	alice.showsActions("bob's turn to bet, no bet yet", "pass-bank", "leave")
	carol.do("waits", turnIs("bob"))
	carol.showsActions("bob's turn to bet", "leave")
	croupier.showsActions("bob's turn to bet, no bet yet", "close")

	bob.do("bets 6 of the bank's 10", chromedp.SetValue(chromedp.ID("bet-amount"), "6"), press("bet"), turnIs("carol"))
	carol.do("sees her turn", turnIs("carol"))
	carol.showsActions("carol's turn (the gallery) to bet", "bet", "banco", "decline-bet", "leave")
	bob.showsActions("carol's turn, bob's bet made", "")
	alice.showsActions("carol's turn, a bet made", "")
	croupier.showsActions("carol's turn, a bet made", "void")

	carol.do("passes", press("decline-bet"), stateIs("TABLE_STATE_DECISION"))
	bob.do("sees his decision", stateIs("TABLE_STATE_DECISION"), turnIs("bob"))
	bob.showsActions("bob's draw decision", "draw", "stand")
	bob.shots("cf-decision-bob")
	alice.showsActions("bob's draw decision", "")
	carol.showsActions("bob's draw decision", "leave")
	croupier.showsActions("bob's draw decision", "void")

	bob.do("draws", press("draw"), turnIs("alice"))
	alice.do("sees her decision", turnIs("alice"))
	alice.showsActions("alice's draw decision", "draw", "stand")
	bob.showsActions("alice's draw decision", "")

	alice.do("draws", press("draw"), stateIs("TABLE_STATE_OFFERING_BANK"))
	bob.do("is offered the bank", stateIs("TABLE_STATE_OFFERING_BANK"), turnIs("bob"))
	bob.showsActions("between coups, the bank offered to bob", "accept-bank", "decline-bank", "leave")
	alice.showsActions("between coups, the bank offered to bob", "leave")
	carol.showsActions("between coups", "leave")
	croupier.showsActions("between coups", "close")

	bob.shot("actions-bob-between-coups.png")
}

// actionsOfPuntoBanco: the layout's spots, from behind or seated, at the
// punto banco table q.
func actionsOfPuntoBanco(t *testing.T, addr, q string) {
	b := startBrowser(t)
	spots := []string{"spot-BANK", "spot-PLAYER", "spot-TIE", "spot-BANK_NATURAL", "spot-PLAYER_PAIR", "spot-BANK_PAIR"}
	pb := b.open(addr, "alice", q)
	pb.do("sees the layout", stateIs("TABLE_STATE_BETTING"))
	pb.showsActions("punto banco, from behind", append([]string{"sit"}, spots...)...)
	pb.do("sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	pb.showsActions("punto banco, seated", append([]string{"leave"}, spots...)...)
	b.open(addr, "croupier", q).showsActions("punto banco, no bet", "close")

}

// actionsOfBanque: the auction of the bank, then a betting turn, at the
// baccarat banque table q.
func actionsOfBanque(t *testing.T, addr, q string) {
	b := startBrowser(t)
	bq := playersOf(b.open(addr, "alice", q), b.open(addr, "bob", q), b.open(addr, "carol", q))
	bq["alice"].showsActions("banque, not seated", "sit")
	for _, who := range []string{"alice", "bob", "carol"} {
		side := map[string]string{"alice": "BANQUE_SIDE_RIGHT", "bob": "BANQUE_SIDE_RIGHT", "carol": "BANQUE_SIDE_LEFT"}[who]
		bq[who].do("sits on a side", chromedp.SetValue(chromedp.ID("side"), side), press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	}
	bq["alice"].do("sees the auction", stateIs("TABLE_STATE_AUCTION"))
	bq["alice"].showsActions("banque, the auction", "bid-bank", "decline-bank", "leave")
	bq["alice"].do("bids", chromedp.SetValue(chromedp.ID("bank-amount"), "20"), press("bid-bank"),
		waitFor(`document.getElementById('offered').textContent.includes('highest bid 20.00')`))
	bq["alice"].showsActions("banque, the auction, alice the highest bidder", "bid-bank")
	bq["bob"].do("sees the bid", waitFor(`document.getElementById('offered').textContent.includes('highest bid 20.00')`))
	bq["bob"].showsActions("banque, the auction, outbid", "bid-bank", "decline-bank", "leave")
	bq["bob"].do("declines", press("decline-bank"))
	bq["carol"].do("declines", stateIs("TABLE_STATE_AUCTION"), press("decline-bank"))
	bq["alice"].do("holds the bank", stateIs("TABLE_STATE_BETTING"))
	bq["alice"].showsActions("banque, alice's bank, no bet yet", "pass-bank", "leave")
	bq["bob"].do("sees the betting", stateIs("TABLE_STATE_BETTING"), waitFor(`['bob', 'carol'].includes(document.getElementById('turn').dataset.player)`))
	turn := bq["bob"].eval(`document.getElementById('turn').dataset.player`)
	other := map[string]string{"bob": "carol", "carol": "bob"}[turn]
	bq[turn].do("sees his turn", turnIs(turn))
	bq[turn].showsActions("banque, his turn to bet", "bet", "banco", "decline-bet", "leave")
	bq[other].do("sees the turn", turnIs(turn))
	bq[other].showsActions("banque, another's turn to bet", "leave")

}

// actionsOfOldBaccarat: the punters stake, then the banker's cut, at the
// old baccarat table q.
func actionsOfOldBaccarat(t *testing.T, addr, q string) {
	b := startBrowser(t)
	old := playersOf(b.open(addr, "alice", q), b.open(addr, "bob", q), b.open(addr, "carol", q))
	for _, who := range []string{"alice", "bob", "carol"} {
		old[who].do("sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	}
	old["alice"].do("bids for the bank", stateIs("TABLE_STATE_AUCTION"), chromedp.SetValue(chromedp.ID("bank-amount"), "100"), press("bid-bank"),
		waitFor(`document.getElementById('offered').textContent.includes('highest bid 100.00')`))
	for _, who := range []string{"bob", "carol"} {
		old[who].do("declines to bid", waitFor(`document.getElementById('offered').textContent.includes('highest bid 100.00')`), press("decline-bank"))
	}
	old["bob"].do("sees the staking", stateIs("TABLE_STATE_BETTING"))
	old["bob"].showsActions("old game, staking", "bet", "decline-bet", "leave")
	old["alice"].showsActions("old game, staking, the banker", "")
	old["bob"].do("stakes", chromedp.SetValue(chromedp.ID("bet-amount"), "10"), press("bet"),
		waitFor(`[...document.querySelectorAll('#bets li')].some(li => li.dataset.player === 'bob')`))
	old["bob"].showsActions("old game, staked", "")
	old["carol"].showsActions("old game, staking", "bet", "decline-bet", "leave")
	old["carol"].do("stakes", chromedp.SetValue(chromedp.ID("bet-amount"), "20"), press("bet"), stateIs("TABLE_STATE_DEALING"))
	old["alice"].do("is due to cut", stateIs("TABLE_STATE_DEALING"), turnIs("alice"))
	old["alice"].showsActions("old game, the banker's cut", "move-top")
	old["bob"].showsActions("old game, the banker's cut", "")
}
