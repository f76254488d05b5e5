package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chemmy/chemmy/cmd/stack"
)

// TestTableWalkthroughScript runs examples/table.sh (the chemin de fer
// walk-through of docs/walkthroughs/chemin-de-fer.md: three punters, a banco, a pass and a loss of the bank)
// against the real stack, with the real grpcurl and, over HTTP/JSON, with
// the real curl (CHEMMY_TRANSPORT=http), and checks where the money went.
func TestTableWalkthroughScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	for _, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			st := startHTTPStack(t)
			c := dial(t, st.GatewayAddr)
			runExample(t, st, transport, "table.sh", "RUN_ID=walk")
			// Coup 1: the bank wins 1000 less 50; coup 2: bob's banco of
			// 1950 loses, commission 97; coup 3: bob's bank of 500 is lost
			// to carol.
			want := map[string]int64{"player:alice": 12803, "player:bob": 7250, "player:carol": 10200, "player:dave": 9600, "house:commission": 147}
			for a, w := range want {
				if got := c.balance(t, a); got != w {
					t.Errorf("%s = %d, want %d", a, got, w)
				}
			}
		})
	}
}

// runExample runs examples/<script> against st with the given transport
// ("grpc": the real grpcurl; "http": the real curl and jq, skipping the
// test when they are not installed) and the extra environment, fails the
// test if it fails, and returns what it printed.
func runExample(t *testing.T, st *stack.Stack, transport, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", script))
	cmd.Env = append(os.Environ(), "CHEMMY_TRANSPORT="+transport, "CHEMMY_GATEWAY="+st.GatewayAddr, "CHEMMY_HTTP="+st.GatewayHTTPAddr)
	if transport == "http" {
		cmd.Env = append(cmd.Env, "CURL="+lookTool(t, "curl"), "JQ="+lookTool(t, "jq"))
	} else {
		cmd.Env = append(cmd.Env, "GRPCURL="+grpcurlPath(t))
	}
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s over %s: %v\n%s", script, transport, err, out.String())
	}
	t.Logf("%s over %s:\n%s", script, transport, out.String())
	return out.String()
}

// lookTool finds a command on PATH, or skips the test: curl and jq are
// not part of Go's toolchain (.ci/run installs them).
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s on PATH: install it (apt-get install %s; .ci/run does) to run this test", name, name)
	}
	return p
}

// tableOf is the table id a script printed on its last TABLE= line.
func tableOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^TABLE=(\S+)$`).FindAllStringSubmatch(out, -1)
	if m == nil {
		t.Fatalf("the script printed no TABLE= line")
	}
	return m[len(m)-1][1]
}
