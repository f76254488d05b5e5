package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestConsoleMoneyInMajorUnits: the console writes every amount in major
// units of the table's currency, with its exponent from the server
// (Table.currency_exponent, Account.currency_exponent, the events'): alice
// has 35950 minor units in each of EUR (exponent 2), JPY (0) and KWD (3),
// that is 359.50 EUR, 35,950 JPY and 35.950 KWD; a table's minimum bank of
// 100 minor units reads 1.00 EUR, 100 JPY and 0.100 KWD. At the KWD
// table she takes a bank typed in major units, 1.5: 1500 minor units are
// held, and the bank and the event log read 1.500 KWD.
func TestConsoleMoneyInMajorUnits(t *testing.T) {
	b, st, c := consoleRig(t, 35950, "alice", "bob")
	for _, cur := range []string{"JPY", "KWD"} {
		for _, p := range []string{"alice", "bob"} {
			if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{
				RequestId: t.Name() + "/" + cur + "/" + p, AccountId: "player:" + p + "@" + cur, Amount: 35950}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tables := map[string]string{}
	for _, cur := range []string{"EUR", "JPY", "KWD"} {
		code := cur
		if cur == "EUR" {
			code = "" // the wallet's default currency
		}
		tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table/" + cur,
			CurrencyCode: code, HouseRules: &tablev1.HouseRules{MinimumBank: 100}})
		if err != nil {
			t.Fatal(err)
		}
		tables[cur] = tb.GetTable().GetTableId()
	}
	for _, w := range []struct{ cur, balance, minBank string }{
		{"EUR", "balance 359.50 EUR", "bank from 1.00"},
		{"JPY", "balance 35,950 JPY", "bank from 100"},
		{"KWD", "balance 35.950 KWD", "bank from 0.100"},
	} {
		p := b.open(st.GatewayHTTPAddr, "alice", "?table="+tables[w.cur])
		p.do("sees her balance in "+w.cur, waitFor(`document.getElementById('balance').dataset.currency === '`+w.cur+`'`))
		if got := p.text("balance"); got != w.balance {
			t.Errorf("at the %s table alice's balance reads %q, want %q", w.cur, got, w.balance)
		}
		stakes := regexp.MustCompile(`^` + regexp.QuoteMeta(w.minBank) + `( |,.* )` + w.cur + `\b`)
		if got := p.text("stakes"); !stakes.MatchString(got) {
			t.Errorf("at the %s table the stakes read %q, want %s", w.cur, got, stakes)
		}
		p.do("sees the table in the lobby", waitFor(`document.querySelector('#tables tr[data-table="`+tables[w.cur]+`"]') !== null`))
		if row := p.eval(`document.querySelector('#tables tr[data-table="` + tables[w.cur] + `"] .stakes').textContent`); !stakes.MatchString(row) {
			t.Errorf("the lobby row of the %s table reads %q, want %s", w.cur, row, stakes)
		}
	}

	q := "?table=" + tables["KWD"]
	alice, bob := b.open(st.GatewayHTTPAddr, "alice", q), b.open(st.GatewayHTTPAddr, "bob", q)
	alice.do("sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	bob.do("sits", waitFor(`document.querySelectorAll('#seats li').length === 1`), press("sit"))
	alice.do("takes a bank of 1.5 KWD", stateIs("TABLE_STATE_OFFERING_BANK"), turnIs("alice"),
		chromedp.SetValue(chromedp.ID("bank-amount"), "1.5"), press("accept-bank"), stateIs("TABLE_STATE_BETTING"),
		waitFor(`document.getElementById('balance').dataset.held === '1500'`))
	if got := alice.text("bank"); got != "1.500 KWD" {
		t.Errorf("the bank reads %q, want %q", got, "1.500 KWD")
	}
	if got := alice.text("balance"); got != "balance 35.950 KWD · held 1.500" {
		t.Errorf("alice's balance reads %q", got)
	}
	bob.do("sees the bank in the log", logHas("alice holds a bank of 1.500", 30*time.Second))
	// More decimals than the currency has: refused before any call.
	bob.do("bets 0.0005 KWD", turnIs("bob"), chromedp.SetValue(chromedp.ID("bet-amount"), "0.0005"), press("bet"),
		waitFor(`!document.getElementById('error').hidden`))
	if got := bob.text("error"); !strings.Contains(got, "Not an amount of KWD") {
		t.Errorf("bob's bet of 0.0005 KWD shows %q", got)
	}
	if got := c.balance(t, "player:bob@KWD"); got != 35950 {
		t.Errorf("bob has %d KWD minor units, want 35950", got)
	}
	bob.do("bets 0.25 KWD", chromedp.SetValue(chromedp.ID("bet-amount"), "0.25"), press("bet"),
		waitFor(`[...document.querySelectorAll('#bets li')].some(li => li.textContent.startsWith('bob (you) 0.250'))`))
}
