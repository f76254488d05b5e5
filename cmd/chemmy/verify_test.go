package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
	"github.com/chemmy/chemmy/services/kit/trust"
	"github.com/chemmy/chemmy/services/rules"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// verifyJSON runs `chemmy verify args...` on a reveal printed as grpcurl
// prints it, and returns the exit status and stdout.
func verifyJSON(t *testing.T, rv *shoev1.ShoeReveal, args ...string) (int, string) {
	t.Helper()
	b, err := protojson.Marshal(&shoev1.GetShoeRevealResponse{Reveal: rv})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := verifyMain(args, bytes.NewReader(b), &out, &errb)
	if code == 2 {
		t.Fatalf("chemmy verify %v: exit 2: %s", args, errb.String())
	}
	return code, out.String()
}

// tableShoe plays a table's shoe against a real shoe-svc: opened by the
// table service with its client seed and alice as cutter (the
// commitment is published), cut by alice with her own fresh seed, dealt
// by the table until the cut card's coup is complete, and closed by the
// table. It returns the
// commitment as the shoe showed it when it opened, alice's seed and the
// reveal.
func tableShoe(t *testing.T) (commitment []byte, seed string, rv *shoev1.ShoeReveal) {
	t.Helper()
	c, table, alice := shoeService(t)
	created, err := c.CreateShoe(table, &shoev1.CreateShoeRequest{RequestId: "table/T1/shoe/1", Owner: "T1",
		ClientSeed: "table/T1/shoe/1", CutterPlayerId: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Shoe.ShoeId
	commitment = created.Shoe.Commitment
	seed = "alice-" + rand.Text()
	if _, err := c.Cut(alice, &shoev1.CutRequest{RequestId: "cut", ShoeId: id, PlayerId: "alice", Position: 77, PlayerSeed: seed}); err != nil {
		t.Fatal(err)
	}
	return commitment, seed, playShoe(t, c, table, alice, id)
}

// shoeService starts a real shoe-svc and returns a client and the
// contexts of the table service and of alice, a player.
func shoeService(t *testing.T) (c shoev1.ShoeServiceClient, table, alice context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	svc, err := shoesvc.Start(ctx, shoesvc.Config{ListenAddr: "127.0.0.1:0", DBPath: filepath.Join(t.TempDir(), "shoe.db"),
		Trust: trust.Config{Insecure: true}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Stop(); _ = svc.Wait() })
	conn, err := grpc.NewClient(svc.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return shoev1.NewShoeServiceClient(conn), auth.Outgoing(ctx, auth.Caller{Subject: "table-svc", Role: auth.RoleService}),
		auth.Outgoing(ctx, auth.Caller{Subject: "alice", Role: auth.RolePlayer})
}

// playShoe deals shoe id as its table would and returns its reveal, as
// alice reads it.
func playShoe(t *testing.T, c shoev1.ShoeServiceClient, table, alice context.Context, id string) *shoev1.ShoeReveal {
	t.Helper()
	// Coups of 5 cards until the cut card comes out in one; the table
	// completes it and closes the shoe between coups.
	for i := 0; ; i++ {
		d, err := c.DealCard(table, &shoev1.DealCardRequest{RequestId: fmt.Sprintf("coup-%d/card/%d", i/5, i%5), ShoeId: id})
		if err != nil {
			t.Fatal(err)
		}
		if d.CutCardOut && i%5 == 4 {
			break
		}
	}
	if _, err := c.CloseShoe(table, &shoev1.CloseShoeRequest{RequestId: "table/T1/close/1", ShoeId: id}); err != nil {
		t.Fatal(err)
	}
	r, err := c.GetShoeReveal(alice, &shoev1.GetShoeRevealRequest{ShoeId: id})
	if err != nil {
		t.Fatal(err)
	}
	return r.Reveal
}

// TestVerifyTableSeeds: a table's shoe seeded with its players' seeds
// after its commitment (SeedShoe; the table collected them with JoinTable
// and PlaceBet) verifies with alice's commitment and her seed, names who
// gave each seed, and fails with a seed she did not give.
func TestVerifyTableSeeds(t *testing.T) {
	c, table, alice := shoeService(t)
	created, err := c.CreateShoe(table, &shoev1.CreateShoeRequest{RequestId: "table/T2/shoe/1", Owner: "T2",
		ClientSeed: "table/T2/shoe/1", AwaitPlayerSeeds: true})
	if err != nil {
		t.Fatal(err)
	}
	id, commitment := created.Shoe.ShoeId, created.Shoe.Commitment
	seed := "alice-" + rand.Text()
	if _, err := c.SeedShoe(table, &shoev1.SeedShoeRequest{RequestId: "table/T2/shoe/1/seed", ShoeId: id, Seeds: []*shoev1.PlayerSeed{
		{PlayerId: "bob", Seed: "bob-" + rand.Text()}, {PlayerId: "alice", Seed: seed}}}); err != nil {
		t.Fatal(err)
	}
	rv := playShoe(t, c, table, alice, id)
	code, out := verifyJSON(t, rv, "-commitment", hex.EncodeToString(commitment), "-player-seed", seed)
	sum := sha256.Sum256([]byte(seed)) // her commitment, as her client made it
	if code != 0 || !strings.Contains(out, strconv.Quote(seed)+" (alice)") || strings.Contains(out, "NOTE") ||
		!strings.Contains(out, "your seed (alice) is in the shuffle; its commitment SHA-256 = "+hex.EncodeToString(sum[:])) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if code, out := verifyJSON(t, rv, "-commitment", hex.EncodeToString(commitment), "-player-seed", "alice-another"); code != 1 ||
		!strings.HasPrefix(out, "MISMATCH") {
		t.Fatalf("another seed: exit %d:\n%s", code, out)
	}
}

// TestVerifyCLIHoldsTheAnnouncedBurn: a table that announced a burn of 4
// cards: its shoe's reveal says 4 and verifies with -burn 4; -burn 3 (or
// a reveal that burned 3 and says so, where the table announced 4) is a
// MISMATCH, as is a reveal that announces 4 and burned 3.
// Source: RULES.md SHOE-BURN.
func TestVerifyCLIHoldsTheAnnouncedBurn(t *testing.T) {
	c, table, alice := shoeService(t)
	created, err := c.CreateShoe(table, &shoev1.CreateShoeRequest{RequestId: "table/T3/shoe/1", Owner: "T3",
		ClientSeed: "table/T3/shoe/1", AwaitPlayerSeeds: true, Burn: 4})
	if err != nil {
		t.Fatal(err)
	}
	if created.Shoe.Burn != 4 {
		t.Fatalf("the shoe announces a burn of %d", created.Shoe.Burn)
	}
	if _, err := c.SeedShoe(table, &shoev1.SeedShoeRequest{RequestId: "table/T3/shoe/1/seed", ShoeId: created.Shoe.ShoeId}); err != nil {
		t.Fatal(err)
	}
	rv := playShoe(t, c, table, alice, created.Shoe.ShoeId)
	if rv.Burn != 4 || len(rv.Burned) != 4 {
		t.Fatalf("the reveal: burn %d, %d burned", rv.Burn, len(rv.Burned))
	}
	if code, out := verifyJSON(t, rv, "-burn", "4"); code != 0 || !strings.Contains(out, "4 cards burned, as the table announced") {
		t.Fatalf("-burn 4: exit %d:\n%s", code, out)
	}
	if code, out := verifyJSON(t, rv, "-burn", "3"); code != 1 || !strings.HasPrefix(out, "MISMATCH") {
		t.Fatalf("-burn 3: exit %d:\n%s", code, out)
	}
	// A server that burns 3 and says so, at a table that announced 4: the
	// cards are the order's, only -burn catches it.
	three := proto.CloneOf(rv)
	three.Burn, three.Burned, three.Dealt, three.CardsLeft = 3, rv.Burned[:3], append([]string{rv.Burned[3]}, rv.Dealt...), rv.CardsLeft
	three.Dealt = three.Dealt[:len(rv.Dealt)]
	three.CardsLeft++
	if code, out := verifyJSON(t, three); code != 0 {
		t.Fatalf("the 3-card burn on its own: exit %d:\n%s", code, out)
	}
	if code, out := verifyJSON(t, three, "-burn", "4"); code != 1 || !strings.Contains(out, "announced a burn of 4") {
		t.Fatalf("the 3-card burn, -burn 4: exit %d:\n%s", code, out)
	}
	// A reveal that announces 4 and burned 3: fair.Verify's mismatch.
	lying := proto.CloneOf(three)
	lying.Burn = 4
	if code, out := verifyJSON(t, lying); code != 1 || !strings.Contains(out, "3 cards burned, 4 announced") {
		t.Fatalf("announced 4, burned 3: exit %d:\n%s", code, out)
	}
}

// seedFor is what a dishonest server can compute: the server seed whose
// shuffle is exactly target for the given public seeds (every order is
// reachable, package fair). It encodes the Fisher-Yates draws with no
// rejection, pads with random bits and removes the mask, which it reads
// as the stream of an all-zero server seed.
func seedFor(t *testing.T, target []byte, client string, players []string) []byte {
	t.Helper()
	cur := fair.FreshOrder(len(target) / rules.DeckSize)
	var enc []byte
	var acc byte
	nacc := 0
	put := func(v, k int) {
		for i := k - 1; i >= 0; i-- {
			acc = acc<<1 | byte(v>>i)&1
			if nacc++; nacc == 8 {
				enc, acc, nacc = append(enc, acc), 0, 0
			}
		}
	}
	for i := len(cur) - 1; i > 0; i-- {
		j := slices.Index(cur[:i+1], target[i])
		put(j, bits.Len(uint(i)))
		cur[i], cur[j] = cur[j], cur[i]
	}
	for nacc != 0 {
		put(0, 1)
	}
	pad := make([]byte, fair.ServerSeedSize-len(enc))
	_, _ = rand.Read(pad)
	enc = append(enc, pad...)
	mask := fair.NewStream(fair.Seeds{Server: make([]byte, fair.ServerSeedSize), Client: client, Players: players})
	for i := range enc {
		enc[i] ^= byte(mask.Bits(8))
	}
	if got, _ := fair.Shuffle(len(target)/rules.DeckSize, fair.Seeds{Server: enc, Client: client, Players: players}); !bytes.Equal(got, target) {
		t.Fatal("seedFor: the constructed seed does not give the target")
	}
	return enc
}

// forged is the reveal a dishonest server publishes: the honest reveal's
// shape (shoe, cut, burn, number of cards dealt) with the given seeds,
// commitment and order, and the burned and dealt cards taken from that
// order, so that everything but the seeds is self-consistent.
func forged(honest *shoev1.ShoeReveal, server []byte, players []string, commitment, order []byte) *shoev1.ShoeReveal {
	rv := proto.CloneOf(honest)
	rv.ServerSeed, rv.PlayerSeeds, rv.Commitment, rv.Order = server, players, commitment, order
	loaded, _ := fair.Cards(fair.Cut(order, int(rv.CutPosition)))
	rv.Burned, rv.Dealt = nil, nil
	for i, c := range loaded[:len(honest.Burned)+len(honest.Dealt)] {
		if i < len(honest.Burned) {
			rv.Burned = append(rv.Burned, c.String())
		} else {
			rv.Dealt = append(rv.Dealt, c.String())
		}
	}
	return rv
}

// TestVerifyHonestShoe: a table's shoe cut with alice's seed verifies
// with the commitment she saw at the opening (as hex and as grpcurl's
// base64) and her seed; and the reveal names her seed.
func TestVerifyHonestShoe(t *testing.T) {
	commitment, seed, rv := tableShoe(t)
	if !slices.Equal(rv.PlayerSeeds, []string{seed}) || !bytes.Equal(rv.Commitment, commitment) {
		t.Fatalf("reveal %v", rv)
	}
	for _, c := range []string{hex.EncodeToString(commitment), base64.StdEncoding.EncodeToString(commitment)} {
		code, out := verifyJSON(t, rv, "-commitment", c, "-player-seed", seed)
		if code != 0 || !strings.HasPrefix(out, "OK shoe "+rv.ShoeId) || !strings.Contains(out, "your seed (alice) is in the shuffle") ||
			strings.Contains(out, "NOTE") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	}
	code, out := verifyJSON(t, rv, "-player-seed", "somebody else's seed")
	if code != 1 || !strings.HasPrefix(out, "MISMATCH") {
		t.Fatalf("another seed: exit %d:\n%s", code, out)
	}
	// A shoe without player seed verifies with a NOTE.
	server := fair.NewServerSeed()
	order, st := fair.Shuffle(6, fair.Seeds{Server: server, Client: "table/T1/shoe/2"})
	base := proto.CloneOf(rv)
	base.ClientSeed, base.CutRandom, base.CutBy = "table/T1/shoe/2", true, ""
	base.CutPosition = int32(fair.RandomCut(st, len(order)))
	random := forged(base, server, nil, fair.Commit(server), order)
	if code, out := verifyJSON(t, random); code != 0 || !strings.Contains(out, "NOTE: no player seed") {
		t.Fatalf("random cut: exit %d:\n%s", code, out)
	}
}

// TestVerifyServerCannotPickOrder: a dishonest shoe-svc wants the table's
// shoe to deal a target order of its choice (here the fresh decks sorted
// by rank, tens and faces first: banker and player draw nothing but
// baccarats). Whatever it does, alice's `chemmy verify -commitment C
// -player-seed S` catches it or the target is not dealt:
//
//  1. rig before the commitment: it commits to a seed built for the target
//     without (or with a guessed) player seed; alice's real seed then
//     gives another order: the honest reveal verifies, the target was not
//     dealt;
//  2. rig after the cut: it builds the seed for the target with alice's
//     real seed, and reveals it under the published commitment: MISMATCH;
//  3. same, with a fresh commitment to the new seed: the reveal is
//     self-consistent (fair.Verify passes) but its commitment is not the
//     one alice saw: MISMATCH with -commitment (which is why she gives it);
//  4. drop alice's seed (or swap it for one it ground) and reveal a seed
//     built for the target without it: MISMATCH;
//  5. keep the committed seed and alice's seed but claim the target
//     order: MISMATCH.
func TestVerifyServerCannotPickOrder(t *testing.T) {
	commitment, seed, honest := tableShoe(t)
	C := hex.EncodeToString(commitment)
	client, decks := honest.ClientSeed, int(honest.Decks)
	target := fair.FreshOrder(decks)
	slices.SortStableFunc(target, func(a, b byte) int { return fair.BurnValue(b) - fair.BurnValue(a) })

	// 1. Rigged before the commitment.
	for _, guess := range [][]string{nil, {"alice-guess"}} {
		rigged := seedFor(t, target, client, guess)
		got, _ := fair.Shuffle(decks, fair.Seeds{Server: rigged, Client: client, Players: []string{seed}})
		if bytes.Equal(got, target) {
			t.Fatal("alice's seed did not undo the rigged seed")
		}
		rv := forged(honest, rigged, []string{seed}, fair.Commit(rigged), got)
		if code, out := verifyJSON(t, rv, "-commitment", hex.EncodeToString(fair.Commit(rigged)), "-player-seed", seed); code != 0 {
			t.Fatalf("the rigged-then-cut shoe is honest from then on: exit %d\n%s", code, out)
		}
	}

	late := seedFor(t, target, client, []string{seed})
	early := seedFor(t, target, client, nil)
	for name, tc := range map[string]struct {
		rv   *shoev1.ShoeReveal
		args []string
	}{
		"2. late seed under the published commitment": {forged(honest, late, []string{seed}, commitment, target),
			[]string{"-commitment", C, "-player-seed", seed}},
		"3. late seed with a new commitment": {forged(honest, late, []string{seed}, fair.Commit(late), target),
			[]string{"-commitment", C, "-player-seed", seed}},
		"4. alice's seed dropped": {forged(honest, early, nil, fair.Commit(early), target),
			[]string{"-commitment", C, "-player-seed", seed}},
		"4. alice's seed dropped, commitment not pinned": {forged(honest, early, nil, fair.Commit(early), target),
			[]string{"-player-seed", seed}},
		"4. alice's seed swapped": {forged(honest, seedFor(t, target, client, []string{"ground"}), []string{"ground"}, commitment, target),
			[]string{"-commitment", C, "-player-seed", seed}},
		"5. committed seeds, target order claimed": {forged(honest, honest.ServerSeed, []string{seed}, commitment, target),
			[]string{"-commitment", C, "-player-seed", seed}},
	} {
		code, out := verifyJSON(t, tc.rv, tc.args...)
		if code != 1 || !strings.HasPrefix(out, "MISMATCH shoe "+honest.ShoeId) {
			t.Errorf("%s: exit %d, want a MISMATCH:\n%s", name, code, out)
		}
	}
	// Why alice pins the commitment: a reveal is self-consistent with a
	// commitment made afterwards. Without -commitment the forgery of 3.
	// verifies (and chemmy verify says what to compare); with it, it
	// does not (above).
	code, out := verifyJSON(t, forged(honest, late, []string{seed}, fair.Commit(late), target), "-player-seed", seed)
	if code != 0 || !strings.Contains(out, "compare it with the one published when the shoe opened") {
		t.Fatalf("unpinned: exit %d\n%s", code, out)
	}
	// The honest reveal still passes, and never dealt the target.
	if code, out := verifyJSON(t, honest, "-commitment", C, "-player-seed", seed); code != 0 {
		t.Fatalf("honest: exit %d\n%s", code, out)
	}
	if bytes.Equal(honest.Order, target) {
		t.Fatal("the honest shoe is the target")
	}
}

// TestVerifyFlags: bad flags and input exit 2.
func TestVerifyFlags(t *testing.T) {
	for _, args := range [][]string{{"-commitment", "abcd"}, {"-commitment", strings.Repeat("zz", 32)}, {"a", "b"}, {"-nope"}} {
		var out, errb bytes.Buffer
		if code := verifyMain(args, strings.NewReader("{}"), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	var out, errb bytes.Buffer
	if code := verifyMain(nil, strings.NewReader(`{"reveal":{}}`), &out, &errb); code != 2 {
		t.Errorf("empty reveal: exit %d", code)
	}
}
