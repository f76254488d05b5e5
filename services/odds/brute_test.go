package odds

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

// brutePool is a small shoe the brute-force walks deal from through the
// rules engine: each calls f for every card it can deal next with the
// number of ordered ways w of dealing it, the card removed during f.
type brutePool interface {
	each(f func(c rules.Card, w int64))
	size() int
}

// physicalPool is a shoe of distinct physical cards: every deal is one
// permutation of actual cards.
type physicalPool struct {
	cards []rules.Card
	used  []bool
	n     int
}

func newPhysicalPool(cards []rules.Card) *physicalPool {
	return &physicalPool{cards: cards, used: make([]bool, len(cards)), n: len(cards)}
}

func (p *physicalPool) each(f func(c rules.Card, w int64)) {
	for i, c := range p.cards {
		if p.used[i] {
			continue
		}
		p.used[i] = true
		p.n--
		f(c, 1)
		p.used[i] = false
		p.n++
	}
}

func (p *physicalPool) size() int { return p.n }

// rankPool groups the physical cards by rank (suits never matter to the
// engine): a rank with k cards left is dealt in k ways.
type rankPool struct {
	counts [13]int
	n      int
}

func newRankPool(s Shoe) *rankPool { return &rankPool{counts: s.Ranks, n: s.Cards()} }

func (p *rankPool) each(f func(c rules.Card, w int64)) {
	for i, k := range p.counts {
		if k == 0 {
			continue
		}
		p.counts[i]--
		p.n--
		f(rules.Card{Rank: rules.Rank(i + 1)}, int64(k))
		p.counts[i]++
		p.n++
	}
}

func (p *rankPool) size() int { return p.n }

// falling is n(n-1)...(n-k+1).
func falling(n, k int) int64 {
	w := int64(1)
	for j := 0; j < k; j++ {
		w *= int64(n - j)
	}
	return w
}

func with(h []rules.Card, c rules.Card) []rules.Card {
	return append(append([]rules.Card(nil), h...), c)
}

// bruteBanque drives rules.NextStepBanque over every deal of the pool,
// choosing as st says, and counts ordered nine-card deals by the engine's
// results.
type bruteBanque struct {
	st       BanqueStrategy
	out      [3][3]int64
	naturals int64
	deals    int64
}

func (b *bruteBanque) walk(t testing.TB, p brutePool, c rules.BanqueCoup, w int64) {
	step, err := rules.NextStepBanque(c)
	if err != nil {
		t.Fatalf("engine: %v on %+v", err, c)
	}
	deal := func(to rules.Table, banker bool) {
		p.each(func(card rules.Card, wc int64) {
			n := c
			switch {
			case banker:
				n.Banker = with(c.Banker, card)
			case to == rules.TableRight:
				n.Right = with(c.Right, card)
			default:
				n.Left = with(c.Left, card)
			}
			b.walk(t, p, n, w*wc)
		})
	}
	switch step.Kind {
	case rules.StepDealPlayer:
		deal(step.Hand, false)
	case rules.StepDealBanker:
		deal(0, true)
	case rules.StepPlayerChoice:
		if !b.st.StandOn5 {
			deal(step.Hand, false)
			return
		}
		n := c
		if step.Hand == rules.TableRight {
			n.RightStood = true
		} else {
			n.LeftStood = true
		}
		b.walk(t, p, n, w)
	case rules.StepBankerChoice:
		// The strategy, written independently of Banque: the punto banco
		// tableau against the followed table, or the other one if the
		// followed table has a natural.
		followed, other := c.Right, c.Left
		if b.st.Follow == rules.TableLeft {
			followed, other = other, followed
		}
		if rules.Total(followed) >= 8 && len(followed) == 2 {
			followed = other
		}
		var third *rules.Card
		if len(followed) == 3 {
			third = &followed[2]
		}
		hr := rules.DefaultHouseRules()
		hr.BankerOption3vs9, hr.BankerOption5vs4 = false, false
		if rules.BankerDecision(rules.Total(c.Banker), third, hr) == rules.DecisionDraw {
			deal(0, true)
			return
		}
		n := c
		n.BankerStood = true
		b.walk(t, p, n, w)
	case rules.StepDone:
		k := len(c.Right) + len(c.Left) + len(c.Banker)
		w *= falling(p.size(), banqueCards-k)
		b.out[step.Right-1][step.Left-1] += w
		b.deals += w
		if rules.Total(c.Banker[:2]) >= 8 {
			b.naturals += w
		}
	default:
		t.Fatalf("step %v", step.Kind)
	}
}

func runBruteBanque(t testing.TB, p brutePool, st BanqueStrategy) *bruteBanque {
	b := &bruteBanque{st: st}
	b.walk(t, p, rules.BanqueCoup{}, 1)
	return b
}

func compareBanque(t *testing.T, name string, o BanqueOdds, b *bruteBanque) {
	t.Helper()
	if o.Deals.Cmp(big.NewInt(b.deals)) != 0 {
		t.Errorf("%s: deals %v, brute force %d", name, o.Deals, b.deals)
	}
	for r := 0; r < 3; r++ {
		for l := 0; l < 3; l++ {
			if o.Outcomes[r][l].Cmp(big.NewInt(b.out[r][l])) != 0 {
				t.Errorf("%s: right %v left %v: %v, brute force %d", name, rules.Outcome(r+1), rules.Outcome(l+1), o.Outcomes[r][l], b.out[r][l])
			}
		}
	}
	if o.BankerNaturals.Cmp(big.NewInt(b.naturals)) != 0 {
		t.Errorf("%s: banker naturals %v, brute force %d", name, o.BankerNaturals, b.naturals)
	}
}

// shoeOf is the rank composition of physical cards.
func shoeOf(cards []rules.Card) Shoe {
	var s Shoe
	for _, c := range cards {
		s.Ranks[c.Rank-1]++
	}
	return s
}

var banqueStrategies = []BanqueStrategy{
	{},
	{Follow: rules.TableLeft},
	{Follow: rules.TableRight, StandOn5: true},
}

// TestBanqueBruteForcePermutations is the key cross-check of Banque: every
// permutation of the physical cards of tiny shoes is dealt through the
// rules engine (rules.NextStepBanque, BQ-*) and the engine's results are
// counted; the counts must equal Banque's exactly.
func TestBanqueBruteForcePermutations(t *testing.T) {
	shoes := [][]string{
		{"AC", "2D", "3H", "4S", "5C", "6D", "7H", "KS", "9C"},
		{"TC", "JD", "QH", "KS", "2C", "3D", "4H", "5S", "8C"},
		{"AC", "AD", "3H", "3S", "5C", "6D", "6H", "7S", "9C"},
		{"2C", "2D", "4H", "4S", "5C", "5D", "QH", "9S", "8D"},
	}
	if testing.Short() {
		shoes = shoes[:1]
	}
	for i, names := range shoes {
		cards := mustCards(t, names...)
		for _, st := range banqueStrategies {
			o, err := Banque(shoeOf(cards), st)
			if err != nil {
				t.Fatal(err)
			}
			b := runBruteBanque(t, newPhysicalPool(cards), st)
			if b.deals != 362880 { // 9!
				t.Errorf("shoe %d: brute force dealt %d", i, b.deals)
			}
			compareBanque(t, names[0]+"...", o, b)
		}
	}
}

// randomSmallShoe is a shoe of n cards over at most k distinct ranks.
func randomSmallShoe(r *rand.Rand, n, k int) Shoe {
	var s Shoe
	ranks := r.Perm(13)[:k]
	for i := 0; i < n; i++ {
		s.Ranks[ranks[r.IntN(k)]]++
	}
	return s
}

// TestBanqueBruteForceRandom compares Banque with the engine walk on
// random small compositions (grouped by rank).
func TestBanqueBruteForceRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 12; i++ {
		s := randomSmallShoe(r, 9+r.IntN(8), 2+r.IntN(3))
		st := banqueStrategies[i%len(banqueStrategies)]
		o, err := Banque(s, st)
		if err != nil {
			t.Fatal(err)
		}
		compareBanque(t, s.String(), o, runBruteBanque(t, newRankPool(s), st))
	}
}

// FuzzBanque compares Banque with the engine walk on fuzzed small shoes.
func FuzzBanque(f *testing.F) {
	f.Add([]byte{0, 3, 9, 2, 12, 4, 1, 1}, false, false)
	f.Add([]byte{4, 4, 5, 3, 10, 2}, true, false)
	f.Add([]byte{7, 9, 8, 9, 0, 2, 2, 3}, false, true)
	f.Fuzz(func(t *testing.T, data []byte, left, stand5 bool) {
		var s Shoe
		distinct := 0
		for i := 0; i+1 < len(data) && i < 8; i += 2 {
			r, n := int(data[i]%13), int(data[i+1]%6)
			if s.Ranks[r] == 0 && n > 0 {
				distinct++
			}
			s.Ranks[r] += n
		}
		if s.Cards() < banqueCards || s.Cards() > 16 || distinct > 4 {
			t.Skip()
		}
		st := BanqueStrategy{StandOn5: stand5}
		if left {
			st.Follow = rules.TableLeft
		}
		o, err := Banque(s, st)
		if err != nil {
			t.Fatal(err)
		}
		compareBanque(t, s.String(), o, runBruteBanque(t, newRankPool(s), st))
	})
}

// bruteOld drives rules.NextStepOld and rules.SettleOld over every deal of
// the pool for the one-punter model. The engine needs at least two
// punters, so the table has three: the punter under test in seat 1 and
// two dummies in seats 0 and 2 holding 2 and 3 (5 points) dealt from
// outside the pool. A dummy never has a natural and never may draw, so it
// does not change the coup; with both dummies on the same rank, a tie of
// the punter with the banker on 5 is a three-punter tie (goes to the
// banker), and a split between the dummies leaves the punter's money
// alone.
type bruteOld struct {
	st                                   OldStrategy
	out                                  [3]int64
	naturals, baccarat, deals, netPunter int64
}

var oldDummy = [2]rules.Card{{Rank: rules.Two, Suit: rules.Clubs}, {Rank: rules.Three, Suit: rules.Clubs}}

func (b *bruteOld) walk(t testing.TB, p brutePool, c rules.OldCoup, w int64) {
	step, err := rules.NextStepOld(c)
	if err != nil {
		t.Fatalf("engine: %v on %+v", err, c)
	}
	deal := func(seat int) {
		p.each(func(card rules.Card, wc int64) {
			n := c
			if seat < 0 {
				n.Banker = with(c.Banker, card)
			} else {
				n.Punters = append([][]rules.Card(nil), c.Punters...)
				n.Punters[seat] = with(c.Punters[seat], card)
			}
			b.walk(t, p, n, w*wc)
		})
	}
	stand := func(seat int) {
		n := c
		if seat < 0 {
			n.BankerStood = true
		} else {
			n.Stood = make([]bool, len(c.Punters))
			copy(n.Stood, c.Stood)
			n.Stood[seat] = true
		}
		b.walk(t, p, n, w)
	}
	switch step.Kind {
	case rules.StepDealPlayer:
		if step.Seat != 1 {
			n := c
			n.Punters = append([][]rules.Card(nil), c.Punters...)
			n.Punters[step.Seat] = with(c.Punters[step.Seat], oldDummy[len(c.Punters[step.Seat])])
			b.walk(t, p, n, w)
			return
		}
		deal(1)
	case rules.StepDealBanker:
		deal(-1)
	case rules.StepPlayerChoice:
		if step.Seat != 1 {
			t.Fatalf("dummy seat %d may draw", step.Seat)
		}
		if b.st.PunterStands[rules.OldRank(rules.OldPoints(c.Punters[1]))] {
			stand(1)
		} else {
			deal(1)
		}
	case rules.StepBankerChoice:
		if b.st.BankerStands[rules.OldRank(rules.OldPoints(c.Banker))] {
			stand(-1)
		} else {
			deal(-1)
		}
	case rules.StepDone:
		s, err := rules.SettleOld(c, 6, []int64{1, 1, 1})
		if err != nil {
			t.Fatal(err)
		}
		k := len(c.Punters[1]) + len(c.Banker)
		w *= falling(p.size(), oldCards-k)
		pr, br := rules.OldRank(rules.OldPoints(c.Punters[1])), rules.OldRank(rules.OldPoints(c.Banker))
		b.out[oldOutcome(pr, br)] += w
		b.netPunter += w * s.Net[1]
		b.deals += w
		if step.Rule == rules.RuleOLDNatural {
			b.naturals += w
		}
		if s.NextBanker == 1 {
			b.baccarat += w
		}
	default:
		t.Fatalf("step %v", step.Kind)
	}
}

func runBruteOld(t testing.TB, p brutePool, st OldStrategy) *bruteOld {
	b := &bruteOld{st: st}
	b.walk(t, p, rules.OldCoup{Punters: make([][]rules.Card, 3)}, 1)
	return b
}

func compareOld(t *testing.T, name string, o OldOdds, b *bruteOld) {
	t.Helper()
	for _, c := range []struct {
		what string
		got  *big.Int
		want int64
	}{
		{"deals", o.Deals, b.deals},
		{"punter wins", o.PunterWins, b.out[playerWins]},
		{"banker wins", o.BankerWins, b.out[bankWins]},
		{"ties", o.Ties, b.out[tie]},
		{"naturals", o.Naturals, b.naturals},
		{"baccarat", o.PunterBaccarat, b.baccarat},
	} {
		if c.got.Cmp(big.NewInt(c.want)) != 0 {
			t.Errorf("%s: %s %v, brute force %d", name, c.what, c.got, c.want)
		}
	}
	// The engine's money (SettleOld) agrees with the EV.
	if ev := big.NewRat(b.netPunter, b.deals); ev.Cmp(o.Bets[0].EV) != 0 {
		t.Errorf("%s: EV %v, engine's settlement %v", name, o.Bets[0].EV, ev)
	}
}

var oldStrategies = []OldStrategy{
	{},
	{PunterStands: [4]bool{false, false, false, true}},
	{PunterStands: [4]bool{true, false, true, false}, BankerStands: [4]bool{false, true, false, true}},
}

// TestOldBruteForcePermutations is the key cross-check of Old: every
// permutation of the physical cards of tiny shoes is dealt through the
// rules engine (rules.NextStepOld, rules.SettleOld, OLD-*) with real old
// points (aces 11), and the engine's results must equal Old's exactly.
func TestOldBruteForcePermutations(t *testing.T) {
	shoes := [][]string{
		{"AC", "AD", "2H", "3S", "8C", "9D", "KH", "QS", "5C", "7D"},
		{"AC", "TD", "JH", "KS", "9C", "9D", "2H", "2S", "3C", "4D"},
		{"5C", "6D", "7H", "8S", "AC", "QD", "3H", "2S", "4C", "AH"},
	}
	for _, names := range shoes {
		cards := mustCards(t, names...)
		for _, st := range oldStrategies {
			o, err := Old(shoeOf(cards), st)
			if err != nil {
				t.Fatal(err)
			}
			b := runBruteOld(t, newPhysicalPool(cards), st)
			if b.deals != falling(len(cards), oldCards) {
				t.Errorf("brute force dealt %d", b.deals)
			}
			compareOld(t, names[0]+"...", o, b)
		}
	}
}

// TestOldBruteForceRandom compares Old with the engine walk on random
// small compositions (grouped by rank).
func TestOldBruteForceRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 30; i++ {
		s := randomSmallShoe(r, 6+r.IntN(20), 2+r.IntN(5))
		st := oldStrategies[i%len(oldStrategies)]
		o, err := Old(s, st)
		if err != nil {
			t.Fatal(err)
		}
		compareOld(t, s.String(), o, runBruteOld(t, newRankPool(s), st))
	}
}

// FuzzOld compares Old with the engine walk on fuzzed small shoes.
func FuzzOld(f *testing.F) {
	f.Add([]byte{0, 3, 9, 2, 12, 4, 1, 1}, uint8(0), uint8(0))
	f.Add([]byte{4, 4, 5, 3, 10, 2, 8, 5}, uint8(9), uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, ps, bs uint8) {
		var s Shoe
		for i := 0; i+1 < len(data) && i < 12; i += 2 {
			s.Ranks[data[i]%13] += int(data[i+1] % 6)
		}
		if s.Cards() < oldCards || s.Cards() > 24 {
			t.Skip()
		}
		var st OldStrategy
		for r := 0; r < 4; r++ {
			st.PunterStands[r] = ps>>r&1 == 1
			st.BankerStands[r] = bs>>r&1 == 1
		}
		o, err := Old(s, st)
		if err != nil {
			t.Fatal(err)
		}
		compareOld(t, s.String(), o, runBruteOld(t, newRankPool(s), st))
	})
}
