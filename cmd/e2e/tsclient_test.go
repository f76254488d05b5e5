package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// nodeFor finds Node.js and the TypeScript client's installed
// dependencies (clients/ts/node_modules, make ts-deps). Without them the
// test is skipped with a notice, or fails under CI (CI=1, as .ci/run
// sets it), like the browser tests.
func nodeFor(t *testing.T) (node, pkg string) {
	t.Helper()
	pkg = filepath.Join(repoRoot(t), "clients", "ts")
	miss := func(msg string) {
		if browserRequired() {
			t.Fatalf("%s (CI=%s: the TypeScript client's test must run)", msg, os.Getenv("CI"))
		}
		notice(t.Name() + " SKIPPED: " + msg)
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		miss("no node on PATH: install Node.js (20 or later) to run the TypeScript client's test")
	}
	if !fileExists(filepath.Join(pkg, "node_modules", "@connectrpc", "connect-web", "package.json")) {
		miss("clients/ts/node_modules is not installed: run make ts-deps (npm ci in clients/ts)")
	}
	return node, pkg
}

// TestTypeScriptClient plays a coup of chemin de fer with the generated
// TypeScript client (clients/ts, its example examples/coup.mjs run by
// the real Node.js) against the real stack's HTTP side, the Connect
// protocol: calls as five callers, an error with its code and reason, a
// call without a token, a call in protobuf, a server stream; then checks
// over gRPC that the coup it played is settled as it says and that the
// balances it read are the wallet's.
func TestTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	node, pkg := nodeFor(t)
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("examples", "coup.mjs"))
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "CHEMMY_HTTP=http://"+st.GatewayHTTPAddr, "RUN_ID=e2e-ts")
	out, err := cmd.CombinedOutput()
	t.Logf("node examples/coup.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("node examples/coup.mjs: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		Caller   struct{ Subject, Role string }
		TableID  string `json:"tableId"`
		EarlyBet struct{ Code, Reason string }
		NoToken  struct{ Code, Reason string }
		Watched  struct {
			Case    string
			TableID string `json:"tableId"`
		}
		Outcome  string
		Settled  bool
		Balances map[string]int64
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("the summary line: %v", err)
	}
	if got.Caller.Subject != "alice" || got.Caller.Role != "PLAYER" {
		t.Errorf("GetCaller: %+v", got.Caller)
	}
	if got.EarlyBet.Code != "FailedPrecondition" || got.EarlyBet.Reason != "NOT_YOUR_TURN" {
		t.Errorf("carol's early bet: %+v, want FailedPrecondition NOT_YOUR_TURN", got.EarlyBet)
	}
	if got.NoToken.Code != "Unauthenticated" || got.NoToken.Reason != "TOKEN_MISSING" {
		t.Errorf("a call without a token: %+v, want Unauthenticated TOKEN_MISSING", got.NoToken)
	}
	if got.Watched.Case != "table" || got.Watched.TableID != got.TableID || got.TableID == "" {
		t.Errorf("WatchTable's first message: %+v, want the table %q", got.Watched, got.TableID)
	}
	resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: got.TableID})
	if err != nil {
		t.Fatal(err)
	}
	last := resp.GetTable().GetLastCoup()
	if !last.GetSettled() || !got.Settled || "OUTCOME_"+got.Outcome != last.GetOutcome().String() {
		t.Errorf("the coup: settled %v, outcome %s; the client said settled %v, %s", last.GetSettled(), last.GetOutcome(), got.Settled, got.Outcome)
	}
	bal := c.balances(t)
	for a, want := range bal {
		if got.Balances[a] != want {
			t.Errorf("%s: the client read %d, the wallet has %d", a, got.Balances[a], want)
		}
	}
	if s := sum(bal); s != 15000 {
		t.Errorf("money not conserved: %d (%v)", s, bal)
	}
}
