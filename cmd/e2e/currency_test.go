package e2e

import (
	"testing"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// TestTableInUSD plays a chemin de fer coup at a table in USD through the
// gateway: the bank and the banco are held on the players' USD accounts
// and settled there; their accounts in the wallet's default currency do
// not move; the lobby finds the table by its currency; the wallet's books
// balance in each currency.
func TestTableInUSD(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{
			RequestId: t.Name() + "/usd/" + p, AccountId: "player:" + p + "@USD", Amount: 8000}); err != nil {
			t.Fatal(err)
		}
	}
	// Player 4C 4D = 8 (a natural) against the banker's KD 2S = 2.
	order := []string{"4C", "KD", "4D", "2S"}
	for len(order) < 40 {
		order = append(order, "KH")
	}
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: t.Name() + "/shoe", Cards: order, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table",
		ShoeId: sh.GetShoe().GetShoeId(), CurrencyCode: "USD", HouseRules: &tablev1.HouseRules{CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	if got := tb.GetTable().GetCurrencyCode(); got != "USD" {
		t.Fatalf("currency_code %q", got)
	}
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: t.Name() + "/join", TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: t.Name() + "/bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.table.CallBanco(as(t, "bob"), &tablev1.CallBancoRequest{RequestId: t.Name() + "/banco", TableId: id, PlayerId: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if lc := resp.GetTable().GetLastCoup(); !lc.GetSettled() || lc.GetBankerNet() != -1000 {
		t.Fatalf("the coup: %v", lc)
	}
	want := map[string]int64{"player:alice@USD": 7000, "player:bob@USD": 9000, "player:alice": 5000, "player:bob": 5000, "house:commission": 0}
	for acct, w := range want {
		if got := c.balance(t, acct); got != w {
			t.Errorf("%s: %d, want %d", acct, got, w)
		}
	}
	lobby, err := c.table.ListTables(as(t, "bob"), &tablev1.ListTablesRequest{CurrencyCode: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lobby.GetTables()); n != 1 || lobby.GetTables()[0].GetTableId() != id {
		t.Errorf("the USD lobby: %d tables", n)
	}
	audit, err := c.wallet.AuditLedger(as(t, "auditor"), &walletv1.AuditLedgerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !audit.GetBalanced() {
		t.Errorf("ledger: %v", audit.GetDiscrepancies())
	}
	for _, cur := range audit.GetCurrencies() {
		if in := map[string]int64{"USD": 16000, "EUR": 10000}[cur.GetCurrencyCode()]; cur.GetInWallet() != in || cur.GetHeld() != 0 {
			t.Errorf("%s: in wallet %d held %d, want %d and 0", cur.GetCurrencyCode(), cur.GetInWallet(), cur.GetHeld(), in)
		}
	}
}
