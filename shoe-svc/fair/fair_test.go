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

// maskKeystream is M_0 || ... || M_15 computed from the documented
// layout, independently of NewStream.
func maskKeystream(client string, players ...string) []byte {
	var ctx []byte
	ctx = binary.BigEndian.AppendUint16(ctx, uint16(len(client)))
	ctx = append(ctx, client...)
	ctx = binary.BigEndian.AppendUint16(ctx, uint16(len(players)))
	for _, p := range players {
		ctx = binary.BigEndian.AppendUint16(ctx, uint16(len(p)))
		ctx = append(ctx, p...)
	}
	var out []byte
	for i := uint64(0); len(out) < ServerSeedSize; i++ {
		b := append([]byte("chemmy-shoe-mask-v2"), ctx...)
		b = binary.BigEndian.AppendUint64(b, i)
		h := sha256.Sum256(b)
		out = append(out, h[:]...)
	}
	return out
}

// seedForStream returns the server seed whose stream starts with prefix
// (up to 512 bytes) for the public seeds: the inverse of the mask.
func seedForStream(prefix []byte, client string, players ...string) []byte {
	seed := make([]byte, ServerSeedSize)
	copy(seed, prefix)
	ks := maskKeystream(client, players...)
	for i := range seed {
		seed[i] ^= ks[i]
	}
	return seed
}

func TestCommitLayout(t *testing.T) {
	seed := testSeed("commit", 1)
	want := sha256.Sum256(seed)
	if got := Commit(seed); !bytes.Equal(got, want[:]) || len(got) != CommitmentSize {
		t.Fatalf("Commit = %x, want SHA-256(seed) %x", got, want)
	}
}

func TestStreamLayout(t *testing.T) {
	seed, client, players := testSeed("stream", 2), "table-7/shoe-3", []string{"alice's seed", ""}
	s := NewStream(Seeds{Server: seed, Client: client, Players: players})
	ks := maskKeystream(client, players...)
	for i := range ServerSeedSize {
		if got := byte(s.Bits(8)); got != seed[i]^ks[i] {
			t.Fatalf("stream byte %d = %x, want seed^M = %x", i, got, seed[i]^ks[i])
		}
	}
	for blk := uint64(0); blk < 3; blk++ {
		b := []byte("chemmy-shoe-tail-v2")
		b = binary.BigEndian.AppendUint16(b, uint16(len(seed)))
		b = append(b, seed...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(client)))
		b = append(b, client...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(players)))
		for _, p := range players {
			b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
			b = append(b, p...)
		}
		b = binary.BigEndian.AppendUint64(b, blk)
		want := sha256.Sum256(b)
		for i := range want {
			if got := byte(s.Bits(8)); got != want[i] {
				t.Fatalf("tail block %d byte %d = %x, want %x", blk, i, got, want[i])
			}
		}
	}
}

// The encoding of the public seeds is unambiguous: moving bytes between
// the client seed and a player seed, splitting a player seed or adding an
// empty one changes the stream.
func TestPublicSeedsUnambiguous(t *testing.T) {
	seed := testSeed("ctx", 1)
	first := func(s Seeds) uint32 { return NewStream(s).Bits(32) }
	variants := []Seeds{
		{Server: seed, Client: "ab", Players: []string{"c"}},
		{Server: seed, Client: "a", Players: []string{"bc"}},
		{Server: seed, Client: "abc"},
		{Server: seed, Client: "abc", Players: []string{""}},
		{Server: seed, Client: "a", Players: []string{"b", "c"}},
		{Server: seed, Client: "a", Players: []string{"c", "b"}},
	}
	seen := map[uint32]int{}
	for i, v := range variants {
		if j, ok := seen[first(v)]; ok {
			t.Fatalf("seeds %d and %d give the same stream", j, i)
		}
		seen[first(v)] = i
	}
}

// TestIntnRejectsOutOfRange: Intn(5) reads 3 bits at a time, MSB first,
// rejects 7, 6, 5 and keeps 3; bits are never reduced modulo n and never
// dropped.
func TestIntnRejectsOutOfRange(t *testing.T) {
	// 111 110 101 011 | 1000 = 11111010 10111000
	s := NewStream(Seeds{Server: seedForStream([]byte{0b11111010, 0b10111000}, "")})
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
	order, st := Shuffle(8, Seeds{Server: seed, Client: "chemmy", Players: []string{"player"}})
	sum := sha256.Sum256(order)
	got := hex.EncodeToString(sum[:])
	cards, _ := Cards(order[:6])
	var codes []string
	for _, c := range cards {
		codes = append(codes, c.String())
	}
	t.Logf("order SHA-256 %s first %v cut %d", got, codes, RandomCut(st, len(order)))
	if got != knownOrder {
		t.Fatalf("order SHA-256 %s, pinned %s", got, knownOrder)
	}
	if c := hex.EncodeToString(Commit(seed)); c != knownCommitment {
		t.Fatalf("commitment %s, pinned %s", c, knownCommitment)
	}
}

// SHOE-SHUFFLE: the shuffle is a permutation of the decks, a pure
// function of the seeds, and changes with any seed.
func TestSHOEShuffle(t *testing.T) {
	for _, decks := range []int{2, 3, 6, 8} {
		seed := testSeed("perm", uint64(decks))
		a, _ := Shuffle(decks, Seeds{Server: seed, Client: "x", Players: []string{"p"}})
		b, _ := Shuffle(decks, Seeds{Server: seed, Client: "x", Players: []string{"p"}})
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
		if c, _ := Shuffle(decks, Seeds{Server: seed, Client: "y", Players: []string{"p"}}); bytes.Equal(a, c) {
			t.Fatal("client seed changes nothing")
		}
		if c, _ := Shuffle(decks, Seeds{Server: seed, Client: "x", Players: []string{"q"}}); bytes.Equal(a, c) {
			t.Fatal("player seed changes nothing")
		}
		if c, _ := Shuffle(decks, Seeds{Server: seed, Client: "x"}); bytes.Equal(a, c) {
			t.Fatal("dropping the player seed changes nothing")
		}
		seed2 := slices.Clone(seed)
		seed2[0] ^= 1
		if c, _ := Shuffle(decks, Seeds{Server: seed2, Client: "x", Players: []string{"p"}}); bytes.Equal(a, c) {
			t.Fatal("server seed changes nothing")
		}
	}
}

// seedForOrder builds a server seed whose shuffle is exactly target: the
// Fisher-Yates draws are encoded with no rejection, MSB first, then
// masked with the keystream of the public seeds. It proves constructively
// that every order is reachable (the map seed -> order is onto) for any
// public seeds known in advance.
func seedForOrder(t *testing.T, decks int, target []byte, client string, players []string, fill *rand.Rand) []byte {
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
	return seedForStream(bitsOut, client, players...)
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
			players := [][]string{nil, {"bob's seed"}, {"x", "y"}}[trial%3]
			seed := seedForOrder(t, decks, target, client, players, r)
			if got, _ := Shuffle(decks, Seeds{Server: seed, Client: client, Players: players}); !bytes.Equal(got, target) {
				t.Fatalf("%d decks trial %d: the constructed seed does not give the target", decks, trial)
			}
		}
	}
}

// TestServerCannotChooseTheOrder: a server that wants a target order must
// fix its seed (the commitment) before the player's seed is known. A seed
// built for the target with no player seed, or with a guessed one, gives
// another order once the player's real seed is mixed in; the seed that
// would give the target with the real player seed exists (every order is
// reachable) but is not the committed one, and Verify refuses it.
func TestServerCannotChooseTheOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	target := FreshOrder(6)
	r.Shuffle(len(target), func(i, j int) { target[i], target[j] = target[j], target[i] })
	const client = "table/T1/shoe/1"
	for _, guess := range [][]string{nil, {"guessed"}} {
		rigged := seedForOrder(t, 6, target, client, guess, r)
		if got, _ := Shuffle(6, Seeds{Server: rigged, Client: client, Players: guess}); !bytes.Equal(got, target) {
			t.Fatal("the rigged seed does not give the target with the guessed player seeds")
		}
		commitment := Commit(rigged) // published before the cut
		got, _ := Shuffle(6, Seeds{Server: rigged, Client: client, Players: []string{"alice: 7f3a9c"}})
		if bytes.Equal(got, target) {
			t.Fatal("the player's seed did not change the rigged order")
		}
		// After the cut: the seed for the target with the real player seed.
		late := seedForOrder(t, 6, target, client, []string{"alice: 7f3a9c"}, r)
		rv := closedShoe(6, late, client, []string{"alice: 7f3a9c"}, 0, false, false, 3, 10)
		if err := Verify(rv); err != nil {
			t.Fatalf("a consistent reveal of the late seed: %v", err)
		}
		rv.Commitment = commitment
		if err := Verify(rv); !errors.Is(err, ErrMismatch) {
			t.Fatalf("the late seed passes the published commitment: %v", err)
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
func closedShoe(decks int, seed []byte, client string, players []string, cut int, random, byFirst bool, burn, dealt int) Reveal {
	order, st := Shuffle(decks, Seeds{Server: seed, Client: client, Players: players})
	if random {
		cut = RandomCut(st, len(order))
	}
	loaded, _ := Cards(Cut(order, cut))
	if byFirst {
		burn = 1 + BurnValue(byte(loaded[0].Index()))
	}
	r := Reveal{Decks: decks, ServerSeed: seed, ClientSeed: client, PlayerSeeds: players, Commitment: Commit(seed), Order: order,
		CutPosition: cut, CutRandom: random, BurnByFirstCard: byFirst, CardsLeft: len(order) - burn - dealt}
	if !byFirst {
		r.Burn = burn // announced, and burned
	}
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
		closedShoe(8, seed, "c", []string{"alice's seed"}, 0, true, false, 3, 400),
		closedShoe(6, seed, "", []string{"bob"}, 17, false, false, 4, 100),
		closedShoe(3, seed, "x", nil, 5, false, true, 0, 50),
		closedShoe(2, seed, "y", nil, 0, true, true, 0, 0),
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
		"player seed":    func(r *Reveal) { r.PlayerSeeds = []string{"alice's seed!"} },
		"no player seed": func(r *Reveal) { r.PlayerSeeds = nil },
		"long seed":      func(r *Reveal) { r.PlayerSeeds = []string{string(make([]byte, MaxPlayerSeed+1))} },
		"no order":       func(r *Reveal) { r.Order = nil },
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

// TestVerifyHoldsTheAnnouncedBurn: a shoe that announced a burn of 3
// (or 4) and burned the other count, each card of it from the right
// order, does not verify; nor does an announcement outside 3 or 4, nor a
// reveal that announces none. Source: RULES.md SHOE-BURN.
func TestVerifyHoldsTheAnnouncedBurn(t *testing.T) {
	seed := testSeed("announced burn", 1)
	for _, c := range []struct{ announced, burned int }{{3, 4}, {4, 3}, {0, 3}, {5, 3}, {2, 3}} {
		// The burned cards and the deal are right for what was burned:
		// only the announcement differs.
		r := closedShoe(6, seed, "c", []string{"p"}, 0, true, false, c.burned, 20)
		r.Burn = c.announced
		if err := Verify(r); !errors.Is(err, ErrMismatch) {
			t.Errorf("announced %d, burned %d: Verify = %v, want a mismatch", c.announced, c.burned, err)
		}
		r.Burn = c.burned
		if err := Verify(r); err != nil {
			t.Errorf("announced and burned %d: %v", c.burned, err)
		}
	}
}

// TestVerifyMoveToBottom: the old game's banker moved k top cards to the
// bottom after the burn (OLD-CUT): the reveal with MovedToBottom = k
// verifies the rotated dealing; without it, with another k, or out of
// 1..cards after the burn - 1, it does not.
func TestVerifyMoveToBottom(t *testing.T) {
	seed := testSeed("move", 1)
	order, _ := Shuffle(2, Seeds{Server: seed, Client: "o", Players: []string{"p"}})
	loaded := Cut(order, 30)
	dealing, _ := Cards(MoveToBottom(loaded[3:], 9))
	burned, _ := Cards(loaded[:3])
	if d, _ := Cards(loaded[3:]); dealing[len(dealing)-9] != d[0] || dealing[0] != d[9] {
		t.Fatal("MoveToBottom does not put the first 9 cards last")
	}
	r := Reveal{Decks: 2, ServerSeed: seed, ClientSeed: "o", PlayerSeeds: []string{"p"}, Commitment: Commit(seed), Order: order,
		CutPosition: 30, MovedToBottom: 9, CardsLeft: 1, Burn: 3}
	for _, c := range burned {
		r.Burned = append(r.Burned, c.String())
	}
	for _, c := range dealing[:len(dealing)-1] {
		r.Dealt = append(r.Dealt, c.String())
	}
	if err := Verify(r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 8, 10, -1, 101, 102} {
		c := r
		c.MovedToBottom = k
		if err := Verify(c); !errors.Is(err, ErrMismatch) {
			t.Errorf("moved %d: Verify = %v, want a mismatch", k, err)
		}
	}
}

func BenchmarkShuffle8Decks(b *testing.B) {
	seed := NewServerSeed()
	for b.Loop() {
		_, _ = Shuffle(8, Seeds{Server: seed, Client: "client", Players: []string{"player"}})
	}
}

const (
	knownOrder      = "92445641c783945c5509ad56ed48e5ad74c19ff858e1749eb5cc61ab6820ae31"
	knownCommitment = "110009dcee21620b166f3abfecb5eff7a873be729d1c2d53822e7acc5f34eb9b"
)
