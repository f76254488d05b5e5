package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// findBrowser is a Chromium or Chrome on this machine: $CHEMMY_CHROME, or
// one on the PATH.
func findBrowser() string {
	if p := os.Getenv("CHEMMY_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// consoleOut is the test's output folder for screenshots (gitignored).
func consoleOut(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "cmd", "e2e", "test-output", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConsolePlaysACoup plays a coup in the gateway's table console from
// two browser sessions, alice (the banker) and bob (the punter), against
// the real stack, on a certification shoe whose order gives bob a
// decision and then alice one: at each step it checks what each viewer's
// page shows (cards face down or not, whose turn), the live updates from
// WatchTable, an error's reason, and a croupier closing the table from a
// third session. Screenshots go to cmd/e2e/test-output/console/.
func TestConsolePlaysACoup(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	browser := findBrowser()
	if browser == "" {
		t.Skip("no browser found: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHEMMY_CHROME")
	}
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 5000, "alice", "bob")
	// Player 2C 3D = 5 (bob's option), banker KD 5H = 5; bob draws 4S, the
	// banker then has his option; alice draws 9C: player 9, banker 4.
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: "console-shoe", Cards: fullShoe("2C", "KD", "3D", "5H", "4S", "9C")})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: "console", ShoeId: sh.GetShoe().GetShoeId(),
		HouseRules: certificationRules()})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	out := consoleOut(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 1000),
		chromedp.Flag("disable-dev-shm-usage", true))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		t.Skipf("the browser %s does not start: %v", browser, err)
	}
	// press clicks a button as its own click handler sees it. Not a mouse
	// click at the button's coordinates: the page re-renders as events
	// arrive (a seat, a log line), and a layout shift between locating the
	// button and clicking would land the click elsewhere.
	press := func(id string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			if _, err := chromedp.WaitVisible(chromedp.ID(id))(ctx, tg); err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Evaluate[chromedp.Void](`document.getElementById('`+id+`').click()`)(ctx, tg)
		}
	}
	tab := func(who string) context.Context {
		tctx, cancel := chromedp.NewContext(bctx)
		t.Cleanup(cancel)
		url := "http://" + st.GatewayHTTPAddr + "/?table=" + id
		if err := chromedp.Do(tctx,
			chromedp.Navigate(url),
			chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), who+"-token"),
			press("login"),
			chromedp.Poll[chromedp.Void](`(document.getElementById('whoami').dataset.subject || '').startsWith('`+who+`') && document.getElementById('live').textContent === 'live'`,
				chromedp.WithPollingTimeout(20*time.Second)),
		); err != nil {
			info, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('whoami').textContent + '|' + document.getElementById('live').textContent + '|' + document.getElementById('error').textContent`))
			t.Fatalf("%s signs in: %v (%s)", who, err, info)
		}
		return tctx
	}
	run := func(tctx context.Context, who, step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tctx, actions...); err != nil {
			errText, _ := chromedp.Run(tctx, chromedp.TextContent(chromedp.ID("error")))
			shot(t, tctx, filepath.Join(out, "failed-"+who+".png"))
			t.Fatalf("%s, %s: %v (error box: %q)", who, step, err, errText)
		}
	}
	waitFor := func(js string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(20*time.Second))
	}
	stateIs := func(s string) chromedp.Action[chromedp.Void] {
		return waitFor(`document.getElementById('state').dataset.state === '` + s + `'`)
	}
	hands := func(tctx context.Context) (player, banker string) {
		t.Helper()
		js := func(sel string) string {
			return `[...document.querySelectorAll('` + sel + ` .card')].map(c => c.dataset.faceDown ? 'down' : c.dataset.code).join(' ')`
		}
		var err error
		if player, err = chromedp.Run(tctx, chromedp.Evaluate[string](js("#player-cards"))); err != nil {
			t.Fatal(err)
		}
		if banker, err = chromedp.Run(tctx, chromedp.Evaluate[string](js("#banker-cards"))); err != nil {
			t.Fatal(err)
		}
		return player, banker
	}
	wantHands := func(tctx context.Context, who, step, player, banker string) {
		t.Helper()
		if p, b := hands(tctx); p != player || b != banker {
			t.Errorf("%s, %s sees player %q banker %q, want %q %q", step, who, p, b, player, banker)
		}
	}

	alice, bob := tab("alice"), tab("bob")
	run(alice, "alice", "sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	run(bob, "bob", "sees alice seated, sits", waitFor(`document.querySelectorAll('#seats li').length === 1`),
		press("sit"), stateIs("TABLE_STATE_OFFERING_BANK"))
	// alice sees the offer live (WatchTable), then takes the bank.
	run(alice, "alice", "takes the bank", stateIs("TABLE_STATE_OFFERING_BANK"),
		chromedp.SetValue(chromedp.ID("bank-amount"), "1000"), press("accept-bank"), stateIs("TABLE_STATE_BETTING"))
	// bob bets before it is shown to be his turn? It is his: the only punter.
	run(bob, "bob", "bets", stateIs("TABLE_STATE_BETTING"), waitFor(`document.getElementById('turn').dataset.player === 'bob'`),
		chromedp.SetValue(chromedp.ID("bet-amount"), "600"), press("bet"), stateIs("TABLE_STATE_DECISION"))
	run(alice, "alice", "sees the decision", stateIs("TABLE_STATE_DECISION"), waitFor(`document.getElementById('turn').dataset.player === 'bob'`))
	wantHands(bob, "bob", "at bob's decision", "2C 3D", "down down")
	wantHands(alice, "alice", "at bob's decision", "down down", "KD 5H")
	shot(t, bob, filepath.Join(out, "1-bob-decides.png"))
	shot(t, alice, filepath.Join(out, "1-alice-waits.png"))

	// The croupier's advice for bob's decision: the EVs, or (when the table
	// does not know its shoe's composition) a clear error with its reason.
	run(bob, "bob", "asks advice", press("advice"),
		waitFor(`document.getElementById('advice-text').textContent !== '' || !document.getElementById('error').hidden`))
	advice, err := chromedp.Run(bob, chromedp.Evaluate[string](`document.getElementById('advice-text').textContent + '|' + document.getElementById('error').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(advice, "draw EV") && !strings.Contains(advice, "No advice at this table [ODDS_UNAVAILABLE]") {
		t.Errorf("advice: %q", advice)
	}
	t.Logf("bob's advice: %s", advice)
	// alice acting out of turn: the error's reason, shown.
	run(alice, "alice", "draws out of turn", press("draw"),
		waitFor(`document.getElementById('error').dataset.reason !== '' && !document.getElementById('error').hidden`))
	errText, err := chromedp.Run(alice, chromedp.TextContent(chromedp.ID("error")))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alice drawing in bob's turn: %s", errText)

	run(bob, "bob", "draws", press("draw"), waitFor(`document.getElementById('turn').dataset.player === 'alice'`))
	run(alice, "alice", "sees her decision", waitFor(`document.getElementById('turn').dataset.player === 'alice'`))
	wantHands(bob, "bob", "at alice's decision", "2C 3D 4S", "down down")
	wantHands(alice, "alice", "at alice's decision", "down down 4S", "KD 5H")
	shot(t, alice, filepath.Join(out, "2-alice-decides.png"))

	run(alice, "alice", "draws", press("draw"),
		waitFor(`document.getElementById('result').dataset.outcome === 'OUTCOME_BANK_LOSES' && document.getElementById('result').textContent.includes('settled')`))
	run(bob, "bob", "sees the result", waitFor(`document.getElementById('result').dataset.outcome === 'OUTCOME_BANK_LOSES'`))
	for who, tctx := range map[string]context.Context{"alice": alice, "bob": bob} {
		wantHands(tctx, who, "after the result", "2C 3D 4S", "KD 5H 9C")
	}
	shot(t, bob, filepath.Join(out, "3-bob-result.png"))
	shot(t, alice, filepath.Join(out, "3-alice-result.png"))

	// The bank lost, it is offered to bob; a croupier closes the table from
	// his own session, and the players see it.
	croupier := tab("croupier")
	run(croupier, "croupier", "closes the table", stateIs("TABLE_STATE_OFFERING_BANK"), press("close"), stateIs("TABLE_STATE_CLOSED"))
	run(alice, "alice", "sees it closed", stateIs("TABLE_STATE_CLOSED"))
	shot(t, croupier, filepath.Join(out, "4-croupier-closed.png"))

	if got := c.balance(t, "player:bob"); got != 5600 {
		t.Errorf("bob has %d, want 5600", got)
	}
}

func shot(t *testing.T, tctx context.Context, path string) {
	buf, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", path, err)
		return
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Logf("screenshot %s: %v", path, err)
	}
}
