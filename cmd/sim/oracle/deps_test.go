package oracle

import (
	"os/exec"
	"strings"
	"testing"
)

// TestIndependent: the oracle judges services/rules, services/odds,
// table-svc, wallet-svc and shoe-svc, so it must not share their code:
// everything it builds on (go list -deps) is the standard library or
// itself.
func TestIndependent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	self := "github.com/chemmy/chemmy/cmd/sim/oracle"
	judged := []string{
		"github.com/chemmy/chemmy/services/rules", "github.com/chemmy/chemmy/services/odds",
		"github.com/chemmy/chemmy/table-svc", "github.com/chemmy/chemmy/wallet-svc", "github.com/chemmy/chemmy/shoe-svc",
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		n++
		for _, j := range judged {
			if path == j || strings.HasPrefix(path, j+"/") {
				t.Errorf("the oracle depends on %s, which it judges", path)
			}
		}
		if std != "true" && path != self {
			t.Errorf("the oracle depends on %s: only the standard library is allowed", path)
		}
	}
	if n < 2 {
		t.Fatalf("go list -deps listed %d packages: %s", n, out)
	}
}
