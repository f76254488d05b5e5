package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	"github.com/chemmy/chemmy/services/kit/currency"
)

// httpCall posts body to the gateway's HTTP/JSON side as who (demo token
// who-token) and returns the status and the raw JSON answer.
func httpCall(t *testing.T, st *stack.Stack, who, method, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+st.GatewayHTTPAddr+"/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+who+"-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %d %q: %v", method, resp.StatusCode, b, err)
	}
	return resp.StatusCode, m
}

// errReason is the ErrorInfo reason of a Connect JSON error.
func errReason(m map[string]any) string {
	ds, _ := m["details"].([]any)
	for _, d := range ds {
		d, _ := d.(map[string]any)
		if dbg, _ := d["debug"].(map[string]any); d["type"] == "google.rpc.ErrorInfo" {
			r, _ := dbg["reason"].(string)
			return r
		}
	}
	return ""
}

// TestMoneyAsIntegratorsExpect, through the whole suite and the
// gateway's HTTP/JSON side, as an integrator's client reads it: tables in
// ISO 4217 currencies and a configured chip currency carry their exponent
// (JPY's 0 present in JSON), an unknown code opens no table
// (CURRENCY_UNKNOWN), a hand total of 0 is present in JSON, and the round
// says its currency and each player's balance before and after.
//
// The coup: player KC QD = 0 (baccarat), banker 4S 5H = 9, a natural.
// alice's bank of 1000 wins bob's 1000, less the default 5% commission:
// alice 5000 -> 5950, bob 5000 -> 4000.
func TestMoneyAsIntegratorsExpect(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	chips, err := currency.ParseSet("CHIPS:0")
	if err != nil {
		t.Fatal(err)
	}
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1},
		GatewayHTTPAddr: "127.0.0.1:0", Currencies: chips})
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")

	// The wallet's currencies, as any role reads them.
	for code, want := range map[string]float64{"KWD": 3, "JPY": 0, "CHIPS": 0, "EUR": 2} {
		status, m := httpCall(t, st, "alice", "chemmy.wallet.v1.WalletService/GetCurrency", `{"currencyCode":"`+code+`"}`)
		cur, _ := m["currency"].(map[string]any)
		if e, ok := cur["exponent"]; status != 200 || !ok || e != want {
			t.Errorf("GetCurrency %s: %d %v, want exponent %v", code, status, m, want)
		}
	}
	// Tables in each: the exponent in the view, present when 0.
	for code, want := range map[string]float64{"JPY": 0, "KWD": 3, "CHIPS": 0, "EUR": 2} {
		status, m := httpCall(t, st, "operator", "chemmy.table.v1.TableService/CreateTable",
			`{"requestId":"money-`+code+`","currencyCode":"`+code+`"}`)
		tb, _ := m["table"].(map[string]any)
		if e, ok := tb["currencyExponent"]; status != 200 || !ok || e != want || tb["currencyCode"] != code {
			t.Errorf("CreateTable in %s: %d %v, want exponent %v", code, status, m, want)
		}
	}
	status, m := httpCall(t, st, "operator", "chemmy.table.v1.TableService/CreateTable", `{"requestId":"money-abc","currencyCode":"ABC"}`)
	if status != 400 || errReason(m) != "CURRENCY_UNKNOWN" {
		t.Errorf("CreateTable in ABC: %d %v, want 400 CURRENCY_UNKNOWN", status, m)
	}

	// A coup whose player hand totals 0.
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: "money-shoe", Cards: fullShoe("KC", "4S", "QD", "5H")})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "money-cf", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: certificationRules()})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: "money/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: "money/bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	bet, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: "money/bet", TableId: id, PlayerId: "bob", Amount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	lc := bet.GetTable().GetLastCoup()
	if !lc.GetSettled() || lc.GetPlayerTotal() != 0 || lc.GetBankerTotal() != 9 {
		t.Fatalf("the coup: %v", lc)
	}
	coup := lc.GetCoupId()

	status, m = httpCall(t, st, "bob", "chemmy.table.v1.TableService/GetTable", `{"tableId":"`+id+`"}`)
	view, _ := m["table"].(map[string]any)
	last, _ := view["lastCoup"].(map[string]any)
	if v, ok := last["playerTotal"]; status != 200 || !ok || v != float64(0) {
		t.Errorf("lastCoup.playerTotal over HTTP: present %v, %v; want 0 (%v)", ok, v, last)
	}
	if last["bankerTotal"] != float64(9) {
		t.Errorf("lastCoup.bankerTotal over HTTP: %v, want 9", last["bankerTotal"])
	}

	type bal struct{ before, after string }
	want := map[string]bal{"alice": {"5000", "5950"}, "bob": {"5000", "4000"}}
	for _, who := range []string{"bob", "auditor"} {
		status, m = httpCall(t, st, who, "chemmy.table.v1.TableService/GetRound", `{"tableId":"`+id+`","coupId":"`+coup+`"}`)
		r, _ := m["round"].(map[string]any)
		if status != 200 || r["currencyCode"] != "EUR" || r["currencyExponent"] != float64(2) {
			t.Fatalf("GetRound as %s: %d %v", who, status, m)
		}
		players, _ := r["players"].([]any)
		if len(players) != 2 {
			t.Fatalf("GetRound as %s: players %v", who, players)
		}
		for _, p := range players {
			p, _ := p.(map[string]any)
			id, _ := p["playerId"].(string)
			w := want[id]
			if who == "auditor" || who == id {
				if p["balanceBefore"] != w.before || p["balanceAfter"] != w.after {
					t.Errorf("GetRound as %s: %s's balances %v -> %v, want %s -> %s", who, id, p["balanceBefore"], p["balanceAfter"], w.before, w.after)
				}
			} else if _, shown := p["balanceBefore"]; shown {
				t.Errorf("GetRound as %s: %s's balance shown: %v", who, id, p)
			}
		}
		// The round's events name its currency.
		evs, _ := m["events"].([]any)
		for _, e := range evs {
			e, _ := e.(map[string]any)
			if e["currencyCode"] != "EUR" || e["currencyExponent"] != float64(2) {
				t.Errorf("GetRound as %s: an event without its currency: %v", who, e)
			}
		}
	}
	for p, w := range map[string]int64{"alice": 5950, "bob": 4000} {
		if got := c.balance(t, "player:"+p); got != w {
			t.Errorf("%s's wallet balance %d, want %d", p, got, w)
		}
	}
}
