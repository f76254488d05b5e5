package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/errs"
)

// TestPuntoBancoExampleScript runs examples/punto-banco.sh with the real
// grpcurl against the real stack: the house banks every coup from its
// float (PB-BANK), the bets on bank, player, tie and pairs are settled
// against it (PB-BETS). It checks that the coups were settled, that the
// money is conserved, and that the house nets and commissions the script
// printed are what the wallet moved.
func TestPuntoBancoExampleScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	st := startStack(t)
	c := dial(t, st.GatewayAddr)

	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", "punto-banco.sh"))
	cmd.Env = append(os.Environ(), "CHEMMY_GATEWAY="+st.GatewayAddr, "GRPCURL="+grpcurlPath(t), "RUN_ID=e2e-pb", "COUPS=3")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("punto-banco.sh: %v\n%s", err, out.String())
	}
	t.Logf("punto-banco.sh:\n%s", out.String())
	m := regexp.MustCompile(`(?m)^TABLE=(\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("punto-banco.sh printed no TABLE= line")
	}
	resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: m[1]})
	if err != nil {
		t.Fatal(err)
	}
	tbl := resp.GetTable()
	if tbl.GetCoupsPlayed() != 3 || !tbl.GetLastCoup().GetSettled() || tbl.GetCoup() != nil {
		t.Fatalf("after the script: %d coups played, last coup %v, coup in play %v", tbl.GetCoupsPlayed(), tbl.GetLastCoup(), tbl.GetCoup())
	}
	if n := len(tbl.GetRoads().GetBeadPlate()); n != 3 {
		t.Errorf("the roads show %d coups, want 3", n)
	}

	// Every bet settled (nothing held), and no money made or lost.
	accounts := []string{"player:alice", "player:bob", "player:carol", "house:bank", "house:commission"}
	bal := map[string]int64{}
	for _, a := range accounts {
		acct := c.account(t, a)
		bal[a] = acct.GetBalance()
		if acct.GetHeld() != 0 {
			t.Errorf("%s still has %d held", a, acct.GetHeld())
		}
	}
	if got := sum(bal); got != 3*5000+100000 {
		t.Errorf("money not conserved: players + house:bank + house:commission = %d, deposits were 115000 (%v)", got, bal)
	}
	// What the script printed of each coup is what the wallet did: the
	// house's float moved by the house nets, the commissions went to
	// house:commission (PB-BETS).
	var net, commission int64
	lines := regexp.MustCompile(`(?m); house net (-?\d+), commission (\d+)$`).FindAllStringSubmatch(out.String(), -1)
	if len(lines) != 3 {
		t.Fatalf("the script reported %d coups, want 3", len(lines))
	}
	for _, l := range lines {
		n, _ := strconv.ParseInt(l[1], 10, 64)
		k, _ := strconv.ParseInt(l[2], 10, 64)
		net, commission = net+n, commission+k
	}
	if bal["house:bank"]-100000 != net || bal["house:commission"] != commission {
		t.Errorf("the script printed house nets %d and commissions %d; the wallet: house:bank %+d, house:commission %d",
			net, commission, bal["house:bank"]-100000, bal["house:commission"])
	}
	if !regexp.MustCompile(`(?m)^the changes add up to 115000,`).MatchString(out.String()) {
		t.Errorf("the script's balances do not add up to the deposits")
	}
}

// pbResult is one coup as the roads must draw it, read from the table's
// last_coup once settled.
type pbResult struct {
	winner                 tablev1.RoadWinner
	playerTotal, bankTotal int32
	playerPair, bankerPair bool
	natural                bool
}

// total is what the bead shows: the winner's total, the tie's total.
func (r pbResult) total() int32 {
	if r.winner == tablev1.RoadWinner_ROAD_WINNER_PLAYER {
		return r.playerTotal
	}
	return r.bankTotal
}

// pbShoeOrder is a test shoe of n cards. Its first five coups are fixed,
// for the roads' tie conventions (cards in the order dealt: player, bank,
// player, bank), all naturals:
//
//  1. player 9C KH, bank 9D KS: a tie before any win (on the first cell);
//  2. player 2C 3D (5), bank 4H 4S (8, a pair): the bank wins;
//  3. player 8C KC, bank 8D QC: a tie (on the bank's cell);
//  4. player 9H QH, bank 9S JH: another tie on the same cell;
//  5. player 4C 4D (8, a pair), bank 2H 5H (7): the player wins.
//
// Then cards drawn from eight decks shuffled with a fixed seed, so every
// run deals the same coups.
func pbShoeOrder(n int) []string {
	order := []string{"9C", "9D", "KH", "KS", "2C", "4H", "3D", "4S", "8C", "8D", "KC", "QC", "9H", "9S", "QH", "JH", "4C", "2H", "4D", "5H"}
	var pack []string
	for range 8 {
		for _, r := range "A23456789TJQK" {
			for _, s := range "CDHS" {
				pack = append(pack, string(r)+string(s))
			}
		}
	}
	rng := rand.New(rand.NewPCG(20261201, 7))
	rng.Shuffle(len(pack), func(i, j int) { pack[i], pack[j] = pack[j], pack[i] })
	return append(order, pack[:n-len(order)]...)
}

// TestPuntoBancoShoeRoadsThroughGateway plays one shoe's worth of punto
// banco coups through the gateway, each dealt by the fixed tableau
// (PB-TABLEAU) when its betting window runs out on the real clock, and
// checks the roads against the results: after each coup, the bead plate
// has one bead per coup in order with its winner, total and pairs, the
// counts match, the big road has one cell per bank or player win with the
// ties counted on the cell before them (leading ties on the first cell).
// The coup in which the cut card comes out is the shoe's last
// (SHOE-CUT-CARD): the table opens the next shoe and the roads start
// empty. The money is conserved (PB-BANK, PB-BETS).
//
// A whole shuffled 8-deck shoe is about 80 coups, each at least its 1 s
// window plus the retry loop's second: too long for make test. The table
// plays instead a 60-card test shoe with the cut card 8 from the end
// (about a dozen coups); the next shoe is the table's own shuffled one.
func TestPuntoBancoShoeRoadsThroughGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	start := time.Now()
	st := startStack(t)
	c := dial(t, st.GatewayAddr)
	c.fund(t, 20000, "alice", "bob")
	if _, err := c.wallet.Deposit(as(t, "operator"), &walletv1.DepositRequest{RequestId: t.Name() + "/float", AccountId: "house:bank", Amount: 200000}); err != nil {
		t.Fatal(err)
	}
	const deposited = 2*20000 + 200000

	order := pbShoeOrder(60)
	sh, err := c.shoe.CreateShoeFromOrder(as(t, "operator"), &shoev1.CreateShoeFromOrderRequest{
		RequestId: t.Name() + "/shoe", Cards: order, CutCardFromEnd: 8, TestShoe: true})
	if err != nil {
		t.Fatal(err)
	}
	firstShoe := sh.GetShoe().GetShoeId()
	zero := int32(0)
	tb, err := c.table.CreateTable(as(t, "operator"), &tablev1.CreateTableRequest{RequestId: t.Name() + "/table", ShoeId: firstShoe,
		Variant: tablev1.Variant_VARIANT_PUNTO_BANCO, PuntoBancoRules: &tablev1.PuntoBancoRules{
			PairBets: true, BettingWindowMs: 1000, ResultPauseMs: &zero, CertificationRealMoney: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := tb.GetTable().GetTableId()
	// alice sits; bob bets from behind without a seat (PB-BANK: one
	// player is enough, anyone may bet).
	if _, err := c.table.JoinTable(as(t, "alice"), &tablev1.JoinTableRequest{RequestId: t.Name() + "/join", TableId: id, PlayerId: "alice"}); err != nil {
		t.Fatal(err)
	}
	get := func() *tablev1.Table {
		t.Helper()
		resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTable()
	}
	// poll waits, every 50 ms, until ok says the table is as wanted.
	poll := func(what string, ok func(*tablev1.Table) bool) *tablev1.Table {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			tbl := get()
			if ok(tbl) {
				return tbl
			}
			if time.Now().After(deadline) {
				t.Fatalf("waited 15 s for %s: state %s, shoe #%d, last coup %v", what, tbl.GetState(), tbl.GetShoeNumber(), tbl.GetLastCoup())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	var results []pbResult
	var dealt []string // the cards of the coups, in the order dealt
	for n := 1; ; n++ {
		if n > 30 {
			t.Fatalf("%d coups and the cut card of a %d-card shoe has not come out", n-1, len(order))
		}
		if tbl := poll("the betting to open", func(tbl *tablev1.Table) bool { return tbl.GetState() == tablev1.TableState_TABLE_STATE_BETTING }); tbl.GetShoeNumber() != 1 {
			break // the last coup was the cut card's: checked below
		}
		var coupID string
		for i, b := range []struct {
			who    string
			spot   tablev1.BetSpot
			amount int64
		}{
			{"alice", tablev1.BetSpot_BET_SPOT_BANK, 500},
			{"bob", tablev1.BetSpot_BET_SPOT_PLAYER, 300},
			{"alice", tablev1.BetSpot_BET_SPOT_TIE, 100},
			{"bob", tablev1.BetSpot_BET_SPOT_PLAYER_PAIR, 100},
			{"alice", tablev1.BetSpot_BET_SPOT_BANK_PAIR, 100},
		} {
			resp, err := c.table.PlaceBet(as(t, b.who), &tablev1.PlaceBetRequest{RequestId: fmt.Sprintf("%s/coup/%d/bet/%d", t.Name(), n, i),
				TableId: id, PlayerId: b.who, Spot: b.spot, Amount: b.amount})
			if err != nil {
				t.Fatalf("coup %d: %s bets %d on %s: %v", n, b.who, b.amount, b.spot, err)
			}
			if i == 0 {
				coupID = resp.GetTable().GetCoup().GetCoupId()
			}
		}
		tbl := poll("coup "+coupID+" to be settled", func(tbl *tablev1.Table) bool {
			return tbl.GetLastCoup().GetCoupId() == coupID && tbl.GetLastCoup().GetSettled()
		})
		cp := tbl.GetLastCoup()
		r := pbResult{playerTotal: cp.GetPlayerTotal(), bankTotal: cp.GetBankerTotal(),
			playerPair: cp.GetPlayerPair(), bankerPair: cp.GetBankerPair(), natural: cp.GetNatural()}
		switch cp.GetOutcome() {
		case tablev1.Outcome_OUTCOME_BANK_WINS:
			r.winner = tablev1.RoadWinner_ROAD_WINNER_BANK
		case tablev1.Outcome_OUTCOME_BANK_LOSES:
			r.winner = tablev1.RoadWinner_ROAD_WINNER_PLAYER
		case tablev1.Outcome_OUTCOME_STAND_OFF:
			r.winner = tablev1.RoadWinner_ROAD_WINNER_TIE
		default:
			t.Fatalf("coup %d: outcome %s", n, cp.GetOutcome())
		}
		results = append(results, r)
		dealt = append(dealt, dealOrder(cp)...)
		// While the shoe is still the first (the pause after the cut card's
		// coup still shows it), the roads of the table's view and GetRoads
		// draw every coup so far.
		if tbl.GetShoeNumber() == 1 {
			checkRoads(t, fmt.Sprintf("after coup %d (table view)", n), tbl.GetRoads(), results)
		}
		rd, err := c.table.GetRoads(as(t, "bob"), &tablev1.GetRoadsRequest{TableId: id})
		if err != nil {
			t.Fatal(err)
		}
		if rd.GetRoads().GetShoeNumber() == 1 { // else the shoe changed in between
			checkRoads(t, fmt.Sprintf("after coup %d (GetRoads)", n), rd.GetRoads(), results)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d coups in %s: %s", len(results), time.Since(start).Round(time.Millisecond), describe(results))

	// The coups took the shoe's cards in order, from its first.
	if len(dealt) > len(order) || fmt.Sprint(dealt) != fmt.Sprint(order[:len(dealt)]) {
		t.Errorf("the coups dealt %v; the shoe's order starts %v", dealt, order[:min(len(dealt), len(order))])
	}
	if cut := len(order) - 8; len(dealt) < cut || len(dealt) > cut+6 {
		t.Errorf("the shoe changed after %d cards; its cut card is behind card %d", len(dealt), cut)
	}
	if got, want := describe(results[:min(5, len(results))]), "T9 B8 T8 T9 P8"; got != want {
		t.Errorf("the fixed coups dealt %s, want %s", got, want)
	}

	// The next shoe: the table's own, and its roads are empty.
	tbl := get()
	rd, err := c.table.GetRoads(as(t, "bob"), &tablev1.GetRoadsRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	r := rd.GetRoads()
	if tbl.GetShoeNumber() != 2 || tbl.GetShoeId() == firstShoe || r.GetShoeNumber() != 2 || r.GetShoeId() != tbl.GetShoeId() {
		t.Errorf("after the cut card's coup: table on shoe %s #%d (first %s), roads of %s #%d", tbl.GetShoeId(), tbl.GetShoeNumber(), firstShoe, r.GetShoeId(), r.GetShoeNumber())
	}
	if len(r.GetBeadPlate())+len(r.GetBigRoad())+len(r.GetBigEyeBoy())+len(r.GetSmallRoad())+len(r.GetCockroachPig()) != 0 ||
		r.GetBankWins()+r.GetPlayerWins()+r.GetTies() != 0 {
		t.Errorf("the new shoe's roads are not empty: %v", r)
	}
	if tbl.GetCoupsPlayed() != int64(len(results)) {
		t.Errorf("coups played %d, settled here %d", tbl.GetCoupsPlayed(), len(results))
	}

	// No money made or lost, nothing left held.
	var total int64
	for _, a := range []string{"player:alice", "player:bob", "house:bank", "house:commission"} {
		acct := c.account(t, a)
		total += acct.GetBalance()
		if acct.GetHeld() != 0 {
			t.Errorf("%s still has %d held", a, acct.GetHeld())
		}
	}
	if total != deposited {
		t.Errorf("money not conserved: players + house:bank + house:commission = %d, deposits were %d", total, deposited)
	}
}

// dealOrder is the order a coup's cards came out of the shoe: player,
// bank, player, bank, then the player's third card and the bank's
// (PB-TABLEAU).
func dealOrder(cp *tablev1.Coup) []string {
	p, b := cp.GetPlayerCards(), cp.GetBankerCards()
	var out []string
	for i := range 3 {
		if i < len(p) {
			out = append(out, p[i].GetCode())
		}
		if i < 2 && i < len(b) {
			out = append(out, b[i].GetCode())
		}
	}
	if len(b) == 3 {
		out = append(out, b[2].GetCode())
	}
	return out
}

// checkRoads compares a shoe's roads with its results (table-svc's roads
// package documents the conventions).
func checkRoads(t *testing.T, when string, rd *tablev1.Roads, results []pbResult) {
	t.Helper()
	if len(rd.GetBeadPlate()) != len(results) {
		t.Errorf("%s: %d beads for %d coups", when, len(rd.GetBeadPlate()), len(results))
		return
	}
	var counts [4]int32
	for i, r := range results {
		counts[r.winner]++
		b := rd.GetBeadPlate()[i]
		if b.GetWinner() != r.winner || b.GetTotal() != r.total() || b.GetPlayerPair() != r.playerPair || b.GetBankerPair() != r.bankerPair ||
			b.GetNatural() != r.natural || b.GetCol() != int32(i/6) || b.GetRow() != int32(i%6) {
			t.Errorf("%s: bead %d is %v, the coup was %+v", when, i, b, r)
		}
	}
	if rd.GetBankWins() != counts[tablev1.RoadWinner_ROAD_WINNER_BANK] || rd.GetPlayerWins() != counts[tablev1.RoadWinner_ROAD_WINNER_PLAYER] ||
		rd.GetTies() != counts[tablev1.RoadWinner_ROAD_WINNER_TIE] {
		t.Errorf("%s: counts bank %d player %d ties %d, the coups %v", when, rd.GetBankWins(), rd.GetPlayerWins(), rd.GetTies(), counts)
	}

	// The big road: one cell per bank or player win, streaks in logical
	// columns, each tie counted on the cell of the win before it, ties
	// before the first win on the first cell.
	type cell struct {
		winner   tablev1.RoadWinner
		col, row int32
		ties     int32
		pp, bp   bool
	}
	var want []cell
	leading := int32(0)
	for _, r := range results {
		if r.winner == tablev1.RoadWinner_ROAD_WINNER_TIE {
			if len(want) == 0 {
				leading++
			} else {
				want[len(want)-1].ties++
			}
			continue
		}
		c := cell{winner: r.winner, pp: r.playerPair, bp: r.bankerPair}
		if len(want) > 0 {
			last := want[len(want)-1]
			c.col, c.row = last.col, last.row+1
			if last.winner != r.winner {
				c.col, c.row = last.col+1, 0
			}
		} else {
			c.ties = leading
		}
		want = append(want, c)
	}
	big := rd.GetBigRoad()
	if len(want) == 0 {
		// Only ties so far: one placeholder cell counting them.
		if len(big) != 1 || big[0].GetWinner() != tablev1.RoadWinner_ROAD_WINNER_TIE || big[0].GetTies() != leading {
			t.Errorf("%s: a shoe of %d ties has the big road %v", when, leading, big)
		}
		return
	}
	if len(big) != len(want) {
		t.Errorf("%s: the big road has %d cells for %d bank or player wins", when, len(big), len(want))
		return
	}
	var ties int32
	for i, w := range want {
		g := big[i]
		ties += g.GetTies()
		if g.GetWinner() != w.winner || g.GetLogicalCol() != w.col || g.GetLogicalRow() != w.row || g.GetTies() != w.ties ||
			g.GetPlayerPair() != w.pp || g.GetBankerPair() != w.bp {
			t.Errorf("%s: big road cell %d is %v, want %+v", when, i, g, w)
		}
	}
	if ties != counts[tablev1.RoadWinner_ROAD_WINNER_TIE] {
		t.Errorf("%s: the big road counts %d ties, the shoe dealt %d", when, ties, counts[tablev1.RoadWinner_ROAD_WINNER_TIE])
	}
}

// describe writes results as a bead plate reads: B6 P9 T5 ...
func describe(results []pbResult) string {
	s := ""
	for i, r := range results {
		if i > 0 {
			s += " "
		}
		s += map[tablev1.RoadWinner]string{tablev1.RoadWinner_ROAD_WINNER_BANK: "B", tablev1.RoadWinner_ROAD_WINNER_PLAYER: "P",
			tablev1.RoadWinner_ROAD_WINNER_TIE: "T"}[r.winner] + strconv.Itoa(int(r.total()))
	}
	return s
}

// account reads an account (balance and held) as the operator; an
// account not opened yet (house:commission before any commission) is
// empty.
func (c *client) account(t *testing.T, id string) *walletv1.Account {
	t.Helper()
	resp, err := c.wallet.GetAccount(as(t, "operator"), &walletv1.GetAccountRequest{AccountId: id})
	if errs.Reason(err) == "ACCOUNT_NOT_FOUND" {
		return &walletv1.Account{AccountId: id}
	}
	if err != nil {
		t.Fatalf("GetAccount %s: %v", id, err)
	}
	return resp.GetAccount()
}
