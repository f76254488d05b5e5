package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// runVerify is `chemmy verify [-commitment C] [-player-seed S] [-burn N] [FILE]`.
func runVerify(args []string) int { return verifyMain(args, os.Stdin, os.Stdout, os.Stderr) }

// verifyMain reads a shoe's reveal as JSON (the output of grpcurl ...
// ShoeService/GetShoeReveal, or a bare ShoeReveal) from FILE or stdin ("-"
// or no argument) and checks it (fair.Verify): SHA-256 of the server seed
// against the reveal's commitment, the order recomputed from the server,
// client and player seeds, the cut, the burn and every dealt card. What
// only the player knows is checked with the flags (given before FILE):
//
//	-commitment C   the commitment seen when the shoe opened (Shoe.commitment
//	                or the shoe_opened event), 64 hex digits as printed
//	                here or base64 as grpcurl prints it: it must be the
//	                reveal's (a server that swaps the seed needs another)
//	-player-seed S  the seed given with Cut, or revealed at a table
//	                (RevealSeed, after its commitment): it must be among
//	                the reveal's player seeds (a server that drops it is
//	                caught); its commitment, SHA-256(S), is printed, to
//	                compare with the one the table published
//	-burn N         the burn the table announced (its house rules'
//	                burn, 3 by default): the reveal must announce and
//	                burn exactly N cards (a reveal always burns what it
//	                announces; this holds it to the table's word)
//
// It prints "OK shoe ..." or "MISMATCH shoe ...: <why>" on stdout, and a
// NOTE when the shoe had no player seed (its order was fixed when it
// opened). Exit status: 0 verified, 1 mismatch, 2 bad flags or unreadable
// input.
func verifyMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chemmy verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	commitment := fs.String("commitment", "", "the commitment published when the shoe opened (hex or base64)")
	seeds := playerSeedFlag{}
	fs.Var(&seeds, "player-seed", "a player seed given with Cut or revealed at a table (RevealSeed), that must be in the reveal (repeatable)")
	burn := fs.Int("burn", 0, "the burn count the table announced (3 or 4; 0: not checked beyond the reveal's own announcement)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: chemmy verify [-commitment C] [-player-seed S] [-burn N] [FILE]")
		fmt.Fprintln(stderr, "  FILE: a GetShoeReveal response as JSON; stdin when FILE is - or absent")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil || fs.NArg() > 1 {
		if err == nil {
			fs.Usage()
		}
		return 2
	}
	var want []byte
	if *commitment != "" {
		var err error
		if want, err = parseCommitment(*commitment); err != nil {
			fmt.Fprintln(stderr, "chemmy verify: -commitment:", err)
			return 2
		}
	}
	in := stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "chemmy verify:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	b, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy verify:", err)
		return 2
	}
	rv, err := parseReveal(b)
	if err != nil {
		fmt.Fprintln(stderr, "chemmy verify:", err)
		return 2
	}
	mismatch := func(format string, args ...any) int {
		fmt.Fprintf(stdout, "MISMATCH shoe %s: %s\n", rv.ShoeId, fmt.Sprintf(format, args...))
		return 1
	}
	if want != nil && !bytes.Equal(want, rv.Commitment) {
		return mismatch("the reveal's commitment %x is not the one published when the shoe opened (%x)", rv.Commitment, want)
	}
	for _, s := range seeds {
		if !slices.Contains(rv.PlayerSeeds, s) {
			return mismatch("the player seed %q is not among the reveal's player seeds %q", s, rv.PlayerSeeds)
		}
	}
	byFirst := rv.BurnMode == shoev1.BurnMode_BURN_MODE_BY_FIRST_CARD
	if *burn != 0 && (byFirst || int(rv.Burn) != *burn) {
		// Source: RULES.md SHOE-BURN (the count the table announced)
		return mismatch("the table announced a burn of %d cards, the reveal announces %d (%d burned)", *burn, rv.Burn, len(rv.Burned))
	}
	if err := fair.Verify(shoesvc.FairReveal(rv)); err != nil {
		return mismatch("%v", err)
	}
	cut := fmt.Sprintf("cut at %d by %s", rv.CutPosition, rv.CutBy)
	if rv.CutRandom {
		cut = fmt.Sprintf("cut at random at %d", rv.CutPosition)
	}
	quoted := make([]string, len(rv.PlayerSeeds))
	for i, s := range rv.PlayerSeeds {
		quoted[i] = strconv.Quote(s)
		if ids := rv.PlayerSeedPlayerIds; len(ids) == len(rv.PlayerSeeds) {
			quoted[i] += " (" + ids[i] + ")"
		}
	}
	players := "no player seed"
	if len(quoted) > 0 {
		players = "player seeds " + strings.Join(quoted, ", ")
	}
	fmt.Fprintf(stdout, "OK shoe %s: commitment %s verified; %d decks, %s, %s, %d burned, %d dealt, %d left\n",
		rv.ShoeId, hex.EncodeToString(rv.Commitment), rv.Decks, cut, players, len(rv.Burned), len(rv.Dealt), rv.CardsLeft)
	if want != nil {
		fmt.Fprintln(stdout, "   the commitment is the one published when the shoe opened")
	} else {
		fmt.Fprintln(stdout, "   compare it with the one published when the shoe opened (-commitment): a reveal cannot prove it")
	}
	for _, s := range seeds {
		sum := sha256.Sum256([]byte(s))
		who := ""
		if i := slices.Index(rv.PlayerSeeds, s); len(rv.PlayerSeedPlayerIds) == len(rv.PlayerSeeds) {
			who = " (" + rv.PlayerSeedPlayerIds[i] + ")"
		}
		fmt.Fprintf(stdout, "   your seed%s is in the shuffle; its commitment SHA-256 = %x: compare it with the table's seed_commitments_fixed\n",
			who, sum[:])
	}
	if *burn != 0 {
		fmt.Fprintf(stdout, "   %d cards burned, as the table announced\n", *burn)
	}
	if len(rv.PlayerSeeds) == 0 {
		fmt.Fprintln(stdout, "NOTE: no player seed: the order was fixed by the server and client seeds when the shoe opened;"+
			" it is the committed one, but nothing stopped whoever runs shoe-svc from choosing it")
	}
	return 0
}

// playerSeedFlag collects repeated -player-seed flags.
type playerSeedFlag []string

func (p *playerSeedFlag) String() string { return strings.Join(*p, ",") }

func (p *playerSeedFlag) Set(s string) error {
	*p = append(*p, s)
	return nil
}

// parseCommitment reads a 32-byte commitment as hex (64 digits) or
// base64 (standard or URL alphabet, as grpcurl and protojson print bytes).
func parseCommitment(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == fair.CommitmentSize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == fair.CommitmentSize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%q is not %d bytes in hex or base64", s, fair.CommitmentSize)
}

// parseReveal accepts a GetShoeRevealResponse ({"reveal": {...}}) or a
// bare ShoeReveal.
func parseReveal(b []byte) (*shoev1.ShoeReveal, error) {
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	resp := &shoev1.GetShoeRevealResponse{}
	if err := opts.Unmarshal(b, resp); err == nil && len(resp.GetReveal().GetServerSeed()) > 0 {
		return resp.Reveal, nil
	}
	rv := &shoev1.ShoeReveal{}
	if err := opts.Unmarshal(b, rv); err != nil {
		return nil, fmt.Errorf("not a shoe reveal: %w", err)
	}
	if len(rv.ServerSeed) == 0 {
		return nil, fmt.Errorf("not a shoe reveal: no server_seed")
	}
	return rv, nil
}
