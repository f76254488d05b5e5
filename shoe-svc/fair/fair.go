// Package fair is the provably fair construction of chemmy's shoes: a
// pure, documented function from a server seed and a client seed to the
// shuffled order of a shoe, the commitment to it, and a verifier that
// recomputes both from a shoe's reveal. It has no I/O and no state; the
// shoe service (package shoesvc) and the `chemmy verify` command both use
// it, so what the service deals is what anybody can recompute.
//
// # Commit-reveal
//
// When a shoe opens the service draws a server seed of [ServerSeedSize]
// bytes from crypto/rand, takes the client seed of the request (public,
// given by the table or the cutting player before the shoe is built),
// computes the order with [Shuffle] and publishes [Commit](server seed,
// order). The cut (chosen by a player after the commitment, or drawn at
// random) and the burn are applied to that order afterwards and recorded.
// When the shoe closes the service reveals the seeds and the order;
// [Verify] recomputes the order, checks the commitment and checks that
// the burned and dealt cards are the cut order's.
//
// # Commitment layout (version 1)
//
//	SHA-256( "chemmy-shoe-commit-v1"                 21 ASCII bytes
//	      || uint16 big-endian len(server_seed) || server_seed
//	      || uint16 big-endian len(order)       || order )
//
// order is one byte per card of the shuffled shoe before the cut: the
// card's index 0..51 = suit*13 + rank-1 (suits clubs 0, diamonds 1,
// hearts 2, spades 3; ranks ace 1 .. king 13), as rules.Card.Index.
//
// # The random stream
//
// The shuffle reads one bit stream, most significant bit of each byte
// first, never dropping or reusing a bit:
//
//	C_i = SHA-256("chemmy-shoe-client-v1" || uint16be(len(client_seed)) || client_seed || uint64be(i))
//	T_i = SHA-256("chemmy-shoe-tail-v1" || uint16be(len(server_seed)) || server_seed
//	              || uint16be(len(client_seed)) || client_seed || uint64be(i))
//	stream = (server_seed XOR (C_0 || C_1 || ... || C_15)) || T_0 || T_1 || ...
//
// The first 512 bytes are the server seed masked by a keystream of the
// client seed; the rest is SHA-256 in counter mode over both seeds.
//
// # The shuffle
//
// Start from decks fresh decks in index order (deck after deck, each
// 0..51). Fisher-Yates from the end: for i = n-1 down to 1, j = Intn(i+1),
// swap cards i and j. Intn(m) reads k = bit length of m-1 bits as a
// big-endian integer and reads again while the value is >= m (rejection
// sampling: every value in [0, m) has exactly the same probability, no
// modulo bias). A random cut is Intn(n) read from the same stream right
// after the shuffle; the card at the cut position becomes the first.
//
// # State space
//
// 416 cards have 416! ~ 2^3025 orders (fewer distinct ones, as each card
// appears 8 times), far more than any 256-bit seed can select. The server
// seed is therefore 512 bytes (4096 bits) and enters the stream unhashed:
// for a fixed client seed, server_seed -> first 4096 stream bits is a
// bijection, and every order of 416 cards is produced by a stream whose
// Fisher-Yates draws all succeed at the first try, which needs
// sum_{m=2..416} ceil(log2 m) = 3233 bits (2297 for 312 cards) <= 4096.
// So every order is reached, by at least 2^(4096-3233) server seeds
// (proved constructively by TestEveryOrderReachable). The probabilities
// are uniform exactly as long as the bits the shuffle reads are uniform
// and independent: the first 4096 are (crypto/rand); a shuffle that
// rejects often reads further into the SHA-256 tail (about 4700 bits on
// average for 416 cards), whose bits are uniform only computationally
// (an adversary that tells them from random breaks SHA-256).
package fair

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/chemmy/chemmy/services/rules"
)

// ServerSeedSize is the server seed's length in bytes (4096 bits >=
// log2(416!) ~ 3025 bits).
const ServerSeedSize = 512

// MaxClientSeed is the longest client seed, in bytes.
const MaxClientSeed = 256

const (
	commitDomain = "chemmy-shoe-commit-v1"
	clientDomain = "chemmy-shoe-client-v1"
	tailDomain   = "chemmy-shoe-tail-v1"
)

// NewServerSeed returns a fresh server seed from crypto/rand.
func NewServerSeed() []byte {
	b := make([]byte, ServerSeedSize)
	_, _ = rand.Read(b) // never fails (Go 1.24+); aborts the program on a broken system
	return b
}

// Stream is the random bit stream of a (server seed, client seed) pair.
type Stream struct {
	server, client []byte
	prefix         []byte // server seed XOR the client keystream
	buf            []byte // bytes not yet read (prefix, then tail blocks)
	tail           uint64 // next tail block counter
	cur            byte   // the byte being read
	left           uint   // bits left in cur
}

// NewStream returns the stream of the given seeds. serverSeed must be
// ServerSeedSize bytes (shorter seeds are accepted for tests of the
// construction, but then not every order is reachable).
func NewStream(serverSeed []byte, clientSeed string) *Stream {
	s := &Stream{server: serverSeed, client: []byte(clientSeed)}
	s.prefix = make([]byte, len(serverSeed))
	var block [sha256.Size]byte
	for off, i := 0, uint64(0); off < len(serverSeed); i++ {
		h := sha256.New()
		h.Write([]byte(clientDomain))
		h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s.client))))
		h.Write(s.client)
		h.Write(binary.BigEndian.AppendUint64(nil, i))
		h.Sum(block[:0])
		off += subtle.XORBytes(s.prefix[off:], serverSeed[off:], block[:])
	}
	s.buf = s.prefix
	return s
}

func (s *Stream) nextByte() byte {
	if len(s.buf) == 0 {
		h := sha256.New()
		h.Write([]byte(tailDomain))
		h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s.server))))
		h.Write(s.server)
		h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s.client))))
		h.Write(s.client)
		h.Write(binary.BigEndian.AppendUint64(nil, s.tail))
		s.tail++
		s.buf = h.Sum(nil)
	}
	b := s.buf[0]
	s.buf = s.buf[1:]
	return b
}

// Bits returns the next k bits (1 <= k <= 32) as a big-endian integer.
func (s *Stream) Bits(k uint) uint32 {
	var v uint32
	for k > 0 {
		if s.left == 0 {
			s.cur, s.left = s.nextByte(), 8
		}
		take := min(k, s.left)
		chunk := uint32(s.cur>>(s.left-take)) & (1<<take - 1)
		v = v<<take | chunk
		s.left -= take
		k -= take
	}
	return v
}

// Intn returns a uniform integer in [0, n) by rejection sampling; n must
// be in 1..2^31.
func (s *Stream) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	k := uint(bits.Len64(uint64(n - 1)))
	for {
		if v := s.Bits(k); uint64(v) < uint64(n) {
			return int(v)
		}
	}
}

// Permute shuffles a in place with Fisher-Yates driven by s.
func Permute[T any](a []T, s *Stream) {
	for i := len(a) - 1; i > 0; i-- {
		j := s.Intn(i + 1)
		a[i], a[j] = a[j], a[i]
	}
}

// FreshOrder returns decks fresh decks in index order, one byte per card.
func FreshOrder(decks int) []byte {
	out := make([]byte, 0, decks*rules.DeckSize)
	for range decks {
		for i := range rules.DeckSize {
			out = append(out, byte(i))
		}
	}
	return out
}

// Shuffle returns the shuffled order of decks decks for the seeds, one
// byte per card (the committed bytes), and the stream positioned right
// after the shuffle (for a random cut: RandomCut).
func Shuffle(decks int, serverSeed []byte, clientSeed string) ([]byte, *Stream) {
	s := NewStream(serverSeed, clientSeed)
	order := FreshOrder(decks)
	Permute(order, s)
	return order, s
}

// RandomCut draws the random cut position of an n-card shoe from s (the
// stream returned by Shuffle).
func RandomCut(s *Stream, n int) int { return s.Intn(n) }

// Commit returns the commitment to a server seed and an order (layout in
// the package documentation).
func Commit(serverSeed, order []byte) []byte {
	h := sha256.New()
	h.Write([]byte(commitDomain))
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(serverSeed))))
	h.Write(serverSeed)
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(order))))
	h.Write(order)
	return h.Sum(nil)
}

// Cut returns order rotated so that the card at position p comes first.
func Cut(order []byte, p int) []byte {
	out := make([]byte, 0, len(order))
	return append(append(out, order[p:]...), order[:p]...)
}

// BurnValue is the number of further cards burned after a first card of
// this index under "burn by first card value": ace 1, two to nine their
// face, ten and faces 10.
func BurnValue(index byte) int {
	r := int(index)%rules.DeckSize%13 + 1
	return min(r, 10)
}

// Cards converts an order to cards.
func Cards(order []byte) ([]rules.Card, error) {
	out := make([]rules.Card, len(order))
	for i, b := range order {
		c, err := rules.CardFromIndex(int(b))
		if err != nil {
			return nil, fmt.Errorf("order[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

// Reveal is what a closed shoe reveals (chemmy.shoe.v1.ShoeReveal).
type Reveal struct {
	Decks      int
	ServerSeed []byte
	ClientSeed string
	Commitment []byte
	// Order is the shuffled order before the cut (the committed bytes).
	Order       []byte
	CutPosition int
	CutRandom   bool
	// BurnByFirstCard: the burn count follows the first card's value;
	// otherwise 3 or 4 cards are burned.
	BurnByFirstCard bool
	Burned          []string // card codes
	Dealt           []string // card codes, dealing order
	CardsLeft       int
}

// ErrMismatch wraps every verification failure.
var ErrMismatch = errors.New("fair: mismatch")

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMismatch, fmt.Sprintf(format, args...))
}

// Verify recomputes the order from the seeds and checks the commitment,
// the cut, the burn and every dealt card. A nil error means the shoe dealt
// exactly what it committed to.
func Verify(r Reveal) error {
	if r.Decks < 1 || r.Decks > 16 {
		return mismatch("decks %d outside 1..16", r.Decks)
	}
	if len(r.ServerSeed) != ServerSeedSize {
		return mismatch("server seed is %d bytes, want %d", len(r.ServerSeed), ServerSeedSize)
	}
	order, s := Shuffle(r.Decks, r.ServerSeed, r.ClientSeed)
	if string(order) != string(r.Order) {
		return mismatch("the seeds give another order than the revealed one")
	}
	if subtle.ConstantTimeCompare(Commit(r.ServerSeed, order), r.Commitment) != 1 {
		return mismatch("commitment does not match SHA-256 of the server seed and order")
	}
	n := len(order)
	if r.CutPosition < 0 || r.CutPosition >= n {
		return mismatch("cut position %d outside 0..%d", r.CutPosition, n-1)
	}
	if r.CutRandom {
		if p := RandomCut(s, n); p != r.CutPosition {
			return mismatch("random cut at %d, the stream draws %d", r.CutPosition, p)
		}
	}
	loaded, err := Cards(Cut(order, r.CutPosition))
	if err != nil {
		return mismatch("%v", err)
	}
	b := len(r.Burned)
	if r.BurnByFirstCard {
		if want := 1 + BurnValue(byte(loaded[0].Index())); b != want {
			return mismatch("%d cards burned, the first card %s says %d", b, loaded[0], want)
		}
	} else if b != 3 && b != 4 {
		return mismatch("%d cards burned, want 3 or 4", b)
	}
	if b+len(r.Dealt) > n {
		return mismatch("%d burned and %d dealt from %d cards", b, len(r.Dealt), n)
	}
	for i, code := range r.Burned {
		if loaded[i].String() != code {
			return mismatch("burned[%d] = %s, the cut order has %s", i, code, loaded[i])
		}
	}
	for i, code := range r.Dealt {
		if loaded[b+i].String() != code {
			return mismatch("dealt[%d] = %s, the cut order has %s", i, code, loaded[b+i])
		}
	}
	if left := n - b - len(r.Dealt); left != r.CardsLeft {
		return mismatch("cards left %d, want %d", r.CardsLeft, left)
	}
	return nil
}
