package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// startHTTPStack starts the suite with the gateway's HTTP side.
func startHTTPStack(t *testing.T) *stack.Stack {
	t.Helper()
	return startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, GatewayHTTPAddr: "127.0.0.1:0"})
}

// TestCurlExampleScript runs examples/coup-http.sh with the real curl
// against the real stack's HTTP/JSON side: the same coup as coup.sh, an
// error with its reason in JSON, a WatchTable stream as lines of JSON, and
// the money as the result says.
func TestCurlExampleScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	out := runExample(t, st, "http", "coup-http.sh", "RUN_ID=e2e-http")
	tableID := tableOf(t, out)
	if !regexp.MustCompile(`"reason": ?"NOT_YOUR_TURN"[^\n]*\(HTTP 400\)`).MatchString(out) {
		t.Errorf("the early bet's error shows no NOT_YOUR_TURN reason with HTTP 400")
	}
	if !regexp.MustCompile(`\{"table": ?\{"tableId": ?"` + tableID).MatchString(out) {
		t.Errorf("the WatchTable stream did not start with the table")
	}
	tbl, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: tableID})
	if err != nil {
		t.Fatal(err)
	}
	last := tbl.GetTable().GetLastCoup()
	if !last.GetSettled() {
		t.Fatalf("the coup is not settled: %v", tbl.GetTable())
	}
	bal := c.balances(t)
	if got := sum(bal); got != 15000 {
		t.Errorf("money not conserved: %d (%v)", got, bal)
	}
	for _, a := range []string{"player:alice", "player:bob", "player:carol", "house:commission"} {
		if !strings.Contains(out, a+" ") {
			t.Errorf("no balance line for %s", a)
		}
	}
	if !strings.Contains(out, last.GetOutcome().String()) {
		t.Errorf("the script did not print the outcome %v", last.GetOutcome())
	}
}

// TestExampleScriptsOverHTTP runs the example scripts of each game over
// the gateway's HTTP/JSON side (CHEMMY_TRANSPORT=http: the real curl, the
// answers indented by jq to grpcurl's layout), one coup each, one after
// the other on one stack; the gRPC runs of the same scripts (their own
// tests) check the games in depth, this that every call the scripts make
// works over HTTP: each script ends, its table's last coup is settled and
// nothing is in play, and the balances it printed add up to what it
// deposited.
func TestExampleScriptsOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	for _, s := range []struct {
		script   string
		deposits string // what the script's "the changes add up to" line must say
	}{
		{"coup.sh", ""},
		{"punto-banco.sh", "115000"},
		{"banque.sh", "40000"},
		{"old-baccarat.sh", "40000"},
	} {
		t.Run(s.script, func(t *testing.T) {
			out := runExample(t, st, "http", s.script, "RUN_ID=http-"+s.script, "COUPS=1")
			resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: tableOf(t, out)})
			if err != nil {
				t.Fatal(err)
			}
			tbl := resp.GetTable()
			if tbl.GetCoupsPlayed() < 1 || !tbl.GetLastCoup().GetSettled() || len(tbl.GetCoup().GetBets()) != 0 {
				t.Errorf("after %s: %d coups played, last coup %v, coup in play %v", s.script, tbl.GetCoupsPlayed(), tbl.GetLastCoup(), tbl.GetCoup())
			}
			if s.deposits != "" && !strings.Contains(out, "\nthe changes add up to "+s.deposits+", the "+s.deposits+" deposited") {
				t.Errorf("%s's balances do not add up to the %s it deposited", s.script, s.deposits)
			}
		})
	}
}

// TestHTTPWatchTableStream follows a table over HTTP as a browser would
// (fetch, newline-delimited JSON): the snapshot, then the events as they
// happen; and the stream counts against the caller's stream limit like a
// gRPC one.
func TestHTTPWatchTableStream(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	created, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: "h-t"})
	if err != nil {
		t.Fatal(err)
	}
	tableID := created.GetTable().GetTableId()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+st.GatewayHTTPAddr+"/chemmy.table.v1.TableService/WatchTable",
		strings.NewReader(`{"tableId":"`+tableID+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dave-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("stream ended: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", lines.Bytes(), err)
		}
		return m
	}
	if first := next(); first["table"] == nil {
		t.Fatalf("first line %v, want the table", first)
	}
	if _, err := c.table.JoinTable(as(t, "alice"), &tablev1.JoinTableRequest{RequestId: "h-j", TableId: tableID, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	for {
		m := next()
		ev, _ := m["event"].(map[string]any)
		if ev == nil {
			t.Fatalf("line %v, want an event", m)
		}
		if ev["playerSeated"] != nil {
			break
		}
	}

	// Without a token: the same error as over gRPC, before any line.
	resp2, err := http.Post("http://"+st.GatewayHTTPAddr+"/chemmy.table.v1.TableService/WatchTable", "application/json",
		strings.NewReader(`{"tableId":"`+tableID+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var e struct {
		Code    string `json:"code"`
		Details []struct {
			Debug struct{ Reason string } `json:"debug"`
		} `json:"details"`
	}
	if err := json.NewDecoder(resp2.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp2.StatusCode != 401 || e.Code != "unauthenticated" || len(e.Details) == 0 || e.Details[0].Debug.Reason != "TOKEN_MISSING" {
		t.Errorf("no token: %d %+v", resp2.StatusCode, e)
	}
}
