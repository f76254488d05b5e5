package shoesvc

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"

	"github.com/chemmy/chemmy/services/rules"
)

// Source supplies uniformly distributed 64-bit words to the shuffle and
// the cut. Production code always uses crypto/rand ([newCryptoSource]);
// tests in this package may inject a deterministic one (a *rand.PCG from
// math/rand/v2 satisfies it). A Source need not be safe for concurrent use:
// the service takes a fresh one per shoe.
type Source interface {
	Uint64() uint64
}

// cryptoSource reads crypto/rand in blocks so that a 416-card shuffle costs
// a handful of reads instead of one per card.
type cryptoSource struct {
	buf [1024]byte
	off int
}

// newCryptoSource returns a Source backed by crypto/rand.
func newCryptoSource() Source { return &cryptoSource{off: len(cryptoSource{}.buf)} }

func (s *cryptoSource) Uint64() uint64 {
	if s.off+8 > len(s.buf) {
		// crypto/rand.Read never returns an error and always fills the
		// buffer (Go 1.24+); on a broken system it aborts the program
		// rather than return predictable bytes.
		_, _ = rand.Read(s.buf[:])
		s.off = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.off:])
	s.off += 8
	return v
}

// bitSource hands out a Source's words a few bits at a time: a shoe index
// needs at most 10 bits, so one 64-bit word serves six draws. Every chunk
// is uniform and independent of the others because the words are; leftover
// bits too few for a request are dropped, never reused.
type bitSource struct {
	src  Source
	word uint64
	left uint
}

func newBitSource(src Source) *bitSource { return &bitSource{src: src} }

// bits returns k uniform random bits, 1 <= k <= 64.
func (b *bitSource) bits(k uint) uint64 {
	if k == 64 {
		return b.src.Uint64()
	}
	if b.left < k {
		b.word, b.left = b.src.Uint64(), 64
	}
	v := b.word & (1<<k - 1)
	b.word >>= k
	b.left -= k
	return v
}

// intn returns a uniform integer in [0, n) for n >= 1 by rejection
// sampling: it draws just enough bits to cover n-1 and draws again while
// the value is >= n, so every value has exactly the same probability (no
// modulo bias). Fewer than two draws are needed on average.
func (b *bitSource) intn(n int) int {
	if n <= 1 {
		return 0
	}
	k := uint(bits.Len64(uint64(n - 1)))
	for {
		if v := b.bits(k); v < uint64(n) {
			return int(v)
		}
	}
}

// shuffle permutes cards uniformly at random in place (Fisher-Yates,
// SHOE-SHUFFLE): for i from the end down to 1 it swaps card i with a card
// chosen uniformly from 0..i.
func shuffle(cards []rules.Card, src *bitSource) {
	for i := len(cards) - 1; i > 0; i-- {
		j := src.intn(i + 1)
		cards[i], cards[j] = cards[j], cards[i]
	}
}

// cut rotates cards in place at a uniformly random position p in
// [0, len(cards)) so that the card at p comes first (SHOE-CUT: the croupier
// cuts where the player inserted the indicator card; a player who does not
// choose is modelled by a random position). It returns p.
func cut(cards []rules.Card, src *bitSource) int {
	if len(cards) == 0 {
		return 0
	}
	p := src.intn(len(cards))
	rotated := append(append(make([]rules.Card, 0, len(cards)), cards[p:]...), cards[:p]...)
	copy(cards, rotated)
	return p
}

// buildShoe returns decks fresh decks shuffled and cut (SHOE-DECKS,
// SHOE-SHUFFLE, SHOE-CUT): the cards in the order they are loaded into the
// shoe, burn cards first.
func buildShoe(decks int, src Source) []rules.Card {
	bs := newBitSource(src)
	cards := rules.NewDecks(decks)
	shuffle(cards, bs)
	cut(cards, bs)
	return cards
}
