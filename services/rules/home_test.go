package rules

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// moneyOutsideHome are the shapes of a money computation: a rounding
// helper or a payout, commission or fee function defined, or an amount
// scaled by a basis-point rate (10000, 100%) or by the seconds of an hour
// (the hourly fee). Outside this package they mean a second home.
var moneyOutsideHome = []struct {
	why string
	re  *regexp.Regexp
}{
	{"a money helper or a payout, commission or fee function", regexp.MustCompile(
		`\bfunc\s+(\([^)]*\)\s*)?(?i:mulDiv|divRound|roundShare|commission|hourlyFee|auctionFee|bankAuctionFee|payout|splitPool|poolSplit)\w*\s*[\[(]|` +
			`\b(?i:mulDiv|divRound)\w*\s*\(`)},
	{"an amount scaled by basis points", regexp.MustCompile(
		`[*/%]\s*(rules\.)?(10000|10_000|1e4|MaxCommissionBP|BanqueAuctionFeeBP|bpDenominator|[cC]ommission_?[bB][pP]\b|[bB][pP]\b)|` +
			`\b(10000|10_000|MaxCommissionBP|BanqueAuctionFeeBP|bpDenominator|[cC]ommission_?[bB][pP]|[bB][pP])\s*(\(\))?\s*[*/%]`)},
	{"an amount scaled by the seconds of an hour", regexp.MustCompile(
		`\b(3600|secondsPerHour)\s*[*/%]|[*/%]\s*(3600|secondsPerHour)\b|[hH]ourly_?[fF]ee\w*(\(\))?\s*\*|\*\s*\w*\.?[hH]ourly_?[fF]ee`)},
}

// literal is a string or rune literal on one line.
var literal = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`|'(?:[^'\\\\]|\\\\.)*'")

// exempt are the paths (from the repository's root, slash-separated
// prefixes) that may compute money on their own: this package, the home;
// the simulation's oracle, which settles every game a second time,
// independently, to check this package (cmd/sim/README.md); generated
// code.
var exempt = []string{"services/rules/", "cmd/sim/oracle/", "proto/gen/"}

// TestMoneyHasOneHome: no Go source outside this package (tests aside:
// their expected values are worked out on their own, by design) computes
// a commission, a fee or a rounded share of an amount. Every such
// computation belongs here, documented in doc.go ("Money"); the wallet
// and the table cores call it.
func TestMoneyHasOneHome(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Skip("not in the chemmy workspace: the repository is not here to read")
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, p := range exempt {
			if strings.HasPrefix(rel, p) {
				return nil
			}
		}
		files++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			// Strings and comments may speak of rates ("%d bp").
			line = literal.ReplaceAllString(line, `""`)
			if i := strings.Index(line, "//"); i >= 0 {
				line = line[:i]
			}
			for _, m := range moneyOutsideHome {
				if m.re.MatchString(line) {
					t.Errorf("%s:%d: %s outside services/rules, the home of money: %s", rel, n, m.why, strings.TrimSpace(sc.Text()))
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s: not the repository", files, root)
	}
}

// TestMoneyHasOneHomeCatches: the patterns find what the wallet and the
// table held before the money came home, and pass their calls of it.
func TestMoneyHasOneHomeCatches(t *testing.T) {
	match := func(line string) bool {
		for _, m := range moneyOutsideHome {
			if m.re.MatchString(line) {
				return true
			}
		}
		return false
	}
	for _, line := range []string{
		`func mulDiv(a, b, d int64, r walletv1.CommissionRounding) (int64, error) {`,
		`func bankAuctionFee(bid int64, r walletv1.CommissionRounding) (int64, error) {`,
		`func hourlyFee(perHour, seatSeconds int64, r walletv1.CommissionRounding) (int64, error) {`,
		`func (s *State) commissionOf(w int64) int64 {`,
		`	return mulDiv(bid, bankAuctionFeeBP, bpDenominator, r)`,
		`	c := out.BankerWinnings * req.GetCommissionBp() / 10000`,
		`	fee := e.HourlyFee * f.Seconds / 3600`,
		`	fee := (bid*rules.BanqueAuctionFeeBP + 9999) / 10000`,
		`	c := w * bp / 10000`,
	} {
		if !match(line) {
			t.Errorf("not caught: %s", line)
		}
	}
	for _, line := range []string{
		`	c := rules.Commission(out.BankerWinnings, req.GetCommissionBp(), roundings[req.GetCommissionRounding()])`,
		`		fee = rules.BanqueAuctionFee(req.GetBid(), roundings[req.GetRounding()])`,
		`	if fee, err := rules.HourlyFeeDue(s.feeRules(), owed); err != nil || fee == 0 {`,
		`	case r.CommissionBP < 0 || r.CommissionBP > rules.MaxCommissionBP:`,
		`	keep := big.NewRat(rules.MaxCommissionBP-commissionBP, rules.MaxCommissionBP)`,
		`	minInactivityMS = 10000`,
		`	out.Commission = st.Commission`,
	} {
		if match(line) {
			t.Errorf("caught, but it computes nothing: %s", line)
		}
	}
}
