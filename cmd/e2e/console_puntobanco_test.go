package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestConsolePuntoBanco plays three coups of punto banco in the table
// console from two browser sessions against the real stack: alice, seated,
// bets on the bank, bob, from behind without a seat, on the player, both
// from the layout's spot buttons. The certification shoe deals, in order
// (player, bank, player, bank), all naturals:
//
//  1. player 8C KC (8), bank 9D QD (9): the bank wins;
//  2. player 9H QH (9), bank 4S 4D (8, a bank pair): the player wins;
//  3. player 9C KH (9), bank 9S JH (9): a tie.
//
// After each coup both pages must show the same cards face up, both bets
// with what they won or lost, the result, each viewer's own balance as the
// wallet has it, and the roads drawn: one bead per coup in its winner's
// colour, the big road's cells. A bet under the table minimum shows its
// plain message. A croupier's lobby follows the table live (seats, state)
// and creates a table of each of the four games. Screenshots:
// pb-*.png and pb-roads.png under cmd/e2e/test-output/console/.
func TestConsolePuntoBanco(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "alice", "bob")
	if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/float", AccountId: "house:bank", Amount: 100000}); err != nil {
		t.Fatal(err)
	}
	order := append([]string{"8C", "9D", "KC", "QD", "9H", "4S", "QH", "4D", "9C", "9S", "KH", "JH"}, pbShoeOrder(60)[20:]...)
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: t.Name() + "/shoe", Cards: order, CutCardFromEnd: 8, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	zero := int32(0)
	// A betting window long enough for both pages to bet in it: it opens
	// with alice's bet; bob bets right after her.
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table", ShoeId: sh.GetShoe().GetShoeId(),
		Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{
			PairBets: true, BettingWindowMs: 8000, ResultPauseMs: &zero, CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	addr := st.GatewayHTTPAddr

	// The croupier's lobby shows the table: its game, stakes and seats.
	croupier := b.open(addr, "croupier", "")
	row := `document.querySelector('#tables tr[data-table="` + id + `"]')`
	croupier.do("sees the table in the lobby", waitFor(row+` !== null`))
	if got := croupier.eval(row + `.textContent`); !strings.Contains(got, "punto banco") || !strings.Contains(got, "bets 1.00+") || !strings.Contains(got, "0/14 (14 free)") {
		t.Errorf("the lobby shows the table as %q", got)
	}

	alice, bob := b.open(addr, "alice", "?table="+id), b.open(addr, "bob", "?table="+id)
	for _, p := range []*page{alice, bob} {
		p.do("sees the layout", waitFor(`document.getElementById('game-name').dataset.game === 'pb'`), stateIs("TABLE_STATE_BETTING"))
		for _, spot := range []string{"BANK", "PLAYER", "TIE", "BANK_NATURAL", "PLAYER_PAIR", "BANK_PAIR"} {
			if p.eval(`String(document.getElementById('spot-`+spot+`') !== null && document.getElementById('spot-`+spot+`').checkVisibility())`) != "true" {
				t.Errorf("%s's page has no %s spot", p.who, spot)
			}
		}
		if p.eval(`String(document.getElementById('banco').checkVisibility() || document.getElementById('draw').checkVisibility())`) != "false" {
			t.Errorf("%s's punto banco page shows chemin de fer's banco or draw", p.who)
		}
	}
	alice.do("sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	// The lobby follows without a click.
	croupier.do("sees alice seated in the lobby", waitFor(row+`.querySelector('.seats').textContent === '1/14 (13 free)'`))

	// A bet under the table minimum: refused, with its plain message.
	bob.do("bets under the minimum", chromedp.SetValue(chromedp.ID("bet-amount"), "0.50"), press("spot-PLAYER"), errorShown("BET_OUT_OF_LIMITS"))
	if e := bob.text("error"); !strings.HasPrefix(e, "That bet is outside the table's limits") {
		t.Errorf("bob's refused bet shows %q", e)
	}

	type coup struct {
		player, bank string
		result       string
		winner       string
		aliceNet     int64 // on 500 on the bank
		bobNet       int64 // on 300 on the player
	}
	coups := []coup{
		{"8C KC", "9D QD", "player 8, bank 9: bank wins (natural)", "bank", 475, -300},
		{"9H QH", "4S 4D", "player 9, bank 8: player wins (natural), bank pair", "player", -500, 300},
		{"9C KH", "9S JH", "player 9, bank 9: tie (natural)", "tie", 0, 0},
	}
	balances := map[string]int64{"alice": 5000, "bob": 5000}
	for i, cp := range coups {
		n := i + 1
		alice.do(fmt.Sprintf("bets on the bank in coup %d", n), stateIs("TABLE_STATE_BETTING"),
			chromedp.SetValue(chromedp.ID("bet-amount"), "5"), press("spot-BANK"),
			waitFor(`[...document.querySelectorAll('#bets li')].some(li => li.dataset.player === 'alice' && li.dataset.spot === 'BANK')`))
		bob.do(fmt.Sprintf("bets on the player in coup %d", n),
			chromedp.SetValue(chromedp.ID("bet-amount"), "3"), press("spot-PLAYER"),
			waitFor(`[...document.querySelectorAll('#bets li')].some(li => li.dataset.player === 'bob' && li.dataset.spot === 'PLAYER')`))
		if n == 1 {
			// Both bets, as each viewer sees them, in the order made.
			alice.do("sees bob's bet", waitFor(`document.querySelectorAll('#bets li').length === 2`))
			if got := alice.eval(`[...document.querySelectorAll('#bets li')].map(li => li.textContent).join(' | ')`); got != "alice (you) 5.00 on bank | bob 3.00 on player" {
				t.Errorf("alice sees the bets %q", got)
			}
			bob.shot("pb-1-bob-bets.png")
		}
		balances["alice"] += cp.aliceNet
		balances["bob"] += cp.bobNet
		for _, p := range []*page{alice, bob} {
			p.do(fmt.Sprintf("sees coup %d settled", n),
				waitFor(fmt.Sprintf(`document.querySelectorAll('#bead-plate circle.bead').length === %d && document.getElementById('result').dataset.settled === 'true'`, n)),
				p.balanceIs(balances[p.who]))
			if pl, bk := p.hand("player"), p.hand("banker"); pl != cp.player || bk != cp.bank {
				t.Errorf("coup %d: %s sees player %q bank %q, want %q %q", n, p.who, pl, bk, cp.player, cp.bank)
			}
			if r := p.text("result"); !strings.Contains(r, cp.result) {
				t.Errorf("coup %d: %s is shown the result %q, want %q", n, p.who, r, cp.result)
			}
			winners := p.eval(`[...document.querySelectorAll('#bead-plate circle.bead')].map(c => c.dataset.winner).join(' ')`)
			var want []string
			for _, c := range coups[:n] {
				want = append(want, c.winner)
			}
			if winners != strings.Join(want, " ") {
				t.Errorf("coup %d: %s's bead plate shows %q, want %q", n, p.who, winners, strings.Join(want, " "))
			}
		}
		for who, want := range balances {
			if got := c.balance(t, "player:"+who); got != want {
				t.Errorf("after coup %d the wallet has %d for %s, want %d", n, got, who, want)
			}
		}
		if n == 1 {
			if got := bob.eval(`[...document.querySelectorAll('#bets li')].map(li => li.textContent).join(' | ')`); got != "alice 5.00 on bank → won 5.00 less 0.25 | bob (you) 3.00 on player → lost 3.00" {
				t.Errorf("bob sees the settled bets %q", got)
			}
		}
	}
	// The roads after the three coups: two big road cells (bank, then the
	// player with the tie after it), a bank pair's dot on the second bead.
	bigRoad := bob.eval(`[...document.querySelectorAll('#big-road circle.cell')].map(c => c.dataset.winner).join(' ') + '/' + document.querySelectorAll('#big-road .tie').length + '/' + document.querySelectorAll('#bead-plate .pair').length`)
	if bigRoad != "bank player/1/1" {
		t.Errorf("bob's big road (cells/ties/pairs): %q, want %q", bigRoad, "bank player/1/1")
	}
	if got := bob.text("road-counts"); got != "shoe 1: bank 1 · player 1 · tie 1" {
		t.Errorf("bob's road counts: %q", got)
	}
	bob.shot("pb-2-bob-after-three-coups.png")
	alice.shot("pb-2-alice-after-three-coups.png")
	bob.shotOf("#roads", "pb-roads.png")
	bob.shots("pb-roads-result-bob")

	// A table of each game, created from the lobby.
	for _, g := range []struct{ variant, key, name string }{
		{"VARIANT_CHEMIN_DE_FER", "cf", "chemin de fer"}, {"VARIANT_PUNTO_BANCO", "pb", "punto banco"},
		{"VARIANT_BACCARAT_BANQUE", "banque", "baccarat banque"}, {"VARIANT_OLD_BACCARAT", "old", "old baccarat"},
	} {
		croupier.do("creates a table of "+g.name, chromedp.SetValue(chromedp.ID("new-game"), g.variant), press("create-table"),
			waitFor(`document.getElementById('game-name').dataset.game === '`+g.key+`'`),
			waitFor(`document.querySelectorAll('#tables tr[data-game="`+g.key+`"]').length >= 1`))
	}
	lobby := croupier.eval(`[...document.querySelectorAll('#tables tr')].map(tr => tr.dataset.game + ':' + tr.querySelector('.stakes').textContent).join(' | ')`)
	for _, want := range []string{"cf:bank from 1.00", "banque:bank from 10.00, bets 1.00+", "old:bank from 100.00, stakes 1.00+"} {
		if !strings.Contains(lobby, want) {
			t.Errorf("the lobby %q lacks %q", lobby, want)
		}
	}
	croupier.shot("pb-3-croupier-lobby.png")
	croupier.do("sees the lobby alone", chromedp.Evaluate[chromedp.Void](`document.getElementById('table-view').hidden = true`))
	croupier.shots("lobby-croupier")
}
