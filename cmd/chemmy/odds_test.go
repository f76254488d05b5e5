package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestOddsPuntoBancoEightDecks reproduces the exact 8-deck counts through
// the CLI.
func TestOddsPuntoBancoEightDecks(t *testing.T) {
	var out, errb bytes.Buffer
	if code := oddsMain([]string{"--variant", "punto-banco", "--decks", "8"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"4998398275503360", "2292252566437888", "2230518282592256", "475627426473216",
		"banker wins", "bank_natural", "1.0579%", "1.2351%", "14.3596%",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestOddsChemin(t *testing.T) {
	var out, errb bytes.Buffer
	if code := oddsMain([]string{"--variant", "chemin-de-fer", "--infinite", "--banco-free-play"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "player draws on 5 with probability 9/11") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestOddsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--variant", "nope"},
		{"--variant", "banque"},
		{"--decks", "0"},
		{"--counts", "A=x"},
		{"--bogus"},
	} {
		var out, errb bytes.Buffer
		if code := oddsMain(args, &out, &errb); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}
