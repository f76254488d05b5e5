package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// aliceBanks opens a chemin de fer table (its id) on a certification
// shoe dealing cards first, seats alice and bob, and has alice take a
// bank of 1000.
func aliceBanks(t *testing.T, c *client, cards ...string) string {
	t.Helper()
	return aliceBanksUnder(t, c, certificationRules(), cards...)
}

// aliceBanksUnder is aliceBanks at a table of house rules hr (which must
// let a certification shoe take money: CertificationRealMoney).
func aliceBanksUnder(t *testing.T, c *client, hr *tablev1.HouseRules, cards ...string) string {
	t.Helper()
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name(),
		ShoeId: (&crashRig{t: t, c: c}).preparedShoe(cards...), HouseRules: hr})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	for _, p := range []string{"alice", "bob"} {
		if _, err := c.table.JoinTable(as(t, p), &tablev1.JoinTableRequest{RequestId: t.Name() + "/" + p, TableId: id, PlayerId: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.table.AcceptBank(as(t, "alice"), &tablev1.AcceptBankRequest{RequestId: t.Name() + "/bank", TableId: id, PlayerId: "alice", Amount: 1000}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestConsoleHistoryOnOpen: two coups of chemin de fer are played at a
// table (through the API) before anyone opens it in the console; the
// banker's natural 9 beats the player's 5 both times, bob losing 500 then
// 300 to alice's bank (5% commission: she nets 475 and 285). Opening the
// table then shows each player his own last rounds, newest first, from
// his side in major units ("you lost 3.00 EUR"), and his result in the
// last coup; the croupier the table's rounds with the bank's net (what
// the settlement moved to the banker: 500 less the commission of 25);
// and
// both a bead plate of the two coups; the table's row in the lobby
// gives its last results, B B. carol, who joins the gallery after
// the two coups and played in none (no round of hers to list), is shown
// the table's history all the same, from WatchTable's first message
// (Table.recent_coups): the bead plate of both coups and the table's
// last coups, newest first, each with its result and every card turned.
func TestConsoleHistoryOnOpen(t *testing.T) {
	b, st, c := consoleRig(t, 5000, "alice", "bob", "carol")
	cards := []string{"2C", "9H", "3D", "TC", "2D", "9S", "3H", "TD"}
	id := aliceBanks(t, c, cards...)
	for i, amount := range []int64{500, 300} {
		if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: fmt.Sprintf("%s/bet/%d", t.Name(), i), TableId: id, PlayerId: "bob", Amount: amount}); err != nil {
			t.Fatal(err)
		}
		// Wait for the settlement before the next bet.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("coup %d is not settled", i+1)
			}
			g, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
			if err != nil {
				t.Fatal(err)
			}
			if g.GetTable().GetCoupsPlayed() == int64(i+1) && g.GetTable().GetState() == tablev1.TableState_TABLE_STATE_BETTING {
				break
			}
		}
	}
	if a, bb := c.balance(t, "player:alice"), c.balance(t, "player:bob"); a != 5000+475+285 || bb != 5000-800 {
		t.Fatalf("balances alice %d bob %d, want %d %d", a, bb, 5000+475+285, 5000-800)
	}

	q := "?table=" + id
	// The table's last coups as anyone sees them: player 2D 3H (5) and
	// banker 9S TD (9) in coup 2, 2C 3D (5) and 9H TC (9) in coup 1.
	recent := `[...document.querySelectorAll('#recent-list li')].map(li => li.textContent).join(' | ')`
	wantRecent := "Coup 2: bank wins (natural), settled: commission 0.15, banker net 2.85 · Player · bob 2♦ 3♥ (5) · Banker · alice 9♠ 10♦ (9) | " +
		"Coup 1: bank wins (natural), settled: commission 0.25, banker net 4.75 · Player · bob 2♣ 3♦ (5) · Banker · alice 9♥ 10♣ (9)"
	if _, err := c.table.JoinGallery(as(t, "carol"), &tablev1.JoinGalleryRequest{RequestId: t.Name() + "/gallery", TableId: id, PlayerId: "carol"}); err != nil {
		t.Fatal(err)
	}
	carol := b.open(st.GatewayHTTPAddr, "carol", q)
	carol.do("sees the table's last coups", waitFor(`document.querySelectorAll('#recent-list li').length === 2`),
		waitFor(`document.querySelectorAll('#bead-plate circle.bead').length === 2`))
	if got := carol.eval(recent); got != wantRecent {
		t.Errorf("carol, in the gallery, is shown the table's last coups %q, want %q", got, wantRecent)
	}
	if got := carol.eval(`[...document.querySelectorAll('#bead-plate circle.bead')].map(c => c.dataset.winner).join(' ')`); got != "bank bank" {
		t.Errorf("carol's bead plate shows %q, want %q", got, "bank bank")
	}
	if got := carol.text("history-note"); got != "You have played no round yet." {
		t.Errorf("carol's own history says %q", got)
	}
	// The lobby's row of the table: both coups won by the bank, B B (from
	// ListTables' Table.recent_results, kept when the row follows the
	// open table).
	last := `document.querySelector('#tables tr[data-table="` + id + `"] .last')`
	carol.do("sees the table's lobby row", waitFor(last+` !== null`))
	if got := carol.eval(last + `.textContent`); got != "B B" {
		t.Errorf("carol's lobby row of the table shows the last results %q, want %q", got, "B B")
	}
	if got := carol.eval(last + `.title`); got != "coup 1: bank wins\ncoup 2: bank wins" {
		t.Errorf("carol's lobby row of the table says in words %q", got)
	}
	carol.shots("cf-gallery-history-carol")

	history := `[...document.querySelectorAll('#history-list li')].map(li => li.textContent).join(' | ')`
	for _, w := range []struct {
		who, history, mine string
	}{
		{"bob", "chemin de fer · this table · coup 2: you lost 3.00 EUR | chemin de fer · this table · coup 1: you lost 5.00 EUR", "Coup 2: you lost 3.00 EUR."},
		{"alice", "chemin de fer · this table · coup 2: you won 2.85 EUR as the banker | chemin de fer · this table · coup 1: you won 4.75 EUR as the banker",
			"Coup 2: you won 2.85 EUR as the banker."},
		{"croupier", "chemin de fer · this table · coup 2: the bank wins, bank net 2.85 EUR, commission 0.15 EUR | chemin de fer · this table · coup 1: the bank wins, bank net 4.75 EUR, commission 0.25 EUR", ""},
	} {
		p := b.open(st.GatewayHTTPAddr, w.who, q)
		p.do("sees the history", waitFor(`document.querySelectorAll('#history-list li').length === 2`))
		if got := p.eval(history); got != w.history {
			t.Errorf("%s is shown the history %q, want %q", w.who, got, w.history)
		}
		if w.mine != "" {
			p.do("sees his result", waitFor(`document.getElementById('my-result').textContent !== ''`))
		}
		if got := p.text("my-result"); got != w.mine {
			t.Errorf("%s is told %q, want %q", w.who, got, w.mine)
		}
		// The bead plate: both coups, won by the bank.
		p.do("sees the bead plate", waitFor(`document.querySelectorAll('#bead-plate circle.bead').length === 2`))
		if got := p.eval(`[...document.querySelectorAll('#bead-plate circle.bead')].map(c => c.dataset.winner).join(' ')`); got != "bank bank" {
			t.Errorf("%s's bead plate shows %q, want %q", w.who, got, "bank bank")
		}
		// Every viewer is shown the table's last coups.
		p.do("sees the table's last coups", waitFor(`document.querySelectorAll('#recent-list li').length === 2`))
		if got := p.eval(recent); got != wantRecent {
			t.Errorf("%s is shown the table's last coups %q, want %q", w.who, got, wantRecent)
		}
		if w.who == "bob" {
			if got := p.text("history-title"); !strings.Contains(got, "Your last rounds") {
				t.Errorf("bob's history is titled %q", got)
			}
			p.shot("history-bob.png")
		}
	}
}

// TestConsoleHistoryTellsFees: at a chemin de fer table with a seat fee
// (hourly_fee 3,600,000 minor units an hour: 1000 a second; seat time is
// billed in whole seconds, so the players sit more than one) bob loses a
// coup of 500 to alice's natural; after it every seated player is
// charged his seat time, a round of its own (fee-<request id>, number 0).
// bob's history tells the fee as one: "seat fee: X EUR", X the round's
// commission (read through the API, written here in major units), never
// "coup ?".
func TestConsoleHistoryTellsFees(t *testing.T) {
	b, st, c := consoleRig(t, 100000, "alice", "bob")
	id := aliceBanksUnder(t, c, &tablev1.HouseRules{CertificationRealMoney: true, HourlyFee: 3_600_000}, "2C", "9H", "3D", "TC")
	// Seat time is billed in whole seconds: sit more than one.
	time.Sleep(1100 * time.Millisecond)
	if _, err := c.table.PlaceBet(as(t, "bob"), &tablev1.PlaceBetRequest{RequestId: t.Name() + "/bet", TableId: id, PlayerId: "bob", Amount: 500}); err != nil {
		t.Fatal(err)
	}
	// bob's fee round, once settled.
	var fee *tablev1.Round
	for deadline := time.Now().Add(30 * time.Second); fee == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("bob's seat fee round is not settled")
		}
		list, err := c.table.ListRounds(as(t, "bob"), &tablev1.ListRoundsRequest{PlayerId: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.GetRounds() {
			if strings.HasPrefix(r.GetCoupId(), "fee-") && r.GetState() == tablev1.RoundState_ROUND_STATE_SETTLED {
				fee = r
			}
		}
	}
	if fee.GetNumber() != 0 || fee.GetCommission() <= 0 || fee.GetCurrencyExponent() != 2 {
		t.Fatalf("bob's fee round: %v", fee)
	}
	want := fmt.Sprintf("chemin de fer · this table · seat fee: %d.%02d %s", fee.GetCommission()/100, fee.GetCommission()%100, fee.GetCurrencyCode())

	bob := b.open(st.GatewayHTTPAddr, "bob", "?table="+id)
	line := `[...document.querySelectorAll('#history-list li')].filter(li => li.dataset.coup === ` + jsString(fee.GetCoupId()) + `).map(li => li.textContent).join(' | ')`
	bob.do("sees his fee in the history", waitFor(line+` !== ''`))
	if got := bob.eval(line); got != want {
		t.Errorf("bob's history tells his seat fee as %q, want %q", got, want)
	}
	if got := bob.eval(`document.getElementById('history-list').textContent`); strings.Contains(got, "coup ?") {
		t.Errorf("bob's history still tells a round as coup ?: %q", got)
	}
}
