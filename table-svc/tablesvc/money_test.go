package tablesvc

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// The exponents below are ISO 4217's minor units, written out by hand:
// EUR 2, JPY 0, KWD 3.

// tableIn opens a chemin de fer table in currency code (real money on a
// prepared shoe dealing cards, then kings).
func (h *harness) tableIn(code string, cards ...string) *tablev1.Table {
	h.t.Helper()
	resp, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), ShoeId: h.preparedShoe(cards...),
		CurrencyCode: code, HouseRules: certMoney(nil)})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetTable()
}

// TestCurrencyExponentInTableViews: every table view carries its
// currency's exponent, 0 (JPY) included and present in JSON, before and
// after a restart; a well-formed code the wallet does not accept opens no
// table (CURRENCY_UNKNOWN), a malformed one is INVALID_ARGUMENT.
func TestCurrencyExponentInTableViews(t *testing.T) {
	h := newHarness(t)
	want := map[string]int32{"EUR": 2, "JPY": 0, "KWD": 3}
	ids := map[string]string{}
	for code := range want {
		ids[code] = h.tableIn(code).GetTableId()
	}
	ids["default"] = h.tableIn("").GetTableId()
	check := func(when string) {
		t.Helper()
		for code, id := range ids {
			tb := h.get(id)
			wc := code
			if code == "default" {
				wc = "EUR"
			}
			if tb.GetCurrencyCode() != wc || tb.CurrencyExponent == nil || tb.GetCurrencyExponent() != want[wc] {
				t.Errorf("%s: table in %s: currency %q exponent %v, want %s %d", when, code, tb.GetCurrencyCode(), tb.CurrencyExponent, wc, want[wc])
			}
		}
	}
	check("after creation")
	h.restartTable()
	check("after a restart")

	// JPY's 0 is in the JSON a client reads.
	b, err := protojson.Marshal(h.get(ids["JPY"]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"currencyExponent":0`) {
		t.Errorf("the JPY table's JSON has no currencyExponent 0: %s", b)
	}

	for _, code := range []string{"ABC", "XAU", "CHIPS"} {
		_, err := h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), CurrencyCode: code})
		wantReason(t, err, codes.InvalidArgument, reasonCurrencyUnknown)
	}
	_, err = h.tables.CreateTable(h.as("op"), &tablev1.CreateTableRequest{RequestId: h.rid(), CurrencyCode: "jpy"})
	wantReason(t, err, codes.InvalidArgument, reasonInvalidArgument)

	// The lobby shows it too.
	list, err := h.tables.ListTables(h.as("alice"), &tablev1.ListTablesRequest{CurrencyCode: "KWD"})
	if err != nil || len(list.GetTables()) != 1 || list.GetTables()[0].GetCurrencyExponent() != 3 {
		t.Fatalf("lobby in KWD: %v %v", list, err)
	}
}

// TestRoundMoneyInKWD: a coup at a KWD table. Every event of the table
// names the currency and its exponent; the round says them too, and each
// player's wallet balance before and after the settlement, which only he
// (and staff) reads.
//
// Cards: player 4C 4D = 8, a natural; banker KD 2S = 2. alice's bank of
// 1.000 KWD loses bob's and carol's 0.500 each: each of them had 10.000
// KWD, so alice goes from 10000 to 9000 fils, bob and carol from 10000 to
// 10500.
func TestRoundMoneyInKWD(t *testing.T) {
	h := newHarness(t)
	h.deposit(10000, "player:alice@KWD", "player:bob@KWD", "player:carol@KWD")
	id := h.tableIn("KWD", "4C", "KD", "4D", "2S").GetTableId()
	for _, p := range []string{"alice", "bob", "carol", "dave"} {
		h.join(id, p)
	}
	h.acceptBank(id, "alice", 1000)
	h.mustBet(id, "bob", 500)
	lc := h.mustBet(id, "carol", 500).GetLastCoup()
	if !lc.GetSettled() || lc.GetBankerNet() != -1000 {
		t.Fatalf("coup not settled as a banker's loss of 1000: %v", lc)
	}
	coup := lc.GetCoupId()

	evs := h.events(id)
	kinds := map[string]bool{}
	for _, ev := range evs {
		if ev.GetCurrencyCode() != "KWD" || ev.CurrencyExponent == nil || ev.GetCurrencyExponent() != 3 {
			t.Errorf("%s event: currency %q exponent %v, want KWD 3", ev.kind, ev.GetCurrencyCode(), ev.CurrencyExponent)
		}
		kinds[ev.kind] = true
	}
	for _, k := range []string{"table_created", "bank_changed", "bet_placed", "coup_settled"} {
		if !kinds[k] {
			t.Errorf("no %s event among %v", k, kinds)
		}
	}

	type bal struct{ before, after int64 }
	want := map[string]bal{"alice": {10000, 9000}, "bob": {10000, 10500}, "carol": {10000, 10500}}
	check := func(reader string, r *tablev1.Round) {
		t.Helper()
		if r.GetCurrencyCode() != "KWD" || r.CurrencyExponent == nil || r.GetCurrencyExponent() != 3 {
			t.Errorf("%s's round: currency %q exponent %v, want KWD 3", reader, r.GetCurrencyCode(), r.CurrencyExponent)
		}
		for _, p := range r.GetPlayers() {
			w, played := want[p.GetPlayerId()]
			visible := played && (reader == "auditor" || reader == p.GetPlayerId())
			switch {
			case visible && (p.BalanceBefore == nil || p.BalanceAfter == nil):
				t.Errorf("%s's round: %s's balances missing", reader, p.GetPlayerId())
			case visible && (p.GetBalanceBefore() != w.before || p.GetBalanceAfter() != w.after):
				t.Errorf("%s's round: %s's balances %d -> %d, want %d -> %d", reader, p.GetPlayerId(),
					p.GetBalanceBefore(), p.GetBalanceAfter(), w.before, w.after)
			case !visible && (p.BalanceBefore != nil || p.BalanceAfter != nil):
				t.Errorf("%s's round: %s's balances shown: %v", reader, p.GetPlayerId(), p)
			}
		}
	}
	for _, reader := range []string{"bob", "alice"} {
		rounds := h.mustListRounds(reader, &tablev1.ListRoundsRequest{PlayerId: reader})
		if len(rounds) != 1 || rounds[0].GetCoupId() != coup {
			t.Fatalf("%s's rounds: %v", reader, rounds)
		}
		check(reader, rounds[0])
	}
	for _, reader := range []string{"auditor", "carol"} {
		r, err := h.getRound(reader, id, coup)
		if err != nil {
			t.Fatal(err)
		}
		check(reader, r.GetRound())
	}
	// The balances after are the wallet's now.
	for p, w := range want {
		if b, held := h.account("player:" + p + "@KWD"); b != w.after || held != 0 {
			t.Errorf("%s: wallet balance %d held %d, want %d", p, b, held, w.after)
		}
	}
	h.restartTable()
	r, err := h.getRound("auditor", id, coup)
	if err != nil {
		t.Fatal(err)
	}
	check("auditor", r.GetRound())
}
