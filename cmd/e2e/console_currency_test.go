package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestConsoleBalanceInTableCurrency: the console shows a player the
// balance of his account in the currency of the table he is at
// (player:<id>@USD at a table in USD, player:<id> at one in the wallet's
// default currency; docs/walkthroughs/chemin-de-fer.md, "Currency"), with the currency, and what is
// held there; a player with no account yet sees 0 and no error. It used
// to show the default-currency account at every table.
func TestConsoleBalanceInTableCurrency(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "alice", "bob")
	for p, amount := range map[string]int64{"alice": 8000, "bob": 7000} {
		if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{
			RequestId: t.Name() + "/usd/" + p, AccountId: "player:" + p + "@USD", Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	table := func(name, currency string) string {
		t.Helper()
		sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
			RequestId: t.Name() + "/shoe/" + name, Cards: fullShoe()})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table/" + name,
			ShoeId: sh.GetShoe().GetShoeId(), CurrencyCode: currency, HouseRules: certificationRules()})
		if err != nil {
			t.Fatal(err)
		}
		return tb.GetTable().GetTableId()
	}
	usd, def := table("usd", "USD"), table("default", "")
	shows := func(balance, held int64, currency string) chromedp.Action[chromedp.Void] {
		return waitFor(fmt.Sprintf(`(e => e.dataset.balance === '%d' && e.dataset.held === '%d' && e.dataset.currency === '%s' && e.textContent.includes('%s'))(document.getElementById('balance'))`,
			balance, held, currency, currency))
	}

	// At the USD table: the USD accounts, and alice's bank held there.
	alice, bob := b.open(st.GatewayHTTPAddr, "alice", "?table="+usd), b.open(st.GatewayHTTPAddr, "bob", "?table="+usd)
	alice.do("sees her USD balance", shows(8000, 0, "USD"), press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	bob.do("sees his USD balance", shows(7000, 0, "USD"), waitFor(`document.querySelectorAll('#seats li').length === 1`),
		press("sit"), stateIs("TABLE_STATE_OFFERING_BANK"))
	alice.do("takes the bank", stateIs("TABLE_STATE_OFFERING_BANK"), turnIs("alice"),
		chromedp.SetValue(chromedp.ID("bank-amount"), "10"), press("accept-bank"), stateIs("TABLE_STATE_BETTING"),
		shows(8000, 1000, "USD"))
	alice.shot("currency-alice-usd.png")

	// At a table in the default currency (EUR): the accounts without suffix.
	b.open(st.GatewayHTTPAddr, "alice", "?table="+def).do("sees her EUR balance", shows(5000, 0, "EUR"))
	// carol has no account in any currency: 0, and no error.
	carol := b.open(st.GatewayHTTPAddr, "carol", "?table="+def)
	carol.do("sees 0", shows(0, 0, "EUR"))
	if e := carol.eval(`document.getElementById('error').hidden ? '' : document.getElementById('error').textContent`); e != "" {
		t.Errorf("carol is shown the error %q", e)
	}
	b.open(st.GatewayHTTPAddr, "carol", "?table="+usd).do("sees 0 at the USD table", shows(0, 0, "USD"))
}
