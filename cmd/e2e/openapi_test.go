package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// TestOpenAPIDescribesTheWire: the gateway's OpenAPI document
// (gateway/gateway/openapi.yaml) is a valid OpenAPI 3.1 document, and
// what goes over the real stack's HTTP side is what it says: a coup of
// chemin de fer played over HTTP/JSON as curl would play it, every
// request and every answer (the errors among them) checked against the
// document by an OpenAPI validator (libopenapi-validator): path, method,
// content type, and each body against its schema.
func TestOpenAPIDescribesTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	spec, err := os.ReadFile(filepath.Join(repoRoot(t), "gateway", "gateway", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("the validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("openapi.yaml: %s: %s", e.Message, e.Reason)
		}
		t.FailNow()
	}

	st := startHTTPStack(t)
	base := "http://" + st.GatewayHTTPAddr
	checked := map[string]bool{}
	// call makes one call, checks it and its answer against the document
	// and returns the answer's status and JSON.
	call := func(who, method, body string) (int, map[string]any) {
		t.Helper()
		req := func() *http.Request {
			r, err := http.NewRequest(http.MethodPost, base+"/"+method, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+who+"-token")
			return r
		}
		resp, err := http.DefaultClient.Do(req())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if ok, verrs := v.ValidateHttpRequestResponse(req(), resp); !ok {
			for _, e := range verrs {
				var detail []string
				for _, se := range e.SchemaValidationErrors {
					detail = append(detail, fmt.Sprintf("%s: %s", se.FieldPath, se.Reason))
				}
				t.Errorf("%s %s -> %d %.300s: not as the document says: %s: %s %v", method, body, resp.StatusCode, b, e.Message, e.Reason, detail)
			}
		}
		checked[method] = true
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %d %q", method, resp.StatusCode, b)
		}
		return resp.StatusCode, m
	}
	const T, W, G = "chemmy.table.v1.TableService/", "chemmy.wallet.v1.WalletService/", "chemmy.gateway.v1.GatewayService/"

	call("alice", G+"GetCaller", `{}`)
	for _, p := range []string{"alice", "bob", "carol"} {
		call("operator", W+"Deposit", `{"requestId":"oa-dep-`+p+`","accountId":"player:`+p+`","amount":5000}`)
	}
	call("alice", W+"GetCurrency", `{}`)
	_, m := call("croupier", T+"CreateTable", `{"requestId":"oa-table","houseRules":{"minimumBank":"100"}}`)
	table, _ := m["table"].(map[string]any)
	id, _ := table["tableId"].(string)
	if id == "" {
		t.Fatalf("CreateTable: %v", m)
	}
	tbl := `"tableId":"` + id + `"`
	for _, p := range []string{"alice", "bob", "carol"} {
		call(p, T+"JoinTable", `{"requestId":"oa-join-`+p+`",`+tbl+`,"playerId":"`+p+`"}`)
	}
	call("alice", T+"AcceptBank", `{"requestId":"oa-bank",`+tbl+`,"playerId":"alice","amount":1000}`)
	if code, m := call("carol", T+"PlaceBet", `{"requestId":"oa-early",`+tbl+`,"playerId":"carol","amount":400}`); code != 400 || m["code"] != "failed_precondition" {
		t.Errorf("carol's early bet: %d %v", code, m)
	}
	if code, _ := call("nobody", G+"GetCaller", `{}`); code != 401 {
		t.Errorf("an unknown token: %d", code)
	}
	call("bob", T+"PlaceBet", `{"requestId":"oa-bet-bob",`+tbl+`,"playerId":"bob","amount":600}`)
	call("carol", T+"PlaceBet", `{"requestId":"oa-bet-carol",`+tbl+`,"playerId":"carol","amount":400}`)
	for i := range 4 {
		_, m := call("croupier", T+"GetTable", `{`+tbl+`}`)
		t, _ := m["table"].(map[string]any)
		if t["state"] != "TABLE_STATE_DECISION" {
			break
		}
		coup, _ := t["coup"].(map[string]any)
		who, _ := coup["decisionPlayerId"].(string)
		call(who, T+"GetAdvice", `{`+tbl+`,"playerId":"`+who+`"}`)
		call(who, T+"DecideDraw", fmt.Sprintf(`{"requestId":"oa-decide-%d",%s,"playerId":"%s","choice":"DRAW_CHOICE_DRAW"}`, i, tbl, who))
	}
	call("alice", T+"GetTable", `{`+tbl+`}`)
	call("alice", T+"ListTables", `{}`)
	call("alice", T+"GetOdds", `{`+tbl+`}`)
	call("alice", T+"GetRoads", `{`+tbl+`}`)
	_, m = call("alice", T+"ListRounds", `{"playerId":"alice"}`)
	if rounds, _ := m["rounds"].([]any); len(rounds) > 0 {
		r, _ := rounds[0].(map[string]any)
		call("alice", T+"GetRound", `{"roundId":"`+fmt.Sprint(r["roundId"])+`"}`)
	}
	call("alice", W+"GetAccount", `{"accountId":"player:alice"}`)
	call("alice", W+"ListStatement", `{"accountId":"player:alice"}`)
	call("alice", W+"GetPlayerLimits", `{"accountId":"player:alice"}`)
	call("auditor", W+"AuditLedger", `{}`)
	_, m = call("croupier", T+"GetTable", `{`+tbl+`}`)
	table, _ = m["table"].(map[string]any)
	if shoe, _ := table["shoeId"].(string); shoe != "" {
		call("alice", "chemmy.shoe.v1.ShoeService/GetShoe", `{"shoeId":"`+shoe+`"}`)
		call("alice", "chemmy.shoe.v1.ShoeService/ListCardFates", `{"shoeId":"`+shoe+`"}`)
	}
	call("croupier", T+"CloseTable", `{"requestId":"oa-close",`+tbl+`,"reason":"done"}`)
	if len(checked) < 20 {
		t.Errorf("only %d methods checked: %v", len(checked), checked)
	}
}
