package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protojson"

	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	"github.com/chemmy/chemmy/shoe-svc/fair"
	"github.com/chemmy/chemmy/shoe-svc/shoesvc"
)

// runVerify is `chemmy verify [FILE]`: it reads a shoe's reveal as JSON
// (the output of grpcurl ... ShoeService/GetShoeReveal, or a bare
// ShoeReveal) from FILE or stdin ("-" or no argument), recomputes the
// order from the seeds, checks the commitment, the cut, the burn and the
// dealt cards (fair.Verify), and prints OK or the mismatch. Exit status:
// 0 verified, 1 mismatch, 2 unreadable input.
func runVerify(args []string) int {
	fs := flag.NewFlagSet("chemmy verify", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: chemmy verify [FILE]   (a GetShoeReveal response as JSON; stdin when FILE is - or absent)")
	}
	if err := fs.Parse(args); err != nil || fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	var in io.Reader = os.Stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chemmy verify:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	b, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chemmy verify:", err)
		return 2
	}
	rv, err := parseReveal(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chemmy verify:", err)
		return 2
	}
	if err := fair.Verify(shoesvc.FairReveal(rv)); err != nil {
		fmt.Printf("MISMATCH shoe %s: %v\n", rv.ShoeId, err)
		return 1
	}
	cut := fmt.Sprintf("cut at %d by %s", rv.CutPosition, rv.CutBy)
	if rv.CutRandom {
		cut = fmt.Sprintf("cut at random at %d", rv.CutPosition)
	}
	fmt.Printf("OK shoe %s: commitment %s verified; %d decks, %s, %d burned, %d dealt, %d left\n",
		rv.ShoeId, hex.EncodeToString(rv.Commitment), rv.Decks, cut, len(rv.Burned), len(rv.Dealt), rv.CardsLeft)
	return 0
}

// parseReveal accepts a GetShoeRevealResponse ({"reveal": {...}}) or a
// bare ShoeReveal.
func parseReveal(b []byte) (*shoev1.ShoeReveal, error) {
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	resp := &shoev1.GetShoeRevealResponse{}
	if err := opts.Unmarshal(b, resp); err == nil && resp.Reveal != nil {
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
