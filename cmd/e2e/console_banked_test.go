package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// playersOf are the pages by player.
func playersOf(pages ...*page) map[string]*page {
	out := map[string]*page{}
	for _, p := range pages {
		out[p.who] = p
	}
	return out
}

// bankedTable opens a table as req asks, on a certification shoe that
// deals cards first, with alice, bob and carol funded with funds each, and
// their pages and a croupier's open on it.
func bankedTable(t *testing.T, funds int64, req *tablev1.CreateTableRequest, cards ...string) (alice, bob, carol, croupier *page) {
	t.Helper()
	b, st, c := consoleRig(t, funds, "alice", "bob", "carol")
	req.RequestId, req.ShoeId = t.Name(), (&crashRig{t: t, c: c}).preparedShoe(cards...)
	tb, err := c.table.CreateTable(as(t, "operator"), req)
	if err != nil {
		t.Fatal(err)
	}
	q := "?table=" + tb.GetTable().GetTableId()
	return b.open(st.GatewayHTTPAddr, "alice", q), b.open(st.GatewayHTTPAddr, "bob", q), b.open(st.GatewayHTTPAddr, "carol", q),
		b.open(st.GatewayHTTPAddr, "croupier", q)
}

// wantHands checks what each page shows of the coup's hands: for each
// viewer, hand key (data-hand) -> cards ("down" face down).
func wantHands(t *testing.T, step string, pages map[string]*page, want map[string]map[string]string) {
	t.Helper()
	for who, hands := range want {
		for key, cards := range hands {
			if got := pages[who].hand(key); got != cards {
				t.Errorf("%s, %s sees the %s hand %q, want %q", step, who, key, got, cards)
			}
		}
	}
}

// TestConsoleBaccaratBanque plays a coup of baccarat banque in the table
// console from three browser sessions on a certification shoe: alice and
// bob sit on the right, carol on the left (BQ-BETS); alice wins the
// bank's auction, the others declining (BQ-BANK); in the turns the table
// names, bob bets 500 on the right, carol 400 à cheval (BQ-CHEVAL). The
// right hand 2C 3D (5) is bob's to play: he sees the croupier's advice
// and draws 4S (9); the left 7H KS (7) stands; the banker's 4C 2H (6) is
// alice's to play freely (BQ-PLAY): she stands. The bank loses both
// tables. At each decision every page shows only its own hand's cards.
func TestConsoleBaccaratBanque(t *testing.T) {
	// Dealt right, left, banker, twice; then the right hand's draw.
	alice, bob, carol, croupier := bankedTable(t, 10000, &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE,
		BanqueRules: &tablev1.BanqueRules{CertificationRealMoney: true}}, "2C", "7H", "4C", "3D", "KS", "2H", "4S")
	pages := playersOf(alice, bob, carol, croupier)

	for _, p := range []*page{alice, bob, carol} {
		side := "BANQUE_SIDE_RIGHT"
		if p == carol {
			side = "BANQUE_SIDE_LEFT"
		}
		p.do("sits on a side", waitFor(`document.getElementById('game-name').dataset.game === 'banque'`),
			chromedp.SetValue(chromedp.ID("side"), side), press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	}
	alice.do("bids for the bank", stateIs("TABLE_STATE_AUCTION"), chromedp.SetValue(chromedp.ID("bank-amount"), "20"), press("bid-bank"),
		waitFor(`document.getElementById('offered').textContent.includes('highest bid 20.00')`))
	bob.do("declines to bid", waitFor(`document.getElementById('offered').textContent.includes('highest bid 20.00')`), press("decline-bank"))
	carol.do("declines to bid", press("decline-bank"))
	alice.do("holds the bank", stateIs("TABLE_STATE_BETTING"), waitFor(`document.getElementById('banker').textContent === 'alice (you)'`))
	if s := carol.text("seats"); !strings.Contains(s, "carol (you) (left side") || !strings.Contains(s, "bob (right side") {
		t.Errorf("carol sees the seats %q", s)
	}

	// The betting turns, as the table names them.
	bets := map[string]struct{ side, amount string }{"bob": {"BANQUE_SIDE_RIGHT", "5"}, "carol": {"BANQUE_SIDE_CHEVAL", "4"}}
	for len(bets) > 0 {
		var left []string
		for who := range bets {
			left = append(left, "'"+who+"'")
		}
		alice.do("sees a betting turn", waitFor(`[`+strings.Join(left, ", ")+`].includes(document.getElementById('turn').dataset.player)`))
		who := alice.eval(`document.getElementById('turn').dataset.player`)
		bet := bets[who]
		p := pages[who]
		p.do("bets in his turn", turnIs(who), waitFor(`document.getElementById('prompt').classList.contains('mine')`),
			chromedp.SetValue(chromedp.ID("bet-side"), bet.side), chromedp.SetValue(chromedp.ID("bet-amount"), bet.amount), press("bet"),
			waitFor(`[...document.querySelectorAll('#bets li')].some(li => li.dataset.player === '`+who+`')`))
		delete(bets, who)
	}

	// bob's decision on the right hand (5).
	bob.do("decides the right hand", stateIs("TABLE_STATE_DECISION"), turnIs("bob"),
		waitFor(`document.getElementById('prompt').textContent.includes('right hand')`),
		waitFor(`document.getElementById('advice-text').textContent !== ''`))
	if a := bob.text("advice-text"); !strings.Contains(a, "draw EV") && !strings.Contains(a, "[ODDS_UNAVAILABLE]") {
		t.Errorf("bob's advice: %q", a)
	}
	for _, p := range []*page{alice, carol, croupier} {
		p.do("sees bob's decision", stateIs("TABLE_STATE_DECISION"), turnIs("bob"))
	}
	wantHands(t, "at bob's decision", pages, map[string]map[string]string{
		"bob":   {"right": "2C 3D", "left": "down down", "banker": "down down"},
		"carol": {"right": "down down", "left": "7H KS", "banker": "down down"},
		"alice": {"right": "down down", "left": "down down", "banker": "4C 2H"},
		// Staff see no hole card.
		"croupier": {"right": "down down", "left": "down down", "banker": "down down"},
	})
	if b := bob.eval(`[...document.querySelectorAll('#bets li')].map(li => li.textContent).join(' | ')`); !strings.Contains(b, "bob (you) 5.00 right") || !strings.Contains(b, "carol 4.00 à cheval") {
		t.Errorf("bob sees the bets %q", b)
	}
	bob.shot("banque-1-bob-decides.png")
	bob.do("draws", press("draw"), turnIs("alice"))

	// alice's decision on the banker's hand.
	alice.do("decides the banker's hand", turnIs("alice"), waitFor(`document.getElementById('prompt').textContent.includes('banker hand')`),
		waitFor(`document.getElementById('advice-text').textContent !== ''`))
	wantHands(t, "at alice's decision", pages, map[string]map[string]string{
		"bob":   {"right": "2C 3D 4S", "banker": "down down"},
		"alice": {"right": "down down 4S", "banker": "4C 2H"},
	})
	alice.shot("banque-2-alice-decides.png")
	alice.do("stands", press("stand"), waitFor(`document.getElementById('result').dataset.settled === 'true'`))
	for _, p := range []*page{alice, bob, carol} {
		p.do("sees the result", waitFor(`document.getElementById('result').dataset.settled === 'true'`))
		wantHands(t, "after the result", pages, map[string]map[string]string{p.who: {"right": "2C 3D 4S", "left": "7H KS", "banker": "4C 2H"}})
		if r := p.text("result"); !strings.Contains(r, "right: the bank loses; left: the bank loses") {
			t.Errorf("%s is shown the result %q", p.who, r)
		}
		if d := p.text("decisions"); !strings.Contains(d, "right carte") || !strings.Contains(d, "banker non") {
			t.Errorf("%s is shown the decisions %q", p.who, d)
		}
		// The fee of the auction (2.5% of 2000) and the bank lost on both
		// tables: 900.
		p.do("sees the balance", p.balanceIs(map[string]int64{"alice": 9050, "bob": 10500, "carol": 10400}[p.who]))
	}
	carol.shot("banque-3-carol-result.png")
}

// TestConsoleOldBaccarat plays a coup of the old baccarat in the table
// console from three browser sessions on a certification shoe: alice wins
// the bank's auction with 10000, bob and carol declining (OLD-BANKER);
// bob stakes 1000, carol 2000 (OLD-STAKE); alice moves the two top cards
// (QH QS) to the bottom (OLD-CUT, MoveTopCards); the deal goes round and
// back (OLD-DEAL): bob 2C KD (12), carol 7H KS (17), the banker 4C 2D
// (6). bob, on 2, may draw (OLD-DRAW): no advice is shown (the old game
// has none) and he draws 5H (17). Both punters beat the banker's 6.
func TestConsoleOldBaccarat(t *testing.T) {
	alice, bob, carol, croupier := bankedTable(t, 20000, &tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT,
		OldBaccaratRules: &tablev1.OldBaccaratRules{CertificationRealMoney: true}}, "QH", "QS", "2C", "7H", "4C", "KS", "KD", "2D", "5H")
	pages := playersOf(alice, bob, carol, croupier)
	for _, p := range []*page{alice, bob, carol} {
		p.do("sits", waitFor(`document.getElementById('game-name').dataset.game === 'old'`), press("sit"),
			waitFor(`document.querySelector('#seats li.me') !== null`))
	}
	alice.do("bids for the bank", stateIs("TABLE_STATE_AUCTION"), chromedp.SetValue(chromedp.ID("bank-amount"), "100"), press("bid-bank"),
		waitFor(`document.getElementById('offered').textContent.includes('highest bid 100.00')`))
	for _, p := range []*page{bob, carol} {
		p.do("declines to bid", waitFor(`document.getElementById('offered').textContent.includes('highest bid 100.00')`), press("decline-bank"))
	}
	for who, amount := range map[string]string{"bob": "10", "carol": "20"} {
		pages[who].do("stakes", stateIs("TABLE_STATE_BETTING"), waitFor(`document.getElementById('banker').textContent === 'alice'`),
			chromedp.SetValue(chromedp.ID("bet-amount"), amount), press("bet"),
			waitFor(`[...document.querySelectorAll('#bets li')].some(li => li.dataset.player === '`+who+`')`))
	}
	// The first coup of the shoe waits for the banker's move.
	alice.do("moves two top cards", stateIs("TABLE_STATE_DEALING"), turnIs("alice"),
		waitFor(`document.getElementById('prompt').textContent.includes('move of top cards')`),
		chromedp.SetValue(chromedp.ID("move-count"), "2"), press("move-top"))
	bob.do("decides", stateIs("TABLE_STATE_DECISION"), turnIs("bob"), waitFor(`document.getElementById('prompt').classList.contains('mine')`),
		waitFor(`document.getElementById('advice-text').dataset.reason === 'WRONG_VARIANT'`))
	if a := bob.text("advice-text"); a != "" {
		t.Errorf("the old game's decision shows advice %q", a)
	}
	for _, p := range []*page{alice, carol} {
		p.do("sees bob's decision", stateIs("TABLE_STATE_DECISION"), turnIs("bob"))
	}
	wantHands(t, "at bob's decision", pages, map[string]map[string]string{
		"bob":   {"punter-bob": "2C KD", "punter-carol": "down down", "banker": "down down"},
		"carol": {"punter-bob": "down down", "punter-carol": "7H KS", "banker": "down down"},
		"alice": {"punter-bob": "down down", "punter-carol": "down down", "banker": "4C 2D"},
	})
	bob.shot("old-1-bob-decides.png")
	bob.do("draws", press("draw"), waitFor(`document.getElementById('result').dataset.settled === 'true'`))
	for _, p := range []*page{alice, bob, carol} {
		p.do("sees the result", waitFor(`document.getElementById('result').dataset.settled === 'true'`))
		wantHands(t, "after the result", pages, map[string]map[string]string{p.who: {"punter-bob": "2C KD 5H", "punter-carol": "7H KS", "banker": "4C 2D"}})
		if r := p.text("result"); !strings.Contains(r, "bob: the bank loses; carol: the bank loses") {
			t.Errorf("%s is shown the result %q", p.who, r)
		}
		p.do("sees the balance", p.balanceIs(map[string]int64{"alice": 17000, "bob": 21000, "carol": 22000}[p.who]))
	}
	if l := alice.eval(`[...document.querySelectorAll('#log li')].map(li => li.textContent).join('\n')`); !strings.Contains(l, "alice moves 2 cards from the top to the bottom") {
		t.Errorf("alice's event log:\n%s", l)
	}
	carol.shot("old-2-carol-result.png")

	// bob stakes in the next coup; the croupier voids it, the button
	// naming the coup, and bob's stake is returned (CF-ERROR).
	bob.do("stakes again", stateIs("TABLE_STATE_BETTING"), chromedp.SetValue(chromedp.ID("bet-amount"), "5"), press("bet"),
		waitFor(`document.getElementById('balance').dataset.held === '500'`))
	croupier.do("voids coup 2", waitFor(`document.getElementById('void').textContent === 'Void coup 2'`),
		chromedp.SetValue(chromedp.ID("reason"), "a card faced in the deal"), press("void"),
		waitFor(`document.getElementById('result').textContent === 'Coup 2 voided: a card faced in the deal'`))
	bob.do("sees the coup voided", waitFor(`document.getElementById('result').textContent === 'Coup 2 voided: a card faced in the deal'`),
		waitFor(`document.getElementById('balance').dataset.held === '0'`), bob.balanceIs(21000))
	croupier.shot("old-3-croupier-voided.png")
}
