package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chemmy/chemmy/cmd/stack"
	"github.com/chemmy/chemmy/gateway/gateway"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// seedRecord is what the console keeps of a player's seed for a shoe
// (localStorage "chemmy-seed/<table>/<shoe>/<player>").
type seedRecord struct {
	Seed, Commitment, ServerCommitment string
	TableID                            string `json:"tableId"`
	ShoeID                             string `json:"shoeId"`
	Player                             string
	Revealed, InShoe, Done             bool
}

// seedRecord reads the page's record of its player's seed for a shoe
// (nil when it has none).
func (p *page) seedRecord(tableID, shoeID string) *seedRecord {
	t := p.b.t
	t.Helper()
	raw := p.eval(`localStorage.getItem('chemmy-seed/` + tableID + `/` + shoeID + `/` + p.who + `') || ''`)
	if raw == "" {
		return nil
	}
	var r seedRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("%s's seed record %q: %v", p.who, raw, err)
	}
	return &r
}

// seedStatus waits until the page's own part of the "Fair shoe" says
// status (data-status of #fair-mine), within d.
func seedStatus(status string, d time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`document.getElementById('fair-mine').dataset.status === '`+status+`'`, chromedp.WithPollingTimeout(d))
}

// logHas waits until the page's event log has a line containing text.
func logHas(text string, d time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('#log li')].some(li => li.textContent.includes(`+jsString(text)+`))`,
		chromedp.WithPollingTimeout(d))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pbTable opens a punto banco table on a shoe of its own (it collects
// the players' seeds), its betting window window ms, no result pause, the
// house funded; it returns the table as the croupier sees it.
func pbTable(t *testing.T, c *client, window int32) *tablev1.Table {
	t.Helper()
	if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/float", AccountId: "house:bank", Amount: 100000}); err != nil {
		t.Fatal(err)
	}
	zero := int32(0)
	tb, err := c.table.CreateTable(as(t, "croupier"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table",
		Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{BettingWindowMs: window, ResultPauseMs: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	e := tb.GetTable().GetShoeEntropy()
	if !e.GetCollecting() || len(e.GetCommitment()) != fair.CommitmentSize {
		t.Fatalf("the new table's shoe does not collect seeds: %v", e)
	}
	return tb.GetTable()
}

// entropyOf is the table's shoe entropy as who sees it (GetTable).
func entropyOf(t *testing.T, c *client, who, tableID string) (*tablev1.Table, *tablev1.ShoeEntropy) {
	t.Helper()
	resp, err := c.table.GetTable(as(t, who), &tablev1.GetTableRequest{TableId: tableID})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTable(), resp.GetTable().GetShoeEntropy()
}

// commitmentOf is who's commitment among e's, nil when none.
func commitmentOf(e *tablev1.ShoeEntropy, who string) []byte {
	for _, c := range e.GetCommitments() {
		if c.GetPlayerId() == who {
			return c.GetCommitment()
		}
	}
	return nil
}

// TestConsoleSeedsTheShoe: the table console takes a player's part in
// the seeds of a table's shoe (docs/guide-fairness.md, "Provably fair shoes"). bob opens
// the console at a fresh punto banco table whose shoe collects seeds: it
// shows the shoe's server commitment, and commits nothing while he only
// looks. He sits down: the console commits SHA-256 of a fresh 32-byte
// seed (kept in localStorage; GetTable shows his commitment). He bets:
// when the betting window closes the commitments are fixed, the console
// reveals his seed by itself, the shoe is seeded with it and the page
// says "Your seed is in this shoe", with his seed and the chemmy verify
// command; GetTable lists him in the shoe's entropy, and once the table
// is closed the shoe's reveal holds his seed and verifies. The event log
// describes the new events. The console's own SHA-256 (for a page that
// is not a secure context, where crypto.subtle is missing) agrees with
// Go's. Screenshot: seeds-bob-in-shoe.png.
func TestConsoleSeedsTheShoe(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "bob")
	tb := pbTable(t, c, 2000)
	id, shoeID := tb.GetTableId(), tb.GetShoeId()
	server := hex.EncodeToString(tb.GetShoeEntropy().GetCommitment())

	bob := b.open(st.GatewayHTTPAddr, "bob", "?table="+id)
	bob.do("sees the shoe's commitment", waitFor(`document.getElementById('fair').dataset.commitment === '`+server+`'`), seedStatus("idle", 30*time.Second))
	if f := bob.text("fair"); !strings.Contains(f, "server commitment "+server[:8]+"…") || !strings.Contains(f, "no seed committed yet") {
		t.Errorf("bob's Fair shoe line, before any commitment: %q", f)
	}
	// The console's SHA-256, used where crypto.subtle is missing.
	for _, n := range []int{0, 3, 55, 56, 64, 119, 1000} {
		data := make([]byte, n)
		rand.Read(data)
		sum := sha256.Sum256(data)
		if got := bob.eval(`ChemmyFair.hex(ChemmyFair.sha256(ChemmyFair.fromHex('` + hex.EncodeToString(data) + `')))`); got != hex.EncodeToString(sum[:]) {
			t.Errorf("the console's SHA-256 of %d bytes: %s, want %x", n, got, sum)
		}
	}
	// Looking is not taking part: no commitment.
	if _, e := entropyOf(t, c, "croupier", id); len(e.GetCommitments()) != 0 {
		t.Fatalf("bob only looked, and the shoe has commitments %v", e.GetCommitments())
	}

	// He sits down: the console commits.
	bob.do("sits, and the console commits", press("sit"), seedStatus("committed", 30*time.Second))
	rec := bob.seedRecord(id, shoeID)
	if rec == nil || len(rec.Seed) != 64 || rec.ServerCommitment != server || rec.Revealed {
		t.Fatalf("bob's seed record after the commitment: %+v", rec)
	}
	if _, err := hex.DecodeString(rec.Seed); err != nil {
		t.Fatalf("bob's seed %q is not hex", rec.Seed)
	}
	sum := sha256.Sum256([]byte(rec.Seed))
	_, e := entropyOf(t, c, "croupier", id)
	if got := commitmentOf(e, "bob"); !bytes.Equal(got, sum[:]) || rec.Commitment != hex.EncodeToString(sum[:]) {
		t.Fatalf("bob's commitment at the table %x, in the page %s; SHA-256 of his seed %x", got, rec.Commitment, sum)
	}
	if m := bob.text("fair-mine"); m != "Your seed is committed (commitment "+rec.Commitment[:8]+"…): the console reveals it when the table asks." {
		t.Errorf("bob's own line once committed: %q", m)
	}

	// He bets; the window closes, the console reveals, the shoe is seeded.
	bob.do("bets, and the console reveals", chromedp.SetValue(chromedp.ID("bet-amount"), "1"), press("spot-BANK"),
		logHas("the seed commitments are fixed (bob): reveal by ", 30*time.Second),
		seedStatus("in-shoe", 30*time.Second), logHas("the shoe is seeded with the seeds of bob", 10*time.Second),
		waitFor(`document.getElementById('result').dataset.settled === 'true'`))
	if m := bob.text("fair-mine"); m != "Your seed is in this shoe (commitment "+rec.Commitment[:8]+"…)." {
		t.Errorf("bob's own line once seeded: %q", m)
	}
	if f := bob.text("fair"); !strings.Contains(f, "seeded with the seeds of bob (you)") {
		t.Errorf("bob's Fair shoe line once seeded: %q", f)
	}
	if v := bob.text("fair-verify"); !strings.Contains(v, "Your seed: "+rec.Seed) ||
		!strings.Contains(v, "chemmy verify -commitment "+server+" -player-seed "+rec.Seed) || !strings.Contains(v, shoeID) {
		t.Errorf("bob's hint to check the shoe: %q", v)
	}
	if e := bob.eval(`document.getElementById('error').hidden ? '' : document.getElementById('error').textContent`); e != "" {
		t.Errorf("bob is shown the error %q", e)
	}
	bob.shot("seeds-bob-in-shoe.png")
	if r := bob.seedRecord(id, shoeID); r == nil || !r.Revealed || !r.InShoe || !r.Done || r.Seed != rec.Seed {
		t.Errorf("bob's seed record once seeded: %+v", r)
	}
	tbl, e := entropyOf(t, c, "bob", id)
	if !e.GetSeeded() || !e.GetPlayerEntropy() || !slices.Equal(e.GetPlayerIds(), []string{"bob"}) || !bytes.Equal(commitmentOf(e, "bob"), sum[:]) ||
		tbl.GetShoeId() != shoeID {
		t.Fatalf("the shoe's entropy once seeded: %v (shoe %s)", e, tbl.GetShoeId())
	}

	// Once the shoe is closed its reveal holds bob's seed, and verifies.
	if _, err := c.table.CloseTable(as(t, "croupier"), &tablev1.CloseTableRequest{RequestId: t.Name() + "/close", TableId: id, Reason: "end of the test"}); err != nil {
		t.Fatal(err)
	}
	rv, err := c.shoe.GetShoeReveal(as(t, "bob"), &shoev1.GetShoeRevealRequest{ShoeId: shoeID})
	if err != nil {
		t.Fatal(err)
	}
	reveal := rv.GetReveal()
	if i := slices.Index(reveal.GetPlayerSeeds(), rec.Seed); i < 0 || reveal.GetPlayerSeedPlayerIds()[i] != "bob" || hex.EncodeToString(reveal.GetCommitment()) != server {
		t.Fatalf("the reveal: seeds %q of %q, commitment %x (the page showed %s)", reveal.GetPlayerSeeds(), reveal.GetPlayerSeedPlayerIds(), reveal.GetCommitment(), server)
	}
	if err := fair.Verify(shoesvc.FairReveal(reveal)); err != nil {
		t.Fatalf("bob's shoe does not verify: %v", err)
	}
}

// TestConsoleSeedWithheld: carol commits a seed (not from the console)
// and withholds it. bob's console commits and reveals his; at the reveal
// deadline the shoe is abandoned, and bob's event log says so in words.
// The new shoe takes commitments for one seed window: bob's console
// commits a new seed to it and reveals that one, and the shoe is seeded
// with bob's seed alone; carol is named as having withheld, and her own
// console says the table takes no seed of hers. The seed window is 6 s.
func TestConsoleSeedWithheld(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	b := startBrowser(t)
	st := startStackWith(t, stack.Config{TokensFile: tokensFile(t), Limits: gateway.LimitConfig{Rate: -1}, GatewayHTTPAddr: "127.0.0.1:0",
		SeedWindow: 6 * time.Second})
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "bob", "carol")
	tb := pbTable(t, c, 2000)
	id, first := tb.GetTableId(), tb.GetShoeId()

	withheld := sha256.Sum256([]byte("carol's seed, never revealed"))
	if _, err := c.table.CommitSeed(as(t, "carol"), &tablev1.CommitSeedRequest{RequestId: t.Name() + "/carol", TableId: id, PlayerId: "carol",
		Commitment: withheld[:]}); err != nil {
		t.Fatal(err)
	}
	bob := b.open(st.GatewayHTTPAddr, "bob", "?table="+id)
	bob.do("sits, and the console commits", press("sit"), seedStatus("committed", 30*time.Second))
	rec1 := bob.seedRecord(id, first)
	if rec1 == nil {
		t.Fatal("bob's console kept no seed for the first shoe")
	}
	// The betting closes 2 s after his bet; bob reveals, carol does not;
	// 6 s later the shoe is abandoned, and the next one collects for 6 s.
	bob.do("bets; the shoe is abandoned", chromedp.SetValue(chromedp.ID("bet-amount"), "1"), press("spot-BANK"),
		logHas("the seed commitments are fixed (bob, carol): reveal by ", 30*time.Second),
		logHas("the shoe was abandoned: carol withheld a seed", 30*time.Second))
	if r := bob.seedRecord(id, first); r == nil || !r.Revealed {
		t.Errorf("bob's seed for the abandoned shoe was not revealed: %+v", r)
	}
	bob.do("commits to the new shoe, reveals, and is in it", seedStatus("in-shoe", 60*time.Second),
		waitFor(`document.getElementById('result').dataset.settled === 'true'`))
	tbl, e := entropyOf(t, c, "croupier", id)
	second := tbl.GetShoeId()
	if second == first || !e.GetSeeded() || !slices.Equal(e.GetPlayerIds(), []string{"bob"}) || !slices.Equal(e.GetWithheldPlayerIds(), []string{"carol"}) {
		t.Fatalf("the table after the abandoned shoe: shoe %s (first %s), entropy %v", second, first, e)
	}
	rec2 := bob.seedRecord(id, second)
	if rec2 == nil || rec2.Seed == rec1.Seed || !rec2.InShoe {
		t.Fatalf("bob's seed records: first shoe %+v, second %+v", rec1, rec2)
	}
	if sum := sha256.Sum256([]byte(rec2.Seed)); !bytes.Equal(commitmentOf(e, "bob"), sum[:]) {
		t.Errorf("bob's commitment in the new shoe %x is not SHA-256 of his new seed", commitmentOf(e, "bob"))
	}
	if r := bob.seedRecord(id, first); r == nil || r.InShoe || !r.Done {
		t.Errorf("bob's record of the abandoned shoe: %+v", r)
	}
	if f := bob.text("fair"); !strings.Contains(f, "withheld at this table: carol") {
		t.Errorf("bob's Fair shoe line: %q", f)
	}
	bob.shot("seeds-withheld-bob.png")

	carol := b.open(st.GatewayHTTPAddr, "carol", "?table="+id)
	carol.do("is told she withheld", seedStatus("withheld", 30*time.Second))
	if m := carol.text("fair-mine"); !strings.HasPrefix(m, "You withheld a committed seed at this table") {
		t.Errorf("carol's own line: %q", m)
	}
	if r := carol.seedRecord(id, second); r != nil {
		t.Errorf("carol's console kept a seed: %+v", r)
	}
}
