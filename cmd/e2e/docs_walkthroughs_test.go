package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
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

// docBlock is a shell block of a walk-through document that the
// document marks for this test: the fenced ```sh block on the line after
// <!-- test: TOOL-WALK -->, TOOL being grpcurl or curl and WALK the
// walk-through it shows.
type docBlock struct {
	tool, walk string
	file       string // the document, from the repository's root
	line       int    // the block's first line in file, from 1
	text       string
}

var docMarker = regexp.MustCompile(`^<!-- test: (grpcurl|curl)-([a-z0-9-]+) -->$`)

// walkthroughDocs are the documents whose marked blocks
// TestDocWalkthroughs runs, in this order: a reader goes through them
// one after another in one shell, and the later blocks use what the
// earlier ones define (the curl helper `call` of calling.md). A marked
// block in any other Markdown file of the repository fails the test, so
// that no walk-through goes unrun.
var walkthroughDocs = []string{
	"README.md",
	"docs/walkthroughs/calling.md",
	"docs/walkthroughs/chemin-de-fer.md",
	"docs/walkthroughs/punto-banco.md",
	"docs/walkthroughs/banque.md",
	"docs/walkthroughs/old-baccarat.md",
	"docs/walkthroughs/odds.md",
	"docs/guide-operator.md", // the ledger
	"docs/guide-fairness.md", // a fair shoe
}

// docBlocks reads the marked blocks of walkthroughDocs, in order.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	root := repoRoot(t)
	for _, f := range markdownFiles(t, root) {
		if slices.Contains(walkthroughDocs, f) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "<!-- test:") {
				t.Fatalf("%s:%d: %q: a marked block outside the walk-through documents (add %s to walkthroughDocs)", f, i+1, l, f)
			}
		}
	}
	var blocks []docBlock
	for _, f := range walkthroughDocs {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], "<!-- test:") && !docMarker.MatchString(lines[i]) {
				t.Fatalf("%s:%d: %q is not <!-- test: grpcurl-NAME --> or <!-- test: curl-NAME -->", f, i+1, lines[i])
			}
			m := docMarker.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			if i+1 == len(lines) || lines[i+1] != "```sh" {
				t.Fatalf("%s:%d: %s-%s is not followed by a ```sh block", f, i+1, m[1], m[2])
			}
			end := slices.Index(lines[i+2:], "```")
			if end < 0 {
				t.Fatalf("%s:%d: the block of %s-%s does not end", f, i+2, m[1], m[2])
			}
			blocks = append(blocks, docBlock{tool: m[1], walk: m[2], file: f, line: i + 3, text: strings.Join(lines[i+2:i+2+end], "\n")})
			i += 2 + end
		}
	}
	return blocks
}

// markdownFiles lists the repository's Markdown files (slash-separated,
// from root), leaving out hidden directories (.git, .chemmy), ./bin and
// the tests' output.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "bin" || d.Name() == "test-output" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".md") {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") {
		t.Fatalf("no README.md under %s", root)
	}
	return files
}

// TestDocWalkthroughs runs the walk-throughs of the documents as a reader
// would paste them: the blocks marked for grpcurl, in order (the order of
// walkthroughDocs, then of each file), in one shell on a fresh stack, then
// the blocks marked for curl likewise on another (the blocks after
// calling.md's use the curl helper it defines). The
// addresses of `make run` (localhost:7000, localhost:7080) are replaced
// by the stack's, and `go run ./cmd/chemmy` by a chemmy built once. Every
// step must succeed (bash -e, pipefail; the curl helper fails on an HTTP
// error, grpcurl on a gRPC one); each walk-through must be shown with both
// tools, the same ones in the same order; and at the end the money must
// add up: the ledger balanced, every unit deposited in a player's or the
// house's account, nothing held but the bankers' banks, each table's coup
// settled, and the balances the walk-throughs' stories give.
func TestDocWalkthroughs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	blocks := docBlocks(t)
	walks := map[string][]string{}
	byTool := map[string][]docBlock{}
	for _, b := range blocks {
		walks[b.tool] = append(walks[b.tool], b.walk)
		byTool[b.tool] = append(byTool[b.tool], b)
	}
	want := []string{"calling", "chemin-de-fer", "punto-banco", "banque", "old-baccarat", "odds", "ledger", "fair-shoe"}
	for _, tool := range []string{"grpcurl", "curl"} {
		if !slices.Equal(walks[tool], want) {
			t.Errorf("the documents' %s walk-throughs: %v, want %v (each shown with grpcurl and with curl, in %v)", tool, walks[tool], want, walkthroughDocs)
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
		t.Run(tool, func(t *testing.T) { runDocBlocks(t, byTool[tool], tools, chemmy) })
	}
}

// runDocBlocks runs blocks in one bash on a fresh stack and checks the money.
func runDocBlocks(t *testing.T, blocks []docBlock, tools map[string]string, chemmy string) {
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	local := strings.NewReplacer("localhost:7000", st.GatewayAddr, "localhost:7080", st.GatewayHTTPAddr, "go run ./cmd/chemmy", chemmy)
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, b := range blocks {
		fmt.Fprintf(&script, "echo '=== %s:%d %s-%s'\n%s\n", b.file, b.line, b.tool, b.walk, local.Replace(b.text))
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
	t.Logf("the documents' %s blocks:\n%s", blocks[0].tool, out.String())
	if err != nil {
		t.Fatalf("the documents' %s blocks failed (the last === line names the block): %v", blocks[0].tool, err)
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
	// The stories the walk-throughs tell, where the shoe's order is given: dave
	// plays chemin de fer only (9600); carol ends it with 10200, loses her
	// 400 à cheval at banque and her 300 stake at the old game.
	for a, w := range map[string]int64{"player:dave": 9600, "player:carol": 10200 + 10000 - 400 + 10000 - 300} {
		if got := c.balance(t, a); got != w {
			t.Errorf("%s = %d, want %d", a, got, w)
		}
	}
}
