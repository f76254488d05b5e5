package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// inFrench makes a tab's browser prefer French (navigator.language
// "fr-FR", as a French browser has it).
func inFrench() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64) chemmy-e2e", AcceptLanguage: "fr-FR,fr"})
		return err
	})
}

// feeWordings are fee rounds (as ListRounds gives them to bob) and how
// the console's history tells them in English and in French: a seat
// fee's round ("table/<table>/fee/<n>") and a bank auction fee's
// ("table/<table>/<auction>/fee"), charged 200 minor units of EUR
// (2.00), and a seat fee the wallet refused (cancelled).
var feeWordings = []struct{ round, en, fr string }{
	{`{coupId: "fee-table/T1/fee/3", tableId: "T1", state: "ROUND_STATE_SETTLED", commission: "200", currencyCode: "EUR", currencyExponent: 2, players: [{playerId: "bob", net: "-200"}]}`,
		"seat fee: 2.00 EUR", "droit de table : 2,00 EUR"},
	{`{coupId: "fee-table/T1/01KAUCTION/fee", tableId: "T1", state: "ROUND_STATE_SETTLED", commission: "200", currencyCode: "EUR", currencyExponent: 2, players: [{playerId: "bob", net: "-200"}]}`,
		"bank auction fee: 2.00 EUR", "droit d'enchère de la banque : 2,00 EUR"},
	{`{coupId: "fee-table/T1/fee/4", tableId: "T1", state: "ROUND_STATE_CANCELLED", currencyCode: "EUR", currencyExponent: 2, players: [{playerId: "bob"}]}`,
		"seat fee: not charged", "droit de table : non perçu"},
}

// TestConsoleSpeaksTheBrowsersLanguage: the console speaks French to a
// browser that prefers it, with the game's own terms (banco, la main
// passe, carte, non) and French numbers (50,00 EUR), and English to
// another. alice holds a bank of 10.00 EUR; in bob's turn to bet, his
// French page offers him Ponter, Banco ! and Pas de mise, alice's French
// page La main passe; an English page shows the same table in English.
// The header names his role (joueur / player) and the "Fair shoe" line
// of the certification table says it deals a prepared order, each in
// the page's language; at a punto banco table whose shoe takes seeds,
// the French line and a seed note (a browser without secure random
// numbers) are in French too. Fee rounds in his history are told as
// fees ("seat fee: 2.00 EUR", "droit de table : 2,00 EUR"; feeWordings).
func TestConsoleSpeaksTheBrowsersLanguage(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "alice", "bob")
	id := aliceBanks(t, c, "2C", "KD", "3D", "5H")
	q := "?table=" + id
	labels := `[...document.querySelectorAll('#actions button')].filter(b => b.checkVisibility()).map(b => b.textContent).join(' | ')`

	bob := b.openWith(st.GatewayHTTPAddr, "bob", q, inFrench())
	bob.do("sees his turn", turnIs("bob"), waitFor(`document.getElementById('prompt').classList.contains('mine')`),
		waitFor(`document.getElementById('balance').dataset.balance === '5000'`))
	if got := bob.eval(`document.documentElement.lang`); got != "fr" {
		t.Errorf("bob's French page has lang %q", got)
	}
	if got := bob.eval(labels); got != "Ponter | Banco ! | Pas de mise | Quitter la table" {
		t.Errorf("bob's French page offers %q", got)
	}
	if got := bob.text("prompt"); got != "À vous : ponter, banco ou passer (10,00 à couvrir)." {
		t.Errorf("bob's French prompt is %q", got)
	}
	if got := bob.text("balance"); got != "solde 50,00 EUR" {
		t.Errorf("bob's French balance is %q", got)
	}
	if got := bob.text("bank-chip"); got != "Banque 10,00 EUR · alice" {
		t.Errorf("bob's French page shows the bank as %q", got)
	}
	// The header's role and the "Fair shoe" line of a certification
	// table, in French.
	if got := bob.text("whoami"); got != "bob (joueur)" {
		t.Errorf("bob's French header says %q", got)
	}
	if got := bob.text("fair"); got != "un ordre préparé (sabot de certification) : pas de graines" {
		t.Errorf("bob's French Fair shoe line is %q", got)
	}
	// Fee rounds in the history (number 0, round id "fee-<wallet request
	// id>"), told by the history's wording (roundText) as fees, not
	// coups.
	for _, w := range feeWordings {
		if got := bob.eval(`roundText(` + w.round + `)`); got != w.fr {
			t.Errorf("bob's French history tells the round %s as %q, want %q", w.round, got, w.fr)
		}
	}
	bob.shots("cf-french-bob")

	alice := b.openWith(st.GatewayHTTPAddr, "alice", q, inFrench())
	alice.do("waits for bob", turnIs("bob"))
	if got := alice.eval(labels); got != "La main passe | Quitter la table" {
		t.Errorf("alice's French page offers %q", got)
	}

	english := b.open(st.GatewayHTTPAddr, "bob", q)
	english.do("sees his turn", turnIs("bob"), waitFor(`document.getElementById('prompt').classList.contains('mine')`))
	if got := english.eval(labels); got != "Bet | Banco! | No bet | Leave" {
		t.Errorf("bob's English page offers %q", got)
	}
	if got := english.text("prompt"); !strings.HasPrefix(got, "Your turn: bet, banco or pass (10.00 uncovered)") {
		t.Errorf("bob's English prompt is %q", got)
	}
	for _, w := range feeWordings {
		if got := english.eval(`roundText(` + w.round + `)`); got != w.en {
			t.Errorf("bob's English history tells the round %s as %q, want %q", w.round, got, w.en)
		}
	}
	if got := english.text("whoami"); got != "bob (player)" {
		t.Errorf("bob's English header says %q", got)
	}
	if got := english.text("fair"); got != "a prepared order (certification shoe): no seeds" {
		t.Errorf("bob's English Fair shoe line is %q", got)
	}

	// A seed note in French: at a punto banco table whose shoe collects
	// seeds, bob's French browser gives no secure random numbers; he sits
	// down, and the console tells him it commits no seed of his.
	pb := pbTable(t, c, 60000).GetTableId()
	seeds := b.openWith(st.GatewayHTTPAddr, "bob", "?table="+pb, inFrench())
	seeds.do("sees the table", waitFor(`document.getElementById('fair').textContent !== ''`))
	if got := seeds.text("fair"); !strings.HasPrefix(got, "engagement du serveur ") || !strings.Contains(got, "aucune graine engagée pour l'instant") {
		t.Errorf("bob's French Fair shoe line of a shoe taking seeds is %q", got)
	}
	seeds.eval(`ChemmyFair.canSeed = () => false; 'ok'`)
	seeds.do("sits down", press("sit"), seedStatus("problem", 30*time.Second))
	if got, want := seeds.text("fair-mine"), "Ce navigateur ne donne pas de nombres aléatoires sûrs : la console n'engage aucune graine de vous."; got != want {
		t.Errorf("bob's French seed note is %q, want %q", got, want)
	}
}
