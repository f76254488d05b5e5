package rules

import (
	"errors"
	"math"
	"testing"
)

// TestPBTableau walks every cell of the punto banco tableau: every pair of
// two-card totals and every player's third card value, and checks the next
// step against the table of PB-TABLEAU (the chemin de fer tableau with no
// options: the player draws on 5, the banker on 3 after a 9, on 5 after a
// 4).
func TestPBTableau(t *testing.T) {
	// bankerDraws[third+1][total]: third -1 is "player stood".
	limit := map[int]int{-1: 5, 0: 3, 1: 3, 2: 4, 3: 4, 4: 5, 5: 5, 6: 6, 7: 6, 8: 2, 9: 3}
	for tp := 0; tp <= 9; tp++ {
		for tb := 0; tb <= 9; tb++ {
			c := Coup{Player: []Card{card(tp), card(0)}, Banker: []Card{card(tb), card(0)}}
			s, err := NextStepPuntoBanco(c)
			if err != nil {
				t.Fatalf("P %d B %d: %v", tp, tb, err)
			}
			switch {
			case tp >= 8 || tb >= 8:
				if s.Kind != StepDone || !s.Natural {
					t.Errorf("P %d B %d: %+v, want a natural", tp, tb, s)
				}
				continue
			case tp <= 5:
				if s != (Step{Kind: StepDealPlayer, Rule: RulePBTableau}) {
					t.Errorf("P %d B %d: %+v, want the player to draw", tp, tb, s)
				}
				for v := 0; v <= 9; v++ {
					c3 := c
					c3.Player = append([]Card{c.Player[0], c.Player[1]}, card(v))
					s, err := NextStepPuntoBanco(c3)
					if err != nil {
						t.Fatalf("%+v: %v", c3, err)
					}
					checkPBBanker(t, c3, s, tb <= limit[v])
				}
			default:
				checkPBBanker(t, c, s, tb <= limit[-1])
			}
		}
	}
	// Illegal states specific to punto banco.
	for name, c := range map[string]Coup{
		"banco":          {Player: cards("2C 3C"), Banker: cards("AC AD"), Banco: true},
		"stood on 5":     {Player: cards("2C 3C"), Banker: cards("AC AD"), PlayerStood: true},
		"stood 3 vs 9":   {Player: cards("2C 2D 9C"), Banker: cards("AC 2D"), BankerStood: true},
		"stood 5 vs 4":   {Player: cards("2C 2D 4C"), Banker: cards("2C 3D"), BankerStood: true},
		"invalid card":   {Player: []Card{{}, card(1)}, Banker: cards("AC AD")},
		"drew after nat": {Player: cards("4C 4D 2C"), Banker: cards("AC AD")},
	} {
		if _, err := NextStepPuntoBanco(c); !errors.Is(err, ErrIllegalState) {
			t.Errorf("%s: %v, want ErrIllegalState", name, err)
		}
	}
}

func checkPBBanker(t *testing.T, c Coup, s Step, draw bool) {
	t.Helper()
	if draw {
		if s != (Step{Kind: StepDealBanker, Rule: RulePBTableau}) {
			t.Errorf("P %v B %v: %+v, want the banker to draw", c.Player, c.Banker, s)
		}
		c.Banker = append(c.Banker[:2:2], card(7))
		s, err := NextStepPuntoBanco(c)
		if err != nil || s.Kind != StepDone || s.Outcome != Compare(Total(c.Player), Total(c.Banker)) {
			t.Errorf("P %v B %v: %+v %v, want done", c.Player, c.Banker, s, err)
		}
		return
	}
	if s.Kind != StepDone || s.Outcome != Compare(Total(c.Player), Total(c.Banker)) {
		t.Errorf("P %v B %v: %+v, want the banker to stand and the coup done", c.Player, c.Banker, s)
	}
}

// TestPBBets walks every settlement path of PB-BETS.
func TestPBBets(t *testing.T) {
	pr := DefaultPuntoBancoRules()
	stakes := []PuntoBancoStake{{BetBank, 1010}, {BetPlayer, 1000}, {BetTie, 100}, {BetBankNatural, 50}}
	tests := []struct {
		name string
		res  PuntoBancoResult
		want []StakeResult
	}{
		{"bank wins natural", PuntoBancoResult{Outcome: OutcomeBankWins, BankNatural: true}, []StakeResult{
			{Won: 1010, Commission: 50}, {Lost: 1000}, {Lost: 100}, {Won: 450}}},
		{"bank wins", PuntoBancoResult{Outcome: OutcomeBankWins}, []StakeResult{
			{Won: 1010, Commission: 50}, {Lost: 1000}, {Lost: 100}, {Lost: 50}}},
		{"player wins", PuntoBancoResult{Outcome: OutcomeBankLoses}, []StakeResult{
			{Lost: 1010}, {Won: 1000}, {Lost: 100}, {Lost: 50}}},
		{"tie pushes", PuntoBancoResult{Outcome: OutcomeStandOff, BankNatural: true}, []StakeResult{
			{Returned: true}, {Returned: true}, {Won: 800}, {Won: 450}}},
	}
	for _, tt := range tests {
		got, err := SettlePuntoBanco(stakes, tt.res, pr)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i := range got {
			w := tt.want[i]
			w.Rule = RulePBBets
			if got[i] != w {
				t.Errorf("%s: %v: %+v, want %+v", tt.name, stakes[i].Bet, got[i], w)
			}
		}
	}
	up := pr
	up.CommissionRounding = RoundUp
	if got, _ := SettlePuntoBanco([]PuntoBancoStake{{BetBank, 1001}}, PuntoBancoResult{Outcome: OutcomeBankWins}, up); got[0].Commission != 51 || got[0].Net() != 950 {
		t.Errorf("round up: %+v", got[0])
	}
	bad := []struct {
		stakes []PuntoBancoStake
		res    PuntoBancoResult
		pr     PuntoBancoRules
		want   error
	}{
		{[]PuntoBancoStake{{BetBank, 0}}, PuntoBancoResult{Outcome: OutcomeBankWins}, pr, ErrInvalidAmount},
		{[]PuntoBancoStake{{0, 5}}, PuntoBancoResult{Outcome: OutcomeBankWins}, pr, ErrInvalidOutcome},
		{[]PuntoBancoStake{{BetBank, 5}}, PuntoBancoResult{}, pr, ErrInvalidOutcome},
		{[]PuntoBancoStake{{BetTie, math.MaxInt64}}, PuntoBancoResult{Outcome: OutcomeStandOff}, pr, ErrOverflow},
		{nil, PuntoBancoResult{Outcome: OutcomeBankWins}, PuntoBancoRules{CommissionBP: 500, TiePays: 0, BankNaturalPays: 9, PairPays: 11}, ErrInvalidHouseRules},
		{nil, PuntoBancoResult{Outcome: OutcomeBankWins}, PuntoBancoRules{CommissionBP: 500, TiePays: 8, BankNaturalPays: 9}, ErrInvalidHouseRules},
		{nil, PuntoBancoResult{Outcome: OutcomeBankWins}, PuntoBancoRules{CommissionBP: 500, TiePays: 8, BankNaturalPays: 9, PairPays: 1001}, ErrInvalidHouseRules},
		{nil, PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: 10}, pr, ErrInvalidOutcome},
		{nil, PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: -1}, pr, ErrInvalidOutcome},
		{[]PuntoBancoStake{{BetPlayerPair, math.MaxInt64 / 11}}, PuntoBancoResult{Outcome: OutcomeBankWins, PlayerPair: true}, pr, nil},
		{[]PuntoBancoStake{{BetBankPair, math.MaxInt64/11 + 1}}, PuntoBancoResult{Outcome: OutcomeBankWins, BankPair: true}, pr, ErrOverflow},
		{[]PuntoBancoStake{{BetBankPair + 1, 5}}, PuntoBancoResult{Outcome: OutcomeBankWins}, pr, ErrInvalidOutcome},
	}
	for i, b := range bad {
		if _, err := SettlePuntoBanco(b.stakes, b.res, b.pr); !errors.Is(err, b.want) {
			t.Errorf("bad %d: %v, want %v", i, err, b.want)
		}
	}
	// ResultPuntoBanco.
	r, err := ResultPuntoBanco(Coup{Player: cards("2C 3C 4C"), Banker: cards("9C KD")})
	if err == nil {
		t.Errorf("player drew after a banker natural: %+v", r)
	}
	r, err = ResultPuntoBanco(Coup{Player: cards("2C 3C"), Banker: cards("9C KD")})
	if err != nil || r != (PuntoBancoResult{Outcome: OutcomeBankWins, BankNatural: true, BankTotal: 9}) {
		t.Errorf("banker natural: %+v %v", r, err)
	}
	if _, err := ResultPuntoBanco(Coup{Player: cards("2C 3C"), Banker: cards("AC KD")}); !errors.Is(err, ErrIllegalState) {
		t.Errorf("unfinished coup: %v", err)
	}
}

// TestPBHouseRules covers the punto banco house rules beyond PB-BETS'
// defaults: the no-commission game and its half pay on 6 (PB-BANK
// reading: rounded down), the tie and bank natural prices, the pair bets.
func TestPBHouseRules(t *testing.T) {
	nc := DefaultPuntoBancoRules()
	nc.NoCommission = true
	bankWins := func(total int) PuntoBancoResult { return PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: total} }
	for _, tt := range []struct {
		name  string
		stake int64
		res   PuntoBancoResult
		want  StakeResult
	}{
		{"wins on 7: 1 to 1, no commission", 1010, bankWins(7), StakeResult{Won: 1010}},
		{"natural 9", 1010, PuntoBancoResult{Outcome: OutcomeBankWins, BankNatural: true, BankTotal: 9}, StakeResult{Won: 1010}},
		{"wins on 6: half", 1000, bankWins(6), StakeResult{Won: 500}},
		{"wins on 6: half rounded down", 1001, bankWins(6), StakeResult{Won: 500}},
		{"wins on 6 with a stake of 1: wins 0", 1, bankWins(6), StakeResult{}},
		{"loses with 6", 1000, PuntoBancoResult{Outcome: OutcomeBankLoses, BankTotal: 6}, StakeResult{Lost: 1000}},
		{"ties on 6: push", 1000, PuntoBancoResult{Outcome: OutcomeStandOff, BankTotal: 6}, StakeResult{Returned: true}},
	} {
		got, err := SettlePuntoBanco([]PuntoBancoStake{{BetBank, tt.stake}}, tt.res, nc)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		tt.want.Rule = RulePBBets
		if got[0] != tt.want {
			t.Errorf("no commission, %s: %+v, want %+v", tt.name, got[0], tt.want)
		}
	}
	// The commission game ignores the bank total; the no-commission game
	// ignores the commission rate but not the other bets.
	if got, _ := SettlePuntoBanco([]PuntoBancoStake{{BetBank, 1000}}, bankWins(6), DefaultPuntoBancoRules()); got[0].Won != 1000 || got[0].Commission != 50 {
		t.Errorf("commission game on 6: %+v", got[0])
	}
	got, err := SettlePuntoBanco([]PuntoBancoStake{{BetPlayer, 100}, {BetTie, 100}, {BetPlayerPair, 100}}, PuntoBancoResult{Outcome: OutcomeBankLoses, BankTotal: 6, PlayerPair: true}, nc)
	if err != nil || got[0].Won != 100 || got[1].Lost != 100 || got[2].Won != 1100 {
		t.Errorf("no commission, other bets: %+v %v", got, err)
	}
	if _, err := SettlePuntoBanco(nil, bankWins(0), nc); !errors.Is(err, ErrInvalidOutcome) {
		t.Errorf("no commission, bank wins on 0: %v", err)
	}
	if _, err := SettlePuntoBanco(nil, bankWins(0), DefaultPuntoBancoRules()); err != nil {
		t.Errorf("commission game without a bank total: %v", err)
	}

	// Prices: tie, bank natural and pairs N to 1.
	pr := DefaultPuntoBancoRules()
	pr.TiePays, pr.BankNaturalPays, pr.PairPays = 9, 8, 5
	stakes := []PuntoBancoStake{{BetTie, 10}, {BetBankNatural, 10}, {BetPlayerPair, 10}, {BetBankPair, 10}}
	for _, tt := range []struct {
		name string
		res  PuntoBancoResult
		want []StakeResult
	}{
		{"tie, natural, both pairs", PuntoBancoResult{Outcome: OutcomeStandOff, BankNatural: true, BankTotal: 8, PlayerPair: true, BankPair: true},
			[]StakeResult{{Won: 90}, {Won: 80}, {Won: 50}, {Won: 50}}},
		{"player pair only", PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: 7, PlayerPair: true},
			[]StakeResult{{Lost: 10}, {Lost: 10}, {Won: 50}, {Lost: 10}}},
		{"bank pair only, the bank loses", PuntoBancoResult{Outcome: OutcomeBankLoses, BankTotal: 2, BankPair: true},
			[]StakeResult{{Lost: 10}, {Lost: 10}, {Lost: 10}, {Won: 50}}},
	} {
		got, err := SettlePuntoBanco(stakes, tt.res, pr)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i := range got {
			w := tt.want[i]
			w.Rule = RulePBBets
			if got[i] != w {
				t.Errorf("%s: %v: %+v, want %+v", tt.name, stakes[i].Bet, got[i], w)
			}
		}
	}
	if got, _ := SettlePuntoBanco([]PuntoBancoStake{{BetBankPair, 10}}, PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: 7, BankPair: true}, DefaultPuntoBancoRules()); got[0].Won != 110 {
		t.Errorf("default pair pays 11 to 1: %+v", got[0])
	}
	for b, want := range map[PuntoBancoBet]string{BetPlayerPair: "player_pair", BetBankPair: "bank_pair", BetBankPair + 1: "invalid"} {
		if b.String() != want {
			t.Errorf("%d: %q, want %q", int(b), b.String(), want)
		}
	}

	// ResultPuntoBanco: the bank's final total and the pairs from the
	// first two cards of each hand (same rank, not same value).
	for _, tt := range []struct {
		player, bank string
		want         PuntoBancoResult
	}{
		{"7C 7D 5C", "KS KH 2S", PuntoBancoResult{Outcome: OutcomeBankLoses, BankTotal: 2, PlayerPair: true, BankPair: true}},
		{"TC KD 3D", "3S 3H", PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: 6, BankPair: true}}, // ten and king: no pair
		{"2C 2D 9H", "5S QH", PuntoBancoResult{Outcome: OutcomeBankWins, BankTotal: 5, PlayerPair: true}},
		{"4C 4D", "JS QH", PuntoBancoResult{Outcome: OutcomeBankLoses, PlayerPair: true}}, // jack and queen: no pair
		{"2C 3C", "9C 9D", PuntoBancoResult{Outcome: OutcomeBankWins, BankNatural: true, BankTotal: 8, BankPair: true}},
	} {
		got, err := ResultPuntoBanco(Coup{Player: cards(tt.player), Banker: cards(tt.bank)})
		if err != nil || got != tt.want {
			t.Errorf("P %s B %s: %+v %v, want %+v", tt.player, tt.bank, got, err, tt.want)
		}
	}
}

// TestCFBankWinsHouseRules covers first_coup_exempt and hourly_fee.
func TestCFBankWinsHouseRules(t *testing.T) {
	hr := DefaultHouseRules()
	if hr.CommissionExempt(true) || hr.CommissionExempt(false) {
		t.Error("defaults exempt a coup")
	}
	hr.FirstCoupExempt = true
	if !hr.CommissionExempt(true) || hr.CommissionExempt(false) {
		t.Error("first_coup_exempt")
	}
	hr = DefaultHouseRules()
	hr.HourlyFee = 1000
	if !hr.CommissionExempt(false) {
		t.Error("hourly_fee does not exempt")
	}
	for _, tt := range []struct {
		secs     int64
		r        Rounding
		want     int64
		wantErrs error
	}{
		{0, RoundDown, 0, nil}, {3600, RoundDown, 1000, nil}, {5400, RoundDown, 1500, nil},
		{1, RoundDown, 0, nil}, {1, RoundUp, 1, nil}, {2, RoundHalfUp, 1, nil}, {1, RoundHalfUp, 0, nil},
		{-1, RoundDown, 0, ErrInvalidAmount}, {math.MaxInt64, RoundDown, 2562047788015215501, nil},
	} {
		hr.CommissionRounding = tt.r
		got, err := HourlyFeeDue(hr, tt.secs)
		if !errors.Is(err, tt.wantErrs) || got != tt.want {
			t.Errorf("HourlyFeeDue(%d s, %v) = %d, %v; want %d, %v", tt.secs, tt.r, got, err, tt.want, tt.wantErrs)
		}
	}
	hr.HourlyFee = math.MaxInt64
	if _, err := HourlyFeeDue(hr, 7200); !errors.Is(err, ErrOverflow) {
		t.Errorf("overflow: %v", err)
	}
	hr.HourlyFee = -1
	if err := hr.Validate(); !errors.Is(err, ErrInvalidHouseRules) {
		t.Errorf("negative hourly fee: %v", err)
	}
}

// playBanque drives a banque coup from a deck, answering every choice
// with draw (punters) and bankerDraw (banker).
func playBanque(t *testing.T, deck []Card, bankerDraw bool) (BanqueCoup, BanqueStep) {
	t.Helper()
	var c BanqueCoup
	for i := 0; i < 20; i++ {
		s, err := NextStepBanque(c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		next := func() Card { n := deck[0]; deck = deck[1:]; return n }
		switch s.Kind {
		case StepDone:
			return c, s
		case StepDealPlayer, StepPlayerChoice:
			if s.Hand == TableRight {
				c.Right = append(c.Right, next())
			} else {
				c.Left = append(c.Left, next())
			}
		case StepDealBanker:
			c.Banker = append(c.Banker, next())
		case StepBankerChoice:
			if bankerDraw {
				c.Banker = append(c.Banker, next())
			} else {
				c.BankerStood = true
			}
		}
	}
	t.Fatal("banque coup did not end")
	return c, BanqueStep{}
}

// TestBQPlay walks the banque state machine: deal order, naturals, each
// punter's tableau cell (draw 0-4, choice 5, stand 6-7), and the banker's
// free choice.
func TestBQPlay(t *testing.T) {
	tests := []struct {
		name        string
		deck        string // right, left, banker, right, left, banker, then draws
		bankerDraw  bool
		right, left Outcome
		rule        string
	}{
		{"banker natural", "2C 3C 4C KD KH 5C", false, OutcomeBankWins, OutcomeBankWins, RuleNaturalBanker},
		{"banker natural tie", "9C 3C 4C KD KH 5C", false, OutcomeStandOff, OutcomeBankWins, RuleNaturalBanker},
		{"hands standing on two cards against the banker's third", "3C 3H AC 3D 4H AD 5C", true, OutcomeBankWins, OutcomeStandOff, RuleResult},
		{"banker natural 8", "2C 3C 3D KD KH 5C", false, OutcomeBankWins, OutcomeBankWins, RuleNaturalBanker},
		{"punter naturals", "9C 8C 2C KD KH 3C", true, OutcomeBankLoses, OutcomeBankLoses, RuleResult},
		{"draw 0-4 and stand 6-7", "2C 7C 3C KD KH KS 5D 9D", true, OutcomeBankLoses, OutcomeBankLoses, RuleResult},
		{"banker stands", "2C 7C 6C KD KH KS 5D", false, OutcomeBankLoses, OutcomeBankLoses, RuleResult},
		{"right natural vs banker two cards", "8C 2C 4C KD KH 3C 5D 2D", true, OutcomeBankLoses, OutcomeBankWins, RuleResult},
	}
	for _, tt := range tests {
		c, s := playBanque(t, cards(tt.deck), tt.bankerDraw)
		if s.Right != tt.right || s.Left != tt.left || s.Rule != tt.rule {
			t.Errorf("%s: %+v after %+v; want right %v left %v %s", tt.name, s, c, tt.right, tt.left, tt.rule)
		}
	}
	// The choice on 5 and its legal answers.
	c := BanqueCoup{Right: cards("2C 3C"), Left: cards("KC KD"), Banker: cards("AC AD")}
	if s, _ := NextStepBanque(c); s.Kind != StepPlayerChoice || s.Hand != TableRight {
		t.Errorf("right on 5: %+v", s)
	}
	c.RightStood = true
	if s, _ := NextStepBanque(c); s.Kind != StepDealPlayer || s.Hand != TableLeft {
		t.Errorf("left on 0: %+v", s)
	}
	for name, bad := range map[string]BanqueCoup{
		"deal order":           {Right: cards("2C"), Left: cards("2C 3C")},
		"stood before deal":    {Right: cards("2C"), RightStood: true},
		"right stood on 4":     {Right: cards("2C 2D"), Left: cards("KC KD"), Banker: cards("AC AD"), RightStood: true},
		"right drew on 6":      {Right: cards("3C 3D 2C"), Left: cards("KC KD"), Banker: cards("AC AD")},
		"left before right":    {Right: cards("2C 2D"), Left: cards("KC KD 2C"), Banker: cards("AC AD")},
		"banker after natural": {Right: cards("2C 2D"), Left: cards("KC KD"), Banker: cards("8C KD 2C")},
		"four cards":           {Right: cards("2C 2D 2H 2S"), Left: cards("KC KD"), Banker: cards("AC AD")},
		"invalid card":         {Right: []Card{{}}},
		"banker stood & drew":  {Right: cards("3C 3D"), Left: cards("3C 3D"), Banker: cards("AC AD 2C"), BankerStood: true},
		// The deal is one card at a time, right, left, banker (BQ-HANDS):
		// any other count of cards is out of order.
		"right behind":             {Right: cards("2C"), Left: cards("2C 3C"), Banker: cards("4C 5C")},
		"left dealt twice":         {Right: cards("2C 3C"), Left: cards("2D")},
		"banker dealt before left": {Right: cards("2C 3C"), Left: cards("2D 3D")},
		"left stood before deal":   {Right: cards("2C"), Left: cards("2D"), LeftStood: true},
		"banker stood before deal": {Right: cards("2C"), Left: cards("2D"), BankerStood: true},
		// After the banker's natural nobody plays (CF-NATURAL-BANKER).
		"right drew after banker natural":  {Right: cards("2C 2D 2H"), Left: cards("KC KD"), Banker: cards("8C KH")},
		"left drew after banker natural":   {Right: cards("2C 2D"), Left: cards("KC KD 2H"), Banker: cards("8C KH")},
		"right stood after banker natural": {Right: cards("2C 3D"), Left: cards("KC KD"), Banker: cards("8C KH"), RightStood: true},
		"left stood after banker natural":  {Right: cards("2C 2D"), Left: cards("2H 3H"), Banker: cards("8C KH"), LeftStood: true},
		"banker stood on a natural":        {Right: cards("2C 2D"), Left: cards("KC KD"), Banker: cards("8C KH"), BankerStood: true},
		// A punter's natural is shown at once: no "non" on it (CF-NATURAL-PLAYER).
		// The right hand plays first, then the left, then the banker (BQ-PLAY).
		"left stood before right":         {Right: cards("2C 2D"), Left: cards("2H 3H"), Banker: cards("AC AD"), LeftStood: true},
		"banker stood before right":       {Right: cards("2C 2D"), Left: cards("KC KD"), Banker: cards("AC AD"), BankerStood: true},
		"banker drew before right":        {Right: cards("2C 2D"), Left: cards("KC KD"), Banker: cards("AC AD 2H")},
		"banker stood before left":        {Right: cards("3C 3D"), Left: cards("2H 2S"), Banker: cards("AC AD"), BankerStood: true},
		"banker stood after two naturals": {Right: cards("8C KD"), Left: cards("9C KH"), Banker: cards("AC AD"), BankerStood: true},
		"banker drew after two naturals":  {Right: cards("8C KD"), Left: cards("9C KH"), Banker: cards("AC AD 2C")},
		"right stood on a natural":        {Right: cards("8C KD"), Left: cards("2C 2D"), Banker: cards("AC AD"), RightStood: true},
	} {
		if _, err := NextStepBanque(bad); !errors.Is(err, ErrIllegalState) {
			t.Errorf("%s: %v, want ErrIllegalState", name, err)
		}
	}
}

// TestBQCheval walks every settlement path of BQ-BETS and BQ-CHEVAL.
func TestBQCheval(t *testing.T) {
	outs := []Outcome{OutcomeBankWins, OutcomeBankLoses, OutcomeStandOff}
	for _, r := range outs {
		for _, l := range outs {
			bets := []BanqueBet{{TableRight, 100}, {TableLeft, 200}, {TableBoth, 400}}
			s, err := SettleBanque(1000, bets, r, l)
			if err != nil {
				t.Fatal(err)
			}
			want := func(o Outcome, amount int64) int64 {
				switch o {
				case OutcomeBankWins:
					return -amount
				case OutcomeBankLoses:
					return amount
				}
				return 0
			}
			cheval := OutcomeStandOff
			if r == OutcomeBankWins && l == OutcomeBankWins {
				cheval = OutcomeBankWins
			}
			if r == OutcomeBankLoses && l == OutcomeBankLoses {
				cheval = OutcomeBankLoses
			}
			wants := []int64{want(r, 100), want(l, 200), want(cheval, 400)}
			var net int64
			for i, w := range wants {
				if got := s.Bets[i].Net(); got != w {
					t.Errorf("right %v left %v: bet %d net %d, want %d", r, l, i, got, w)
				}
				if s.Bets[i].Returned != (w == 0) {
					t.Errorf("right %v left %v: bet %d returned %v", r, l, i, s.Bets[i].Returned)
				}
				net -= w
			}
			if s.BankerNet != net || s.NewBank != 1000+net || s.Bets[2].Rule != RuleBQCheval {
				t.Errorf("right %v left %v: %+v", r, l, s)
			}
		}
	}
	for i, b := range []struct {
		bank int64
		bets []BanqueBet
		r, l Outcome
		want error
	}{
		{0, nil, OutcomeBankWins, OutcomeBankWins, ErrInvalidAmount},
		{100, []BanqueBet{{TableRight, 0}}, OutcomeBankWins, OutcomeBankWins, ErrInvalidAmount},
		{100, []BanqueBet{{TableRight, 101}}, OutcomeBankWins, OutcomeBankWins, ErrBetsExceedBank},
		{100, []BanqueBet{{9, 1}}, OutcomeBankWins, OutcomeBankWins, ErrInvalidOutcome},
		{100, nil, 0, OutcomeBankWins, ErrInvalidOutcome},
		{math.MaxInt64, []BanqueBet{{TableRight, math.MaxInt64}, {TableLeft, 1}}, OutcomeBankWins, OutcomeBankWins, ErrOverflow},
	} {
		if _, err := SettleBanque(b.bank, b.bets, b.r, b.l); !errors.Is(err, b.want) {
			t.Errorf("bad %d: %v, want %v", i, err, b.want)
		}
	}
	if got := BanqueAuctionFee(10000, RoundDown); got != 250 {
		t.Errorf("auction fee %d, want 250", got)
	}
}

func TestOLDValues(t *testing.T) {
	for r := Ace; r <= King; r++ {
		want := int(r)
		switch {
		case r == Ace:
			want = 11
		case r >= Ten:
			want = 10
		}
		if got := OldValue(Card{Rank: r}); got != want {
			t.Errorf("%v: %d, want %d", r, got, want)
		}
	}
	if OldValue(Card{}) != 0 {
		t.Error("invalid card has points")
	}
	// OLD-RANK: 9, 19, 29 best; 10, 20, 30 baccarat.
	if OldPoints(cards("AC 7C")) != 18 || OldRank(18) != 8 || OldRank(29) != 9 || OldRank(19) <= OldRank(28) {
		t.Error("ranking")
	}
	for _, p := range []int{10, 20, 30} {
		if !IsOldBaccarat(p) || OldRank(p) != 0 {
			t.Errorf("%d is baccarat", p)
		}
	}
	if IsOldBaccarat(0) || IsOldBaccarat(19) {
		t.Error("not baccarat")
	}
}

// TestOLDDeal checks OLD-DEAL and OLD-DRAW orders and the state machine.
func TestOLDDeal(t *testing.T) {
	if got := OldDealOrder(3); !equalInts(got, []int{0, 1, 2, -1, 2, 1, 0, -1}) {
		t.Errorf("deal order %v", got)
	}
	if got := OldDrawOrder(4); !equalInts(got, []int{3, 0, 2, 1, -1}) {
		t.Errorf("draw order %v", got)
	}
	if got := OldDrawOrder(3); !equalInts(got, []int{2, 0, 1, -1}) {
		t.Errorf("draw order %v", got)
	}
	// Play a coup from a deck: two punters; left gets 2C,KC (12 -> 2),
	// right gets 3C,KD (13 -> 3), banker 4C,5C (9 -> natural? no: 4+5=9).
	c := OldCoup{Punters: make([][]Card, 2)}
	deck := cards("2C 3C 4C KD KC 5D 9C 7C")
	var steps []string
	for i := 0; i < 20; i++ {
		s, err := NextStepOld(c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		steps = append(steps, s.Kind.String())
		if s.Kind == StepDone {
			break
		}
		switch s.Kind {
		case StepDealPlayer, StepPlayerChoice:
			c.Punters[s.Seat] = append(c.Punters[s.Seat], deck[0])
		default:
			c.Banker = append(c.Banker, deck[0])
		}
		deck = deck[1:]
	}
	// Deal: seat0 2C, seat1 3C, banker 4C, seat1 KD, seat0 KC, banker 5D
	// (9: no natural by rank? 4+5 = 9 is a natural), so the coup ends.
	if steps[len(steps)-1] != "done" || len(c.Banker) != 2 {
		t.Errorf("steps %v, coup %+v", steps, c)
	}
	// No natural: right (seat 1) then left (seat 0) may draw, banker last.
	c = OldCoup{Punters: [][]Card{cards("2C KC"), cards("3C KD")}, Banker: cards("4C 6D")}
	want := []OldStep{{StepPlayerChoice, 1, RuleOLDDraw}, {StepPlayerChoice, 0, RuleOLDDraw}, {StepBankerChoice, -1, RuleOLDDraw}}
	for _, w := range want {
		s, err := NextStepOld(c)
		if err != nil || s != w {
			t.Fatalf("%+v: %+v %v, want %+v", c, s, err, w)
		}
		if w.Seat >= 0 {
			if c.Stood == nil {
				c.Stood = make([]bool, 2)
			}
			c.Stood[w.Seat] = true
		} else {
			c.Banker = append(c.Banker, card(2))
		}
	}
	if s, err := NextStepOld(c); err != nil || s.Kind != StepDone {
		t.Errorf("end: %+v %v", s, err)
	}
	for name, bad := range map[string]OldCoup{
		"one punter":        {Punters: [][]Card{nil}},
		"deal order":        {Punters: [][]Card{nil, cards("2C")}},
		"stood flags":       {Punters: [][]Card{nil, nil}, Stood: []bool{true}},
		"stood early":       {Punters: [][]Card{nil, nil}, BankerStood: true},
		"drew on 6":         {Punters: [][]Card{cards("3C 3D 2C"), cards("2C KD")}, Banker: cards("2C 2D")},
		"left before":       {Punters: [][]Card{cards("2C KD 2D"), cards("2C KD")}, Banker: cards("2C 2D")},
		"after natural":     {Punters: [][]Card{cards("4C 5D 2C"), cards("2C KD")}, Banker: cards("2C 2D")},
		"declined no right": {Punters: [][]Card{cards("3C 3D"), cards("2C KD")}, Banker: cards("2C 2D"), Stood: []bool{true, false}},
		"invalid":           {Punters: [][]Card{{{}}, nil}},
	} {
		if _, err := NextStepOld(bad); !errors.Is(err, ErrIllegalState) {
			t.Errorf("%s: %v, want ErrIllegalState", name, err)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOLDSettle walks OLD-SETTLE, OLD-NATURAL, the three-way split and
// OLD-BACCARAT.
func TestOLDSettle(t *testing.T) {
	tests := []struct {
		name  string
		c     OldCoup
		net   []int64
		split bool
		next  int
		rule  string
	}{
		// 002's examples: banker 6 against 5 and 7.
		{"banker 6 vs 5 and 7", OldCoup{Punters: [][]Card{cards("2C 3C"), cards("3D 4D")}, Banker: cards("AC 5C"), Stood: nil}, []int64{-10, 20}, false, -1, RuleOLDSettle},
		{"banker 6 vs 7 and 8", OldCoup{Punters: [][]Card{cards("2C AC 5S"), cards("3D 4D")}, Banker: cards("AC 5C")}, []int64{10, 20}, false, -1, RuleOLDSettle},
		// All three at 7: pool 10+20 and the banker's 20+40, split in three: 30 each.
		{"three-way split", OldCoup{Punters: [][]Card{cards("2C 5C"), cards("3D 4D")}, Banker: cards("AC 6C"), Stood: nil}, []int64{20, 10}, true, -1, RuleOLDSettle},
		{"one tie to the banker", OldCoup{Punters: [][]Card{cards("2C 5C"), cards("3D 3H")}, Banker: cards("AC 6C"), Stood: nil}, []int64{-10, -20}, false, -1, RuleOLDSettle},
		{"banker 9 takes all", OldCoup{Punters: [][]Card{cards("4C 5C"), cards("3D 3H")}, Banker: cards("AC 8C")}, []int64{-10, -20}, false, -1, RuleOLDNatural},
		{"punter 9 beats banker 8", OldCoup{Punters: [][]Card{cards("4C 5C"), cards("3D 3H")}, Banker: cards("AC 7C")}, []int64{10, -20}, false, -1, RuleOLDNatural},
		{"baccarat takes the bank", OldCoup{Punters: [][]Card{cards("KC QC"), cards("3D 3H")}, Banker: cards("AC 7C")}, []int64{-10, -20}, false, 0, RuleOLDNatural},
	}
	for _, tt := range tests {
		s, err := SettleOld(tt.c, 100, []int64{10, 20})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var sum int64
		for i := range tt.net {
			if s.Net[i] != tt.net[i] {
				t.Errorf("%s: seat %d net %d, want %d", tt.name, i, s.Net[i], tt.net[i])
			}
			sum += s.Net[i]
		}
		if s.BankerNet != -sum || s.Split != tt.split || s.NextBanker != tt.next || s.Rule[1] != tt.rule {
			t.Errorf("%s: %+v", tt.name, s)
		}
	}
	done := OldCoup{Punters: [][]Card{cards("2C 5C"), cards("3D 4D")}, Banker: cards("AC 6C"), Stood: nil}
	for i, b := range []struct {
		c      OldCoup
		bank   int64
		stakes []int64
		want   error
	}{
		{done, 59, []int64{10, 20}, ErrBetsExceedBank},
		{done, 100, []int64{10}, ErrIllegalState},
		{done, 100, []int64{10, 0}, ErrInvalidAmount},
		{done, 0, []int64{10, 20}, ErrInvalidAmount},
		{done, 100, []int64{math.MaxInt64, 1}, ErrOverflow},
		{OldCoup{Punters: [][]Card{cards("2C KC"), cards("3D 4D")}, Banker: cards("AC 6C")}, 100, []int64{1, 1}, ErrIllegalState},
	} {
		if _, err := SettleOld(b.c, b.bank, b.stakes); !errors.Is(err, b.want) {
			t.Errorf("bad %d: %v, want %v", i, err, b.want)
		}
	}
}

// decodeFuzzHands splits bytes into n hands of fuzz cards.
func decodeFuzzHands(bs []byte, n int) [][]Card {
	hands := make([][]Card, n)
	for i, b := range bs {
		hands[i%n] = append(hands[i%n], decodeFuzzCard(b))
	}
	return hands
}

func FuzzNextStepPuntoBanco(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5}, uint8(0))
	f.Fuzz(func(t *testing.T, bs []byte, flags uint8) {
		h := decodeFuzzHands(bs, 2)
		c := Coup{Player: h[0], Banker: h[1], PlayerStood: flags&1 != 0, BankerStood: flags&2 != 0, Banco: flags&4 != 0}
		s, err := NextStepPuntoBanco(c)
		if err != nil {
			if !errors.Is(err, ErrIllegalState) {
				t.Fatalf("%v", err)
			}
			return
		}
		if s.Kind == StepPlayerChoice || s.Kind == StepBankerChoice {
			t.Fatalf("punto banco choice: %+v", s)
		}
		if s.Kind == StepDone {
			if _, err := ResultPuntoBanco(c); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzNextStepBanque(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7}, uint8(0), int64(100), int64(30), int64(40))
	f.Fuzz(func(t *testing.T, bs []byte, flags uint8, bank, a, b int64) {
		h := decodeFuzzHands(bs, 3)
		c := BanqueCoup{Right: h[0], Left: h[1], Banker: h[2], RightStood: flags&1 != 0, LeftStood: flags&2 != 0, BankerStood: flags&4 != 0}
		s, err := NextStepBanque(c)
		if err != nil {
			if !errors.Is(err, ErrIllegalState) {
				t.Fatalf("%v", err)
			}
			return
		}
		if s.Kind != StepDone {
			return
		}
		bets := []BanqueBet{{Table(flags >> 3 % 4), a}, {TableBoth, b}}
		st, err := SettleBanque(bank, bets, s.Right, s.Left)
		if err != nil {
			return
		}
		if st.NewBank < 0 {
			t.Fatalf("negative bank %+v", st)
		}
	})
}

func FuzzNextStepOld(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(2), uint8(0), int64(100), int64(10), int64(20))
	f.Fuzz(func(t *testing.T, bs []byte, n, flags uint8, bank, a, b int64) {
		np := int(n%5) + 1
		h := decodeFuzzHands(bs, np+1)
		c := OldCoup{Punters: h[:np], Banker: h[np], BankerStood: flags&1 != 0}
		if flags&2 != 0 {
			c.Stood = make([]bool, np)
			for i := range c.Stood {
				c.Stood[i] = flags>>(2+i)&1 != 0
			}
		}
		s, err := NextStepOld(c)
		if err != nil {
			if !errors.Is(err, ErrIllegalState) {
				t.Fatalf("%v", err)
			}
			return
		}
		stakes := []int64{a, b, a, b, a}[:np]
		st, err := SettleOld(c, bank, stakes)
		if err != nil {
			return
		}
		if s.Kind != StepDone {
			t.Fatalf("settled an unfinished coup")
		}
		var sum int64
		for _, v := range st.Net {
			sum += v
		}
		if sum != -st.BankerNet {
			t.Fatalf("not zero-sum: %+v", st)
		}
	})
}

// OLD-DECKS: 2..16 punters, both ends included.
func TestOLDPuntersRange(t *testing.T) {
	for n, ok := range map[int]bool{1: false, 2: true, 16: true, 17: false} {
		_, err := NextStepOld(OldCoup{Punters: make([][]Card, n)})
		if (err == nil) != ok {
			t.Errorf("%d punters: %v, want legal %v", n, err, ok)
		}
	}
}

// OLD-DRAW's "less than 4" is a rank (points modulo 10) of 0..3.
func TestOLDMayDraw(t *testing.T) {
	for points, want := range map[int]bool{4: false, 5: false, 9: false, 10: true, 13: true, 14: false, 19: false, 20: true, 23: true, 24: false} {
		if got := oldMayDraw(points); got != want {
			t.Errorf("oldMayDraw(%d) = %v, want %v", points, got, want)
		}
	}
}

// A punto banco payout is 1..1000 to 1, both ends included, on each of
// the three bets that have one.
func TestPBPaysRange(t *testing.T) {
	for pays, valid := range map[int64]bool{0: false, 1: true, 1000: true, 1001: false} {
		for name, set := range map[string]func(*PuntoBancoRules){
			"tie":          func(r *PuntoBancoRules) { r.TiePays = pays },
			"bank natural": func(r *PuntoBancoRules) { r.BankNaturalPays = pays },
			"pair":         func(r *PuntoBancoRules) { r.PairPays = pays },
		} {
			r := DefaultPuntoBancoRules()
			set(&r)
			if err := r.Validate(); (err == nil) != valid {
				t.Errorf("%s pays %d: %v, want valid %v", name, pays, err, valid)
			}
		}
	}
}
