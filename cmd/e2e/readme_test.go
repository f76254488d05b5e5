package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// readmeBlock is a shell block of README.md that the README marks for
// this test: the fenced ```sh block on the line after
// <!-- test: TOOL-WALK -->, TOOL being grpcurl or curl and WALK the
// walk-through it shows.
type readmeBlock struct {
	tool, walk string
	line       int // the block's first line in README.md, from 1
	text       string
}

var readmeMarker = regexp.MustCompile(`^<!-- test: (grpcurl|curl)-([a-z0-9-]+) -->$`)

// readmeBlocks reads the marked blocks of README.md, in order.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var blocks []readmeBlock
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "<!-- test:") && !readmeMarker.MatchString(lines[i]) {
			t.Fatalf("README.md:%d: %q is not <!-- test: grpcurl-NAME --> or <!-- test: curl-NAME -->", i+1, lines[i])
		}
		m := readmeMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if i+1 == len(lines) || lines[i+1] != "```sh" {
			t.Fatalf("README.md:%d: %s-%s is not followed by a ```sh block", i+1, m[1], m[2])
		}
		end := slices.Index(lines[i+2:], "```")
		if end < 0 {
			t.Fatalf("README.md:%d: the block of %s-%s does not end", i+2, m[1], m[2])
		}
		blocks = append(blocks, readmeBlock{tool: m[1], walk: m[2], line: i + 3, text: strings.Join(lines[i+2:i+2+end], "\n")})
		i += 2 + end
	}
	return blocks
}

// TestReadmeWalkthroughs runs the README's walk-throughs as a reader
// would paste them: the blocks marked for grpcurl, in order, in one shell
// on a fresh stack, then the blocks marked for curl likewise on another
// (the blocks after "Calling it" use the curl helper it defines). The
// addresses of `make run` (localhost:7000, localhost:7080) are replaced
// by the stack's, and `go run ./cmd/chemmy` by a chemmy built once. Every
// step must succeed (bash -e, pipefail; the curl helper fails on an HTTP
// error, grpcurl on a gRPC one); each walk-through must be shown with both
// tools, the same ones in the same order; and at the end the money must
// add up: the ledger balanced, every unit deposited in a player's or the
// house's account, nothing held but the bankers' banks, each table's coup
// settled, and the balances the README's stories give.
func TestReadmeWalkthroughs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	blocks := readmeBlocks(t)
	walks := map[string][]string{}
	byTool := map[string][]readmeBlock{}
	for _, b := range blocks {
		walks[b.tool] = append(walks[b.tool], b.walk)
		byTool[b.tool] = append(byTool[b.tool], b)
	}
	want := []string{"calling", "chemin-de-fer", "punto-banco", "banque", "old-baccarat", "odds", "ledger", "fair-shoe"}
	for _, tool := range []string{"grpcurl", "curl"} {
		if !slices.Equal(walks[tool], want) {
			t.Errorf("README.md's %s walk-throughs: %v, want %v (each shown with grpcurl and with curl)", tool, walks[tool], want)
		}
	}
	if t.Failed() {
		return
	}
	tools := map[string]string{"jq": lookTool(t, "jq"), "curl": lookTool(t, "curl"), "grpcurl": grpcurlPath(t)}
	chemmy := filepath.Join(t.TempDir(), "chemmy")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", chemmy, "./cmd/chemmy")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/chemmy: %v\n%s", err, out)
	}
	for _, tool := range []string{"grpcurl", "curl"} {
		t.Run(tool, func(t *testing.T) { runReadme(t, byTool[tool], tools, chemmy) })
	}
}

// runReadme runs blocks in one bash on a fresh stack and checks the money.
func runReadme(t *testing.T, blocks []readmeBlock, tools map[string]string, chemmy string) {
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	local := strings.NewReplacer("localhost:7000", st.GatewayAddr, "localhost:7080", st.GatewayHTTPAddr, "go run ./cmd/chemmy", chemmy)
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, b := range blocks {
		fmt.Fprintf(&script, "echo '=== README.md:%d %s-%s'\n%s\n", b.line, b.tool, b.walk, local.Replace(b.text))
	}
	path := []string{}
	for _, p := range tools {
		path = append(path, filepath.Dir(p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+strings.Join(append(path, os.Getenv("PATH")), string(os.PathListSeparator)))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("the README's %s blocks:\n%s", blocks[0].tool, out.String())
	if err != nil {
		t.Fatalf("the README's %s blocks failed (the last === line names the block): %v", blocks[0].tool, err)
	}
	if !strings.Contains(out.String(), "\nOK shoe ") {
		t.Errorf("chemmy verify did not say OK")
	}

	// The tables: the four walk-throughs' coups all settled (chemin de
	// fer's three, the pass between its second and third being none),
	// none in play.
	resp, err := c.table.ListTables(as(t, "croupier"), &tablev1.ListTablesRequest{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	played := map[tablev1.Variant]int64{}
	var banks int64
	for _, tbl := range resp.GetTables() {
		v := tbl.GetVariant()
		if v == tablev1.Variant_VARIANT_UNSPECIFIED {
			v = tablev1.Variant_VARIANT_CHEMIN_DE_FER // a table created without a variant
		}
		played[v] += tbl.GetCoupsPlayed()
		if (tbl.GetCoupsPlayed() > 0 && !tbl.GetLastCoup().GetSettled()) || len(tbl.GetCoup().GetBets()) != 0 {
			t.Errorf("table %s (%s): last coup %v, coup in play %v", tbl.GetTableId(), tbl.GetVariant(), tbl.GetLastCoup(), tbl.GetCoup())
		}
		if tbl.GetBankerPlayerId() != "" {
			banks += tbl.GetBank()
		}
	}
	wantPlayed := map[tablev1.Variant]int64{tablev1.Variant_VARIANT_CHEMIN_DE_FER: 3, tablev1.Variant_VARIANT_PUNTO_BANCO: 1,
		tablev1.Variant_VARIANT_BACCARAT_BANQUE: 1, tablev1.Variant_VARIANT_OLD_BACCARAT: 1}
	for v, n := range wantPlayed {
		if played[v] != n {
			t.Errorf("%s: %d coups played, want %d", v, played[v], n)
		}
	}

	// The money: the ledger balances, and what is in the wallet is in the
	// players' and the house's accounts, held only as the bankers' banks.
	audit, err := c.wallet.AuditLedger(as(t, "auditor"), &walletv1.AuditLedgerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !audit.GetBalanced() || len(audit.GetCurrencies()) != 1 {
		t.Fatalf("audit: %v", audit)
	}
	cur := audit.GetCurrencies()[0]
	var total, held int64
	for _, a := range []string{"player:alice", "player:bob", "player:carol", "player:dave", "house:bank", "house:commission"} {
		acct := c.account(t, a)
		total += acct.GetBalance()
		held += acct.GetHeld()
	}
	if total != cur.GetInWallet() || held != cur.GetHeld() || held != banks {
		t.Errorf("accounts hold %d (%d held), the wallet %d (%d held), the tables' banks %d", total, held, cur.GetInWallet(), cur.GetHeld(), banks)
	}
	// The stories the README tells, where the shoe's order is given: dave
	// plays chemin de fer only (9600); carol ends it with 10200, loses her
	// 400 à cheval at banque and her 300 stake at the old game.
	for a, w := range map[string]int64{"player:dave": 9600, "player:carol": 10200 + 10000 - 400 + 10000 - 300} {
		if got := c.balance(t, a); got != w {
			t.Errorf("%s = %d, want %d", a, got, w)
		}
	}
}
