package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTableWalkthroughScript runs examples/table.sh (the README's
// walk-through: three punters, a banco, a pass and a loss of the bank) with
// the real grpcurl against the real stack, and checks where the money went.
func TestTableWalkthroughScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "table.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_GATEWAY="+st.GatewayAddr, "GRPCURL="+grpcurlPath(t), "RUN_ID=walk")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("table.sh: %v\n%s", err, out.String())
	}
	t.Logf("table.sh:\n%s", out.String())
	// Coup 1: the bank wins 1000 less 50; coup 2: bob's banco of 1950
	// loses, commission 97; coup 3: bob's bank of 500 is lost to carol.
	want := map[string]int64{"player:alice": 12803, "player:bob": 7250, "player:carol": 10200, "player:dave": 9600, "house:commission": 147}
	for a, w := range want {
		if got := c.balance(t, a); got != w {
			t.Errorf("%s = %d, want %d", a, got, w)
		}
	}
}
