package fair

// The statistical suite. Each test draws its shuffles from a fixed
// sequence of server seeds (testSeed(label, i), SHA-256 of a label and a
// counter) through the production stream and shuffle, so a run is
// reproducible and never flakes: the same code gives the same verdict.
//
// Significance: each test rejects when its p-value (Bonferroni-corrected
// over the sub-tests it makes) is below alpha = 1e-4. For a correct,
// unbiased shuffle the probability that the fixed seeds happen to fail a
// given test is therefore at most 1e-4, and at most 5e-4 for the five
// tests together; that chance was taken once, when the seeds were fixed,
// not at every CI run. If a test fails after a change, rerun with another
// seed base (CHEMMY_STAT_BASE=anything go test -run Stat ./fair): a real
// bias fails again, a 1-in-10^4 fixture does not. Each test also checks
// its power: the same statistic on a modulo-biased shuffle must reject.

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"testing"
)

const alpha = 1e-4

func statLabel(name string) string {
	return "chemmy-stat/" + os.Getenv("CHEMMY_STAT_BASE") + "/" + name
}

// statStream is the production stream of the i-th shoe of a test: a
// server seed from the fixed sequence, a table's client seed and a
// cutter's seed.
func statStream(label string, i int) *Stream {
	return NewStream(Seeds{Server: testSeed(label, uint64(i)), Client: "table/stat/shoe/1", Players: []string{"cutter"}})
}

// chiSquareP is the upper tail P(X >= x) of a chi-square with df degrees
// of freedom: the regularized upper incomplete gamma Q(df/2, x/2).
func chiSquareP(x float64, df int) float64 {
	a, z := float64(df)/2, x/2
	if z <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if z < a+1 { // series for P, then Q = 1-P
		sum, term := 1/a, 1/a
		for n := 1; n < 10000; n++ {
			term *= z / (a + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-z+a*math.Log(z)-lg)
	}
	// continued fraction for Q (Lentz)
	b := z + 1 - a
	c, d := 1/1e-300, 1/b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < 1e-300 {
			d = 1e-300
		}
		c = b + an/c
		if math.Abs(c) < 1e-300 {
			c = 1e-300
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-z+a*math.Log(z)-lg) * h
}

func TestChiSquareP(t *testing.T) {
	// Reference values (R: pchisq(x, df, lower.tail=FALSE)).
	for _, c := range []struct {
		x    float64
		df   int
		want float64
	}{{3.841459, 1, 0.05}, {23.68479, 14, 0.05}, {29.14124, 14, 0.01}, {66.33865, 49, 0.05}, {0, 3, 1}, {463.7, 415, 0.05}} {
		if got := chiSquareP(c.x, c.df); math.Abs(got-c.want) > 0.002 {
			t.Errorf("P(chi2_%d >= %g) = %g, want %g", c.df, c.x, got, c.want)
		}
	}
}

func chiSquare(counts []int, expected float64) float64 {
	var x float64
	for _, c := range counts {
		d := float64(c) - expected
		x += d * d / expected
	}
	return x
}

// permuter shuffles the identity 0..n-1 with stream i of a label.
type permuter func(n int, s *Stream) []int

func fisherYates(n int, s *Stream) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	Permute(a, s)
	return a
}

// moduloBiased is the classic mistake: j = random bits mod (i+1).
func moduloBiased(n int, s *Stream) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(s.Bits(uint(bits.Len(uint(i))))) % (i + 1)
		a[i], a[j] = a[j], a[i]
	}
	return a
}

// positionTest: for each of n cards, chi-square of its final position over
// the n positions (df n-1), Bonferroni over the n cards. It returns the
// smallest corrected p-value.
func positionTest(label string, n, runs int, perm permuter) float64 {
	counts := make([][]int, n) // counts[card][position]
	for c := range counts {
		counts[c] = make([]int, n)
	}
	for i := range runs {
		a := perm(n, statStream(label, i))
		for pos, card := range a {
			counts[card][pos]++
		}
	}
	minP := 1.0
	for c := range counts {
		p := chiSquareP(chiSquare(counts[c], float64(runs)/float64(n)), n-1) * float64(n)
		minP = min(minP, p)
	}
	return minP
}

// TestStatCardPosition: each card of an 8-card deck ends in each position
// with probability 1/8 (80,000 shuffles).
func TestStatCardPosition(t *testing.T) {
	const n, runs = 8, 80000
	if p := positionTest(statLabel("position"), n, runs, fisherYates); p < alpha {
		t.Fatalf("card positions not uniform: corrected p = %g < %g", p, alpha)
	}
	if p := positionTest(statLabel("position-biased"), n, runs, moduloBiased); p >= alpha {
		t.Fatalf("the test does not see modulo bias: p = %g", p)
	}
}

// pairTest: for each unordered pair of cards, how often the lower one
// comes first (expected 1/2): two-sided binomial z-test; and for each card
// a, which card directly follows it when a is not last (uniform over the
// n-1 others): chi-square, df n-2. Bonferroni over all these tests.
func pairTest(label string, n, runs int, perm permuter) float64 {
	before := make([][]int, n)
	next := make([][]int, n)
	for a := range before {
		before[a], next[a] = make([]int, n), make([]int, n)
	}
	for i := range runs {
		arr := perm(n, statStream(label, i))
		pos := make([]int, n)
		for p, c := range arr {
			pos[c] = p
		}
		for a := range n {
			for b := a + 1; b < n; b++ {
				if pos[a] < pos[b] {
					before[a][b]++
				}
			}
		}
		for p := 0; p+1 < n; p++ {
			next[arr[p]][arr[p+1]]++
		}
	}
	tests := float64(n*(n-1)/2 + n)
	minP := 1.0
	for a := range n {
		for b := a + 1; b < n; b++ {
			z := (float64(before[a][b]) - float64(runs)/2) / math.Sqrt(float64(runs)/4)
			p := math.Erfc(math.Abs(z)/math.Sqrt2) * tests
			minP = min(minP, p)
		}
		// Given a is not last (it is last in runs/n shuffles), its
		// successor is uniform over the other n-1 cards.
		var succ []int
		total := 0
		for b := range n {
			if b != a {
				succ = append(succ, next[a][b])
				total += next[a][b]
			}
		}
		p := chiSquareP(chiSquare(succ, float64(total)/float64(n-1)), n-2) * tests
		minP = min(minP, p)
	}
	return minP
}

// TestStatPairwiseOrder: for every pair of cards each comes first half of
// the time, and each card's direct successor is uniform (8 cards, 80,000
// shuffles).
func TestStatPairwiseOrder(t *testing.T) {
	const n, runs = 8, 80000
	if p := pairTest(statLabel("pairs"), n, runs, fisherYates); p < alpha {
		t.Fatalf("pairwise order biased: corrected p = %g < %g", p, alpha)
	}
	if p := pairTest(statLabel("pairs-biased"), n, runs, moduloBiased); p >= alpha {
		t.Fatalf("the test does not see modulo bias: p = %g", p)
	}
}

// TestStatAllOrders: the 24 orders of 4 cards are equally likely
// (24,000 shuffles, df 23).
func TestStatAllOrders(t *testing.T) {
	run := func(label string, perm permuter) float64 {
		counts := make([]int, 24)
		for i := range 24000 {
			counts[lehmer(perm(4, statStream(label, i)))]++
		}
		return chiSquareP(chiSquare(counts, 1000), 23)
	}
	if p := run(statLabel("orders"), fisherYates); p < alpha {
		t.Fatalf("orders of 4 cards not uniform: p = %g", p)
	}
	if p := run(statLabel("orders-biased"), moduloBiased); p >= alpha {
		t.Fatalf("the test does not see modulo bias: p = %g", p)
	}
}

// TestStatPlayerSeedAlone: with one fixed server seed, chosen by the
// server before it knows the player's seed (here all zeros, or a seed
// built so that the shuffle without a player seed is the identity), the
// player's seed alone makes the 24 orders of 4 cards equally likely
// (24,000 player seeds, df 23, Bonferroni over the two server seeds).
func TestStatPlayerSeedAlone(t *testing.T) {
	// Without player seeds, draws j = i (no swap) at each step give the
	// identity: 2 bits "11" (Intn(4) = 3), then "10" (Intn(3) = 2), then
	// "1" (Intn(2) = 1): 1110 1xxx.
	rigged := seedForStream([]byte{0b11101000}, "")
	if a := fisherYates(4, NewStream(Seeds{Server: rigged})); lehmer(a) != 0 {
		t.Fatalf("rigged seed gives %v, want the identity", a)
	}
	base := os.Getenv("CHEMMY_STAT_BASE")
	for name, seed := range map[string][]byte{"zeros": make([]byte, ServerSeedSize), "rigged": rigged} {
		counts := make([]int, 24)
		for i := range 24000 {
			s := NewStream(Seeds{Server: seed, Players: []string{fmt.Sprintf("player %s/%d", base, i)}})
			counts[lehmer(fisherYates(4, s))]++
		}
		if p := chiSquareP(chiSquare(counts, 1000), 23) * 2; p < alpha {
			t.Errorf("server seed %s: orders over player seeds not uniform: corrected p = %g", name, p)
		}
	}
}

// lehmer is the rank 0..n!-1 of a permutation of 0..n-1.
func lehmer(a []int) int {
	r := 0
	for i := range a {
		smaller := 0
		for j := i + 1; j < len(a); j++ {
			if a[j] < a[i] {
				smaller++
			}
		}
		r = r*(len(a)-i) + smaller
	}
	return r
}

// TestStatFullShoe: in a 416-card shoe (whose shuffles read past the
// 512-byte seed into the SHA-256 tail), the first card of the fresh decks
// ends in each of the 416 positions equally often, and the random cut is
// uniform over the 416 positions (20,800 shuffles, df 415 each,
// Bonferroni over the two).
func TestStatFullShoe(t *testing.T) {
	if testing.Short() {
		t.Skip("20,800 shuffles of 416 cards")
	}
	const n, runs = 416, 20800
	pos, cuts := make([]int, n), make([]int, n)
	for i := range runs {
		s := statStream(statLabel("shoe"), i)
		a := fisherYates(n, s)
		for p, c := range a {
			if c == 0 {
				pos[p]++
			}
		}
		cuts[RandomCut(s, n)]++
	}
	for name, counts := range map[string][]int{"first card position": pos, "random cut": cuts} {
		if p := chiSquareP(chiSquare(counts, runs/n), n-1) * 2; p < alpha {
			t.Errorf("%s not uniform: corrected p = %g", name, p)
		}
	}
}
