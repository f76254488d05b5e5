package shoesvc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

// seqSource returns its words in order, then panics: tests that need to
// know exactly which words were drawn.
type seqSource struct {
	words []uint64
	used  int
}

func (s *seqSource) Uint64() uint64 {
	w := s.words[s.used]
	s.used++
	return w
}

func TestIntnRejectsOutOfRange(t *testing.T) {
	// n = 5 takes 3 bits at a time, low bits first: 7, 6 and 5 are
	// rejected, 3 is kept. Bits are never reduced modulo n.
	src := &seqSource{words: []uint64{7 | 6<<3 | 5<<6 | 3<<9}}
	bs := newBitSource(src)
	if got := bs.intn(5); got != 3 {
		t.Fatalf("intn = %d, want 3", got)
	}
	if src.used != 1 || bs.left != 64-12 {
		t.Fatalf("drew %d words, %d bits left; want 1 word, 52 bits", src.used, bs.left)
	}
	// 21 chunks of 3 bits use 63 bits; the 22nd needs a new word and the
	// last bit of the old one is dropped.
	src = &seqSource{words: []uint64{1<<63 | 0x7fff_ffff_ffff_ffff, 4}}
	bs = newBitSource(src)
	for i := range 21 {
		if got := bs.bits(3); got != 7 {
			t.Fatalf("chunk %d = %d, want 7", i, got)
		}
	}
	if got := bs.bits(3); got != 4 || src.used != 2 {
		t.Fatalf("chunk 21 = %d from word %d, want 4 from the second word", got, src.used)
	}
	if got := newBitSource(&seqSource{}).intn(1); got != 0 {
		t.Fatalf("intn(1) = %d, want 0 without drawing", got)
	}
	if got := newBitSource(&seqSource{words: []uint64{42}}).bits(64); got != 42 {
		t.Fatalf("bits(64) = %d, want the whole word", got)
	}
}

// chiSquare of observed counts against a uniform expectation.
func chiSquare(counts []int, total int) float64 {
	exp := float64(total) / float64(len(counts))
	var x float64
	for _, c := range counts {
		d := float64(c) - exp
		x += d * d / exp
	}
	return x
}

func TestIntnUniform(t *testing.T) {
	src := newBitSource(rand.NewPCG(1, 2))
	// n values chosen so that the rejection rate differs (3: 25 %, 5: 37.5 %,
	// 52, 309 and 416: shoe sizes).
	for _, n := range []int{2, 3, 5, 7, 52, 309, 416} {
		const per = 400
		counts := make([]int, n)
		for range n * per {
			v := src.intn(n)
			if v < 0 || v >= n {
				t.Fatalf("intn(%d) = %d", n, v)
			}
			counts[v]++
		}
		// df = n-1; mean n-1, sd sqrt(2(n-1)): allow mean + 6 sd.
		df := float64(n - 1)
		if x := chiSquare(counts, n*per); x > df+6*math.Sqrt(2*df) {
			t.Errorf("intn(%d): chi-square %.1f with %d degrees of freedom", n, x, n-1)
		}
	}
}

// permIndex maps a permutation of 0..3 (as card ranks Ace..Four) to 0..23.
func permIndex(cards []rules.Card) int {
	idx, used := 0, [4]bool{}
	for i, c := range cards {
		r := int(c.Rank) - 1
		smaller := 0
		for k := 0; k < r; k++ {
			if !used[k] {
				smaller++
			}
		}
		used[r] = true
		f := 1
		for k := 2; k <= 3-i; k++ {
			f *= k
		}
		idx += smaller * f
	}
	return idx
}

func fourCards() []rules.Card {
	return []rules.Card{{Rank: rules.Ace}, {Rank: rules.Two}, {Rank: rules.Three}, {Rank: rules.Four}}
}

// TestSHOEShuffleUnbiased shuffles 4 cards many times with a deterministic
// source: each of the 24 orders must appear, with frequencies that pass a
// loose chi-square bound. The same test run on the naive "swap with any
// position" shuffle fails, which shows the test can see bias.
func TestSHOEShuffleUnbiased(t *testing.T) {
	const runs = 24 * 1000
	// df = 23: mean 23, sd 6.8; the bound is far beyond p = 0.0001 (~55).
	const bound = 80.0
	src := newBitSource(rand.NewPCG(7, 11))
	counts := make([]int, 24)
	for range runs {
		cards := fourCards()
		shuffle(cards, src)
		counts[permIndex(cards)]++
	}
	for i, c := range counts {
		if c == 0 {
			t.Fatalf("order %d never appeared: %v", i, counts)
		}
	}
	if x := chiSquare(counts, runs); x > bound {
		t.Fatalf("chi-square %.1f > %.0f: %v", x, bound, counts)
	}

	naive := make([]int, 24)
	for range runs {
		cards := fourCards()
		for i := range cards {
			j := src.intn(len(cards))
			cards[i], cards[j] = cards[j], cards[i]
		}
		naive[permIndex(cards)]++
	}
	if x := chiSquare(naive, runs); x <= bound {
		t.Fatalf("the test does not detect the naive shuffle's bias (chi-square %.1f)", x)
	}
}

// TestSHOEShuffle: the shuffle is a permutation (same multiset) and the
// production source differs between shoes.
func TestSHOEShuffle(t *testing.T) {
	a, b := rules.NewDecks(6), rules.NewDecks(6)
	shuffle(a, newBitSource(newCryptoSource()))
	shuffle(b, newBitSource(newCryptoSource()))
	if slices.Equal(a, b) {
		t.Fatal("two crypto/rand shuffles of 312 cards are equal")
	}
	if slices.Equal(a, rules.NewDecks(6)) {
		t.Fatal("crypto/rand shuffle left the decks in order")
	}
	sortCards(a)
	if !slices.Equal(a, sortedDecks(6)) {
		t.Fatal("shuffle is not a permutation of the decks")
	}
}

func TestCryptoSourceRefills(t *testing.T) {
	s := newCryptoSource()
	seen := map[uint64]bool{}
	for range 1000 { // > one 1024-byte buffer of 128 words
		seen[s.Uint64()] = true
	}
	if len(seen) < 999 {
		t.Fatalf("only %d distinct words of 1000", len(seen))
	}
}

// TestSHOECut: cut rotates at a uniformly random position.
func TestSHOECut(t *testing.T) {
	src := newBitSource(rand.NewPCG(3, 4))
	const n, runs = 10, 10000
	counts := make([]int, n)
	for range runs {
		orig := make([]rules.Card, n)
		for i := range orig {
			orig[i] = rules.Card{Rank: rules.Rank(i + 1)}
		}
		cards := slices.Clone(orig)
		p := cut(cards, src)
		if p < 0 || p >= n {
			t.Fatalf("cut position %d", p)
		}
		for i := range cards {
			if cards[i] != orig[(p+i)%n] {
				t.Fatalf("cut at %d: got %v from %v", p, cards, orig)
			}
		}
		counts[p]++
	}
	if x := chiSquare(counts, runs); x > 40 { // df 9
		t.Fatalf("cut positions not uniform: chi-square %.1f: %v", x, counts)
	}
	if p := cut(nil, src); p != 0 {
		t.Fatalf("cut of no cards = %d", p)
	}
}

func sortCards(cs []rules.Card) {
	slices.SortFunc(cs, func(a, b rules.Card) int { return a.Index() - b.Index() })
}

func sortedDecks(n int) []rules.Card {
	cs := rules.NewDecks(n)
	sortCards(cs)
	return cs
}

func BenchmarkShuffle8Decks(b *testing.B) {
	src := newBitSource(newCryptoSource())
	cards := rules.NewDecks(8)
	for b.Loop() {
		shuffle(cards, src)
	}
}
