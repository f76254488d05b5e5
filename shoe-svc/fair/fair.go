// Package fair is the provably fair construction of chemmy's shoes: a
// pure, documented function from a server seed, a client seed and the
// players' seeds to the shuffled order of a shoe, the commitment to the
// server seed, and a verifier that recomputes both from a shoe's reveal.
// It has no I/O and no state; the shoe service (package shoesvc) and the
// `chemmy verify` command both use it, so what the service deals is what
// anybody can recompute.
//
// # Commit-reveal with player entropy (version 2)
//
//  1. The shoe opens: the service draws a server seed of [ServerSeedSize]
//     bytes from crypto/rand and publishes [Commit](server seed), its
//     SHA-256, with the shoe's public client seed (Shoe.commitment and
//     Shoe.client_seed, event shoe_opened). Nobody else knows the seed.
//  2. The players' seeds arrive after that: the named cutter gives his
//     seed with his cut (CutRequest.player_seed), or a table hands its
//     shoe the seeds its players gave while the shoe waited
//     (SeedShoe), which the service sorts by their bytes (then player
//     id), so that the order depends on which seeds were given, not on
//     the order they came in. Only now is the order fixed: [Shuffle] of
//     the three inputs, then the cut (the cutter's, or drawn with
//     [RandomCut]) and the burn.
//  3. The shoe closes: the service reveals the server seed, the player
//     seeds and the order; [Verify] checks SHA-256(server seed) against
//     the commitment, recomputes the order and checks the cut, the burn
//     and every dealt card.
//
// Why a server cannot choose the order: for a fixed client seed and fixed
// player seeds the map server seed -> order is onto (every order is
// reachable, see "State space"), so a server that knew the player seeds
// before committing could build a seed for any order. It does not know
// them: it is bound to one seed by the SHA-256 it published before, and
// the player seed it learns afterwards changes the order unpredictably
// (the mask below is SHA-256 of it). Revealing another seed breaks the
// commitment; revealing other player seeds is seen by the player who
// checks his own seed in the reveal (`chemmy verify -player-seed`).
//
// With several players' seeds, a seed protects its giver against the
// server only if no seed is added after it by someone who could read it:
// a last seed chosen among n candidates picks one of n orders. The table
// shows nobody the seeds before the shuffle; a named cutter's seed is a
// shoe's only one.
//
// A shoe cut at random at once (no cutter named, no seeds awaited), one
// whose cutter's time ran out, and one seeded with no seed get no player
// seed: the order follows from the server seed and the client seed alone,
// so it is reproducible and auditable but gives no protection against
// whoever runs the service. Its reveal says so: player_seeds is empty.
// The same holds for a cutter who gives an empty seed.
//
// # Commitment layout
//
//	commitment = SHA-256(server_seed)      32 bytes; server_seed is 512 bytes
//
// # The random stream
//
// The shuffle reads one bit stream, most significant bit of each byte
// first, never dropping or reusing a bit. With
//
//	ctx = uint16be(len(client_seed)) || client_seed
//	   || uint16be(number of player seeds)
//	   || for each player seed, in order: uint16be(len(seed)) || seed
//	M_i = SHA-256("chemmy-shoe-mask-v2" || ctx || uint64be(i))          i = 0..15
//	T_i = SHA-256("chemmy-shoe-tail-v2" || uint16be(len(server_seed)) || server_seed
//	              || ctx || uint64be(i))                                 i = 0, 1, ...
//	stream = (server_seed XOR (M_0 || M_1 || ... || M_15)) || T_0 || T_1 || ...
//
// the first 512 bytes are the server seed masked by a keystream of the
// public seeds; the rest is SHA-256 in counter mode over all of them.
// Seeds are their bytes (UTF-8 for the strings of the API); the lengths
// make the encoding unambiguous (client and player seeds are at most
// [MaxClientSeed] and [MaxPlayerSeed] bytes, at most [MaxPlayerSeeds]
// player seeds).
//
// # The shuffle
//
// Start from decks fresh decks in index order (deck after deck, each card
// index 0..51 = suit*13 + rank-1, suits clubs 0, diamonds 1, hearts 2,
// spades 3, ranks ace 1 .. king 13, as rules.Card.Index). Fisher-Yates
// from the end: for i = n-1 down to 1, j = Intn(i+1), swap cards i and j.
// Intn(m) reads k = bit length of m-1 bits as a big-endian integer and
// reads again while the value is >= m (rejection sampling: every value in
// [0, m) has exactly the same probability, no modulo bias). A random cut
// is Intn(n) read from the same stream right after the shuffle; the card
// at the cut position becomes the first.
//
// # The move to the bottom (the old game)
//
// After the cut and the burn, before the first deal, the banker of the old
// game may move k top cards to the bottom (RULES.md OLD-CUT): [MoveToBottom]
// rotates the cards after the burn left by k, so the k cards that would
// have been dealt first come last, in their order. The reveal records k
// (Reveal.MovedToBottom, 0: no move) and [Verify] applies it, so the
// dealing order stays a public function of the seeds, the cut, the burn
// and the announced k.
//
// # State space
//
// 416 cards have 416! ~ 2^3025 orders (fewer distinct ones, as each card
// appears 8 times), far more than any 256-bit seed can select. The server
// seed is therefore 512 bytes (4096 bits) and enters the stream unhashed:
// for fixed client and player seeds, server_seed -> first 4096 stream
// bits is a bijection, and every order of 416 cards is produced by a
// stream whose Fisher-Yates draws all succeed at the first try, which
// needs sum_{m=2..416} ceil(log2 m) = 3233 bits (2297 for 312 cards) <=
// 4096. So every order is reached, by at least 2^(4096-3233) server seeds
// (proved constructively by TestEveryOrderReachable). The smaller shoes
// of banque (3 decks, 156 cards: 993 bits) and the old game (2 decks, 104
// cards: 601 bits) need fewer. The probabilities
// are uniform exactly as long as the bits the shuffle reads are uniform
// and independent: the first 4096 are (crypto/rand, masked); a shuffle
// that rejects often reads further into the SHA-256 tail (about 4700 bits
// on average for 416 cards), whose bits are uniform only computationally
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

// CommitmentSize is the commitment's length in bytes (SHA-256).
const CommitmentSize = sha256.Size

// Limits of the public seeds, in bytes and in number.
const (
	// MaxClientSeed is the longest client seed.
	MaxClientSeed = 256
	// MaxPlayerSeed is the longest player seed.
	MaxPlayerSeed = 256
	// MaxPlayerSeeds is the largest number of player seeds of a shoe.
	MaxPlayerSeeds = 16
)

const (
	maskDomain = "chemmy-shoe-mask-v2"
	tailDomain = "chemmy-shoe-tail-v2"
)

// Seeds are the three inputs of a shoe's order.
type Seeds struct {
	// Server is the secret seed, ServerSeedSize bytes, committed to
	// (Commit) before anything else is known.
	Server []byte
	// Client is the public seed given with the shoe's creation (the
	// table's "table/<id>/shoe/<n>"); up to MaxClientSeed bytes.
	Client string
	// Players are the seeds given after the commitment (the cutter's,
	// with his cut; or a table's players', sorted by the service), in
	// the order they are mixed in; each up to MaxPlayerSeed bytes, at
	// most MaxPlayerSeeds. Empty: no player entropy.
	Players []string
}

// NewServerSeed returns a fresh server seed from crypto/rand.
func NewServerSeed() []byte {
	b := make([]byte, ServerSeedSize)
	_, _ = rand.Read(b) // never fails (Go 1.24+); aborts the program on a broken system
	return b
}

// Stream is the random bit stream of a shoe's seeds.
type Stream struct {
	server []byte
	ctx    []byte // the encoded public seeds (package documentation)
	buf    []byte // bytes not yet read (masked server seed, then tail blocks)
	tail   uint64 // next tail block counter
	cur    byte   // the byte being read
	left   uint   // bits left in cur
}

// publicContext is ctx of the package documentation: the client seed and
// the player seeds, each length-prefixed, after their count.
func publicContext(client string, players []string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(client)))
	b = append(b, client...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(players)))
	for _, p := range players {
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(b, p...)
	}
	return b
}

// NewStream returns the stream of the given seeds. s.Server must be
// ServerSeedSize bytes (shorter seeds are accepted for tests of the
// construction, but then not every order is reachable); the public seeds
// must be within the limits above (longer ones are not refused here: the
// service and Verify refuse them).
func NewStream(s Seeds) *Stream {
	st := &Stream{server: s.Server, ctx: publicContext(s.Client, s.Players)}
	prefix := make([]byte, len(s.Server))
	var block [sha256.Size]byte
	for off, i := 0, uint64(0); off < len(s.Server); i++ {
		h := sha256.New()
		h.Write([]byte(maskDomain))
		h.Write(st.ctx)
		h.Write(binary.BigEndian.AppendUint64(nil, i))
		h.Sum(block[:0])
		off += subtle.XORBytes(prefix[off:], s.Server[off:], block[:])
	}
	st.buf = prefix
	return st
}

func (s *Stream) nextByte() byte {
	if len(s.buf) == 0 {
		h := sha256.New()
		h.Write([]byte(tailDomain))
		h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s.server))))
		h.Write(s.server)
		h.Write(s.ctx)
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
// byte per card (card index 0..51), and the stream positioned right after
// the shuffle (for a random cut: RandomCut).
func Shuffle(decks int, s Seeds) ([]byte, *Stream) {
	st := NewStream(s)
	order := FreshOrder(decks)
	Permute(order, st)
	return order, st
}

// RandomCut draws the random cut position of an n-card shoe from s (the
// stream returned by Shuffle).
func RandomCut(s *Stream, n int) int { return s.Intn(n) }

// Commit returns the commitment to a server seed: SHA-256(server seed),
// CommitmentSize bytes.
func Commit(serverSeed []byte) []byte {
	h := sha256.Sum256(serverSeed)
	return h[:]
}

// Cut returns order rotated so that the card at position p comes first.
func Cut(order []byte, p int) []byte {
	out := make([]byte, 0, len(order))
	return append(append(out, order[p:]...), order[:p]...)
}

// MoveToBottom returns the dealing order after the banker moved its k
// first cards to the bottom (the old game, RULES.md OLD-CUT): the same
// rotation as Cut, at k (0 <= k <= len(dealing)).
func MoveToBottom(dealing []byte, k int) []byte { return Cut(dealing, k) }

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
	// PlayerSeeds are the seeds given after the commitment, in order;
	// empty for a shoe cut at random (no player entropy).
	PlayerSeeds []string
	// Commitment is SHA-256(ServerSeed), as published when the shoe
	// opened.
	Commitment []byte
	// Order is the shuffled order before the cut (card indexes).
	Order       []byte
	CutPosition int
	CutRandom   bool
	// BurnByFirstCard: the burn count follows the first card's value;
	// otherwise Burn cards are burned.
	BurnByFirstCard bool
	// Burn is the burn count announced when the shoe opened (SHOE-BURN):
	// 3 or 4 without BurnByFirstCard, 0 with it.
	Burn      int
	Burned    []string // card codes
	Dealt     []string // card codes, dealing order
	CardsLeft int
	// MovedToBottom is the number of top cards the banker moved to the
	// bottom after the burn (the old game, OLD-CUT); 0: none. Between 1
	// and the cards after the burn minus 1 otherwise.
	MovedToBottom int
}

// Seeds returns the reveal's seeds.
func (r Reveal) Seeds() Seeds {
	return Seeds{Server: r.ServerSeed, Client: r.ClientSeed, Players: r.PlayerSeeds}
}

// ErrMismatch wraps every verification failure.
var ErrMismatch = errors.New("fair: mismatch")

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMismatch, fmt.Sprintf(format, args...))
}

// Verify checks the server seed against the commitment, recomputes the
// order from the three seeds and checks the cut, the burn, the banker's
// move to the bottom (MovedToBottom) and every dealt card. A nil error means the shoe dealt exactly the order of the
// committed server seed and the revealed public seeds. It cannot tell
// whether the commitment is the one published when the shoe opened, nor
// whether the player seeds are the ones the players gave: compare those
// with what you saw (`chemmy verify -commitment ... -player-seed ...`).
// Errors wrap ErrMismatch.
func Verify(r Reveal) error {
	if r.Decks < 1 || r.Decks > 16 {
		return mismatch("decks %d outside 1..16", r.Decks)
	}
	if len(r.ServerSeed) != ServerSeedSize {
		return mismatch("server seed is %d bytes, want %d", len(r.ServerSeed), ServerSeedSize)
	}
	if len(r.ClientSeed) > MaxClientSeed {
		return mismatch("client seed is %d bytes, at most %d", len(r.ClientSeed), MaxClientSeed)
	}
	if len(r.PlayerSeeds) > MaxPlayerSeeds {
		return mismatch("%d player seeds, at most %d", len(r.PlayerSeeds), MaxPlayerSeeds)
	}
	for i, p := range r.PlayerSeeds {
		if len(p) > MaxPlayerSeed {
			return mismatch("player seed %d is %d bytes, at most %d", i, len(p), MaxPlayerSeed)
		}
	}
	if subtle.ConstantTimeCompare(Commit(r.ServerSeed), r.Commitment) != 1 {
		return mismatch("the commitment is not SHA-256 of the revealed server seed")
	}
	order, s := Shuffle(r.Decks, r.Seeds())
	if string(order) != string(r.Order) {
		return mismatch("the seeds give another order than the revealed one")
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
	} else if r.Burn != 3 && r.Burn != 4 {
		return mismatch("the announced burn is %d cards, want 3 or 4", r.Burn)
	} else if b != r.Burn {
		// Source: RULES.md SHOE-BURN (the count announced, not any count
		// the rule allows)
		return mismatch("%d cards burned, %d announced", b, r.Burn)
	}
	if b+len(r.Dealt) > n {
		return mismatch("%d burned and %d dealt from %d cards", b, len(r.Dealt), n)
	}
	for i, code := range r.Burned {
		if loaded[i].String() != code {
			return mismatch("burned[%d] = %s, the cut order has %s", i, code, loaded[i])
		}
	}
	dealing := loaded[b:]
	if k := r.MovedToBottom; k != 0 {
		// Source: RULES.md OLD-CUT (top cards moved to the bottom after
		// the cut, announced)
		if k < 1 || k >= len(dealing) {
			return mismatch("%d cards moved to the bottom, want 1..%d", k, len(dealing)-1)
		}
		dealing = append(append(make([]rules.Card, 0, len(dealing)), dealing[k:]...), dealing[:k]...)
	}
	for i, code := range r.Dealt {
		if dealing[i].String() != code {
			return mismatch("dealt[%d] = %s, the dealing order has %s", i, code, dealing[i])
		}
	}
	if left := n - b - len(r.Dealt); left != r.CardsLeft {
		return mismatch("cards left %d, want %d", r.CardsLeft, left)
	}
	return nil
}
