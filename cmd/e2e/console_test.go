package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chemmy/chemmy/cmd/stack"
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

// browserRequired: under CI (CI=1 or CI=true, as .ci/run sets it) a
// missing browser fails the console tests instead of skipping them.
func browserRequired() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "1" || v == "true"
}

// notice prints msg to the test's stderr (seen with -v or when the
// package fails; `make test` also says beforehand when it finds no
// browser, so a skip never goes unnoticed).
func notice(msg string) {
	fmt.Fprint(os.Stderr, "--- NOTICE: "+msg+"\n")
}

// consoleOut is the tests' output folder for screenshots (gitignored).
func consoleOut(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "cmd", "e2e", "test-output", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless browser for a test, its pages sharing it.
type browser struct {
	t   *testing.T
	ctx context.Context
	out string
}

// startBrowser starts the browser for a console test. No browser on the
// machine skips the test, with a notice in the output of make test, or
// fails it under CI; a browser that is there but does not start fails it.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	path := findBrowser()
	if path == "" {
		msg := "no browser found: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHEMMY_CHROME"
		if browserRequired() {
			t.Fatalf("%s (CI=%s: the console tests must run)", msg, os.Getenv("CI"))
		}
		notice(t.Name() + " SKIPPED: " + msg)
		t.Skip(msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a loaded machine plays slowly
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1300, 1100),
		chromedp.Flag("disable-dev-shm-usage", true))...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("the browser %s does not start: %v", path, err)
	}
	return &browser{t: t, ctx: bctx, out: consoleOut(t)}
}

// consoleRig starts what a console test plays against: the browser (or
// the skip), the stack with the gateway's HTTP side, a client, and the
// players funded with funds each.
func consoleRig(t *testing.T, funds int64, players ...string) (*browser, *stack.Stack, *client) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	b := startBrowser(t)
	st := startHTTPStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, funds, players...)
	return b, st, c
}

// page is one signed-in browser session (a tab of its own).
type page struct {
	b   *browser
	who string
	ctx context.Context
}

// open signs who in (demo token who-token) at the console's address with
// query (e.g. "?table=ID"), and waits until the page knows him and, with
// a table, follows it live. The page's uncaught exceptions and security
// errors (a Content-Security-Policy violation) fail the test.
func (b *browser) open(addr, who, query string) *page {
	b.t.Helper()
	return b.openWith(addr, who, query)
}

// openWith is open with actions run on the new tab before it loads the
// console (e.g. the browser's language, inFrench).
func (b *browser) openWith(addr, who, query string, before ...chromedp.Action[chromedp.Void]) *page {
	t := b.t
	t.Helper()
	tctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	p := &page{b: b, who: who, ctx: tctx}
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(tctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Source == "security" {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, pr := range problems {
			t.Errorf("%s's page: %s", who, pr)
		}
	})
	ready := `(document.getElementById('whoami').dataset.subject || '').startsWith('` + who + `')`
	if strings.Contains(query, "table=") {
		ready += ` && document.getElementById('live').textContent === 'live' && document.getElementById('state').dataset.state !== undefined && document.getElementById('state').dataset.state !== ''`
	}
	if err := chromedp.Do(tctx, append(before,
		chromedp.Navigate("http://"+addr+"/"+query),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), who+"-token"),
		press("login"),
		waitFor(ready),
	)...); err != nil {
		info, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('whoami').textContent + '|' + document.getElementById('live').textContent + '|' + document.getElementById('error').textContent`))
		t.Fatalf("%s signs in: %v (%s)", who, err, info)
	}
	return p
}

// do runs the actions of a step; on failure it keeps a screenshot and
// stops the test with what the page's error box says.
func (p *page) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	t := p.b.t
	t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		errText, _ := chromedp.Run(p.ctx, chromedp.TextContent(chromedp.ID("error")))
		p.shot("failed-" + p.who + ".png")
		t.Fatalf("%s, %s: %v (error box: %q)", p.who, step, err, errText)
	}
}

// eval is the value of a JS expression on the page.
func (p *page) eval(js string) string {
	t := p.b.t
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s's page: %s: %v", p.who, js, err)
	}
	return v
}

// text is the text of the element with id.
func (p *page) text(id string) string {
	p.b.t.Helper()
	return p.eval(`document.getElementById('` + id + `').textContent`)
}

// shot keeps a screenshot of the whole page under the output folder.
func (p *page) shot(name string) {
	buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(p.b.out, name), buf, 0o644)
	}
	if err != nil {
		p.b.t.Logf("screenshot %s: %v", name, err)
	}
}

// shots keeps screenshots of the whole page for a person to look at, at
// desktop width and at a phone's (390 px), as NAME-desktop.png and
// NAME-phone.png in the folder $CHEMMY_CONSOLE_SHOTS; without it, none.
func (p *page) shots(name string) {
	dir := os.Getenv("CHEMMY_CONSOLE_SHOTS")
	if dir == "" {
		return
	}
	t := p.b.t
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		suffix        string
		width, height int64
	}{{"desktop", 1300, 1100}, {"phone", 390, 844}} {
		if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(w.width, w.height), chromedp.Sleep(400*time.Millisecond)); err != nil {
			t.Logf("screenshot %s: %v", name, err)
			return
		}
		buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100)) // 100: a PNG
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+"-"+w.suffix+".png"), buf, 0o644)
		}
		if err != nil {
			t.Logf("screenshot %s: %v", name, err)
		}
	}
	if err := chromedp.Do(p.ctx, chromedp.EmulateReset()); err != nil {
		t.Logf("screenshot %s: %v", name, err)
	}
}

// shotOf keeps a screenshot of the element matching sel.
func (p *page) shotOf(sel, name string) {
	buf, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err == nil {
		err = os.WriteFile(filepath.Join(p.b.out, name), buf, 0o644)
	}
	if err != nil {
		p.b.t.Logf("screenshot %s: %v", name, err)
	}
}

// hand is what the page shows of a hand (data-hand): card codes, "down"
// for a face-down card.
func (p *page) hand(key string) string {
	p.b.t.Helper()
	return p.eval(`[...document.querySelectorAll('[data-hand="` + key + `"] .card')].map(c => c.dataset.faceDown ? 'down' : c.dataset.code).join(' ')`)
}

// balanceIs waits until the page shows the balance want.
func (p *page) balanceIs(want int64) chromedp.Action[chromedp.Void] {
	return waitFor(fmt.Sprintf(`document.getElementById('balance').dataset.balance === '%d'`, want))
}

// press clicks a button as its own click handler sees it. Not a mouse
// click at the button's coordinates: the page re-renders as events arrive
// (a seat, a log line), and a layout shift between locating the button
// and clicking would land the click elsewhere.
func press(id string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := chromedp.WaitVisible(chromedp.ID(id))(ctx, tg); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Evaluate[chromedp.Void](`document.getElementById('`+id+`').click()`)(ctx, tg)
	}
}

// pressHidden clicks a button the page does not show (an action the
// viewer may not take now), as its click handler sees it.
func pressHidden(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.getElementById('` + id + `').click()`)
}

// waitFor waits until a JS condition holds on the page.
func waitFor(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(30*time.Second))
}

func stateIs(s string) chromedp.Action[chromedp.Void] {
	return waitFor(`document.getElementById('state').dataset.state === '` + s + `'`)
}

func turnIs(who string) chromedp.Action[chromedp.Void] {
	return waitFor(`document.getElementById('turn').dataset.player === '` + who + `'`)
}

// errorShown waits for the page's error box to show reason.
func errorShown(reason string) chromedp.Action[chromedp.Void] {
	return waitFor(`!document.getElementById('error').hidden && document.getElementById('error').dataset.reason === '` + reason + `'`)
}

// TestConsolePlaysACoup plays a coup of chemin de fer in the gateway's
// table console from two browser sessions, alice (the banker) and bob
// (the punter), against the real stack, on a certification shoe whose
// order gives bob a decision and then alice one: at each step it checks
// what each viewer's page shows (cards face down or not, whose turn, the
// croupier's advice shown to the one who decides, the balance), the live
// updates from WatchTable, an error's plain message and reason, and a
// croupier closing the table from a third session. Screenshots go to
// cmd/e2e/test-output/console/ (1-bob-decides.png: the table view at a
// decision).
func TestConsolePlaysACoup(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "alice", "bob")
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
	wantHands := func(p *page, step, player, banker string) {
		t.Helper()
		if pl, bk := p.hand("player"), p.hand("banker"); pl != player || bk != banker {
			t.Errorf("%s, %s sees player %q banker %q, want %q %q", step, p.who, pl, bk, player, banker)
		}
	}

	alice, bob := b.open(st.GatewayHTTPAddr, "alice", "?table="+id), b.open(st.GatewayHTTPAddr, "bob", "?table="+id)
	alice.do("sits", press("sit"), waitFor(`document.querySelector('#seats li.me') !== null`))
	bob.do("sees alice seated, sits", waitFor(`document.querySelectorAll('#seats li').length === 1`),
		press("sit"), stateIs("TABLE_STATE_OFFERING_BANK"))
	// alice sees the offer live (WatchTable), then takes the bank.
	alice.do("takes the bank", stateIs("TABLE_STATE_OFFERING_BANK"), turnIs("alice"),
		chromedp.SetValue(chromedp.ID("bank-amount"), "10"), press("accept-bank"), stateIs("TABLE_STATE_BETTING"))
	// It is bob's turn: the only punter.
	bob.do("bets", stateIs("TABLE_STATE_BETTING"), turnIs("bob"),
		chromedp.SetValue(chromedp.ID("bet-amount"), "6"), press("bet"), stateIs("TABLE_STATE_DECISION"))
	alice.do("sees the decision", stateIs("TABLE_STATE_DECISION"), turnIs("bob"))
	wantHands(bob, "at bob's decision", "2C 3D", "down down")
	wantHands(alice, "at bob's decision", "down down", "KD 5H")

	// The croupier's advice for bob's decision, shown to him without his
	// asking: the EVs, or (when the table does not know its shoe's
	// composition) the plain message with its reason. Not to alice.
	bob.do("sees the advice", waitFor(`document.getElementById('advice-text').textContent !== ''`),
		waitFor(`document.getElementById('prompt').classList.contains('mine')`))
	advice := bob.text("advice-text")
	if !strings.Contains(advice, "draw EV") && !strings.Contains(advice, "No advice at this table: its shoe's composition is not known to the table. [ODDS_UNAVAILABLE]") {
		t.Errorf("bob's advice: %q", advice)
	}
	t.Logf("bob's advice: %s", advice)
	if a := alice.text("advice-text"); a != "" {
		t.Errorf("alice, who does not decide, is shown advice %q", a)
	}
	bob.shot("1-bob-decides.png")
	alice.shot("1-alice-waits.png")
	// bob's balance shows his bet held.
	bob.do("sees his bet held", waitFor(`document.getElementById('balance').dataset.held === '600'`))

	// alice acting out of turn (her page shows her no draw: its hidden
	// button is clicked): the error's plain message and reason.
	alice.do("draws out of turn", pressHidden("draw"), errorShown("NOT_YOUR_TURN"))
	if e := alice.text("error"); !strings.HasPrefix(e, "It is not your turn. [NOT_YOUR_TURN]") {
		t.Errorf("alice drawing in bob's turn is shown %q", e)
	}

	bob.do("draws", press("draw"), turnIs("alice"))
	alice.do("sees her decision", turnIs("alice"), waitFor(`document.getElementById('prompt').classList.contains('mine')`))
	wantHands(bob, "at alice's decision", "2C 3D 4S", "down down")
	wantHands(alice, "at alice's decision", "down down 4S", "KD 5H")
	alice.shot("2-alice-decides.png")

	alice.do("draws", press("draw"),
		waitFor(`document.getElementById('result').dataset.outcome === 'OUTCOME_BANK_LOSES' && document.getElementById('result').dataset.settled === 'true'`))
	bob.do("sees the result", waitFor(`document.getElementById('result').dataset.outcome === 'OUTCOME_BANK_LOSES'`))
	for _, p := range []*page{alice, bob} {
		wantHands(p, "after the result", "2C 3D 4S", "KD 5H 9C")
		if r := p.text("result"); !strings.Contains(r, "bank loses") || !strings.Contains(r, "settled") {
			t.Errorf("%s is shown the result %q", p.who, r)
		}
	}
	if d := bob.text("decisions"); !strings.Contains(d, "player carte") || !strings.Contains(d, "banker carte") {
		t.Errorf("bob is shown the decisions %q", d)
	}
	// Each balance, refreshed after the coup, is the wallet's.
	bob.do("sees his balance", bob.balanceIs(5600))
	alice.do("sees her balance", alice.balanceIs(c.balance(t, "player:alice")))
	bob.shot("3-bob-result.png")
	alice.shot("3-alice-result.png")

	// The bank lost, it is offered to bob; a croupier closes the table from
	// his own session, and the players see it.
	croupier := b.open(st.GatewayHTTPAddr, "croupier", "?table="+id)
	croupier.do("closes the table", stateIs("TABLE_STATE_OFFERING_BANK"), press("close"), stateIs("TABLE_STATE_CLOSED"))
	alice.do("sees it closed", stateIs("TABLE_STATE_CLOSED"))
	croupier.shot("4-croupier-closed.png")

	if got := c.balance(t, "player:bob"); got != 5600 {
		t.Errorf("bob has %d, want 5600", got)
	}
}
