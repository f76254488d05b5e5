package rules

import "testing"

// card returns a card of the given value (0 is a ten) in clubs.
func card(value int) Card {
	if value == 0 {
		return Card{Rank: Ten, Suit: Clubs}
	}
	return Card{Rank: Rank(value), Suit: Clubs}
}

// cards parses space-separated card strings; it panics on a typo in a test.
func cards(s string) []Card {
	var out []Card
	for i := 0; i+1 < len(s); i += 3 {
		c, err := ParseCard(s[i : i+2])
		if err != nil {
			panic(err)
		}
		out = append(out, c)
	}
	return out
}

func TestHANDTotal(t *testing.T) {
	tests := []struct {
		hand string
		want int
	}{
		{"", 0},
		{"AS", 1},
		{"KH QD", 0},
		{"TD JC", 0},
		{"9S 9H", 8},
		{"5C 5D", 0},
		{"7C 8D", 5},
		{"AS 8D", 9},
		{"6C 2D", 8},
		{"9C 9D 9H", 7},
		{"KC 4D 5H", 9},
		{"AC AD AH", 3},
	}
	for _, tt := range tests {
		if got := Total(cards(tt.hand)); got != tt.want {
			t.Errorf("Total(%s) = %d, want %d", tt.hand, got, tt.want)
		}
	}
	// Every two- and three-card combination of values.
	for a := 0; a <= 9; a++ {
		for b := 0; b <= 9; b++ {
			if got := Total([]Card{card(a), card(b)}); got != (a+b)%10 {
				t.Errorf("Total(%d,%d) = %d", a, b, got)
			}
			for c := 0; c <= 9; c++ {
				if got := Total([]Card{card(a), card(b), card(c)}); got != (a+b+c)%10 {
					t.Errorf("Total(%d,%d,%d) = %d", a, b, c, got)
				}
			}
		}
	}
}

func TestCFNaturalIsNatural(t *testing.T) {
	for a := 0; a <= 9; a++ {
		for b := 0; b <= 9; b++ {
			want := (a+b)%10 >= 8
			if got := IsNatural([]Card{card(a), card(b)}); got != want {
				t.Errorf("IsNatural(%d,%d) = %v, want %v", a, b, got, want)
			}
			// Three cards are never a natural, whatever their total.
			for c := 0; c <= 9; c++ {
				if IsNatural([]Card{card(a), card(b), card(c)}) {
					t.Errorf("IsNatural(%d,%d,%d) = true", a, b, c)
				}
			}
		}
	}
	if IsNatural(nil) || IsNatural(cards("8S")) || IsNatural(cards("9S")) {
		t.Error("fewer than two cards is a natural")
	}
}

func TestCFResultCompare(t *testing.T) {
	for p := 0; p <= 9; p++ {
		for b := 0; b <= 9; b++ {
			want := OutcomeBankLoses
			switch {
			case p == b:
				want = OutcomeStandOff
			case b > p:
				want = OutcomeBankWins
			}
			if got := Compare(p, b); got != want {
				t.Errorf("Compare(%d, %d) = %v, want %v", p, b, got, want)
			}
		}
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{
		0: "invalid", OutcomeBankWins: "bank_wins", OutcomeBankLoses: "bank_loses", OutcomeStandOff: "stand_off", 9: "invalid",
	} {
		if o.String() != want || o.Valid() != (want != "invalid") {
			t.Errorf("Outcome(%d): String %q Valid %v", int(o), o.String(), o.Valid())
		}
	}
}
