package fair

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/chemmy/chemmy/services/rules"
)

// testSeed is a deterministic server seed for tests (never used in
// production: the service draws its seeds from crypto/rand).
func testSeed(label string, i uint64) []byte {
	out := make([]byte, 0, ServerSeedSize)
	for c := uint64(0); len(out) < ServerSeedSize; c++ {
		h := sha256.Sum256(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte(label), i), c))
		out = append(out, h[:]...)
	}
	return out[:ServerSeedSize]
}

// clientKeystream is C_0 || ... || C_15 computed from the documented
// layout, independently of NewStream.
func clientKeystream(client string) []byte {
	var out []byte
	for i := uint64(0); len(out) < ServerSeedSize; i++ {
		b := []byte("chemmy-shoe-client-v1")
		b = binary.BigEndian.AppendUint16(b, uint16(len(client)))
		b = append(b, client...)
		b = binary.BigEndian.AppendUint64(b, i)
		h := sha256.Sum256(b)
		out = append(out, h[:]...)
	}
	return out
}

// seedForStream returns the server seed whose stream starts with prefix
// (up to 512 bytes) for the client seed: the inverse of the mask.
func seedForStream(prefix []byte, client string) []byte {
	seed := make([]byte, ServerSeedSize)
	copy(seed, prefix)
	ks := clientKeystream(client)
	for i := range seed {
		seed[i] ^= ks[i]
	}
	return seed
}

func TestCommitLayout(t *testing.T) {
	seed := testSeed("commit", 1)
	order, _ := Shuffle(8, seed, "abc")
	var b []byte
	b = append(b, "chemmy-shoe-commit-v1"...)
	b = append(b, byte(len(seed)>>8), byte(len(seed)))
	b = append(b, seed...)
	b = append(b, byte(len(order)>>8), byte(len(order)))
	b = append(b, order...)
	want := sha256.Sum256(b)
	if got := Commit(seed, order); !bytes.Equal(got, want[:]) {
		t.Fatalf("Commit = %x, want %x", got, want)
	}
}

func TestStreamLayout(t *testing.T) {
	seed, client := testSeed("stream", 2), "table-7/shoe-3"
	s := NewStream(seed, client)
	ks := clientKeystream(client)
	for i := range ServerSeedSize {
		if got := byte(s.Bits(8)); got != seed[i]^ks[i] {
			t.Fatalf("stream byte %d = %x, want seed^C = %x", i, got, seed[i]^ks[i])
		}
	}
	for blk := uint64(0); blk < 3; blk++ {
		b := []byte("chemmy-shoe-tail-v1")
		b = binary.BigEndian.AppendUint16(b, uint16(len(seed)))
		b = append(b, seed...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(client)))
		b = append(b, client...)
		b = binary.BigEndian.AppendUint64(b, blk)
		want := sha256.Sum256(b)
		for i := range want {
			if got := byte(s.Bits(8)); got != want[i] {
				t.Fatalf("tail block %d byte %d = %x, want %x", blk, i, got, want[i])
			}
		}
	}
}

// TestIntnRejectsOutOfRange: Intn(5) reads 3 bits at a time, MSB first,
// rejects 7, 6, 5 and keeps 3; bits are never reduced modulo n and never
// dropped.
func TestIntnRejectsOutOfRange(t *testing.T) {
	// 111 110 101 011 | 1000 = 11111010 10111000
	s := NewStream(seedForStream([]byte{0b11111010, 0b10111000}, ""), "")
	if got := s.Intn(5); got != 3 {
		t.Fatalf("Intn(5) = %d, want 3", got)
	}
	if got := s.Bits(4); got != 0b1000 {
		t.Fatalf("next bits %04b, want 1000: bits were dropped", got)
	}
	if got := s.Intn(1); got != 0 {
		t.Fatalf("Intn(1) = %d", got)
	}
}

// TestKnownAnswer pins the construction: a change to the stream, the
// shuffle or the commitment breaks every past reveal and must be a new
// version.
func TestKnownAnswer(t *testing.T) {
	seed := make([]byte, ServerSeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	order, st := Shuffle(8, seed, "chemmy")
	got := hex.EncodeToString(Commit(seed, order))
	cards, _ := Cards(order[:6])
	var codes []string
	for _, c := range cards {
		codes = append(codes, c.String())
	}
	t.Logf("commitment %s first %v cut %d", got, codes, RandomCut(st, len(order)))
	if got != knownCommitment {
		t.Fatalf("commitment %s, pinned %s", got, knownCommitment)
	}
}

// SHOE-SHUFFLE: the shuffle is a permutation of the decks, a pure
// function of the seeds, and changes with either seed.
func TestSHOEShuffle(t *testing.T) {
	for _, decks := range []int{2, 3, 6, 8} {
		seed := testSeed("perm", uint64(decks))
		a, _ := Shuffle(decks, seed, "x")
		b, _ := Shuffle(decks, seed, "x")
		if !bytes.Equal(a, b) {
			t.Fatal("not a pure function of the seeds")
		}
		sorted := slices.Clone(a)
		slices.Sort(sorted)
		fresh := FreshOrder(decks)
		slices.Sort(fresh)
		if !bytes.Equal(sorted, fresh) || len(a) != decks*52 {
			t.Fatalf("%d decks: not a permutation of the decks", decks)
		}
		if c, _ := Shuffle(decks, seed, "y"); bytes.Equal(a, c) {
			t.Fatal("client seed changes nothing")
		}
		seed2 := slices.Clone(seed)
		seed2[0] ^= 1
		if c, _ := Shuffle(decks, seed2, "x"); bytes.Equal(a, c) {
			t.Fatal("server seed changes nothing")
		}
	}
}

// seedForOrder builds a server seed whose shuffle is exactly target: the
// Fisher-Yates draws are encoded with no rejection, MSB first, then
// masked with the client keystream. It proves constructively that every
// order is reachable (the map seed -> order is onto).
func seedForOrder(t *testing.T, decks int, target []byte, client string, fill *rand.Rand) []byte {
	cur := FreshOrder(decks)
	var bitsOut []byte
	var acc, nacc uint
	put := func(v uint, k uint) {
		for i := int(k) - 1; i >= 0; i-- {
			acc = acc<<1 | (v>>uint(i))&1
			nacc++
			if nacc == 8 {
				bitsOut = append(bitsOut, byte(acc))
				acc, nacc = 0, 0
			}
		}
	}
	used := 0
	for i := len(cur) - 1; i > 0; i-- {
		j := slices.Index(cur[:i+1], target[i])
		if j < 0 {
			t.Fatal("target is not a permutation of the decks")
		}
		k := uint(bits.Len64(uint64(i)))
		put(uint(j), k)
		used += int(k)
		cur[i], cur[j] = cur[j], cur[i]
	}
	for nacc != 0 { // random filler after the encoding
		put(uint(fill.IntN(2)), 1)
	}
	for len(bitsOut) < ServerSeedSize {
		bitsOut = append(bitsOut, byte(fill.IntN(256)))
	}
	if used > ServerSeedSize*8 {
		t.Fatalf("encoding needs %d bits > %d", used, ServerSeedSize*8)
	}
	t.Logf("%d cards: %d bits of %d encode the order", len(cur), used, ServerSeedSize*8)
	return seedForStream(bitsOut, client)
}

func TestEveryOrderReachable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, decks := range []int{8, 6, 3, 2} {
		for trial := range 5 {
			target := FreshOrder(decks)
			r.Shuffle(len(target), func(i, j int) { target[i], target[j] = target[j], target[i] })
			if trial == 0 { // an extreme order: sorted, reversed
				slices.Sort(target)
				slices.Reverse(target)
			}
			client := []string{"", "alice", "table-1/shoe-9"}[trial%3]
			seed := seedForOrder(t, decks, target, client, r)
			if got, _ := Shuffle(decks, seed, client); !bytes.Equal(got, target) {
				t.Fatalf("%d decks trial %d: the constructed seed does not give the target", decks, trial)
			}
		}
	}
}

func TestBurnValue(t *testing.T) {
	// Source: RULES.md SHOE-BURN (by first card value: ace 1, 2-9 face, ten and faces 10)
	for code, want := range map[string]int{"AC": 1, "2D": 2, "9H": 9, "TS": 10, "JC": 10, "QD": 10, "KH": 10} {
		c, _ := rules.ParseCard(code)
		if got := BurnValue(byte(c.Index())); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
}

// closedShoe deals a shoe to a given point and builds its reveal.
func closedShoe(decks int, seed []byte, client string, cut int, random, byFirst bool, burn, dealt int) Reveal {
	order, st := Shuffle(decks, seed, client)
	if random {
		cut = RandomCut(st, len(order))
	}
	loaded, _ := Cards(Cut(order, cut))
	if byFirst {
		burn = 1 + BurnValue(byte(loaded[0].Index()))
	}
	r := Reveal{Decks: decks, ServerSeed: seed, ClientSeed: client, Commitment: Commit(seed, order), Order: order,
		CutPosition: cut, CutRandom: random, BurnByFirstCard: byFirst, CardsLeft: len(order) - burn - dealt}
	for _, c := range loaded[:burn] {
		r.Burned = append(r.Burned, c.String())
	}
	for _, c := range loaded[burn : burn+dealt] {
		r.Dealt = append(r.Dealt, c.String())
	}
	return r
}

func TestVerify(t *testing.T) {
	seed := testSeed("verify", 1)
	good := []Reveal{
		closedShoe(8, seed, "c", 0, true, false, 3, 400),
		closedShoe(6, seed, "", 17, false, false, 4, 100),
		closedShoe(3, seed, "x", 5, false, true, 0, 50),
		closedShoe(2, seed, "y", 0, true, true, 0, 0),
	}
	for i, r := range good {
		if err := Verify(r); err != nil {
			t.Fatalf("good reveal %d: %v", i, err)
		}
	}
	r := good[0]
	tamper := map[string]func(r *Reveal){
		"seed byte":      func(r *Reveal) { r.ServerSeed = slices.Clone(r.ServerSeed); r.ServerSeed[100] ^= 1 },
		"short seed":     func(r *Reveal) { r.ServerSeed = r.ServerSeed[:32] },
		"client seed":    func(r *Reveal) { r.ClientSeed = "d" },
		"order swapped":  func(r *Reveal) { r.Order = slices.Clone(r.Order); r.Order[0], r.Order[1] = r.Order[2], r.Order[0] },
		"commitment":     func(r *Reveal) { r.Commitment = slices.Clone(r.Commitment); r.Commitment[0] ^= 1 },
		"random cut":     func(r *Reveal) { r.CutPosition = (r.CutPosition + 1) % len(r.Order) },
		"cut range":      func(r *Reveal) { r.CutRandom = false; r.CutPosition = len(r.Order) },
		"burned":         func(r *Reveal) { r.Burned = append([]string{r.Dealt[0]}, r.Burned[1:]...); r.Dealt = r.Dealt[:1] },
		"burn count":     func(r *Reveal) { r.Burned = r.Burned[:2]; r.CardsLeft++ },
		"dealt card":     func(r *Reveal) { r.Dealt = slices.Clone(r.Dealt); r.Dealt[5], r.Dealt[6] = r.Dealt[6], r.Dealt[5] },
		"card skipped":   func(r *Reveal) { r.Dealt = append(slices.Clone(r.Dealt[:5]), r.Dealt[6:]...); r.CardsLeft++ },
		"cards left":     func(r *Reveal) { r.CardsLeft++ },
		"by first card":  func(r *Reveal) { r.BurnByFirstCard = true },
		"decks":          func(r *Reveal) { r.Decks = 6 },
		"too many dealt": func(r *Reveal) { r.Dealt = append(r.Dealt, make([]string, 20)...) },
	}
	for name, f := range tamper {
		c := r
		f(&c)
		if err := Verify(c); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: Verify = %v, want a mismatch", name, err)
		}
	}
}

func BenchmarkShuffle8Decks(b *testing.B) {
	seed := NewServerSeed()
	for b.Loop() {
		order, _ := Shuffle(8, seed, "client")
		_ = Commit(seed, order)
	}
}

const knownCommitment = "e56ad53981392d6e15fedcb9ccbb3f13a3a0162811a6371d32481ead3fa4485e"
