package tablesvc

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// deposit credits amount to each wallet account.
func (h *harness) deposit(amount int64, accounts ...string) {
	h.t.Helper()
	for _, a := range accounts {
		if _, err := h.wallets.Deposit(h.as("op"), &walletv1.DepositRequest{RequestId: h.rid(), AccountId: a, Amount: amount}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// preparedShoe makes a test shoe dealing exactly cards, then kings, and
// returns its id.
func (h *harness) preparedShoe(cards ...string) string {
	h.t.Helper()
	order := append([]string(nil), cards...)
	for len(order) < 40 {
		order = append(order, "KD")
	}
	sh, err := h.shoes.CreateShoeFromOrder(h.as("op"), &shoev1.CreateShoeFromOrderRequest{RequestId: h.rid(), Cards: order, TestShoe: true})
	if err != nil {
		h.t.Fatal(err)
	}
	return sh.GetShoe().GetShoeId()
}

// usdTable opens a table in USD on a prepared shoe dealing cards (then
// kings).
func (h *harness) usdTable(req *tablev1.CreateTableRequest, cards ...string) string {
	h.t.Helper()
	req.RequestId, req.ShoeId, req.CurrencyCode = h.rid(), h.preparedShoe(cards...), "USD"
	resp, err := h.tables.CreateTable(h.as("op"), req)
	if err != nil {
		h.t.Fatal(err)
	}
	if c := resp.GetTable().GetCurrencyCode(); c != "USD" {
		h.t.Fatalf("currency_code %q", c)
	}
	return resp.GetTable().GetTableId()
}

// wantBalances checks each account's balance, and that nothing is held.
func (h *harness) wantBalances(want map[string]int64) {
	h.t.Helper()
	for acct, w := range want {
		if b, held := h.account(acct); b != w || held != 0 {
			h.t.Errorf("%s: balance %d held %d, want %d", acct, b, held, w)
		}
	}
}

// wantAudited checks that the wallet's books balance in every currency.
func (h *harness) wantAudited() map[string]*walletv1.CurrencyTotals {
	h.t.Helper()
	a, err := h.wallets.AuditLedger(h.as("auditor"), &walletv1.AuditLedgerRequest{})
	if err != nil {
		h.t.Fatal(err)
	}
	if !a.GetBalanced() {
		h.t.Errorf("ledger not balanced: %v", a.GetDiscrepancies())
	}
	out := map[string]*walletv1.CurrencyTotals{}
	for _, c := range a.GetCurrencies() {
		if c.GetSumOfBalances() != 0 {
			h.t.Errorf("%s: sum of balances %d", c.GetCurrencyCode(), c.GetSumOfBalances())
		}
		out[c.GetCurrencyCode()] = c
	}
	return out
}

// TestTableCurrency: a chemin de fer table and a punto banco table in USD
// play a coup each, moving only the players' @USD accounts (and
// house:bank@USD, house:commission@USD); the EUR (default) accounts stay
// as deposited, and each currency's books balance.
func TestTableCurrency(t *testing.T) {
	h := newHarness(t)
	h.fund(10000, "alice", "bob", "carol")
	h.deposit(10000, "player:alice@USD", "player:bob@USD", "player:carol@USD")
	h.deposit(100000, "house:bank@USD")

	// Chemin de fer: player 4C 4D = 8 (a natural), banker KD 2S = 2.
	cf := h.usdTable(&tablev1.CreateTableRequest{HouseRules: certMoney(nil)}, "4C", "KD", "4D", "2S")
	for _, p := range []string{"alice", "bob", "carol"} {
		h.join(cf, p)
	}
	h.acceptBank(cf, "alice", 1000)
	if _, held := h.account("player:alice@USD"); held != 1000 {
		t.Errorf("the bank is held on alice's USD account: held %d", held)
	}
	h.mustBet(cf, "bob", 500)
	tb := h.mustBet(cf, "carol", 500)
	if lc := tb.GetLastCoup(); lc == nil || !lc.GetSettled() || lc.GetBankerNet() != -1000 {
		t.Fatalf("coup not settled as a banker's loss of 1000: %v", lc)
	}
	h.wantBalances(map[string]int64{"player:alice@USD": 9000, "player:bob@USD": 10500, "player:carol@USD": 10500})

	// Punto banco: player 2C 3D 4S = 9, banker KD 5H 9C = 4; alice's bank
	// bet loses, bob's player bet wins even money.
	pb := h.usdTable(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO,
		PuntoBancoRules: &tablev1.PuntoBancoRules{CertificationRealMoney: true}}, "2C", "KD", "3D", "5H", "4S", "9C")
	h.mustPBBet(pb, "alice", tablev1.BetSpot_BET_SPOT_BANK, 1000)
	h.mustPBBet(pb, "bob", tablev1.BetSpot_BET_SPOT_PLAYER, 500)
	if lc := h.closeWindow(pb).GetLastCoup(); lc == nil || !lc.GetSettled() {
		t.Fatalf("punto banco coup not settled: %v", lc)
	}
	h.wantBalances(map[string]int64{"player:alice@USD": 8000, "player:bob@USD": 11000, "player:carol@USD": 10500,
		"house:bank@USD": 100500, "house:commission@USD": 0,
		// The default currency's accounts are untouched.
		"player:alice": 10000, "player:bob": 10000, "player:carol": 10000, "house:bank": 0, "house:commission": 0})
	cur := h.wantAudited()
	if usd := cur["USD"]; usd == nil || usd.GetInWallet() != 3*10000+100000 {
		t.Errorf("USD totals %v", usd)
	}
	if eur := cur["EUR"]; eur == nil || eur.GetInWallet() != 3*10000 {
		t.Errorf("EUR totals %v", eur)
	}

	// The event says the currency; the lobby filters by it.
	var created bool
	for _, ev := range h.events(cf) {
		if tc := ev.GetTableCreated(); tc != nil {
			created = tc.GetCurrencyCode() == "USD"
		}
	}
	if !created {
		t.Error("table_created does not carry currency_code USD")
	}
	eur := h.shuffledTable()
	if c := h.get(eur).GetCurrencyCode(); c != "EUR" {
		t.Errorf("a table without currency_code plays in the wallet's default: %q", c)
	}
	for cur, want := range map[string][]string{"USD": {cf, pb}, "EUR": {eur}, "GBP": nil} {
		resp, err := h.tables.ListTables(h.as("alice"), &tablev1.ListTablesRequest{CurrencyCode: cur})
		if err != nil {
			t.Fatal(err)
		}
		if got := tableIDs(resp.GetTables()); !slices.Equal(got, want) {
			t.Errorf("lobby in %s: %v, want %v", cur, got, want)
		}
	}
}

func tableIDs(tbs []*tablev1.Table) []string {
	var out []string
	for _, tb := range tbs {
		out = append(out, tb.GetTableId())
	}
	return out
}

// TestTableCurrencyRefused: a currency code the wallet does not accept
// opens no table; the default currency's code is the default.
func TestTableCurrencyRefused(t *testing.T) {
	h := newHarness(t)
	for _, code := range []string{"usd", "US", "EURO-1", "ABCDEFGHIJKLM"} {
		_, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), CurrencyCode: code})
		wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
	}
	resp, err := h.tables.CreateTable(h.as("croupier"), &tablev1.CreateTableRequest{RequestId: h.rid(), CurrencyCode: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := h.table.load(resp.GetTable().GetTableId())
	if err != nil {
		t.Fatal(err)
	}
	if tb.Currency != "EUR" || tb.AccountSuffix != "" || tb.account("x") != "player:x" {
		t.Errorf("a table in the default currency uses the unsuffixed accounts: %q %q", tb.Currency, tb.AccountSuffix)
	}
	list, err := h.tables.ListTables(h.as("alice"), &tablev1.ListTablesRequest{})
	if err != nil || len(list.GetTables()) != 1 {
		t.Fatalf("%v %v", list, err)
	}
}

// TestLobbyByStakes: max_minimum_bet keeps the tables whose smallest
// stake is at most it, per game.
func TestLobbyByStakes(t *testing.T) {
	h := newHarness(t)
	open := func(req *tablev1.CreateTableRequest) string {
		req.RequestId = h.rid()
		resp, err := h.tables.CreateTable(h.as("croupier"), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTable().GetTableId()
	}
	cf := open(&tablev1.CreateTableRequest{HouseRules: &tablev1.HouseRules{MinimumBank: 500}})
	pb := open(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{MinBet: 200}})
	old := open(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_OLD_BACCARAT, OldBaccaratRules: &tablev1.OldBaccaratRules{MinStake: 1000, MinimumBank: 20000}})
	bq := open(&tablev1.CreateTableRequest{Variant: tablev1.Variant_VARIANT_BACCARAT_BANQUE, BanqueRules: &tablev1.BanqueRules{MinBet: 100}})
	for max, want := range map[int64][]string{0: {cf, pb, old, bq}, 100: {bq}, 499: {pb, bq}, 500: {cf, pb, bq}, 1000: {cf, pb, old, bq}} {
		resp, err := h.tables.ListTables(h.as("alice"), &tablev1.ListTablesRequest{MaxMinimumBet: max})
		if err != nil {
			t.Fatal(err)
		}
		if got := tableIDs(resp.GetTables()); !slices.Equal(got, want) {
			t.Errorf("max_minimum_bet %d: %v, want %v", max, got, want)
		}
	}
	_, err := h.tables.ListTables(h.as("alice"), &tablev1.ListTablesRequest{MaxMinimumBet: -1})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)
}
