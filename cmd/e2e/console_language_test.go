package e2e

import (
	"context"
	"strings"
	"testing"

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

// TestConsoleSpeaksTheBrowsersLanguage: the console speaks French to a
// browser that prefers it, with the game's own terms (banco, la main
// passe, carte, non) and French numbers (50,00 EUR), and English to
// another. alice holds a bank of 10.00 EUR; in bob's turn to bet, his
// French page offers him Ponter, Banco ! and Pas de mise, alice's French
// page La main passe; an English page shows the same table in English.
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
}
