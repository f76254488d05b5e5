package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// gamePlayers are the players the game scripts fund with 10000 each.
var gamePlayers = []string{"alice", "bob", "carol", "dave"}

// gameScript runs an example script of a banked game with the real
// grpcurl against a fresh stack, and checks what every such table must
// keep: the coups the script says it settled are the table's, every
// player's balance moved by what the script printed for each coup (plus
// the bank's auction fees at banque), no money made or lost (players and
// house:commission add up to the deposits), and nothing held but the
// banker's bank. It returns the client, the table and the script's output.
func gameScript(t *testing.T, script string) (*client, *tablev1.Table, string) {
	t.Helper()
	st := startStack(t)
	c := dial(t, st.GatewayAddr)

	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "examples", script))
	cmd.Env = append(os.Environ(), "CHEMMY_GATEWAY="+st.GatewayAddr, "GRPCURL="+grpcurlPath(t), "RUN_ID=e2e-"+script, "COUPS=3")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
	text := out.String()
	t.Logf("%s:\n%s", script, text)
	m := regexp.MustCompile(`(?m)^TABLE=(\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s printed no TABLE= line", script)
	}
	resp, err := c.table.GetTable(as(t, "croupier"), &tablev1.GetTableRequest{TableId: m[1]})
	if err != nil {
		t.Fatal(err)
	}
	tbl := resp.GetTable()

	// Three coups settled, as the script printed them, and none in play.
	money := regexp.MustCompile(`(?m)^  money: (.*?)(;.*)?$`).FindAllStringSubmatch(text, -1)
	if len(money) != 3 || tbl.GetCoupsPlayed() != 3 || !tbl.GetLastCoup().GetSettled() {
		t.Fatalf("the script printed %d settled coups; the table: %d played, last coup %v", len(money), tbl.GetCoupsPlayed(), tbl.GetLastCoup())
	}
	if len(tbl.GetCoup().GetBets()) != 0 {
		t.Errorf("a coup with bets is still in play: %v", tbl.GetCoup())
	}

	// Money: nothing made or lost, nothing held but the bank.
	var total int64
	bal := map[string]int64{}
	for _, p := range gamePlayers {
		a := c.account(t, "player:"+p)
		bal[p] = a.GetBalance()
		total += a.GetBalance()
		want := int64(0)
		if p == tbl.GetBankerPlayerId() {
			want = tbl.GetBank()
		}
		if a.GetHeld() != want {
			t.Errorf("player:%s holds %d; want %d (banker %q, bank %d)", p, a.GetHeld(), want, tbl.GetBankerPlayerId(), tbl.GetBank())
		}
	}
	house := c.account(t, "house:commission")
	if house.GetHeld() != 0 {
		t.Errorf("house:commission holds %d", house.GetHeld())
	}
	if total+house.GetBalance() != 4*10000 {
		t.Errorf("money not conserved: players %v + house:commission %d = %d, deposits were 40000", bal, house.GetBalance(), total+house.GetBalance())
	}
	if !regexp.MustCompile(`(?m)^the changes add up to 40000,`).MatchString(text) {
		t.Errorf("the script's balances do not add up to the deposits")
	}

	// What the script printed of each coup is what the wallet did: each
	// player's changes coup by coup add up to his balance, less the fees
	// paid outside the coups (the banque auction's 2.5%); each coup moves
	// money between players only, but for its commission.
	moved := map[string]int64{}
	commissions := int64(0)
	coupCommissions := regexp.MustCompile(`(?m)^  the banker nets [-+]\d+ \(commission (\d+)\)$`).FindAllStringSubmatch(text, -1)
	for i, line := range money {
		f := strings.Fields(line[1])
		if len(f) != 2*len(gamePlayers) {
			t.Fatalf("money line %q", line[0])
		}
		var sum int64
		for j := 0; j < len(f); j += 2 {
			n, err := strconv.ParseInt(f[j+1], 10, 64)
			if err != nil {
				t.Fatalf("money line %q: %v", line[0], err)
			}
			moved[f[j]] += n
			sum += n
		}
		var commission int64
		if i < len(coupCommissions) {
			commission, _ = strconv.ParseInt(coupCommissions[i][1], 10, 64)
		}
		commissions += commission
		if sum != -commission {
			t.Errorf("coup %d moved %d in all, its commission %d: %q", i+1, sum, commission, line[0])
		}
	}
	var fees int64
	for _, p := range gamePlayers {
		d := bal[p] - 10000 - moved[p]
		if d > 0 {
			t.Errorf("player:%s has %d more than the coups the script printed gave him", p, d)
		}
		fees -= d
	}
	if fees+commissions != house.GetBalance() {
		t.Errorf("house:commission %d; the players paid %d outside the coups and %d in commissions", house.GetBalance(), fees, commissions)
	}
	return c, tbl, text
}

// TestOldBaccaratExampleScript runs examples/old-baccarat.sh (OLD-*) on
// a shuffled shoe: the bank auctioned (OLD-BANKER), stakes covered twice
// (OLD-STAKE), the banker's move after the cut (OLD-CUT), the draws asked
// and answered (OLD-DRAW). Beyond the money (gameScript), the last coup's
// hands must be settled by their rank against the banker's (OLD-RANK,
// OLD-SETTLE): a better rank is paid, a worse one loses.
func TestOldBaccaratExampleScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	_, tbl, text := gameScript(t, "old-baccarat.sh")
	if tbl.GetVariant() != tablev1.Variant_VARIANT_OLD_BACCARAT {
		t.Fatalf("variant %s", tbl.GetVariant())
	}
	// The first coup of the table's first shoe waited for the banker's
	// announcement (the script answers it).
	if !strings.Contains(text, "moves 3 cards from its top to its bottom (OLD-CUT)") {
		t.Errorf("the banker made no move after the cut")
	}
	cp := tbl.GetLastCoup()
	if len(cp.GetHands()) < 2 || len(cp.GetBankerCards()) < 2 || len(cp.GetBankerCards()) > 3 {
		t.Fatalf("last coup: %d hands, banker %v", len(cp.GetHands()), cp.GetBankerCards())
	}
	// rank is the OLD-RANK of a total: its last digit (9 best, baccarat 0 worst).
	rank := func(points int32) int32 { return points % 10 }
	if cp.GetBankerTotal() != oldPoints(t, cp.GetBankerCards()) {
		t.Errorf("banker's total %d for %v", cp.GetBankerTotal(), cp.GetBankerCards())
	}
	for _, h := range cp.GetHands() {
		if n := len(h.GetCards()); n < 2 || n > 3 || h.GetTotal() != oldPoints(t, h.GetCards()) {
			t.Errorf("%s's hand %v, total %d", h.GetHolderPlayerId(), h.GetCards(), h.GetTotal())
		}
		switch r, b := rank(h.GetTotal()), rank(cp.GetBankerTotal()); {
		case r > b && h.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_LOSES:
			t.Errorf("%s's %d against the banker's %d: %s", h.GetHolderPlayerId(), h.GetTotal(), cp.GetBankerTotal(), h.GetOutcome())
		case r < b && h.GetOutcome() != tablev1.Outcome_OUTCOME_BANK_WINS:
			t.Errorf("%s's %d against the banker's %d: %s", h.GetHolderPlayerId(), h.GetTotal(), cp.GetBankerTotal(), h.GetOutcome())
		}
	}
}

// oldPoints are the OLD-VALUES points of cards: ace 11, court cards 10,
// others their face value.
func oldPoints(t *testing.T, cards []*shoev1.Card) int32 {
	t.Helper()
	var n int32
	for _, c := range cards {
		n += cardValue(t, c.GetCode(), 11, 10)
	}
	return n
}

// cardValue is a card's value: ace, ten and court cards as given, others
// their face value.
func cardValue(t *testing.T, code string, ace, ten int32) int32 {
	t.Helper()
	if len(code) != 2 {
		t.Fatalf("card %q", code)
	}
	switch r := code[0]; {
	case r == 'A':
		return ace
	case strings.IndexByte("TJQK", r) >= 0:
		return ten
	case r >= '2' && r <= '9':
		return int32(r - '0')
	}
	t.Fatalf("card %q", code)
	return 0
}

// TestBanqueExampleScript runs examples/banque.sh (BQ-*) on a shuffled
// shoe: the bank auctioned with its 2.5% fee (BQ-BANK), bets in turn on
// the right, the left and à cheval (BQ-BETS), three hands (BQ-HANDS)
// played by their sides' players and the banker (BQ-PLAY). Beyond the
// money (gameScript), the fee is in house:commission, and the last coup's
// bets were settled as its hands came out: a bet on a hand follows it, an
// à cheval bet wins or loses only with both (BQ-CHEVAL).
func TestBanqueExampleScript(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	c, tbl, text := gameScript(t, "banque.sh")
	if tbl.GetVariant() != tablev1.Variant_VARIANT_BACCARAT_BANQUE {
		t.Fatalf("variant %s", tbl.GetVariant())
	}
	// Source: RULES.md BQ-BANK (the highest bidder pays the house 2.5% of the bid)
	fees := regexp.MustCompile(`(?m)who pays the house (\d+) \(2\.5% of the bid`).FindAllStringSubmatch(text, -1)
	if len(fees) == 0 || fees[0][1] != "75" {
		t.Errorf("the auction's fee: %v, want 75 (2.5%% of 3000)", fees)
	}
	if h := c.account(t, "house:commission").GetBalance(); h < 75 {
		t.Errorf("house:commission %d, the fee was 75", h)
	}
	cp := tbl.GetLastCoup()
	if len(cp.GetHands()) != 2 || cp.GetHands()[0].GetHand() != tablev1.Hand_HAND_RIGHT || cp.GetHands()[1].GetHand() != tablev1.Hand_HAND_LEFT {
		t.Fatalf("last coup's hands %v", cp.GetHands())
	}
	total := func(cards []*shoev1.Card) int32 {
		var n int32
		for _, c := range cards {
			n += cardValue(t, c.GetCode(), 1, 0)
		}
		return n % 10
	}
	outcome := map[tablev1.Hand]tablev1.Outcome{}
	for _, h := range cp.GetHands() {
		outcome[h.GetHand()] = h.GetOutcome()
		if n := len(h.GetCards()); n < 2 || n > 3 || h.GetTotal() != total(h.GetCards()) {
			t.Errorf("%s hand %v, total %d", h.GetHand(), h.GetCards(), h.GetTotal())
		}
		// A hand is compared with the bank's two cards when either showed a
		// natural, else with the bank's final hand.
		bank := cp.GetBankerCards()
		if total(h.GetCards()[:2]) >= 8 || total(bank[:2]) >= 8 {
			bank = bank[:2]
		}
		want := tablev1.Outcome_OUTCOME_STAND_OFF
		switch p, b := total(h.GetCards()), total(bank); {
		case p > b:
			want = tablev1.Outcome_OUTCOME_BANK_LOSES
		case p < b:
			want = tablev1.Outcome_OUTCOME_BANK_WINS
		}
		if h.GetOutcome() != want {
			t.Errorf("%s hand %v against the bank's %v: %s, want %s", h.GetHand(), h.GetCards(), bank, h.GetOutcome(), want)
		}
	}
	// The script's bets: bob on the right, carol on the left, dave à
	// cheval, alice on the right.
	side := map[string]string{"alice": "right", "bob": "right", "carol": "left", "dave": "cheval"}
	for _, b := range cp.GetBets() {
		var win, lose bool
		switch side[b.GetPlayerId()] {
		case "right":
			win, lose = outcome[tablev1.Hand_HAND_RIGHT] == tablev1.Outcome_OUTCOME_BANK_LOSES, outcome[tablev1.Hand_HAND_RIGHT] == tablev1.Outcome_OUTCOME_BANK_WINS
		case "left":
			win, lose = outcome[tablev1.Hand_HAND_LEFT] == tablev1.Outcome_OUTCOME_BANK_LOSES, outcome[tablev1.Hand_HAND_LEFT] == tablev1.Outcome_OUTCOME_BANK_WINS
		default:
			// Source: RULES.md BQ-CHEVAL (loses only if the bank beats both, wins only if it loses to both)
			win = outcome[tablev1.Hand_HAND_RIGHT] == tablev1.Outcome_OUTCOME_BANK_LOSES && outcome[tablev1.Hand_HAND_LEFT] == tablev1.Outcome_OUTCOME_BANK_LOSES
			lose = outcome[tablev1.Hand_HAND_RIGHT] == tablev1.Outcome_OUTCOME_BANK_WINS && outcome[tablev1.Hand_HAND_LEFT] == tablev1.Outcome_OUTCOME_BANK_WINS
		}
		switch {
		case win && (b.GetWon() != b.GetAmount() || b.GetLost() != 0),
			lose && (b.GetLost() != b.GetAmount() || b.GetWon() != 0),
			!win && !lose && (b.GetWon() != 0 || b.GetLost() != 0):
			t.Errorf("%s's %d %s against right %s, left %s: won %d, lost %d", b.GetPlayerId(), b.GetAmount(), side[b.GetPlayerId()],
				outcome[tablev1.Hand_HAND_RIGHT], outcome[tablev1.Hand_HAND_LEFT], b.GetWon(), b.GetLost())
		}
	}
}
