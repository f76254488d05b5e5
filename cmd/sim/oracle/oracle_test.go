package oracle

import (
	"slices"
	"strings"
	"testing"
)

// The oracle's own tests: worked examples of docs/RULES.md and of the
// walk-throughs (docs/walkthroughs), written down from those texts (never from
// what the services answer).

func TestCardValuesAndTotals(t *testing.T) {
	// CARD-VALUE: ten and the court cards 0, ace 1, 2-9 their face.
	for code, want := range map[string]int{"AS": 1, "2C": 2, "9H": 9, "TD": 0, "10D": 0, "JC": 0, "QH": 0, "KS": 0} {
		if v, err := Value(code); err != nil || v != want {
			t.Errorf("Value(%s) = %d, %v; want %d", code, v, err, want)
		}
	}
	for _, bad := range []string{"", "1H", "ZZ", "AX", "7"} {
		if _, err := Value(bad); err == nil {
			t.Errorf("Value(%q) took a non-card", bad)
		}
	}
	// HAND-TOTAL: modulo 10.
	if n, _ := Total([]string{"7H", "8C"}); n != 5 {
		t.Errorf("7+8 = %d, want 5", n)
	}
	if n, _ := Total([]string{"9H", "KC", "AS"}); n != 0 {
		t.Errorf("9+0+1 = %d, want 0", n)
	}
	// A pair is two cards of one rank: a king and a queen are none.
	if !Pair([]string{"KH", "KS", "2C"}) || Pair([]string{"KH", "QH"}) || !Pair([]string{"TD", "10H"}) {
		t.Errorf("pairs wrong")
	}
}

// TestBankerTable is RULES.md CF-BANKER-DRAW's table, cell by cell, as
// the text writes it (player's third card: draws on, stands on, option).
func TestBankerTable(t *testing.T) {
	rows := []struct {
		third       []string // "" : the player stood
		drawTo      int      // draws on 0..drawTo
		option      int      // -1: none
		optionRule3 bool     // the option is 3-vs-9 (else 5-vs-4)
	}{
		{[]string{""}, 5, -1, false},
		{[]string{"TH", "JH", "QH", "KH", "AH"}, 3, -1, false},
		{[]string{"2H", "3H"}, 4, -1, false},
		{[]string{"4H"}, 5, 5, false},
		{[]string{"5H"}, 5, -1, false},
		{[]string{"6H", "7H"}, 6, -1, false},
		{[]string{"8H"}, 2, -1, false},
		{[]string{"9H"}, 2, 3, true},
	}
	for _, row := range rows {
		for _, third := range row.third {
			for total := 0; total <= 7; total++ {
				for _, opts := range []CheminRules{{Option3vs9: true, Option5vs4: true}, {}} {
					want := Stand
					if total <= row.drawTo {
						want = Draw
					}
					if total == row.option {
						on := opts.Option5vs4
						if row.optionRule3 {
							on = opts.Option3vs9
						}
						// An option whose house rule is off draws (004: the
						// banker must draw on 3 when he gave a 9, on 5 when he
						// gave a 4).
						want = Draw
						if on {
							want = Option
						}
					}
					got, err := BankerCell(total, third, opts)
					if err != nil || got != want {
						t.Errorf("banker %d, player's third %q, options %+v: %v (%v), want %v", total, third, opts, got, err, want)
					}
				}
			}
		}
	}
	// CF-PLAYER-DRAW: draws on 0-4, option on 5, stands on 6-7.
	for total, want := range []Cell{Draw, Draw, Draw, Draw, Draw, Option, Stand, Stand} {
		if got := PlayerCell(total); got != want {
			t.Errorf("player on %d: %v, want %v", total, got, want)
		}
	}
}

// TestWalkThrough is the chemin de fer walk-through ("three
// punters, a banco, a pass and a loss of the bank",
// docs/walkthroughs/chemin-de-fer.md) on its shoe 2C 9H
// 3D TC | 2S 9D 3H TS | 4C 3S 5D 5H, dealt player, banker, player,
// banker (CF-DEAL), default house rules: commission 500 bp rounded down.
// Its balances: alice 12803, bob 7250, carol 10200, dave 9600, house 147.
func TestWalkThrough(t *testing.T) {
	r := CheminRules{Option3vs9: true, Option5vs4: true}
	money := map[string]int64{"alice": 10000, "bob": 10000, "carol": 10000, "dave": 10000}
	coup := func(player, banker []string, banco bool, bank int64, who []string, bets []int64) (Play, CheminSettlement) {
		t.Helper()
		p, err := PlayChemin(player, banker, r, banco)
		if err != nil {
			t.Fatal(err)
		}
		st, err := SettleChemin(bank, bets, p.Outcome, 500, RoundDown, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range st.Bets {
			money[who[i]] += b
		}
		money["house"] += st.Commission
		return p, st
	}
	// 1. The banker's natural 9 wins against bob 300, carol 300, dave 400:
	// alice +950, the house 50, the bank 1950.
	p, st := coup([]string{"2C", "3D"}, []string{"9H", "TC"}, false, 1000, []string{"bob", "carol", "dave"}, []int64{300, 300, 400})
	if !p.Natural || p.Outcome != BankWins || st.Net != 950 || st.Commission != 50 || st.NewBank != 1950 {
		t.Fatalf("coup 1: %+v %+v", p, st)
	}
	money["alice"] += st.Net
	// 2. Bob's banco on 1950; the banker's 9 again: the bank is 3803.
	p, st = coup([]string{"2S", "3H"}, []string{"9D", "TS"}, true, 1950, []string{"bob"}, []int64{1950})
	if p.Outcome != BankWins || st.Commission != 97 || st.NewBank != 3803 {
		t.Fatalf("coup 2: %+v %+v", p, st)
	}
	money["alice"] += st.Net
	// 4. Bob banks 500, carol covers it; the player's natural 9 beats the
	// banker's 8.
	p, st = coup([]string{"4C", "5D"}, []string{"3S", "5H"}, false, 500, []string{"carol"}, []int64{500})
	if !p.Natural || p.Outcome != BankLoses || st.NewBank != 0 {
		t.Fatalf("coup 3: %+v %+v", p, st)
	}
	money["bob"] += st.Net
	want := map[string]int64{"alice": 12803, "bob": 7250, "carol": 10200, "dave": 9600, "house": 147}
	for k, v := range want {
		if money[k] != v {
			t.Errorf("%s ends at %d, the walk-through says %d", k, money[k], v)
		}
	}
}

func TestCommissionRounding(t *testing.T) {
	// CF-BANK-WINS: commission_bp basis points, rounded by
	// commission_rounding (down by default). 5% of 1950 is 97.5; of 1949,
	// 97.45; of 1940, 97 exactly.
	for _, c := range []struct {
		amount, bp int64
		r          Rounding
		want       int64
	}{
		{1950, 500, RoundDown, 97}, {1950, 500, 0, 97}, {1950, 500, RoundHalfUp, 98}, {1950, 500, RoundUp, 98},
		{1949, 500, RoundHalfUp, 97}, {1949, 500, RoundUp, 98}, {1940, 500, RoundUp, 97},
		{333, 250, RoundDown, 8}, {333, 250, RoundHalfUp, 8}, {333, 250, RoundUp, 9}, // 8.325
		{1, 10000, RoundDown, 1}, {7, 0, RoundUp, 0},
		{1 << 60, 10000, RoundDown, 1 << 60}, // no overflow
	} {
		if got := Share(c.amount, c.bp, c.r); got != c.want {
			t.Errorf("%d bp of %d, rounding %d: %d, want %d", c.bp, c.amount, c.r, got, c.want)
		}
	}
	// The first coup of a banker exempt, or an hourly-fee table: none.
	if st, _ := SettleChemin(1000, []int64{400}, BankWins, 500, RoundDown, true); st.Commission != 0 || st.Net != 400 || st.NewBank != 1400 {
		t.Errorf("exempt: %+v", st)
	}
	// CF-UNCOVERED: what no bet covered stays, whatever the result.
	if st, _ := SettleChemin(1000, []int64{300, 100}, BankLoses, 500, RoundDown, false); st.NewBank != 600 || !slices.Equal(st.Bets, []int64{300, 100}) {
		t.Errorf("bank loses: %+v", st)
	}
	if st, _ := SettleChemin(1000, []int64{300}, StandOff, 500, RoundDown, false); st.NewBank != 1000 || st.Bets[0] != 0 || st.Commission != 0 {
		t.Errorf("stand-off: %+v", st)
	}
	// CF-BET-LIMIT.
	if _, err := SettleChemin(500, []int64{300, 300}, BankWins, 500, RoundDown, false); err == nil {
		t.Errorf("bets over the bank settled")
	}
	// Hourly fee: 600 an hour is 10 a minute; 90 s of 60 an hour is 1.5.
	for _, c := range []struct {
		perHour, secs int64
		r             Rounding
		want          int64
	}{{600, 60, RoundDown, 10}, {60, 90, RoundDown, 1}, {60, 90, RoundHalfUp, 2}, {60, 61, RoundUp, 2}, {60, 0, RoundUp, 0}, {1200, 7200, RoundDown, 2400}} {
		if got := HourlyFee(c.perHour, c.secs, c.r); got != c.want {
			t.Errorf("%d an hour for %d s (%d): %d, want %d", c.perHour, c.secs, c.r, got, c.want)
		}
	}
}

func TestPlayChemin(t *testing.T) {
	r := CheminRules{Option3vs9: true, Option5vs4: true}
	ok := func(player, banker string, banco bool, want Outcome) Play {
		t.Helper()
		p, err := PlayChemin(strings.Fields(player), strings.Fields(banker), r, banco)
		if err != nil || p.Outcome != want {
			t.Errorf("%s / %s: %v, %v; want %v", player, banker, p.Outcome, err, want)
		}
		return p
	}
	bad := func(player, banker string, banco bool, rule string) {
		t.Helper()
		_, err := PlayChemin(strings.Fields(player), strings.Fields(banker), r, banco)
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("%s / %s: %v, want a breach of %s", player, banker, err, rule)
		}
	}
	// CF-NATURAL-PLAYER: 9 beats 8; equal naturals stand off.
	ok("4C 5D", "3S 5H", false, BankLoses)
	ok("4C 4D", "3S 5H", false, StandOff)
	// CF-NATURAL-BANKER: the banker's lone natural wins.
	ok("2C 3D", "9H TC", false, BankWins)
	bad("2C 3D 4H", "9H TC", false, "CF-NATURAL")
	// The player on 3 draws; on 6 stands; on 5 chooses.
	ok("AC 2D 5S", "3H 4C", false, BankLoses) // 8 against 7 (banker 7 stands)
	bad("AC 2D", "3H 4C", false, "CF-PLAYER-DRAW")
	bad("3C 3D 2S", "2H 4C", false, "CF-PLAYER-DRAW")
	p := ok("2C 3D", "4H 3S", false, BankWins)
	if p.PlayerCell != Option || !p.TimeoutDraw(true) || p.BankerCell != Stand {
		t.Errorf("5 against 7: %+v", p)
	}
	// The banker's third card: 3 after giving a 9 is his option; 3 after
	// an 8 stands; 6 after a 6 draws.
	ok("AC 3D 8S", "KH 3C", false, BankWins)             // 2 / 3: the banker stands on 3 after an 8
	bad("AC 3D 6S", "3H 3C", false, "CF-BANKER-DRAW")    // banker 6 after a 6 must draw
	bad("2C 3D 8S", "KH 3C 5D", false, "CF-BANKER-DRAW") // 3 after an 8 stands
	ok("AC 3D 9S", "KH 3C 5D", false, BankWins)          // 3 after a 9: option, he drew: 3 / 8
	ok("AC 3D 9S", "KH 3C", false, StandOff)             // or stood: 3 / 3
	ok("AC 3D 6S", "3H 3C 2D", false, BankWins)          // 0 / 8
	// CF-BANCO-FREEDOM: under banco free play a banco coup's player may
	// stand on 0 and the banker draw on 7.
	free := CheminRules{BancoFreePlay: true}
	if p, err := PlayChemin([]string{"TC", "KD"}, []string{"3H", "4C", "AS"}, free, true); err != nil || p.PlayerCell != Option || p.BankerCell != Option || !p.TimeoutDraw(true) || p.TimeoutDraw(false) {
		t.Errorf("free play: %+v %v", p, err)
	}
	if _, err := PlayChemin([]string{"TC", "KD"}, []string{"3H", "4C"}, free, false); err == nil {
		t.Errorf("free play without banco: the player stood on 0")
	}
}

func TestPuntoBanco(t *testing.T) {
	// PB-TABLEAU: the player draws on 5; the banker draws on 3 after a 9,
	// on 5 after a 4.
	if _, err := PlayPuntoBanco([]string{"2C", "3D"}, []string{"4H", "3S"}); err == nil {
		t.Errorf("the player stood on 5 at punto banco")
	}
	if _, err := PlayPuntoBanco([]string{"AC", "3D", "9S"}, []string{"KH", "3C"}); err == nil {
		t.Errorf("the bank stood on 3 after a 9")
	}
	if _, err := PlayPuntoBanco([]string{"AC", "AD", "4S"}, []string{"KH", "5C"}); err == nil {
		t.Errorf("the bank stood on 5 after a 4")
	}
	p, err := PlayPuntoBanco([]string{"AC", "AD", "4S"}, []string{"KH", "5C", "KS"})
	if err != nil || p.Outcome != BankLoses || p.PlayerTotal != 6 || p.BankerTotal != 5 {
		t.Fatalf("%+v %v", p, err)
	}
	r := PuntoBancoRules{CommissionBP: 500, Rounding: RoundDown, TiePays: 8, BankNaturalPays: 9, PairPays: 11}
	settle := func(player, banker string, stakes []Stake, r PuntoBancoRules) []BetResult {
		t.Helper()
		p, err := PlayPuntoBanco(strings.Fields(player), strings.Fields(banker))
		if err != nil {
			t.Fatal(err)
		}
		res, err := SettlePuntoBanco(p, stakes, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	all := []Stake{{SpotBank, 1000}, {SpotPlayer, 500}, {SpotTie, 100}, {SpotBankNatural, 100}, {SpotPlayerPair, 100}, {SpotBankPair, 100}}
	// The bank's natural 9 (4H 5H) beats the player's 7 (3C 4D).
	res := settle("3C 4D", "4H 5H", all, r)
	want := []BetResult{{Won: 1000, Commission: 50}, {Lost: 500}, {Lost: 100}, {Won: 900}, {Lost: 100}, {Lost: 100}}
	if !slices.Equal(res, want) {
		t.Errorf("bank natural 9: %+v, want %+v", res, want)
	}
	// A tie: bank and player push, the tie pays 8 to 1; pairs both ways.
	res = settle("6C 6D 5S", "7H 7S 3D", all, r) // 7 / 7, the bank draws on 4 after a 5
	want = []BetResult{{}, {}, {Won: 800}, {Lost: 100}, {Won: 1100}, {Won: 1100}}
	if !slices.Equal(res, want) {
		t.Errorf("tie: %+v, want %+v", res, want)
	}
	// The bank's natural bet wins on its natural even when the player's
	// 9 beats it.
	res = settle("9C KD", "8H KH", []Stake{{SpotBankNatural, 100}, {SpotBank, 300}}, r)
	if !slices.Equal(res, []BetResult{{Won: 900}, {Lost: 300}}) {
		t.Errorf("bank natural beaten: %+v", res)
	}
	// Commission rounding per bet: 5% of 150 is 7.5.
	for rounding, c := range map[Rounding]int64{RoundDown: 7, RoundHalfUp: 8, RoundUp: 8} {
		r2 := r
		r2.Rounding = rounding
		if res := settle("3C 4D", "4H 5H", []Stake{{SpotBank, 150}}, r2); res[0].Commission != c || res[0].Net() != 150-c {
			t.Errorf("rounding %d: %+v, want commission %d", rounding, res, c)
		}
	}
	// The no-commission game: a bank win pays even money, half (rounded
	// down) on a total of 6.
	nc := r
	nc.NoCommission = true
	if res := settle("3C 4D", "4H 5H", []Stake{{SpotBank, 301}}, nc); res[0] != (BetResult{Won: 301}) {
		t.Errorf("no commission, bank 9: %+v", res)
	}
	if res := settle("2C 3D 9S", "3H 3S", []Stake{{SpotBank, 301}}, nc); res[0] != (BetResult{Won: 150}) { // 4 / 6: the bank stands on 6 after a 9
		t.Errorf("no commission, bank 6: %+v", res)
	}
}

// TestBanque is the banque walk-through (docs/walkthroughs/banque.md): the right hand 2C 3D
// (5), the left 7H KS (7), the bank 4C 5H (9); carol 400 à cheval, bob
// 500 on the right; the bank's natural 9 beats both tables, both bets
// lose and the bank of 3000 is now 3900; alice paid 75 for her bid.
func TestBanque(t *testing.T) {
	p, err := PlayBanque([]string{"2C", "3D"}, []string{"7H", "KS"}, []string{"4C", "5H"})
	if err != nil || !p.BankerNatural || p.Right.Outcome != BankWins || p.Left.Outcome != BankWins || p.BankerPlays {
		t.Fatalf("%+v %v", p, err)
	}
	st, err := SettleBanque(3000, p, []BanqueBet{{SideCheval, 400}, {SideRight, 500}}, 0, RoundDown)
	if err != nil || st.NewBank != 3900 || !slices.Equal(st.Bets, []int64{-400, -500}) {
		t.Errorf("%+v %v", st, err)
	}
	if fee := AuctionFee(3000, RoundDown); fee != 75 {
		t.Errorf("fee %d", fee)
	}
	// BQ-CHEVAL: the bank beats one hand and loses to the other: the à
	// cheval bet is returned; loses to both: it wins.
	// The right's natural 8 against the bank's first two cards, 6; the
	// left's 5 drew a ten (his option), the bank drew a ten: 5 / 6.
	p, err = PlayBanque([]string{"4C", "4D"}, []string{"2H", "3S", "KD"}, []string{"3C", "3H", "TC"})
	if err != nil || p.Right.Outcome != BankLoses || p.Left.Outcome != BankWins {
		t.Fatalf("split: %+v %v", p, err)
	}
	st, _ = SettleBanque(2000, p, []BanqueBet{{SideCheval, 300}, {SideRight, 100}, {SideLeft, 200}}, 1000, RoundUp)
	if !slices.Equal(st.Bets, []int64{0, 100, -200}) || st.Net != 100 || st.Commission != 10 || st.NewBank != 2090 {
		t.Errorf("split: %+v", st)
	}
	p, _ = PlayBanque([]string{"4C", "5D"}, []string{"9H", "KS"}, []string{"3C", "3H"})
	if st, _ := SettleBanque(2000, p, []BanqueBet{{SideCheval, 300}}, 0, RoundDown); st.Bets[0] != 300 || p.BankerPlays {
		t.Errorf("both naturals: %+v %+v", p, st)
	}
	// A hand on 3 must draw; the banker may draw on 7.
	if _, err := PlayBanque([]string{"AC", "2D"}, []string{"7H", "KS"}, []string{"3C", "4H"}); err == nil {
		t.Errorf("a hand stood on 3")
	}
	if p, err := PlayBanque([]string{"AC", "2D", "2S"}, []string{"7H", "KS"}, []string{"3C", "4H", "9D"}); err != nil || p.Right.Outcome != BankWins || p.Left.Outcome != BankLoses {
		t.Errorf("the banker drew on 7: %+v %v", p, err)
	}
}

// TestOldGame: OLD-VALUES, OLD-RANK, OLD-NATURAL, OLD-DRAW and 002's
// worked example of the three-way split; the old game's
// walk-through (docs/walkthroughs/old-baccarat.md) (bob 5, carol 17, the banker's natural 9 takes both
// stakes: the bank of 6000 is now 6800).
func TestOldGame(t *testing.T) {
	if n, _ := OldPoints([]string{"AS", "KD", "9C"}); n != 30 || OldRank(n) != 0 {
		t.Errorf("A K 9 = %d", n)
	}
	p, err := PlayOld([]string{"4C", "5D"}, [][]string{{"2C", "3D"}, {"7H", "KS"}})
	if err != nil || !p.Natural || p.BankerPoints != 9 || p.Punters[0].Outcome != BankWins || p.Punters[1].Outcome != BankWins {
		t.Fatalf("walk-through: %+v %v", p, err)
	}
	nets, banker, _ := SettleOld(p, []int64{500, 300})
	if banker != 800 || !slices.Equal(nets, []int64{-500, -300}) {
		t.Errorf("walk-through: %v %d", nets, banker)
	}
	// A punter's 19 against the banker's 18 is paid; an 8 loses to it.
	p, _ = PlayOld([]string{"KC", "8D"}, [][]string{{"9C", "KD"}, {"8H", "JS"}, {"AH", "6C"}})
	if p.Punters[0].Outcome != BankLoses || p.Punters[1].Outcome != BankWins || p.Punters[2].Outcome != BankWins {
		t.Errorf("18 against 19, 18, 17: %+v", p)
	}
	// No natural: a last digit below 4 may draw (12: yes; 15: no).
	if _, err := PlayOld([]string{"5C", "KD"}, [][]string{{"2C", "KD", "3H"}, {"7H", "8S", "2D"}}); err == nil {
		t.Errorf("15 drew beside a 12")
	}
	if _, err := PlayOld([]string{"5C", "KD"}, [][]string{{"2C", "KD", "3H"}, {"7H", "5S", "2D"}}); err != nil {
		t.Errorf("two 12s drew: %v", err)
	}
	if _, err := PlayOld([]string{"4C", "5D"}, [][]string{{"2C", "KD", "3H"}}); err == nil {
		t.Errorf("a third card after the banker's natural")
	}
	// 002's worked example: the banker and two punters tie, stakes 100
	// and 200: the pool of 900 split in three, 300 each.
	p, err = PlayOld([]string{"5C", "2D"}, [][]string{{"4C", "3D"}, {"KH", "7S"}})
	if err != nil || !p.Punters[0].Split || !p.Punters[1].Split {
		t.Fatalf("three-way tie: %+v %v", p, err)
	}
	nets, banker, _ = SettleOld(p, []int64{100, 200})
	if !slices.Equal(nets, []int64{200, 100}) || banker != -300 {
		t.Errorf("split: %v %d; each should receive 300", nets, banker)
	}
	// With three tied punters every tie goes to the banker.
	p, _ = PlayOld([]string{"5C", "2D"}, [][]string{{"4C", "3D"}, {"KH", "7S"}, {"QH", "7C"}})
	if nets, banker, _ := SettleOld(p, []int64{100, 200, 300}); banker != 600 || nets[2] != -300 {
		t.Errorf("three ties: %v %d", nets, banker)
	}
	// OLD-BACCARAT: the first punter in draw order showing 10, 20, 30.
	p, _ = PlayOld([]string{"5C", "2D"}, [][]string{{"4C", "3D"}, {"KH", "QS"}, {"AH", "9C"}})
	if FirstBaccarat(p) != 1 {
		t.Errorf("baccarat: %+v", p)
	}
}
