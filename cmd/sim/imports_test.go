package sim

import (
	"os/exec"
	"strings"
	"testing"
)

// TestJudgesByTheOracle: the simulation's checks take what a coup should
// be from cmd/sim/oracle, not from the code it judges: its own files
// (tests included) import neither the rules engine nor a game core. (It
// starts the services, which do: that is what it runs, not what it
// expects.)
func TestJudgesByTheOracle(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}} {{join .TestImports \" \"}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	for _, judged := range []string{"github.com/chemmy/chemmy/services/rules", "github.com/chemmy/chemmy/services/odds", "github.com/chemmy/chemmy/table-svc/game"} {
		for _, p := range imports {
			if p == judged || strings.HasPrefix(p, judged+"/") {
				t.Errorf("cmd/sim imports %s: its expectations must come from the oracle", p)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/chemmy/chemmy/cmd/sim/oracle") {
		t.Errorf("cmd/sim does not import the oracle: %s", out)
	}
}
