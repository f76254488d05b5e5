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
		{"--variant", "banque", "--decks", "3", "--banker-follows", "middle"},
		{"--variant", "banque", "--counts", "A=8"},
		{"--variant", "old", "--counts", "A=5"},
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

// TestOddsBanqueThreeDecks prints the exact 3-deck banque odds (BQ-DECKS)
// under the default strategy, and the default deck count of the variant.
func TestOddsBanqueThreeDecks(t *testing.T) {
	for _, args := range [][]string{{"--variant", "banque", "--decks", "3"}, {"--variant", "banque"}} {
		var out, errb bytes.Buffer
		if code := oddsMain(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, want := range []string{
			"3 decks (156 cards)", "43254194249762496000 ordered nine-card deals",
			"against the right table",
			"12214064079312950016", "12252212312151555072", "421745405369234688",
			"right   1 to 1  19308639339624268800  19847955067247462400  4097599842890764800   -94353954/7567374815",
			"23773577146679/6257840603264250", "5519130908363/6257840603264250",
			"1.2469%", "-0.3799%", "-0.0882%",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
			}
		}
	}
	// Following the left table mirrors the two tables' bets.
	var out, errb bytes.Buffer
	if code := oddsMain([]string{"--variant", "banque", "--banker-follows", "left"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"against the left table", "left    1 to 1  19308639339624268800  19847955067247462400"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestOddsOldTwoDecks prints the exact odds of the two-deck old game
// (OLD-DECKS) between the banker and one punter.
func TestOddsOldTwoDecks(t *testing.T) {
	for _, args := range [][]string{{"--variant", "old", "--decks", "2"}, {"--variant", "old"}} {
		var out, errb bytes.Buffer
		if code := oddsMain(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, want := range []string{
			"2 decks (104 cards)", "1092514737600 ordered six-card deals", "ONE punter",
			"punter wins                       492862899968", "tie (goes to the banker)          106788937664",
			"375439996800", "88604752896",
			"-1668577151/17070542775", "9.7746%", "1668577151/34141085550 = 0.04887300",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out.String())
			}
		}
	}
}
