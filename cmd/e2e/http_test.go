package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on PATH")
	}
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)

	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "coup-http.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_HTTP="+st.GatewayHTTPAddr, "CURL="+curl, "RUN_ID=e2e-http")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("coup-http.sh: %v\n%s", err, out.String())
	}
	t.Logf("coup-http.sh:\n%s", out.String())
	m := regexp.MustCompile(`(?m)^TABLE=(\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("coup-http.sh printed no TABLE= line")
	}
	tableID := m[1]
	if !regexp.MustCompile(`"reason": ?"NOT_YOUR_TURN"[^\n]*\(HTTP 400\)`).MatchString(out.String()) {
		t.Errorf("the early bet's error shows no NOT_YOUR_TURN reason with HTTP 400")
	}
	if !regexp.MustCompile(`\{"table": ?\{"tableId": ?"` + tableID).MatchString(out.String()) {
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
		if !strings.Contains(out.String(), a+" ") {
			t.Errorf("no balance line for %s", a)
		}
	}
	if !strings.Contains(out.String(), last.GetOutcome().String()) {
		t.Errorf("the script did not print the outcome %v", last.GetOutcome())
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
